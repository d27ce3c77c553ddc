"""hlojit.ops.linalg against numpy / scipy on every backend: values where they are unique (Cholesky, LU,
solves, determinants, norms, expm ...), reconstruction and orthogonality where signs are not (qr, eigh,
svd); the multi-panel (blocked) paths at n = 70 (two panels, the second short); singular and non-positive-definite
input as JAX gives it; gradients against central differences; errors naming the op and the user's line.

Each group is ONE compiled module per backend (conftest.group_result); a case is (id, fn, inputs, check)
and `check(outputs, inputs)` asserts.
"""
from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg as sl

import hlojit as hj
import hlojit.ops.linalg  # noqa: F401  (importable by its name)
from hlojit import ops

from conftest import BACKENDS, LIBRARY_BACKENDS, group_result

L = ops.linalg
rng = np.random.default_rng(12)
T = lambda x: np.swapaxes(x, -1, -2)  # noqa: E731


def f32(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def spd(*shape, dtype=np.float32):
    m = rng.standard_normal(shape)
    return (m @ T(m) + shape[-1] * np.eye(shape[-1])).astype(dtype)


def tol_of(x) -> float:
    return 3e-5 if np.asarray(x).dtype == np.float32 else 1e-11


def close(actual, expected, tol=None, scale=1.0):
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.shape == expected.shape, f"shape {actual.shape} != {expected.shape}"
    tol = tol or tol_of(actual)
    np.testing.assert_allclose(actual.astype(np.float64), expected.astype(np.float64), rtol=tol * scale,
                               atol=tol * scale * max(1.0, float(np.max(np.abs(expected), initial=0))))


def orthonormal(q, tol=None):
    close(T(q) @ q, np.broadcast_to(np.eye(q.shape[-1]), q.shape[:-2] + (q.shape[-1],) * 2), tol)


def against(reference, tol=None, scale=1.0):
    """A check comparing the outputs with reference(*inputs) (numpy or scipy, in float64)."""
    def check(out, args):
        expected = reference(*[np.asarray(a, np.float64) if np.asarray(a).dtype.kind == "f" else a for a in args])
        if isinstance(expected, tuple):
            for o, e in zip(out, expected):
                close(o, e, tol, scale)
        else:
            close(out, expected, tol, scale)
        dtype = np.asarray(args[0]).dtype
        for o in (out if isinstance(out, (tuple, list)) else [out]):
            if np.asarray(o).dtype.kind == "f":
                assert np.asarray(o).dtype == dtype
    return check


def batched(fn):
    """fn applied matrix by matrix over the leading dimensions of its first argument (scipy is not batched)."""
    def apply(a, *rest):
        if a.ndim == 2:
            return fn(a, *rest)
        results = [apply(a[i], *[r[i] if np.ndim(r) == a.ndim else r for r in rest]) for i in range(a.shape[0])]
        if isinstance(results[0], tuple):
            return tuple(np.stack(parts) for parts in zip(*results))
        return np.stack(results)
    return apply


def check_qr(mode):
    def check(out, args):
        a = np.asarray(args[0], np.float64)
        tol = tol_of(out[0])
        q, r = (np.asarray(x, np.float64) for x in out)
        close(q @ r, a, tol, scale=3)
        orthonormal(q, tol)
        assert np.allclose(np.tril(r, -1), 0)
        close(np.abs(r), np.abs(np.linalg.qr(a, mode)[1]), tol, scale=3)
    return check


def check_eigh(out, args):
    a = np.asarray(args[0], np.float64)
    tol = tol_of(out[0])
    w, v = (np.asarray(x, np.float64) for x in out)
    sym = np.tril(a) + T(np.tril(a, -1))
    close(w, np.linalg.eigvalsh(sym), tol, scale=10)
    close((v * w[..., None, :]) @ T(v), sym, tol, scale=10)
    orthonormal(v, tol)


def check_svd(full):
    def check(out, args):
        a = np.asarray(args[0], np.float64)
        tol = tol_of(out[1])
        u, s, vh = (np.asarray(x, np.float64) for x in out)
        k = min(a.shape[-2:])
        close(s, np.linalg.svd(a, compute_uv=False), tol, scale=10)
        close((u[..., :, :k] * s[..., None, :]) @ vh[..., :k, :], a, tol, scale=10)
        orthonormal(u, tol)
        orthonormal(T(vh), tol)
        assert u.shape[-1] == (a.shape[-2] if full else k) and vh.shape[-2] == (a.shape[-1] if full else k)
    return check


def check_plu(out, args):
    tol = tol_of(out[1])
    p, l, u = (np.asarray(x, np.float64) for x in out)
    a = np.asarray(args[0], np.float64)
    close(p @ l @ u, a, tol)
    sp, slo, su = batched(sl.lu)(a)
    close(p, sp)
    close(l, slo, tol, scale=10)
    close(u, su, tol, scale=10)


def check_lu_factor(out, args):
    lu, piv = out
    expected = batched(sl.lu_factor)(np.asarray(args[0], np.float64))
    close(lu, expected[0])
    np.testing.assert_array_equal(np.asarray(piv), expected[1])


def same_as_jax(expected):
    def check(out, args):
        np.testing.assert_array_equal(np.isnan(np.asarray(out)), np.isnan(expected))
        finite = np.isfinite(expected)
        close(np.asarray(out)[finite], expected[finite])
    return check


SINGULAR = np.array([[1, 2, 3], [2, 4, 6], [1, 0, 1]], np.float32)
NOT_PD = np.array([[1, 2], [2, 1]], np.float32)
HILBERT = sl.hilbert(6)
PD_AND_NOT = np.stack([spd(4, 4), np.eye(4, dtype=np.float32) + np.float32(2) * np.eye(4, k=1, dtype=np.float32)
                       + np.float32(2) * np.eye(4, k=-1, dtype=np.float32)])   # the second is not positive definite
REGULAR_AND_SINGULAR = np.stack([f32(5, 5) + 5 * np.eye(5, dtype=np.float32),   # the second: row 4 = rows 2 + 3,
                                 np.array([[1, 2, 3, 4, 5], [2, 4, 6, 8, 10], [1, 0, 1, 0, 1], [0, 1, 0, 1, 0],
                                           [1, 1, 1, 1, 1]], np.float32)])   # U gets exact zero pivots

FACTOR = [
    ("cholesky", L.cholesky, (spd(2, 4, 4),), against(np.linalg.cholesky)),
    ("cholesky-upper", lambda a: L.cholesky(a, upper=True), (spd(4, 4),), against(lambda a: np.linalg.cholesky(a).T)),
    ("cholesky-1x1", L.cholesky, (np.array([[4.0]], np.float32),), against(np.linalg.cholesky)),
    ("cholesky-f64", L.cholesky, (spd(2, 6, 6, dtype=np.float64),), against(np.linalg.cholesky)),
    ("cholesky-not-pd-nan", L.cholesky, (PD_AND_NOT,), lambda out, args: np.testing.assert_array_equal(
        np.isnan(np.asarray(out)), [np.zeros((4, 4), bool), np.tril(np.ones((4, 4), bool))])),   # as JAX, per matrix
    ("solve_triangular-lower", lambda a, b: L.solve_triangular(a, b, lower=True),
     (f32(5, 5) + 5 * np.eye(5, dtype=np.float32), f32(5, 2)),
     against(lambda a, b: sl.solve_triangular(a, b, lower=True))),
    ("solve_triangular-upper-trans-unit", lambda a, b: L.solve_triangular(a, b, trans="T", unit_diagonal=True),
     (f32(2, 4, 4), f32(4)),
     against(batched(lambda a, b: sl.solve_triangular(a, b, trans="T", unit_diagonal=True)), scale=10)),
    ("cho_solve", lambda a, b: L.cho_solve(L.cho_factor(a), b), (spd(2, 4, 4), f32(2, 4, 3)), against(np.linalg.solve)),
    ("cho_solve-lower", lambda a, b: L.cho_solve(L.cho_factor(a, lower=True), b), (spd(4, 4), f32(4)),
     against(np.linalg.solve)),
    ("solve", L.solve, (f32(2, 5, 5), f32(2, 5, 2)), against(np.linalg.solve, scale=10)),
    ("solve-vector-broadcast", L.solve, (f32(2, 4, 4), f32(4)), against(np.linalg.solve, scale=10)),
    ("solve-ill-conditioned-f64", L.solve, (HILBERT, np.ones(6)),
     lambda out, args: close(HILBERT @ np.asarray(out), np.ones(6), 1e-9)),
    ("inv", L.inv, (f32(2, 5, 5),), against(np.linalg.inv, scale=10)),
    ("inv-1x1", L.inv, (np.array([[4.0]], np.float32),), against(np.linalg.inv)),
    ("inv-singular-inf", L.inv, (REGULAR_AND_SINGULAR,), lambda out, args: (
        close(np.asarray(out)[0], np.linalg.inv(np.float64(args[0][0])), scale=10),
        np.testing.assert_equal(np.isfinite(np.asarray(out)[1]).all(), False))),
    ("det", L.det, (f32(2, 5, 5),), against(np.linalg.det)),
    ("det-singular-0", L.det, (SINGULAR,), against(np.linalg.det)),
    # IREE 3.13 failed on LU's loop for 1 x 1 matrices, or its compiler died ("LLVM ERROR: out of memory")
    ("det-1x1", L.det, (f32(2, 1, 1),), against(np.linalg.det)),
    ("slogdet", L.slogdet, (f32(2, 5, 5),), against(np.linalg.slogdet)),
    ("slogdet-singular", L.slogdet, (SINGULAR,), lambda out, args: (close(out[0], 0.0),
                                                                    np.testing.assert_equal(float(out[1]), -np.inf))),
    ("lu_factor", L.lu_factor, (f32(2, 5, 5),), check_lu_factor),
    ("lu_solve", lambda a, b: L.lu_solve(L.lu_factor(a), b), (f32(5, 5), f32(5, 2)),
     against(np.linalg.solve, scale=10)),
    ("lu_solve-trans", lambda a, b: L.lu_solve(L.lu_factor(a), b, trans=1), (f32(5, 5), f32(5)),
     against(lambda a, b: np.linalg.solve(a.T, b), scale=10)),
    ("lu", L.lu, (f32(2, 5, 5),), check_plu),
    ("lu-tall", L.lu, (f32(2, 5, 3),), check_plu),
    ("lu-wide", L.lu, (f32(3, 5),), check_plu),
    ("lu-singular", L.lu, (SINGULAR,), check_plu),
    ("qr", L.qr, (f32(2, 6, 4),), check_qr("reduced")),
    ("qr-wide-f64", L.qr, (np.float64(1) * f32(3, 5),), check_qr("reduced")),
    ("qr-complete", lambda a: L.qr(a, "complete"), (f32(2, 6, 4),), check_qr("complete")),
    ("qr-r", lambda a: L.qr(a, "r"), (f32(5, 3),),
     lambda out, args: close(np.abs(out), np.abs(np.linalg.qr(args[0], "r")))),
]

SPECTRAL = [
    ("eigh", L.eigh, (f32(3, 6, 6),), check_eigh),
    ("eigh-odd-upper", lambda a: L.eigh(T(a), UPLO="U"), (f32(3, 5, 5),), check_eigh),   # T(a)'s upper = a's lower
    ("eigh-1x1", L.eigh, (np.array([[3.0]], np.float32),), check_eigh),
    ("eigh-f64-repeated", L.eigh, (np.diag([1.0, 2.0, 2.0, 3.0]) + 0.0,), check_eigh),
    ("eigvalsh", L.eigvalsh, (f32(2, 4, 4),), against(lambda a: np.linalg.eigvalsh(a), scale=10)),
    ("svd", L.svd, (f32(2, 5, 5),), check_svd(True)),
    ("svd-tall-thin", lambda a: L.svd(a, full_matrices=False), (f32(7, 3),), check_svd(False)),
    ("svd-wide-full", L.svd, (f32(2, 3, 4),), check_svd(True)),
    ("svd-rank-deficient", L.svd, (np.outer(np.arange(1.0, 5.0), np.ones(3)).astype(np.float32),), check_svd(True)),
    ("svd-f64", lambda a: L.svd(a, full_matrices=False), (np.float64(1) * f32(6, 4),), check_svd(False)),
    ("svdvals", L.svdvals, (f32(3, 4, 6),), against(lambda a: np.linalg.svd(a, compute_uv=False), scale=10)),
    ("pinv", L.pinv, (f32(4, 3),), against(np.linalg.pinv, scale=10)),
    ("pinv-rank-deficient", L.pinv, (SINGULAR,), against(np.linalg.pinv, scale=30)),
    ("lstsq", L.lstsq, (f32(4, 3), f32(4, 2)), against(lambda a, b: np.linalg.lstsq(a, b), scale=10)),
    ("lstsq-vector-square", lambda a, b: L.lstsq(a, b)[0], (f32(4, 4), f32(4)),
     against(lambda a, b: np.linalg.lstsq(a, b)[0], scale=30)),
    ("matrix_rank", L.matrix_rank, (np.stack([SINGULAR, np.eye(3, dtype=np.float32)]),),
     against(np.linalg.matrix_rank)),
    ("cond", L.cond, (f32(2, 4, 3),), against(np.linalg.cond, scale=30)),
    ("cond-fro", lambda a: L.cond(a, "fro"), (f32(4, 4),), against(lambda a: np.linalg.cond(a, "fro"), scale=30)),
    ("norm-2", lambda a: L.norm(a, 2), (f32(4, 3),), against(lambda a: np.linalg.norm(a, 2), scale=10)),
    ("norm-nuc-axes", lambda a: L.norm(a, "nuc", axis=(0, 2)), (f32(3, 2, 4),),
     against(lambda a: np.linalg.norm(a, "nuc", axis=(0, 2)), scale=10)),
    ("matrix_norm-minus-2", lambda a: L.matrix_norm(a, ord=-2, keepdims=True), (f32(2, 3, 3),),
     against(lambda a: np.linalg.matrix_norm(a, ord=-2, keepdims=True), scale=10)),
]

NORMS = [("norm", L.norm, (f32(3, 4),), against(np.linalg.norm))] + [
    (f"norm-vector-{o}", lambda x, o=o: L.norm(x, o), (f32(7),), against(lambda x, o=o: np.linalg.norm(x, o)))
    for o in (None, 1, 3, 0, np.inf, -np.inf, -1.5)] + [
    (f"norm-matrix-{o}", lambda x, o=o: L.norm(x, o), (f32(3, 4),), against(lambda x, o=o: np.linalg.norm(x, o)))
    for o in ("fro", 1, -1, np.inf, -np.inf)] + [
    ("norm-axis-keepdims", lambda x: L.norm(x, axis=1, keepdims=True), (f32(2, 3, 4),),
     against(lambda x: np.linalg.norm(x, axis=1, keepdims=True))),
    ("norm-pair-keepdims", lambda x: L.norm(x, np.inf, axis=(2, 0), keepdims=True), (f32(2, 3, 4),),
     against(lambda x: np.linalg.norm(x, np.inf, axis=(2, 0), keepdims=True))),
    ("norm-all-keepdims", lambda x: L.norm(x, keepdims=True), (f32(2, 3, 4),),
     against(lambda x: np.linalg.norm(x, keepdims=True))),
    ("vector_norm", lambda x: L.vector_norm(x, axis=(0, 2), ord=3), (f32(2, 3, 4),),
     against(lambda x: np.linalg.vector_norm(x, axis=(0, 2), ord=3))),
    ("matrix_norm", lambda x: L.matrix_norm(x, ord=np.inf), (f32(2, 3, 4),),
     against(lambda x: np.linalg.matrix_norm(x, ord=np.inf))),
    ("matrix_power-3", lambda a: L.matrix_power(a, 3), (f32(2, 4, 4),),
     against(lambda a: np.linalg.matrix_power(a, 3))),
    ("matrix_power-0", lambda a: L.matrix_power(a, 0), (f32(3, 3),), against(lambda a: np.linalg.matrix_power(a, 0))),
    ("matrix_power-minus-2", lambda a: L.matrix_power(a, -2), (f32(4, 4) + 4 * np.eye(4, dtype=np.float32),),
     against(lambda a: np.linalg.matrix_power(a, -2), scale=10)),
    ("multi_dot", lambda *xs: L.multi_dot(xs), (f32(6), f32(6, 2), f32(2, 5), f32(5, 4), f32(4)),
     against(lambda *xs: np.linalg.multi_dot(xs))),
    ("multi_dot-matrices", lambda *xs: L.multi_dot(xs), (f32(3, 8), f32(8, 2), f32(2, 5)),
     against(lambda *xs: np.linalg.multi_dot(xs))),
    ("expm-small", L.expm, (0.1 * f32(2, 4, 4),), against(batched(sl.expm))),
    ("expm-large", L.expm, (3 * f32(4, 4),), against(sl.expm, scale=30)),
    ("expm-f64", L.expm, (3.0 * f32(4, 4).astype(np.float64),), against(sl.expm, scale=30)),
    ("expm-1x1-zero", L.expm, (np.zeros((1, 1), np.float32),), against(sl.expm)),
]

BLOCKED = [  # n > BLOCK: the panel loops
    ("cholesky-70", L.cholesky, (spd(2, 70, 70),), against(np.linalg.cholesky, scale=3)),
    ("solve-70", L.solve, (f32(2, 70, 70), f32(2, 70, 2)), against(np.linalg.solve, scale=10)),   # rows pivot
    ("lu_factor-70", L.lu_factor, (f32(2, 70, 70),), check_lu_factor),
    ("solve_triangular-70-upper", lambda a, b: L.solve_triangular(a, b),
     (f32(2, 70, 70) + 10 * np.eye(70, dtype=np.float32), f32(2, 70, 2)),
     against(batched(lambda a, b: sl.solve_triangular(a, b)))),
    ("det-70", L.det, (0.3 * f32(2, 70, 70),), against(np.linalg.det, scale=30)),
]
BLOCKED_QR = [   # a module of its own: with the above in one, IREE 3.13's cpu fails ("stack allocation limit")
    ("qr-100x70", L.qr, (f32(100, 70),), check_qr("reduced")),
    ("qr-complete-70x100", lambda a: L.qr(a, "complete"), (f32(70, 100),), check_qr("complete")),
]

# The reference backend runs every case. The IREE targets, whose compiles of these loops take seconds (IREE
# compiles each distinct dispatch; identical ones, from any case, once), run one module per table with a case
# of every algorithm and path, and the blocked paths. Those cases share shapes where they share a
# factorization (LU on (2, 5, 5): solve, det, slogdet, lu_factor, lu-tall, inv; Jacobi svd on (2, 4, 3):
# svd-wide-full, cond, norm-nuc-axes, and on (4, 3): svd-rank-deficient, pinv, lstsq; eigh on (3, 6, 6), the
# odd case padded to it; solve on (4, 4): expm, matrix_power), so that
# the factorization's dispatches compile once for all of them.
ON_IREE = {"cholesky", "cholesky-not-pd-nan", "solve_triangular-upper-trans-unit", "cho_solve", "solve",
           "solve-ill-conditioned-f64", "inv-singular-inf", "det", "det-1x1", "slogdet", "lu_factor", "lu-tall", "qr",
           "qr-complete", "eigh", "eigh-odd-upper", "svd-wide-full", "svd-rank-deficient", "svd-f64", "pinv", "lstsq",
           "cond", "norm-nuc-axes", "norm-matrix-1", "matrix_power-minus-2", "multi_dot", "expm-large", "expm-f64",
           "cholesky-70", "solve-70", "qr-100x70"}
# Of the blocked cases, IREE runs one per blocked algorithm: Cholesky, LU (solve-70: the blocked LU of a matrix
# whose rows pivot, then the blocked substitutions of both triangles; a wrong factor or pivot gives a wrong
# solution), QR (householder and form_q, tall; the wide 70 x 100 case pads to the same 128 x 128 panels).
# lu_factor-70 (the same LU, its factors and pivots returned: lu_factor's outputs are checked on IREE at 5 x 5,
# and it compiled the blocked LU a second time, 7 of the blocked module's 20 CPU seconds), det-70,
# solve_triangular-70-upper and qr-complete-70x100 add no blocked path (det's parity, solve_triangular's own
# inverses and QR's complete mode run in the small groups): reference only.
# Not vmvx (conftest.LIBRARY_BACKENDS): what it lowers differently from cpu in these programs, f64 (it converts no
# f64 to an int: a pipeline rewrite, test_legalize_compile) and a determinant's sign (_util.sign: stablehlo.sign's
# copysign), the op tables check op by op there. Its one module of an f64 case of each algorithm (cholesky, LU
# solve, Jacobi eigh and svd, expm) took ~13 s of the suite (2026-12-06); before that, the f32 cases and blocked
# paths (the same StableHLO in another dtype, the same ops in longer loops) 71 s of CPU.
GROUPS = {"factor": FACTOR, "spectral": SPECTRAL, "norms": NORMS, "blocked": BLOCKED, "blocked-qr": BLOCKED_QR}
GROUPS.update({f"{g}-on-iree": [c for c in GROUPS[g] if c[0] in ON_IREE]
               for g in ("factor", "spectral", "norms", "blocked", "blocked-qr")})
# three modules, not one: IREE 3.13 fails on the whole ("'scf.while' op ... region branch point has 6
# operands, but region successor needs 8 inputs"), each third compiles
PLAN = {"reference": ["factor", "spectral", "norms", "blocked", "blocked-qr"],
        "iree:cpu": ["factor-on-iree", "spectral-on-iree", "norms-on-iree", "blocked-on-iree", "blocked-qr-on-iree"]}
_RESULTS: dict = {}


@pytest.mark.parametrize("backend, group, index", [
    pytest.param(b, g, i, id=f"{b}-{c[0]}") for b in LIBRARY_BACKENDS for g in PLAN[b] for i, c in enumerate(GROUPS[g])])
def test_linalg(backend, group, index):
    case = GROUPS[group][index]
    outputs = group_result(_RESULTS, backend, group, GROUPS[group], index)
    case[3](outputs, case[2])


def test_matches_jax_on_singular_and_not_positive_definite():
    jnp = pytest.importorskip("jax.numpy")
    ours = hj.jit(lambda s, p: (L.inv(s), L.cholesky(p), L.det(s), L.solve(s, np.ones(3, np.float32))),
                  backend="reference")(SINGULAR, NOT_PD)
    theirs = (jnp.linalg.inv(SINGULAR), jnp.linalg.cholesky(NOT_PD), jnp.linalg.det(SINGULAR),
              jnp.linalg.solve(SINGULAR, np.ones(3, np.float32)))
    for o, t in zip(ours, theirs):
        o, t = np.asarray(o), np.asarray(t)
        np.testing.assert_array_equal(np.isfinite(o), np.isfinite(t))


def numeric_grad(f, x, h=1e-6):
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = h
        g[i] = (f(x + e) - f(x - e)) / (2 * h)
    return g


W = rng.standard_normal((4, 4))
W6 = np.random.default_rng(6).standard_normal((6, 6))


def svd_loss(xp, usv):
    """A function of svd's outputs that does not depend on the singular vectors' signs."""
    u, s, vh = usv
    return xp.sum(s * W6[0, :s.shape[0]]) + xp.sum(xp.abs(u) * W6[:u.shape[0], :u.shape[1]]) + \
        xp.sum(xp.abs(vh) * W6[:vh.shape[0], :vh.shape[1]])


GRADS = [
    ("det", lambda a: L.det(a), np.linalg.det, rng.standard_normal((4, 4))),
    ("slogdet", lambda a: L.slogdet(a)[1], lambda a: np.linalg.slogdet(a)[1], rng.standard_normal((4, 4))),
    ("inv", lambda a: ops.sum(L.inv(a) * W), lambda a: np.sum(np.linalg.inv(a) * W), rng.standard_normal((4, 4))),
    ("solve", lambda a: ops.sum(L.solve(a, W[:, :2]) ** 2), lambda a: np.sum(np.linalg.solve(a, W[:, :2]) ** 2),
     rng.standard_normal((4, 4))),
    ("cholesky", lambda a: ops.sum(L.cholesky(a) * W), lambda a: np.sum(np.linalg.cholesky(a) * W),
     spd(4, 4, dtype=np.float64)),
    ("eigh", lambda a: ops.sum(L.eigh(a)[0] * W[0]) + ops.sum(ops.abs(L.eigh(a)[1][:, 0])),
     lambda a: np.sum(np.linalg.eigh(a)[0] * W[0]) + np.sum(np.abs(np.linalg.eigh(a)[1][:, 0])),
     spd(4, 4, dtype=np.float64)),
    ("expm", lambda a: ops.sum(L.expm(a) * W), lambda a: np.sum(sl.expm(a) * W), 0.5 * rng.standard_normal((4, 4))),
    ("qr", lambda a: ops.sum(L.qr(a)[1] * W[:3, :3]), lambda a: np.sum(np.linalg.qr(a)[1] * W[:3, :3]),
     rng.standard_normal((4, 3))),
    # singular vectors' signs are arbitrary: |u| and |vh| are not (a column of u flips with its row of vh)
    ("svd-tall", lambda a: svd_loss(ops, L.svd(a, full_matrices=False)),
     lambda a: svd_loss(np, np.linalg.svd(a, full_matrices=False)), rng.standard_normal((5, 3))),
    ("svd-wide", lambda a: svd_loss(ops, L.svd(a, full_matrices=False)),
     lambda a: svd_loss(np, np.linalg.svd(a, full_matrices=False)), rng.standard_normal((3, 4))),
    ("svd-square-full", lambda a: svd_loss(ops, L.svd(a)), lambda a: svd_loss(np, np.linalg.svd(a)),
     rng.standard_normal((3, 3))),
    ("svdvals", lambda a: ops.sum(L.svdvals(a) * W[0, :3]),
     lambda a: np.sum(np.linalg.svd(a, compute_uv=False) * W[0, :3]), rng.standard_normal((4, 3))),
]


@pytest.mark.parametrize("fn, reference, x", [pytest.param(*g[1:], id=g[0]) for g in GRADS])
def test_gradients_match_central_differences(fn, reference, x):
    """f64 on the reference backend; cholesky and eigh read the lower triangle: compare there."""
    ours = np.asarray(hj.jit(hj.grad(fn), backend="reference")(x))
    theirs = numeric_grad(reference, x)
    if fn in (GRADS[4][1], GRADS[5][1]):
        ours, theirs = np.tril(ours + T(np.triu(ours, 1))), np.tril(theirs + T(np.triu(theirs, 1)))
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)


