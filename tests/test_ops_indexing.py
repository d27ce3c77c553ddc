"""Indexing on every backend against numpy: `x[...]` (ints, slices with any step, None, `...`, integer arrays
static and traced, broadcast together), take, take_along_axis, one_hot, dynamic_slice, dynamic_update_slice,
and `x.at[...].set/add/multiply/min/max` (repeated indices accumulate as numpy's np.add.at); then what
traced out-of-range indices do (JAX's rule: gathers clamp, scatters drop; numpy would raise), and the
trace-time errors. Random indexes and JAX's own gather/scatter forms: test_ops_indexing_forms.py.

A case is (id, fn, numpy inputs, numpy's answer). Each group is ONE jitted module per backend returning
every case's result (compiling costs ~0.4 s a module), and each case is its own pytest item. Data movement
must be exact; float accumulation (`.at[].add` with repeats) may differ from numpy's order in the last bit.
"""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import hlojit as hj
from hlojit import ops
from hlojit.pipeline import compile_program, cuda

from conftest import BACKENDS, assert_close, group_module, group_result

RNG = np.random.default_rng(7)
X = RNG.standard_normal((3, 4, 5)).astype(np.float32)
I32 = np.int32

# --- x[index] --------------------------------------------------------------------------------------

STATIC = [  # (id, index) applied to X (3, 4, 5)
    ("int", 1), ("negative-int", -1), ("ints", (1, -2)), ("ints-to-scalar", (2, 0, -1)), ("empty-tuple", ()),
    ("slice", slice(1, 3)), ("slice-step", (slice(None), slice(None, None, 2))),
    ("slice-step3-offset", (..., slice(1, None, 3))), ("slice-bounds-past-the-ends", slice(-10, 10)),
    ("slice-empty", slice(2, 1)), ("negative-step", slice(None, None, -1)),
    ("negative-step-2", (slice(None), slice(3, 0, -2))), ("negative-step-last-axis", (..., slice(-2, None, -3))),
    ("negative-steps-every-axis", (slice(None, None, -2), slice(2, None, -1), slice(None, 0, -3))),
    ("negative-step-and-ints", (slice(None, None, -1), 2, 1)),
    ("newaxis", None), ("newaxis-middle", (slice(None), None, 1)), ("ellipsis-last", (..., 0)),
    ("ellipsis-newaxis", (None, ..., None, slice(None, None, -1))), ("ellipsis-middle", (0, ..., 1)),
    ("ellipsis-of-nothing", (0, 1, ..., 2)), ("newaxis-ellipsis-int-step", (None, 1, ..., slice(4, 0, -2), None)),
    ("array", np.array([2, 0, 2])), ("array-negative", np.array([-1, 0])), ("list", [1, 1, 0]),
    ("array-2d", np.array([[0, 2], [1, 1]])), ("array-axis1", (slice(None), np.array([3, 0, -1]))),
    ("array-2d-last-axis", (..., np.array([[0, 4], [1, 3]]))), ("array-0d", np.array(1)),
    ("array-empty", np.array([], np.int64)),
    ("arrays-broadcast", (np.array([[0], [2]]), np.array([1, 3, 0]))),
    ("arrays-adjacent-middle", (slice(None), np.array([0, 2]), np.array([1, 4]))),
    ("arrays-separated", (np.array([0, 2]), slice(None), np.array([1, 4]))),
    ("array-and-int-separated", (1, slice(1, 3), np.array([0, 4, 2]))),
    ("array-int-adjacent", (slice(1, None), 2, np.array([[0, 4], [2, 2]]))),
    ("arrays-ellipsis-of-nothing-between", (np.array([1, 0]), ..., np.array(2), np.array([0, 1]))),
    ("array-strided-reversed", (np.array([2, 0]), slice(None, None, -2), slice(1, None, 2))),
    ("array-partial-last-axis", (slice(None), np.array([[1, 0, 3]]), slice(None, -2))),
    ("array-newaxes", (None, np.array([1, 0]), None)), ("arrays-every-axis", (np.array([0, 2]), [1, 1], [3, 4])),
]

