"""Indexing: `x[...]`, take, take_along_axis, dynamic_slice, dynamic_update_slice, one_hot. The functional
updates `x.at[idx].set(v)` (.add, .multiply, .min, .max) parse their index here and live in updates.py.

An index is numpy's: Python ints (negative count from the end), slices with any step, None (np.newaxis),
one `...`, and integer arrays or integer Tensors (advanced indexing, broadcast together; their dimensions
go where the first one stood when they are adjacent, else in front, as numpy puts them). Static parts
(ints, slices, numpy arrays) are checked while tracing: out of range is an IndexOutOfRangeError (an
IndexError) naming the index and the shape. Traced indices cannot be checked: negative ones count from the
end, then they clamp into range, as StableHLO's gather and dynamic_slice define (numpy would raise; hlojit
clamps gather and scatter indices itself, as IREE 3.13 does not); `.at[]` updates at out-of-range ones
are dropped, as JAX does (updates.py). Boolean masks are refused: the result's shape would depend on the
data.

Lowering: an index of ints, slices, None and ... is one reverse + slice + reshape; one with integer arrays
is one stablehlo.gather straight from x (see _gather for why nothing slices x first).
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ...dialects import stablehlo as hlo
from ...errors import DTypeError, IndexOutOfRangeError, ShapeError, TracingError
from .. import dtypes
from ..tensor import Tensor
from ._core import as_tensor, constant, convert, describe, emit, fail, normalize_axis, wrap
from .elementwise import binary, where


class Entry(NamedTuple):
    kind: str              # "slice", "int", "none" or "array"
    axis: int | None       # the axis of x it indexes (None for a new axis)
    start: int = 0         # slice: its first element; int: the index, made non-negative
    step: int = 1
    length: int = 1        # slice: how many elements it takes
    index: object = None   # array: a non-negative numpy int64 array (static) or an integer Tensor (traced)


def is_int(value) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


_MASK = "boolean masks are not supported: the result's shape would depend on the data (use ops.where)"


def _classify(op: str, item):
    """One item of an index -> (kind, payload)."""
    if item is None or item is Ellipsis:
        return ("none" if item is None else "ellipsis"), None
    if isinstance(item, slice):
        for part in (item.start, item.stop, item.step):
            if isinstance(part, Tensor):
                fail(TracingError, op, f"slice bounds must be static ints, not a traced {describe(part)}; "
                                       "use ops.dynamic_slice for a block at a traced position")
            if part is not None and not is_int(part):
                fail(TypeError, op, f"slice bounds must be ints or None, not {type(part).__name__}")
        if item.step is not None and int(item.step) == 0:
            fail(ValueError, op, "slice step cannot be zero")
        return "slice", item
    if isinstance(item, (bool, np.bool_)):
        fail(TypeError, op, _MASK)
    if is_int(item):
        return "int", int(item)
    if isinstance(item, Tensor):
        item = as_tensor(item, op)
        if item.dtype == dtypes.bool_:
            fail(TypeError, op, _MASK)
        if item.dtype.kind not in "iu":
            fail(DTypeError, op, f"indices must be integers, not {describe(item)}")
        return "array", item
    if isinstance(item, (list, np.ndarray)):
        array = np.asarray(item)
        if array.dtype == np.bool_:
            fail(TypeError, op, _MASK)
        if array.size == 0 and array.dtype.kind == "f":  # numpy reads [] as an empty integer index
            array = array.astype(np.int64)
        if array.dtype.kind not in "iu":
            fail(DTypeError, op, f"indices must be integers, not an array of {array.dtype}")
        return "array", array
    fail(TypeError, op, f"cannot index with a {type(item).__name__}; an index holds ints, slices, None, ... "
                        "and integer arrays")


def _static_array(op: str, x: Tensor, axis: int, array: np.ndarray) -> np.ndarray:
    n = x.shape[axis]
    bad = array[(array < -n) | (array >= n)] if array.dtype.kind == "i" else array[array >= n]
    if bad.size:
        fail(IndexOutOfRangeError, op, f"index {bad.flat[0]} is out of bounds for axis {axis} with size {n} "
                                        f"(indexing {describe(x)})")
    array = array.astype(np.int64)
    return np.where(array < 0, array + n, array)


def parse(op: str, x: Tensor, index) -> tuple[list[Entry], bool, bool]:
    """An index as one entry per item, `...` expanded and trailing axes filled with full slices; returns
    (entries, advanced, adjacent). In advanced indexing ints are 0-d arrays, as numpy treats them; the
    arrays are adjacent when no other item stands between them (an `...` does, even one standing for
    no axis, as in numpy)."""
    items = [_classify(op, item) for item in (index if isinstance(index, tuple) else (index,))]
    if sum(kind == "ellipsis" for kind, _ in items) > 1:
        fail(IndexError, op, "an index can only have a single ellipsis ('...')")
    used = sum(kind in ("int", "slice", "array") for kind, _ in items)
    if used > x.ndim:
        fail(IndexOutOfRangeError, op, f"too many indices: {used} for {describe(x)} of rank {x.ndim}")
    fill = [("slice", slice(None))] * (x.ndim - used)
    at = next((i for i, (kind, _) in enumerate(items) if kind == "ellipsis"), len(items))
    marked = items[:at] + fill + items[at:at + 1] + items[at + 1:]
    advanced = any(kind == "array" for kind, _ in marked)
    positions = [i for i, (kind, _) in enumerate(marked) if kind == "array" or advanced and kind == "int"]
    adjacent = positions == list(range(positions[0], positions[0] + len(positions))) if positions else True
    items = [item for item in marked if item[0] != "ellipsis"]
    entries, axis = [], 0
    for kind, payload in items:
        if kind == "none":
            entries.append(Entry("none", None))
            continue
        n = x.shape[axis]
        if kind == "slice":
            start, stop, step = payload.indices(n)
            entries.append(Entry("slice", axis, start, step, len(range(start, stop, step))))
        elif kind == "int":
            if not -n <= payload < n:
                fail(IndexOutOfRangeError, op, f"index {payload} is out of bounds for axis {axis} with size {n} "
                                                f"(indexing {describe(x)})")
            value = payload % n
            entries.append(Entry("array", axis, index=np.array(value)) if advanced else Entry("int", axis, value))
        elif isinstance(payload, Tensor):
            if n == 0 and 0 not in payload.shape:   # no indices into nothing is fine: an empty result
                fail(IndexOutOfRangeError, op, f"traced indices into axis {axis} of size 0 of {describe(x)}: "
                                                "there is no element to take")
            entries.append(Entry("array", axis, index=payload))
        else:
            entries.append(Entry("array", axis, index=_static_array(op, x, axis, payload)))
        axis += 1
    return entries, advanced, adjacent


def broadcast_indices(op: str, entries) -> tuple:
    shapes = [tuple(e.index.shape) for e in entries if e.kind == "array"]
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        fail(IndexError, op, f"shape mismatch: indexing arrays of shapes {', '.join(map(str, shapes))} cannot "
                             "be broadcast together")


def layout_of(entries, advanced: bool, adjacent: bool) -> list:
    """The result's dimensions in numpy's order: entries that keep a dimension (slices, new axes) and,
    once, "adv" for the broadcast block of the array indices."""
    kept = [e for e in entries if e.kind in ("slice", "none")]
    if not advanced:
        return kept
    if not adjacent:
        return ["adv"] + kept
    first = next(i for i, e in enumerate(entries) if e.kind == "array")
    return [e for e in entries[:first] if e.kind != "array"] + ["adv"] + \
        [e for e in entries[first:] if e.kind != "array"]


def view_shape(layout, batch: tuple) -> tuple:
    shape = []
    for item in layout:
        shape.extend(batch if item == "adv" else (item.length,))
    return tuple(shape)


def reshape_to(x: Tensor, shape) -> Tensor:
    return x if x.shape == tuple(shape) else wrap(emit(hlo.reshape, x.value, shape), shape, x.dtype, x.weak)


# --- index arrays ---------------------------------------------------------------------------------

def index_dtype(x: Tensor, traced) -> np.dtype:
    """int32 unless an axis or a traced index needs 64 bits (StableHLO wants one index type)."""
    wide = any(d >= 2**31 for d in x.shape) or any(t.dtype.itemsize == 8 or t.dtype == dtypes.uint32
                                                    for t in traced)
    return dtypes.int64 if wide else dtypes.int32


def _traced_index(t: Tensor, n: int, dtype, clamp: bool = True) -> Tensor:
    """A traced index made an index of `dtype`: negatives count from the end, then `clamp` keeps it in
    [0, n). Gather and scatter need it: IREE 3.13 neither clamps a gather's starts (as StableHLO says;
    it reads out of bounds) nor checks a scatter's (it writes out of bounds); updates.py makes the updates
    whose index was out of range change nothing (JAX drops them). Dynamic slices clamp."""
    signed = t.dtype.kind == "i"
    t = convert(t, dtype)
    if signed:
        t = where(t < 0, t + n, t)
    if clamp:
        t = where(t < 0, 0, where(t > n - 1, n - 1, t)) if signed else where(t > n - 1, n - 1, t)
    return t


class _Grid(NamedTuple):
    """The dimensions a gather or scatter walks with index vectors: the broadcast block of the index
    arrays and every slice that is not a window (taken in one piece), in the result's order."""
    shape: tuple
    dims: list          # their positions among the result's dimensions (new axes left out)
    window_dims: list   # the positions of the windows
    adv_start: int      # where the broadcast block starts in the grid
    slice_at: dict      # axis of a gridded slice -> its grid dimension


