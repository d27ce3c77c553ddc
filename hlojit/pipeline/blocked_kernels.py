"""Blocked factorizations on llvm-cpu: the kernels (kernels.py) on narrow panels, IREE's matmuls for the rest.

A kernel is one workgroup per matrix, so one big matrix runs on one core, its trailing updates one row at a time.
LAPACK blocks: it factors a narrow panel with its unblocked code and updates the trailing matrix with matrix
products on every core. The same here, in StableHLO around the kernels' calls, the block loop unrolled (shapes are
static), for the composites kernels.BLOCKED names from the sizes it gives:

- QR (geqrf and orgqr): the Householder kernel reflects each panel; its reflectors' product in compact WY form
  I - V T V^T (T from the UT transform, inverted by the triangular-solve kernel) reaches the rest of the matrix,
  and forms Q from the last panel back, by three matmuls each.

Measured on the 2-vCPU Xeon (AVX-512, AMX) of 2026-12-05, f32, interleaved medians, one kernel -> blocked (JAX):
qr 256² 2.85 -> 1.83 (1.82), 512² 19.9 -> 10.0
(7.9), 1024² 220 -> 55.1 on local-task (~56). The cost is compile time: each step's matmuls have shapes of their
own, so qr 1024²'s first call takes 10.7 s with 128-column panels (19.9 with 64, which ran no faster: 58.6 ms)
against ~1 s for the one kernel.

What was tried and lost: Cholesky (potrf) blocked the same way (the kernel on 128-column diagonal blocks, the
triangular-solve kernel inverting each, a matmul for the panel below and one for the trailing update) ran 1024² in
11.9 ms against the one kernel's 14.6, until the kernels' register-tiled updates and padded rows
(factorization_kernels.py) brought the one kernel to 6.6 ms (blocked 12.2; 2048²: 74 against 102, 256²: 0.16
against 0.36). LU (getrf) blocked the same way, the kernel factoring each tall panel and swapping whole
rows, ran 1024² in 23 ms against the one kernel's 22.5: IREE split the program into ~24 command buffers, ~10 ms of
waits, and its gather of the trailing rows ran at ~3 GB/s.
"""
from __future__ import annotations

from typing import Callable

import numpy as np
from iree.compiler import ir

from ..dialects import stablehlo as hlo
from ..dialects.types import dtype_of, shape_of

QR_BLOCKS = ((512, 128), (0, 64))   # the Householder panels' columns: 128 from 512 reflectors, 64 below
BLOCKED_QR_FROM = 256         # min(m, n) from which geqrf and orgqr run blocked

# call(name, operands, attributes) -> results: a call of the kernel for the composite `name` (kernels.py)
KernelCall = Callable[[str, list, dict], list]


def _qr_block(k: int) -> int:
    return next(block for smallest, block in QR_BLOCKS if k >= smallest)


class _Batch:
    """Builders on a batch of matrices flattened to (P, rows, cols)."""

    def __init__(self, p: int, dtype):
        self.p, self.dtype = p, dtype

    def part(self, x, rows, cols):
        return hlo.slice(x, [0, rows[0], cols[0]], [self.p, rows[1], cols[1]])

    def matmul(self, x, y, transpose_x: bool = False):
        return hlo.dot_general(x, y, lhs_batch=[0], rhs_batch=[0], lhs_contract=[1 if transpose_x else 2],
                               rhs_contract=[1])

    def splat(self, value, rows: int, cols: int):
        return hlo.broadcast_in_dim(hlo.constant(np.array(value, self.dtype)), [self.p, rows, cols], [])

    def eye(self, rows: int, cols: int):
        return hlo.broadcast_in_dim(hlo.constant(np.eye(rows, cols, dtype=self.dtype)), [self.p, rows, cols], [1, 2])

    def join(self, pieces: list, dimension: int):
        pieces = [x for x in pieces if 0 not in shape_of(x.type)]
        return hlo.concatenate(pieces, dimension) if len(pieces) > 1 else pieces[0]

    def times_transposed(self, x, y):
        """x @ y^T (a dot_general contracting both last dimensions: no transpose of its own)."""
        return hlo.dot_general(x, y, lhs_batch=[0], rhs_batch=[0], lhs_contract=[2], rhs_contract=[2])

    def transposed(self, x):
        return hlo.transpose(x, [0, 2, 1])

    def minus_product(self, v, t, x):
        """(I - v t v^T) x by three matmuls (the same dispatches for geqrf's t^T, transposed before, and orgqr's t,
        where their shapes agree: IREE compiles each once)."""
        w = self.matmul(t, self.matmul(v, x, transpose_x=True))
        return hlo.binary("subtract", x, self.matmul(v, w))


