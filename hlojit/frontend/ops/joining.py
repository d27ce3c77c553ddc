"""Joining, splitting, repeating and padding: concatenate, stack, split, array_split, tile, repeat, roll, pad.

All sizes and positions are static (known while tracing), so each op is a fixed arrangement of
stablehlo.slice, concatenate, broadcast_in_dim, reverse and pad; nothing gathers by computed indices.
"""
from __future__ import annotations

import numpy as np

from ...dialects import stablehlo as hlo
from ...errors import ShapeError, TracingError
from ..tensor import Tensor
from . import _core
from ._core import as_tensor, describe, emit, fail, wrap
from .elementwise import unary
from .shape import axis_of, broadcast_to, ravel, reshape, slice_axis, static_int


def _sequence(op: str, arrays) -> list:
    if isinstance(arrays, (Tensor, np.ndarray)) or not isinstance(arrays, (list, tuple)):
        fail(TypeError, op, f"takes a list or tuple of arrays, not a {type(arrays).__name__}")
    if not arrays:
        fail(ShapeError, op, "needs at least one array")
    return list(arrays)


def _join(pieces: list[Tensor], axis: int) -> Tensor:
    """Checked pieces joined along `axis`; pieces with nothing along it are left out."""
    kept = [p for p in pieces if p.shape[axis] > 0] or pieces[:1]
    if len(kept) == 1:
        return kept[0]
    shape = list(kept[0].shape)
    shape[axis] = sum(p.shape[axis] for p in kept)
    value = emit(hlo.concatenate, [p.value for p in kept], axis)
    return wrap(value, shape, kept[0].dtype, kept[0].weak)


def concatenate(arrays, axis=0, dtype=None) -> Tensor:
    """Join arrays along an existing axis (axis=None: flattened first); dtypes promote as in arithmetic."""
    tensors, _, _ = _core.promote("concatenate", *_sequence("concatenate", arrays), dtype=dtype)
    if axis is None:
        tensors, axis = [ravel(t) for t in tensors], 0
    first = tensors[0]
    for t in tensors:
        if t.ndim == 0:
            fail(ShapeError, "concatenate", f"0-d arrays cannot be concatenated ({describe(t)})")
        if t.ndim != first.ndim:
            fail(ShapeError, "concatenate", f"shapes {first.shape} and {t.shape} differ in rank")
    axis = axis_of("concatenate", axis, first)
    for t in tensors:
        for d, (a, b) in enumerate(zip(first.shape, t.shape)):
            if d != axis and a != b:
                fail(ShapeError, "concatenate", f"shapes {first.shape} and {t.shape} differ in dimension {d} "
                                                f"(joining along axis {axis})")
    return _join(tensors, axis)


concat = concatenate  # numpy 2's name


def stack(arrays, axis=0, dtype=None) -> Tensor:
    """Join arrays of one shape along a new axis."""
    tensors, _, _ = _core.promote("stack", *_sequence("stack", arrays), dtype=dtype)
    first = tensors[0]
    for t in tensors:
        if t.shape != first.shape:
            fail(ShapeError, "stack", f"shapes {first.shape} and {t.shape} differ: stacked arrays need one shape")
    axis = _core.normalize_axis("stack", axis, first.ndim + 1)
    shape = (*first.shape[:axis], 1, *first.shape[axis:])
    return _join([reshape(t, shape) for t in tensors], axis)


# --- splitting -------------------------------------------------------------------------------------

