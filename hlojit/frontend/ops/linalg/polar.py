"""Polar decomposition a = u h (u with orthonormal columns, h symmetric positive semidefinite) by the QR-based
dynamically weighted Halley iteration, QDWH (Nakatsukasa, Bai and Gygi 2010; Nakatsukasa and Higham 2013),
for svd on large matrices: svd(a) = (u v, s, v^T) from eigh(h) = v diag(s) v^T, all matmuls, QR, Cholesky
and a symmetric eigensolver, which IREE compiles into few, big dispatches (Jacobi needs n - 1 rounds of
small ones per sweep).

x_0 = a / alpha with alpha >= |a|_2 puts the singular values in (0, 1]; each step maps every singular value
sigma to sigma (a + b sigma^2) / (1 + c sigma^2), the weights (a, b, c) chosen from a lower bound l of the
smallest one so that [l, 1] lands as close to 1 as a rational function of that degree can. The bound starts
at eps (as JAX does: conditions up to 1/eps converge; smaller singular values count as zero for svd), so the
whole schedule of weights is known before the data: 4 steps in f32, 6 in f64. While c is large the step is
written through the QR of [sqrt(c) x; I] (backward stable); once c <= 100 through the Cholesky factor of
I + c x^T x (half the work, stable enough at that condition). The Cholesky steps continue with Halley's
weights (3, 1, 3) while a step still moves x by more than cbrt(5 eps), a few at most; one Newton-Schulz step
makes u orthonormal to rounding.

Singular values at zero stay zero, so u's columns there are not orthonormal: svd completes them.

A complex a takes the same steps with conjugate transposes (the complex QR and Cholesky; u unitary, h
Hermitian); the weights stay real. conj is the identity on real dtypes: the real programs are as they were.
"""
from __future__ import annotations

import numpy as np

from ... import dtypes, ops
from ...control import fori_loop, while_loop
from .._core import as_tensor
from ..indexing import dynamic_slice
from . import _util
from ..complex_math import abs_squared
from ._util import conj, mH, mm, mT
from .cholesky import lower_factor
from .qr import form_q, householder
from .triangular import substitute

CHOLESKY_BELOW = 100   # c at which the steps switch from QR to Cholesky (cond(I + c x^T x) <= 1 + c)
EXTRA_STEPS = 3        # Halley steps allowed after the schedule while x still moves


def halley_schedule(dtype) -> tuple[np.ndarray, np.ndarray]:
    """(qr_weights, cholesky_weights), rows (a, b, c) of the steps that take every singular value of
    [eps, 1] to within 5 eps of 1 (the bound's recurrence in float64); the Cholesky table ends with
    Halley's (3, 1, 3) for the steps past the schedule."""
    eps = _util.eps(dtype)
    l, qr_steps, cholesky_steps = eps, [], []
    while l + 5 * eps < 1:
        l2 = l * l
        d = (4 * (1 - l2) / (l2 * l2)) ** (1 / 3)
        f = np.sqrt(1 + d)
        a = f + np.sqrt(8 - 4 * d + 8 * (2 - l2) / (l2 * f)) / 2
        b = (a - 1) ** 2 / 4
        c = a + b - 1
        l = l * (a + b * l2) / (1 + c * l2)
        (qr_steps if c > CHOLESKY_BELOW else cholesky_steps).append((a, b, c))
    cholesky_steps.append((3.0, 1.0, 3.0))
    return np.array(qr_steps, np.float64), np.array(cholesky_steps, np.float64)


def _weights(table, i, dtype):
    """(a, b, c) of row i (traced) of the (steps, 3) weight table."""
    row = dynamic_slice(table, [i, 0], (1, 3))
    return tuple(row[0, j].astype(dtype) for j in range(3))


