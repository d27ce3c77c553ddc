"""QR by Householder reflections (LAPACK geqrf's choice of reflector: v[j] = 1, R's diagonal -sign(a_jj)|x|).

One loop step per column: the reflector of column j is applied to the whole matrix as a rank-1 update
(its columns left of j are already zero below the diagonal, so they are unchanged), and Q is then formed
backwards from the stored reflectors, Q = H_0 (H_1 (... (H_{k-1} I))).
"""
from __future__ import annotations

from ... import ops
from ...control import fori_loop
from .. import _core
from . import _util
from ._util import mm, mT


def householder(a):
    """(r, v, tau) of a (..., m, n): r = H_{k-1}...H_0 a (upper triangular), reflectors v (..., m, k) with
    v[j, j] = 1 and zeros above, tau (..., 1, k); H_j = I - tau_j v_j v_j^T."""
    m, n = a.shape[-2:]
    k = min(m, n)
    row = _util.index((m, 1), 0)
    col = _util.index((1, n), 1)
    batch = a.shape[:-2]

    def step(j, carry):
        r, v_all, tau_all = carry
        x = ops.where(row >= j, _util.column(r, j), 0)
        alpha = _util.rows(x, j)
        below = ops.sum(ops.where(row > j, x * x, 0), axis=-2, keepdims=True)
        norm = ops.sqrt(alpha * alpha + below)
        beta = ops.where(alpha >= 0, -norm, norm)
        trivial = below == 0                       # nothing to eliminate: H = I (LAPACK's tau = 0)
        tau = ops.where(trivial, 0, (beta - alpha) / ops.where(trivial, 1, beta))
        scale = ops.where(trivial, 1, alpha - beta)
        v = ops.where(row == j, 1, ops.where(row > j, x / scale, 0))
        r = r - (tau * v) * mm(mT(v), r)
        column_j = ops.where(row < j, _util.column(r, j), ops.where(row == j, ops.where(trivial, alpha, beta), 0))
        r = ops.where(col == j, column_j, r)
        return r, _util.set_columns(v_all, v, j), _util.set_columns(tau_all, tau, j)
    init = (a, ops.zeros(batch + (m, k), a.dtype), ops.zeros(batch + (1, k), a.dtype))
    return fori_loop(0, k, step, init)


def form_q(v, tau, columns: int):
    """The first `columns` columns of Q = H_0 H_1 ... H_{k-1} (m x m) from the reflectors."""
    m, k = v.shape[-2:]
    q = ops.broadcast_to(_util.eye(m, v.dtype, columns), v.shape[:-2] + (m, columns))

    def step(i, q):
        j = k - 1 - i
        vj, tj = _util.column(v, j), _util.column(tau, j)
        return q - (tj * vj) * mm(mT(vj), q)
    return fori_loop(0, k, step, q)


def qr(a, mode: str = "reduced"):
    """numpy.linalg.qr of a (..., m, n), k = min(m, n): mode 'reduced' (q (..., m, k), r (..., k, n)),
    'complete' (q (..., m, m), r (..., m, n)), 'r' (r alone, (..., k, n)), 'raw' is not supported."""
    if mode not in ("reduced", "complete", "r"):
        _core.fail(ValueError, "qr", f"mode must be 'reduced', 'complete' or 'r', not {mode!r}")
    a = _util.matrix("qr", a)
    m, n = a.shape[-2:]
    k = min(m, n)
    r, v, tau = householder(a)
    r = ops.triu(r)
    if mode == "r":
        return r[..., :k, :]
    if mode == "complete":
        return form_q(v, tau, m), r
    return form_q(v, tau, k), r[..., :k, :]
