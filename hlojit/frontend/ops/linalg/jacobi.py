"""eigh and svd by Jacobi rotations, in parallel rounds.

A round rotates n/2 disjoint index pairs (p, q) at once (the round-robin tournament ordering: n - 1
rounds visit every pair once, a sweep); a rotation is a gather of the p and q rows (or columns), two
multiply-adds and a gather back. Sweeps repeat in a while_loop until the off-diagonal part is negligible
(or a fixed number of sweeps has run). eigh rotates the symmetric matrix from both sides (two-sided
Jacobi); svd rotates the columns of a until they are orthogonal (one-sided Jacobi, Hestenes), which
keeps the small singular values accurate (unlike the eigenvalues of a.T @ a).
"""
from __future__ import annotations

import numpy as np

from ... import dtypes, ops
from ...control import fori_loop, while_loop
from .. import _core
from . import _util
from ._util import mT

MAX_SWEEPS = {np.dtype(np.float32): 20, np.dtype(np.float64): 30}


def _schedule(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(p, q, back) of the round-robin ordering of an even n: p, q (n-1, n/2) with p < q, and back
    (n-1, n) the positions in concat(p, q) of 0..n-1."""
    players = list(range(n))
    ps, qs = [], []
    for _ in range(n - 1):
        pairs = [(players[i], players[n - 1 - i]) for i in range(n // 2)]
        ps.append([min(p) for p in pairs])
        qs.append([max(p) for p in pairs])
        players = [players[0], players[-1]] + players[1:-1]
    p, q = np.array(ps, np.int32), np.array(qs, np.int32)
    back = np.argsort(np.concatenate([p, q], axis=1), axis=1).astype(np.int32)
    return p, q, back


def _round_indices(r, schedule):
    p, q, back = (_core.as_tensor(s, "jacobi") for s in schedule)
    half, n = p.shape[1], back.shape[1]
    take = lambda table, width: ops.dynamic_slice(table, [r, 0], (1, width))[0]  # noqa: E731
    return take(p, half), take(q, half), take(back, n)


def _rotation(app, aqq, apq):
    """(c, s) of the Jacobi rotation that zeroes apq of [[app, apq], [apq, aqq]] (Golub and Van Loan 8.5.2)."""
    zero = apq == 0
    theta = (aqq - app) / (2 * ops.where(zero, 1, apq))
    t = ops.where(theta >= 0, 1, -1) / (ops.abs(theta) + ops.sqrt(theta * theta + 1))
    t = ops.where(zero, 0, t)
    c = 1 / ops.sqrt(t * t + 1)
    return c, t * c


def _rotate(x, p, q, back, c, s, axis: int):
    """x with its p and q slices along `axis` replaced by c x_p - s x_q and s x_p + c x_q."""
    xp, xq = ops.take(x, p, axis=axis), ops.take(x, q, axis=axis)
    return ops.take(ops.concatenate([c * xp - s * xq, s * xp + c * xq], axis=axis), back, axis=axis)


def _pad_even(a, axis_pair: bool):
    """a with one zero row/column added when n is odd (a decoupled index that never rotates)."""
    n = a.shape[-1]
    if n % 2 == 0:
        return a
    a = ops.concatenate([a, ops.zeros(a.shape[:-1] + (1,), a.dtype)], axis=-1)
    if axis_pair:
        a = ops.concatenate([a, ops.zeros(a.shape[:-2] + (1, n + 1), a.dtype)], axis=-2)
    return a


def _sweeps(body, state, converged, dtype):
    """Sweeps of `body` until `converged(state)` (all matrices of the stack) or MAX_SWEEPS."""
    limit = MAX_SWEEPS.get(np.dtype(dtype), 20)

    def keep_going(carry):
        sweep, state = carry
        return ops.logical_and(sweep < limit, ops.logical_not(converged(state)))
    return while_loop(keep_going, lambda carry: (carry[0] + 1, body(carry[1])), (ops.zeros((), dtypes.int32), state))[1]


def symmetric_eigen(a):
    """(w, v) of symmetric a (..., n, n): a = v diag(w) v^T, w ascending."""
    n = a.shape[-1]
    a = _pad_even(a, True)
    size = a.shape[-1]
    if size == 1 or n == 1:
        return ops.diagonal(a, 0, -2, -1)[..., :n], ops.ones(a.shape[:-2] + (1, 1), a.dtype)
    schedule = _schedule(size)
    tolerance = _util.eps(a.dtype)
    off_mask = _util.index((size, size), 0) != _util.index((size, size), 1)

    def one_round(r, carry):
        a, vt = carry
        p, q, back = _round_indices(r, schedule)
        column = _util.index((1, size), 1)
        ap, aq = ops.take(a, p, axis=-2), ops.take(a, q, axis=-2)
        entry = lambda rows, at: ops.sum(ops.where(at[:, None] == column, rows, 0), axis=-1)  # noqa: E731
        c, s = _rotation(entry(ap, p), entry(aq, q), entry(ap, q))
        c, s = c[..., :, None], s[..., :, None]
        rotated = ops.take(ops.concatenate([c * ap - s * aq, s * ap + c * aq], axis=-2), back, axis=-2)
        # J^T (J^T a)^T = J^T a J for symmetric a: both sides by row rotations (IREE 3.13's cpu fails to
        # compile the column gathers of a rotation along the last axis at n >= 64)
        return _rotate(mT(rotated), p, q, back, c, s, -2), _rotate(vt, p, q, back, c, s, -2)

    def converged(state):
        a, _ = state
        off = ops.sum(ops.where(off_mask, a * a, 0), axis=(-2, -1))
        return ops.all(off <= (tolerance * tolerance) * ops.sum(a * a, axis=(-2, -1)))
    identity = ops.broadcast_to(_util.eye(size, a.dtype), a.shape)
    a, vt = _sweeps(lambda state: fori_loop(0, size - 1, one_round, state), (a, identity), converged, a.dtype)
    w, v = ops.diagonal(a, 0, -2, -1)[..., :n], mT(vt)[..., :n, :n]
    order = ops.argsort(w, axis=-1)
    return sort_by(w, order), ops.take_along_axis(v, ops.broadcast_to(order[..., None, :], v.shape), axis=-1)


def sort_by(w, order):
    """w[..., order] as a one-hot sum: IREE 3.13's cpu cannot compile this gather next to the sort that
    made `order` (nor a second sort of w, nor top_k at n = 256: "LLVM Translation failed")."""
    n = w.shape[-1]
    picks = order[..., None, :] == _util.index((n, 1), 0)        # picks[i, j]: w[i] goes to place j
    return ops.sum(ops.where(picks, w[..., :, None], 0), axis=-2)


def column_rotations(a):
    """(sigma, u_scaled, v) of a (..., m, n), m >= n, by one-sided Jacobi: a v = u_scaled, whose columns are
    orthogonal with norms sigma (unsorted)."""
    n = a.shape[-1]
    x = mT(_pad_even(a, False))          # rows of x are the columns of a
    size = x.shape[-2]
    if size == 1 or n == 1:
        return ops.sqrt(ops.sum(x * x, axis=-1))[..., :n], a, ops.ones(a.shape[:-2] + (1, 1), a.dtype)
    schedule = _schedule(size)
    tolerance = _util.eps(a.dtype) * np.sqrt(a.shape[-2])

    def one_round(r, carry):
        x, vt, worst = carry
        p, q, back = _round_indices(r, schedule)
        xp, xq = ops.take(x, p, axis=-2), ops.take(x, q, axis=-2)
        alpha, beta, gamma = (ops.sum(u * w, axis=-1) for u, w in ((xp, xp), (xq, xq), (xp, xq)))
        scale = ops.sqrt(alpha * beta)
        negligible = ops.abs(gamma) <= tolerance * scale
        c, s = _rotation(alpha, beta, ops.where(negligible, 0, gamma))
        worst = ops.maximum(worst, ops.max(ops.where(negligible, 0, ops.abs(gamma) / scale)))
        x = _rotate(x, p, q, back, c[..., :, None], s[..., :, None], -2)
        return x, _rotate(vt, p, q, back, c[..., :, None], s[..., :, None], -2), worst

    def sweep(state):
        x, vt, _ = state
        return fori_loop(0, size - 1, one_round, (x, vt, ops.zeros((), a.dtype)))
    identity = ops.broadcast_to(_util.eye(size, a.dtype), x.shape[:-2] + (size, size))
    start = (x, identity, ops.ones((), a.dtype))
    x, vt, _ = _sweeps(sweep, start, lambda state: state[2] <= 0, a.dtype)
    sigma = ops.sqrt(ops.sum(x * x, axis=-1))[..., :n]
    return sigma, mT(x)[..., :, :n], mT(vt)[..., :n, :n]
