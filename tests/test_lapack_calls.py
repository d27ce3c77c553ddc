"""JAX's LAPACK custom calls (frontend/lapack_calls.py): modules that jax.jit(f).lower() wrote for jnp.linalg and
jax.scipy.linalg on the CPU (tests/data/jax_lapack; they failed to parse, then named an unknown custom call) run
through hj.from_mlir, checked against numpy and scipy by what each result must satisfy (factors multiply back,
pivots are LAPACK's, signs of vectors are free)."""
from __future__ import annotations

import os
import re

import numpy as np
import pytest
import scipy.linalg
from iree.compiler import ir

import hlojit as hj
from hlojit.frontend.upgrade import upgrade
from hlojit.pipeline import quirks, targets

DATA = os.path.join(os.path.dirname(__file__), "data", "jax_lapack")
RNG = np.random.default_rng(7)


def _module(name: str, backend: str = "reference"):
    return hj.from_mlir(os.path.join(DATA, name + ".mlir"), backend=backend)


def _spd(n: int, dtype=np.float32) -> np.ndarray:
    a = RNG.standard_normal((n, n))
    return (a @ a.T + n * np.eye(n)).astype(dtype)


def _general(*shape, dtype=np.float32) -> np.ndarray:
    a = RNG.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * RNG.standard_normal(shape)
    return a.astype(dtype)


TOLERANCE = dict(rtol=2e-5, atol=2e-5)


@pytest.mark.parametrize("backend", ["reference", "iree:cpu"])
def test_cholesky_and_solve(backend):
    a, b = _spd(4), _general(4, 2)
    np.testing.assert_allclose(np.asarray(_module("cholesky", backend)(a)), np.linalg.cholesky(a), **TOLERANCE)
    general = _general(4, 4) + 3 * np.eye(4, dtype=np.float32)
    np.testing.assert_allclose(np.asarray(_module("solve", backend)(general, b)), np.linalg.solve(general, b),
                               **TOLERANCE)


def test_cholesky_of_a_matrix_not_positive_definite_is_nan_as_in_jax():
    """potrf's info says it failed: JAX's own code after the call makes the factor NaN (on and below the diagonal,
    as jnp.linalg.cholesky gives it)."""
    factor = np.asarray(_module("cholesky")(-_spd(4)))
    np.testing.assert_array_equal(np.isnan(factor), np.tril(np.ones((4, 4), bool)))
    assert (np.triu(factor, 1) == 0).all()


def test_upper_cholesky_in_f64():
    a = _spd(4, np.float64)
    np.testing.assert_allclose(np.asarray(_module("cholesky_upper_f64")(a)), scipy.linalg.cholesky(a), rtol=1e-12)


def test_complex_solve():
    a, b = _general(4, 4, dtype=np.complex64) + 3 * np.eye(4, dtype=np.complex64), _general(4, 2, dtype=np.complex64)
    np.testing.assert_allclose(np.asarray(_module("solve_c64")(a, b)), np.linalg.solve(a, b), **TOLERANCE)


def test_triangular_solve_from_the_right_transposed():
    """trsm with side R, trans T: x a^T = b for lower a."""
    a, b = np.tril(_general(4, 4)) + 3 * np.eye(4, dtype=np.float32), _general(2, 4)
    np.testing.assert_allclose(np.asarray(_module("triangular_right")(a, b)), b @ np.linalg.inv(a.T), **TOLERANCE)


def test_lu_of_a_wide_matrix_is_scipys():
    """getrf of 3 x 5: three pivots, L 3 x 3, U 3 x 5 (the factorization is unique given LAPACK's pivots)."""
    a = _general(3, 5)
    p, l, u = (np.asarray(x) for x in _module("lu_wide")(a))
    ep, el, eu = scipy.linalg.lu(a)
    for got, want in ((p, ep), (l, el), (u, eu)):
        np.testing.assert_allclose(got, want, **TOLERANCE)


def test_qr_reconstructs_with_orthonormal_q():
    """geqrf then orgqr."""
    a = _general(5, 3)
    q, r = (np.asarray(x) for x in _module("qr")(a))
    np.testing.assert_allclose(q @ r, a, **TOLERANCE)
    np.testing.assert_allclose(q.T @ q, np.eye(3), atol=2e-6)
    np.testing.assert_allclose(np.abs(r), np.abs(np.linalg.qr(a)[1]), **TOLERANCE)
    assert np.allclose(np.tril(r, -1), 0)