def index_grid(layout, batch: tuple, is_window) -> _Grid:
    """The grid of a result `layout` (new axes left out): slices for which `is_window` holds are windows."""
    shape, dims, window_dims, adv_start, slice_at = [], [], [], 0, {}
    for item in layout:
        if item == "adv":
            adv_start = len(shape)
            dims.extend(range(len(dims) + len(window_dims), len(dims) + len(window_dims) + len(batch)))
            shape.extend(batch)
        elif is_window(item):
            window_dims.append(len(dims) + len(window_dims))
        else:
            slice_at[item.axis] = len(shape)
            dims.append(len(dims) + len(window_dims))
            shape.append(item.length)
    return _Grid(tuple(shape), dims, window_dims, adv_start, slice_at)


def index_components(indexed, grid: _Grid, batch: tuple, dtype, x: Tensor):
    """Per indexed entry, its index at every grid position: ints and windows a constant, arrays theirs
    over the broadcast block, gridded slices start + step * i along their grid dimension."""
    components, end = [], grid.adv_start + len(batch)
    for e in indexed:
        if e.kind == "int":
            components.append(np.array(e.start))
        elif e.kind == "array" and isinstance(e.index, Tensor):
            t = _traced_index(e.index, x.shape[e.axis], dtype)
            components.append((t, range(end - t.ndim, end)))
        elif e.kind == "array":
            block = np.broadcast_to(e.index, batch)
            components.append(block.reshape((1,) * grid.adv_start + batch + (1,) * (len(grid.shape) - end)))
        elif e.axis in grid.slice_at:
            shape = [1] * len(grid.shape)
            shape[grid.slice_at[e.axis]] = e.length
            components.append((e.start + e.step * np.arange(e.length)).reshape(shape))
        else:  # a window's start
            components.append(np.array(e.start))
    return components


