"""One layout for the whole network: every convolution channels last, the transposes that takes moved through
the ops between convolutions until they cancel. StableHLO -> StableHLO, run by `quirks.apply` for the targets
whose convolutions want it (llvm-cpu), on the compiler's copy of the module.

Why: IREE 3.13's CPU code runs channels-first (NCHW) convolutions 10-20x slower than the same ones channels
last (64 channels at 56x56: 99 ms against 6 ms), and the user's layout is the user's business, not a target's.

1. `convolutions_channels_last`: each convolution gets [b, 0.., f]x[0.., i, o]->[b, 0.., f] dimension numbers,
   with transposes in front of its operands and behind its result, which give the module its old meaning.
2. `sink_transposes`, to a fixed point: a transpose moves down through its users (elementwise ops, reduce,
   reduce_window, select_and_scatter, broadcast_in_dim) where the users' other operands can take its layout for free (a
   broadcast_in_dim of a per-channel parameter, a splat constant, a transpose the other way, a chain of such),
   and one meeting its inverse cancels. A ResNet block keeps no transpose; the network keeps those of its
   entry (the image, each kernel) and exit.
3. `barriers_before_convolutions`: what is left in front of a convolution passes an optimization barrier, or
   IREE folds it back into a channels-first convolution (its transpose propagation does that).

Products too: `transposed_products_swapped` writes a transpose that puts a product's right-hand free dimensions
before its left-hand ones (dy^T x transposed: JAX's weight gradient) as the product with its operands swapped
(x^T dy), which IREE and the hand-written products write in that layout at once. JAX's MLP Adam step through
hj.from_mlir had each such transpose fused into the update's dispatch, read strided: 621 us for 784 x 512
where hlojit's own step (whose autodiff picks the order) takes 336 (2026-12-07, Zen 3).
"""
from __future__ import annotations

import collections

import numpy as np
from iree.compiler import ir

from ..dialects import stablehlo as hlo
from ..dialects import types
from ..dialects.types import shape_of
from .legalize import producer as _producer, walk as _walk

# ops whose operands and results all have one shape, element for element (select's predicate and clamp's
# bounds may be scalars: those keep their rank-0 type)
ELEMENTWISE = frozenset("stablehlo." + name for name in (
    *hlo.UNARY_OPS, *hlo.BINARY_OPS, "convert", "compare", "select", "clamp", "is_finite", "real", "imag",
    "complex"))
_DEPTH = 8      # how far back a chain of elementwise ops may be re-laid out for an operand


def integers(attr) -> list[int]:
    return [int(v) for v in ir.DenseI64ArrayAttr(attr)]


def _permutation(op) -> list[int]:
    return integers(op.attributes["permutation"])


def _inverse(perm) -> list[int]:
    inverse = [0] * len(perm)
    for i, p in enumerate(perm):
        inverse[p] = i
    return inverse


def _compose(first, then) -> list[int]:
    """transpose(transpose(x, first), then) is transpose(x, _compose(first, then))."""
    return [first[i] for i in then]


def _is_identity(perm) -> bool:
    return list(perm) == list(range(len(perm)))


def _with_shape(t: ir.Type, shape) -> ir.Type:
    return ir.RankedTensorType.get(list(shape), ir.RankedTensorType(t).element_type, loc=ir.Location.unknown())


def _permuted_type(t: ir.Type, perm) -> ir.Type:
    shape = shape_of(t)
    return _with_shape(t, [shape[p] for p in perm])


class _Index:
    """The ops of a module, the producer and the users of each value, read in one walk: MLIR's `Value.owner`
    builds a Python view per call (~0.1 ms), which dominated the pass on a ResNet training step."""

    def __init__(self, module: ir.Module):
        self.ops, self.producers, self.users = [], {}, collections.defaultdict(list)

        def visit(op):
            self.ops.append(op)
            for result in op.results:
                self.producers[result] = op
            for value in op.operands:
                self.users[value].append(op)
            return ir.WalkResult.ADVANCE
        module.operation.walk(visit)

    def producer(self, value: ir.Value):
        """The op that defines `value` (None for a block argument)."""
        if value not in self.producers:
            owner = value.owner
            self.producers[value] = owner.operation if isinstance(owner, (ir.OpView, ir.Operation)) else None
        return self.producers[value]


