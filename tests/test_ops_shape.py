"""Shape, joining and creation ops (moveaxis swapaxes ravel flip roll diagonal tril triu repeat tile pad
concatenate stack split array_split linspace eye tri, and the Tensor methods) on every backend, against numpy;
then the errors they raise at trace time.

A row is (id, hlojit fn, numpy fn, input shapes). Every row runs on f32; the rows of OTHER_DTYPES (each op
at least once) also on f64, i32 and bool. Each group is ONE jitted module per backend returning every case's
result (compiling costs ~0.4 s a module plus ~0.1-0.3 s per dispatch), and each case is its own pytest item.
Data movement is exact, so results must equal numpy's bit for bit.
"""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import hlojit as hj
from hlojit import ops
from hlojit.pipeline import compile_program, cuda

from conftest import BACKENDS, assert_close, group_module, group_result

F32, F64, I32, BOOL = (np.dtype(t) for t in (np.float32, np.float64, np.int32, np.bool_))
BF16 = np.dtype(ml_dtypes.bfloat16)
SHORT = {F32: "f32", F64: "f64", I32: "i32", BOOL: "bool"}

ROWS = [
    # axes
    ("moveaxis-first-to-last", lambda x: ops.moveaxis(x, 0, -1), lambda x: np.moveaxis(x, 0, -1), [(2, 3, 4)]),
    ("moveaxis-two-rank4", lambda x: ops.moveaxis(x, [0, -1], [-1, 1]), lambda x: np.moveaxis(x, [0, -1], [-1, 1]),
     [(2, 1, 3, 4)]),
    ("moveaxis-0-size", lambda x: ops.moveaxis(x, 1, 0), lambda x: np.moveaxis(x, 1, 0), [(2, 0, 3)]),
    ("swapaxes-rank3", lambda x: ops.swapaxes(x, 0, 2), lambda x: np.swapaxes(x, 0, 2), [(2, 3, 4)]),
    ("swapaxes-negative-rank4", lambda x: ops.swapaxes(x, -1, 1), lambda x: np.swapaxes(x, -1, 1), [(2, 1, 3, 4)]),
    ("swapaxes-same-axis-1d", lambda x: ops.swapaxes(x, 0, -1), lambda x: np.swapaxes(x, 0, -1), [(5,)]),
    ("ravel-rank3", ops.ravel, np.ravel, [(2, 3, 4)]),
    ("ravel-scalar", ops.ravel, np.ravel, [()]),
    ("ravel-0-size", ops.ravel, np.ravel, [(0, 3)]),
    # flip and roll
    ("flip-all", ops.flip, np.flip, [(2, 3, 4)]),
    ("flip-negative-axis", lambda x: ops.flip(x, -1), lambda x: np.flip(x, -1), [(2, 3, 4)]),
    ("flip-axes-rank4", lambda x: ops.flip(x, (0, 2, 3)), lambda x: np.flip(x, (0, 2, 3)), [(2, 1, 3, 4)]),
    ("flip-scalar", ops.flip, np.flip, [()]),
    ("flip-0-size", lambda x: ops.flip(x, 1), lambda x: np.flip(x, 1), [(2, 0, 3)]),
    ("flipud-fliplr", lambda x: ops.fliplr(ops.flipud(x)), lambda x: np.fliplr(np.flipud(x)), [(3, 4)]),
    ("roll-1d", lambda x: ops.roll(x, 2), lambda x: np.roll(x, 2), [(5,)]),
    ("roll-flat-negative", lambda x: ops.roll(x, -7), lambda x: np.roll(x, -7), [(2, 3, 4)]),
    ("roll-two-axes", lambda x: ops.roll(x, (1, -5), (0, 2)), lambda x: np.roll(x, (1, -5), (0, 2)), [(2, 3, 4)]),
    ("roll-one-shift-two-axes", lambda x: ops.roll(x, 3, (-1, 1)), lambda x: np.roll(x, 3, (-1, 1)),
     [(2, 1, 3, 4)]),
    ("roll-same-axis-twice", lambda x: ops.roll(x, (2, 2), (1, 1)), lambda x: np.roll(x, (2, 2), (1, 1)),
     [(2, 3, 4)]),
    ("roll-scalar", lambda x: ops.roll(x, 1), lambda x: np.roll(x, 1), [()]),
    ("roll-0-size", lambda x: ops.roll(x, 1, 0), lambda x: np.roll(x, 1, 0), [(0, 3)]),
    # diagonal, tril, triu
    ("diagonal-2d", ops.diagonal, np.diagonal, [(3, 4)]),
    ("diagonal-offset", lambda x: ops.diagonal(x, 1), lambda x: np.diagonal(x, 1), [(3, 4)]),
    ("diagonal-negative-offset", lambda x: ops.diagonal(x, -2), lambda x: np.diagonal(x, -2), [(4, 3)]),
    ("diagonal-offset-past-the-end", lambda x: ops.diagonal(x, 5), lambda x: np.diagonal(x, 5), [(3, 4)]),
    ("diagonal-axes-rank3", lambda x: ops.diagonal(x, 1, -1, 1), lambda x: np.diagonal(x, 1, -1, 1), [(2, 3, 4)]),
    ("diagonal-rank4", lambda x: ops.diagonal(x, 0, 3, 0), lambda x: np.diagonal(x, 0, 3, 0), [(4, 1, 3, 4)]),
    ("diagonal-0-size", ops.diagonal, np.diagonal, [(0, 3)]),
    ("tril", ops.tril, np.tril, [(4, 5)]),
    ("tril-below-rank3", lambda x: ops.tril(x, -1), lambda x: np.tril(x, -1), [(2, 3, 4)]),
    ("tril-k-beyond", lambda x: ops.tril(x, 10), lambda x: np.tril(x, 10), [(2, 3)]),
    ("triu-above", lambda x: ops.triu(x, 2), lambda x: np.triu(x, 2), [(4, 5)]),
    ("triu-1d", lambda x: ops.triu(x, 1), lambda x: np.triu(x, 1), [(4,)]),
    ("triu-rank4", ops.triu, np.triu, [(2, 1, 3, 4)]),
    ("triu-k-beyond", lambda x: ops.triu(x, -10), lambda x: np.triu(x, -10), [(2, 3)]),
    ("tril-0-size", ops.tril, np.tril, [(0, 3)]),
    # repeat and tile
    ("repeat-flat", lambda x: ops.repeat(x, 2), lambda x: np.repeat(x, 2), [(2, 3)]),
    ("repeat-counts", lambda x: ops.repeat(x, [1, 0, 2, 2], axis=-1), lambda x: np.repeat(x, [1, 0, 2, 2], axis=-1),
     [(2, 3, 4)]),
    ("repeat-axis-rank4", lambda x: ops.repeat(x, 3, axis=1), lambda x: np.repeat(x, 3, axis=1), [(2, 1, 3, 4)]),
    ("repeat-one-count-list", lambda x: ops.repeat(x, [2], axis=0), lambda x: np.repeat(x, [2], axis=0), [(3, 2)]),
    ("repeat-zero", lambda x: ops.repeat(x, 0, axis=0), lambda x: np.repeat(x, 0, axis=0), [(3, 2)]),
    ("repeat-all-counts-zero", lambda x: ops.repeat(x, np.zeros(3, np.int64), axis=0),
     lambda x: np.repeat(x, np.zeros(3, np.int64), axis=0), [(3, 2)]),
    ("repeat-scalar", lambda x: ops.repeat(x, 3), lambda x: np.repeat(x, 3), [()]),
    ("repeat-scalar-axis", lambda x: ops.repeat(x, 2, axis=0), lambda x: np.repeat(x, 2, axis=0), [()]),
    ("repeat-0-size", lambda x: ops.repeat(x, 2, axis=1), lambda x: np.repeat(x, 2, axis=1), [(0, 3)]),
    ("tile-int", lambda x: ops.tile(x, 2), lambda x: np.tile(x, 2), [(2, 3)]),
    ("tile-more-reps", lambda x: ops.tile(x, (2, 1, 3)), lambda x: np.tile(x, (2, 1, 3)), [(2, 3)]),
    ("tile-fewer-reps", lambda x: ops.tile(x, (2,)), lambda x: np.tile(x, (2,)), [(2, 1, 3, 4)]),
    ("tile-scalar", lambda x: ops.tile(x, (2, 3)), lambda x: np.tile(x, (2, 3)), [()]),
    ("tile-zero", lambda x: ops.tile(x, (0, 2)), lambda x: np.tile(x, (0, 2)), [(2, 3)]),
    ("tile-0-size", lambda x: ops.tile(x, 3), lambda x: np.tile(x, 3), [(0, 3)]),
    # pad
    ("pad-constant", lambda x: ops.pad(x, 1), lambda x: np.pad(x, 1), [(2, 3)]),
    ("pad-constant-value", lambda x: ops.pad(x, (1, 2), constant_values=2.5),  # cast as numpy casts: 2 for ints
     lambda x: np.pad(x, (1, 2), constant_values=2.5), [(2, 3, 4)]),
    ("pad-constant-per-axis", lambda x: ops.pad(x, ((0, 1), (2, 0)), constant_values=((1, 2), (3, 0))),
     lambda x: np.pad(x, ((0, 1), (2, 0)), constant_values=((1, 2), (3, 0))), [(2, 3)]),
    ("pad-constant-corners", lambda x: ops.pad(x, 1, constant_values=((0, 1), (2, 3))),  # later axes win
     lambda x: np.pad(x, 1, constant_values=((0, 1), (2, 3))), [(1, 1)]),
    ("pad-constant-rank4", lambda x: ops.pad(x, ((1, 0), (0, 0), (2, 1), (0, 3))),
     lambda x: np.pad(x, ((1, 0), (0, 0), (2, 1), (0, 3))), [(2, 1, 3, 4)]),
    ("pad-scalar", lambda x: ops.pad(x, 3), lambda x: np.pad(x, 3), [()]),
    ("pad-constant-0-size", lambda x: ops.pad(x, 1), lambda x: np.pad(x, 1), [(0, 3)]),
    ("pad-edge", lambda x: ops.pad(x, ((0, 0), (2, 5), (1, 0)), "edge"),
     lambda x: np.pad(x, ((0, 0), (2, 5), (1, 0)), "edge"), [(2, 3, 4)]),
    ("pad-edge-0-size-other-axis", lambda x: ops.pad(x, ((0, 0), (1, 2)), "edge"),
     lambda x: np.pad(x, ((0, 0), (1, 2)), "edge"), [(0, 3)]),
    ("pad-reflect", lambda x: ops.pad(x, 2, "reflect"), lambda x: np.pad(x, 2, "reflect"), [(3, 4)]),
    ("pad-reflect-wider-than-axis", lambda x: ops.pad(x, ((1, 1), (2, 5), (3, 7)), "reflect"),
     lambda x: np.pad(x, ((1, 1), (2, 5), (3, 7)), "reflect"), [(2, 3, 4)]),
    ("pad-reflect-size-1", lambda x: ops.pad(x, (2, 2), "reflect"), lambda x: np.pad(x, (2, 2), "reflect"),
     [(1, 3)]),
    ("pad-symmetric", lambda x: ops.pad(x, ((3, 1), (0, 4)), "symmetric"),
     lambda x: np.pad(x, ((3, 1), (0, 4)), "symmetric"), [(2, 3)]),
    ("pad-wrap", lambda x: ops.pad(x, 5, "wrap"), lambda x: np.pad(x, 5, "wrap"), [(2, 3)]),
    # concatenate, stack, split
    ("concatenate-axis0", lambda a, b: ops.concatenate([a, b]), lambda a, b: np.concatenate([a, b]),
     [(2, 3), (4, 3)]),
    ("concatenate-three-negative-axis", lambda a, b, c: ops.concatenate((a, b, c), axis=-1),
     lambda a, b, c: np.concatenate((a, b, c), axis=-1), [(2, 3, 1), (2, 3, 4), (2, 3, 2)]),
    ("concatenate-axis-none", lambda a, b: ops.concatenate([a, b], axis=None),
     lambda a, b: np.concatenate([a, b], axis=None), [(2, 3), (4,)]),
    ("concatenate-rank4", lambda a, b: ops.concatenate([a, b], axis=2), lambda a, b: np.concatenate([a, b], axis=2),
     [(2, 1, 3, 4), (2, 1, 1, 4)]),
    ("concatenate-1d", lambda a, b: ops.concat([a, b]), lambda a, b: np.concat([a, b]), [(5,), (1,)]),
    ("concatenate-0-size-piece", lambda a, b: ops.concatenate([a, b, a]), lambda a, b: np.concatenate([a, b, a]),
     [(2, 3), (0, 3)]),
    ("concatenate-all-empty", lambda a, b: ops.concatenate([a, b], 1), lambda a, b: np.concatenate([a, b], 1),
     [(0, 3), (0, 2)]),
    ("stack-axis0", lambda a, b: ops.stack([a, b]), lambda a, b: np.stack([a, b]), [(2, 3), (2, 3)]),
    ("stack-last", lambda a, b, c: ops.stack([a, b, c], -1), lambda a, b, c: np.stack([a, b, c], -1),
     [(2, 3, 4)] * 3),
    ("stack-middle-rank4", lambda a, b: ops.stack([a, b], 2), lambda a, b: np.stack([a, b], 2), [(2, 1, 3, 4)] * 2),
    ("stack-scalars", lambda a, b: ops.stack([a, b]), lambda a, b: np.stack([a, b]), [(), ()]),
    ("stack-0-size", lambda a, b: ops.stack([a, b], 1), lambda a, b: np.stack([a, b], 1), [(0, 3)] * 2),
    ("split-sections", lambda x: ops.split(x, 3, axis=1), lambda x: np.split(x, 3, axis=1), [(2, 6)]),
    ("split-indices", lambda x: ops.split(x, [4, 2, -1]), lambda x: np.split(x, [4, 2, -1]), [(6,)]),
    ("split-indices-past-end", lambda x: ops.split(x, np.array([1, 10]), axis=-1),
     lambda x: np.split(x, [1, 10], axis=-1), [(2, 3, 4)]),
    ("split-0-size", lambda x: ops.split(x, 3), lambda x: np.split(x, 3), [(0, 3)]),
    ("array_split-unequal", lambda x: ops.array_split(x, 3), lambda x: np.array_split(x, 3), [(5, 2)]),
    ("array_split-more-sections-than-elements", lambda x: ops.array_split(x, 4, axis=2),
     lambda x: np.array_split(x, 4, axis=2), [(2, 1, 3, 4)]),
    # Tensor methods
    ("method-flatten", lambda x: x.flatten(), lambda x: x.flatten(), [(2, 3, 4)]),
    ("method-ravel", lambda x: x.ravel(), lambda x: x.ravel(), [(2, 1)]),
    ("method-squeeze", lambda x: x.squeeze(), lambda x: x.squeeze(), [(2, 1, 3, 1)]),
    ("method-squeeze-axis", lambda x: x.squeeze(-1), lambda x: x.squeeze(-1), [(2, 1, 3, 1)]),
    ("method-swapaxes", lambda x: x.swapaxes(1, -1), lambda x: x.swapaxes(1, -1), [(2, 3, 4)]),
    ("method-repeat", lambda x: x.repeat([2, 1], axis=0), lambda x: x.repeat([2, 1], axis=0), [(2, 3)]),
    ("method-diagonal", lambda x: x.diagonal(1, 1, 0), lambda x: x.diagonal(1, 1, 0), [(3, 4)]),
]

