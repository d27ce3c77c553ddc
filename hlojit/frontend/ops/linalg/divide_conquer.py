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
from .tridiagonal import apply_reflectors, tridiagonalize

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


def _stack(values, axis_size_dims: int = 1):
    """values (each broadcastable to (..., n) or, with axis_size_dims=2, (..., n, n)) stacked on a new axis
    before those, by a chain of selects over an iota: elementwise, so IREE fuses it with what computes the
    values (a concatenation would be a dispatch of its own, and several results several dispatches)."""
    kind = _util.index((len(values),) + (1,) * axis_size_dims, 0)
    stacked = 0
    for t in reversed(range(len(values))):
        value = values[t]
        stacked = ops.where(kind == t, value[(..., None) + (slice(None),) * axis_size_dims], stacked)
    return stacked


def _sums(*masked):
    """[sum over j of where(mask[k, j], value[k, j], 0)] for each (mask, value) pair, as ONE reduction of the
    stacked terms: every sum is one dispatch less to compile and to run."""
    if len(masked) == 1:
        mask, value = masked[0]
        return [ops.sum(ops.where(mask, value, 0), axis=-1)]
    total = ops.sum(_stack([ops.where(mask, value, 0) for mask, value in masked], 2), axis=-1)
    return [total[..., t, :] for t in range(len(masked))]


def _clusters(pairs, before, poles, z, active, tolerance):
    """(z, last, together, u, uu): each group's active poles (in sorted order, ties by index) form clusters
    of neighbours at most `tolerance` apart; the reflection I - 2 u u^T / uu of each cluster (`together[k, j]`:
    k and j share one) moves the cluster's z onto its last member (`last`), which alone keeps a z."""
    own = _util.eye(poles.shape[-1], dtypes.bool_)
    close = pairs & before & (poles[..., :, None] - poles[..., None, :] <= tolerance[..., None])
    starts = active & (_sums((close, 1))[0] == 0)
    cluster = _sums((pairs & (before | own) & starts[..., None, :], 1))[0]
    together = pairs & (cluster[..., None, :] == cluster[..., :, None])
    members, position, squares = _sums((together, 1), (together & (before | own), 1), (together, z[..., None, :] ** 2))
    last = active & (position == members)
    norm = ops.sqrt(squares)
    sign = ops.where(z >= 0, 1, -1)
    reflected = members > 1
    u = ops.where(reflected, z + ops.where(last, sign * norm, 0), 0)
    uu = _sums((together, u[..., None, :] ** 2))[0]
    z = ops.where(reflected, ops.where(last, -sign * norm, 0), z)
    return z, last, together, u, uu


