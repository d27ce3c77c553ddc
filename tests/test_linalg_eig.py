"""linalg.eig / eigvals of general matrices against numpy.linalg.eig on the reference backend and iree:cpu
(conftest.LIBRARY_BACKENDS: vmvx's f64 and complex128 loops are test_linalg's and test_linalg_complex_svd's; its eig
module took 13-28 s of the suite): eigenvalues as multisets
(matched one to one by least total distance), a v = v diag(w) and unit columns; the complex results' dtypes.

Eigen-decompositions compile one QR loop per (n, dtype): the cases are stacked into a few batches of one
shape, each ONE eig call (which also runs the batch loop), in one module per backend.
"""
from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import linear_sum_assignment

import hlojit as hj
import hlojit.ops.linalg  # noqa: F401  (importable by its name)
from hlojit import ops

from conftest import LIBRARY_BACKENDS
from test_linalg import numeric_grad   # central differences, as test_linalg checks its gradients

L = ops.linalg
rng = np.random.default_rng(31)


def _orthogonal(n):
    return np.linalg.qr(rng.standard_normal((n, n)))[0]


def _jordan(n, value):
    """A Jordan block in a rotated basis (the block itself is triangular: its Schur form already)."""
    q = _orthogonal(n)
    return q @ (value * np.eye(n) + np.eye(n, k=1)) @ q.T


ROTATION = np.array([[0.0, -1.0], [1.0, 0.0]])
# (id, matrix, which checks): "vectors" also checks a v = v diag(w) and unit columns (not for defective ones)
SINGLE = [   # complex64 results: f32 and c64 inputs, 4 x 4
    ("random-real", rng.standard_normal((4, 4)), "vectors"),
    ("symmetric", (lambda m: m + m.T)(rng.standard_normal((4, 4))), "vectors"),
    ("complex", rng.standard_normal((4, 4)) + 1j * rng.standard_normal((4, 4)), "vectors"),
    ("triangular", np.tril(rng.standard_normal((4, 4))), "vectors"),   # lower: upper is its own Schur form
    ("rotations", np.block([[ROTATION, np.zeros((2, 2))], [np.zeros((2, 2)), 2 * ROTATION]]), "vectors"),
    ("rotated-rotations", (lambda q: q @ np.diag([3.0, 1.0, 1.0, 1.0]) @ np.kron(np.eye(2), ROTATION) @ q.T)(
        _orthogonal(4)), "vectors"),
    ("repeated", (lambda q: q @ np.diag([1.0, 2.0, 2.0, -1.0]) @ q.T)(_orthogonal(4)), "vectors"),
    ("permutation", np.roll(np.eye(4), 1, axis=0), "vectors"),   # fourth roots of unity: shifts stagnate
    ("jordan", _jordan(4, 2.0), "values"),
    ("nan", np.where(np.eye(4) == 1, np.nan, 1.0), "nan"),
    ("zeros", np.zeros((4, 4)), "vectors"),
]
DOUBLE = [   # complex128 results: f64 inputs, 6 x 6
    ("random-real-f64", rng.standard_normal((6, 6)), "vectors"),
    ("complex-f64", rng.standard_normal((6, 6)) + 1j * rng.standard_normal((6, 6)), "vectors"),
    ("repeated-f64", (lambda q: q @ np.diag([1.0, 1.0, 1.0, 2.0, 2.0, 3.0]) @ q.T)(_orthogonal(6)), "vectors"),
    ("jordan-f64", _jordan(6, -1.0), "values"),
    ("inf-f64", np.where(np.eye(6) == 1, np.inf, 1.0), "nan"),
]


def _stack(cases, dtype):
    return np.stack([np.asarray(m, dtype) for _, m, _ in cases])


def run_all(a4_real, a4_complex, a6_real, a6_complex, a1, a0, reference=False):
    """Every output of this file: one module per backend. Complex and real cases of one size share one eig
    call (the real ones converted, as eig converts them: the same QR loop); eigvals on one matrix and on a
    stack. The real batch of two, the unbatched eigvals, the complex128 eigvals and the complex64 stack run on the
    reference only: the first two are the c64 group's program at other batch sizes (what they check, that eig
    converts real input itself and that a batch changes nothing, is the frontend's), the third eig's QR loop
    without its vectors, the last the c128 stack's program in complex64; each compiled its QR loops again on
    iree:cpu (the last two ~10 s each, 2026-12-06; iree:cpu runs complex64 eigvals in
    test_complex64_eigvals_of_a_real_stack)."""
    a6 = ops.concatenate([a6_real.astype(np.complex128), a6_complex], axis=0)
    out = {"eig6": L.eig(a6), "eig1": L.eig(a1), "eig0": L.eig(a0)}
    if reference:
        a4 = ops.concatenate([a4_real.astype(np.complex64), a4_complex], axis=0)
        out.update(pair=L.eig(a4_real[:2]), eigvals_one=L.eigvals(a4_real[0]), eigvals6=L.eigvals(a6), eig4=L.eig(a4))
    return out


