"""Complex svd and what is built on it (svdvals, pinv, lstsq, matrix_rank, cond, norm's 2 / -2 / 'nuc') against
numpy: complex64 and complex128 on the reference backend, complex128 on the IREE targets (complex64 is the same
StableHLO in another dtype). Every case of one backend and dtype is one compiled function, on small shapes
(3 x 3, 4 x 2, 2 x 4, a batched (2, 3, 3), a rank-deficient 4 x 4): the one-sided Jacobi path with complex
rotations. The polar (QDWH) path runs on the reference backend with spectral.JACOBI_SVD_UP_TO lowered, so
that small matrices take it (n above 128 traces and runs for a minute there).

Singular vectors are unique up to a phase per column: u and vh are checked by what they reconstruct and by
being unitary, s against numpy's."""
import numpy as np
import pytest

import hlojit as hj
from hlojit import ops
from hlojit.frontend.ops.linalg import spectral

from conftest import LIBRARY_BACKENDS, assert_close

L = ops.linalg
RNG = np.random.default_rng(1212)


def _z(*shape):
    return RNG.normal(size=shape) + 1j * RNG.normal(size=shape)


def _inputs(dtype):
    batch = _z(2, 3, 3)
    batch[1, :, 2] = batch[1, :, 0] * (0.5 - 2j)              # rank 2: u's last column is a completion
    x = dict(tall=_z(4, 2), wide=_z(2, 4), batch=batch, b=_z(4), b2=_z(2))
    return {k: v.astype(dtype) for k, v in x.items()}


# name -> full_matrices. Two shapes of Jacobi program (4 x 2, the wide one's transpose, and the (2, 3, 3) stack):
# IREE compiles each shape's dispatches once, however many calls share them.
SVD_OF = {"tall": True, "wide": True, "tall reduced": False, "batch": True}


def _matrix(x, name):
    return x[name.split()[0]]


def _cases(x):
    """name -> (hlojit's computation, numpy's), each checked by value. The deficient matrix's zero singular
    value is rounding to numpy and here: pinv and matrix_rank of the stack cut it with an rtol."""
    tall, wide, batch = x["tall"], x["wide"], x["batch"]
    return {
        "svdvals wide": (lambda: L.svdvals(wide), lambda: np.linalg.svdvals(wide)),
        "svd compute_uv=False": (lambda: L.svd(batch, compute_uv=False), lambda: np.linalg.svd(batch, compute_uv=False)),
        "pinv tall": (lambda: L.pinv(tall), lambda: np.linalg.pinv(tall)),
        "pinv batch": (lambda: L.pinv(batch, rtol=1e-3), lambda: np.linalg.pinv(batch, rtol=1e-3)),
        "lstsq tall": (lambda: tuple(L.lstsq(tall, x["b"])), lambda: np.linalg.lstsq(tall, x["b"])),
        "lstsq wide": (lambda: tuple(L.lstsq(wide, x["b2"])), lambda: np.linalg.lstsq(wide, x["b2"])),
        "matrix_rank": (lambda: L.matrix_rank(batch, rtol=1e-3), lambda: np.linalg.matrix_rank(batch, rtol=1e-3)),
        "cond": (lambda: (L.cond(tall), L.cond(wide, -2)), lambda: (np.linalg.cond(tall), np.linalg.cond(wide, -2))),
        "norm": (lambda: (L.norm(tall, 2), L.norm(wide, -2), L.matrix_norm(batch, ord="nuc")),
                 lambda: (np.linalg.norm(tall, 2), np.linalg.norm(wide, -2), np.linalg.matrix_norm(batch, ord="nuc"))),
        "norm nuc": (lambda: L.norm(wide, "nuc"), lambda: np.linalg.norm(wide, "nuc")),
    }


# What the IREE targets compile: each call is a Jacobi loop of its own. These four share one 4 x 2 program
# (wide's is its transpose): 4.3 s on iree:cpu, 4.9 s on vmvx at idle (12-02), where adding the (2, 3, 3)
# stack's svd and the wide svd doubled it; the rest is the same StableHLO around the same loops (reference).
ON_IREE = {"tall", "pinv tall", "lstsq tall", "norm nuc"}


def _all_of(names):
    """One function of the inputs (arguments, so each target computes the cases at run time)."""
    def run(x):
        cases = _cases(x)
        return ({name: L.svd(_matrix(x, name), full_matrices=full) for name, full in SVD_OF.items() if name in names},
                {name: f() for name, (f, _) in cases.items() if name in names})
    return run


_RESULTS = {}


@pytest.fixture(params=LIBRARY_BACKENDS)
def backend(request):
    """Not vmvx (conftest.LIBRARY_BACKENDS): its complex128 arithmetic is test_complex's and test_complex_pairs'
    (this module took ~10 s of the suite there, 2026-12-06)."""
    return request.param


pytestmark = pytest.mark.shares_compiles   # a backend's tests on one xdist worker: its module compiles once


def _results(backend, dtype):
    """(inputs, cases, svd results, case results) of one backend and dtype, from ONE compiled function."""
    if backend != "reference" and dtype == np.complex64:
        pytest.skip("the IREE targets compile complex128 only (the same program)")
    key = (backend, dtype)
    if key not in _RESULTS:
        x = _inputs(dtype)
        cases = _cases(x)
        names = set(SVD_OF) | set(cases) if backend == "reference" else ON_IREE
        svds, values = hj.jit(_all_of(names), backend=backend)(x)
        _RESULTS[key] = x, cases, svds, values
    return _RESULTS[key]


