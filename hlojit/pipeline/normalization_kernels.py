"""f32 softmax and layer norm over the last axis as hand-written llvm-cpu dispatches: cpu target rewrites of the
patterns exp(x - max(x)) / sum(exp(x - max(x))) (frontend/ops/statistics.py's softmax, jax.nn.softmax's export
alike) and (x - mean(x)) * rsqrt(mean((x - mean(x))²) + eps) [* scale] [+ offset] (nn.layer_norm's; or divided
by sqrt(...), as JAX code often writes it, its x - mean(x) traced twice), each row
taken in a few sweeps of vectors that stay in L1 (a row of up to MAX_LENGTH floats), one workgroup per block of
rows.

Why the softmax: IREE 3.13 raises the pattern into its `linalg.softmax` op, whose llvm-cpu code runs 2.4 ns an
element on the 2-vCPU AVX-512 Xeon (8 x 4 x 128 x 128 in 1.28 ms on one core, 2026-12-06; the kernel 0.47), where
jax.jit takes 0.55 ms on two: it was the transformer block's largest dispatch after its four products (1.38 of
15.5 ms, one core). Hidden from the raising (a barrier on the sum), IREE's three dispatches ran it in ~0.72 ms
but slowed the block's others (git log: 2026-12-06's "tried and dropped"). Why the layer norm: IREE makes it two
dispatches that each read and write the whole tensor (the mean and centring; the variance, scaling and offset):
0.35 ms for 1024 rows of 256 on one core, where one pass reading x once and writing y once is memory's time.

Arithmetic as the StableHLO says: the softmax's sweeps are its maximum, exp(x - max) written and summed, each
written value divided by the sum (a division, not a multiplication by the reciprocal); a row of -inf, or holding
+inf or NaN, is NaN. The layer norm's are the sum (then / n), the sum of squares of x - mean (then / n, + eps,
rsqrt or sqrt), and (x - mean) * or / that [* scale] [+ offset]. Lanes past a row's end read a neutral value
(-inf for the maximum and the exponentials, the mean for the squares) and are not written.
"""
from __future__ import annotations

import math

import numpy as np
from iree.compiler import ir

from ..dialects.types import attr_ints, dtype_of, shape_of
from . import cache
from .kernel_epilogues import column_vector, only_user, splat_value
from .kernel_text import KernelText, executable
from .legalize import call_of_source, erase_unused, inline_calls, producer, walk

MAX_LENGTH = 1 << 14         # a row's floats at most (64 KiB: the row stays in L1/L2 between its sweeps)
MIN_ELEMENTS = 1 << 12       # fewer stay IREE's (a dispatch of its own costs more than it saves)
ROW_ELEMENTS = 1 << 15       # a workgroup's rows hold about this many elements ...
MIN_WORKGROUPS = 8           # ... but there are at least this many workgroups where there are rows enough
MAX_WORKGROUPS = 65535
_PATTERN_OPS = frozenset({"stablehlo.exponential", "stablehlo.subtract", "stablehlo.reduce", "stablehlo.reshape",
                          "stablehlo.broadcast_in_dim", "stablehlo.constant", "stablehlo.divide",
                          "stablehlo.multiply", "stablehlo.add", "stablehlo.rsqrt", "stablehlo.sqrt",
                          "stablehlo.maximum"})


def _lanes() -> int:
    return 16 if "avx512f" in cache.host_cpu_features() else 8


# --- recognising the patterns ---

def _named(value: ir.Value, name: str):
    op = producer(value)
    return op if op is not None and op.name == name else None


def _same(value: ir.Value | None, other: ir.Value) -> bool:
    return value is not None and value == other


def _equal(value: ir.Value, other: ir.Value, depth: int = 3) -> bool:
    """value and other are one value, or ops of one name, attributes and type on equal operands (JAX traces each
    x - mean of a layer norm anew: two subtracts of two broadcasts of one mean)."""
    if value == other:
        return True
    a, b = producer(value), producer(other)
    if depth == 0 or a is None or b is None or a.name != b.name or value.type != other.type:
        return False
    if len(a.regions) or len(a.operands) != len(b.operands) or {n: str(a.attributes[n]) for n in a.attributes} != {
            n: str(b.attributes[n]) for n in b.attributes}:
        return False
    return all(_equal(x, y, depth - 1) for x, y in zip(a.operands, b.operands))


