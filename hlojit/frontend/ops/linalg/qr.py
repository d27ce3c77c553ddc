"""QR by Householder reflections (LAPACK geqrf's reflectors: v[j] = 1, R's diagonal -sign(a_jj)|x|), blocked
as LAPACK's geqrf is, the panel loop unrolled at trace time: a loop reflects the columns of one panel (BLOCK
columns, rank-1 updates of the full-height panel alone), the panel's reflectors are gathered into the
compact WY form H_0 ... H_{b-1} = I - V T V^T, and
the rest of the matrix takes that product by three matmuls. Q is formed the same way, block by block
from the last: Q = (I - V_0 T_0 V_0^T) ((I - V_1 T_1 V_1^T) ... I).

Complex matrices take LAPACK zgeqrf's reflectors: beta = -sign(Re alpha) |x| is real (so is R's diagonal),
H = I - tau v v^H is not Hermitian, R = H_{k-1}^H ... H_0^H a, and every transpose above is a conjugate
transpose (conj is the identity on real dtypes: the real programs are as they were).
"""
from __future__ import annotations

from ... import dtypes, ops
from ...composites import composite
from .. import _core
from . import _util
from ._util import conj, mH, mm, mT


def _reflect_columns(p, start: int):
    """Householder steps on the full-height panel p (..., m, b) whose column j holds the matrix's column
    start + j: returns (r panel, v (..., m, b), tau (..., 1, b)). The row being reflected is a loop carry,
    not a constant, so that every panel's loop is the same code (IREE compiles it once)."""
    m, b = p.shape[-2:]
    row = _util.index((m, 1), 0)
    col = _util.index((1, b), 1)
    complex_ = dtypes.is_complex(p.dtype)

    def step(j, carry):
        r, v_all, tau_all, c = carry
        x = ops.where(row >= c, _util.column(r, j), 0)
        alpha = _util.rows(x, c)
        below = ops.sum(ops.where(row > c, x * conj(x), 0), axis=-2, keepdims=True)
        norm = ops.sqrt(alpha * conj(alpha) + below)
        beta = ops.where((ops.real(alpha) if complex_ else alpha) >= 0, -norm, norm)
        trivial = below == 0                       # nothing to eliminate: H = I (LAPACK's tau = 0) ...
        if complex_:                               # ... unless alpha is to be made real
            trivial = ops.logical_and(trivial, ops.imag(alpha) == 0)
        tau = ops.where(trivial, 0, (beta - alpha) / ops.where(trivial, 1, beta))
        v = ops.where(row == c, 1, ops.where(row > c, x / ops.where(trivial, 1, alpha - beta), 0))
        r = r - (conj(tau) * v) * mm(mH(v), r)
        column_j = ops.where(row < c, _util.column(r, j), ops.where(row == c, ops.where(trivial, alpha, beta), 0))
        r = ops.where(col == j, column_j, r)
        return (r, ops.where(col == j, v, v_all), ops.where(col == j, tau, tau_all), c + 1)
    init = (p, ops.zeros(p.shape, p.dtype), ops.zeros(p.shape[:-2] + (1, b), p.dtype),
            _core.as_tensor(start, "qr").astype(dtypes.int32))
    return _util.column_loop(b, step, init)[:3]


def _wy(v, tau):
    """T (..., b, b), upper triangular, with H_0 H_1 ... H_{b-1} = I - v T v^H (LAPACK larft's recurrence)."""
    b = v.shape[-1]
    gram = mm(mH(v), v)
    row, col = _util.index((b, 1), 0), _util.index((1, b), 1)

    def step(j, t):
        tj = _util.column(tau, j)
        new = ops.where(row < j, -tj * mm(t, _util.column(gram, j)), ops.where(row == j, tj, 0))
        return ops.where(col == j, new, t)
    return _util.column_loop(b, step, ops.zeros(v.shape[:-2] + (b, b), v.dtype))


def _padded(a, size: int):
    m, n = a.shape[-2:]
    if n < size:
        a = ops.concatenate([a, ops.zeros(a.shape[:-1] + (size - n,), a.dtype)], axis=-1)
    return _util.pad_rows(a, max(m, size))


def _apply_block(v, t, x):
    """(I - v t v^H) x, by three matmuls."""
    return x - mm(v, mm(t, mm(mH(v), x)))


def householder(a):
    """(r, v, tau) of a (..., m, n), k = min(m, n): r = H_{k-1}...H_0 a (upper triangular), reflectors v
    (..., m, k) with v[j, j] = 1 and zeros above, tau (..., 1, k); H_j = I - tau_j v_j v_j^T. A real a's is the
    composite hlojit.householder (a target may run a kernel of its own: pipeline/kernels.py)."""
    return _householder(a) if dtypes.is_complex(a.dtype) else _real_householder(a)


