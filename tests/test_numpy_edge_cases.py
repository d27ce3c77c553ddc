"""numpy's answers at the edges that broke: empty arrays, too few points, negative zeros. Each case failed before
12-02 (an MLIR verifier error from a slice past an empty axis, the interpreter's reshape of an empty stack, a
ShapeError where numpy gives NaN, a cov of one sample with the wrong sign, cumsum(-0.0) as +0.0)."""
import warnings

import numpy as np
import pytest

import hlojit as hj
from hlojit import ops

from conftest import LIBRARY_BACKENDS

F32 = np.float32
EMPTY, EMPTY_ROWS, ONE = np.zeros((0,), F32), np.zeros((0, 3), F32), F32([2.5])
NEGATIVE_ZEROS = F32([-0.0, -0.0, 0.0, -0.0])

CASES = [  # (name, hlojit function, numpy function, inputs)
    ("diff empty", ops.diff, np.diff, (EMPTY,)),
    ("diff n=3 of one", lambda x: ops.diff(x, n=3), lambda x: np.diff(x, n=3), (ONE,)),
    ("ediff1d empty", ops.ediff1d, np.ediff1d, (EMPTY_ROWS,)),
    ("trapezoid empty", ops.trapezoid, np.trapezoid, (EMPTY,)),
    ("argmax of empty rows", lambda x: ops.argmax(x, axis=1), lambda x: np.argmax(x, axis=1).astype(np.int32),
     (EMPTY_ROWS,)),
    ("argmin of empty rows", lambda x: ops.argmin(x, axis=1), lambda x: np.argmin(x, axis=1).astype(np.int32),
     (EMPTY_ROWS,)),
    ("cumsum negative zeros", ops.cumsum, np.cumsum, (NEGATIVE_ZEROS,)),
    ("cumsum negative zeros, 2-d", lambda x: ops.cumsum(x.reshape(2, 2), axis=0),
     lambda x: np.cumsum(x.reshape(2, 2), axis=0), (NEGATIVE_ZEROS,)),
    ("median empty", ops.median, np.median, (EMPTY,)),
    ("nanmedian empty rows", lambda x: ops.nanmedian(x, axis=0), lambda x: np.nanmedian(x, axis=0), (EMPTY_ROWS,)),
    ("quantile empty", lambda x: ops.quantile(x, 0.3), lambda x: F32(np.nan), (EMPTY,)),   # numpy 2.4: IndexError
    ("nanpercentile empty, two q", lambda x: ops.nanpercentile(x, [10, 90]),   # numpy 2.4: one NaN, not two
     lambda x: np.full(2, np.nan, F32), (EMPTY,)),
    ("cov of one sample", ops.cov, np.cov, (ONE,)),
    ("cov empty", ops.cov, np.cov, (EMPTY,)),
    ("var ddof past the count", lambda x: ops.var(x, ddof=2), lambda x: np.var(x, ddof=2), (ONE,)),
    # 12-02, the audit of every name (each failed before)
    ("remainder's zeros take the divisor's sign", ops.remainder, np.remainder,
     (F32([-1, 1, -0.0, 0.0, -3]), F32([1, -1, 5, -np.inf, 3]))),
    ("floor_divide's zeros take the sign of a / b", ops.floor_divide, np.floor_divide,
     (F32([-0.0, -0.0, -1, -0.5, 1]), F32([1, -1, -np.inf, -2, np.inf]))),
    ("cumsum along full rows of no rows", lambda x: ops.cumsum(x, axis=1), lambda x: np.cumsum(x, axis=1),
     (EMPTY_ROWS,)),   # the interpreter's reduce_window: window shape cannot be larger than input array shape
    ("cummax of no rows", lambda x: ops.cummax(x, axis=1), lambda x: np.maximum.accumulate(x, axis=1), (EMPTY_ROWS,)),
    ("modf's zero fractions keep the sign", lambda x: ops.modf(x)[0], lambda x: np.modf(x)[0],
     (F32([-2.0, -0.0, 3.0, -np.inf]),)),
    ("correlate conjugates v (real part)", lambda a, v: ops.real(ops.correlate(a, v, "full")),
     lambda a, v: np.correlate(a, v, "full").real, (np.complex64([1, 1j, 2]), np.complex64([1j, 2 - 1j]))),
    ("correlate conjugates v (imaginary part)", lambda a, v: ops.imag(ops.correlate(a, v, "full")),
     lambda a, v: np.correlate(a, v, "full").imag, (np.complex64([1, 1j, 2]), np.complex64([1j, 2 - 1j]))),
    ("nanvar with ddof at the count", lambda x: ops.nanvar(x, ddof=2), lambda x: np.nanvar(x, ddof=2),
     (F32([1, np.nan, 3]),)),
    ("poly of no roots", ops.poly, np.poly, (EMPTY,)),
    ("polyder of a constant", ops.polyder, np.polyder, (ONE,)),
    ("polymul by no coefficients", ops.polymul, np.polymul, (EMPTY, F32([3, 1, 2]))),
    ("histogram counts of nothing", lambda x: ops.histogram(x, 4)[0], lambda x: np.histogram(x, 4)[0], (EMPTY,)),
    ("histogram edges of nothing", lambda x: ops.histogram(x, 4)[1], lambda x: np.histogram(x, 4)[1], (EMPTY,)),
    ("unique of nothing, filled", lambda x: ops.unique(x, size=2, fill_value=7.0), lambda x: np.full(2, 7.0),
     (EMPTY,)),
    ("take no traced indices from nothing", lambda x, i: ops.take(x, i, axis=0), lambda x, i: np.take(x, i, axis=0),
     (EMPTY_ROWS, np.zeros(0, np.int32))),
    ("resize nothing", lambda x: ops.resize(x, (2, 2)), lambda x: np.resize(x, (2, 2)), (EMPTY,)),
    ("delete no positions", lambda x: ops.delete(x, []), lambda x: np.delete(x, []), (NEGATIVE_ZEROS,)),
    ("log_sigmoid(inf) is -0.0", ops.log_sigmoid, lambda x: -np.logaddexp(0, -x), (F32([np.inf, -np.inf, 0]),)),
    ("lgamma is +0.0 at 1 and 2", ops.lgamma, lambda x: F32([0.0, 0.0]), (F32([1, 2]),)),
    ("quantile of negative zeros", lambda x: ops.quantile(x, 0.5), lambda x: np.quantile(x, 0.5), (NEGATIVE_ZEROS[:2],)),
    # numpy's keywords for these edges (a TypeError before): initial= for max of nothing, where=, dtype=, modes
    ("max of nothing, initial", lambda x: ops.max(x, initial=-1.0), lambda x: np.max(x, initial=-1.0), (EMPTY,)),
    ("max of no rows, initial", lambda x: ops.max(x, axis=0, initial=-1.0), lambda x: np.max(x, axis=0, initial=-1.0),
     (EMPTY_ROWS,)),
    ("max of bools, initial", lambda x: ops.max(x > 5, initial=True), lambda x: np.max(x > 5, initial=True),
     (F32([1, 2]),)),
    ("min where, initial", lambda x: ops.min(x, where=x > 0, initial=9.0), lambda x: np.min(x, where=x > 0, initial=9.0),
     (F32([-2, 3, 1, -1]),)),
    ("sum where, initial", lambda x: ops.sum(x, where=x > 0, initial=0.5),
     lambda x: np.sum(x, where=x > 0, initial=0.5), (F32([-2, 3, 1, -1]),)),
    ("mean where, none kept", lambda x: ops.mean(x.reshape(2, 2), axis=1, where=x.reshape(2, 2) > 0),
     lambda x: np.mean(x.reshape(2, 2), axis=1, where=x.reshape(2, 2) > 0), (F32([-2, -3, 1, 2]),)),
    ("sum in int8 wraps", lambda x: ops.sum(x, dtype=np.int8), lambda x: np.sum(x, dtype=np.int8),
     (np.int8([100, 100, 7]),)),
    ("take wrap", lambda x, i: ops.take(x, i, mode="wrap"), lambda x, i: np.take(x, i, mode="wrap"),
     (F32([3, 1, 2, 5]), np.int32([5, -9, 2, -1]))),
    ("take clip", lambda x, i: ops.take(x, i, mode="clip"), lambda x, i: np.take(x, i, mode="clip"),
     (F32([3, 1, 2, 5]), np.int32([5, -9, 2, -1]))),
    ("interp period", lambda x, xp, fp: ops.interp(x, xp, fp, period=360),
     lambda x, xp, fp: np.interp(x, xp, fp, period=360),
     (F32([-180, -185, 185, -5, 0, 365, 175]), F32([190, -190, 350, -350]), F32([5, 10, 3, 4]))),
    ("compress with a shorter condition", lambda x: ops.compress(np.array([True, False, True]), x, size=2),
     lambda x: np.compress([True, False, True], x), (F32([3, 1, 2, 5]),)),
    ("pad mean, integers round half to even", lambda x: ops.pad(x, ((1, 2), (2, 1)), mode="mean"),
     lambda x: np.pad(x, ((1, 2), (2, 1)), mode="mean"), (np.int32([[1, 2, 3], [4, 5, 9]]),)),
    ("pad median", lambda x: ops.pad(x, (2, 1), mode="median"), lambda x: np.pad(x, (2, 1), mode="median"),
     (F32([3, 1, 2, 5]),)),
    ("pad maximum", lambda x: ops.pad(x, (1, 2), mode="maximum"), lambda x: np.pad(x, (1, 2), mode="maximum"),
     (F32([3, 1, 2, 5]),)),
    ("pad linear_ramp", lambda x: ops.pad(x, (4, 2), mode="linear_ramp", end_values=(5, -3)),
     lambda x: np.pad(x, (4, 2), mode="linear_ramp", end_values=(5, -3)), (F32([1, 2, 6, 1]),)),
    ("reshape order F", lambda x: ops.reshape(x, (4, 6), order="F"), lambda x: np.reshape(x, (4, 6), order="F"),
     (np.arange(24, dtype=F32).reshape(2, 3, 4),)),
    ("ravel order F", lambda x: ops.ravel(x, order="F"), lambda x: np.ravel(x, order="F"),
     (np.arange(6, dtype=F32).reshape(2, 3),)),
    ("argsort kind heapsort, ties in order", lambda x: ops.argsort(x, kind="heapsort"),
     lambda x: np.argsort(x, kind="stable"), (F32([1, 0, 1, 0, 1]),)),
]