def _ops(module: ir.Module) -> list:
    return _Index(module).ops


def _transpose_behind(op, index: int, perm) -> ir.Value:
    """A transpose of op's result `index` placed right behind op, taking over every other use of that result."""
    result = op.results[index]
    with ir.InsertionPoint(op), op.location:
        new = hlo.transpose(result, perm)
    new.owner.operation.move_after(op)
    result.replace_all_uses_except(new, new.owner.operation)
    return new


# --- 1. convolutions channels last -------------------------------------------------------------------

def conv_labels(op) -> tuple[list, list, list] | None:
    """A convolution's dimension labels, lhs, rhs and result ([b, f, 0, 1] ...); None where MLIR prints them in
    the raw form, which this does not read (the convolution is left as it is)."""
    try:
        return types.conv_labels(str(op.attributes["dimension_numbers"]))
    except ValueError:
        return None


def _labels_text(labels) -> str:
    return "[" + ", ".join(labels) + "]"


def _one_transpose(op, value: ir.Value, perm, made: dict) -> ir.Value:
    """transpose(value, perm) in front of op: the one made for an earlier op of the block where there is one (a
    kernel used twice is transposed once)."""
    key = (value, tuple(perm))
    if key in made and made[key][1] == op.block:
        return made[key][0]
    with ir.InsertionPoint(op), op.location:
        new = hlo.transpose(value, perm)
    made[key] = new, op.block
    return new


def convolutions_channels_last(module: ir.Module) -> int:
    count, made = 0, {}
    for op in _ops(module):
        labels = conv_labels(op) if op.name == "stablehlo.convolution" else None
        if labels is None:
            continue
        lhs, rhs, out = labels
        spatial = [str(i) for i in range(len(lhs) - 2)]
        want_lhs, want_rhs = ["b", *spatial, "f"], [*spatial, "i", "o"]
        if (lhs, rhs, out) == (want_lhs, want_rhs, want_lhs):
            continue
        for index, (have, want) in enumerate(((lhs, want_lhs), (rhs, want_rhs))):
            if have != want:
                op.operands[index] = _one_transpose(op, op.operands[index], [have.index(t) for t in want], made)
        op.attributes["dimension_numbers"] = ir.Attribute.parse(
            f"#stablehlo.conv<{_labels_text(want_lhs)}x{_labels_text(want_rhs)}->{_labels_text(want_lhs)}>")
        op.results[0].set_type(_permuted_type(op.results[0].type, [out.index(t) for t in want_lhs]))
        if out != want_lhs:
            _transpose_behind(op, 0, [want_lhs.index(t) for t in out])
        count += 1
    return count


# --- 2. transposes sink until they cancel -----------------------------------------------------------

def _single_use(value: ir.Value) -> bool:
    return len(list(value.uses)) == 1


def _used(op) -> bool:
    return any(len(list(r.uses)) for r in op.results)


def _free(value: ir.Value, perm, index: _Index, depth: int = _DEPTH) -> bool:
    """Whether transpose(value, perm) can be had without a transpose op: `_relaid` builds it."""
    if len(shape_of(value.type)) == 0:
        return True
    op = index.producer(value)
    if op is None:
        return False
    if op.name == "stablehlo.transpose":
        return _is_identity(_compose(_permutation(op), perm))
    if op.name == "stablehlo.broadcast_in_dim":
        return _broadcast_relaid(op, perm) is not None
    if op.name == "stablehlo.constant":
        return types.is_splat_constant(op)
    if op.name in ELEMENTWISE and depth > 0 and _single_use(value) and len(op.results) == 1:
        return all(_free(v, perm, index, depth - 1) for v in op.operands)
    return False