def test_eigh_and_batched_svd():
    s = _general(4, 4)
    s = s + s.T
    w, v = (np.asarray(x) for x in _module("eigh")(s))
    np.testing.assert_allclose(w, np.linalg.eigvalsh(s), **TOLERANCE)
    np.testing.assert_allclose((v * w) @ v.T, s, rtol=1e-4, atol=1e-4)
    a = _general(2, 5, 3)
    u, sv, vt = (np.asarray(x) for x in _module("svd")(a))
    np.testing.assert_allclose(sv, np.linalg.svd(a, compute_uv=False), **TOLERANCE)
    np.testing.assert_allclose((u * sv[:, None, :]) @ vt, a, rtol=1e-4, atol=1e-4)


def test_slogdet_through_getrf():
    a = _general(4, 4)
    sign, logabs = (np.asarray(x) for x in _module("slogdet")(a))
    expected = np.linalg.slogdet(a)
    np.testing.assert_allclose([sign, logabs], [expected.sign, expected.logabsdet], **TOLERANCE)


def test_gradient_through_a_jax_solve():
    """The calls became ordinary ops, so grad differentiates the module."""
    general = _general(4, 4) + 3 * np.eye(4, dtype=np.float32)
    b = _general(4, 2)
    solve = _module("solve")
    gb = hj.grad(lambda b: solve(general, b).sum())(b)
    np.testing.assert_allclose(np.asarray(gb), np.linalg.solve(general.T, np.ones((4, 2))), **TOLERANCE)


def test_loaded_inside_a_jit_function_and_vmapped():
    """The calls are built by tracing hlojit's linalg on its own, also while a jit function is being traced (it
    raised 'nested tracing is not supported')."""
    a = _spd(4)
    path = os.path.join(DATA, "cholesky.mlir")
    inside = hj.jit(lambda a: hj.from_mlir(path, backend="reference")(a) * 2, backend="reference")
    np.testing.assert_allclose(np.asarray(inside(a)), 2 * np.linalg.cholesky(a), **TOLERANCE)
    batched = hj.vmap(_module("cholesky"))(np.stack([a, 2 * a]))
    np.testing.assert_allclose(np.asarray(batched), np.linalg.cholesky(np.stack([a, 2 * a])), **TOLERANCE)


def test_shardy_attributes_are_dropped_before_the_parse():
    text = ('%0:2 = stablehlo.custom_call @lapack_spotrf_ffi(%a) {mhlo.backend_config = {uplo = 76 : ui8}, '
            'sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([k, l], []) {i=4, j=4, k=4, l=4}, custom>} : x\n'
            '{sdy.sharding = #sdy.sharding<@mesh, [{}, {"a"}]>, jax.result_info = "r"}')
    assert upgrade(text) == ('%0:2 = stablehlo.custom_call @lapack_spotrf_ffi(%a) {mhlo.backend_config = '
                             '{uplo = 76 : ui8}} : x\n{jax.result_info = "r"}')


def _nearest(w, expected):
    """w's largest distance to its nearest value of `expected` (eigenvalues come in no fixed order)."""
    return np.abs(w[..., :, None] - expected[..., None, :]).min(axis=-1).max()


def test_eig_with_left_and_right_eigenvectors():
    """geev (jax.lax.linalg.eig with compute_left_eigenvectors): vl^H a = w vl^H and a vr = vr w, columns of unit
    norm whose largest component is real, as LAPACK's. On the reference backend only: the call becomes hlojit's
    eig and inv, whose StableHLO test_linalg_eig and test_linalg run on IREE (this module's cpu compile: 14 s)."""
    a = _general(2, 4, 4)
    w, vl, vr = (np.asarray(r) for r in _module("eig_left_right")(a))
    assert w.dtype == vl.dtype == vr.dtype == np.complex64
    assert _nearest(w, np.linalg.eigvals(a)) < 1e-5
    vl_h = np.conj(np.swapaxes(vl, -1, -2))
    np.testing.assert_allclose(vl_h @ a, w[..., :, None] * vl_h, atol=2e-5)
    np.testing.assert_allclose(a @ vr, vr * w[..., None, :], atol=2e-5)
    for v in (vl, vr):
        np.testing.assert_allclose(np.linalg.norm(v, axis=-2), 1, rtol=1e-5)
        largest = np.take_along_axis(v, np.abs(v).argmax(axis=-2)[..., None, :], axis=-2)
        np.testing.assert_allclose(largest.imag, 0, atol=1e-6)


def test_eigvals_of_complex128():
    a = _general(4, 4, dtype=np.complex128)
    assert _nearest(np.asarray(_module("eigvals_c128")(a)), np.linalg.eigvals(a)) < 1e-12