@pytest.fixture(scope="module", params=[np.complex64, np.complex128], ids=["c64", "c128"])
def dtype(request):
    return request.param


def assert_svd(a, full: bool, u, s, vh, within: float = 20):
    """s real, descending, numpy's; u diag(s) vh = a; u and vh unitary and shaped as numpy's; within
    `within` eps (of |s|max)."""
    real = np.finfo(a.dtype).dtype
    u, s, vh = (np.asarray(t) for t in (u, s, vh))
    expected_u, expected_s, expected_vh = np.linalg.svd(a.astype(np.complex128), full_matrices=full)
    assert (u.dtype, s.dtype, vh.dtype) == (a.dtype, real, a.dtype)
    assert (u.shape, s.shape, vh.shape) == (expected_u.shape, expected_s.shape, expected_vh.shape)
    tolerance = within * np.finfo(real).eps
    scale = expected_s[..., :1]
    k = s.shape[-1]
    assert np.all(np.abs(s - expected_s) <= tolerance * scale)
    assert np.all(np.diff(s, axis=-1) <= 0)
    rebuilt = (u[..., :, :k] * s[..., None, :].astype(np.complex128)) @ vh[..., :k, :]
    assert np.all(np.abs(rebuilt - a).max(axis=(-2, -1)) <= tolerance * scale[..., 0])
    for q in (u, np.conj(np.swapaxes(vh, -1, -2))):
        assert np.abs(np.conj(np.swapaxes(q, -1, -2)) @ q - np.eye(q.shape[-1])).max() <= tolerance


def test_svd_reconstructs_unitarily(backend, dtype):
    x, _, svds, _ = _results(backend, dtype)
    for name, full in SVD_OF.items():
        if name not in svds:       # reference only
            continue
        try:
            assert_svd(_matrix(x, name), full, *svds[name])
        except AssertionError as e:
            raise AssertionError(f"svd {name} on {backend}: {e}") from None


def test_against_numpy(backend, dtype):
    _, cases, _, actual = _results(backend, dtype)
    for name, (_, expected) in cases.items():
        if name not in actual:     # reference only
            continue
        want, got = expected(), actual[name]
        pairs = zip(got, want) if isinstance(want, tuple) else [(got, want)]
        for g, w in pairs:
            g, w = np.asarray(g), np.asarray(w)
            try:
                assert g.shape == w.shape
                if w.dtype.kind in "iu":                   # ranks: int32 here, numpy's int64
                    assert np.array_equal(g, w)
                elif w.size:
                    assert g.dtype == w.dtype
                    assert_close(g, w.astype(g.dtype), scale=50)
            except AssertionError as e:
                raise AssertionError(f"{name} on {backend}: {e}") from None


def test_the_polar_path(monkeypatch, precision=np.complex128):
    """QDWH through the complex QR and Cholesky, then the Hermitian eigh of h: tall (a QR first, its Q
    completing u), wide, and a batch whose second matrix is rank-deficient (the completion's cond).
    complex128 alone: complex64's program is the same in another dtype."""
    monkeypatch.setattr(spectral, "JACOBI_SVD_UP_TO", 1)
    tall, wide, batch = _z(5, 3), _z(2, 4), _z(2, 4, 4)
    batch[1, :, 3] = batch[1, :, 0]
    tall, wide, batch = (t.astype(precision) for t in (tall, wide, batch))
    lowered = hj.jit(L.svd, backend="reference").lower(batch).mlir
    assert "stablehlo.if" in lowered       # the completion's cond: the polar path (Jacobi has none)
    run = hj.jit(lambda t, w, b: (L.svd(t), L.svd(w), L.svd(b, full_matrices=False), L.svdvals(b)),
                 backend="reference")
    (*tall_svd,), (*wide_svd,), (*batch_svd,), s = run(tall, wide, batch)
    assert_svd(tall, True, *tall_svd, within=50)
    assert_svd(wide, True, *wide_svd, within=50)
    assert_svd(batch, False, *batch_svd, within=50)
    assert_close(s, np.linalg.svd(batch, compute_uv=False), scale=50)


def _central_differences(loss, a, h=1e-6):
    """dL/dRe a - i dL/dIm a (the gradient's convention, JAX's) of a real loss, by central differences."""
    grad = np.zeros_like(a)
    for index in np.ndindex(a.shape):
        step = np.zeros_like(a)
        step[index] = h
        grad[index] = ((loss(a + step) - loss(a - step)) - 1j * (loss(a + 1j * step) - loss(a - 1j * step))) / (2 * h)
    return grad


def test_the_gradient_of_singular_values():
    """svdvals' rule conj(u diag(gs) v^H), through norm 'nuc' and a weighted sum, tall and wide, against
    central differences (reference, complex128)."""
    tall, wide = _z(4, 3), _z(2, 3)
    weights = np.array([1.0, 0.5, 0.25])

    def mine(t, w):
        return (hj.grad(lambda t: ops.sum(L.svdvals(t) * weights))(t), hj.grad(lambda w: L.norm(w, "nuc"))(w))

    got_tall, got_wide = hj.jit(mine, backend="reference")(tall, wide)
    want_tall = _central_differences(lambda t: np.sum(np.linalg.svd(t, compute_uv=False) * weights), tall)
    want_wide = _central_differences(lambda w: np.linalg.norm(w, "nuc"), wide)
    np.testing.assert_allclose(np.asarray(got_tall), want_tall, atol=1e-7)
    np.testing.assert_allclose(np.asarray(got_wide), want_wide, atol=1e-7)