def _split(cases):
    return [c for c in cases if not np.iscomplexobj(c[1])], [c for c in cases if np.iscomplexobj(c[1])]


REAL, COMPLEX = _split(SINGLE)
REAL6, COMPLEX6 = _split(DOUBLE)
SINGLE, DOUBLE = REAL + COMPLEX, REAL6 + COMPLEX6      # in the stacks' order
INPUTS = (_stack(REAL, np.float32), _stack(COMPLEX, np.complex64), _stack(REAL6, np.float64),
          _stack(COMPLEX6, np.complex128), np.array([[[-2.5]], [[4.0]]], np.float32), np.zeros((0, 0), np.float32))
_RESULTS: dict = {}


def results(backend):
    if backend not in _RESULTS:
        fn = lambda *inputs: run_all(*inputs, reference=backend == "reference")  # noqa: E731
        _RESULTS[backend] = hj.jit(fn, backend=backend)(*INPUTS)
    return {k: tuple(np.asarray(x) for x in r) if isinstance(r, tuple) else np.asarray(r)
            for k, r in _RESULTS[backend].items()}


def matched_distance(w, expected):
    """The largest |w_i - expected_j| over the pairing of least total distance (a multiset comparison that
    sorting cannot do robustly: conjugate pairs, near-ties)."""
    cost = np.abs(w[:, None] - expected[None, :])
    rows, cols = linear_sum_assignment(cost)
    return cost[rows, cols].max(initial=0.0)


def check(a, w, v, how, tol):
    a = np.asarray(a, np.complex128)
    if how == "nan":
        assert np.isnan(w).all() and (v is None or np.isnan(v).all())
        return
    scale = max(1.0, np.abs(a).max())
    expected = np.linalg.eigvals(a)
    loose = tol ** (1 / a.shape[-1]) * 4 if how == "values" else tol   # a defective eigenvalue's error ~ eps^(1/n)
    assert matched_distance(w, expected) <= loose * scale, (w, expected)
    if how == "vectors" and v is not None:
        assert np.abs(a @ v - v * w[None, :]).max() <= tol * scale
        np.testing.assert_allclose(np.linalg.norm(v, axis=0), 1, atol=tol)


@pytest.mark.parametrize("backend", LIBRARY_BACKENDS)
def test_eig_against_numpy(backend):
    out = results(backend)
    (w6, v6), (w1, v1), (w0, v0) = out["eig6"], out["eig1"], out["eig0"]
    assert w6.dtype == v6.dtype == np.complex128
    for i, (name, a, how) in enumerate(DOUBLE):
        check(a, w6[i], v6[i], how, 1e-12)
        if "eigvals6" in out:
            assert out["eigvals6"].dtype == np.complex128
            check(a, out["eigvals6"][i], None, how, 1e-12)
    np.testing.assert_array_equal(w1, [[-2.5], [4.0]])
    np.testing.assert_array_equal(v1, np.ones((2, 1, 1)))
    assert w0.shape == (0,) and v0.shape == (0, 0) and w0.dtype == np.complex64
    if backend != "reference":
        return
    w4, v4 = out["eig4"]
    assert w4.dtype == v4.dtype == np.complex64
    for i, (name, a, how) in enumerate(SINGLE):
        check(np.asarray(a, np.complex64 if np.iscomplexobj(a) else np.float32), w4[i], v4[i], how, 2e-5)
    (w_pair, v_pair), w_one = out["pair"], out["eigvals_one"]
    assert w_pair.dtype == w_one.dtype == np.complex64
    np.testing.assert_allclose(w_pair, w4[:2], rtol=1e-6, atol=1e-6)    # a batch of two: the same results
    np.testing.assert_allclose(np.sort_complex(w_one), np.sort_complex(w4[0]), rtol=2e-5, atol=2e-5)


def test_largest_component_is_real():
    w4, v4 = results("reference")["eig4"]
    for (name, _, how), v in zip(SINGLE, v4):
        if how != "vectors" or name == "zeros":
            continue
        largest = v[np.argmax(np.abs(v), axis=0), np.arange(v.shape[1])]
        np.testing.assert_allclose(largest.imag, 0, atol=1e-6)
        assert (largest.real > 0).all()


def test_matches_jax():
    jnp = pytest.importorskip("jax.numpy")
    a = np.asarray(REAL[0][1], np.float32)
    w, v = hj.jit(L.eig, backend="reference")(a)
    w_jax, v_jax = jnp.linalg.eig(a)
    assert np.asarray(w).dtype == np.asarray(w_jax).dtype
    assert matched_distance(np.asarray(w), np.asarray(w_jax)) < 1e-5
    assert np.isnan(np.asarray(jnp.linalg.eig(INPUTS[0][REAL.index(next(c for c in REAL if c[0] == "nan"))])[0])).all()


