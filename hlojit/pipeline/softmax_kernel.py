"""f32 softmax along the last axis as one hand-written llvm-cpu dispatch: a cpu target rewrite of the pattern
exp(x - max(x)) / sum(exp(x - max(x))) (frontend/ops/statistics.py's softmax, jax.nn.softmax's export alike).

Why: IREE 3.13 raises that pattern into its `linalg.softmax` op, whose llvm-cpu code runs 2.4 ns an element on
the 2-vCPU AVX-512 Xeon (8 x 4 x 128 x 128 in 1.28 ms on one core, 2026-12-06), where jax.jit takes 0.55 ms on
two: the softmax was the transformer block's largest dispatch after its four products (1.38 of 15.5 ms, one
core). Hidden from the raising (a barrier on the sum), IREE's three dispatches ran it in ~0.72 ms but slowed
the block's others (git log: 2026-12-06's "tried and dropped").

How: one workgroup per block of rows; each row in three sweeps of vectors that stay in L1 (a row of up to
MAX_LENGTH floats): its maximum; exp(x - max) written out and summed; each written value divided by the sum
(a division, as the StableHLO says, not a multiplication by the reciprocal). Lanes past the row's end read
-inf (they add exp(-inf) = 0) and are not written. A row of -inf is NaN, as the pattern's arithmetic gives.
"""
from __future__ import annotations

import math

import numpy as np
from iree.compiler import ir

from ..dialects.types import attr_ints, constant_value, dtype_of, shape_of
from . import cache
from .kernel_text import KernelText, executable
from .legalize import call_of_source, erase_unused, inline_calls, producer, walk

MAX_LENGTH = 1 << 14         # a row's floats at most (64 KiB: the row stays in L1/L2 between its sweeps)
MIN_ELEMENTS = 1 << 12       # fewer stay IREE's (a dispatch of its own costs more than it saves)
ROW_ELEMENTS = 1 << 15       # a workgroup's rows hold about this many elements ...
MIN_WORKGROUPS = 8           # ... but there are at least this many workgroups where there are rows enough
MAX_WORKGROUPS = 65535
_PATTERN_OPS = frozenset({"stablehlo.exponential", "stablehlo.subtract", "stablehlo.reduce", "stablehlo.reshape",
                          "stablehlo.broadcast_in_dim", "stablehlo.constant"})


def _lanes() -> int:
    return 16 if "avx512f" in cache.host_cpu_features() else 8


def _reduced_row(value: ir.Value, body: str, init: float):
    """The operand x of `value` = reduce(x, init) by `body` over x's last axis, brought back to x's shape by a
    broadcast_in_dim and/or a reshape to [..., 1] (hlojit's keepdims, or a row of 1); else None."""
    shape = shape_of(value.type)
    op = producer(value)
    if op is not None and op.name == "stablehlo.broadcast_in_dim":
        rank = len(shape_of(op.operands[0].type))
        if attr_ints(op, "broadcast_dimensions") != list(range(rank)) or rank not in (len(shape) - 1, len(shape)):
            return None
        value = op.operands[0]
        op = producer(value)
    if op is not None and op.name == "stablehlo.reshape" and shape_of(value.type) == (*shape[:-1], 1):
        value = op.operands[0]
        op = producer(value)
    if op is None or op.name != "stablehlo.reduce" or len(op.operands) != 2 or shape_of(value.type) != shape[:-1]:
        return None
    x, init_value = op.operands
    if attr_ints(op, "dimensions") != [len(shape) - 1] or shape_of(x.type) != shape:
        return None
    body_ops = [inner.operation.name for inner in op.regions[0].blocks[0].operations]
    constant = producer(init_value)
    if body_ops != [body, "stablehlo.return"] or constant is None or constant.name != "stablehlo.constant":
        return None
    return x if constant_value(constant).reshape(-1).tolist() == [init] else None


def _softmax_input(op):
    """x where `op` is the divide exp(x - max(x)) / sum(exp(x - max(x))) over the last axis of f32 x; else None."""
    if op.name != "stablehlo.divide" or dtype_of(op.results[0].type) != np.float32:
        return None
    numerator, denominator = op.operands
    exp = producer(numerator)
    if exp is None or exp.name != "stablehlo.exponential" or not _same(
            _reduced_row(denominator, "stablehlo.add", 0.0), numerator):
        return None
    shifted = producer(exp.operands[0])
    if shifted is None or shifted.name != "stablehlo.subtract":
        return None
    x = shifted.operands[0]
    return x if _same(_reduced_row(shifted.operands[1], "stablehlo.maximum", -math.inf), x) else None