# rows that also run on f64, i32 and bool: every op once, on rank 1 to 4
OTHER_DTYPES = {
    "moveaxis-two-rank4", "swapaxes-rank3", "ravel-rank3", "flip-axes-rank4", "roll-two-axes",
    "diagonal-axes-rank3", "tril-below-rank3", "triu-1d", "repeat-counts", "tile-more-reps", "pad-constant-value",
    "pad-reflect", "pad-wrap", "concatenate-three-negative-axis", "stack-last", "split-indices",
    "array_split-unequal", "method-repeat",
}

# Rows with fixed dtypes: promotion, traced arguments, creation from static arguments.
_rng = np.random.default_rng(7)
_i, _f, _b = np.arange(3, dtype=np.int32), _rng.normal(size=4).astype(np.float32), np.array([True, False])
_start, _stop = np.array([0.0, -1.5, 2.0], np.float32), np.float32(7.25)
MIXED = [  # (id, hlojit fn, args, numpy's answer)
    ("concatenate-promotes-i32-f32", lambda a, b: ops.concatenate([a, b]), (_i, _f),
     np.concatenate([_i.astype(np.float32), _f])),
    ("concatenate-dtype", lambda a, b: ops.concatenate([a, b], dtype=np.float32), (_i, _b),
     np.concatenate([_i, _b], dtype=np.float32)),
    ("stack-weak-python-scalar", lambda a: ops.stack([a, 2.5, a]), (np.float32(-1),),
     np.array([-1, 2.5, -1], np.float32)),
    ("stack-bool-int", lambda a, b: ops.stack([a, b]), (_b, np.array([3, 4], np.int32)),
     np.stack([_b.astype(np.int32), np.array([3, 4], np.int32)])),
    ("pad-traced-value", lambda x, v: ops.pad(x, 1, constant_values=v), (_f, np.int32(3)),
     np.pad(_f, 1, constant_values=3)),
    ("linspace-traced-bounds-axis", lambda a, b: ops.linspace(a, b, 5, axis=-1), (_start, _stop),
     np.linspace(_start.astype(np.float64), np.float64(_stop), 5, axis=-1).astype(np.float32)),
    ("linspace-traced-bounds-int", lambda a, b: ops.linspace(a, b, 6, endpoint=False, dtype=np.int32),
     (_start, _stop), np.linspace(_start.astype(np.float64), np.float64(_stop), 6, endpoint=False, dtype=np.int32)),
    ("linspace-traced-f64", lambda a: ops.linspace(a, 1.0, 4), (np.float64(-0.3),), np.linspace(-0.3, 1.0, 4)),
    ("linspace-traced-one-sample", lambda a: ops.linspace(a, 9.0, 1), (np.float32(2),), np.float32([2])),
]
CREATION = [  # (id, hlojit fn, numpy's answer): static arguments only
    ("linspace", lambda: ops.linspace(0, 1, 7), np.linspace(0, 1, 7, dtype=np.float32)),
    ("linspace-int-floors", lambda: ops.linspace(-7, 13.7, 31, dtype=np.int32),
     np.linspace(-7, 13.7, 31, dtype=np.int32)),
    ("linspace-no-endpoint", lambda: ops.linspace(2, 3, 5, endpoint=False), np.linspace(2, 3, 5, endpoint=False,
                                                                                       dtype=np.float32)),
    ("linspace-one", lambda: ops.linspace(1, 5, 1), np.linspace(1, 5, 1, dtype=np.float32)),
    ("linspace-none", lambda: ops.linspace(0, 1, 0), np.linspace(0, 1, 0, dtype=np.float32)),
    ("linspace-f64-descending", lambda: ops.linspace(0.5, -2.5, 9, dtype=np.float64),
     np.linspace(0.5, -2.5, 9)),
    ("linspace-f64-from-numpy-scalar", lambda: ops.linspace(np.float64(0.1), 0.2, 4), np.linspace(0.1, 0.2, 4)),
    ("linspace-bool", lambda: ops.linspace(-1, 1, 5, dtype=bool), np.linspace(-1, 1, 5, dtype=bool)),
    ("linspace-bf16-arrays-axis", lambda: ops.linspace([0, 1], [1, -1], 3, dtype=BF16, axis=1),
     np.linspace([0, 1], [1, -1], 3, dtype=BF16, axis=1)),
    ("eye", lambda: ops.eye(3), np.eye(3, dtype=np.float32)),
    ("eye-wide-above-i32", lambda: ops.eye(3, 5, 1, dtype=np.int32), np.eye(3, 5, 1, dtype=np.int32)),
    ("eye-tall-below-bool", lambda: ops.eye(4, 2, -1, dtype=bool), np.eye(4, 2, -1, dtype=bool)),
    ("eye-k-beyond", lambda: ops.eye(3, k=7), np.eye(3, k=7, dtype=np.float32)),
    ("eye-0-size", lambda: ops.eye(0), np.eye(0, dtype=np.float32)),
    ("tri-f64", lambda: ops.tri(3, 4, dtype=np.float64), np.tri(3, 4)),
    ("tri-below-i32", lambda: ops.tri(4, k=-1, dtype=np.int32), np.tri(4, k=-1, dtype=np.int32)),
]


