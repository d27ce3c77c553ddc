"""Householder reduction of a symmetric matrix to tridiagonal form: a = q t q^T.

One fori_loop step per column, with the column a traced index: every step is the same code (masks built from
iotas compared with the counter), so IREE compiles one loop body whatever n is. Step k reflects rows and
columns k+1.. so that column k is zero below its subdiagonal (LAPACK's dsytd2: a symmetric rank-2 update of
the whole matrix, whose reflector is zero above row k + 1), and accumulates the reflector into q.
"""
from __future__ import annotations

from ... import ops
from ...control import fori_loop
from . import _util


def _reflector(x, rows, k):
    """(v, tau, alpha): the Householder reflector I - tau v v^T (v[k+1] = 1, zero above) that maps x's rows
    k+1.. to a multiple of e_(k+1) (LAPACK's dlarfg). tau is 0 when those rows are already that multiple."""
    alpha = ops.sum(ops.where(rows == k + 1, x, 0), axis=-1)
    tail = ops.where(rows > k + 1, x, 0)
    tail_squares = ops.sum(tail * tail, axis=-1)
    untouched = tail_squares == 0
    beta = ops.where(alpha >= 0, -1, 1) * ops.sqrt(alpha * alpha + tail_squares)
    beta = ops.where(untouched, 1, beta)
    tau = ops.where(untouched, 0, (beta - alpha) / beta)
    scale = ops.where(untouched, 0, 1 / ops.where(untouched, 1, alpha - beta))
    v = ops.where(rows == k + 1, 1, tail * scale[..., None])
    return v, tau


def tridiagonalize(a, vectors: bool = True):
    """(d (..., n), e (..., n - 1), q (..., n, n) or None) of symmetric a (..., n, n): a = q t q^T for the
    tridiagonal t with diagonal d and off-diagonal e."""
    n = a.shape[-1]
    q = ops.broadcast_to(_util.eye(n, a.dtype), a.shape) if vectors else None
    if n > 2:
        rows = _util.index((n,), 0)

        def step(k, carry):
            a, *q = carry
            v, tau = _reflector(_util.column(a, k)[..., 0], rows, k)
            p = tau[..., None] * ops.sum(a * v[..., None, :], axis=-1)
            w = p - (0.5 * tau * ops.sum(p * v, axis=-1))[..., None] * v
            a = a - v[..., :, None] * w[..., None, :] - w[..., :, None] * v[..., None, :]
            if q:
                qv = ops.sum(q[0] * v[..., None, :], axis=-1)
                q = [q[0] - (tau[..., None] * qv)[..., :, None] * v[..., None, :]]
            return (a, *q)
        a, *q = fori_loop(0, n - 2, step, (a, *([q] if vectors else [])))
        q = q[0] if vectors else None
    return ops.diagonal(a, 0, -2, -1), ops.diagonal(a, -1, -2, -1), q
