"""Eigen-decomposition of a symmetric tridiagonal matrix by Cuppen's divide and conquer, at fixed shapes.

The tridiagonal t (size N, a power of two) is split at every off-diagonal e_m into blocks plus rank-one
terms e_m (e_m + e_(m+1))(e_m + e_(m+1))^T, so the leaves are 1 x 1. Level l merges the groups of 2^l
indices pairwise: each merged group of 2^(l+1) has its two halves' eigen-decompositions Q_i D_i Q_i^T, and
its eigenproblem is D + rho z z^T with z the last row of Q_1 and the first row of Q_2 (Cuppen). Every level
works on the whole problem at once, with masks saying which indices share a group (i >> (l+1) == j >> (l+1)),
so every level has the same shapes and one fori_loop over levels compiles one body for any N:

- the state is every eigenvalue d (N), and the block-diagonal eigenvector matrix Q (N x N) of t's blocks;
- deflation (LAPACK's dlaed2): a z component below the tolerance keeps its pole and unit vector; poles
  closer than the tolerance form clusters (in each group's sorted order, found by rank counting, not by a
  sort) and a Householder reflection per cluster moves the cluster's z onto its last member;
- the secular equation 1 + rho sum_j z_j^2 / (d_j - lambda) = 0 is solved for every root at once, one masked
  N x N evaluation per iteration: the root of a two-pole rational model (dlaed4's interpolation, from the
  closer pole of the root's interval) safeguarded by bisection, until every root has converged;
- the eigenvectors come from z recomputed from the roots (Gu and Eisenstat), which keeps them orthogonal
  however close the roots, and the level ends with Q <- Q H U (two N x N matmuls).
"""
from __future__ import annotations

import numpy as np

from ... import dtypes, ops
from ...control import fori_loop, while_loop
from .._core import as_tensor
from ..indexing import dynamic_slice
from . import _util
from ._util import mm, mT
from .jacobi import sort_by
from .tridiagonal import tridiagonalize

MAX_SECULAR_STEPS = {np.dtype(np.float32): 64, np.dtype(np.float64): 128}
TOLERANCE = 8    # deflation tolerance in eps * |t| (LAPACK's dlaed2)


def _level_tables(levels: int, size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(group, split, z_row), each (levels, size) int32: at level l, index i's merged group, the row m of the
    off-diagonal that couples the group's halves, and the row of Q whose entry in column i is z_i (m for the
    first half, m + 1 for the second)."""
    i = np.arange(size)
    group = np.stack([i >> (l + 1) for l in range(levels)])
    split = np.stack([(i >> (l + 1) << (l + 1)) + (1 << l) - 1 for l in range(levels)])
    z_row = split + np.stack([(i >> l) & 1 for l in range(levels)])
    return tuple(x.astype(np.int32) for x in (group, split, z_row))


def _divide(x, y):
    """x / y where `y` is nonzero, 0 elsewhere (masked lanes must not make NaNs that a sum picks up)."""
    nonzero = y != 0
    return ops.where(nonzero, x / ops.where(nonzero, y, 1), 0)


def _ranks(pairs, before):
    """Rank of each index among the indices it pairs with (pairs[k, j]) by the order before[k, j] (j before k)."""
    return ops.sum(ops.where(pairs & before, 1, 0), axis=-1)


def _neighbour(pairs, rank, values, offset: int):
    """(exists, value): for each k, values[j] of the j paired with k whose rank is rank[k] + offset."""
    mask = pairs & (rank[..., None, :] == rank[..., :, None] + offset)
    return ops.any(mask, axis=-1), ops.sum(ops.where(mask, values[..., None, :], 0), axis=-1)


def _clusters(pairs, before, poles, z, active, tolerance):
    """(h, z, last): the reflection h (N x N, block diagonal by cluster) that moves each cluster's z onto its
    last member, the z after it, and which indices keep a z (the last members). A cluster is a run of a
    group's active poles (in sorted order) whose neighbours are at most `tolerance` apart."""
    rank = _ranks(pairs, before)
    has_previous, previous = _neighbour(pairs, rank, poles, -1)
    starts = active & (ops.logical_not(has_previous) | (poles - previous > tolerance))
    cluster = ops.sum(ops.where(pairs & (rank[..., None, :] <= rank[..., :, None]) & starts[..., None, :], 1, 0),
                      axis=-1)
    together = pairs & (cluster[..., None, :] == cluster[..., :, None])
    has_next, _ = _neighbour(together, rank, poles, 1)
    last = active & ops.logical_not(has_next)
    members = ops.sum(ops.where(together, 1, 0), axis=-1)
    norm = ops.sqrt(ops.sum(ops.where(together, z[..., None, :] ** 2, 0), axis=-1))
    last_z = ops.sum(ops.where(together & last[..., None, :], z[..., None, :], 0), axis=-1)
    sign = ops.where(last_z >= 0, 1, -1)
    reflected = members > 1
    u = ops.where(reflected, z + ops.where(last, sign * norm, 0), 0)
    uu = 2 * norm * (norm + ops.abs(last_z))
    n = z.shape[-1]
    h = _util.eye(n, z.dtype) - ops.where(together, 2 * u[..., :, None] * _divide(u, uu)[..., None, :], 0)
    z = ops.where(reflected, ops.where(last, -sign * norm, 0), z)
    return h, z, last