def _secular_roots(pairs, poles, weights, dtype):
    """(origin, tau) with lambda_k = origin_k + tau_k the root of 1 + sum_j weights_j / (poles_j - lambda)
    above poles_k (weights > 0; `pairs` the indices of k's equation, poles more than the tolerance apart);
    origin is the pole of the root's interval closer to it, so that poles_j - lambda_k = (poles_j - origin_k)
    - tau_k is accurate."""
    eps = _util.eps(dtype)
    from_pole = poles[..., None, :] - poles[..., :, None]                # [k, j]: poles_j - poles_k
    above = pairs & (from_pole > 0)
    next_pole = ops.min(ops.where(above, poles[..., None, :], np.inf), axis=-1)
    has_next = ops.any(pairs, axis=-1) & (next_pole < np.inf)
    half_gap = ops.where(has_next, (next_pole - poles) / 2, 0)
    w = ops.where(pairs, weights[..., None, :], 0)
    at_middle, total = _sums((pairs, _divide(w, from_pole - half_gap[..., None])), (pairs, w))
    from_next = has_next & (at_middle < -1)
    origin = ops.where(from_next, next_pole, poles)
    delta = poles[..., None, :] - origin[..., :, None]
    lower_pole = poles - origin
    upper_pole = ops.where(has_next, next_pole - origin, 0)
    lo = ops.where(from_next, -half_gap, 0)
    hi = ops.where(has_next, ops.where(from_next, 0, half_gap), total)
    left = pairs & ops.logical_not(above)

    def step(state):
        # the per-root state is one stacked array (tau, lo, hi, done), so that the whole update is one fused
        # elementwise pass after the one reduction
        count, (tau, lo, hi, done) = state[0], (state[1][..., t, :] for t in range(4))
        gaps = delta - tau[..., None]
        terms = _divide(w, gaps)
        slopes = _divide(terms, gaps)
        psi, phi, dpsi, dphi = _sums((left, terms), (above, terms), (left, slopes), (above, slopes))
        f = 1 + psi + phi
        bound = eps * (8 * (1 + phi - psi) + ops.abs(tau) * (dpsi + dphi))
        narrow = hi - lo <= 2 * eps * ops.maximum(ops.abs(lo), ops.abs(hi))
        done = (done > 0) | (ops.abs(f) <= bound) | narrow
        to_lower, to_upper = lower_pole - tau, upper_pole - tau
        b, e = dpsi * to_lower * to_lower, dphi * to_upper * to_upper
        a = 1 + psi - dpsi * to_lower + phi - dphi * to_upper
        c0, c1 = to_lower * to_upper * f, a * (to_lower + to_upper) + b + e
        root = ops.sqrt(ops.maximum(c1 * c1 - 4 * a * c0, 0))
        between = ops.where(c1 > 0, _divide(2 * c0, c1 + root), _divide(c1 - root, 2 * a))
        eta = ops.where(has_next, between, _divide(to_lower * f, a))
        lo = ops.where(f < 0, ops.maximum(lo, tau), lo)
        hi = ops.where(f > 0, ops.minimum(hi, tau), hi)
        guess = tau + eta
        inside = (guess > lo) & (guess < hi) & ops.isfinite(guess)
        guess = ops.where(inside, guess, (lo + hi) / 2)
        return count + 1, _stack([ops.where(done, tau, guess), lo, hi, ops.where(done, 1, 0)])

    limit = MAX_SECULAR_STEPS.get(np.dtype(dtype), 64)

    def keep_going(state):
        return (state[0] < limit) & (ops.min(state[1][..., 3, :]) == 0)
    done = ops.where(ops.any(pairs, axis=-1), 0, 1)
    start = (ops.zeros((), dtypes.int32), _stack([(lo + hi) / 2, lo, hi, done]).astype(dtype))
    return origin, while_loop(keep_going, step, start)[1][..., 0, :]