def stack_indices(components, grid: tuple, dtype) -> Tensor:
    """Index vectors of shape grid + (len(components),). A component is a numpy array broadcastable to
    `grid`, or (Tensor, the grid dimensions its dimensions fill)."""
    static = all(isinstance(c, np.ndarray) for c in components)
    if static:
        stacked = np.stack([np.broadcast_to(c, grid) for c in components], axis=-1).astype(dtype)
        return constant(stacked, dtype)
    columns = []
    for c in components:
        if isinstance(c, np.ndarray):
            columns.append(constant(np.broadcast_to(c, grid).astype(dtype)[..., None], dtype))
        else:
            t, dims = c
            value = emit(hlo.broadcast_in_dim, t.value, (*grid, 1), list(dims))
            columns.append(wrap(value, (*grid, 1), dtype))
    if len(columns) == 1:
        return columns[0]
    shape = (*grid, len(columns))
    return wrap(emit(hlo.concatenate, [c.value for c in columns], len(grid)), shape, dtype)


# --- reading ----------------------------------------------------------------------------------------

def _bounds(e: Entry, n: int) -> tuple:
    """(start, limit, stride, reversed) of one stablehlo.slice taking an entry's elements along its axis;
    a reversed axis is sliced after reversing it, so its start counts from the end."""
    if e.kind == "int":
        return e.start, e.start + 1, 1, False
    if e.kind == "array" or e.length == 0:
        return (0, n, 1, False) if e.kind == "array" else (0, 0, 1, False)
    if e.length == 1:
        return e.start, e.start + 1, 1, False
    start = e.start if e.step > 0 else n - 1 - e.start
    return start, start + (e.length - 1) * abs(e.step) + 1, abs(e.step), e.step < 0