TRACED = [  # (id, fn, index arrays passed as arguments after X)
    ("traced", lambda x, i: x[i], [np.array([2, -1, 0], I32)]),
    ("traced-2d-last-axis", lambda x, i: x[:, 1:, i], [np.array([[4, 0], [-5, 1]], I32)]),
    ("traced-and-static-separated", lambda x, i: x[i, :, np.array([0, 4])], [np.array([[1], [2]], I32)]),
    ("traced-broadcast-pair", lambda x, i, j: x[i, j], [np.array([[0], [2]], I32), np.array([3, 1, 0], I32)]),
    ("traced-0d", lambda x, i: x[1, i], [np.array(-2, I32)]),
    ("traced-int8", lambda x, i: x[..., i], [np.array([-5, 4, -1], np.int8)]),
    ("traced-uint8", lambda x, i: x[:, i], [np.array([3, 0], np.uint8)]),
    ("traced-int64-reversed", lambda x, i: x[::-1, i, ::-2], [np.array([1, -3], np.int64)]),
    ("traced-computed", lambda x, i: x[(i + 1) % 3], [np.array([0, 1, 2, 5], I32)]),
]


def getitem_cases():
    cases = [(f"getitem-{cid}", lambda x, idx=idx: x[idx], (X,), X[idx]) for cid, idx in STATIC]
    cases += [(f"getitem-{cid}", fn, (X, *idx), fn(X, *idx)) for cid, fn, idx in TRACED]
    return cases


DTYPES = [np.float64, np.int32, np.bool_, np.float16, ml_dtypes.bfloat16, np.int8, np.uint8, np.int64, np.uint32]


def dtype_cases():
    """Gather, slices and scatter move every dtype exactly."""
    cases = []
    for dtype in map(np.dtype, DTYPES):
        x = (X * 5).astype(dtype) if dtype != np.bool_ else X > 0
        v = np.ones((2, 3, 5), dtype) if dtype == np.bool_ else np.arange(30).reshape(2, 3, 5).astype(dtype)
        expected = x.copy()
        expected[np.array([2, 0]), 3:0:-1] = v
        cases += [
            (f"getitem-{dtype}", lambda x: x[::-1, np.array([0, 2])], (x,), x[::-1, np.array([0, 2])]),
            (f"set-{dtype}", lambda x, v: x.at[np.array([2, 0]), 3:0:-1].set(v), (x, v), expected),
        ]
    return cases


# --- take, take_along_axis, one_hot, dynamic slices ---------------------------------------------------

ORDER = np.argsort(X, axis=2).astype(I32)
LABELS = np.array([[0, 2, -1], [5, 1, 3]], I32)


def _dynamic_slice(x, starts, sizes):
    """numpy's answer for lax.dynamic_slice: negative starts count from the end, then clamp."""
    starts = [min(max(s + n if s < 0 else s, 0), n - size) for s, n, size in zip(starts, x.shape, sizes)]
    return x[tuple(slice(s, s + size) for s, size in zip(starts, sizes))], starts


def _dynamic_update(x, update, starts):
    _, starts = _dynamic_slice(x, starts, update.shape)
    out = x.copy()
    out[tuple(slice(s, s + n) for s, n in zip(starts, update.shape))] = update
    return out


UPDATE = RNG.standard_normal((2, 2, 3)).astype(np.float32)