def _row_of(value: ir.Value, shape: tuple):
    """The per-row value [..., rows, 1] or [..., rows] that `value` (of `shape`) broadcasts along the last axis (a
    row of one: `value` itself); else None."""
    op = _named(value, "stablehlo.broadcast_in_dim")
    if op is None:
        return value if shape and shape[-1] == 1 else None
    rank = len(shape_of(op.operands[0].type))
    if attr_ints(op, "broadcast_dimensions") != list(range(rank)) or rank not in (len(shape) - 1, len(shape)):
        return None
    return op.operands[0]


def _reduced(value: ir.Value, shape: tuple, body: str, init: float):
    """x where `value` (per row: [..., rows] or [..., rows, 1]) is reduce(x, init) by `body` over the last axis of
    x of `shape`, through a reshape or a broadcast to [..., 1]; a maximum's also through a maximum with a splat of
    -inf (the same value: JAX 0.10's softmax writes max(-inf, reduce_max(x))); else None."""
    op = producer(value)
    if op is not None and shape_of(value.type) == (*shape[:-1], 1) and (
            op.name == "stablehlo.reshape" or op.name == "stablehlo.broadcast_in_dim"
            and attr_ints(op, "broadcast_dimensions") == list(range(len(shape) - 1))):
        value, op = op.operands[0], producer(op.operands[0])
    if op is not None and op.name == "stablehlo.maximum" and body == op.name and init == -math.inf:
        for kept, bound in (op.operands, reversed(list(op.operands))):
            if splat_value(bound) == -math.inf:
                value, op = kept, producer(kept)
                break
    if op is None or op.name != "stablehlo.reduce" or len(op.operands) != 2 or shape_of(value.type) != shape[:-1]:
        return None
    x, init_value = op.operands
    if attr_ints(op, "dimensions") != [len(shape) - 1] or shape_of(x.type) != shape:
        return None
    body_ops = [inner.operation.name for inner in op.regions[0].blocks[0].operations]
    return x if body_ops == [body, "stablehlo.return"] and splat_value(init_value) == init else None


def _reduced_row(value: ir.Value, body: str, init: float):
    """x where `value` (of x's shape) is reduce(x, init) by `body` over x's last axis broadcast back; else None."""
    shape = shape_of(value.type)
    row = _row_of(value, shape)
    return _reduced(row, shape, body, init) if row is not None else None


def _mean(value: ir.Value, shape: tuple):
    """x where `value` (per row) is sum(x over the last axis) / n, x of `shape` [..., n]; else None."""
    op = _named(value, "stablehlo.divide")
    if op is None or splat_value(op.operands[1]) != shape[-1]:
        return None
    return _reduced(op.operands[0], shape, "stablehlo.add", 0.0)


def _softmax_input(op):
    """x where `op` is the divide exp(x - max(x)) / sum(exp(x - max(x))) over the last axis of f32 x; else None."""
    if op.name != "stablehlo.divide" or dtype_of(op.results[0].type) != np.float32:
        return None
    numerator, denominator = op.operands
    exp = producer(numerator)
    if exp is None or exp.name != "stablehlo.exponential" or not _same(
            _reduced_row(denominator, "stablehlo.add", 0.0), numerator):
        return None
    shifted = _named(exp.operands[0], "stablehlo.subtract")
    if shifted is None:
        return None
    x = shifted.operands[0]
    return x if _same(_reduced_row(shifted.operands[1], "stablehlo.maximum", -math.inf), x) else None


_NORMALISING = {"stablehlo.multiply": "stablehlo.rsqrt", "stablehlo.divide": "stablehlo.sqrt"}