def _cut(x: Tensor, bounds) -> Tensor:
    """One reverse (of the axes taken backwards), then one stablehlo.slice: IREE 3.13's llvm-cpu cannot
    compile a reverse of a slice that cuts the last axis ("LLVM Translation failed for operation:
    builtin.unrealized_conversion_cast"); a slice of a reverse compiles."""
    flips = [a for a, b in enumerate(bounds) if b[3]]
    if flips:
        x = wrap(emit(hlo.reverse, x.value, flips), x.shape, x.dtype, x.weak)
    starts, limits, strides = [b[0] for b in bounds], [b[1] for b in bounds], [b[2] for b in bounds]
    if (starts, limits, strides) != ([0] * x.ndim, list(x.shape), [1] * x.ndim):
        shape = [len(range(*b[:3])) for b in bounds]
        x = wrap(emit(hlo.slice, x.value, starts, limits, strides), shape, x.dtype, x.weak)
    return x


def _gather(x: Tensor, axes, layout, batch: tuple) -> Tensor:
    """Advanced indexing as one stablehlo.gather straight from x. Unit-step slices are windows (their
    start, when not 0, in the index vectors); index arrays and strided or reversed slices are walked by
    index vectors. Nothing slices x first: IREE 3.13's llvm-cpu cannot compile a gather fused with a
    slice that cuts the last axis ("LLVM Translation failed for operation:
    builtin.unrealized_conversion_cast")."""
    grid = index_grid(layout, batch, lambda e: e.step == 1 or e.length == 1)
    gridded = [e for e in axes if e.kind == "array" or e.axis in grid.slice_at]
    offset = [e for e in axes if e.kind == "slice" and e.axis not in grid.slice_at and e.length != x.shape[e.axis]]
    indexed = sorted(gridded + offset, key=lambda e: e.axis)
    dtype = index_dtype(x, [e.index for e in gridded if isinstance(e.index, Tensor)])
    components = index_components(indexed, grid, batch, dtype, x)
    indices = stack_indices(components, grid.shape, dtype)
    collapsed = [e.axis for e in gridded]
    sizes = [1 if e.axis in collapsed else e.length if e.kind == "slice" else x.shape[e.axis] for e in axes]
    value = emit(hlo.gather, x.value, indices.value, offset_dims=grid.window_dims, collapsed_slice_dims=collapsed,
                 start_index_map=[e.axis for e in indexed], index_vector_dim=len(grid.shape), slice_sizes=sizes)
    return wrap(value, view_shape(layout, batch), x.dtype, x.weak)


def getitem(x, index, op: str = "getitem") -> Tensor:
    """`x[index]` with numpy's semantics (see the module's docstring for what an index may hold)."""
    x = as_tensor(x, op)
    entries, advanced, adjacent = parse(op, x, index)
    batch = broadcast_indices(op, entries) if advanced else ()
    layout = layout_of(entries, advanced, adjacent)
    shape = view_shape(layout, batch)
    if math.prod(shape) == 0:  # nothing to read: no gather of nothing
        return wrap(constant(np.zeros(shape, x.dtype), x.dtype).value, shape, x.dtype, x.weak)
    axes = [e for e in entries if e.axis is not None]   # axes[i].axis == i
    if not advanced:
        return reshape_to(_cut(x, [_bounds(e, x.shape[e.axis]) for e in axes]), shape)
    layout = [item for item in layout if item == "adv" or item.kind != "none"]
    return reshape_to(_gather(x, axes, layout, batch), shape)


