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
