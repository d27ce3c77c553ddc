"""linalg on empty matrices (0 x 0, m x 0, 0 x n) and empty stacks (0, n, n): numpy's (scipy's) results, shapes
and values (det 1, rank 0, identities for svd's full U and qr's complete Q), instead of the factorizations'
internal errors (range() arg 3 must not be zero, list index out of range, ZeroDivisionError). Where hlojit's
dtype differs from numpy's on purpose (JAX's: matrix_rank int32, eig's results always complex) the test names it."""
import numpy as np
import pytest
import scipy.linalg

import hlojit as hj
from hlojit import ops
from hlojit.errors import ShapeError

from conftest import BACKENDS

L = ops.linalg
F32 = np.float32
SQUARE = {"0x0": np.zeros((0, 0), F32), "2x0x0": np.zeros((2, 0, 0), F32), "0x3x3": np.zeros((0, 3, 3), F32)}
RECTANGULAR = {**SQUARE, "3x0": np.zeros((3, 0), F32), "0x3": np.zeros((0, 3), F32)}


def _cases():
    """(name, hlojit function of its inputs, numpy's, inputs)."""
    cases = []
    for tag, a in SQUARE.items():
        b = np.zeros(a.shape[:-1] + (2,), F32)
        cases += [(f"{name} {tag}", getattr(L, name), getattr(np.linalg, name), (a,))
                  for name in ("det", "slogdet", "inv", "cholesky", "eigh", "eigvalsh")]
        cases += [(f"solve {tag}", L.solve, np.linalg.solve, (a, b)),
                  (f"matrix_power -1 {tag}", lambda a: L.matrix_power(a, -1),
                   lambda a: np.linalg.matrix_power(a, -1), (a,)),
                  (f"matrix_power 3 {tag}", lambda a: L.matrix_power(a, 3), lambda a: np.linalg.matrix_power(a, 3), (a,))]
    for tag, a in RECTANGULAR.items():
        cases += [(f"{name} {tag}", getattr(L, name), getattr(np.linalg, name), (a,))
                  for name in ("svdvals", "pinv")]
        cases += [(f"svd {tag}", L.svd, np.linalg.svd, (a,)),
                  (f"svd reduced {tag}", lambda a: L.svd(a, full_matrices=False),
                   lambda a: np.linalg.svd(a, full_matrices=False), (a,)),
                  (f"qr {tag}", L.qr, np.linalg.qr, (a,)),
                  (f"qr complete {tag}", lambda a: L.qr(a, mode="complete"), lambda a: np.linalg.qr(a, mode="complete"),
                   (a,)),
                  (f"qr r {tag}", lambda a: L.qr(a, mode="r"), lambda a: np.linalg.qr(a, mode="r"), (a,)),
                  (f"matrix_rank {tag}", L.matrix_rank, lambda a: np.linalg.matrix_rank(a).astype(np.int32), (a,))]
    z, b0 = np.zeros((0, 0), F32), np.zeros((0,), F32)
    cases += [
        ("eig 0x0", L.eig, lambda a: tuple(r.astype(np.complex64) for r in np.linalg.eig(a)), (z,)),
        ("eigvals 2x0x0", L.eigvals, lambda a: np.linalg.eigvals(a).astype(np.complex64), (SQUARE["2x0x0"],)),
        ("solve_triangular 0x0", L.solve_triangular, scipy.linalg.solve_triangular, (z, b0)),
        ("lu_factor + lu_solve 0x0", lambda a, b: L.lu_solve(L.lu_factor(a), b),
         lambda a, b: scipy.linalg.lu_solve(scipy.linalg.lu_factor(a), b), (z, b0)),
        ("lu_factor 0x0", L.lu_factor, lambda a: (a, np.zeros(0, np.int32)), (z,)),
        ("cho_factor + cho_solve 0x0", lambda a, b: L.cho_solve(L.cho_factor(a), b),
         lambda a, b: scipy.linalg.cho_solve(scipy.linalg.cho_factor(a), b), (z, b0)),
        # scipy 1.17 gives p (0, 0) for a 3 x 0 matrix, which p @ l @ u cannot multiply: hlojit's p is I (m x m)
        ("lu 3x0", L.lu, lambda a: (np.eye(3, dtype=F32),) + scipy.linalg.lu(a)[1:], (RECTANGULAR["3x0"],)),
        ("lu 0x3 permute_l", lambda a: L.lu(a, permute_l=True), lambda a: scipy.linalg.lu(a, permute_l=True),
         (RECTANGULAR["0x3"],)),
        ("lstsq 3x0", L.lstsq, lambda a, b: _lstsq(a, b), (RECTANGULAR["3x0"], np.float32([1, 2, 3]))),
        ("lstsq 0x3", L.lstsq, lambda a, b: _lstsq(a, b), (RECTANGULAR["0x3"], b0)),
        ("expm 0x0", L.expm, scipy.linalg.expm, (z,)),
        ("cond 0x3x3", L.cond, np.linalg.cond, (SQUARE["0x3x3"],)),
    ]
    return cases


def _lstsq(a, b):
    x, residuals, rank, s = np.linalg.lstsq(a, b)
    return x, residuals, np.int32(rank), s


CASES = _cases()


def _as_tuple(r):
    return tuple(np.asarray(x) for x in r) if isinstance(r, (tuple, list)) else (np.asarray(r),)


@pytest.mark.parametrize("backend", BACKENDS)
def test_empty_inputs_give_numpys_results(backend):
    """Every case in one jit per backend (their results are known shapes, mostly empty)."""
    got = hj.jit(lambda *inputs: [f(*x) for (_, f, _, _), x in zip(CASES, inputs)],
                 backend=backend)(*[x for *_, x in CASES])
    for (name, _, numpy_fn, inputs), result in zip(CASES, got):
        expected = _as_tuple(numpy_fn(*inputs))
        result = _as_tuple(result)
        assert len(result) == len(expected), name
        for r, e in zip(result, expected):
            assert r.shape == e.shape and r.dtype == e.dtype, (name, r.shape, r.dtype, e.shape, e.dtype)
            np.testing.assert_array_equal(r, e, err_msg=name)


def test_empty_inputs_are_still_checked():
    """A non-square empty matrix is the functions' ShapeError; cond of an empty matrix is numpy's error."""
    for fn in (L.det, L.inv, L.cholesky, L.eigh):
        with pytest.raises(ShapeError, match="square"):
            fn(np.zeros((0, 3), F32))
    with pytest.raises(ShapeError, match="cond: is not defined for empty matrices"):
        L.cond(np.zeros((0, 0), F32))
    assert np.asarray(L.det(np.zeros((0, 0), np.int32))).dtype == np.float32    # ints become the default float