def take(x, indices, axis=None, mode=None) -> Tensor:
    """numpy take: the elements of x at `indices` along `axis` (of the flattened x when None). numpy's modes:
    "raise" (the default; out-of-range static indices raise), "wrap" (indices modulo the length) and "clip"
    (into [0, n - 1]: a negative index is the first element, not one from the end)."""
    x = as_tensor(x, "take")
    if axis is None:
        x = reshape_to(x, (x.size,))
        axis = 0
    axis = normalize_axis("take", axis, x.ndim)
    if mode not in (None, "raise", "wrap", "clip"):
        fail(ValueError, "take", f"mode must be 'raise', 'wrap' or 'clip', not {mode!r}")
    n = x.shape[axis]
    if mode in ("wrap", "clip") and n:
        if isinstance(indices, Tensor):
            indices = binary("remainder", indices, n) if mode == "wrap" else \
                binary("minimum", binary("maximum", indices, 0), n - 1)
        else:
            indices = np.mod(indices, n) if mode == "wrap" else np.clip(indices, 0, n - 1)
    return getitem(x, (slice(None),) * axis + (indices,), "take")


def take_along_axis(x, indices, axis) -> Tensor:
    """numpy take_along_axis: `indices` has x's rank and picks, along `axis`, one element per position of
    the other axes (which broadcast between x and indices)."""
    op = "take_along_axis"
    x = as_tensor(x, op)
    kind, indices = _classify(op, indices if isinstance(indices, (Tensor, list, np.ndarray)) else np.asarray(indices))
    if axis is None:
        x, axis = reshape_to(x, (x.size,)), 0
    if indices.ndim != x.ndim:
        fail(ShapeError, op, f"indices {describe(indices) if isinstance(indices, Tensor) else indices.shape} "
                             f"must have the rank of {describe(x)}")
    axis = normalize_axis(op, axis, x.ndim)
    index = tuple(indices if d == axis else np.arange(n).reshape([-1 if i == d else 1 for i in range(x.ndim)])
                  for d, n in enumerate(x.shape))
    return getitem(x, index, op)


# --- dynamic slices ---------------------------------------------------------------------------------

def _starts(op: str, x: Tensor, start_indices, sizes) -> list[Tensor]:
    """One 0-d index Tensor per axis. Static starts are checked (negative count from the end); traced
    ones count from the end when negative and then clamp, as StableHLO's dynamic slices define."""
    if isinstance(start_indices, Tensor) or isinstance(start_indices, np.ndarray) and start_indices.ndim == 1:
        t = as_tensor(start_indices, op)
        if t.ndim != 1:
            fail(ShapeError, op, f"start_indices must be a sequence or a 1-d array, not {describe(t)}")
        start_indices = [reshape_to(getitem(t, slice(i, i + 1), op), ()) for i in range(t.shape[0])]
    if not isinstance(start_indices, (list, tuple)):
        fail(TypeError, op, f"start_indices must be a sequence of ints or 0-d integer Tensors, not "
                            f"{type(start_indices).__name__}")
    if len(start_indices) != x.ndim:
        fail(ShapeError, op, f"{len(start_indices)} start indices for {describe(x)} of rank {x.ndim}")
    traced = []
    for s in start_indices:
        if isinstance(s, Tensor):
            if s.ndim != 0 or s.dtype.kind not in "iu" or s.dtype == dtypes.bool_:
                fail(DTypeError, op, f"a start index must be a 0-d integer, not {describe(s)}")
            traced.append(as_tensor(s, op))
        elif isinstance(s, np.ndarray) and s.ndim == 0 and s.dtype.kind in "iu":
            continue
        elif not is_int(s):
            fail(TypeError, op, f"a start index must be an int or a 0-d integer Tensor, not {type(s).__name__}")
    dtype = index_dtype(x, traced)
    starts = []
    for axis, (s, size) in enumerate(zip(start_indices, sizes)):
        n = x.shape[axis]
        if isinstance(s, Tensor):
            starts.append(_traced_index(s, n, dtype, clamp=False))
            continue
        start = int(s) + n if int(s) < 0 else int(s)
        if start < 0 or start + size > n:
            fail(IndexOutOfRangeError, op, f"start index {s} with size {size} is out of bounds for axis {axis} "
                                            f"with size {n} (of {describe(x)})")
        starts.append(constant(start, dtype))
    return starts