EAGER_CASES = [  # (name, hlojit function, numpy function, inputs): outside a trace the data give the lengths
    ("unique of nothing", ops.unique, np.unique, (EMPTY_ROWS,)),
    ("unique_counts of nothing", lambda x: ops.unique_counts(x).counts, lambda x: np.unique_counts(x).counts,
     (EMPTY,)),
    ("unique's inverse of nothing keeps the shape", lambda x: ops.unique(x, return_inverse=True)[1],
     lambda x: np.unique(x, return_inverse=True)[1], (EMPTY_ROWS,)),
    ("union1d of nothing", ops.union1d, np.union1d, (EMPTY, EMPTY)),
]


def _same(actual, expected) -> bool:
    """Equal values, NaNs where numpy's are, and the same signs elsewhere (so -0.0 is not 0.0)."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    numbers = ~np.isnan(expected)
    return actual.shape == expected.shape and np.array_equal(actual, expected, equal_nan=True) and \
        np.array_equal(np.signbit(actual)[numbers], np.signbit(expected)[numbers])


@pytest.mark.parametrize("backend", LIBRARY_BACKENDS)
def test_edges_give_numpys_answers(backend):
    got = hj.jit(lambda *inputs: [f(*x) for (_, f, _, _), x in zip(CASES, inputs)],
                 backend=backend)(*[x for *_, x in CASES])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)     # numpy warns of the empty and degenerate ones
        expected = [np.asarray(numpy_fn(*x), F32) for _, _, numpy_fn, x in CASES]
    bad = [(name, np.asarray(g), e) for (name, *_), g, e in zip(CASES, got, expected) if not _same(g, e)]
    assert not bad, bad


def test_eager_edges_give_numpys_answers():
    with hj.eager.default_backend("reference"):
        got = [f(*x) for _, f, _, x in EAGER_CASES]
    bad = [(name, np.asarray(g), numpy_fn(*x)) for (name, _, numpy_fn, x), g in zip(EAGER_CASES, got)
           if not _same(g, numpy_fn(*x))]
    assert not bad, bad
