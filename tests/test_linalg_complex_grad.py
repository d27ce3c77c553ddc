"""Reverse-mode gradients of the linalg functions on complex matrices, against central differences of numpy's
and scipy's functions, in JAX's convention (hlojit's, tests/test_complex.py): for a real loss L of complex a,
grad = dL/dRe a - i dL/dIm a, so that dL = Re(sum(grad * da)). Every case is checked on the reference backend
(complex128, and complex64 against the same differences), plus one small iree:cpu module of a few of them
(complex128: complex64 is the same StableHLO in another dtype).

Losses of eigenvectors and singular vectors depend on them only through |v|, v v^H or u_i vh_i (their phases
are arbitrary, and JAX's rules give the gradient of such gauge-invariant losses)."""
import numpy as np
import pytest
import scipy.linalg

import hlojit as hj
from hlojit import ops
from hlojit.errors import DifferentiationError

L = ops.linalg
RNG = np.random.default_rng(1213)


def _z(*shape):
    return RNG.normal(size=shape) + 1j * RNG.normal(size=shape)


A = _z(3, 3) + 2 * np.eye(3)
B = _z(3, 2)
HPD = A @ A.conj().T + np.eye(3)
HPD_BATCH = np.stack([HPD, _z(3, 3) @ _z(3, 3).conj().T + np.eye(3)])
TALL = _z(4, 2)
W = _z(4, 4)                      # the weights of the losses: L = sum(Re(W * f(a)))
WEIGHTS = RNG.normal(size=3)      # of eigenvalues and singular values


def _weighted(xp, x):
    """sum(Re(w * x)) with w the corner of W (its first row for a vector) that x's last dimensions take."""
    w = W[:x.shape[-2], :x.shape[-1]] if x.ndim >= 2 else W[0, :x.shape[-1]]
    return xp.sum(xp.real(x * w))


def _moduli(xp, x):
    """sum(Re(w) |x|^2) with w as in _weighted: phase-free, for singular vectors and eigenvectors."""
    return xp.sum(xp.abs(x) ** 2 * W.real[:x.shape[-2], :x.shape[-1]])


def _gauge_free(xp, v, k=1):
    """v's first k columns as the projector v_k v_k^H (independent of their phases)."""
    first = v[..., :, :k]
    return first @ xp.conj(xp.swapaxes(first, -1, -2))


def _outer(xp, usv, i=1):
    """u_i s_0 vh_i: singular vectors through a gauge-invariant product (the phase coupling of u and vh)."""
    u, s, vh = usv
    return u[..., :, i:i + 1] @ vh[..., i:i + 1, :] * s[..., :1, None]


