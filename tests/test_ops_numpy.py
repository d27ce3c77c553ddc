"""numpy's namespace beyond the core ops: einsum and the named products, array building, further math, on the
reference backend and iree:cpu (conftest.LIBRARY_BACKENDS: their ops are test_ops' on vmvx) against numpy, compiled
for cuda; einsum's contraction order against numpy's optimal path; the errors.

A row is (id, hlojit fn, numpy fn, inputs): each group is ONE jitted module per backend returning every case's
result (conftest.group_result), and each case is its own pytest item.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import hlojit as hj
from hlojit import ops
from hlojit.frontend.ops import contraction as einsum_module
from hlojit.pipeline import compile_program, cuda

from conftest import LIBRARY_BACKENDS, assert_close, group_module, group_result

rng = np.random.default_rng(11)


def f32(*shape):
    return rng.normal(size=shape).astype(np.float32)


def i32(*shape, low=-20, high=20):
    return rng.integers(low, high, shape).astype(np.int32)


SPECIALS = np.array([0.0, -0.0, 1.5, -2.5, np.inf, -np.inf, np.nan, 7.0, -7.0, 1e-3], np.float32)

EINSUM = [
    ("einsum-matmul", lambda a, b: ops.einsum("ij,jk->ik", a, b), lambda a, b: np.einsum("ij,jk->ik", a, b),
     (f32(3, 4), f32(4, 5))),
    ("einsum-implicit", lambda a, b: ops.einsum("ij,jk", a, b), lambda a, b: np.einsum("ij,jk", a, b),
     (f32(3, 4), f32(4, 5))),
    ("einsum-batched", lambda a, b: ops.einsum("bij,bjk->bik", a, b), lambda a, b: np.einsum("bij,bjk->bik", a, b),
     (f32(2, 3, 4), f32(2, 4, 5))),
    ("einsum-ellipsis", lambda a, b: ops.einsum("...ij,...jk->...ik", a, b),
     lambda a, b: np.einsum("...ij,...jk->...ik", a, b), (f32(2, 1, 3, 4), f32(2, 4, 2))),
    ("einsum-trace", lambda a: ops.einsum("ii", a), lambda a: np.einsum("ii", a), (f32(4, 4),)),
    ("einsum-diagonal", lambda a: ops.einsum("ii->i", a), lambda a: np.einsum("ii->i", a), (f32(4, 4),)),
    ("einsum-transpose", lambda a: ops.einsum("ijk->kij", a), lambda a: np.einsum("ijk->kij", a), (f32(2, 3, 4),)),
    ("einsum-sum-axis", lambda a: ops.einsum("ij->j", a), lambda a: np.einsum("ij->j", a), (f32(3, 4),)),
    ("einsum-outer", lambda a, b: ops.einsum("i,j->ij", a, b), lambda a, b: np.einsum("i,j->ij", a, b),
     (f32(3), f32(4))),
    ("einsum-four-operands", lambda a, b, c, d: ops.einsum("ab,bc,cd,de->ae", a, b, c, d),
     lambda a, b, c, d: np.einsum("ab,bc,cd,de->ae", a, b, c, d), (f32(2, 30), f32(30, 3), f32(3, 40), f32(40, 2))),
    ("einsum-attention", lambda q, k: ops.einsum("bhqd,bhkd->bhqk", q, k),
     lambda q, k: np.einsum("bhqd,bhkd->bhqk", q, k), (f32(2, 2, 3, 4), f32(2, 2, 5, 4))),
    ("einsum-hadamard-sum", lambda a, b: ops.einsum("ij,ij->", a, b), lambda a, b: np.einsum("ij,ij->", a, b),
     (f32(3, 4), f32(3, 4))),
    ("einsum-repeated-in-output-operand", lambda a, b: ops.einsum("iij,jk->ik", a, b),
     lambda a, b: np.einsum("iij,jk->ik", a, b), (f32(3, 3, 2), f32(2, 4))),
    ("einsum-int", lambda a, b: ops.einsum("ij,j->i", a, b), lambda a, b: np.einsum("ij,j->i", a, b),
     (i32(3, 4), i32(4))),
    ("einsum-left-to-right", lambda a, b, c: ops.einsum("ij,jk,kl->il", a, b, c, optimize=False),
     lambda a, b, c: np.einsum("ij,jk,kl->il", a, b, c), (f32(2, 3), f32(3, 4), f32(4, 2))),
]

PRODUCTS = [
    ("tensordot-2", lambda a, b: ops.tensordot(a, b), np.tensordot, (f32(2, 3, 4), f32(3, 4, 5))),
    ("tensordot-pairs", lambda a, b: ops.tensordot(a, b, ([0, 2], [2, 0])),
     lambda a, b: np.tensordot(a, b, ([0, 2], [2, 0])), (f32(2, 3, 4), f32(4, 5, 2))),
    ("tensordot-0", lambda a, b: ops.tensordot(a, b, 0), lambda a, b: np.tensordot(a, b, 0), (f32(2), f32(3))),
    ("inner", ops.inner, np.inner, (f32(2, 4), f32(3, 4))),
    ("inner-scalar", ops.inner, np.inner, (np.float32(2.0), f32(3))),
    ("outer", ops.outer, np.outer, (f32(2, 2), f32(3))),
    ("vdot", ops.vdot, np.vdot, (f32(2, 3), f32(6))),
    ("kron", ops.kron, np.kron, (f32(2, 3), f32(3, 2))),
    ("kron-ranks", ops.kron, np.kron, (f32(2), f32(2, 3))),
    ("kron-int", ops.kron, np.kron, (i32(2, 2), i32(2, 2))),
    ("cross-3", ops.cross, np.cross, (f32(4, 3), f32(4, 3))),
    ("cross-2", ops.cross, np.cross, (f32(4, 2), f32(4, 2))),
    ("cross-2-3", ops.cross, np.cross, (f32(3, 2), f32(3, 3))),
    ("cross-axis", lambda a, b: ops.cross(a, b, axis=0), lambda a, b: np.cross(a, b, axis=0), (f32(3, 4), f32(3, 4))),
    ("trace", ops.trace, np.trace, (f32(3, 4),)),
    ("trace-offset-axes", lambda a: ops.trace(a, 1, 1, 2), lambda a: np.trace(a, 1, 1, 2), (f32(2, 3, 4),)),
    ("diag-of-vector", ops.diag, np.diag, (SPECIALS[:4],)),
    ("diag-above", lambda v: ops.diag(v, 2), lambda v: np.diag(v, 2), (f32(3),)),
    ("diag-below", lambda v: ops.diag(v, -1), lambda v: np.diag(v, -1), (f32(3),)),
    ("diag-of-matrix", lambda a: ops.diag(a, 1), lambda a: np.diag(a, 1), (f32(3, 4),)),
    ("diagflat", ops.diagflat, np.diagflat, (f32(2, 2),)),
]

BUILDING = [
    ("vstack", lambda a, b: ops.vstack([a, b]), lambda a, b: np.vstack([a, b]), (f32(3), f32(2, 3))),
    ("hstack-1d", lambda a, b: ops.hstack([a, b]), lambda a, b: np.hstack([a, b]), (f32(3), f32(2))),
    ("hstack-2d", lambda a, b: ops.hstack((a, b)), lambda a, b: np.hstack((a, b)), (f32(2, 3), f32(2, 1))),
    ("dstack", lambda a, b: ops.dstack([a, b]), lambda a, b: np.dstack([a, b]), (f32(2, 3), f32(2, 3))),
    ("column_stack", lambda a, b: ops.column_stack([a, b]), lambda a, b: np.column_stack([a, b]),
     (f32(3), f32(3, 2))),
    ("atleast_3d", lambda a, b: ops.atleast_3d(a, b), lambda a, b: list(np.atleast_3d(a, b)), (f32(3), f32(2, 3))),
    ("atleast_2d-scalar", ops.atleast_2d, np.atleast_2d, (np.float32(1.5),)),
    ("broadcast_arrays", lambda a, b: ops.broadcast_arrays(a, b), lambda a, b: list(np.broadcast_arrays(a, b)),
     (f32(3, 1), f32(4))),
    ("meshgrid-xy", lambda a, b, c: ops.meshgrid(a, b, c), lambda a, b, c: list(np.meshgrid(a, b, c)),
     (f32(2), f32(3), f32(4))),
    ("meshgrid-ij-sparse", lambda a, b: ops.meshgrid(a, b, indexing="ij", sparse=True),
     lambda a, b: list(np.meshgrid(a, b, indexing="ij", sparse=True)), (f32(2), f32(3))),
    ("indices", lambda: ops.indices((2, 3)), lambda: np.indices((2, 3)).astype(np.int32), ()),
    ("tril_indices", lambda: list(ops.tril_indices(4, -1, 5)),
     lambda: [i.astype(np.int32) for i in np.tril_indices(4, -1, 5)], ()),
    ("triu_indices", lambda: list(ops.triu_indices(3, 1)),
     lambda: [i.astype(np.int32) for i in np.triu_indices(3, 1)], ()),
    ("diag_indices", lambda: list(ops.diag_indices(3)), lambda: [i.astype(np.int32) for i in np.diag_indices(3)], ()),
    ("identity", lambda: ops.identity(3, np.int32), lambda: np.identity(3, np.int32), ()),
    ("rot90", ops.rot90, np.rot90, (f32(2, 3),)),
    ("rot90-k3-axes", lambda a: ops.rot90(a, 3, (2, 0)), lambda a: np.rot90(a, 3, (2, 0)), (f32(2, 3, 4),)),
    ("rot90-k-2", lambda a: ops.rot90(a, -2), lambda a: np.rot90(a, -2), (f32(2, 3),)),
    ("logspace", lambda: ops.logspace(0.0, 2.0, 5), lambda: np.logspace(0.0, 2.0, 5).astype(np.float32), ()),
    ("geomspace", lambda: ops.geomspace(1.0, 1000.0, 4), lambda: np.geomspace(1.0, 1000.0, 4).astype(np.float32),
     ()),
    ("geomspace-negative", lambda: ops.geomspace(-2.0, -32.0, 5, endpoint=False),
     lambda: np.geomspace(-2.0, -32.0, 5, endpoint=False).astype(np.float32), ()),
    ("append-flat", ops.append, np.append, (f32(2, 2), f32(3))),
    ("append-axis", lambda a, b: ops.append(a, b, axis=1), lambda a, b: np.append(a, b, axis=1),
     (f32(2, 2), f32(2, 1))),
    ("delete", lambda a: ops.delete(a, [0, -1], axis=1), lambda a: np.delete(a, [0, -1], axis=1), (f32(2, 4),)),
    ("delete-flat-slice", lambda a: ops.delete(a, slice(1, None, 2)), lambda a: np.delete(a, slice(1, None, 2)),
     (f32(2, 3),)),
    ("insert-scalar-position", lambda a: ops.insert(a, 1, np.float32(9.0), axis=1),
     lambda a: np.insert(a, 1, np.float32(9.0), axis=1), (f32(2, 3),)),
    ("insert-column", lambda a, v: ops.insert(a, 1, v, axis=1), lambda a, v: np.insert(a, 1, v, axis=1),
     (f32(3, 2), f32(3))),
    ("insert-positions", lambda a, v: ops.insert(a, [3, 0, 3], v), lambda a, v: np.insert(a, [3, 0, 3], v),
     (f32(4), f32(3))),
    ("resize", lambda a: ops.resize(a, (3, 3)), lambda a: np.resize(a, (3, 3)), (f32(2, 2),)),
]

_xs, _ys = np.array([-3.5, -2.0, 0.0, -0.0, 2.0, 5.5, 7.0], np.float32), np.array([2.0, -2.0, 3.0, -3.0, 0.75, -2.5,
                                                                                    np.inf], np.float32)
MATH = [
    ("logaddexp", ops.logaddexp, np.logaddexp, (SPECIALS, SPECIALS[::-1].copy())),
    ("logaddexp-big", ops.logaddexp, np.logaddexp, (np.float32([100, -100, 1e4]), np.float32([100.5, -99, 1e4]))),
    ("logaddexp2", ops.logaddexp2, np.logaddexp2, (SPECIALS, SPECIALS[::-1].copy())),
    ("sinc", ops.sinc, np.sinc, (np.float32([0, 0.5, -1.25, 3, 1e-4]),)),
    ("fmod", ops.fmod, np.fmod, (_xs, _ys)),
    ("fmod-int", ops.fmod, np.fmod, (np.int32([-7, 7, -7, 7, 5, 0]), np.int32([2, -2, -2, 2, 0, 3]))),
    ("fmax", ops.fmax, np.fmax, (SPECIALS, SPECIALS[::-1].copy())),
    ("fmin", ops.fmin, np.fmin, (SPECIALS, SPECIALS[::-1].copy())),
    ("heaviside", ops.heaviside, np.heaviside, (SPECIALS, np.float32(0.5))),
    ("deg2rad-rad2deg", lambda x: (ops.deg2rad(x), ops.rad2deg(x)), lambda x: (np.deg2rad(x), np.rad2deg(x)),
     (f32(5),)),
    ("float_power", ops.float_power, np.float_power, (np.float32([2, -2, 0.5]), np.int32([3, 3, -2]))),
    ("divmod", lambda x, y: ops.divmod(x, y), lambda x, y: np.divmod(x, y), (i32(6), i32(6, low=1, high=5))),
    ("modf", ops.modf, np.modf, (np.float32([1.5, -2.25, 0, np.inf, -np.inf, 3]),)),
    ("ldexp", ops.ldexp, np.ldexp, (np.float32([1, 0.75, -3, 1]), np.int32([3, -2, 10, 200]))),
    ("frexp", ops.frexp, lambda x: tuple(r.astype(t) for r, t in zip(np.frexp(x), (np.float32, np.int32))),
     (np.float32([1, -3, 0.375, 0, -0.0, np.inf, -np.inf, np.nan, 1e30, 6e-39]),)),
    ("frexp-f64", ops.frexp, lambda x: (np.frexp(x)[0], np.frexp(x)[1].astype(np.int32)),
     (np.float64([1, -3, 0.375, 0, 1e300, 2.5e-310]),)),
    ("i0", ops.i0, np.i0, (np.float32([0, 0.5, -1, 3, 7.99, 8, 8.5, -20, 50]),)),
    ("i0-f64", ops.i0, np.i0, (np.float64([0, 0.5, -1, 3, 7.99, 8, 8.5, -20, 500]),)),
    ("gcd-lcm", lambda a, b: (ops.gcd(a, b), ops.lcm(a, b)), lambda a, b: (np.gcd(a, b), np.lcm(a, b)),
     (np.int32([12, -18, 0, 7, 0, 100]), np.int32([18, 12, 5, 13, 0, -75]))),
    ("isclose", ops.isclose, np.isclose, (SPECIALS, SPECIALS + np.float32(1e-6))),
    ("isclose-equal-nan", lambda a, b: ops.isclose(a, b, equal_nan=True, atol=0.1),
     lambda a, b: np.isclose(a, b, equal_nan=True, atol=0.1), (SPECIALS, SPECIALS[::-1].copy())),
    ("allclose", lambda a, b: (ops.allclose(a, b), ops.allclose(a, a + 1)),
     lambda a, b: (np.bool_(np.allclose(a, b)), np.bool_(np.allclose(a, a + 1))), (f32(4), f32(4))),
    ("array_equal", lambda a: (ops.array_equal(a, a), ops.array_equal(a, a, equal_nan=True),
                               ops.array_equal(a, a[:2])),
     lambda a: (np.bool_(np.array_equal(a, a)), np.bool_(np.array_equal(a, a, equal_nan=True)),
                np.bool_(np.array_equal(a, a[:2]))), (SPECIALS,)),
    ("array_equiv", lambda a: (ops.array_equiv(a, ops.stack([a, a])), ops.array_equiv(a, a + 1)),
     lambda a: (np.bool_(np.array_equiv(a, np.stack([a, a]))), np.bool_(np.array_equiv(a, a + 1))), (f32(4),)),
    ("iscomplex-isreal", lambda z: (ops.iscomplex(z), ops.isreal(z)), lambda z: (np.iscomplex(z), np.isreal(z)),
     (np.complex64([1 + 0j, 2 + 1j, -1j, 0j]),)),
    ("ptp", lambda a: ops.ptp(a, axis=1), lambda a: np.ptp(a, axis=1), (f32(3, 4),)),
    ("count_nonzero", lambda a: ops.count_nonzero(a, axis=0),
     lambda a: np.count_nonzero(a, axis=0).astype(np.int32), (i32(5, 3, low=-1, high=2),)),
    ("diff", lambda a: ops.diff(a, 2, axis=0), lambda a: np.diff(a, 2, axis=0), (f32(5, 3),)),
    ("diff-prepend", lambda a: ops.diff(a, prepend=0.0), lambda a: np.diff(a, prepend=np.float32(0.0)), (f32(4),)),
    ("ediff1d", lambda a: ops.ediff1d(a, to_begin=np.float32(9.0)), lambda a: np.ediff1d(a, to_begin=9.0),
     (f32(2, 3),)),
    ("trapezoid", ops.trapezoid, np.trapezoid, (f32(3, 5),)),
    ("trapezoid-x", lambda y, x: ops.trapezoid(y, x, axis=0), lambda y, x: np.trapezoid(y, x, axis=0),
     (f32(4, 2), np.float32([0, 0.5, 2, 3]))),
    ("polyval", ops.polyval, np.polyval, (np.float32([2, -1, 0.5]), f32(5))),
    ("positive", ops.positive, np.positive, (f32(3),)),
    ("polyfit", lambda x, y: ops.polyfit(x, y, 2), lambda x, y: np.polyfit(x, y, 2).astype(np.float32),
     (np.linspace(-1, 2, 12, dtype=np.float32), f32(12))),
    ("polyfit-weighted-columns", lambda x, y, w: ops.polyfit(x, y, 1, w=w),
     lambda x, y, w: np.polyfit(x, y, 1, w=w).astype(np.float32),
     (np.linspace(-1, 2, 12, dtype=np.float32), f32(12, 3), np.linspace(0.5, 2, 12, dtype=np.float32))),
    ("polyfit-cov", lambda x, y: ops.polyfit(x, y, 2, cov=True)[1],
     lambda x, y: np.polyfit(x, y, 2, cov=True)[1].astype(np.float32),
     (np.linspace(-1, 2, 12, dtype=np.float32), f32(12))),
    ("vander", lambda x: ops.vander(x, 4), lambda x: np.vander(x, 4), (f32(5),)),
    ("vander-increasing-int", lambda x: ops.vander(x, increasing=True),       # x's dtype, as jax.numpy (numpy: int64)
     lambda x: np.vander(x, increasing=True).astype(np.int32), (i32(4, low=-3, high=4),)),
    ("convolve-full", ops.convolve, np.convolve, (f32(6), f32(3))),
    ("convolve-same-longer-kernel", lambda a, v: ops.convolve(a, v, "same"), lambda a, v: np.convolve(a, v, "same"),
     (f32(3), f32(5))),
    ("correlate-valid", ops.correlate, np.correlate, (f32(6), f32(3))),
    ("correlate-full-swapped", lambda a, v: ops.correlate(a, v, "full"), lambda a, v: np.correlate(a, v, "full"),
     (f32(3), f32(5))),
    ("interp", ops.interp, np.interp,
     (np.float32([-1, 0, 0.5, 1, 2.5, 3, 4, np.nan]), np.float32([0, 1, 3]), np.float32([10, 20, -5]))),
    ("interp-left-right", lambda x, xp, fp: ops.interp(x, xp, fp, left=-1.0, right=1.0),
     lambda x, xp, fp: np.interp(x, xp, fp, left=-1.0, right=1.0),
     (np.float32([[-1, 0.25], [5, 1]]), np.float32([0, 1]), np.float32([2, 4]))),
]

_sorted = np.float32([-3, -1, -1, 0, 2, 2, 2, 5, np.nan])
_v = np.float32([-4, -1, 0.5, 2, 6, np.nan, 5])
_data = np.float32([3, 1, np.nan, 2, 1, 7, -0.0, 0.0, 3, 3])
_grid = rng.normal(size=(4, 7)).astype(np.float32)
_with_nan = _grid.copy()
_with_nan[0, 2] = _with_nan[2, [1, 5]] = np.nan
_with_nan[3] = np.nan


def _np_unique_sized(a, size):
    values, index, inverse, counts = np.unique(a, return_index=True, return_inverse=True, return_counts=True)
    pad = size - len(values)
    return (np.concatenate([values, np.full(pad, values[0], a.dtype)]),
            np.concatenate([index, np.zeros(pad, np.int64)]).astype(np.int32), inverse.astype(np.int32),
            np.concatenate([counts, np.zeros(pad, np.int64)]).astype(np.int32))


SEARCHING = [
    ("searchsorted-left", ops.searchsorted, lambda a, v: np.searchsorted(a, v).astype(np.int32), (_sorted, _v)),
    ("searchsorted-right", lambda a, v: ops.searchsorted(a, v, side="right"),
     lambda a, v: np.searchsorted(a, v, side="right").astype(np.int32), (_sorted, _v)),
    ("searchsorted-int-sorter", lambda a, v: ops.searchsorted(a, v, sorter=np.argsort(np.int32([5, 1, 3, 3]))),
     lambda a, v: np.searchsorted(a, v, sorter=np.argsort(a)).astype(np.int32),
     (np.int32([5, 1, 3, 3]), np.int32([[0, 3], [4, 9]]))),
    ("digitize", ops.digitize, lambda x, b: np.digitize(x, b).astype(np.int32),
     (_v[:5], np.float32([-1, 0, 2, 5]))),
    ("digitize-decreasing-right", lambda x, b: ops.digitize(x, b, right=True),
     lambda x, b: np.digitize(x, b, right=True).astype(np.int32), (_v[:5], np.float32([5, 2, 0, -1]))),
    ("partition", lambda a: ops.partition(a, 2), lambda a: np.sort(a), (f32(7),)),
    ("argpartition", lambda a: ops.take_along_axis(a, ops.argpartition(a, 2, axis=1), 1),   # kth in place, sorted
     lambda a: np.sort(a, axis=1), (f32(3, 7),)),
    ("lexsort", lambda a, b: ops.lexsort((a, b)), lambda a, b: np.lexsort((a, b)).astype(np.int32),
     (np.int32([3, 1, 2, 1, 3, 2]), np.int32([1, 1, 0, 0, 1, 1]))),
    ("nonzero", lambda a: ops.nonzero(a, size=6, fill_value=-1),
     lambda a: tuple(np.concatenate([i, -np.ones(6 - len(i), i.dtype)]).astype(np.int32) for i in np.nonzero(a)),
     (np.int32([[0, 3, 0], [1, 0, 2]]),)),
    ("where-one-argument", lambda a: ops.where(a > 0, size=2), lambda a: tuple(i[:2].astype(np.int32)
                                                                              for i in np.nonzero(a > 0)),
     (np.float32([0, 1, 2, 3]),)),
    ("argwhere", lambda a: ops.argwhere(a, size=3), lambda a: np.argwhere(a)[:3].astype(np.int32),
     (np.float32([[0, 1], [2, 3]]),)),
    ("flatnonzero", lambda a: ops.flatnonzero(a, size=5), lambda a: np.concatenate(
        [np.flatnonzero(a), np.zeros(5 - np.count_nonzero(a), np.int64)]).astype(np.int32),
     (np.float32([[0, 1], [2, 0]]),)),
    ("extract", lambda c, a: ops.extract(c, a, size=4, fill_value=-9.0),
     lambda c, a: np.concatenate([np.extract(c, a), np.full(4 - np.count_nonzero(c), -9, np.float32)]),
     (np.bool_([[True, False], [True, False]]), f32(2, 2))),
    ("compress-axis", lambda c, a: ops.compress(c, a, axis=1, size=2),
     lambda c, a: np.compress(c, a, axis=1), (np.bool_([False, True, True]), f32(2, 3))),
    ("unique-all", lambda a: ops.unique(a, True, True, True, size=8), lambda a: _np_unique_sized(a, 8), (_data,)),
    ("unique-2d-fill", lambda a: ops.unique(a, size=5, fill_value=-1),
     lambda a: np.concatenate([np.unique(a), [-1, -1]]).astype(np.int32), (np.int32([[4, 1], [4, 2]]),)),
    ("isin", ops.isin, np.isin, (_data, np.float32([3, 0, np.nan]))),
    ("isin-invert", lambda a, b: ops.isin(a, b, invert=True), lambda a, b: np.isin(a, b, invert=True),
     (np.int32([1, 2, 3]), np.int32([[2, 5]]))),
    ("select", lambda x: ops.select([x < -1, x > 1], [x * 10, x - 100], 7.0),
     lambda x: np.select([x < -1, x > 1], [x * 10, x - 100], 7.0).astype(np.float32), (f32(8),)),
    ("piecewise", lambda x: ops.piecewise(x, [x < 0, x > 0.5], [lambda t: -t, 2.0, lambda t: t * 0 + 9]),
     lambda x: np.piecewise(x, [x < 0, x > 0.5], [lambda t: -t, 2.0, lambda t: t * 0 + 9]), (f32(8),)),
    ("bincount", lambda x: ops.bincount(x, length=6), lambda x: np.bincount(x, minlength=6).astype(np.int32),
     (np.int32([0, 1, 1, 3, 5, 5, 5]),)),
    ("bincount-weights", lambda x, w: ops.bincount(x, w, length=4),
     lambda x, w: np.bincount(x, w, minlength=4).astype(np.float32), (np.int32([0, 2, 2, 3]), f32(4))),
    ("histogram", lambda a: ops.histogram(a, 4), lambda a: (np.histogram(a, 4)[0].astype(np.int32),
                                                            np.histogram(a, 4)[1]),
     (np.float32([1, 2, 2, 3, 10, 4.25, 7.75]),)),
    ("histogram-edges-weights-density", lambda a, w: ops.histogram(a, np.float32([0, 1, 3, 6]), weights=w,
                                                                   density=True),
     lambda a, w: np.histogram(a, np.float32([0, 1, 3, 6]), weights=w, density=True),
     (np.float32([0.5, 1, 2, 6, 7, -1]), np.float32([1, 2, 1, 1, 5, 5]))),
]

QUANTILES = [
    ("median", ops.median, np.median, (_grid,)),
    ("median-axis-keepdims", lambda a: ops.median(a, axis=1, keepdims=True),
     lambda a: np.median(a, axis=1, keepdims=True), (_grid,)),
    ("median-nan", lambda a: ops.median(a, axis=1), lambda a: np.median(a, axis=1), (_with_nan,)),
    ("percentile-q-vector", lambda a: ops.percentile(a, [0, 25, 50, 90, 100], axis=0),
     lambda a: np.percentile(a, [0, 25, 50, 90, 100], axis=0).astype(np.float32), (_grid,)),
    ("nanmedian", lambda a: ops.nanmedian(a, axis=1), lambda a: np.nanmedian(a, axis=1), (_with_nan,)),
    ("nanpercentile", lambda a: ops.nanpercentile(a, [10, 90], axis=1),
     lambda a: np.nanpercentile(a, [10, 90], axis=1).astype(np.float32), (_with_nan,)),
    ("nanquantile", lambda a: ops.nanquantile(a, [0.2, 0.9], axis=1), lambda a: np.nanquantile(a, [0.2, 0.9], axis=1)
     .astype(np.float32), (_with_nan,)),
]
QUANTILE_METHODS = [
    (f"quantile-{m}", lambda a, m=m: ops.quantile(a, np.float32([0.1, 0.5, 0.77]), axis=1, method=m),
     lambda a, m=m: np.quantile(a, np.float32([0.1, 0.5, 0.77]), axis=1, method=m), (_grid,))
    for m in ("linear", "lower", "higher", "nearest", "midpoint", "inverted_cdf", "averaged_inverted_cdf",
              "closest_observation", "interpolated_inverted_cdf", "hazen", "weibull", "median_unbiased",
              "normal_unbiased")
]
STATISTICS = [
    ("nan-reductions", lambda a: (ops.nansum(a, 1), ops.nanprod(a, 1), ops.nanmean(a, 1), ops.nanvar(a, 1),
                                  ops.nanstd(a, 1, ddof=1), ops.nanmax(a, 1), ops.nanmin(a, 1)),
     lambda a: (np.nansum(a, 1), np.nanprod(a, 1), np.nanmean(a, 1), np.nanvar(a, 1), np.nanstd(a, 1, ddof=1),
                np.nanmax(a, 1), np.nanmin(a, 1)), (_with_nan,)),
    ("nanargmax-nanargmin", lambda a: (ops.nanargmax(a[:3], 1), ops.nanargmin(a[:3], 1)),
     lambda a: (np.nanargmax(a[:3], 1).astype(np.int32), np.nanargmin(a[:3], 1).astype(np.int32)), (_with_nan,)),
    ("nancumsum", lambda a: ops.nancumsum(a, 1), lambda a: np.nancumsum(a, 1), (_with_nan,)),
    ("nancumprod", lambda a: ops.nancumprod(a, 1), lambda a: np.nancumprod(a, 1), (_with_nan,)),
    ("average-weights", lambda a, w: ops.average(a, 1, w, returned=True),
     lambda a, w: np.average(a, 1, w, returned=True), (_grid, np.float32([1, 2, 0, 1, 3, 1, 1]))),
    ("average-plain", ops.average, np.average, (_grid,)),
    ("cov", ops.cov, lambda m: np.cov(m).astype(np.float32), (_grid,)),
    ("cov-columns-weights", lambda m, f, a: ops.cov(m, rowvar=False, fweights=f, aweights=a),
     lambda m, f, a: np.cov(m, rowvar=False, fweights=f, aweights=a).astype(np.float32),
     (_grid, np.int32([1, 2, 1, 3]), np.float32([0.5, 1, 2, 1]))),
    ("corrcoef", ops.corrcoef, lambda m: np.corrcoef(m).astype(np.float32), (_grid,)),
    ("corrcoef-two", ops.corrcoef, lambda x, y: np.corrcoef(x, y).astype(np.float32), (_grid[0], _grid[1])),
]

_phase = np.float32([0, 3, 6.5, 0.2, 3.5, 7, -1, 5.9])
MORE = [   # jax.numpy's further names: array API functions, index arithmetic, sets, windows, polynomials
    ("round-decimals", lambda a, i: (ops.round(a, 2), ops.around(a, -1), ops.round(i, -2), ops.rint(i)),
     lambda a, i: (np.round(a, 2), np.round(a, -1), np.round(i, -2), np.rint(i).astype(np.float32)),
     (f32(6) * 100, np.int32([1249, 1251, -1350, 7]))),
    ("fabs-isposinf-isneginf", lambda a: (ops.fabs(a), ops.isposinf(a), ops.isneginf(a)),
     lambda a: (np.fabs(a), np.isposinf(a), np.isneginf(a)), (SPECIALS,)),
    ("amax-amin-bitwise", lambda a, i: (ops.amax(a, 0), ops.amin(a), ops.bitwise_invert(i), ops.bitwise_left_shift(i, 2),
                                        ops.bitwise_right_shift(i, 1)),
     lambda a, i: (np.amax(a, 0), np.amin(a), np.invert(i), np.left_shift(i, 2), np.right_shift(i, 1)),
     (f32(3, 4), i32(5))),
    ("cumulative", lambda a: (ops.cumulative_sum(a, axis=1, include_initial=True), ops.cumulative_prod(a[0])),
     lambda a: (np.concatenate([np.zeros((3, 1), np.float32), np.cumsum(a, 1)], 1), np.cumprod(a[0])), (f32(3, 4),)),
    ("vector-products", lambda a, v, m: (ops.vecdot(a, v), ops.matvec(a, v), ops.vecmat(m, a), ops.matrix_transpose(a)),
     lambda a, v, m: (np.sum(a * v, -1), a @ v, np.einsum("bi,bij->bj", m, a), np.swapaxes(a, -1, -2)),
     (f32(2, 3, 4), f32(4), f32(2, 3))),
    ("splits-unstack", lambda a: (*ops.hsplit(a, 2), *ops.vsplit(a, 2), *ops.dsplit(a, [1]), *ops.unstack(a, 1)),
     lambda a: (*np.hsplit(a, 2), *np.vsplit(a, 2), *np.dsplit(a, [1]), *np.moveaxis(a, 1, 0)), (f32(2, 4, 3),)),
    ("creation", lambda a: (ops.asarray(a, np.int32), ops.array(a[0, 0], ndmin=2), ops.copy(a), ops.empty_like(a),
                            ops.fromfunction(lambda i, j: i * 3 + j, (2, 3), dtype=np.int32), ops.empty((2, 2))),
     lambda a: (a.astype(np.int32), np.array(a[0, 0], ndmin=2), a.copy(), np.zeros_like(a),
                np.fromfunction(lambda i, j: i * 3 + j, (2, 3), dtype=np.int32), np.zeros((2, 2), np.float32)),
     (f32(2, 3) * 10,)),
    ("index-arithmetic", lambda i: (ops.unravel_index(i, (3, 4)),
                                    ops.ravel_multi_index((i % 3, i % 4), (3, 4), mode="clip"),
                                    ops.ravel_multi_index((i, i), (5, 2), mode="wrap", order="F"),
                                    ops.ix_(np.int32([0, 2]), np.int32([1, 3, 0])), ops.tril_indices_from(np.zeros((3, 4)), 1),
                                    ops.triu_indices_from(np.zeros((3, 4)), -1), ops.diag_indices_from(np.zeros((3, 3)))),
     lambda i: (tuple(x.astype(np.int32) for x in np.unravel_index(i, (3, 4))),
                np.ravel_multi_index((i % 3, i % 4), (3, 4)).astype(np.int32),
                np.ravel_multi_index((i, i), (5, 2), mode="wrap", order="F").astype(np.int32),
                np.ix_(np.int32([0, 2]), np.int32([1, 3, 0])),
                tuple(x.astype(np.int32) for x in np.tril_indices_from(np.zeros((3, 4)), 1)),
                tuple(x.astype(np.int32) for x in np.triu_indices_from(np.zeros((3, 4)), -1)),
                tuple(x.astype(np.int32) for x in np.diag_indices_from(np.zeros((3, 3))))),
     (np.int32([0, 5, 11, 7]),)),
    ("sets", lambda a, b: (ops.union1d(a, b, size=6), ops.intersect1d(a, b, size=2, return_indices=True),
                           ops.setdiff1d(a, b, size=2), ops.setxor1d(a, b, size=4)),
     lambda a, b: (np.union1d(a, b), tuple(x.astype(np.int32) if x.dtype != a.dtype else x
                                          for x in np.intersect1d(a, b, return_indices=True)),
                   np.setdiff1d(a, b), np.setxor1d(a, b)),
     (np.int32([5, 1, 3, 3, 9]), np.int32([3, 4, 9, 0, 4]))),
    ("sets-nan-fill", lambda a, b: (ops.union1d(a, b, size=5, fill_value=-1), ops.setdiff1d(a, b, size=2)),
     lambda a, b: (np.concatenate([np.union1d(a, b), np.float32([-1])]), np.setdiff1d(a, b)),
     (np.float32([2, np.nan, 1, np.nan]), np.float32([1, 7]))),
    ("unique-array-api", lambda a: (*ops.unique_counts(a, size=4), *ops.unique_inverse(a, size=4)),
     lambda a: tuple(x.astype(np.int32) for x in (*np.unique_counts(a), *np.unique_inverse(a))),
     (np.int32([4, 1, 4, 2, 9, 1]),)),
    ("windows", lambda: (ops.bartlett(5), ops.blackman(6), ops.hamming(4), ops.hanning(1), ops.kaiser(7, 3.5)),
     lambda: tuple(w.astype(np.float32) for w in (np.bartlett(5), np.blackman(6), np.hamming(4), np.hanning(1),
                                                   np.kaiser(7, 3.5))), ()),
    ("gradient", lambda f, x: (*ops.gradient(f, 0.5, 2.0), ops.gradient(f[:, 0], x, edge_order=2),
                               ops.gradient(f, axis=1, edge_order=2)),
     lambda f, x: (*np.gradient(f, 0.5, 2.0), np.gradient(f[:, 0], x, edge_order=2), np.gradient(f, axis=1, edge_order=2)),
     (f32(5, 4), np.float32([0, 0.5, 2, 2.5, 4]))),
    ("unwrap", lambda p: (ops.unwrap(p), ops.unwrap(p, discont=4.0), ops.unwrap(p * 30, period=360)),
     lambda p: (np.unwrap(p), np.unwrap(p, discont=4.0), np.unwrap(p * 30, period=360)), (_phase,)),
    ("polynomials", lambda a, b: (ops.polyadd(a, b), ops.polysub(b, a), ops.polymul(a, b), ops.polyder(b, 2),
                                  ops.polyint(a, 2, k=[1.0, 2.0]), ops.polydiv(b, a)[0], ops.poly(a)),
     lambda a, b: (np.polyadd(a, b), np.polysub(b, a), np.polymul(a, b), np.polyder(b, 2),
                   np.polyint(a, 2, k=[1.0, 2.0]).astype(np.float32), np.polydiv(b, a)[0].astype(np.float32),
                   np.poly(a).astype(np.float32)),
     (np.float32([1, -0.5, 2]), np.float32([2, 1, -3, 0.5, 4]))),
]

GROUPS = {"einsum": EINSUM, "products": PRODUCTS, "building": BUILDING, "math": MATH, "searching": SEARCHING,
          "quantiles": QUANTILES, "statistics": STATISTICS, "quantile-methods": QUANTILE_METHODS, "more": MORE}
# The 13 quantile methods differ only in the frontend's index arithmetic, the same on every target: the IREE
# targets run one of each family (interpolated, rounded, discontinuous, continuous), since each method sorts
# again and the sorts made the group's compile the suite's longest after linalg (~25 s a target).
GROUPS["quantile-methods-on-iree"] = [c for c in QUANTILE_METHODS if c[0] in
                                      {"quantile-linear", "quantile-nearest", "quantile-inverted_cdf",
                                       "quantile-hazen"}]
ON_REFERENCE_ONLY = {"quantile-methods"}
ON_IREE_ONLY = {"quantile-methods-on-iree"}


def _expected(ref, args):
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")   # numpy 2 deprecates 2-vector cross products; all-NaN slices warn
        return ref(*args)


CASES = {g: [(cid, fn, args, _expected(ref, args)) for cid, fn, ref, args in rows] for g, rows in GROUPS.items()}
_RESULTS: dict = {}


def check(actual, expected):
    if isinstance(expected, (list, tuple)):
        assert isinstance(actual, (list, tuple)) and len(actual) == len(expected)
        for a, e in zip(actual, expected):
            check(a, e)
        return
    expected = np.asarray(expected)
    if expected.dtype == np.float64 and np.asarray(actual).dtype == np.float32:
        expected = expected.astype(np.float32)   # numpy computed a float32 case in float64 (python scalars)
    assert_close(actual, expected, scale=20)


@pytest.mark.parametrize("backend, group, index", [
    pytest.param(b, g, i, id=f"{b}-{c[0]}") for b in LIBRARY_BACKENDS for g, cases in CASES.items()
    if g not in (ON_IREE_ONLY if b == "reference" else ON_REFERENCE_ONLY) for i, c in enumerate(cases)])
def test_op(backend, group, index):
    check(group_result(_RESULTS, backend, group, CASES[group], index), CASES[group][index][3])


# cuda compiles the groups whose ops IREE's GPU pipeline lowers its own way (dot_generals, sorts, scans and
# reductions along an axis); math, more, einsum and building are elementwise ops, products' dot_generals,
# concatenates and the sorts and scans of searching and statistics composed, which test_ops_math's and
# test_ops_shape's cuda compiles and those groups check (their four modules took ~30 s of the suite, math alone
# 18 s, more 9: 2026-12-06)
ON_CUDA = [g for g in CASES if g not in ON_REFERENCE_ONLY | {"math", "more", "einsum", "building"}]


@pytest.mark.parametrize("group", ON_CUDA)
def test_compiles_for_cuda(group):
    cases = CASES[group]
    compile_program(hj.jit(group_module(cases)).lower([c[2] for c in cases]).program, cuda())


@pytest.mark.parametrize("subscripts, shapes", [
    ("ab,bc,cd,de->ae", [(2, 30), (30, 3), (3, 40), (40, 2)]),
    ("ij,jk,kl,lm->im", [(64, 8), (8, 256), (256, 4), (4, 128)]),
    ("bij,bjk,bkl->bil", [(8, 32, 4), (8, 4, 64), (8, 64, 2)]),
    ("ea,fb,abcd,gc,hd->efgh", [(10, 10)] * 2 + [(10, 10, 10, 10)] + [(10, 10)] * 2),
    ("ab,ac,ad,ae,af->bcdef", [(3, 4), (3, 5), (3, 6), (3, 2), (3, 3)]),
])
def test_einsum_order_is_optimal(subscripts, shapes):
    """The chosen order's multiply-adds are numpy's optimal path's (within 10%), far below left to right."""
    labels, output = einsum_module._parse(subscripts, shapes)
    sizes = einsum_module._sizes(labels, shapes)
    ours = einsum_module.flop_count(labels, output, sizes, einsum_module.contraction_path(labels, output, sizes))
    arrays = [np.empty(s, np.float32) for s in shapes]
    numpy_path = np.einsum_path(subscripts, *arrays, optimize="optimal")[0]
    theirs = einsum_module.flop_count(labels, output, sizes, numpy_path[1:])
    assert ours <= 1.1 * theirs
    path, report = ops.einsum_path(subscripts, *arrays)
    assert path[0] == "einsum_path" and len(path) == len(shapes) and "Optimized FLOP count" in report