def test_svd_full_matrices_of_a_non_square_matrix_has_no_gradient():
    """As JAX: u's completion columns have no derivative."""
    with pytest.raises(hj.DifferentiationError, match="svd: has no gradient for non-square matrices with full"):
        hj.jit(hj.grad(lambda a: ops.sum(ops.abs(L.svd(a)[0]))), backend="reference")(np.eye(4, 3))


ERRORS = [
    ("cholesky-non-square", lambda a: L.cholesky(a[:, :3]), "cholesky: needs square matrices"),
    ("inv-vector", lambda a: L.inv(a[0]), "inv: needs an array of at least 2 dimensions"),
    ("solve-rows", lambda a: L.solve(a, a[:3]), "solve: a float32\\[4, 4\\] and b float32\\[3, 4\\]"),
    ("eigh-non-square", lambda a: L.eigh(a[:2]), "eigh: needs square matrices"),
    ("det-non-square", lambda a: L.det(a[:, :1]), "det: needs square matrices"),
    ("expm-non-square", lambda a: L.expm(a[:3]), "expm: needs square"),
    ("multi_dot-chain", lambda a: L.multi_dot([a, a[:3]]), "multi_dot: arrays 0"),
    ("qr-mode", lambda a: L.qr(a, "raw"), "qr: mode must be"),
]


@pytest.mark.parametrize("fn, message", [pytest.param(*e[1:], id=e[0]) for e in ERRORS])
def test_errors_name_the_op_and_line(fn, message):
    with pytest.raises((hj.ShapeError, ValueError), match=message) as info:
        hj.jit(fn, backend="reference").lower(np.zeros((4, 4), np.float32))
    assert "test_linalg.py:" in str(info.value)


@pytest.mark.parametrize("backend", BACKENDS)
def test_pinv_and_lstsq_of_a_1x1_matrix(backend):
    """IREE 3.13 failed on svd's completing QR of a single row ("circular dependency: input operation uses
    partition output"). In a module of its own: inside the spectral group's module, IREE's while-loop bug met
    another loop of that module instead ("region branch point has 6 operands, but region successor needs 8")."""
    a, b = np.float32([[-2.5]]), np.float32([[1.0, 2.0]])
    pinv, x = hj.jit(lambda a, b: (L.pinv(a), L.lstsq(a, b)[0]), backend=backend)(a, b)
    np.testing.assert_allclose(np.asarray(pinv), [[-0.4]], rtol=1e-6)
    np.testing.assert_allclose(np.asarray(x), [[-0.4, -0.8]], rtol=1e-6)