def gather_family_cases():
    one_hot = lambda i, n, axis=-1: np.moveaxis(np.arange(n) == i[..., None], -1, axis).astype(np.float32)  # noqa
    return [
        ("take-flat", lambda x: ops.take(x, [0, 7, -1]), (X,), np.take(X, [0, 7, -1])),
        ("take-axis1-2d", lambda x: ops.take(x, np.array([[0, 1], [3, 3]]), axis=1), (X,),
         np.take(X, np.array([[0, 1], [3, 3]]), axis=1)),
        ("take-int-last-axis", lambda x: ops.take(x, 2, axis=-1), (X,), np.take(X, 2, axis=-1)),
        ("take-traced", lambda x, i: ops.take(x, i, axis=0), (X, np.array([[2], [0]], I32)),
         np.take(X, [[2], [0]], axis=0)),
        ("take_along_axis", lambda x, i: ops.take_along_axis(x, i, axis=2), (X, ORDER),
         np.take_along_axis(X, ORDER, axis=2)),
        ("take_along_axis-static-broadcast", lambda x: ops.take_along_axis(x, np.array([[[4, 0]]]), axis=-1), (X,),
         np.take_along_axis(X, np.array([[[4, 0]]]), axis=-1)),
        ("take_along_axis-axis0", lambda x, i: ops.take_along_axis(x, i, 0), (X, ORDER[:2] % 3),
         np.take_along_axis(X, ORDER[:2] % 3, 0)),
        ("take_along_axis-none", lambda x: ops.take_along_axis(x, np.array([59, 0, 7]), None), (X,),
         np.take_along_axis(X, np.array([59, 0, 7]), None)),
        ("one_hot", lambda i: ops.one_hot(i, 4), (LABELS,), one_hot(LABELS, 4)),
        ("one_hot-axis0-int8", lambda i: ops.one_hot(i, 3, dtype=np.int8, axis=0), (LABELS,),
         one_hot(LABELS, 3, 0).astype(np.int8)),
        ("one_hot-static-bool", lambda: ops.one_hot(np.array([1, 0]), 2, dtype=bool), (),
         np.eye(2, dtype=bool)[[1, 0]]),
        ("dynamic_slice-static", lambda x: ops.dynamic_slice(x, (1, 0, -3), (2, 3, 3)), (X,), X[1:3, 0:3, 2:5]),
        ("dynamic_slice-traced-clamps", lambda x, i, j: ops.dynamic_slice(x, (i, 1, j), (2, 2, 3)),
         (X, np.int32(2), np.int32(-2)), _dynamic_slice(X, (2, 1, -2), (2, 2, 3))[0]),
        ("dynamic_slice-1d-start-tensor", lambda x, s: ops.dynamic_slice(x, s, (1, 4, 2)),
         (X, np.array([1, 0, 9], np.int64)), _dynamic_slice(X, (1, 0, 9), (1, 4, 2))[0]),
        ("dynamic_update_slice-static", lambda x, u: ops.dynamic_update_slice(x, u, (1, 2, 2)), (X, UPDATE),
         _dynamic_update(X, UPDATE, (1, 2, 2))),
        ("dynamic_update_slice-traced-clamps", lambda x, u, i: ops.dynamic_update_slice(x, u, (i, 0, -3)),
         (X, UPDATE, np.int32(7)), _dynamic_update(X, UPDATE, (7, 0, -3))),
        ("dynamic_update_slice-casts-update", lambda x: ops.dynamic_update_slice(x, np.ones((1, 1, 5), np.int32),
                                                                                  (0, 3, 0)), (X,),
         _dynamic_update(X, np.ones((1, 1, 5), np.float32), (0, 3, 0))),
    ]


# --- x.at[index] -------------------------------------------------------------------------------------

def _at(index, values, ufunc=None):
    """numpy's answer for X.at[index].<op>(values): assignment, or ufunc.at (repeats accumulate)."""
    out = X.copy()
    if ufunc is None:
        out[index] = values
    else:
        ufunc.at(out, index, values)
    return out