def _sizes(op: str, x: Tensor, sizes) -> tuple:
    sizes = (sizes,) if is_int(sizes) else tuple(sizes)
    if len(sizes) != x.ndim or not all(is_int(s) for s in sizes):
        fail(ShapeError, op, f"slice sizes {sizes} must be {x.ndim} ints for {describe(x)}")
    for axis, (s, n) in enumerate(zip(sizes, x.shape)):
        if not 0 <= s <= n:
            fail(ShapeError, op, f"slice size {s} does not fit axis {axis} of {describe(x)}")
    return tuple(int(s) for s in sizes)


def dynamic_slice(x, start_indices, sizes) -> Tensor:
    """The block of static `sizes` at `start_indices` (ints or traced 0-d integers, one per axis): traced
    starts clamp so the block stays inside x (lax.dynamic_slice); static ones out of range are errors."""
    x = as_tensor(x, "dynamic_slice")
    sizes = _sizes("dynamic_slice", x, sizes)
    starts = _starts("dynamic_slice", x, start_indices, sizes)
    if sizes == x.shape:
        return x
    value = emit(hlo.dynamic_slice, x.value, [s.value for s in starts], sizes)
    return wrap(value, sizes, x.dtype, x.weak)


def dynamic_update_slice(x, update, start_indices) -> Tensor:
    """x with the block at `start_indices` replaced by `update` (cast to x's dtype); traced starts clamp
    so the block fits inside x (lax.dynamic_update_slice)."""
    op = "dynamic_update_slice"
    x = as_tensor(x, op)
    update = convert(as_tensor(update, op), x.dtype, x.weak)
    if update.ndim != x.ndim or any(u > n for u, n in zip(update.shape, x.shape)):
        fail(ShapeError, op, f"update {describe(update)} does not fit inside {describe(x)}")
    starts = _starts(op, x, start_indices, update.shape)
    if update.shape == x.shape:
        return update
    value = emit(hlo.dynamic_update_slice, x.value, update.value, [s.value for s in starts])
    return wrap(value, x.shape, x.dtype, x.weak)


def one_hot(indices, num_classes: int, dtype=dtypes.float32, axis: int = -1) -> Tensor:
    """1 where the new axis's position equals the index, else 0. An index outside [0, num_classes) gives
    all zeros (as jax.nn.one_hot)."""
    op = "one_hot"
    t = as_tensor(indices, op)
    if t.dtype.kind not in "iu" or t.dtype == dtypes.bool_:
        fail(DTypeError, op, f"indices must be integers, not {describe(t)}")
    if not is_int(num_classes) or num_classes < 0:
        fail(ValueError, op, f"num_classes must be a non-negative int, not {num_classes!r}")
    axis = normalize_axis(op, axis, t.ndim + 1)
    shape = t.shape[:axis] + (int(num_classes),) + t.shape[axis:]
    wide = dtypes.int64 if t.dtype.itemsize == 8 or t.dtype == dtypes.uint32 else dtypes.int32
    t = convert(t, wide)
    spread = emit(hlo.broadcast_in_dim, t.value, shape, [d for d in range(len(shape)) if d != axis])
    classes = emit(hlo.iota, shape, axis, wide)
    hit = wrap(emit(hlo.compare, spread, classes, "EQ"), shape, dtypes.bool_)
    return convert(hit, dtype)