def test_einsum_differentiates():
    a, b = f32(3, 4), f32(4, 2)
    ga, gb = hj.grad(lambda a, b: ops.sum(ops.einsum("ij,jk->ik", a, b) ** 2), argnums=(0, 1))(a, b)
    c = a @ b
    np.testing.assert_allclose(np.asarray(ga), 2 * c @ b.T, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(gb), 2 * a.T @ c, rtol=1e-5)


ERRORS = [
    ("einsum-operand-count", lambda a: ops.einsum("ij,jk->ik", a), ShapeError := hj.ShapeError, "names 2 operands"),
    ("einsum-rank", lambda a: ops.einsum("ijk->i", a), ShapeError, "do not match its shape"),
    ("einsum-size", lambda a: ops.einsum("ij,ij->i", a, a[:, :2]), ShapeError, "label 'j' has size"),
    ("einsum-output-label", lambda a: ops.einsum("ij->k", a), ValueError, "not in any operand"),
    ("tensordot-axes", lambda a: ops.tensordot(a, a, 3), ShapeError, "out of range"),
    ("cross-size", lambda a: ops.cross(a, a), ShapeError, "2 or 3 components"),
    ("delete-out-of-bounds", lambda a: ops.delete(a, 7, axis=0), ShapeError, "out of bounds"),
    ("convolve-2d", lambda a: ops.convolve(a, a), ShapeError, "1-D arrays"),
    ("polyfit-points", lambda a: ops.polyfit(a[0], a[1, :2], 1), ShapeError, r"y must be \(4,\) or \(4, k\)"),
    ("vander-2d", lambda a: ops.vander(a), ShapeError, "x must be 1-D"),
]