def sample(dtype, shape, rng):
    if dtype == BOOL:
        return rng.random(shape) < 0.5
    if dtype == I32:
        return rng.integers(-100, 100, shape).astype(dtype)
    return rng.normal(size=shape).astype(dtype)


def _groups() -> dict:
    """group -> [(case id, hlojit fn, args, numpy's answer)]"""
    rng = np.random.default_rng(3)
    groups = {"f32": [], "f64-i32-bool": []}
    for dtype in (F32, F64, I32, BOOL):
        for cid, fn, ref, shapes in ROWS:
            if dtype == F32 or cid in OTHER_DTYPES:
                args = tuple(sample(dtype, s, rng) for s in shapes)
                groups["f32" if dtype == F32 else "f64-i32-bool"].append((f"{cid}-{SHORT[dtype]}", fn, args, ref(*args)))
    groups["mixed-creation"] = MIXED + [(cid, fn, (), expected) for cid, fn, expected in CREATION]
    return groups


GROUPS = _groups()
_RESULTS: dict = {}


def result(backend, group, index):
    return group_result(_RESULTS, backend, group, GROUPS[group], index)


def check(actual, expected):
    if isinstance(expected, list):  # split
        assert isinstance(actual, list) and len(actual) == len(expected), f"{len(actual)} pieces, not {len(expected)}"
        for a, e in zip(actual, expected):
            check(a, e)
        return
    expected, actual = np.asarray(expected), np.asarray(actual)
    if expected.dtype.kind == "f" or expected.dtype == BF16:  # linspace computes; the rest moves data exactly
        assert_close(actual, expected)
    else:
        assert actual.dtype == expected.dtype and actual.shape == expected.shape, \
            f"{actual.dtype}{list(actual.shape)} != {expected.dtype}{list(expected.shape)}"
        np.testing.assert_array_equal(actual, expected)