def _merge_vectors(roots, active, poles, z, origin, tau, rho, clusters):
    """U (N x N): the eigenvectors of the merged groups in the basis of the halves', column k that of lambda_k
    (`roots[k, j]`: k and j are roots of one group's equation; `active`: the same before the clusters
    deflated). In the reflected basis, root k's vector is y_j = zh_j / (poles_j - lambda_k) over the roots'
    poles j, with z recomputed from the roots (Gu and Eisenstat): zh_j^2 = (lambda_j - d_j) / rho
    prod_(i != j) (lambda_i - d_j) / (d_i - d_j), signed as z. Reflecting back spreads y_last over its cluster
    as z_j / z_last (no matmul by the reflections); the reflections' other columns are the clusters' deflated
    vectors, and indices that deflated on their own keep their unit vectors."""
    z_after, last, together, u, uu = clusters
    n = poles.shape[-1]
    own = _util.eye(n, dtypes.bool_)
    gaps = poles[..., None, :] - origin[..., :, None] - tau[..., :, None]    # [k, j]: poles_j - lambda_k
    pole_gaps = poles[..., :, None] - poles[..., None, :]                   # [i, j]: d_i - d_j
    ratios = ops.where(roots & ops.logical_not(own), _divide(-gaps, pole_gaps), 1)
    z_hat = ops.sqrt(ops.maximum(_divide(origin - poles + tau, rho) * ops.prod(ratios, axis=-2), 0))
    z_hat = ops.where(z_after >= 0, z_hat, -z_hat)
    to_last = together & last[..., None, :]
    last_hat, last_z, last_pole, squares = _sums(
        (to_last, z_hat[..., None, :]), (to_last, z_after[..., None, :]), (to_last, poles[..., None, :]),
        (roots, (z_hat[..., None, :] / ops.where(roots, gaps, 1)) ** 2))
    scale = _divide(1, ops.sqrt(squares))
    # [j, k]: row j of column k
    to_root = last_pole[..., :, None] - origin[..., None, :] - tau[..., None, :]
    root = (_divide(z, last_z) * last_hat)[..., :, None] * _divide(scale[..., None, :], to_root)
    reflection = ops.where(own, 1, 0) - 2 * u[..., :, None] * _divide(u, uu)[..., None, :]
    unit = ops.where(own, 1, 0)
    return ops.where(active & last[..., None, :], root,
                     ops.where(together & ops.logical_not(last)[..., None, :], reflection, unit))


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
    order = _util.index((size, size), 1) < _util.index((size, size), 0)  # [k, j]: j < k, ties' order

    def level(l, carry):
        d, q = carry
        group, split, z_row = (dynamic_slice(t, [l, 0], (1, size))[0] for t in tables)
        z, rho = _sums((index[None, :] == z_row[:, None], mT(q)), (index[None, :] == split[:, None], e[..., None, :]))
        z, rho = z * float(np.sqrt(0.5)), 2 * rho
        sign = ops.where(rho < 0, -1, 1)
        poles, rho = sign * d, ops.abs(rho)
        active = rho * ops.abs(z) > tolerance
        same = group[:, None] == group[None, :]
        before = (poles[..., None, :] < poles[..., :, None]) | ((poles[..., None, :] == poles[..., :, None]) & order)
        pairs = same & active[..., :, None] & active[..., None, :]
        clusters = _clusters(pairs, before, poles, z, active, tolerance)
        z_after, last = clusters[:2]
        roots = same & last[..., :, None] & last[..., None, :]
        origin, tau = _secular_roots(roots, poles, rho * z_after * z_after, dtype)
        u = _merge_vectors(roots, pairs, poles, z, origin, tau, rho, clusters)
        d = ops.where(last, sign * (origin + tau), d)
        return d, mm(q, u)
    return fori_loop(0, levels, level, (d, q))


def symmetric_eigen(a, vectors: bool = True):
    """(w ascending, v or None) of symmetric a (..., n, n) = v diag(w) v^T: Householder tridiagonalization,
    then divide and conquer on the tridiagonal padded to a power of two with poles above every eigenvalue
    (decoupled, so they deflate at once and sort last). a is scaled to entries of at most 1 first, so that
    neither squares nor the tolerances under- or overflow."""
    n = a.shape[-1]
    if n == 1:
        return ops.diagonal(a, 0, -2, -1), ops.ones(a.shape, a.dtype) if vectors else None
    # (not where(scale > 0, scale, 1): that scalar 1 is the constant Jacobi svd's sweep loop starts from, and
    # IREE 3.13 failed on that loop once the two were one constant: "'scf.while' op ... region branch point has
    # 6 operands, but region successor needs 8 inputs")
    scale = ops.maximum(ops.max(ops.abs(a), axis=(-2, -1)), float(np.finfo(a.dtype).tiny))
    d, e, reflectors = tridiagonalize(a / scale[..., None, None], vectors)
    size = 1 << max(n - 1, 1).bit_length()
    pad = 2 * (ops.max(ops.abs(d), axis=-1) + 2 * ops.max(ops.abs(e), axis=-1)) + 1
    d = ops.concatenate([d, ops.broadcast_to(pad[..., None], d.shape[:-1] + (size - n,))], axis=-1)
    e = ops.concatenate([e, ops.zeros(e.shape[:-1] + (size - n + 1,), e.dtype)], axis=-1)
    w, qt = tridiagonal_eigen(d, e)
    order = ops.argsort(w, axis=-1)[..., :n]
    w = sort_by(w, order) * scale[..., None]
    if not vectors:
        return w, None
    v = apply_reflectors(reflectors, qt[..., :n, :])
    return w, ops.take_along_axis(v, ops.broadcast_to(order[..., None, :], v.shape[:-1] + (n,)), axis=-1)