@pytest.mark.parametrize("fn, error, message", [pytest.param(*e[1:], id=e[0]) for e in ERRORS])
def test_errors_name_the_op_and_line(fn, error, message):
    with pytest.raises(error, match=message) as info:
        hj.jit(fn, backend="reference").lower(np.zeros((4, 4), np.float32))
    assert "test_ops_numpy.py:" in str(info.value)


def test_type_predicates_are_python_bools_as_numpy():
    """iscomplexobj / isrealobj look at the dtype only (numpy's and jax.numpy's): a Python bool, traced or not."""
    z, x = np.complex64([1 + 0j]), np.float32([1])
    assert ops.iscomplexobj(z) is True and ops.isrealobj(z) is False
    assert ops.iscomplexobj(x) is False and ops.isrealobj(x) is True
    seen = []
    hj.jit(lambda z, x: seen.append((ops.iscomplexobj(z), ops.isrealobj(x))) or z).lower(z, x)
    assert seen == [(True, True)]


def test_functions_that_need_concrete_values_take_them_eagerly_and_say_so_traced():
    """numpy's behaviour where the result's shape or a check depends on the values: roots strips zeros,
    ix_ takes boolean masks, ravel_multi_index's mode='raise' checks; outside a trace (and on constants) they
    work as in numpy, and a traced value gets an error naming the op and the way out."""
    # roots is eig's, whose IREE compile took 15 of this test's 18 s: the concrete-value rules are the frontend's,
    # so the reference backend runs them (eig on IREE: test_linalg_eig)
    with hj.eager.default_backend("reference"):
        np.testing.assert_allclose(np.asarray(ops.roots(np.float32([0, 1, -3, 2, 0]))), np.complex64([2, 1, 0]),
                                   rtol=1e-5, atol=1e-6)
    traced = hj.jit(lambda p: ops.sort(ops.real(ops.roots(p, strip_zeros=False))), backend="reference")
    np.testing.assert_allclose(np.asarray(traced(np.float32([1, -6, 11, -6]))), [1, 2, 3], rtol=1e-5)
    rows, cols = ops.ix_(np.array([True, False, True]), [0, 2])
    assert np.asarray(rows).tolist() == [[0], [2]] and np.asarray(cols).tolist() == [[0, 2]]
    assert int(ops.ravel_multi_index((np.int32(2), np.int32(3)), (3, 4))) == 11
    with pytest.raises(ValueError, match="ravel_multi_index: coordinate 1 has an index out of range"):
        ops.ravel_multi_index((np.int32([0]), np.int32([4])), (3, 4))
    with pytest.raises(hj.TracingError, match=r"roots: strip_zeros=True needs the coefficients' values"):
        hj.jit(lambda p: ops.roots(p)).lower(np.float32([1, 2]))
    with pytest.raises(hj.TracingError, match=r"ravel_multi_index: mode='raise' cannot check traced indices"):
        hj.jit(lambda i: ops.ravel_multi_index((i, i), (3, 4))).lower(np.int32([1]))
    assert ops.promote_types(np.int32, np.float32) == np.float32 and ops.result_type(np.int8(1), 2.0) == np.float32
    assert ops.isdtype(np.uint8, "integral") and not ops.isdtype(np.float16, ("bool", "complex floating"))
    assert ops.ndim(np.zeros((2, 3))) == 2 and ops.size(np.zeros((2, 3)), 1) == 3 and ops.isscalar(1.5)
    assert ops.shape(np.zeros((2, 3))) == (2, 3)   # before: ops.shape was the submodule, not callable
    assert hj.jit(lambda x: ops.zeros(ops.shape(x)) + x)(np.ones((2, 2), np.float32)).shape == (2, 2)