def _split(op: str, x, indices_or_sections, axis, equal: bool) -> list[Tensor]:
    x = as_tensor(x, op)
    axis = axis_of(op, axis, x)
    n = x.shape[axis]
    if isinstance(indices_or_sections, (list, tuple, np.ndarray)):
        listed = indices_or_sections
        cuts = [static_int(op, "a split index", i) for i in (listed.tolist() if isinstance(listed, np.ndarray) else listed)]
        bounds = list(zip([0, *cuts], [*cuts, n]))
    else:
        sections = static_int(op, "sections", indices_or_sections)
        if sections <= 0:
            fail(ShapeError, op, f"the number of sections must be positive, not {sections}")
        if equal and n % sections:
            fail(ShapeError, op, f"axis {axis} of {describe(x)} (size {n}) does not split into {sections} equal "
                                 "sections; array_split allows unequal ones")
        size, extra = divmod(n, sections)  # array_split: the first `extra` sections get one more
        ends = np.cumsum([size + 1] * extra + [size] * (sections - extra)).tolist()
        bounds = list(zip([0, *ends[:-1]], ends))
    pieces = []
    for lo, hi in bounds:  # numpy slicing: negative indices count from the end, out-of-range ones clamp
        start, stop, _ = slice(lo, hi).indices(n)
        pieces.append(slice_axis(x, axis, start, max(start, stop)))
    return pieces


def split(x, indices_or_sections, axis=0) -> list[Tensor]:
    """numpy split: into `sections` equal parts, or at the given indices."""
    return _split("split", x, indices_or_sections, axis, equal=True)


def array_split(x, indices_or_sections, axis=0) -> list[Tensor]:
    """numpy array_split: like split, but `sections` need not divide the axis."""
    return _split("array_split", x, indices_or_sections, axis, equal=False)


def hsplit(x, indices_or_sections) -> list[Tensor]:
    """numpy hsplit: split along axis 1 (axis 0 of a 1-D array)."""
    x = as_tensor(x, "hsplit")
    if x.ndim == 0:
        fail(ShapeError, "hsplit", f"needs at least 1 dimension, not {describe(x)}")
    return _split("hsplit", x, indices_or_sections, 1 if x.ndim > 1 else 0, equal=True)


def vsplit(x, indices_or_sections) -> list[Tensor]:
    """numpy vsplit: split along axis 0 of an array of 2 or more dimensions."""
    return _split_needing("vsplit", x, indices_or_sections, 0, 2)


def dsplit(x, indices_or_sections) -> list[Tensor]:
    """numpy dsplit: split along axis 2 of an array of 3 or more dimensions."""
    return _split_needing("dsplit", x, indices_or_sections, 2, 3)


def _split_needing(op: str, x, indices_or_sections, axis: int, ndim: int) -> list[Tensor]:
    x = as_tensor(x, op)
    if x.ndim < ndim:
        fail(ShapeError, op, f"needs at least {ndim} dimensions, not {describe(x)}")
    return _split(op, x, indices_or_sections, axis, equal=True)


def unstack(x, axis: int = 0) -> tuple[Tensor, ...]:
    """The array API's unstack: the slices of x along `axis`, that axis removed (stack's inverse)."""
    x = as_tensor(x, "unstack")
    if x.ndim == 0:
        fail(ShapeError, "unstack", f"needs at least 1 dimension, not {describe(x)}")
    axis = _core.normalize_axis("unstack", axis, x.ndim)
    shape = x.shape[:axis] + x.shape[axis + 1:]
    return tuple(reshape(slice_axis(x, axis, i, i + 1), shape) for i in range(x.shape[axis]))


# --- repeating -------------------------------------------------------------------------------------

def _counts(op: str, name: str, values) -> list[int]:
    if isinstance(values, Tensor):
        fail(TracingError, op, f"{name} must be static (the result's shape depends on it), not a traced "
                               f"{describe(values)}")
    array = np.asarray(values)
    if array.dtype.kind not in "iu" or array.ndim > 1:
        fail(TypeError, op, f"{name} must be an int or a 1-d sequence of ints, not {values!r}")
    if (array < 0).any():
        fail(ShapeError, op, f"{name} must not be negative: {values!r}")
    return [int(v) for v in array.reshape(-1)]