def _normalised(op) -> tuple[ir.Value, float, str] | None:
    """(x, eps, op's name) where `op` is the multiply (x - mean(x)) * rsqrt(mean((x - mean(x))²) + eps) (either
    operand order) or the divide (x - mean(x)) / sqrt(mean((x - mean(x))²) + eps) over the last axis of f32 x;
    else None."""
    if op.name not in _NORMALISING or dtype_of(op.results[0].type) != np.float32:
        return None
    shape = shape_of(op.results[0].type)
    if not shape:
        return None
    orders = [op.operands] if op.name == "stablehlo.divide" else [op.operands, reversed(list(op.operands))]
    for centred, scaling in orders:
        row = _row_of(scaling, shape)
        root = _named(row, _NORMALISING[op.name]) if row is not None else None
        shifted = _named(root.operands[0], "stablehlo.add") if root is not None else None
        subtract = _named(centred, "stablehlo.subtract")
        if shifted is None or subtract is None:
            continue
        variance, eps = shifted.operands
        squares = _mean(variance, shape)
        square = _named(squares, "stablehlo.multiply") if squares is not None else None
        if square is None or not (_equal(square.operands[0], centred) and _equal(square.operands[1], centred)):
            continue
        x, mean_row = subtract.operands
        mean = _row_of(mean_row, shape)
        if mean is not None and _same(_mean(mean, shape), x) and splat_value(eps) is not None:
            return x, splat_value(eps), op.name
    return None


def _by_row_vector(op, name: str):
    """(the vector of n, the other operand) where `op` is `name` of a value and a vector of n broadcast along the
    last axis; else None."""
    if op is None or op.name != name:
        return None
    shape = shape_of(op.results[0].type)
    for value, other in (op.operands, reversed(list(op.operands))):
        vector = column_vector(value, shape)
        if vector is not None:
            return vector, other
    return None


def _layer_norm(op):
    """(the op whose result the kernel replaces, x, eps, whether it divides by the root, scale or None, offset or
    None) where `op` is the
    normalising multiply of a layer norm, with the scale's multiply and the offset's add after it taken along
    where each is its only user; else None."""
    found = _normalised(op)
    if found is None:
        return None
    (x, eps, name), last, scale, offset = found, op, None, None
    user = only_user(last.results[0])
    scaled = _by_row_vector(user, "stablehlo.multiply")
    if scaled is not None and _same(scaled[1], last.results[0]):
        scale, last = scaled[0], user
        user = only_user(last.results[0])
    shifted = _by_row_vector(user, "stablehlo.add")
    if shifted is not None and _same(shifted[1], last.results[0]):
        offset, last = shifted[0], user
    return last, x, eps, name == "stablehlo.divide", scale, offset


# --- the kernels ---

