"""The batching engine: a rule table keyed by StableHLO op name, and the walk that applies it.

Why a transformation of the traced StableHLO, as autodiff is: every frontend op ends as a few StableHLO
ops, so one batching rule per StableHLO op covers the whole library, anything built with the dialect
builders and modules from other tools. `vmap` traces the user's function on the per-example shapes into
the block of a scratch op (its block arguments stand for one example of each mapped input; values of the
enclosing trace are captured, unbatched), then walks the scratch ops in order and emits each one's batched
version after the scratch op through its rule; the scratch op is erased at the end.

A rule sees the op and its operands as `Batched` values (a Tensor and the dimension that holds the batch,
None for a value that is the same for every example) and returns one `Batched` per result. Rules put the
batch where the op wants it (dot_general and gather get batching dimensions, convolution folds it into
its batch or feature dimension, reductions shift their dimensions) rather than moving it to the front.
An op whose operands are all unbatched is copied as it is.

Derivative regions (autodiff/core.py) recorded inside the function are carried over: the batched region's
backward pass is the vmap of the original one, so grad(vmap(f)) differentiates composites and custom_vjp
functions as grad(f) does.
"""
from __future__ import annotations

from typing import Callable, NamedTuple

from iree.compiler import ir

from ...dialects import stablehlo as hlo
from ...dialects.registry import Facet
from ...dialects.types import shape_of, tensor_type
from ...errors import TracingError
from .. import ops, trace as _trace
from ..autodiff import core as ad
from ..ops._core import emit, wrap
from ..tensor import Tensor

RULES: dict[str, Callable] = Facet("vmap's batching rules")   # op name (a registry record) -> rule


def register(*names: str):
    """`@register("add", "subtract")`: the batching rule of these StableHLO ops, rule(op: Op) -> one
    Batched per result."""
    def add(rule):
        for name in names:
            RULES[f"stablehlo.{name}"] = rule
        return rule
    return add


class Batched(NamedTuple):
    """A value of the batched program: `t` holds every example, stacked along `dim` (None: `t` is one
    value shared by all examples, of the per-example shape)."""
    t: Tensor
    dim: int | None


class Op:
    """What a rule sees: the per-example op, its operands (then the values its regions capture) as
    Batched, the batch size, and the walk's state for rules that batch a region's body."""
    __slots__ = ("op", "args", "captured", "captured_values", "size", "walk")

    def __init__(self, op, args, captured, captured_values, size, walk):
        self.op, self.args, self.captured, self.size, self.walk = op, args, captured, size, walk
        self.captured_values = captured_values

    def ints(self, name: str) -> list[int]:
        if name not in self.op.attributes:
            return []
        return [int(v) for v in ir.DenseI64ArrayAttr(self.op.attributes[name])]

    def int(self, name: str, default: int = 0) -> int:
        attrs = self.op.attributes
        return int(ir.IntegerAttr(attrs[name]).value) if name in attrs else default

    def text(self, name: str) -> str:
        return str(self.op.attributes[name])

    def result_shapes(self) -> list[tuple]:
        return [shape_of(r.type) for r in self.op.results]

    @property
    def captures_batched(self) -> bool:
        return any(b.dim is not None for b in self.captured)


def tensor(value) -> Tensor:
    return ad.tensor(value)


def unbatched(value) -> Batched:
    return Batched(tensor(value), None)


# --- moving the batch dimension --------------------------------------------------------------------

def moveaxis(t: Tensor, src: int, dst: int) -> Tensor:
    if src == dst:
        return t
    order = [d for d in range(t.ndim) if d != src]
    order.insert(dst, src)
    value = emit(hlo.transpose, t.value, order)
    return wrap(value, [t.shape[d] for d in order], t.dtype, t.weak)


def broadcast_batch(t: Tensor, size: int, dim: int) -> Tensor:
    """An unbatched t repeated `size` times along a new dimension `dim`."""
    shape = with_batch(t.shape, size, dim)
    return wrap(emit(hlo.broadcast_in_dim, t.value, shape, shift(range(t.ndim), dim)), shape, t.dtype, t.weak)