def _secular_roots(pairs, before, poles, weights, dtype):
    """(origin, tau, delta) with lambda_k = origin_k + tau_k the root of 1 + sum_j weights_j / (poles_j - lambda)
    above poles_k (weights > 0; `pairs` the indices of k's equation, poles at least the tolerance apart), and
    delta[k, j] = poles_j - lambda_k, computed from the origin (the closer pole) so that it is accurate."""
    eps = _util.eps(dtype)
    rank = _ranks(pairs, before)
    has_next, next_pole = _neighbour(pairs, rank, poles, 1)
    w = ops.where(pairs, weights[..., None, :], 0)
    left = pairs & (rank[..., None, :] <= rank[..., :, None])
    right = pairs & (rank[..., None, :] > rank[..., :, None])
    half_gap = ops.where(has_next, (next_pole - poles) / 2, 0)
    from_pole = poles[..., None, :] - poles[..., :, None]                # poles_j - poles_k
    at_middle = 1 + ops.sum(_divide(w, from_pole - half_gap[..., None]), axis=-1)
    from_next = has_next & (at_middle < 0)
    origin = ops.where(from_next, next_pole, poles)
    delta = poles[..., None, :] - origin[..., :, None]
    lower_pole = poles - origin
    upper_pole = ops.where(has_next, next_pole - origin, 0)
    lo = ops.where(from_next, -half_gap, 0)
    hi = ops.where(has_next, ops.where(from_next, 0, half_gap), ops.sum(w, axis=-1))
    zero = ops.zeros(poles.shape, dtype)
    done = ops.logical_not(ops.any(pairs, axis=-1))

    def step(state):
        count, tau, lo, hi, done = state
        gaps = delta - tau[..., None]
        terms = _divide(w, gaps)
        slopes = _divide(terms, gaps)
        psi, phi = (ops.sum(ops.where(side, terms, 0), axis=-1) for side in (left, right))
        dpsi, dphi = (ops.sum(ops.where(side, slopes, 0), axis=-1) for side in (left, right))
        f = 1 + psi + phi
        bound = eps * (8 * (1 + phi - psi) + ops.abs(tau) * (dpsi + dphi))
        narrow = hi - lo <= 2 * eps * ops.maximum(ops.abs(lo), ops.abs(hi))
        done = done | (ops.abs(f) <= bound) | narrow
        to_lower, to_upper = lower_pole - tau, upper_pole - tau
        b, e = dpsi * to_lower * to_lower, dphi * to_upper * to_upper
        a = 1 + psi - dpsi * to_lower + phi - dphi * to_upper
        c0, c1 = to_lower * to_upper * f, a * (to_lower + to_upper) + b + e
        root = ops.sqrt(ops.maximum(c1 * c1 - 4 * a * c0, 0))
        between = ops.where(c1 > 0, _divide(2 * c0, c1 + root), _divide(c1 - root, 2 * a))
        above = _divide(to_lower * f, a)
        eta = ops.where(has_next, between, above)
        lo = ops.where(f < 0, ops.maximum(lo, tau), lo)
        hi = ops.where(f > 0, ops.minimum(hi, tau), hi)
        guess = tau + eta
        inside = (guess > lo) & (guess < hi) & ops.isfinite(guess)
        guess = ops.where(inside, guess, (lo + hi) / 2)
        return count + 1, ops.where(done, tau, guess), lo, hi, done

    limit = MAX_SECULAR_STEPS.get(np.dtype(dtype), 64)

    def keep_going(state):
        return (state[0] < limit) & ops.logical_not(ops.all(state[4]))
    start = (ops.zeros((), dtypes.int32), (lo + hi) / 2, lo, hi, done)
    _, tau, _, _, _ = while_loop(keep_going, step, start)
    return origin, tau, delta - tau[..., None]