def _repeat_each(x: Tensor, axis: int, count: int) -> Tensor:
    """Every element along `axis` `count` times in a row: a new axis after it, broadcast, merged."""
    if count == 1:
        return x
    inner = (*x.shape[:axis + 1], 1, *x.shape[axis + 1:])
    wide = (*x.shape[:axis + 1], count, *x.shape[axis + 1:])
    merged = (*x.shape[:axis], x.shape[axis] * count, *x.shape[axis + 1:])
    return reshape(_core.broadcast_to(reshape(x, inner), wide, "repeat"), merged)


def repeat(x, repeats, axis=None) -> Tensor:
    """numpy repeat: each element `repeats` times (an int, or one count per element along `axis`; counts
    are static). Runs of equal counts become one slice each, broadcast and joined."""
    x = as_tensor(x, "repeat")
    counts = _counts("repeat", "repeats", repeats)
    if axis is not None and x.ndim == 0:  # numpy repeats a 0-d array along axis 0 (or -1) as a 1-d one
        _core.normalize_axis("repeat", axis, 0)
        axis = None
    if axis is None:
        x, axis = ravel(x), 0
    axis = axis_of("repeat", axis, x)
    n = x.shape[axis]
    if len(counts) == 1:
        counts = counts * n
    elif len(counts) != n:
        fail(ShapeError, "repeat", f"{len(counts)} repeat counts for the {n} elements along axis {axis} of "
                                   f"{describe(x)}")
    pieces, start = [], 0
    for end in range(1, n + 1):
        if end == n or counts[end] != counts[start]:
            if counts[start]:
                pieces.append(_repeat_each(slice_axis(x, axis, start, end), axis, counts[start]))
            start = end
    return _join(pieces, axis) if pieces else slice_axis(x, axis, 0, 0)


def tile(x, reps) -> Tensor:
    """numpy tile: the whole array `reps` times along each axis (reps and shape aligned at the right)."""
    x = as_tensor(x, "tile")
    reps = _counts("tile", "reps", reps)
    ndim = max(len(reps), x.ndim)
    reps = [1] * (ndim - len(reps)) + reps
    shape = (1,) * (ndim - x.ndim) + x.shape
    if all(r == 1 for r in reps):
        return reshape(x, shape)
    wide = [d for r, s in zip(reps, shape) for d in (r, s)]
    value = emit(hlo.broadcast_in_dim, x.value, wide, list(range(2 * ndim - 2 * x.ndim + 1, 2 * ndim, 2)))
    return reshape(wrap(value, wide, x.dtype, x.weak), [r * s for r, s in zip(reps, shape)])


def roll(x, shift, axis=None) -> Tensor:
    """numpy roll with static shifts: elements leaving one end come back at the other (two slices, joined)."""
    x = as_tensor(x, "roll")
    if axis is None:
        return reshape(roll(ravel(x), shift, 0), x.shape)
    shifts = [static_int("roll", "shift", s) for s in (shift if isinstance(shift, (list, tuple)) else [shift])]
    axes = list(axis) if isinstance(axis, (list, tuple)) else [axis]
    shifts, axes = shifts * (len(axes) if len(shifts) == 1 else 1), axes * (len(shifts) if len(axes) == 1 else 1)
    if len(shifts) != len(axes):  # numpy broadcasts one against the other
        fail(ShapeError, "roll", f"{len(shifts)} shifts for {len(axes)} axes")
    total = {}
    for s, a in zip(shifts, axes):
        a = axis_of("roll", a, x)
        total[a] = total.get(a, 0) + s
    for a, s in sorted(total.items()):
        n = x.shape[a]
        if n and s % n:
            cut = n - s % n
            x = _join([slice_axis(x, a, cut, n), slice_axis(x, a, 0, cut)], a)
    return x


# --- padding ---------------------------------------------------------------------------------------

PAD_MODES = ("constant", "edge", "reflect", "symmetric", "wrap", "maximum", "minimum", "mean", "median",
             "linear_ramp")