def at(b: Batched, dim: int, size: int) -> Tensor:
    """b's tensor with its batch along `dim` (repeated there when b is unbatched)."""
    return broadcast_batch(b.t, size, dim) if b.dim is None else moveaxis(b.t, b.dim, dim)


def per_example_shape(b: Batched) -> tuple:
    if b.dim is None:
        return b.t.shape
    return b.t.shape[:b.dim] + b.t.shape[b.dim + 1:]


def with_batch(shape, size: int, dim: int) -> list:
    shape = list(shape)
    shape.insert(dim, size)
    return shape


def shift(dims, at_dim: int) -> list[int]:
    """Per-example dimension numbers in an operand whose batch was inserted at `at_dim`."""
    return [d if d < at_dim else d + 1 for d in dims]


# --- copying ops -----------------------------------------------------------------------------------

def rename_nested(op, mapping: dict):
    for region in op.regions:
        for block in region.blocks:
            for inner in block.operations:
                inner = inner.operation
                for i, v in enumerate(inner.operands):
                    if v in mapping:
                        inner.operands[i] = mapping[v]
                rename_nested(inner, mapping)


def recreate(p: Op, operands, shapes, attributes: dict | None = None, rename: dict | None = None) -> list[Tensor]:
    """A copy of p's op on new operands (as many as it had), with result shapes `shapes` (element types
    kept) and some attributes replaced; values its regions capture are renamed by `rename` (default: the
    unbatched captured values' own outer values)."""
    op = p.op
    copy = op.clone(ip=ir.InsertionPoint.current).operation
    for i, value in enumerate(operands):
        copy.operands[i] = value.value if isinstance(value, Tensor) else value
    for name, attr in (attributes or {}).items():
        copy.attributes[name] = attr
    if rename is None:
        rename = p.walk.outer_values(p.captured_values)
    if rename:
        rename_nested(copy, rename)
    results = []
    for result, shape in zip(copy.results, shapes):
        element = ir.RankedTensorType(result.type).element_type
        result.set_type(ir.RankedTensorType.get(list(shape), element))
        results.append(tensor(result))
    return results


def i64_array(values) -> ir.Attribute:
    return ir.DenseI64ArrayAttr.get([int(v) for v in values])


# --- the walk --------------------------------------------------------------------------------------

class Walk:
    """The state of one vmap: the batched value of every per-example value met so far, the batch size."""

    def __init__(self, size: int):
        self.size = size
        self.env: dict = {}

    def get(self, value) -> Batched:
        found = self.env.get(value)
        return found if found is not None else unbatched(value)

    def outer_values(self, values) -> dict:
        """Per-example values that are unbatched -> the value that stands for them after the walk."""
        mapping = {}
        for v in values:
            b = self.env.get(v)
            if b is not None and b.dim is None and b.t.value != v:
                mapping[v] = b.t.value
        return mapping

    def block(self, ops) -> None:
        """Batch `ops` (one block, in order) at the current insertion point."""
        for op in ops:
            self.op(op)

    def body(self, region, arguments: list[Batched]) -> list[Batched]:
        """Batch the body of a one-block region here, its block arguments bound to `arguments`; returns
        what it yields."""
        block = region.blocks[0]
        inner = [o.operation for o in block.operations]
        self.env.update(zip(block.arguments, arguments))
        self.block(inner[:-1])
        return [self.get(v) for v in inner[-1].operands]

    def op(self, op) -> None:
        operands, captured = ad.operands_of(op)
        args = [self.get(v) for v in operands]
        if all(b.dim is None for b in args):
            self._copy(op, operands)
            return
        rule = RULES.get(op.name)
        if rule is None:
            raise TracingError(f"vmap has no batching rule for {op.name} (built at {ad.site_of(op)}); hlojit "
                               f"batches {', '.join(sorted(n.removeprefix('stablehlo.') for n in RULES))}")
        n = len(op.operands)
        with ad.located(op):
            results = rule(Op(op, args[:n], args[n:], captured, self.size, self))
        if len(results) != len(op.results):  # pragma: no cover  (a rule's bug)
            raise RuntimeError(f"hlojit vmap: the rule of {op.name} gave {len(results)} results for "
                               f"{len(op.results)}")
        self.env.update(zip(op.results, results))

    def _copy(self, op, operands):
        """An op whose operands (and captured values) are all unbatched: itself, on the outer values."""
        mapping = self.outer_values(operands)
        copy = ad.copy_ops([op], mapping)[0]
        for result, new in zip(op.results, copy.results):
            self.env[result] = Batched(tensor(new), None)