REAL_MODULES = {"cholesky": ["hlojit.cholesky"], "cholesky_upper_f64": ["hlojit.cholesky"], "eigh": ["hlojit.eigh"],
                "lu_wide": ["hlojit.lu"], "qr": ["hlojit.form_q", "hlojit.householder"], "slogdet": ["hlojit.lu"],
                "solve": ["hlojit.lu", "hlojit.triangular_solve"], "svd": ["hlojit.svd"],
                "triangular_right": ["hlojit.triangular_solve"]}


@pytest.mark.parametrize("name", sorted(REAL_MODULES))
def test_real_calls_keep_their_composites_and_cpu_runs_the_kernels(name):
    """A call's replacement keeps hlojit's composites (their decompositions moved into the module, renamed apart),
    so iree:cpu runs the kernels of pipeline/kernels.py as for a traced program (they were inlined before: the
    StableHLO loops), with the reference backend's results (up to the signs of vectors)."""
    cpu, reference = _module(name, "iree:cpu"), _module(name)
    assert sorted(set(re.findall(r'stablehlo.composite "([\w.]+)"', cpu.text))) == REAL_MODULES[name]
    with ir.Context() as context:
        context.load_all_available_dialects()
        module = ir.Module.parse(cpu.text)
        counts = quirks.apply(module, targets.get("cpu"))
        assert counts["kernel_dispatches"] >= len(REAL_MODULES[name]) and "stablehlo.composite" not in str(module)
    inputs = [_spd(shape[-1], dtype) if name.startswith("cholesky") else _general(*shape, dtype=dtype)
              for shape, dtype in cpu.inputs]
    if name in ("solve", "triangular_right"):   # the matrix solved with, well conditioned
        inputs[0] = inputs[0] + 3 * np.eye(inputs[0].shape[-1], dtype=inputs[0].dtype)
    got, want = cpu(*inputs), reference(*inputs)
    for g, w in zip(got if isinstance(got, tuple) else [got], want if isinstance(want, tuple) else [want]):
        np.testing.assert_allclose(np.abs(np.asarray(g)), np.abs(np.asarray(w)), rtol=1e-4, atol=1e-4)


def tridiagonal_system(n: int, k: int, *batch, dtype=np.float64, seed: int = 11):
    """dl, d, du (dl[..., 0] and du[..., -1] zero, as JAX passes them and cuSPARSE wants them) with a small
    diagonal, so gtsv's pivoting swaps rows, and b (..., n, k). Its own generator: test_cusolver_calls draws
    from it at import, which must not move this module's RNG."""
    rng = np.random.default_rng(seed)

    def draw(*shape):
        values = rng.standard_normal(shape) + (1j * rng.standard_normal(shape) if np.dtype(dtype).kind == "c" else 0)
        return values.astype(dtype)
    dl, d, du = (draw(*batch, n) for _ in range(3))
    dl[..., 0], du[..., -1] = 0, 0
    return dl, (d * 0.1).astype(dtype), du, draw(*batch, n, k)


def dense_tridiagonal_solve(dl, d, du, b):
    """b solved by numpy with the dense matrix of diagonals dl[1:], d, du[:-1]."""
    n = d.shape[-1]
    a = np.zeros(d.shape + (n,), d.dtype)
    a[..., range(n), range(n)], a[..., range(1, n), range(n - 1)] = d, dl[..., 1:]
    a[..., range(n - 1), range(1, n)] = du[..., :-1]
    return np.linalg.solve(a, b)


def assert_scipys_sytrd(results, a, lower: bool, **tolerance):
    """Every result of JAX's tridiagonal of a (..., n, n) (a with T and the reflectors, d, e, tau) as scipy's
    sytrd gives it, matrix by matrix."""
    sytrd = scipy.linalg.lapack.get_lapack_funcs("sytrd", dtype=a.dtype)
    for i in np.ndindex(a.shape[:-2]):
        for got, want in zip(results, sytrd(a[i], lower=int(lower))):
            np.testing.assert_allclose(np.asarray(got)[i], want, **tolerance)


@pytest.mark.parametrize("backend, dtype, n", [("reference", np.float64, 7), ("iree:cpu", np.float64, 7),
                                               ("reference", np.complex64, 7), ("iree:cpu", np.complex64, 7),
                                               ("reference", np.float64, 70)])   # 70: 8 steps an iteration