def _rows_per_workgroup(rows: int, length: int) -> int:
    per = max(1, ROW_ELEMENTS // length)
    per = min(per, max(1, -(-rows // MIN_WORKGROUPS)))
    return max(per, -(-rows // MAX_WORKGROUPS))


def _rows_loop(k: KernelText, rows: int, length: int, per: int, bindings: int, row_body):
    """The kernel's head (x bound first, y last, as [rows, length]; `bindings` - 2 vectors [length] between) and
    its loop over this workgroup's rows: row_body(row, x, y, vectors, matrix type)."""
    matrix = f"memref<{rows}x{length}xf32>"
    x = k.binding(0, matrix, "x")
    vectors = [k.binding(i, f"memref<{length}xf32>", "p") for i in range(1, bindings - 1)]
    y = k.binding(bindings - 1, matrix, "y")
    first = k.i("muli", k.op("hal.interface.workgroup.id[0] : index", "wg"), k.c(per))
    last = k.op(f"arith.minui {k.i('addi', first, k.c(per))}, {k.c(rows)} : index")
    k.for_(first, last, k.c(1), lambda row: row_body(row, x, y, vectors, matrix))
    k.emit("return")
    return "\n".join(k.lines)


def _read(k: KernelText, memref: str, index: list, type_: str, mask: str, padding: str) -> str:
    return k.op(f"vector.transfer_read {memref}[{', '.join(index)}], {padding}, {mask} : {type_}, {k.v}")


def softmax_body(rows: int, length: int, per: int, lanes: int) -> str:
    """Each row in three sweeps: its maximum; exp(x - max) written and summed; each written value / the sum."""
    k = KernelText("f32", lanes)
    c0, n = k.c(0), k.c(length)
    minus_inf = k.c("0xFF800000", "f32")
    vector_minus_inf, vector_zero = k.splat(minus_inf), k.splat(k.c("0.0", "f32"))

    def row_body(row, x, y, _, matrix):
        def maximum(column, mask, running):
            return [k.op(f"arith.maximumf {running}, {_read(k, x, [row, column], matrix, mask, minus_inf)} : {k.v}")]
        (most,) = k.vfor(c0, n, maximum, [(vector_minus_inf, k.v)])
        top = k.splat(k.op(f"vector.reduction <maximumf>, {most} : {k.v} into f32"))

        def exponentials(column, mask, running):
            e = k.op(f"math.exp {k.vf('subf', _read(k, x, [row, column], matrix, mask, minus_inf), top)} : {k.v}")
            k.vwrite(e, y, [row, column], matrix, mask)
            return [k.vf("addf", running, e)]
        (sums,) = k.vfor(c0, n, exponentials, [(vector_zero, k.v)])
        total = k.splat(k.vsum(sums))

        def normalised(column, mask):
            e = _read(k, y, [row, column], matrix, mask, k.c("1.0", "f32"))
            k.vwrite(k.vf("divf", e, total), y, [row, column], matrix, mask)
        k.vfor(c0, n, normalised)
    return _rows_loop(k, rows, length, per, 2, row_body)


def layer_norm_body(rows: int, length: int, per: int, lanes: int, eps: float, divides: bool, scaled: bool,
                    offset: bool) -> str:
    """Each row in three sweeps: its sum (-> mean); the sum of squares of x - mean (-> rsqrt(it / n + eps), or the
    sqrt where it `divides`); and (x - mean) * (or /) that [* scale] [+ offset] written."""
    k = KernelText("f32", lanes)
    c0, n = k.c(0), k.c(length)
    zero = k.c("0.0", "f32")
    vector_zero = k.splat(zero)
    count, epsilon = k.c(f"{float(length):e}", "f32"), k.c(f"{np.float32(eps).item()!r}", "f32")
    vector_type = f"memref<{length}xf32>"

    def row_body(row, x, y, vectors, matrix):
        def sums(column, mask, running):
            return [k.vf("addf", running, _read(k, x, [row, column], matrix, mask, zero))]
        (total,) = k.vfor(c0, n, sums, [(vector_zero, k.v)])
        mean = k.f("divf", k.vsum(total), count)
        vector_mean = k.splat(mean)

        def squares(column, mask, running):
            d = k.vf("subf", _read(k, x, [row, column], matrix, mask, mean), vector_mean)
            return [k.vf("addf", running, k.vf("mulf", d, d))]
        (squared,) = k.vfor(c0, n, squares, [(vector_zero, k.v)])
        variance = k.f("divf", k.vsum(squared), count)
        root = "math.sqrt" if divides else "math.rsqrt"
        factor = k.splat(k.op(f"{root} {k.f('addf', variance, epsilon)} : f32"))

        def normalised(column, mask):
            centred = k.vf("subf", _read(k, x, [row, column], matrix, mask, zero), vector_mean)
            value = k.vf("divf" if divides else "mulf", centred, factor)
            for vector, op in zip(vectors, [name for name, on in (("mulf", scaled), ("addf", offset)) if on]):
                value = k.vf(op, value, _read(k, vector, [column], vector_type, mask, zero))
            k.vwrite(value, y, [row, column], matrix, mask)
        k.vfor(c0, n, normalised)
    return _rows_loop(k, rows, length, per, 2 + scaled + offset, row_body)


def _source(symbol: str, shape: tuple, body, vector_shapes: list = ()) -> str:
    """A module holding the executable and `func.func private @symbol(x, vectors...) -> y` for x and y of `shape`
    and vectors of shape[-1] elements (of `vector_shapes`: [n] or [1, ..., 1, n], bound as [n]); body(rows, length,
    rows a workgroup, lanes) gives the kernel's text."""
    length, rows = shape[-1], math.prod(shape[:-1])
    per = _rows_per_workgroup(rows, length)
    vectors = len(vector_shapes)
    alias, text = executable(symbol, -(-rows // per), 1 + vectors, 1, body(rows, length, per, _lanes()))

    def tensor(s):
        return f"tensor<{'x'.join(map(str, s))}xf32>"
    full, matrix, row = tensor(shape), tensor((rows, length)), tensor((length,))
    arguments = ", ".join([f"%x: {full}"] + [f"%p{i}: {tensor(s)}" for i, s in enumerate(vector_shapes)])
    operands = ", ".join(["%rows"] + [f"%v{i}" for i in range(vectors)])
    types = ", ".join([matrix] + [row] * vectors)
    reshapes = "".join(f"    %v{i} = stablehlo.reshape %p{i} : ({tensor(s)}) -> {row}\n"
                       for i, s in enumerate(vector_shapes))
    return alias + f"""
module {{
{text}
  func.func private @{symbol}({arguments}) -> {full} {{
{reshapes}    %rows = stablehlo.reshape %x : ({full}) -> {matrix}
    %y = flow.dispatch @{symbol}_executable::@{symbol}({operands}) : ({types}) -> {matrix}
    %result = stablehlo.reshape %y : ({matrix}) -> {full}
    return %result : {full}
  }}
}}"""


def _claimed(x: ir.Value) -> bool:
    shape = shape_of(x.type)
    return len(shape) >= 1 and 1 <= shape[-1] <= MAX_LENGTH and math.prod(shape) >= MIN_ELEMENTS


def _shape_name(shape) -> str:
    return "x".join(map(str, shape))


def _next_match(module: ir.Module, match):
    """(op, match(op)) of the first op `match` takes (not None), or None. Searched afresh after each rewrite: a
    rewrite erases ops that a list taken before it would still hold (a layer norm's scale and offset follow it)."""
    for op in walk(module.operation):
        found = match(op)
        if found is not None:
            return op, found
    return None


def _softmax_claimed(op):
    x = _softmax_input(op)
    return x if x is not None and _claimed(x) else None


def _layer_norm_claimed(op):
    found = _layer_norm(op)
    return found if found is not None and _claimed(found[1]) else None


def softmaxes_by_kernel(module: ir.Module) -> int:
    """Each f32 softmax over a last axis of 1 to MAX_LENGTH, MIN_ELEMENTS or more in all, as a call of its
    kernel (one function per shape), inlined; the ops only it read are erased."""
    count = 0
    while (match := _next_match(module, _softmax_claimed)) is not None:
        op, x = match
        shape, denominator = shape_of(x.type), op.operands[1]
        call_of_source(module, op, f"hlojit_softmax_kernel_{_shape_name(shape)}",
                       lambda symbol: _source(symbol, shape, softmax_body), [x])
        erase_unused(denominator, _PATTERN_OPS)   # the sum, then the exponentials it read where nothing else does
        count += 1
    if count:
        inline_calls(module)
    return count


def layer_norms_by_kernel(module: ir.Module) -> int:
    """Each f32 layer norm over a last axis of 1 to MAX_LENGTH, MIN_ELEMENTS or more in all, with its scale and
    offset where they follow it alone, as a call of its kernel (one function per shape, eps and form), inlined; the
    ops only it read are erased."""
    count = 0
    while (match := _next_match(module, _layer_norm_claimed)) is not None:
        last, x, eps, divides, scale, offset = match[1]
        named = [(name, v) for name, v in (("s", scale), ("o", offset)) if v is not None]
        shape, vectors = shape_of(x.type), [v for _, v in named]
        vector_shapes = [shape_of(v.type) for v in vectors]
        form = "".join(f"_{name}{len(shape_of(v.type))}" for name, v in named)   # scale, offset and their ranks
        form += "_divided" if divides else ""
        symbol = f"hlojit_layer_norm_kernel_{_shape_name(shape)}{form}_{np.float32(eps).view(np.uint32):08x}"
        dead = list(last.operands)
        call_of_source(module, last, symbol, lambda s: _source(
            s, shape, lambda *a: layer_norm_body(*a, eps, divides, scale is not None, offset is not None),
            vector_shapes),
            [x, *vectors])
        for value in dead:
            erase_unused(value, _PATTERN_OPS)
        count += 1
    if count:
        inline_calls(module)
    return count