# name -> (hlojit's loss, numpy's loss, argument); each loss is real, of one complex argument
CASES = {
    "solve a": (lambda a: _weighted(ops, L.solve(a, B)), lambda a: _weighted(np, np.linalg.solve(a, B)), A),
    "solve b": (lambda b: _weighted(ops, L.solve(A, b)), lambda b: _weighted(np, np.linalg.solve(A, b)), B),
    "solve vector": (lambda a: _weighted(ops, L.solve(a, B[:, 0])),
                     lambda a: _weighted(np, np.linalg.solve(a, B[:, 0])), A),
    "inv": (lambda a: _weighted(ops, L.inv(a)), lambda a: _weighted(np, np.linalg.inv(a)), A),
    "det": (lambda a: ops.real(L.det(a) * (1 - 2j)), lambda a: np.real(np.linalg.det(a) * (1 - 2j)), A),
    "det batch": (lambda a: _weighted(ops, L.det(a)), lambda a: _weighted(np, np.linalg.det(a)), HPD_BATCH),
    "slogdet": (lambda a: L.slogdet(a)[1] + ops.real(L.slogdet(a)[0] * (0.3 + 1j)),
                lambda a: np.linalg.slogdet(a)[1] + np.real(np.linalg.slogdet(a)[0] * (0.3 + 1j)), A),
    "eigvalsh": (lambda a: ops.sum(L.eigvalsh(a) * WEIGHTS), lambda a: np.sum(np.linalg.eigvalsh(a) * WEIGHTS), HPD),
    "eigvalsh upper": (lambda a: ops.sum(L.eigvalsh(a, UPLO="U") * WEIGHTS),
                       lambda a: np.sum(np.linalg.eigvalsh(a, UPLO="U") * WEIGHTS), HPD),
    "eigh": (lambda a: ops.sum(L.eigh(a)[0] * WEIGHTS) + _moduli(ops, L.eigh(a)[1]),
             lambda a: np.sum(np.linalg.eigh(a)[0] * WEIGHTS) + _moduli(np, np.linalg.eigh(a)[1]), HPD),
    "eigh projector batch": (lambda a: _weighted(ops, _gauge_free(ops, L.eigh(a)[1], 2)),
                             lambda a: _weighted(np, _gauge_free(np, np.linalg.eigh(a)[1], 2)), HPD_BATCH),
    "svd": (lambda a: _weighted(ops, _outer(ops, L.svd(a))) + _moduli(ops, L.svd(a)[2]),
            lambda a: _weighted(np, _outer(np, np.linalg.svd(a))) + _moduli(np, np.linalg.svd(a)[2]), A),
    "svd tall": (lambda a: _weighted(ops, _outer(ops, L.svd(a, full_matrices=False))),
                 lambda a: _weighted(np, _outer(np, np.linalg.svd(a, full_matrices=False))), TALL),
    "svd wide": (lambda a: _weighted(ops, _outer(ops, L.svd(a, full_matrices=False), 0)),
                 lambda a: _weighted(np, _outer(np, np.linalg.svd(a, full_matrices=False), 0)), TALL.T),
    "pinv": (lambda a: _weighted(ops, L.pinv(a)), lambda a: _weighted(np, np.linalg.pinv(a)), TALL),
    "cholesky": (lambda a: _weighted(ops, L.cholesky(a)), lambda a: _weighted(np, np.linalg.cholesky(a)), HPD),
    "cholesky upper": (lambda a: _weighted(ops, L.cholesky(a, upper=True)),
                       lambda a: _weighted(np, np.linalg.cholesky(a, upper=True)), HPD),
    "cho_solve": (lambda a: _weighted(ops, L.cho_solve(L.cho_factor(a), B)),
                  lambda a: _weighted(np, scipy.linalg.cho_solve(scipy.linalg.cho_factor(a), B)), HPD),
    "cho_solve lower": (lambda a: _weighted(ops, L.cho_solve(L.cho_factor(a, lower=True), B)),
                        lambda a: _weighted(np, scipy.linalg.cho_solve(scipy.linalg.cho_factor(a, lower=True), B)),
                        HPD),
    "qr": (lambda a: _weighted(ops, L.qr(a)[0]) + _weighted(ops, L.qr(a)[1]),
           lambda a: _weighted(np, np.linalg.qr(a)[0]) + _weighted(np, np.linalg.qr(a)[1]), TALL),
    "lu": (lambda a: _weighted(ops, L.lu(a)[1]) + _weighted(ops, L.lu(a)[2]),
           lambda a: _weighted(np, scipy.linalg.lu(a)[1]) + _weighted(np, scipy.linalg.lu(a)[2]), A),
    "lu_solve": (lambda a: sum(_weighted(ops, L.lu_solve(L.lu_factor(a), B, trans=t)) for t in (0, 1, 2)),
                 lambda a: sum(_weighted(np, scipy.linalg.lu_solve(scipy.linalg.lu_factor(a), B, trans=t))
                               for t in (0, 1, 2)), A),
    "solve_triangular": (lambda a: sum(_weighted(ops, L.solve_triangular(a, B, trans=t, lower=t == 1)) for t in "NTC"),
                         lambda a: sum(_weighted(np, scipy.linalg.solve_triangular(a, B, trans=t, lower=t == 1))
                                       for t in "NTC"), A),
    "solve_triangular b": (lambda b: _weighted(ops, L.solve_triangular(A, b, trans=2, unit_diagonal=True)),
                           lambda b: _weighted(np, scipy.linalg.solve_triangular(A, b, trans=2, unit_diagonal=True)),
                           B),
    # the real eigvalsh had no gradient at all (autodiff met the Jacobi sweeps' while_loop): the rule is shared
    "eigvalsh real": (lambda a: ops.sum(L.eigvalsh(a) * WEIGHTS), lambda a: np.sum(np.linalg.eigvalsh(a) * WEIGHTS),
                      HPD.real),
}