_STAT_MODES = ("maximum", "minimum", "mean", "median")


def _take(x: Tensor, axis: int, indices: list[int]) -> Tensor:
    """x's elements along `axis` in the order of static `indices`: runs that step by +1 are slices, by -1
    reversed slices, by 0 a broadcast element; the runs are joined."""
    pieces, i = [], 0
    while i < len(indices):
        j = i + 1
        step = indices[j] - indices[i] if j < len(indices) and abs(indices[j] - indices[i]) <= 1 else None
        while j < len(indices) and step is not None and indices[j] - indices[j - 1] == step:
            j += 1
        lo, hi = min(indices[i], indices[j - 1]), max(indices[i], indices[j - 1]) + 1
        piece = slice_axis(x, axis, lo, hi)
        if step == -1:
            piece = wrap(emit(hlo.reverse, piece.value, [axis]), piece.shape, piece.dtype, piece.weak)
        elif step == 0:
            piece = _repeat_each(piece, axis, j - i)
        pieces.append(piece)
        i = j
    return _join(pieces, axis)


def _pad_widths(x: Tensor, pad_width, name: str = "pad_width") -> list[tuple]:
    if isinstance(pad_width, Tensor):
        fail(TracingError, "pad", f"{name} must be static, not a traced {describe(pad_width)}")
    widths = np.asarray(pad_width)
    if widths.dtype.kind not in "iu":
        fail(TypeError, "pad", f"{name} must hold ints, not {pad_width!r}")
    try:
        widths = np.broadcast_to(widths, (x.ndim, 2))
    except ValueError:
        fail(ShapeError, "pad", f"{name} {pad_width!r} does not fit the {x.ndim} axes of {describe(x)} "
                                "(it takes n, (before, after) or one (before, after) per axis)")
    if (widths < 0).any():
        fail(ShapeError, "pad", f"{name} must not be negative: {pad_width!r}")
    return [(int(b), int(a)) for b, a in widths]


def _pad_constant(x: Tensor, widths, constant_values) -> Tensor:
    lows, highs = [b for b, _ in widths], [a for _, a in widths]
    if isinstance(constant_values, Tensor):
        if constant_values.ndim:
            fail(ShapeError, "pad", f"a traced constant_values must be 0-d, not {describe(constant_values)}")
        return _pad_op(x, _core.convert(constant_values, x.dtype, x.weak), lows, highs)
    try:
        values = np.broadcast_to(np.asarray(constant_values), (x.ndim, 2))
    except ValueError:
        fail(ShapeError, "pad", f"constant_values {constant_values!r} does not fit the {x.ndim} axes of "
                                f"{describe(x)} (it takes v, (before, after) or one (before, after) per axis)")
    values = values.astype(x.dtype)  # as numpy does: 1.7 pads an int array with 1
    if len({v.tobytes() for v in values.reshape(-1)}) <= 1:  # one value: one pad for every axis
        return _pad_op(x, _core.constant(values.reshape(-1)[0], x.dtype, x.weak, "pad"), lows, highs) \
            if x.ndim else x
    zeros = [0] * x.ndim
    for axis, ((before, after), (v_before, v_after)) in enumerate(zip(widths, values)):  # axis by axis, as numpy
        low, high = list(zeros), list(zeros)
        low[axis], high[axis] = before, after
        if before:
            x = _pad_op(x, _core.constant(v_before, x.dtype, x.weak, "pad"), low, zeros)
        if after:
            x = _pad_op(x, _core.constant(v_after, x.dtype, x.weak, "pad"), zeros, high)
    return x


def _pad_op(x: Tensor, value: Tensor, low, high) -> Tensor:
    if not any(low) and not any(high):
        return x
    shape = [d + lo + hi for d, lo, hi in zip(x.shape, low, high)]
    return wrap(emit(hlo.pad, x.value, value.value, low, high), shape, x.dtype, x.weak)