def test_data_dependent_lengths_come_from_the_data_outside_a_trace():
    """jax.numpy computes a data-dependent shape eagerly: unique, nonzero, the set routines ... without size=
    give numpy's result outside a trace (before: "pass size=" there too); inside one size= is required. On the
    reference backend: the lengths are the frontend's to find, whatever runs the ops (on iree:cpu each op's eager
    programs took ~8 s of the suite's compiles, 2026-12-06)."""
    with hj.eager.default_backend("reference"):
        _data_dependent_lengths()
    with pytest.raises(hj.TracingError, match="unique: the length of the result depends on the data: pass size="):
        hj.jit(lambda x: ops.unique(x)).lower(np.float32([3, 1, 3]))


def _data_dependent_lengths():
    x = np.float32([3, 1, 3, np.nan, 0, np.nan])
    a, b = np.int32([5, 1, 3, 3, 9]), np.int32([3, 4, 9, 0, 4])
    pairs = [(ops.unique(x), np.unique(x)), (ops.unique(a, return_counts=True)[1], np.unique(a, return_counts=True)[1]),
             (ops.flatnonzero(a - 3), np.flatnonzero(a - 3)), (ops.argwhere(a > 3), np.argwhere(a > 3)),
             (ops.where(a > 3)[0], np.where(a > 3)[0]), (ops.extract(a > 2, a), np.extract(a > 2, a)),
             (ops.compress(np.array([True, False, True]), np.eye(3), axis=1),
              np.compress([True, False, True], np.eye(3), axis=1)),
             (ops.union1d(a, b), np.union1d(a, b)), (ops.intersect1d(a, b), np.intersect1d(a, b)),
             (ops.setdiff1d(a, b), np.setdiff1d(a, b)), (ops.setxor1d(a, b), np.setxor1d(a, b)),
             (ops.unique_values(hj.device_put(a)), np.unique(a))]
    for got, want in pairs:
        np.testing.assert_array_equal(np.asarray(got), want.astype(np.asarray(got).dtype))
    assert np.asarray(ops.where(a > 3, a, 0)).tolist() == [5, 0, 0, 0, 9]


def test_namespaces_import_by_name():
    """`import hlojit.numpy as hnp` is hlojit.ops (jax.numpy's role); both import in a fresh interpreter."""
    import subprocess
    import sys
    code = ("import hlojit.numpy as hnp, hlojit.ops, hlojit as hj; from hlojit.numpy import einsum, median; "
            "assert hnp is hj.ops is hj.numpy and einsum is hj.ops.einsum; print('ok')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == "ok", out.stderr