def _same(value: ir.Value | None, other: ir.Value) -> bool:
    return value is not None and value == other


def _rows_per_workgroup(rows: int, length: int) -> int:
    per = max(1, ROW_ELEMENTS // length)
    per = min(per, max(1, -(-rows // MIN_WORKGROUPS)))
    return max(per, -(-rows // MAX_WORKGROUPS))


def kernel_body(rows: int, length: int, per: int, lanes: int) -> str:
    """Workgroup w: rows [w * per, min(rows, (w + 1) * per)) of x [rows, length] -> y, each in three sweeps."""
    k = KernelText("f32", lanes)
    matrix = f"memref<{rows}x{length}xf32>"
    x, y = k.binding(0, matrix, "x"), k.binding(1, matrix, "y")
    c0, c1, n = k.c(0), k.c(1), k.c(length)
    first = k.i("muli", k.op("hal.interface.workgroup.id[0] : index", "wg"), k.c(per))
    last = k.op(f"arith.minui {k.i('addi', first, k.c(per))}, {k.c(rows)} : index")
    minus_inf = k.c("0xFF800000", "f32")
    vector_minus_inf = k.splat(minus_inf)
    vector_zero = k.splat(k.c("0.0", "f32"))

    def read(memref, row, column, mask, padding):
        return k.op(f"vector.transfer_read {memref}[{row}, {column}], {padding}, {mask} : {matrix}, {k.v}")

    def row_body(row):
        def maximum(column, mask, running):
            return [k.op(f"arith.maximumf {running}, {read(x, row, column, mask, minus_inf)} : {k.v}")]
        (most,) = k.vfor(c0, n, maximum, [(vector_minus_inf, k.v)])
        top = k.splat(k.op(f"vector.reduction <maximumf>, {most} : {k.v} into f32"))

        def exponentials(column, mask, running):
            e = k.op(f"math.exp {k.vf('subf', read(x, row, column, mask, minus_inf), top)} : {k.v}")
            k.vwrite(e, y, [row, column], matrix, mask)
            return [k.vf("addf", running, e)]
        (sums,) = k.vfor(c0, n, exponentials, [(vector_zero, k.v)])
        total = k.splat(k.vsum(sums))

        def normalised(column, mask):
            k.vwrite(k.vf("divf", read(y, row, column, mask, k.c("1.0", "f32")), total), y, [row, column], matrix,
                     mask)
        k.vfor(c0, n, normalised)
    k.for_(first, last, c1, row_body)
    k.emit("return")
    return "\n".join(k.lines)


def softmax_source(symbol: str, shape: tuple) -> str:
    """A module holding the executable and `func.func private @symbol(x) -> softmax(x)` for x of `shape`."""
    length, rows = shape[-1], math.prod(shape[:-1])
    per = _rows_per_workgroup(rows, length)
    workgroups = -(-rows // per)
    alias, text = executable(symbol, workgroups, 1, 1, kernel_body(rows, length, per, _lanes()))
    full, matrix = (f"tensor<{'x'.join(map(str, s))}xf32>" for s in (shape, (rows, length)))
    return alias + f"""
module {{
{text}
  func.func private @{symbol}(%x: {full}) -> {full} {{
    %rows = stablehlo.reshape %x : ({full}) -> {matrix}
    %y = flow.dispatch @{symbol}_executable::@{symbol}(%rows) : ({matrix}) -> {matrix}
    %result = stablehlo.reshape %y : ({matrix}) -> {full}
    return %result : {full}
  }}
}}"""


def softmaxes_by_kernel(module: ir.Module) -> int:
    """Each f32 softmax over a last axis of 1 to MAX_LENGTH, MIN_ELEMENTS or more in all, as a call of its
    kernel (one function per shape), inlined; the ops only it read are erased."""
    count = 0
    for op in list(walk(module.operation)):
        x = _softmax_input(op)
        if x is None:
            continue
        shape = shape_of(x.type)
        if not 1 <= shape[-1] <= MAX_LENGTH or math.prod(shape) < MIN_ELEMENTS:
            continue
        denominator = op.operands[1]
        call_of_source(module, op, "hlojit_softmax_kernel_" + "x".join(map(str, shape)),
                       lambda symbol: softmax_source(symbol, shape), [x])
        erase_unused(denominator, _PATTERN_OPS)   # the sum, then the exponentials it read where nothing else does
        count += 1
    if count:
        inline_calls(module)
    return count