def _broadcast_relaid(op, perm):
    """transpose(broadcast_in_dim(s), perm) as broadcast_in_dim(reshape(s)): (the order of s's dimensions the
    reshape puts them in, the new broadcast dimensions), or None where that order moves more than unit dims
    (a [C] parameter, or [1, C, 1, 1], always works)."""
    inverse = _inverse(perm)
    dims = [inverse[d] for d in integers(op.attributes["broadcast_dimensions"])]
    order = sorted(range(len(dims)), key=lambda k: dims[k])
    sizes = shape_of(op.operands[0].type)
    moved = [k for k in order if sizes[k] != 1]
    if moved != sorted(moved):
        return None
    return order, sorted(dims)


def _relaid(value: ir.Value, perm, before, index: _Index) -> ir.Value:
    """transpose(value, perm), for a value `_free` says is free: new ops go in front of `before`; a single-use
    elementwise chain is re-laid out in place."""
    if len(shape_of(value.type)) == 0:
        return value
    op = index.producer(value)
    if op.name == "stablehlo.transpose":
        return op.operands[0]
    with ir.InsertionPoint(before), op.location:
        if op.name == "stablehlo.broadcast_in_dim":
            order, dims = _broadcast_relaid(op, perm)
            source = op.operands[0]
            if not _is_identity(order):
                source = hlo.reshape(source, [shape_of(source.type)[k] for k in order])
            shape = shape_of(value.type)
            return hlo.broadcast_in_dim(source, [shape[p] for p in perm], dims)
        if op.name == "stablehlo.constant":
            splat = ir.DenseElementsAttr(op.attributes["value"])
            new_type = _permuted_type(value.type, perm)
            return ir.Operation.create("stablehlo.constant", results=[new_type], attributes={
                "value": ir.DenseElementsAttr.get_splat(new_type, splat.get_splat_value())}).result
    for i, operand in enumerate(list(op.operands)):
        op.operands[i] = _relaid(operand, perm, op, index)
    value.set_type(_permuted_type(value.type, perm))
    return value


def _sink_into_elementwise(transpose, user, index: _Index) -> bool:
    perm = _permutation(transpose)
    inverse = _inverse(perm)
    mine = transpose.results[0]
    others = [v for v in user.operands if v != mine]
    if len(user.results) != 1 or not all(_free(v, inverse, index) for v in others):
        return False
    for i, operand in enumerate(list(user.operands)):
        user.operands[i] = transpose.operands[0] if operand == mine else _relaid(operand, inverse, user, index)
    user.results[0].set_type(_permuted_type(user.results[0].type, inverse))
    _transpose_behind(user, 0, perm)
    return True


def _sink_into_transpose(transpose, user, index: _Index) -> bool:
    combined = _compose(_permutation(transpose), _permutation(user))
    source = transpose.operands[0]
    if _is_identity(combined):
        user.results[0].replace_all_uses_with(source)
    else:
        with ir.InsertionPoint(user), user.location:
            user.results[0].replace_all_uses_with(hlo.transpose(source, combined))
    return True     # user is left without uses, for _erase_dead


def _sink_into_broadcast(transpose, user, index: _Index) -> bool:
    perm = _permutation(transpose)
    dims = integers(user.attributes["broadcast_dimensions"])
    moved = [0] * len(dims)
    for j, d in enumerate(dims):
        moved[perm[j]] = d
    if moved != sorted(moved):
        return False
    user.operands[0] = transpose.operands[0]
    user.attributes["broadcast_dimensions"] = ir.DenseI64ArrayAttr.get(moved)
    return True


def _inputs_in_layout(transpose, user, inputs: int, index: _Index) -> bool:
    """Whether every one of user's first `inputs` operands can take transpose's source layout; if so they do."""
    inverse = _inverse(_permutation(transpose))
    mine = transpose.results[0]
    operands = list(user.operands)[:inputs]
    if not all(v == mine or _free(v, inverse, index) for v in operands):
        return False
    for i, operand in enumerate(operands):
        user.operands[i] = transpose.operands[0] if operand == mine else _relaid(operand, inverse, user, index)
    return True