# --- the scratch block the function is traced into ------------------------------------------------

class Scratch:
    """An op (never verified, erased at the end) whose one block receives the per-example trace."""

    def __init__(self, types):
        self.op = ir.Operation.create("func.func", results=[], operands=[], regions=1,
                                      attributes={"sym_name": ir.StringAttr.get("vmap_body"),
                                                  "function_type": ir.TypeAttr.get(ir.FunctionType.get(types, []))},
                                      loc=ir.Location.unknown(), ip=ir.InsertionPoint.current)
        self.block = self.op.regions[0].blocks.append(*types)

    @property
    def ops(self) -> list:
        return [o.operation for o in self.block.operations]

    def erase(self):
        for op in reversed(self.ops):   # users before their operands: nothing dangles while erasing
            op.erase()
        self.op.erase()


def arg_types(shapes_dtypes) -> list:
    return [tensor_type(shape, dtype) for shape, dtype in shapes_dtypes]


# --- derivative regions -----------------------------------------------------------------------------

def batch_regions(recorded: list, walk: Walk):
    """The copy of each derivative region recorded while tracing the function, whose outputs the walk
    batched: its backward pass is the vmap of the original one (the original one where nothing is batched).
    The walk's copies of unbatched ops carry no regions of their own: only here are all of a region's
    values known on the outside (a region copied with its output op would keep the scratch block's inputs,
    erased with it: hessian through a region made inside a backward pass was a segfault)."""
    from .api import vmap   # api builds on this module
    seen = set()
    for region in recorded:
        if id(region) in seen or not all(v in walk.env for v in region.outputs):
            continue
        seen.add(id(region))
        inputs = [walk.get(v) for v in region.inputs]
        outputs = [walk.get(v) for v in region.outputs]
        residuals = [walk.get(v) for v in region.residuals]
        if all(b.dim is None for b in outputs + inputs + residuals):   # copied as it was: the same region
            ad.add_region(region._replace(inputs=[b.t.value for b in inputs], outputs=[b.t.value for b in outputs],
                                          residuals=[b.t.value for b in residuals]))
            continue
        outputs = [b if b.t.value not in {i.t.value for i in inputs} else Batched(ad.identity(b.t), b.dim)
                   for b in outputs]
        for value, b in zip(region.outputs, outputs):
            walk.env[value] = b
        ad.add_region(ad.Region(region.name, [b.t.value for b in inputs], [b.t.value for b in outputs],
                                [b.t.value for b in residuals], _batched_bwd(region, inputs, outputs, residuals,
                                                                             walk.size, vmap)))


def _batched_bwd(region, inputs, outputs, residuals, size, vmap):
    res_dims = [b.dim for b in residuals]
    out_dims = [b.dim for b in outputs]

    def bwd(res, cts):
        grads = vmap(lambda r, c: list(region.bwd(list(r), list(c))), in_axes=(res_dims, out_dims), out_axes=0,
                     axis_size=size)(list(res), list(cts))
        result = []
        for g, b in zip(grads, inputs):
            if g is None:
                result.append(None)
            elif b.dim is None:
                result.append(ops.sum(g, axis=0).astype(g.dtype))
            else:
                result.append(moveaxis(g, 0, b.dim))
        return result
    return bwd


def regions_since(count: int) -> list:
    table = _trace.current().autodiff_regions
    return list(table.values())[count:]


def region_count() -> int:
    return len(_trace.current().autodiff_regions)
