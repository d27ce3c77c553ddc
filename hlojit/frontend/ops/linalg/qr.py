"""QR by Householder reflections (LAPACK geqrf's reflectors: v[j] = 1, R's diagonal -sign(a_jj)|x|), blocked
as LAPACK's geqrf is: a loop reflects the columns of one panel (BLOCK columns, rank-1 updates of the panel
alone), the panel's reflectors are gathered into the compact WY form H_0 ... H_{b-1} = I - V T V^T, and
the rest of the matrix takes that product by three matmuls. Q is formed the same way, block by block
from the last: Q = (I - V_0 T_0 V_0^T) ((I - V_1 T_1 V_1^T) ... I).
"""
from __future__ import annotations

from ... import ops
from ...control import fori_loop
from .. import _core
from . import _util
from ._util import mm, mT


def _reflect_columns(p, start):
    """Householder steps on the panel p (..., m, b) whose column j holds the matrix's column start + j:
    returns (r panel, v (..., m, b), tau (..., 1, b))."""
    m, b = p.shape[-2:]
    row = _util.index((m, 1), 0)
    col = _util.index((1, b), 1)

    def step(j, carry):
        r, v_all, tau_all = carry
        c = start + j
        x = ops.where(row >= c, _util.column(r, j), 0)
        alpha = _util.rows(x, c)
        below = ops.sum(ops.where(row > c, x * x, 0), axis=-2, keepdims=True)
        norm = ops.sqrt(alpha * alpha + below)
        beta = ops.where(alpha >= 0, -norm, norm)
        trivial = below == 0                       # nothing to eliminate: H = I (LAPACK's tau = 0)
        tau = ops.where(trivial, 0, (beta - alpha) / ops.where(trivial, 1, beta))
        v = ops.where(row == c, 1, ops.where(row > c, x / ops.where(trivial, 1, alpha - beta), 0))
        r = r - (tau * v) * mm(mT(v), r)
        column_j = ops.where(row < c, _util.column(r, j), ops.where(row == c, ops.where(trivial, alpha, beta), 0))
        r = ops.where(col == j, column_j, r)
        return r, _util.set_columns(v_all, v, j), _util.set_columns(tau_all, tau, j)
    init = (p, ops.zeros(p.shape, p.dtype), ops.zeros(p.shape[:-2] + (1, b), p.dtype))
    return fori_loop(0, b, step, init)


def _wy(v, tau):
    """T (..., b, b), upper triangular, with H_0 H_1 ... H_{b-1} = I - v T v^T (LAPACK larft's recurrence)."""
    b = v.shape[-1]
    gram = mm(mT(v), v)
    row, col = _util.index((b, 1), 0), _util.index((1, b), 1)

    def step(j, t):
        tj = _util.column(tau, j)
        new = ops.where(row < j, -tj * mm(t, _util.column(gram, j)), ops.where(row == j, tj, 0))
        return ops.where(col == j, new, t)
    return fori_loop(0, b, step, ops.zeros(v.shape[:-2] + (b, b), v.dtype))


def _padded(a, size: int):
    m, n = a.shape[-2:]
    if n < size:
        a = ops.concatenate([a, ops.zeros(a.shape[:-1] + (size - n,), a.dtype)], axis=-1)
    return _util.pad_rows(a, max(m, size))


def householder(a):
    """(r, v, tau) of a (..., m, n), k = min(m, n): r = H_{k-1}...H_0 a (upper triangular), reflectors v
    (..., m, k) with v[j, j] = 1 and zeros above, tau (..., 1, k); H_j = I - tau_j v_j v_j^T."""
    m, n = a.shape[-2:]
    k = min(m, n)
    block, size = _util.blocks_of(k)
    if size == block:
        r, v, tau = _reflect_columns(a[..., :, :k], 0)
        if n > k:   # the columns right of the reflectors' take their product
            rest = a[..., :, k:]
            rest = rest - mm(v, mm(mT(_wy(v, tau)), mm(mT(v), rest)))
            r = ops.concatenate([r, rest], axis=-1)
        return r, v, tau
    r = _padded(a, size)
    rows = r.shape[-2]

    def panel_step(p, carry):
        r, v_all, tau_all = carry
        start = p * block
        panel, v, tau = _reflect_columns(_util.column(r, start, block), start)
        r = r - mm(v, mm(mT(_wy(v, tau)), mm(mT(v), r)))
        r = _util.set_columns(r, panel, start)
        return r, _util.set_columns(v_all, v, start), _util.set_columns(tau_all, tau, start)
    init = (r, ops.zeros(r.shape[:-2] + (rows, size), a.dtype), ops.zeros(r.shape[:-2] + (1, size), a.dtype))
    r, v, tau = fori_loop(0, size // block, panel_step, init)
    return r[..., :m, :n], v[..., :m, :k], tau[..., :, :k]


def form_q(v, tau, columns: int):
    """The first `columns` columns of Q = H_0 H_1 ... H_{k-1} (m x m) from the reflectors, a block at a time."""
    m, k = v.shape[-2:]
    q = ops.broadcast_to(_util.eye(m, v.dtype, columns), v.shape[:-2] + (m, columns))
    block, size = _util.blocks_of(k)
    if size == block:
        return q - mm(v, mm(_wy(v, tau), mm(mT(v), q)))
    v = ops.concatenate([v, ops.zeros(v.shape[:-1] + (size - k,), v.dtype)], axis=-1) if size > k else v
    tau = ops.concatenate([tau, ops.zeros(tau.shape[:-1] + (size - k,), tau.dtype)], axis=-1) if size > k else tau

    def step(i, q):
        start = (size // block - 1 - i) * block
        vb, tb = _util.column(v, start, block), _util.column(tau, start, block)
        return q - mm(vb, mm(_wy(vb, tb), mm(mT(vb), q)))
    return fori_loop(0, size // block, step, q)


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
