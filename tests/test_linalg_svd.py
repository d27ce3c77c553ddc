"""svd above spectral.JACOBI_SVD_UP_TO: the polar decomposition (polar.py, QDWH) and eigh, against numpy: s within
a few n eps |s|max, a = u diag(s) vh to as much, u and vh orthonormal, on input that strains the iteration
(ill-conditioned to 1e6 in f32 and 1e12 in f64, repeated and clustered singular values) and input whose u
needs the completion (rank-deficient, zero), square, tall, wide and batched.

The threshold is lowered to 32 and the matrices are 40 wide (the `polar_path` fixture): the same polar program
as above 128, which the reference backend interprets in seconds rather than tens of seconds (N = 136 took ~43
s of the suite). Each case group is one compiled module: the full-rank and the deficient stacks have one shape,
so the second call runs the other branch of the completion's cond in the same module. On iree:cpu a real svd
is the kernel of pipeline/svd_kernel.py (the composite hlojit.svd), so iree:cpu runs it on the same stacks;
the reference backend runs the polar program on all of them, iree:vmvx on the square f32 stacks (at 12 columns)."""
from __future__ import annotations

import numpy as np
import pytest

import hlojit as hj
from hlojit import ops
from hlojit.frontend.ops.linalg import polar, spectral

from conftest import BACKENDS

rng = np.random.default_rng(12)
N = 40          # above the threshold the `polar_path` fixture sets: every case below takes the polar path
THRESHOLD = 32
CONDITION = {np.dtype(np.float32): 1e6, np.dtype(np.float64): 1e12}


def _orthogonal(n: int) -> np.ndarray:
    return np.linalg.qr(rng.standard_normal((n, n)))[0]


def _with_singular_values(s, m: int | None = None) -> np.ndarray:
    n = len(s)
    m = n if m is None else m
    return (_orthogonal(m)[:, :n] * s) @ _orthogonal(n).T