def _sink_into_reduce(transpose, user, index: _Index) -> bool:
    perm = _permutation(transpose)
    reduced = integers(user.attributes["dimensions"])
    if not _inputs_in_layout(transpose, user, len(user.results), index):
        return False
    kept_here = [perm[d] for d in range(len(perm)) if d not in reduced]     # source dims, in user's order
    kept_there = sorted(kept_here)
    user.attributes["dimensions"] = ir.DenseI64ArrayAttr.get(sorted(perm[d] for d in reduced))
    order = [kept_there.index(d) for d in kept_here]
    for index, result in enumerate(user.results):
        shape = shape_of(result.type)
        result.set_type(_with_shape(result.type, [shape[order.index(k)] for k in range(len(order))]))
        if not _is_identity(order):
            _transpose_behind(user, index, order)
    return True


_WINDOW_ATTRS = ("window_dimensions", "window_strides", "base_dilations", "window_dilations")


def _sink_into_reduce_window(transpose, user, index: _Index) -> bool:
    return _sink_into_window_op(transpose, user, len(user.results), index)


def _sink_into_select_and_scatter(transpose, user, index: _Index) -> bool:
    """A max pool's gradient: its operand and source (the windows) take the layout together. Where the operand
    comes transposed and the source does not come free (ResNet's: a sum of the block's two gradient paths), the
    source gets a transpose of its own, a quarter of the operand's size at stride 2, rather than the operand and
    the result keeping theirs (built as a pair of transposes: `_inputs_in_layout` takes the inner one)."""
    mine, inverse = transpose.results[0], _inverse(_permutation(transpose))
    source = user.operands[1]
    if user.operands[0] == mine and source != mine and not _free(source, inverse, index):
        with ir.InsertionPoint(user), user.location:
            user.operands[1] = hlo.transpose(hlo.transpose(source, inverse), _permutation(transpose))
    return _sink_into_window_op(transpose, user, 2, index)


def _sink_into_window_op(transpose, user, inputs: int, index: _Index) -> bool:
    """reduce_window and select_and_scatter: the window's attributes follow the dimensions."""
    perm = _permutation(transpose)
    inverse = _inverse(perm)
    if not _inputs_in_layout(transpose, user, inputs, index):
        return False
    for name in _WINDOW_ATTRS:
        if name in user.attributes:
            values = integers(user.attributes[name])
            user.attributes[name] = ir.DenseI64ArrayAttr.get([values[i] for i in inverse])
    if "padding" in user.attributes:
        pads = [[int(v) for v in pair] for pair in padding_pairs(user)]
        user.attributes["padding"] = _padding_attr([pads[i] for i in inverse])
    for index, result in enumerate(user.results):
        result.set_type(_permuted_type(result.type, inverse))
        _transpose_behind(user, index, perm)
    return True


def padding_pairs(op) -> list:
    attr = ir.DenseIntElementsAttr(op.attributes["padding"])
    return np.array([int(v) for v in attr], dtype=np.int64).reshape(-1, 2).tolist()


def _padding_attr(pairs) -> ir.Attribute:
    return ir.DenseElementsAttr.get(np.asarray(pairs, dtype=np.int64).reshape(len(pairs), 2))


_SINKS = {"stablehlo.transpose": _sink_into_transpose, "stablehlo.broadcast_in_dim": _sink_into_broadcast,
          "stablehlo.reduce": _sink_into_reduce, "stablehlo.reduce_window": _sink_into_reduce_window,
          "stablehlo.select_and_scatter": _sink_into_select_and_scatter}


def _sink(transpose, index: _Index) -> int:
    """Move `transpose` into each of its users (in its block) that can take it; the number it moved into."""
    mine, moved, users = transpose.results[0], 0, []
    for user in index.users[mine]:      # read at the round's start: some may no longer use it, or be dead
        if user.block == transpose.block and _used(user) and all(user != seen for seen in users):
            users.append(user)
    for user in users:
        sink = _SINKS.get(user.name, _sink_into_elementwise if user.name in ELEMENTWISE else None)
        if sink is not None and any(v == mine for v in user.operands) and sink(transpose, user, index):
            moved += 1
    return moved


def _hoist(transpose, index: _Index) -> int:
    """A transpose of a broadcast, a splat or a single-use elementwise chain of those is that chain re-laid out:
    the transpose goes (left without uses, for `_erase_dead`)."""
    source, perm = transpose.operands[0], _permutation(transpose)
    producer = index.producer(source)
    if producer is None or producer.name == "stablehlo.transpose" or not _free(source, perm, index):
        return 0
    transpose.results[0].replace_all_uses_with(_relaid(source, perm, transpose, index))
    return 1