def _central_differences(loss, a, h=1e-6):
    """dL/dRe a - i dL/dIm a (just dL/da for a real a), complex128 (float64), by central differences."""
    a = a.astype(np.complex128 if np.iscomplexobj(a) else np.float64)
    grad = np.zeros_like(a)
    for index in np.ndindex(a.shape):
        step = np.zeros_like(a)
        step[index] = h
        grad[index] = (loss(a + step) - loss(a - step)) / (2 * h)
        if np.iscomplexobj(a):
            grad[index] -= 1j * (loss(a + 1j * step) - loss(a - 1j * step)) / (2 * h)
    return grad


_EXPECTED = {}


def _expected(name):
    if name not in _EXPECTED:
        _, theirs, x = CASES[name]
        _EXPECTED[name] = _central_differences(theirs, x)
    return _EXPECTED[name]


def _in(dtype, x):
    return x.astype(dtype if np.iscomplexobj(x) else np.finfo(dtype).dtype)


def _check(got, name, dtype):
    """got within what complex64 (or the differences' own error, ~1e-9 of |grad|, for complex128) allows."""
    want = _expected(name)
    relative = 1e-7 if dtype == np.complex128 else 3e-3
    assert got.dtype == _in(dtype, CASES[name][2]).dtype
    np.testing.assert_allclose(got, want, atol=relative * np.abs(want).max())


# One compiled function per case: all the cases' gradients in one function took 4x as long (16 s against 3.5 s,
# 12-02, reference backend, c128).
@pytest.mark.parametrize("dtype", [np.complex128, np.complex64], ids=["c128", "c64"])
@pytest.mark.parametrize("name", list(CASES))
def test_gradients_match_central_differences(name, dtype):
    loss, _, x = CASES[name]
    _check(np.asarray(hj.jit(hj.grad(loss), backend="reference")(_in(dtype, x))), name, dtype)


# One module, a case per factorization whose backward pass runs on iree:cpu (LU's: solve with respect to a;
# Cholesky's); solve b's and slogdet's are that LU's solves and inverse again, the reference backend's to check
# (each case alone compiles in ~4 s; the four took ~17 s of the suite, 2026-12-06). With eigvalsh's Jacobi loop
# next to these, IREE 3.13's cpu fails to compile it ("'scf.while' op ... region branch point has 8 operands, but
# region successor needs 10 inputs", as it does QDWH next to Jacobi: spectral.py).
ON_IREE = ["solve a", "cholesky upper"]


def test_gradients_on_iree_cpu():
    args = [CASES[name][2] for name in ON_IREE]
    grads = hj.jit(lambda *xs: [hj.grad(CASES[name][0])(x) for name, x in zip(ON_IREE, xs)], backend="iree:cpu")(*args)
    for name, got in zip(ON_IREE, grads):
        _check(np.asarray(got), name, np.complex128)


def test_cholesky_reads_the_triangle_numpy_reads():
    """upper=True (and cho_factor's default, lower=False) read the upper triangle, as numpy's and LAPACK's
    uplo='U' (they read the lower one); a complex diagonal's imaginary parts are not read (they reached L's
    diagonal). Real and complex, against numpy and scipy."""
    real = HPD.real + np.triu(np.ones((3, 3)), 1)      # the two triangles differ: each call reads one
    stored = HPD + np.tril(_z(3, 3), -1) + 0.5j * np.eye(3)

    def ours(r, c):
        return (L.cholesky(r, upper=True), L.cholesky(c, upper=True), L.cholesky(c), L.cho_solve(L.cho_factor(c), B))
    expected = (np.linalg.cholesky(real, upper=True), np.linalg.cholesky(stored, upper=True),
                np.linalg.cholesky(stored), scipy.linalg.cho_solve(scipy.linalg.cho_factor(stored), B))
    for got, want in zip(hj.jit(ours, backend="reference")(real, stored), expected):
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12, atol=1e-12)


def test_svd_with_full_matrices_of_a_non_square_matrix_refuses():
    """As JAX (and the real case): u's completion columns are any orthonormal ones, with no derivative."""
    with pytest.raises(DifferentiationError, match="svd: has no gradient for non-square matrices with full_matrices"):
        hj.jit(hj.grad(lambda a: ops.sum(ops.abs(L.svd(a)[0]))), backend="reference")(TALL)