def _householder(a):
    """householder's StableHLO: the panel loop is unrolled at trace time; each panel's product updates the
    shrinking block right of and below it."""
    m, n = a.shape[-2:]
    k = min(m, n)
    block, size = _util.blocks_of(k)
    r = _padded(a, size) if size > block else a
    vs, taus = [], []
    for start in range(0, size, block):
        end = start + block
        panel, v, tau = _reflect_columns(r[..., :, start:end] if size > block else r[..., :, :k], start)
        vs.append(v)
        taus.append(tau)
        if r.shape[-1] > end:   # the columns right of the panel take its product
            rest = _apply_block(v[..., start:, :], mH(_wy(v, tau)), r[..., start:, end:])
            r = ops.concatenate([r[..., :, :start], panel,
                                 ops.concatenate([r[..., :start, end:], rest], axis=-2)], axis=-1)
        else:
            r = ops.concatenate([r[..., :, :start], panel], axis=-1)
    v = vs[0] if len(vs) == 1 else ops.concatenate(vs, axis=-1)
    tau = taus[0] if len(taus) == 1 else ops.concatenate(taus, axis=-1)
    return r[..., :m, :n], v[..., :m, :k], tau[..., :, :k]


def form_q(v, tau, columns: int):
    """The first `columns` columns of Q = H_0 H_1 ... H_{k-1} (m x m) from the reflectors; for real ones the
    composite hlojit.form_q (a target may run a kernel of its own)."""
    return _form_q(v, tau, columns=columns) if dtypes.is_complex(v.dtype) else _real_form_q(v, tau, columns=columns)


def _form_q(v, tau, *, columns: int):
    """form_q's StableHLO, a block at a time from the last (unrolled at trace time): block j's reflectors are
    zero above row start_j and leave columns before start_j alone, so each changes only q[start:, start:]."""
    m, k = v.shape[-2:]
    q = ops.broadcast_to(_util.eye(m, v.dtype, columns), v.shape[:-2] + (m, columns))
    block, size = _util.blocks_of(k)
    if size == block:
        return _apply_block(v, _wy(v, tau), q)
    if size > k:
        v = ops.concatenate([v, ops.zeros(v.shape[:-1] + (size - k,), v.dtype)], axis=-1)
        tau = ops.concatenate([tau, ops.zeros(tau.shape[:-1] + (size - k,), tau.dtype)], axis=-1)
    for start in reversed(range(0, size, block)):
        vb, tb = v[..., :, start:start + block], tau[..., :, start:start + block]
        if start >= min(m, columns):
            continue   # padding reflectors (tau 0) past the matrix
        corner = _apply_block(vb[..., start:, :], _wy(vb, tb), q[..., start:, start:])
        q = ops.concatenate([q[..., :start, :], ops.concatenate([q[..., start:, :start], corner], axis=-1)], axis=-2)
    return q


_real_householder = composite("hlojit.householder")(_householder)
_real_form_q = composite("hlojit.form_q")(_form_q)


def unblocked_qr(u, columns: int):
    """(q, r): the first `columns` columns of Q, and R, of u (..., m, k), m >= k, by Householder reflections
    in ONE loop over all k columns (no unrolled blocks; one compact-WY product at the end): what svd's u needs
    when some of its columns are zero. It compiles once whatever k (256 columns, at load ~6: 11 s of compile
    against the blocked QR's 19 s, 28 dispatches against 73) and runs 51 ms against 29, next to ~800 ms of
    Jacobi sweeps."""
    m = u.shape[-2]
    if m == 1:   # one row: nothing to reflect (LAPACK's tau = 0). The loop's one step would overwrite its whole v
        # and tau, and IREE 3.13 failed on such loops ("circular dependency: input operation uses partition
        # output"; pinv and lstsq of a 1 x 1 real matrix, whose svd completes u by this QR)
        return ops.ones(u.shape[:-2] + (1, columns), u.dtype), u
    r, v, tau = _reflect_columns(u, 0)
    q = ops.broadcast_to(_util.eye(m, u.dtype, columns), u.shape[:-2] + (m, columns))
    return _apply_block(v, _wy(v, tau), q), r


def qr(a, mode: str = "reduced"):
    """numpy.linalg.qr of a real or complex a (..., m, n), k = min(m, n): mode 'reduced' (q (..., m, k), r (..., k, n)),
    'complete' (q (..., m, m), r (..., m, n)), 'r' (r alone, (..., k, n)), 'raw' is not supported."""
    if mode not in ("reduced", "complete", "r"):
        _core.fail(ValueError, "qr", f"mode must be 'reduced', 'complete' or 'r', not {mode!r}")
    a = _util.matrix("qr", a, complex_ok=True)
    m, n = a.shape[-2:]
    k = min(m, n)
    r, v, tau = householder(a)
    r = ops.triu(r)
    if mode == "r":
        return r[..., :k, :]
    if mode == "complete":
        return form_q(v, tau, m), r
    return form_q(v, tau, k), r[..., :k, :]