def full_rank(n: int, dtype) -> np.ndarray:
    """(4, n, n): random, ill-conditioned (graded singular values down to 1 / CONDITION), repeated (three values),
    clustered (1 + 1e-6 noise)."""
    cases = [rng.standard_normal((n, n)), _with_singular_values(np.logspace(0, -np.log10(CONDITION[np.dtype(dtype)]), n)),
             _with_singular_values(np.repeat([3.0, 2.0, 1.0], -(-n // 3))[:n]),
             _with_singular_values(1 + 1e-6 * rng.standard_normal(n))]
    return np.stack(cases).astype(dtype)


def deficient(n: int, dtype) -> np.ndarray:
    """(4, n, n): rank n/2, rank one, zero, and a random matrix with one exactly repeated column (rank n - 1)."""
    x = rng.standard_normal((n, n))
    x[:, -1] = x[:, 0]
    cases = [rng.standard_normal((n, n // 2)) @ rng.standard_normal((n // 2, n)),
             np.outer(rng.standard_normal(n), rng.standard_normal(n)), np.zeros((n, n)), x]
    return np.stack(cases).astype(dtype)


def assert_svd(a, u, s, vh, within: float = 10):
    """s descending against numpy's, u diag(s) vh = a, and u, vh orthonormal, within `within` k eps (of |s|max)."""
    a64 = a.astype(np.float64)
    k, eps = min(a.shape[-2:]), np.finfo(a.dtype).eps
    u, s, vh = (np.asarray(x, np.float64) for x in (u, s, vh))
    expected = np.linalg.svd(a64, compute_uv=False)
    scale = np.maximum(expected[..., :1], np.finfo(a.dtype).tiny)
    assert np.all(np.abs(s - expected) <= within * k * eps * scale)
    assert np.all(np.abs((u[..., :, :k] * s[..., None, :]) @ vh[..., :k, :] - a64).max(axis=-1) <= within * k * eps * scale)
    for q in (u, np.swapaxes(vh, -1, -2)):
        assert np.all(np.abs(np.swapaxes(q, -1, -2) @ q - np.eye(q.shape[-1])) <= within * k * eps)


def reduced_svd(a):
    return ops.linalg.svd(a, full_matrices=False)


@pytest.fixture(autouse=True)
def polar_path(monkeypatch):
    monkeypatch.setattr(spectral, "JACOBI_SVD_UP_TO", THRESHOLD)


def test_sizes_take_the_polar_path():
    assert N > spectral.JACOBI_SVD_UP_TO
    qr_steps, cholesky_steps = polar.halley_schedule(np.float32)
    assert (len(qr_steps), len(cholesky_steps) - 1) == (2, 2)          # f32: 4 steps from l = eps
    qr_steps, cholesky_steps = polar.halley_schedule(np.float64)
    assert (len(qr_steps), len(cholesky_steps) - 1) == (2, 4)          # f64: 6
    lowered = hj.jit(reduced_svd, backend="reference").lower(np.zeros((N, N), np.float32)).mlir
    assert "stablehlo.if" in lowered                                   # the completion's cond (Jacobi has none)


# (backend, dtype): iree:cpu runs the svd kernel (f32 and f64), iree:vmvx the polar program's StableHLO, at 12
# columns above a threshold of 8: the same QDWH program, whose eigh of h is smaller (vmvx compiled it in 6 s against
# 14 at 40 columns, 2026-12-06)
PLAN = [("reference", np.float32), ("reference", np.float64), ("iree:cpu", np.float32), ("iree:cpu", np.float64),
        ("iree:vmvx", np.float32)]
VMVX_N, VMVX_THRESHOLD = 12, 8


@pytest.mark.parametrize("backend, dtype", [p for p in PLAN if p[0] in BACKENDS],
                         ids=[f"{b}-{np.dtype(d).name}" for b, d in PLAN if b in BACKENDS])
def test_square_full_rank_and_deficient(backend, dtype, monkeypatch):
    n = N
    if backend == "iree:vmvx":
        n = VMVX_N
        monkeypatch.setattr(spectral, "JACOBI_SVD_UP_TO", VMVX_THRESHOLD)
    svd = hj.jit(reduced_svd, backend=backend)
    assert "stablehlo.if" in svd.lower(np.zeros((n, n), dtype)).mlir     # the polar path's completion
    for a in (full_rank(n, dtype), deficient(n, dtype)):
        assert_svd(a, *svd(a))


def test_tall_and_wide_full_matrices():
    """Tall input goes through a QR first, its Q's further columns complete u; wide input is the transpose."""
    m = N + 12
    tall = np.stack([rng.standard_normal((m, N)), _with_singular_values(np.logspace(0, -6, N), m),
                     rng.standard_normal((m, N // 2)) @ rng.standard_normal((N // 2, N)), np.zeros((m, N))])
    tall = tall.astype(np.float32)
    run = hj.jit(lambda t, w: (ops.linalg.svd(t), ops.linalg.svd(w), reduced_svd(t)), backend="reference")
    wide = np.swapaxes(tall, -1, -2).copy()
    (u, s, vh), (uw, sw, vhw), (ur, sr, vhr) = run(tall, wide)
    assert np.shape(u) == (4, m, m) and np.shape(vhw) == (4, m, m)
    assert_svd(tall, u, s, vh)
    assert_svd(wide, uw, sw, vhw)
    assert_svd(tall, ur, sr, vhr)


def test_svdvals_and_the_gradient_of_their_sum():
    """s alone (no eigenvectors of h), and d(sum s)/da = u vh (the custom_vjp's rule fed by the polar path)."""
    a = rng.standard_normal((N + 4, N)).astype(np.float64)
    s, grad = hj.jit(lambda a: (ops.linalg.svdvals(a), hj.grad(lambda a: ops.sum(ops.linalg.svdvals(a)))(a)),
                     backend="reference")(a)
    u, expected, vh = np.linalg.svd(a, full_matrices=False)
    np.testing.assert_allclose(np.asarray(s), expected, atol=10 * N * np.finfo(np.float64).eps * expected[0])
    np.testing.assert_allclose(np.asarray(grad), u @ vh, atol=1e-10)