@pytest.mark.parametrize("fn", [L.eig, L.eigvals], ids=["eig", "eigvals"])
def test_non_square_is_a_shape_error(fn):
    with pytest.raises(hj.ShapeError, match=f"{fn.__name__}: needs square matrices") as info:
        hj.jit(lambda a: fn(a[:3]), backend="reference").lower(np.zeros((4, 4), np.complex64))
    assert "test_linalg_eig.py:" in str(info.value)


def spectral_loss(xp, w):
    """A function of the eigenvalues that does not depend on their order."""
    return xp.sum(xp.abs(w) ** 2) + xp.sum(xp.real(w) ** 3) + xp.sum(xp.imag(w) ** 2)


def test_eigvals_gradient_matches_central_differences():
    """JAX's rule (da = v^-T diag(gw) v^T), f64 on the reference backend: a real matrix (complex-conjugate
    eigenvalues) and a complex one (JAX's convention: the gradient is dL/dx - i dL/dy)."""
    a = np.random.default_rng(5).standard_normal((4, 4))
    ours = np.asarray(hj.jit(hj.grad(lambda a: spectral_loss(ops, L.eigvals(a))), backend="reference")(a))
    np.testing.assert_allclose(ours, numeric_grad(lambda a: spectral_loss(np, np.linalg.eigvals(a)), a),
                               rtol=1e-5, atol=1e-6)
    through_eig = hj.jit(hj.grad(lambda a: spectral_loss(ops, L.eig(a)[0])), backend="reference")(a)
    np.testing.assert_allclose(np.asarray(through_eig), ours, rtol=1e-10, atol=1e-10)
    z = a + 1j * np.random.default_rng(6).standard_normal((4, 4))
    ours = np.asarray(hj.jit(hj.grad(lambda z: spectral_loss(ops, L.eigvals(z))), backend="reference")(z))
    loss = lambda re, im: spectral_loss(np, np.linalg.eigvals(re + 1j * im))  # noqa: E731
    expected = numeric_grad(lambda x: loss(x, z.imag), z.real) - 1j * numeric_grad(lambda y: loss(z.real, y), z.imag)
    np.testing.assert_allclose(ours, expected, rtol=1e-5, atol=1e-6)


def test_eigenvector_gradient_is_a_differentiation_error():
    with pytest.raises(hj.DifferentiationError, match="eig: differentiates its eigenvalues only") as info:
        hj.jit(hj.grad(lambda a: ops.sum(ops.abs(L.eig(a)[1]))), backend="reference")(np.eye(3))
    assert "test_linalg_eig.py:" in str(info.value)


def test_qr_iterations_stop_long_before_the_sweep_limit():
    """~1.4 n^2 rotations for random matrices (about two sweeps per eigenvalue): a shift or deflation that
    stopped working would still converge, or give nan, only after 30 max(10, n) sweeps."""
    import importlib
    eig_module = importlib.import_module("hlojit.frontend.ops.linalg.eig")
    a = np.random.default_rng(8).standard_normal((12, 12)) + 0j
    t, _, converged, rotations = hj.jit(lambda a: eig_module._schur(*eig_module._hessenberg(a)),
                                        backend="reference")(a)
    assert bool(np.asarray(converged)) and int(np.asarray(rotations)) <= 3 * 12 ** 2
    assert matched_distance(np.diag(np.asarray(t)), np.linalg.eigvals(a)) < 1e-12


@pytest.mark.parametrize("backend", [b for b in ("iree:cpu",) if b in LIBRARY_BACKENDS])
def test_complex64_eigvals_of_a_real_stack(backend):
    """iree:cpu's one run of eig's complex64 program (run_all's are complex128). Two 2x2 eigvals in one module
    failed at run time before pipeline/vm_rewrites.py (IREE 3.13's VM register allocator nulled a buffer one branch
    passed twice: docs/iree_vm_branch_move.md); that module no longer fails without the rewrite (eig's program has
    changed since; checked 2026-12-06), so the two are one batched call here (one QR loop to compile, ~10 s
    against ~13), and tests/test_vm_rewrites.py checks the rewrite itself."""
    stack = np.float32([[[1, 2], [3, 4]], [[0, 1], [-2, 0.5]]])
    got = np.asarray(hj.jit(ops.linalg.eigvals, backend=backend)(stack))
    for g, m in zip(got, stack):
        np.testing.assert_allclose(np.sort_complex(g), np.sort_complex(np.linalg.eigvals(m)), rtol=1e-5)