def test_gtsv_gives_every_result_lapacks_does(backend, dtype, n):
    """lapack_calls' gtsv against scipy's (LAPACK's own): U's diagonals (dl from its second element: the second
    superdiagonal the row swaps make), x, info; the elements LAPACK does not read stay as given."""
    from hlojit.frontend import lapack_calls
    dl, d, du, b = tridiagonal_system(n, 2, dtype=dtype)
    info_type = [None] * 4 + [((), np.dtype(np.int32))]
    got = [np.asarray(x) for x in hj.jit(lambda *a: lapack_calls._gtsv({}, info_type, *a), backend=backend)(
        dl, d, du, b)]
    gtsv = scipy.linalg.lapack.get_lapack_funcs("gtsv", dtype=dtype)
    want_dl, want_d, want_du, want_x, want_info = gtsv(dl[1:], d, du[:-1], b)
    tolerance = dict(rtol=1e-12, atol=1e-12) if dtype == np.float64 else dict(rtol=2e-5, atol=2e-5)
    for part, want in zip((got[0][1:], got[1], got[2][:-1], got[3]), (want_dl, want_d, want_du, want_x)):
        np.testing.assert_allclose(part, want, **tolerance)
    assert got[0][0] == dl[0] and got[2][-1] == du[-1] and got[4] == want_info == 0


@pytest.mark.parametrize("name, n, k, batch, dtype", [
    ("tridiagonal_solve", 6, 2, (), np.float32), ("tridiagonal_solve_c64", 4, 1, (), np.complex64),
    ("tridiagonal_solve_batched_f64", 5, 3, (2,), np.float64)])
def test_tridiagonal_solve_modules_agree_with_a_dense_solve(name, n, k, batch, dtype):
    """JAX's lax.linalg.tridiagonal_solve (tests/data/jax_lapack: lapack_{s,c,d}gtsv_ffi)."""
    dl, d, du, b = tridiagonal_system(n, k, *batch, dtype=dtype)
    tolerance = 1e-12 if dtype == np.float64 else 2e-5
    np.testing.assert_allclose(np.asarray(_module(name)(dl, d, du, b)), dense_tridiagonal_solve(dl, d, du, b),
                               rtol=tolerance, atol=tolerance)


def test_a_singular_tridiagonal_system_is_nan_as_in_jax():
    """gtsv's info names the zero pivot: JAX's code after the call makes x NaN."""
    dl, d, du, b = tridiagonal_system(6, 2, dtype=np.float32)
    x = _module("tridiagonal_solve", "iree:cpu")(np.zeros_like(dl), np.zeros_like(d), du, b)
    assert np.isnan(np.asarray(x)).all()


@pytest.mark.parametrize("n", [5, 40])        # 40: two of the reduction's panels
@pytest.mark.parametrize("lower", [True, False])
def test_sytrd_gives_every_result_lapacks_does(n, lower):
    """lapack_calls' sytrd against scipy's dsytrd from the same triangle: the matrix with T and the reflectors
    in it (the other triangle as given), d, e, tau; U is L's mirror."""
    from hlojit.frontend import lapack_calls
    a = _general(n, n, dtype=np.float64)
    info_type = [None] * 4 + [((), np.dtype(np.int32))]
    config = {"uplo": ord("L" if lower else "U")}
    got = [np.asarray(x) for x in hj.jit(lambda a: lapack_calls._sytrd(config, info_type, a),
                                         backend="reference")(a)]
    want = scipy.linalg.lapack.dsytrd(a, lower=int(lower))
    for part, expected in zip(got[:4], want[:4]):
        np.testing.assert_allclose(part, expected, rtol=1e-12, atol=1e-12 * n)
    assert got[4] == want[4] == 0


def test_tridiagonal_modules_are_scipys_sytrd():
    """JAX's lax.linalg.tridiagonal (tests/data/jax_lapack: lapack_ssytrd_ffi lower, lapack_dsytrd_ffi upper and
    batched): every result."""
    a = _general(6, 6)
    assert_scipys_sytrd(_module("tridiagonal")(a), a, lower=True, rtol=2e-5, atol=2e-5)
    b = _general(2, 5, 5, dtype=np.float64)
    assert_scipys_sytrd(_module("tridiagonal_upper_f64")(b), b, lower=False, rtol=1e-12, atol=1e-12)


def test_the_upper_tridiagonal_module_is_scipys_sytrd_on_iree_cpu():
    """The upper form reverses the lower reduction's results: llvm-cpu could not compile the reverse of its d (a
    unit slice of a strided diagonal, compile_rewrites.reverses_before_strided_slices); the lower form's ops are
    those of the upper's."""
    b = _general(2, 5, 5, dtype=np.float64)
    assert_scipys_sytrd(_module("tridiagonal_upper_f64", "iree:cpu")(b), b, lower=False, rtol=1e-12, atol=1e-12)
