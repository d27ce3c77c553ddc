"""eigh and svd by Jacobi rotations, in parallel rounds.

A round rotates n/2 disjoint index pairs at once; the round-robin tournament (the circle method) makes
n - 1 rounds visit every pair once, a sweep. The matrix is kept in the round's *pair layout*: pair k is
(row k, row k + n/2), so a round is two static halves, two multiply-adds and a concatenation, and the move
to the next round is one fixed row permutation (the same for every round; a sweep brings the layout back).
Sweeps repeat in a while_loop until the off-diagonal part is negligible (or MAX_SWEEPS). eigh rotates
the symmetric matrix from both sides (two-sided Jacobi); svd rotates the columns of a until they are
orthogonal (one-sided Jacobi, Hestenes), which keeps the small singular values accurate (unlike the
eigenvalues of a.T @ a).

Complex svd rotates the same way: for columns p, q with gamma = a_p^H a_q = |gamma| phi, column q times
conj(phi) makes gamma real, and the real rotation of [[|a_p|^2, |gamma|], [|gamma|, |a_q|^2]] finishes the
step (a unitary plane rotation; the phase rides in the rotation's coefficients, so a round is still one
elementwise pass).
"""
from __future__ import annotations

import numpy as np

from ... import dtypes, ops
from ...control import fori_loop, while_loop
from . import _util
from .._core import as_tensor
from ..complex_math import abs_squared
from ..shape import slice_axis
from ._util import conj, mT

MAX_SWEEPS = {np.dtype(np.float32): 20, np.dtype(np.float64): 30}
STALLED = 0.5    # eigh: a sweep that leaves more than this fraction of off^2 has reached rounding's floor