@pytest.mark.parametrize("backend, group, index", [
    pytest.param(b, g, i, id=f"{b}-{c[0]}") for b in BACKENDS for g, cases in GROUPS.items()
    for i, c in enumerate(cases)])
def test_op(backend, group, index):
    expected = GROUPS[group][index][3]
    check(result(backend, group, index), expected)


@pytest.mark.parametrize("group", ["f64-i32-bool", "mixed-creation"])
def test_compiles_for_cuda(group):
    """No GPU here: every op must at least compile for CUDA (sm_80). These two modules hold every op (the
    f32 module adds shapes, not ops, and would double the time this takes)."""
    cases = GROUPS[group]
    compile_program(hj.jit(group_module(cases)).lower([c[2] for c in cases]).program, cuda())


# --- trace-time errors: op name, shapes, the user's file:line --------------------------------------

def _trace(fn, *args):
    return hj.jit(fn, backend="reference").lower(*args)


X = np.zeros((2, 3), np.float32)
ERRORS = [  # (id, fn of x (f32[2, 3]), error, message regex)
    ("moveaxis-bad-axis", lambda x: ops.moveaxis(x, 2, 0), hj.ShapeError, r"moveaxis: axis 2 is out of range"),
    ("moveaxis-counts", lambda x: ops.moveaxis(x, [0, 1], [0]), hj.ShapeError, r"different numbers of axes"),
    ("moveaxis-scalar", lambda x: ops.moveaxis(ops.sum(x), 0, 0), hj.ShapeError, r"out of range for the 0-d array"),
    ("swapaxes-bad-axis", lambda x: ops.swapaxes(x, 0, -3), hj.ShapeError, r"swapaxes: axis -3 is out of range"),
    ("flip-bad-axis", lambda x: ops.flip(x, 2), hj.ShapeError, r"flip: axis 2 is out of range"),
    ("flip-repeated-axis", lambda x: ops.flip(x, (1, -1)), hj.ShapeError, r"flip: repeated axis"),
    ("roll-bad-axis", lambda x: ops.roll(x, 1, 5), hj.ShapeError, r"roll: axis 5 is out of range"),
    ("roll-shift-count", lambda x: ops.roll(x, (1, 2, 3), (0, 1)), hj.ShapeError, r"roll: 3 shifts for 2 axes"),
    ("roll-traced-shift", lambda x: ops.roll(x, ops.sum(x).astype(np.int32)), hj.TracingError,
     r"roll: shift must be a static int"),
    ("diagonal-same-axis", lambda x: ops.diagonal(x, 0, 1, -1), hj.ShapeError, r"axis1 and axis2 are the same"),
    ("diagonal-1d", lambda x: ops.diagonal(ops.ravel(x)), hj.ShapeError, r"diagonal: needs an array of at least 2"),
    ("tril-scalar", lambda x: ops.tril(ops.sum(x)), hj.ShapeError, r"tril: needs an array of at least 1"),
    ("triu-float-k", lambda x: ops.triu(x, 1.5), TypeError, r"triu: k must be an int"),
    ("concatenate-rank", lambda x: ops.concatenate([x, ops.ravel(x)]), hj.ShapeError,
     r"concatenate: shapes \(2, 3\) and \(6,\) differ in rank"),
    ("concatenate-dimension", lambda x: ops.concatenate([x, ops.transpose(x)], axis=1), hj.ShapeError,
     r"concatenate: shapes \(2, 3\) and \(3, 2\) differ in dimension 0 \(joining along axis 1\)"),
    ("concatenate-bad-axis", lambda x: ops.concatenate([x, x], axis=2), hj.ShapeError,
     r"concatenate: axis 2 is out of range"),
    ("concatenate-0-d", lambda x: ops.concatenate([ops.sum(x), ops.sum(x)]), hj.ShapeError,
     r"0-d arrays cannot be concatenated"),
    ("concatenate-nothing", lambda x: ops.concatenate([]), hj.ShapeError, r"concatenate: needs at least one array"),
    ("concatenate-tensor", lambda x: ops.concatenate(x), TypeError, r"takes a list or tuple of arrays"),
    ("stack-shapes", lambda x: ops.stack([x, ops.transpose(x)]), hj.ShapeError,
     r"stack: shapes \(2, 3\) and \(3, 2\) differ"),
    ("stack-bad-axis", lambda x: ops.stack([x, x], axis=3), hj.ShapeError, r"stack: axis 3 is out of range"),
    ("split-unequal", lambda x: ops.split(x, 2, axis=1), hj.ShapeError,
     r"split: axis 1 of float32\[2, 3\] \(size 3\) does not split into 2 equal sections"),
    ("split-zero-sections", lambda x: ops.array_split(x, 0), hj.ShapeError, r"sections must be positive"),
    ("split-bad-axis", lambda x: ops.split(x, 1, axis=2), hj.ShapeError, r"split: axis 2 is out of range"),
    ("repeat-count-length", lambda x: ops.repeat(x, [1, 2], axis=1), hj.ShapeError,
     r"repeat: 2 repeat counts for the 3 elements along axis 1"),
    ("repeat-negative", lambda x: ops.repeat(x, -1), hj.ShapeError, r"repeat: repeats must not be negative"),
    ("repeat-traced", lambda x: ops.repeat(x, ops.sum(x).astype(np.int32)), hj.TracingError,
     r"repeat: repeats must be static"),
    ("repeat-bad-axis", lambda x: ops.repeat(x, 2, axis=-3), hj.ShapeError, r"repeat: axis -3 is out of range"),
    ("tile-negative", lambda x: ops.tile(x, (2, -1)), hj.ShapeError, r"tile: reps must not be negative"),
    ("pad-bad-mode", lambda x: ops.pad(x, 1, mode="nearest"), ValueError,
     r"pad: mode 'nearest' is not supported; hlojit pads with constant, edge, reflect, symmetric, wrap, maximum"),
    ("pad-odd-reflect", lambda x: ops.pad(x, 1, mode="reflect", reflect_type="odd"), ValueError,
     r"reflect_type 'odd' is not supported"),
    ("pad-negative", lambda x: ops.pad(x, -1), hj.ShapeError, r"pad: pad_width must not be negative"),
    ("pad-width-shape", lambda x: ops.pad(x, ((1, 2), (3, 4), (5, 6))), hj.ShapeError,
     r"pad: pad_width .* does not fit the 2 axes of float32\[2, 3\]"),
    ("pad-float-width", lambda x: ops.pad(x, 1.5), TypeError, r"pad: pad_width must hold ints"),
    ("pad-values-shape", lambda x: ops.pad(x, 1, constant_values=(1, 2, 3)), hj.ShapeError,
     r"pad: constant_values \(1, 2, 3\) does not fit"),
    ("pad-reflect-empty-axis", lambda x: ops.pad(ops.zeros((0, 3)), 1, mode="reflect"), hj.ShapeError,
     r"pad: cannot extend the empty axis 0 of float32\[0, 3\] with mode 'reflect'"),
    ("linspace-negative-num", lambda x: ops.linspace(0, 1, -1), hj.ShapeError, r"linspace: num must not be negative"),
    ("eye-negative", lambda x: ops.eye(-1), hj.ShapeError, r"eye: N must not be negative"),
    ("linspace-bad-axis", lambda x: ops.linspace(0, 1, 3, axis=1), hj.ShapeError, r"linspace: .*axis 1 is out of"),
    ("linspace-traced-bad-axis", lambda x: ops.linspace(x, 1.0, 3, axis=3), hj.ShapeError,
     r"linspace: axis 3 is out of range"),
]


@pytest.mark.parametrize("fn, error, message", [pytest.param(*e[1:], id=e[0]) for e in ERRORS])
def test_error(fn, error, message):
    with pytest.raises(error, match=message) as info:
        _trace(fn, X)
    assert "at test_ops_shape.py:" in str(info.value)  # the line of the lambda that made the bad call


def test_error_names_the_users_line():
    def model(x):
        return ops.concatenate([x, ops.ravel(x)])  # the error points here
    line = model.__code__.co_firstlineno + 1
    with pytest.raises(hj.ShapeError, match=rf"concatenate: shapes \(2, 3\) and \(6,\) differ in rank at "
                                            rf"test_ops_shape.py:{line}$"):
        _trace(model, X)