def _v(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


V22, V35, V245, V225 = _v(2, 2), _v(3, 5), _v(2, 4, 5), _v(2, 2, 5)


def set_cases():
    sets = [  # (id, index, values): x.at[index].set(values), and x[index] = values in numpy
        ("int-scalar", 1, 0.5), ("slice-broadcast-row", (slice(None), slice(1, 3)), np.arange(5, dtype=np.float32)),
        ("ints-inner-block", (2, slice(1, 3), slice(2, 4)), V22),
        ("negative-steps", (slice(None, None, -1), slice(None, None, 2)), _v(3, 2, 5)),
        ("strided-partial-last-axis", (slice(1, None), slice(1, 3), slice(None, None, 3)), _v(2, 2, 2)),
        ("ellipsis-newaxis", (None, ..., 1), _v(1, 3, 4)),
        ("array", np.array([2, 0]), V245),
        ("array-2d-axis1", (slice(None), np.array([[0, 1], [3, 2]])), _v(3, 2, 2, 5)),
        ("arrays-separated", (np.array([0, 2]), slice(None), np.array([4, 1])), _v(2, 4)),
        ("arrays-broadcast-scalar", (np.array([[0], [2]]), np.array([1, 3])), 7.0),
        ("whole", ..., 2.0), ("leading-ones-dropped", 1, _v(1, 4, 5)),
    ]
    cases = [(f"set-{cid}", lambda x, v, idx=idx: x.at[idx].set(v), (X, np.float32(v) if np.isscalar(v) else v),
              _at(idx, v)) for cid, idx, v in sets]
    i = np.array([2, -3], I32)
    cases += [
        ("set-traced", lambda x, i, v: x.at[i].set(v), (X, i, V245), _at(i, V245)),
        ("set-traced-and-strided", lambda x, i, v: x.at[i, ::-2].set(v), (X, i, V225),
         _at((i, slice(None, None, -2)), V225)),
        ("set-python-scalar-into-int", lambda x: x.astype(np.int32).at[1, 2].set(-4), (X,),
         np.where(np.arange(60).reshape(3, 4, 5) // 5 == 6, -4, X.astype(np.int32))),
        ("set-0d", lambda s: s.at[()].set(3.0), (np.float32(1),), np.float32(3)),
        ("get", lambda x: x.at[1, ::2].get(), (X,), X[1, ::2]),
        ("set-does-not-change-x", lambda x: [x.at[0].set(0.0), x][1], (X,), X),
    ]
    return cases


def combine_cases():
    dup = np.array([0, 2, 0, 1, 0])
    cases = [
        ("add-repeats", lambda x, v: x.at[dup].add(v), (X, _v(5, 4, 5)), None),
        ("add-repeats-2d-index", lambda x: x.at[:, np.array([[1, 1], [3, 1]])].add(1.0), (X,), None),
        ("add-repeated-pairs", lambda x, v: x.at[np.array([0, 0, 2]), :, np.array([4, 4, 4])].add(v),
         (X, _v(3, 4)), None),
        ("add-traced-repeats", lambda x, i, v: x.at[:, :, i].add(v), (X, np.array([3, -2, 3, 3], I32), _v(3, 4, 4)),
         None),
        ("add-block", lambda x, v: x.at[1:3, :, 2].add(v), (X, _v(2, 4)), None),
        ("add-negative-step", lambda x, v: x.at[::-1, 1].add(v), (X, V35), None),
        ("multiply-repeats", lambda x, v: x.at[dup, 1].multiply(v), (X, _v(5, 5)), None),
        ("min-repeats", lambda x, v: x.at[:, dup].min(v), (X, _v(3, 5, 5)), None),
        ("max-repeats-strided", lambda x, v: x.at[dup, ::2].max(v), (X, _v(5, 2, 5)), None),
        ("max-block", lambda x, v: x.at[0].max(v), (X, _v(4, 5)), None),
    ]
    expected = {  # numpy: ufunc.at on a copy
        "add-repeats": _at(dup, cases[0][2][1], np.add),
        "add-repeats-2d-index": _at((slice(None), np.array([[1, 1], [3, 1]])), 1.0, np.add),
        "add-repeated-pairs": _at((np.array([0, 0, 2]), slice(None), np.array([4, 4, 4])), cases[2][2][1], np.add),
        "add-traced-repeats": _at((slice(None), slice(None), cases[3][2][1]), cases[3][2][2], np.add),
        "add-block": _at((slice(1, 3), slice(None), 2), cases[4][2][1], np.add),
        "add-negative-step": _at((slice(None, None, -1), 1), V35, np.add),
        "multiply-repeats": _at((dup, 1), cases[6][2][1], np.multiply),
        "min-repeats": _at((slice(None), dup), cases[7][2][1], np.minimum),
        "max-repeats-strided": _at((dup, slice(None, None, 2)), cases[8][2][1], np.maximum),
        "max-block": _at(0, cases[9][2][1], np.maximum),
    }
    cases = [(cid, fn, args, expected[cid]) for cid, fn, args, _ in cases]
    # integers and bools: add accumulates exactly (wrapping like numpy), bool add is or, multiply is and
    xi = (X * 40).astype(np.int8)
    xb = X > 0
    ib = np.array([1, 1, 0])
    for name, dtype_x, fn, ufunc, v in [
        ("add-int8-wraps", xi, lambda x, v: x.at[ib].add(v), np.add, np.full((3, 4, 5), 100, np.int8)),
        ("max-uint8", (X * 40 + 100).astype(np.uint8), lambda x, v: x.at[:, ib].max(v), np.maximum,
         np.arange(45, dtype=np.uint8).reshape(3, 3, 5) * 5),
        ("min-int32", (X * 1000).astype(np.int32), lambda x, v: x.at[..., ib].min(v), np.minimum,
         np.arange(36, dtype=np.int32).reshape(3, 4, 3) * -37),
        ("multiply-f64", X.astype(np.float64), lambda x, v: x.at[ib, 1:3].multiply(v), np.multiply,
         np.linspace(-2, 2, 30).reshape(3, 2, 5)),
        ("add-bool-is-or", xb, lambda x, v: x.at[ib].add(v), np.add, np.ones((3, 4, 5), bool)),
        ("multiply-bool-is-and", xb, lambda x, v: x.at[ib].multiply(v), np.multiply, RNG.random((3, 4, 5)) < 0.5),
        ("max-bool", xb, lambda x, v: x.at[:, ib].max(v), np.maximum, RNG.random((3, 3, 5)) < 0.5),
    ]:
        out = dtype_x.copy()
        index = {"add-int8-wraps": ib, "max-uint8": (slice(None), ib), "min-int32": (..., ib),
                 "multiply-f64": (ib, slice(1, 3)), "add-bool-is-or": ib, "multiply-bool-is-and": ib,
                 "max-bool": (slice(None), ib)}[name]
        ufunc.at(out, index, v)
        cases.append((name, fn, (dtype_x, v), out))
    return cases


# --- traced indices out of range: JAX's rule, where numpy would raise ---------------------------------
# Gathers (x[i], .at[].get, take) clamp: a negative index counts from the end, then clamps into [0, n).
# Scatters (.at[].set/add/multiply/min/max) drop an update whose index is out of range after a negative one
# in range (-n..-1) counted from the end (JAX 0.10.2; test_out_of_range_rule_is_jaxs checks these helpers).

WILD = np.array([0, 4, 5, -1, -5, -6, 100, -100, 2**31 - 1, -2**31], I32)   # for an axis of 5
AT_MODES = {"set": None, "add": np.add, "multiply": np.multiply, "min": np.minimum, "max": np.maximum}


def _gathered(i, n):
    return int(np.clip(i + n if i < 0 else i, 0, n - 1))


def _scattered(i, n):
    """The element a scatter index lands on, or None: the update is dropped."""
    i = i + n if i < 0 else i
    return i if 0 <= i < n else None


def _scatter_by_jax_rule(x, mode, index, value):
    out = x.copy()
    if index is not None:
        out[index] = value if mode == "set" else AT_MODES[mode](out[index], value)
    return out


def _one_index_everywhere(x, wild, lib=ops):
    """For every index of `wild` (traced, one at a time): x.at[i].<mode>(7) for every mode, x.at[i].get()
    and x[i] (broadcast to x's shape), stacked: (len(wild) * 7, n). `lib`: ops, or jax.numpy."""
    out = []
    for k in range(wild.shape[0]):
        i = wild[k]
        out += [getattr(x.at[i], mode)(7.0) for mode in AT_MODES]
        out += [lib.broadcast_to(x.at[i].get(), x.shape), lib.broadcast_to(x[i], x.shape)]
    return lib.stack(out)


def _one_index_expected(x, wild):
    out = []
    for i in wild.tolist():
        out += [_scatter_by_jax_rule(x, mode, _scattered(i, x.shape[0]), 7.0) for mode in AT_MODES]
        out += [np.full(x.shape, x[_gathered(i, x.shape[0])])] * 2
    return np.stack(out)


def out_of_range_cases():
    x5 = np.arange(5, dtype=np.float32) - 2
    rows, cols = np.array([0, 3, -4, 2], I32), np.array([9, 4, 1, -5], I32)   # X (3, 4, 5): rows of 3, cols of 5
    pair = X.copy()
    for k, (r, c) in enumerate(zip(rows.tolist(), cols.tolist())):
        if _scattered(r, 3) is not None and _scattered(c, 5) is not None:
            pair[_scattered(r, 3), :, _scattered(c, 5)] += k
    small = np.array([[7, 1], [0, 3]], np.uint8)           # uint8 past the end of an axis of 3 (no negatives)
    unsigned = X.copy()
    unsigned[[0, 1]] = -1.0
    wide = np.array([2**40, -2**40, -1, 1], np.int64)       # int64 far out of range both ways
    wide_out = X.copy()
    wide_out[[2, 1]] += 1.0
    return [
        ("every-mode-one-index", _one_index_everywhere, (x5, WILD), _one_index_expected(x5, WILD)),
        ("gather-clamps-pair", lambda x, i, j: x[i, :, j], (X, rows, cols),
         X[[_gathered(r, 3) for r in rows.tolist()], :, [_gathered(c, 5) for c in cols.tolist()]]),
        ("scatter-add-drops-pairs", lambda x, i, j: x.at[i, :, j].add(ops.arange(4.0)[:, None]), (X, rows, cols),
         pair),
        ("scatter-set-uint8-drops", lambda x, i: x.at[i].set(-1.0), (X, small), unsigned),
        ("scatter-add-int64-drops", lambda x, i: x.at[i].add(1.0), (X, wide), wide_out),
        ("scatter-add-int8-into-300", lambda x, i: x.at[i].add(1.0), (np.zeros(300, np.float32), LONG_AXIS_I8),
         np.bincount(LONG_AXIS_I8.astype(int) % 300, minlength=300).astype(np.float32)),   # every int8 is in range
        ("take-clamps", lambda x, i: ops.take(x, i), (X, np.array([100, -100], I32)), X.reshape(-1)[[59, 0]]),
    ]


LONG_AXIS_I8 = np.array([-128, 127, -1, 5], np.int8)


def test_out_of_range_rule_is_jaxs():
    """The helpers above are JAX's rule: every mode, every index of WILD, against jax itself."""
    jax = pytest.importorskip("jax")
    x5 = np.arange(5, dtype=np.float32) - 2
    theirs = jax.jit(lambda x, i: _one_index_everywhere(x, i, jax.numpy))(x5, WILD)
    np.testing.assert_array_equal(np.asarray(theirs), _one_index_expected(x5, WILD))


GROUPS = {"getitem": getitem_cases(), "dtypes": dtype_cases(), "take-one_hot-dynamic": gather_family_cases(),
          "at-set": set_cases(), "at-combine": combine_cases(), "out-of-range": out_of_range_cases()}
for _cases in GROUPS.values():
    assert len({c[0] for c in _cases}) == len(_cases), "duplicate case ids"


_RESULTS: dict = {}


def result(backend, group, index):
    return group_result(_RESULTS, backend, group, GROUPS[group], index)


@pytest.mark.parametrize("backend, group, index", [
    pytest.param(b, g, i, id=f"{b}-{c[0]}") for b in BACKENDS for g, cases in GROUPS.items()
    for i, c in enumerate(cases)])
def test_op(backend, group, index):
    expected = np.asarray(GROUPS[group][index][3])
    actual = np.asarray(result(backend, group, index))
    if group == "at-combine" and expected.dtype.kind == "f":  # repeats accumulate in IREE's order
        assert_close(actual, expected, scale=4)
    else:
        assert actual.dtype == expected.dtype and actual.shape == expected.shape, \
            f"{actual.dtype}{list(actual.shape)} != {expected.dtype}{list(expected.shape)}"
        np.testing.assert_array_equal(actual, expected)


@pytest.mark.parametrize("group", ["dtypes", "at-combine", "out-of-range"])
def test_compiles_for_cuda(group):
    """No GPU here: gathers, slices and scatters must at least compile for CUDA (sm_80). These groups hold
    every kind of op the others do (getitem's module alone takes ~10 s to compile for CUDA)."""
    cases = GROUPS[group]
    compile_program(hj.jit(group_module(cases)).lower([c[2] for c in cases]).program, cuda())


# --- trace-time errors: op name, index, shape, the user's file:line ------------------------------------

def _trace(fn, *args):
    return hj.jit(fn, backend="reference").lower(*args)


ERRORS = [  # (id, fn of x (f32[3, 4, 5]) and i (i32[2]), error, message regex)
    ("int-out-of-range", lambda x, i: x[3], IndexError,
     r"getitem: index 3 is out of bounds for axis 0 with size 3 \(indexing float32\[3, 4, 5\]\)"),
    ("negative-int-out-of-range", lambda x, i: x[:, -5], hj.ShapeError, r"index -5 is out of bounds for axis 1 with"),
    ("array-out-of-range", lambda x, i: x[..., np.array([0, 5])], IndexError,
     r"index 5 is out of bounds for axis 2 with size 5"),
    ("too-many-indices", lambda x, i: x[0, 0, 0, 0], IndexError, r"too many indices: 4 for float32\[3, 4, 5\]"),
    ("two-ellipses", lambda x, i: x[..., 0, ...], IndexError, r"a single ellipsis"),
    ("bool-mask-array", lambda x, i: x[np.array([True, False, True])], TypeError, r"boolean masks are not supported"),
    ("bool-mask-traced", lambda x, i: x[x > 0], TypeError, r"getitem: boolean masks .* depend on the data"),
    ("bool-scalar", lambda x, i: x[True], TypeError, r"boolean masks"),
    ("float-index", lambda x, i: x[np.array([0.5])], hj.DTypeError,
     r"indices must be integers, not an array of float64"),
    ("float-traced-index", lambda x, i: x[x[0, 0]], hj.DTypeError, r"indices must be integers, not float32\[5\]"),
    ("traced-slice-bound", lambda x, i: x[i[0]:], hj.TracingError, r"slice bounds must be static ints.*dynamic_slice"),
    ("zero-step", lambda x, i: x[::0], ValueError, r"slice step cannot be zero"),
    ("string-index", lambda x, i: x["a"], TypeError, r"cannot index with a str"),
    ("arrays-do-not-broadcast", lambda x, i: x[np.array([0, 1]), np.array([0, 1, 2])], IndexError,
     r"indexing arrays of shapes \(2,\), \(3,\) cannot be broadcast"),
    ("traced-index-into-nothing", lambda x, i: x[:, :0][:, i], IndexError, r"traced indices into axis 1 of size 0"),
    ("set-values-do-not-fit", lambda x, i: x.at[0].set(np.ones(3, np.float32)), hj.ShapeError,
     r"at\[\]\.set: cannot broadcast the values float32\[3\] to the indexed shape \(4, 5\) of float32\[3, 4, 5\]"),
    ("add-out-of-range", lambda x, i: x.at[np.array([7])].add(1.0), IndexError, r"at\[\]\.add: index 7 is out of"),
    ("take-out-of-range", lambda x, i: ops.take(x, [60]), IndexError, r"take: index 60 is out of bounds for axis 0"),
    ("take-bad-axis", lambda x, i: ops.take(x, [0], axis=3), hj.ShapeError, r"take: axis 3 is out of range"),
    ("take_along_axis-rank", lambda x, i: ops.take_along_axis(x, i, axis=0), hj.ShapeError,
     r"take_along_axis: indices int32\[2\] must have the rank of float32\[3, 4, 5\]"),
    ("dynamic_slice-size", lambda x, i: ops.dynamic_slice(x, (0, 0, 0), (4, 1, 1)), hj.ShapeError,
     r"dynamic_slice: slice size 4 does not fit axis 0 of float32\[3, 4, 5\]"),
    ("dynamic_slice-static-start", lambda x, i: ops.dynamic_slice(x, (0, 3, 0), (1, 2, 1)), IndexError,
     r"dynamic_slice: start index 3 with size 2 is out of bounds for axis 1 with size 4"),
    ("dynamic_slice-count", lambda x, i: ops.dynamic_slice(x, (0, 0), (1, 1, 1)), hj.ShapeError,
     r"2 start indices for float32\[3, 4, 5\] of rank 3"),
    ("dynamic_slice-float-start", lambda x, i: ops.dynamic_slice(x, (x[0, 0, 0], 0, 0), (1, 1, 1)), hj.DTypeError,
     r"a start index must be a 0-d integer, not float32\[\]"),
    ("dynamic_update_slice-too-big", lambda x, i: ops.dynamic_update_slice(x, np.zeros((4, 1, 1)), (0, 0, 0)),
     hj.ShapeError, r"update float32\[4, 1, 1\] does not fit inside float32\[3, 4, 5\]"),
    ("one_hot-float", lambda x, i: ops.one_hot(x, 3), hj.DTypeError, r"one_hot: indices must be integers"),
    ("one_hot-classes", lambda x, i: ops.one_hot(i, -1), ValueError, r"num_classes must be a non-negative int"),
]


@pytest.mark.parametrize("fn, error, match", [pytest.param(*e[1:], id=e[0]) for e in ERRORS])
def test_errors_name_the_op_the_index_the_shape_and_the_line(fn, error, match):
    with pytest.raises(error, match=match) as info:
        _trace(fn, X, np.array([0, 1], I32))
    assert "at test_ops_indexing.py:" in str(info.value)


def test_out_of_range_is_an_index_error_and_a_shape_error():
    with pytest.raises(hj.errors.IndexOutOfRangeError) as info:
        _trace(lambda x: x[1, 4], X)
    assert isinstance(info.value, IndexError) and isinstance(info.value, hj.ShapeError)


def test_item_assignment_says_to_use_at():
    def f(x):
        x[0] = 1.0
        return x
    with pytest.raises(hj.TracingError, match=r"cannot be assigned to in place .* x\.at\[index\]\.set\(value\)"):
        _trace(f, X)


def test_static_indexing_emits_no_gather():
    """Ints, slices (any step), None and ... are one reverse + slice + reshape; unit-step updates are a
    dynamic_update_slice: no gather or scatter where none is needed."""
    text = _trace(lambda x: [x[1, ::-2, None, 1:4], x.at[1:, 2].add(1.0)], X).mlir
    assert "gather" not in text and "scatter" not in text
    assert text.count("stablehlo.reverse") == 1 and "stablehlo.dynamic_update_slice" in text


def test_gradients_of_dropped_updates(backend):
    """A dropped update (traced index out of range) gets no gradient, and what it did not overwrite keeps
    its own: the VJP rules see the scatter into the padded operand and the slice cutting it back."""
    i = np.array([1, 7, -1, -9], I32)             # an axis of 5: 1 and 4 written, 7 and -9 dropped
    w = np.arange(1, 6, dtype=np.float32)

    def loss(x, v, i, mode):
        return ops.sum(getattr(x.at[i], mode)(v) * w)
    grads = hj.jit(lambda x, v, i: [hj.grad(lambda x, v: loss(x, v, i, mode), argnums=(0, 1))(x, v)
                                    for mode in ("set", "add")], backend=backend)
    (sx, sv), (ax, av) = grads(np.ones(5, np.float32), np.ones(4, np.float32), i)
    np.testing.assert_array_equal(np.asarray(sx), [1, 0, 3, 4, 0])
    np.testing.assert_array_equal(np.asarray(sv), [2, 0, 5, 0])
    np.testing.assert_array_equal(np.asarray(ax), w)
    np.testing.assert_array_equal(np.asarray(av), [2, 0, 5, 0])