def _compact_wy(batch: _Batch, v, tau, call: KernelCall):
    """(V, T) with H_0 ... H_{b-1} = I - V T V^T for reflectors v (P, m, b) and tau (P, 1, b): T is the inverse of
    diag(1 / tau) + the strict upper triangle of V^T V (the UT transform; the triangular-solve kernel inverts it).
    A reflector with tau 0 is the identity: its column of V is zeroed and its diagonal entry is 1."""
    p, m, b = shape_of(v.type)
    zero_tau = hlo.compare(tau, batch.splat(0, 1, b), "EQ")
    v = hlo.select(hlo.broadcast_in_dim(zero_tau, [p, m, b], [0, 1, 2]), batch.splat(0, m, b), v)
    gram = batch.matmul(v, v, transpose_x=True)
    inverse_tau = hlo.binary("divide", batch.splat(1, 1, b), hlo.select(zero_tau, batch.splat(1, 1, b), tau))
    # masks as 0/1 floats, not selects on constant bools: IREE 3.13's data tiling fails on those ("buffer and
    # tensor shapes must be compatible", an i1 tensor's encoding) and the compile fell back to no data tiling
    eye = batch.eye(b, b)
    strictly_upper = hlo.broadcast_in_dim(hlo.constant(np.triu(np.ones((b, b), batch.dtype), 1)), [p, b, b], [1, 2])
    t_inverse = hlo.binary("add", hlo.binary("multiply", gram, strictly_upper),
                           hlo.binary("multiply", hlo.broadcast_in_dim(inverse_tau, [p, b, b], [0, 1, 2]), eye))
    return v, call("hlojit.triangular_solve", [t_inverse, eye], {"lower": 0, "unit": 0})[0]


def blocked_householder(a: ir.Value, call: KernelCall) -> list[ir.Value]:
    """(r, v, tau) of a (..., m, n) as the Householder kernel gives them (geqrf's), blocked as LAPACK's geqrf: the
    kernel reflects a panel (all the rows below), and the matrix from the panel's first column on takes the panel's
    product in compact WY form by three matmuls (the panel's own columns too, then replaced by the kernel's: the
    products then have orgqr's shapes, and IREE compiles each shape once)."""
    *lead, m, n = shape_of(a.type)
    p, k = int(np.prod(lead, dtype=np.int64)), min(m, n)
    block = _qr_block(k)
    batch = _Batch(p, dtype_of(a.type))
    trailing = hlo.reshape(a, [p, m, n])     # rows and columns start .. of what is left to reflect
    r_rows, vs, taus = [], [], []
    for start in range(0, k, block):
        size, below, right = min(block, k - start), m - start, n - start - min(block, k - start)
        r, v, tau = call("hlojit.householder", [batch.part(trailing, (0, below), (0, size))], {})
        vs.append(batch.join([batch.splat(0, start, size), v], 1))
        taus.append(tau)
        top = [batch.splat(0, size, start), batch.part(r, (0, size), (0, size))]
        if right:
            wy_v, t = _compact_wy(batch, v, tau, call)
            rest = batch.minus_product(wy_v, batch.transposed(t), trailing)
            top.append(batch.part(rest, (0, size), (size, size + right)))
            trailing = batch.part(rest, (size, below), (size, size + right))
        r_rows.append(batch.join(top, 2))
    r_rows.append(batch.splat(0, m - k, n))
    r, v, tau = batch.join(r_rows, 1), batch.join(vs, 2), batch.join(taus, 2)
    return [hlo.reshape(r, [*lead, m, n]), hlo.reshape(v, [*lead, m, k]), hlo.reshape(tau, [*lead, 1, k])]


def blocked_form_q(v: ir.Value, tau: ir.Value, columns: int, call: KernelCall) -> ir.Value:
    """The first `columns` columns of Q = H_0 ... H_{k-1} from the reflectors v (..., m, k) and tau (..., 1, k), as
    LAPACK's orgqr: from the last panel, Q's corner from the panel's first row and column on is the panel's
    compact WY product applied (three matmuls) to [[I, 0], [0, the corner before]]."""
    *lead, m, k = shape_of(v.type)
    p = int(np.prod(lead, dtype=np.int64))
    batch = _Batch(p, dtype_of(v.type))
    v, tau = hlo.reshape(v, [p, m, k]), hlo.reshape(tau, [p, 1, k])
    block, corner = _qr_block(k), None
    for start in reversed(range(0, k, block)):
        size = min(block, k - start)
        if corner is None:
            x = batch.eye(m - start, columns - start)
        else:
            after = start + size
            x = batch.join([batch.join([batch.eye(size, size), batch.splat(0, size, columns - after)], 2),
                            batch.join([batch.splat(0, m - after, size), corner], 2)], 1)
        wy_v, t = _compact_wy(batch, batch.part(v, (start, m), (start, start + size)),
                              hlo.slice(tau, [0, 0, start], [p, 1, start + size]), call)
        corner = batch.minus_product(wy_v, t, x)
    return hlo.reshape(corner, [*lead, m, columns])