def _qr_step(x, a, b, c):
    """(b/c) x + (a - b/c) / sqrt(c) q1 q2^T with [sqrt(c) x; I] = [q1; q2] r: the Halley step
    x (a I + b x^T x)(I + c x^T x)^-1 without forming the ill-conditioned I + c x^T x."""
    n = x.shape[-1]
    root = ops.sqrt(c)
    stacked = ops.concatenate([root * x, ops.broadcast_to(_util.eye(n, x.dtype), x.shape[:-2] + (n, n))], axis=-2)
    _, v, tau = householder(stacked)
    q = form_q(v, tau, n)
    m = x.shape[-2]
    return (b / c) * x + ((a - b / c) / root) * mm(q[..., :m, :], mH(q[..., m:, :]))


def _cholesky_step(x, a, b, c):
    """(b/c) x + (a - b/c) x z^-1 with z = I + c x^H x = l l^H: two triangular solves for z^-1 x^H. They are
    triangular.substitute's StableHLO, not the hlojit.triangular_solve composite: inside polar's while loop
    its llvm-cpu kernel made IREE 3.13 fail on the loop ("'scf.while' op along control flow edge from
    Operation scf.condition to Region #1: region branch point has 4 operands, but region successor needs 6
    inputs"; svd of 130 x 130 f32, 2026-12-05), which the same solves in a small while loop do not."""
    n = x.shape[-1]
    z = c * mm(mH(x), x) + _util.eye(n, x.dtype)
    l = lower_factor(z)
    y = substitute(mT(conj(l)), substitute(l, mH(x), lower=True), lower=False)
    return (b / c) * x + (a - b / c) * mH(y)


def _scaled(a):
    """a / alpha with alpha = sqrt(|a|_1 |a|_inf) >= |a|_2 per matrix (a zero matrix stays zero)."""
    one = ops.max(ops.sum(ops.abs(a), axis=-2), axis=-1)
    inf = ops.max(ops.sum(ops.abs(a), axis=-1), axis=-1)
    alpha = ops.sqrt(one) * ops.sqrt(inf)
    return a / ops.where(alpha > 0, alpha, 1)[..., None, None]


def polar(a):
    """(u, h) of a (..., m, n), m >= n: a = u h, u (..., m, n) with orthonormal columns where a's singular
    values exceed about eps |a|_2, h (..., n, n) = sym(u^H a) (Hermitian for a complex a)."""
    dtype = dtypes.real_dtype(a.dtype)    # of the weights (real for a complex a)
    qr_table, cholesky_table = (as_tensor(t.astype(np.dtype(dtype)), "svd") for t in halley_schedule(dtype))
    scheduled = cholesky_table.shape[0] - 1
    tolerance = float(np.cbrt(5 * _util.eps(dtype)))
    x = _scaled(a)
    qr_steps = qr_table.shape[0]
    if a.ndim == 2:
        x = fori_loop(0, qr_steps, lambda i, x: _qr_step(x, *_weights(qr_table, i, dtype)), x)
    else:
        # Unrolled on stacks of matrices: as a fori_loop, IREE 3.13's cpu fails to compile them there once the
        # QR has more than one panel ("failed to solve for timepoint coverage"). Not for one matrix: unrolled,
        # svd 1024^2 compiled in 147 s, against 75-108 s as a loop (12-02, load 2-3).
        for i in range(qr_steps):
            x = _qr_step(x, *_weights(qr_table, i, dtype))

    def moving(state):
        step, _, change = state
        return (step < scheduled) | ((change > tolerance) & (step < scheduled + EXTRA_STEPS))

    def cholesky_step(state):
        step, x, _ = state
        new = _cholesky_step(x, *_weights(cholesky_table, ops.minimum(step, scheduled), dtype))
        moved = abs_squared(new - x) if dtypes.is_complex(x.dtype) else (new - x) ** 2
        change = ops.sqrt(ops.max(ops.sum(moved, axis=(-2, -1))))
        return step + 1, new, change
    start = (ops.zeros((), dtypes.int32), x, ops.full((), np.inf, dtype))
    _, x, _ = while_loop(moving, cholesky_step, start)
    x = 1.5 * x - 0.5 * mm(x, mm(mH(x), x))      # Newton-Schulz: orthonormal to rounding
    h = mm(mH(x), a)
    return x, (h + mH(h)) / 2