_ROUNDS = 64    # a module's transposes settle in a few rounds; this bounds a pathological one


def sink_transposes(module: ir.Module) -> int:
    """Rounds of sinking and hoisting over every transpose until none moves (ops replaced are left without uses
    while a round walks its list, and erased after). The number of moves."""
    total = 0
    for _ in range(_ROUNDS):
        index = _Index(module)
        moves = sum(_sink(op, index) or _hoist(op, index) for op in index.ops
                    if op.name == "stablehlo.transpose" and _used(op))
        total += moves
        _erase_dead(index.ops)     # what this round left dead (what it made, it uses: the next round sees it)
        if not moves:
            break
    return total


_PURE = ELEMENTWISE | {"stablehlo.transpose", "stablehlo.broadcast_in_dim", "stablehlo.constant",
                       "stablehlo.reshape"}


def _erase_dead(ops: list) -> None:
    """Erase those of `ops` (in block order) that have no side effects and whose results nobody uses: users
    before producers, so chains go in one walk."""
    for op in reversed(ops):
        if op.name in _PURE and not _used(op):
            op.erase()


# --- 3. what IREE must not fold back ---------------------------------------------------------------

def barriers_before_convolutions(module: ir.Module) -> int:
    count, barriers = 0, {}     # a transpose feeding two convolutions (of one block) passes one barrier
    index = _Index(module)
    for op in index.ops:
        if op.name != "stablehlo.convolution":
            continue
        for i, operand in enumerate(list(op.operands)):
            producer = index.producer(operand)
            if producer is not None and producer.name == "stablehlo.transpose":
                key = operand, op.block
                if key not in barriers:
                    with ir.InsertionPoint(op), op.location:
                        barriers[key] = hlo.optimization_barrier([operand])[0]
                    count += 1
                op.operands[i] = barriers[key]
    return count


def channels_last(module: ir.Module) -> int:
    """The whole pass; the number of convolutions it turned channels last."""
    count = convolutions_channels_last(module)
    if count:
        sink_transposes(module)
        barriers_before_convolutions(module)
    return count


def transposed_products_swapped(module: ir.Module) -> int:
    """Each transpose of a dot_general (its only use) that keeps the batch dimensions first and puts the
    right-hand free dimensions before the left-hand ones (each group in its order), as the dot_general of the
    operands swapped: the same sums, laid out as the transpose asked."""
    count = 0
    for op in list(_walk(module.operation)):
        if op.name != "stablehlo.transpose":
            continue
        dot = _producer(op.operands[0])
        if dot is None or dot.name != "stablehlo.dot_general" or len(list(dot.results[0].uses)) != 1 \
                or set(dot.attributes.keys()) - {"dot_dimension_numbers", "precision_config"}:
            continue
        lhs_batch, rhs_batch, lhs_contract, rhs_contract = types.dot_dimensions(dot)
        lhs, rhs = dot.operands
        batch = len(lhs_batch)
        left = len(shape_of(lhs.type)) - batch - len(lhs_contract)
        right = len(shape_of(rhs.type)) - batch - len(rhs_contract)
        swapped = [*range(batch), *range(batch + left, batch + left + right), *range(batch, batch + left)]
        if _permutation(op) != swapped or left == 0 or right == 0:
            continue
        with ir.InsertionPoint(op), op.location:
            product = hlo.dot_general(rhs, lhs, lhs_batch=rhs_batch, rhs_batch=lhs_batch, lhs_contract=rhs_contract,
                                      rhs_contract=lhs_contract, dtype=types.dtype_of(dot.results[0].type))
        if "precision_config" in dot.attributes:
            precision = list(ir.ArrayAttr(dot.attributes["precision_config"]))
            product.owner.attributes["precision_config"] = ir.ArrayAttr.get(precision[::-1])
        op.results[0].replace_all_uses_with(product)
        op.erase()
        dot.erase()
        count += 1
    return count