def pad(x, pad_width, mode="constant", constant_values=0, reflect_type="even", end_values=0) -> Tensor:
    """numpy pad. constant: stablehlo.pad with constant_values (one value, or (before, after) per axis);
    edge, reflect, symmetric, wrap: each axis gathers its static source positions (numpy's own padding of
    0..n-1) from slices and reversed slices; maximum, minimum, mean, median: the statistic of the whole axis
    (numpy's default stat_length; integers round half to even), axis by axis as numpy pads; linear_ramp: from
    end_values to the edge."""
    x = as_tensor(x, "pad")
    widths = _pad_widths(x, pad_width)
    if mode not in PAD_MODES:
        fail(ValueError, "pad", f"mode {mode!r} is not supported; hlojit pads with {', '.join(PAD_MODES)}")
    if reflect_type != "even":
        fail(ValueError, "pad", f"reflect_type {reflect_type!r} is not supported; hlojit reflects with 'even'")
    if mode == "constant":
        return _pad_constant(x, widths, constant_values)
    ends = np.broadcast_to(np.asarray(end_values), (x.ndim, 2)) if mode == "linear_ramp" else None
    for axis, (before, after) in enumerate(widths):
        if not before and not after:
            continue
        if x.shape[axis] == 0:
            fail(ShapeError, "pad", f"cannot extend the empty axis {axis} of {describe(x)} with mode {mode!r}")
        if mode in _STAT_MODES:
            x = _pad_with(x, axis, *[_axis_statistic(x, axis, mode)] * 2, before, after)
        elif mode == "linear_ramp":
            n = x.shape[axis]
            x = _pad_with(x, axis, _ramp(slice_axis(x, axis, 0, 1), axis, ends[axis][0], before, False),
                          _ramp(slice_axis(x, axis, n - 1, n), axis, ends[axis][1], after, True), before, after)
        else:
            sources = np.pad(np.arange(x.shape[axis]), (before, after), mode=mode).tolist()
            x = _take(x, axis, sources)
    return x


def _pad_with(x: Tensor, axis: int, low: Tensor, high: Tensor, before: int, after: int) -> Tensor:
    """x between `before` copies of low and `after` of high (each of length 1 or the width along axis)."""
    def block(v, width):
        return broadcast_to(v, x.shape[:axis] + (width,) + x.shape[axis + 1:])
    return _join([block(low, before), x, block(high, after)], axis)


def _axis_statistic(x: Tensor, axis: int, mode: str) -> Tensor:
    """numpy pad's statistic of the whole axis (kept), in x's dtype: integer means and medians rounded."""
    from . import reductions, quantiles
    stat = {"maximum": reductions.max, "minimum": reductions.min, "mean": reductions.mean,
            "median": quantiles.median}[mode](x, axis=axis, keepdims=True)
    if stat.dtype != x.dtype:   # integers: numpy rounds half to even (np.around), then casts back
        stat = _core.convert(unary("round", stat) if mode in ("mean", "median") else stat, x.dtype, x.weak)
    return stat


def _ramp(edge: Tensor, axis: int, end, width: int, reverse: bool) -> Tensor:
    """numpy's linspace(end, edge, width, endpoint=False) along axis (reversed after the array), floored for
    integers as numpy's linspace rounds."""
    if not width:
        return edge
    shape = [1] * edge.ndim
    shape[axis] = width
    steps = np.arange(width)[::-1] if reverse else np.arange(width)
    real = edge.dtype if edge.dtype.kind in "fc" else np.dtype(np.float32)
    start = _core.constant(np.asarray(end, real), real)
    fraction = _core.constant((steps / width).astype(real).reshape(shape), real)
    values = start + (_core.convert(edge, real) - start) * fraction
    return values if edge.dtype == real else _core.convert(unary("floor", values), edge.dtype, edge.weak)