def _layouts(n: int) -> tuple[np.ndarray, np.ndarray]:
    """(first, move) for even n: `first` orders 0..n-1 into round 0's pair layout, and x[move] takes
    a round's layout to the next one (the circle method: player 0 stays, the others rotate)."""
    def layout(players):
        return players[:n // 2] + players[n // 2:][::-1]
    players = list(range(n))
    first = layout(players)
    second = layout([players[0], players[-1]] + players[1:-1])
    position = {player: i for i, player in enumerate(first)}
    return np.array(first, np.int32), np.array([position[p] for p in second], np.int32)


def _rotation(app, aqq, apq):
    """(c, s) of the Jacobi rotation that zeroes apq of [[app, apq], [apq, aqq]] (Golub and Van Loan 8.5.2)."""
    zero = apq == 0
    theta = (aqq - app) / (2 * ops.where(zero, 1, apq))
    t = ops.where(theta >= 0, 1, -1) / (ops.abs(theta) + ops.sqrt(theta * theta + 1))
    t = ops.where(zero, 0, t)
    c = 1 / ops.sqrt(t * t + 1)
    return c, t * c


def _pair_coefficients(c, s, phase=None):
    """(C, S), each (..., 2, h): row a of pair k becomes C[a, k] x_(a, k) + S[a, k] x_(1 - a, k), the rotation
    [[c, -s], [s, c]] of the pair's two rows (k, k + n/2); with a (complex) `phase`, of rows k and
    conj(phase) x_(k+n/2)."""
    if phase is None:
        return ops.stack([c, c], axis=-2), ops.stack([-s, s], axis=-2)
    turn = conj(phase)
    c, s = c.astype(phase.dtype), s.astype(phase.dtype)
    return ops.stack([c, c * turn], axis=-2), ops.stack([-s * turn, s], axis=-2)


def _rotate_rows(x, c, s, phase=None):
    """x (..., n, m) with rows k and k + n/2 replaced by c x_k - s x_(k+n/2) and s x_k + c x_(k+n/2) (x_(k+n/2)
    taken times conj(phase) when a phase is given). As one elementwise expression over x and x with its
    halves swapped (a reverse of the (2, n/2) view): IREE fuses it into one pass, where a concatenation of
    the two new halves took a dispatch per half."""
    *batch, n, m = x.shape
    big_c, big_s = _pair_coefficients(c, s, phase)
    pairs = ops.reshape(x, (*batch, 2, n // 2, m))
    return ops.reshape(big_c[..., None] * pairs + big_s[..., None] * ops.flip(pairs, -3), x.shape)


def _rotate_both(x, c, s):
    """J^T x J for x (..., n, n) and the rotations J of the pairs (k, k + n/2): rows and columns in one
    elementwise expression over the four reverses of x's (2, n/2, 2, n/2) view."""
    *batch, n, _ = x.shape
    h = n // 2
    big_c, big_s = _pair_coefficients(c, s)
    rows_c, rows_s = big_c[..., :, :, None, None], big_s[..., :, :, None, None]
    cols_c, cols_s = big_c[..., None, None, :, :], big_s[..., None, None, :, :]
    blocks = ops.reshape(x, (*batch, 2, h, 2, h))
    out = (rows_c * cols_c * blocks + rows_c * cols_s * ops.flip(blocks, -2) +
           rows_s * cols_c * ops.flip(blocks, -4) + rows_s * cols_s * ops.flip(blocks, (-4, -2)))
    return ops.reshape(out, x.shape)


def _runs(order: np.ndarray) -> list[tuple[int, int]]:
    """order (a permutation) as maximal runs [start, stop) of consecutive indices, in order."""
    runs = []
    for i in order.tolist():
        if runs and runs[-1][1] == i:
            runs[-1][1] += 1
        else:
            runs.append([i, i + 1])
    return [tuple(r) for r in runs]


def _permute(x, runs, axis: int):
    """x[..., order, ...] along `axis`, for `order` given as its runs: a concatenation of static slices (a
    gather by a constant permutation costs IREE an index load per element, and does not fuse)."""
    axis = x.ndim + axis if axis < 0 else axis
    return ops.concatenate([slice_axis(x, axis, start, stop) for start, stop in runs], axis=axis)


def _pad_even(a, both: bool):
    """a with one zero column (and row, when `both`) added when n is odd: a decoupled index that never
    rotates, which round 0's layout puts at position n/2 (where every sweep brings it back)."""
    n = a.shape[-1]
    if n % 2 == 0:
        return a
    a = ops.concatenate([a, ops.zeros(a.shape[:-1] + (1,), a.dtype)], axis=-1)
    if both:
        a = ops.concatenate([a, ops.zeros(a.shape[:-2] + (1, n + 1), a.dtype)], axis=-2)
    return a


def _drop_padding(x, n: int, axis: int):
    """x without the padded index (position size/2 of the layout) along `axis`, when n is odd."""
    if n % 2 == 0:
        return x
    half = (n + 1) // 2
    axis = axis % x.ndim
    before = ops.getitem(x, (slice(None),) * axis + (slice(0, half),))
    after = ops.getitem(x, (slice(None),) * axis + (slice(half + 1, None),))
    return ops.concatenate([before, after], axis=axis)


def _sweeps(body, state, converged, dtype):
    """(sweeps run, state) after sweeps of `body` until `converged(state)` (all matrices of the stack) or
    MAX_SWEEPS."""
    limit = MAX_SWEEPS.get(np.dtype(dtype), 20)

    def keep_going(carry):
        sweep, state = carry
        return ops.logical_and(sweep < limit, ops.logical_not(converged(state)))
    return while_loop(keep_going, lambda carry: (carry[0] + 1, body(carry[1])), (ops.zeros((), dtypes.int32), state))


def symmetric_eigen(a, vectors: bool = True):
    """(w, v) of symmetric a (..., n, n): a = v diag(w) v^T, w ascending; v is None unless `vectors` (then no
    rotation of v is computed: a third of a round's work)."""
    return eigen_sweeps(a, vectors)[:2]


def eigen_sweeps(a, vectors: bool = True):
    """(w, v, sweeps): symmetric_eigen's result and how many sweeps it took (a test checks they stop)."""
    n = a.shape[-1]
    if n == 1:
        v = ops.ones(a.shape, a.dtype) if vectors else None
        return ops.diagonal(a, 0, -2, -1), v, ops.zeros((), dtypes.int32)
    a = _pad_even(a, True)
    size = a.shape[-1]
    half = size // 2
    first, move = _layouts(size)
    first, move = as_tensor(first, "eigh"), _runs(move)     # first: once, reversed half and all (a gather)
    b = ops.take(ops.take(a, first, axis=-2), first, axis=-1)       # a in round 0's pair layout
    vt = [ops.broadcast_to(ops.take(_util.eye(size, a.dtype), first, axis=-2), a.shape)] if vectors else []
    tolerance = _util.eps(a.dtype)
    off_mask = _util.index((size, size), 0) != _util.index((size, size), 1)

    def one_round(r, carry):
        b, *vt = carry
        d = ops.diagonal(b, 0, -2, -1)
        apq = ops.diagonal(b[..., :half, half:], 0, -2, -1)               # b[k, k + n/2]
        c, s = _rotation(d[..., :half], d[..., half:], apq)
        b = _permute(_permute(_rotate_both(b, c, s), move, -2), move, -1)
        return (b, *(_permute(_rotate_rows(v, c, s), move, -2) for v in vt))

    def off_diagonal(b):
        return ops.sum(ops.where(off_mask, b * b, 0), axis=(-2, -1))

    def sweep(state):
        matrices, _, off = state
        matrices = fori_loop(0, size - 1, one_round, matrices)
        return matrices, off, off_diagonal(matrices[0])

    total = ops.sum(b * b, axis=(-2, -1))      # rotations keep it

    def converged(state):
        # Done when the off-diagonal part is negligible, or once a sweep no longer shrinks it: rounding keeps
        # it near sqrt(n) eps |a| (at n = 256 in f32 the eps |a| test never passed, and every call ran all
        # MAX_SWEEPS: 20 where 8 reach the floor). A sweep before that floor divides off^2 by e or more.
        _, before, off = state
        return ops.all((off <= (tolerance * tolerance) * total) | (off > STALLED * before))
    start = ((b, *vt), ops.full(total.shape, np.inf, a.dtype), off_diagonal(b))
    sweeps, ((b, *vt), _, _) = _sweeps(sweep, start, converged, a.dtype)
    w = _drop_padding(ops.diagonal(b, 0, -2, -1), n, -1)
    order = ops.argsort(w, axis=-1)
    if not vectors:
        return sort_by(w, order), None, sweeps
    v = _drop_padding(mT(vt[0])[..., :n, :], n, -1)
    v = ops.take_along_axis(v, ops.broadcast_to(order[..., None, :], v.shape), axis=-1)
    return sort_by(w, order), v, sweeps


def sort_by(w, order):
    """w[..., order] as a one-hot sum: IREE 3.13's cuda cannot compile this gather next to the sort that made
    `order` inside eigh ("LLVM Translation failed", 2026-12-07; its cpu failed too until then)."""
    n = w.shape[-1]
    picks = order[..., None, :] == _util.index((n, 1), 0)        # picks[i, j]: w[i] goes to place j
    return ops.sum(ops.where(picks, w[..., :, None], 0), axis=-2)


def column_rotations(a):
    """(sigma, u_scaled, v) of a (..., m, n), m >= n, by one-sided Jacobi: a v = u_scaled, whose columns are
    orthogonal with norms sigma (unsorted, real); v unitary for a complex a."""
    n = a.shape[-1]
    complex_ = dtypes.is_complex(a.dtype)
    real = dtypes.real_dtype(a.dtype)
    if n == 1:
        return ops.sqrt(ops.sum(abs_squared(a), axis=-2)), a, ops.ones(a.shape[:-2] + (1, 1), a.dtype)
    x = mT(_pad_even(a, False))          # rows of x are the columns of a
    size = x.shape[-2]
    first, move = _layouts(size)
    first, move = as_tensor(first, "svd"), _runs(move)
    x = ops.take(x, first, axis=-2)
    vt = ops.broadcast_to(ops.take(_util.eye(size, a.dtype), first, axis=-2), x.shape[:-2] + (size, size))
    tolerance = _util.eps(a.dtype) * np.sqrt(a.shape[-2])
    half = size // 2

    def one_round(r, carry):
        x, vt, worst = carry
        top, bottom = x[..., :half, :], x[..., half:, :]
        if complex_:
            alpha, beta = ops.sum(abs_squared(top), axis=-1), ops.sum(abs_squared(bottom), axis=-1)
            inner = ops.sum(conj(top) * bottom, axis=-1)
            gamma = ops.abs(inner)              # the rotation's, once row k + n/2 is turned by conj(phase)
            phase = inner / ops.where(gamma == 0, 1, gamma).astype(a.dtype)
        else:
            alpha, beta, gamma = (ops.sum(u * w, axis=-1) for u, w in ((top, top), (bottom, bottom), (top, bottom)))
            phase = None
        scale = ops.sqrt(alpha * beta)
        negligible = ops.abs(gamma) <= tolerance * scale
        c, s = _rotation(alpha, beta, ops.where(negligible, 0, gamma))
        if phase is not None:
            phase = ops.where(negligible, 1, phase)
        worst = ops.maximum(worst, ops.max(ops.where(negligible, 0, ops.abs(gamma) / scale)))
        x = _permute(_rotate_rows(x, c, s, phase), move, -2)
        return x, _permute(_rotate_rows(vt, c, s, phase), move, -2), worst

    def sweep(state):
        x, vt, _ = state
        return fori_loop(0, size - 1, one_round, (x, vt, ops.zeros((), real)))
    _, (x, vt, _) = _sweeps(sweep, (x, vt, ops.ones((), real)), lambda state: state[2] <= 0, real)
    x, vt = _drop_padding(x, n, -2), _drop_padding(vt, n, -2)
    sigma = ops.sqrt(ops.sum(abs_squared(x), axis=-1))
    return sigma, mT(x), mT(vt)[..., :n, :]
