"""Blocked factorizations on llvm-cpu: the kernels (kernels.py) on the diagonal blocks, IREE's matmuls for the rest.

A kernel is one workgroup per matrix, so one big matrix runs on one core, its trailing updates one row at a time.
LAPACK blocks: it factors a narrow panel with its unblocked code and updates the trailing matrix with a matrix
product (gemm/syrk) on every core. The same here, in StableHLO around the kernels' calls: for each block of
columns, the Cholesky kernel factors the BLOCK x BLOCK diagonal block, the triangular-solve kernel inverts that
factor, the panel below is a matmul by the inverse and the trailing matrix takes one matmul update
(right-looking; the block loop unrolled, n is static). Measured on the 2-vCPU Xeon (AVX-512, AMX) of 2026-12-05,
f32, median of 15: 1024² 24.6 ms one kernel against 12.5 blocked by 256 and 13.1 by 128 (JAX 19.0); 512² 2.12
against 1.55 by 128 (JAX 1.56); 256² 0.46 against 0.35 (JAX 0.46).

Only the lower triangle is read (the kernels' and numpy's convention). A pivot that fails makes its block's factor
NaN and through the inverse every block after it, so the last diagonal element is NaN exactly when some pivot
failed (or the input held a NaN), and then the whole lower triangle is NaN, as JAX gives and the kernel does.
"""
from __future__ import annotations

from typing import Callable

import numpy as np
from iree.compiler import ir

from ..dialects import stablehlo as hlo
from ..dialects.types import dtype_of, shape_of

CHOLESKY_BLOCK = 128          # the diagonal blocks' size
BLOCKED_CHOLESKY_FROM = 256   # n from which the blocked form runs (below it, the one kernel)

# call(name, operands, attributes) -> results: a call of the kernel for the composite `name` (kernels.py)
KernelCall = Callable[[str, list, dict], list]


def blocked_cholesky(a: ir.Value, call: KernelCall, block: int = CHOLESKY_BLOCK) -> ir.Value:
    """L with L L^T = a (..., n, n) from a's lower triangle, built at the current insertion point."""
    *lead, n, _ = shape_of(a.type)
    rank, dtype = len(lead) + 2, dtype_of(a.type)
    batch = list(range(rank - 2))
    rows, cols = rank - 2, rank - 1

    def part(x, row0, row1, col0, col1):
        return hlo.slice(x, [0] * len(lead) + [row0, col0], [*lead, row1, col1])

    def times_transposed(x, y):   # x @ y^T over the batch
        return hlo.dot_general(x, y, lhs_batch=batch, rhs_batch=batch, lhs_contract=[cols], rhs_contract=[cols])

    columns, trailing = [], a
    for start in range(0, n, block):
        size, rest = min(block, n - start), n - start - min(block, n - start)
        l11 = call("hlojit.cholesky", [part(trailing, 0, size, 0, size)], {})[0]
        pieces = [l11]
        if start:
            pieces.insert(0, hlo.broadcast_in_dim(hlo.constant(np.zeros((), dtype)), [*lead, start, size], []))
        if rest:
            eye = hlo.broadcast_in_dim(hlo.constant(np.eye(size, dtype=dtype)), [*lead, size, size], [rows, cols])
            inverse = call("hlojit.triangular_solve", [l11, eye], {"lower": 1, "unit": 0})[0]
            l21 = times_transposed(part(trailing, size, size + rest, 0, size), inverse)
            pieces.append(l21)
            trailing = hlo.binary("subtract", part(trailing, size, size + rest, size, size + rest),
                                  times_transposed(l21, l21))
        columns.append(hlo.concatenate(pieces, rows) if len(pieces) > 1 else l11)
    factor = hlo.concatenate(columns, cols) if len(columns) > 1 else columns[0]
    last = part(factor, n - 1, n, n - 1, n)
    failed = hlo.broadcast_in_dim(hlo.compare(last, last, "NE"), [*lead, n, n], list(range(rank)))
    lower = hlo.compare(hlo.iota([*lead, n, n], rows, np.int32), hlo.iota([*lead, n, n], cols, np.int32), "GE")
    nan = hlo.broadcast_in_dim(hlo.constant(np.array(np.nan, dtype)), [*lead, n, n], [])
    return hlo.select(hlo.binary("and", failed, lower), nan, factor)