def _merge_vectors(pairs, poles, z, gaps, rho, active):
    """U (N x N): column k the eigenvector of the root lambda_k of D + rho z z^T (gaps[k, j] = poles_j -
    lambda_k), from z recomputed from the roots (Gu and Eisenstat): z_j^2 = (lambda_j - d_j) / rho
    prod_(i != j) (lambda_i - d_j) / (d_i - d_j); unit vectors for the deflated indices."""
    n = poles.shape[-1]
    off = pairs & ops.logical_not(_util.eye(n, dtypes.bool_))
    pole_gaps = poles[..., :, None] - poles[..., None, :]               # d_i - d_j
    ratios = ops.where(off, _divide(-gaps, pole_gaps), 1)
    own = -ops.diagonal(gaps, 0, -2, -1)
    z_hat = ops.sqrt(ops.maximum(_divide(own, rho) * ops.prod(ratios, axis=-2), 0))
    z_hat = ops.where(z >= 0, z_hat, -z_hat)
    rows = ops.where(pairs, _divide(z_hat[..., None, :], gaps), 0)    # rows[k]: the vector of root k
    rows = _divide(rows, ops.sqrt(ops.sum(rows * rows, axis=-1))[..., None])
    return ops.where(active[..., None, :], mT(rows), _util.eye(n, poles.dtype))


def tridiagonal_eigen(d, e, vectors: bool = True):
    """(w (..., N), Q (..., N, N)): t = Q diag(w) Q^T for the symmetric tridiagonal t with diagonal d (..., N)
    and off-diagonal e (..., N) (e[i] couples i and i + 1; e[N - 1] = 0), N a power of two; w unsorted."""
    size = d.shape[-1]
    levels = size.bit_length() - 1
    dtype = d.dtype
    norm = ops.max(ops.abs(d), axis=-1) + 2 * ops.max(ops.abs(e), axis=-1)
    tolerance = (TOLERANCE * _util.eps(dtype) * norm)[..., None]
    before_e = ops.concatenate([ops.zeros(e.shape[:-1] + (1,), dtype), e[..., :-1]], axis=-1)
    d = d - e - before_e
    q = ops.broadcast_to(_util.eye(size, dtype), d.shape + (size,))
    if levels == 0:
        return d, q
    tables = [as_tensor(t, "eigh") for t in _level_tables(levels, size)]
    index = _util.index((size,), 0)
    order = _util.index((size, size), 1) < _util.index((size, size), 0)  # j < k, ties' order

    def level(l, carry):
        d, q = carry
        group, split, z_row = (dynamic_slice(t, [l, 0], (1, size))[0] for t in tables)
        z = ops.sum(ops.where(index[:, None] == z_row[None, :], q, 0), axis=-2) * float(np.sqrt(0.5))
        rho = 2 * ops.sum(ops.where(index[:, None] == split[None, :], e[..., :, None], 0), axis=-2)
        sign = ops.where(rho < 0, -1, 1)
        poles, rho = sign * d, ops.abs(rho)
        active = rho * ops.abs(z) > tolerance
        same = group[:, None] == group[None, :]
        before = (poles[..., None, :] < poles[..., :, None]) | ((poles[..., None, :] == poles[..., :, None]) & order)
        pairs = same & active[..., :, None] & active[..., None, :]
        h, z, active = _clusters(pairs, before, poles, z, active, tolerance)
        pairs = same & active[..., :, None] & active[..., None, :]
        origin, tau, gaps = _secular_roots(pairs, before, poles, rho * z * z, dtype)
        u = _merge_vectors(pairs, poles, z, gaps, rho, active)
        d = ops.where(active, sign * (origin + tau), d)
        return d, mm(q, mm(h, u))
    return fori_loop(0, levels, level, (d, q))


def symmetric_eigen(a, vectors: bool = True):
    """(w ascending, v or None) of symmetric a (..., n, n) = v diag(w) v^T: Householder tridiagonalization,
    then divide and conquer on the tridiagonal padded to a power of two with poles above every eigenvalue
    (decoupled, so they deflate at once and sort last). a is scaled to entries of at most 1 first, so that
    neither squares nor the tolerances under- or overflow."""
    n = a.shape[-1]
    if n == 1:
        return ops.diagonal(a, 0, -2, -1), ops.ones(a.shape, a.dtype) if vectors else None
    scale = ops.max(ops.abs(a), axis=(-2, -1))
    scale = ops.where(scale > 0, scale, 1)
    d, e, q = tridiagonalize(a / scale[..., None, None], vectors)
    size = 1 << max(n - 1, 1).bit_length()
    pad = 2 * (ops.max(ops.abs(d), axis=-1) + 2 * ops.max(ops.abs(e), axis=-1)) + 1
    d = ops.concatenate([d, ops.broadcast_to(pad[..., None], d.shape[:-1] + (size - n,))], axis=-1)
    e = ops.concatenate([e, ops.zeros(e.shape[:-1] + (size - n + 1,), e.dtype)], axis=-1)
    w, qt = tridiagonal_eigen(d, e)
    order = ops.argsort(w, axis=-1)[..., :n]
    w = sort_by(w, order) * scale[..., None]
    if not vectors:
        return w, None
    v = mm(q, qt[..., :n, :])
    return w, ops.take_along_axis(v, ops.broadcast_to(order[..., None, :], v.shape[:-1] + (n,)), axis=-1)
