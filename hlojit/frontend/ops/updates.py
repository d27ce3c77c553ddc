"""Functional updates `x.at[index].set(v)` (and .add, .multiply, .min, .max, .get): x with x[index] replaced
or combined with v, as a new value (traced arrays are values; `x[index] = v` cannot trace).

The index is getitem's (indexing.py parses it; static parts are checked while tracing). Traced indices
follow JAX: negative ones in range (-n..-1) count from the end, and an update at any other index out of
range is dropped (`.get`, a gather, clamps instead). Ints and unit-step slices name a block: it is read
(for add ...), combined and written back with dynamic_update_slice. Any other index is one
stablehlo.scatter whose region holds the combining op, so an element indexed twice gets every value
combined (numpy's np.add.at); `.set` keeps one of them, which one is unspecified.
"""
from __future__ import annotations

import math

import numpy as np

from ...dialects import stablehlo as hlo
from ...errors import ShapeError
from .. import dtypes
from ..tensor import Tensor
from . import _core, reductions
from ._core import as_tensor, constant, convert, describe, emit, fail, wrap
from .elementwise import binary, where
from .indexing import (broadcast_indices, dynamic_slice, getitem, index_components, index_dtype, index_grid,
                       layout_of, parse, reshape_to, stack_indices, view_shape)
from .shape import iota


_COMBINE = {"add": "add", "multiply": "multiply", "min": "minimum", "max": "maximum"}


def _update_values(op: str, values, x: Tensor, view: tuple) -> Tensor:
    """`values` in x's dtype, broadcast to the indexed shape (leading size-1 axes may drop, as numpy's
    assignment allows)."""
    v = constant(values, x.dtype, op=op) if _core.is_scalar(values) else convert(as_tensor(values, op), x.dtype)
    shape = v.shape
    while len(shape) > len(view) and shape[0] == 1:
        shape = shape[1:]
    ok = len(shape) <= len(view) and all(a in (1, b) for a, b in zip(shape[::-1], view[::-1]))
    if not ok:
        fail(ShapeError, op, f"cannot broadcast the values {describe(v)} to the indexed shape {view} of "
                             f"{describe(x)}")
    return _core.broadcast_to(reshape_to(v, shape), view, op)


def _combine(mode: str, dtype) -> str | None:
    if mode == "set":
        return None
    return _COMBINE[mode]     # on bools the spec's add/multiply/max/min are OR/AND (the pipeline mends IREE's)


def _update_block(x: Tensor, entries, v: Tensor, mode: str) -> Tensor:
    """Ints and unit-step slices: the block is read (for add ...), combined and written back."""
    axes = [e for e in entries if e.axis is not None]
    starts = [e.start for e in axes]
    sizes = [1 if e.kind == "int" else e.length for e in axes]
    new = reshape_to(v, sizes)
    if mode != "set":
        current = x
        if sizes != list(x.shape):
            limits = [s + n for s, n in zip(starts, sizes)]
            current = wrap(emit(hlo.slice, x.value, starts, limits, [1] * x.ndim), sizes, x.dtype, x.weak)
        new = convert(binary(_COMBINE[mode], current, new), x.dtype, x.weak)
    if sizes == list(x.shape):
        return convert(new, x.dtype, x.weak)
    dtype = index_dtype(x, [])
    value = emit(hlo.dynamic_update_slice, x.value, new.value, [constant(s, dtype).value for s in starts])
    return wrap(value, x.shape, x.dtype, x.weak)


def _update_scatter(x: Tensor, entries, advanced: bool, adjacent: bool, batch: tuple, v: Tensor,
                    mode: str) -> Tensor:
    """Any other index: one stablehlo.scatter, in the one form IREE 3.13 lowers for every index (partial
    windows, windows with a start, or several indexed axes behind a window fail to compile there): the
    indexed axes of x moved in front, each a single element per index vector; axes taken whole are the
    windows behind them; the updates are (index vectors, whole axes...)."""
    whole = [e.axis for e in entries if e.kind == "slice" and (e.start, e.step, e.length) == (0, 1, x.shape[e.axis])]
    indexed = [e for e in entries if e.axis is not None and e.axis not in whole]
    layout = [item for item in layout_of(entries, advanced, adjacent) if item == "adv" or item.kind != "none"]
    grid = index_grid(layout, batch, lambda e: e.axis in whole)
    updates = reshape_to(v, view_shape(layout, batch))
    order = grid.dims + grid.window_dims
    if order != sorted(order):
        shape = tuple(updates.shape[d] for d in order)
        updates = wrap(emit(hlo.transpose, updates.value, order), shape, updates.dtype, updates.weak)
    n = math.prod(grid.shape)
    updates = reshape_to(updates, (n,) + updates.shape[len(grid.shape):])
    dtype = index_dtype(x, [e.index for e in indexed if isinstance(e.index, Tensor)])
    components = index_components(indexed, grid, batch, dtype, x)   # traced indices clamped into range
    indices = reshape_to(stack_indices(components, grid.shape, dtype), (n, len(components)))
    perm = [e.axis for e in indexed] + whole
    operand = x
    if perm != sorted(perm):
        shape = tuple(x.shape[a] for a in perm)
        operand = wrap(emit(hlo.transpose, x.value, perm), shape, x.dtype, x.weak)
    valid = _in_range(x, indexed, grid, batch)
    if valid is not None:
        indices, updates = _without_dropped(mode, operand, indices, updates, reshape_to(valid, (n,)))
    body = _combine(mode, x.dtype) or (lambda current, update: [update])
    k = len(indexed)
    value = emit(hlo.scatter, operand.value, indices.value, updates.value, body,
                 update_window_dims=range(1, 1 + len(whole)), inserted_window_dims=range(k),
                 scatter_dims_to_operand_dims=range(k), index_vector_dim=1)
    if perm != sorted(perm):
        value = emit(hlo.transpose, value, [perm.index(a) for a in range(x.ndim)])
    return wrap(value, x.shape, x.dtype, x.weak)


def _index_in_range(t: Tensor, n: int) -> Tensor | None:
    """Where a traced index is in range by JAX's rule, -n <= t < n (None: always, by its dtype)."""
    info = np.iinfo(t.dtype)
    checks = []
    if -n >= info.min:
        checks.append(t >= -n)
    if n - 1 <= info.max:
        checks.append(t <= n - 1)
    if not checks:
        return None
    return checks[0] if len(checks) == 1 else checks[0] & checks[1]


def _in_range(x: Tensor, indexed, grid, batch) -> Tensor | None:
    """Bool over the grid: whether every traced index of the update there is in range (None: all are)."""
    end = grid.adv_start + len(batch)
    valid = None
    for e in indexed:
        if e.kind != "array" or not isinstance(e.index, Tensor):
            continue   # static indices were checked while tracing
        ok = _index_in_range(e.index, x.shape[e.axis])
        if ok is None:
            continue
        ok = wrap(emit(hlo.broadcast_in_dim, ok.value, grid.shape, list(range(end - ok.ndim, end))), grid.shape,
                  dtypes.bool_)
        valid = ok if valid is None else valid & ok
    return valid


def _without_dropped(mode: str, operand: Tensor, indices: Tensor, updates: Tensor, valid: Tensor):
    """(indices, updates) where the updates out of range (`valid` False; their indices were clamped) change
    nothing: StableHLO leaves out-of-bounds scatter indices to the implementation (IREE 3.13 writes out of
    bounds), JAX drops them. A combining update becomes the identity of its op; a replacing one a copy of
    the first valid update (a repeated (index, value) pair writes the same value), or, when none is valid,
    a write of the operand's own value. Nothing is copied but the updates."""
    n, k = indices.shape
    keep = _core.broadcast_to(reshape_to(valid, (n,) + (1,) * (updates.ndim - 1)), updates.shape)
    if mode != "set":
        identity = _IDENTITY[mode](operand.dtype)
        return indices, where(keep, updates, constant(identity, updates.dtype))
    first = reductions.min(where(valid, iota(dtypes.int32, (n,)), n - 1))   # n - 1 when none is valid
    index = dynamic_slice(indices, (first, 0), (1, k))
    value = dynamic_slice(updates, (first,) + (0,) * (updates.ndim - 1), (1,) + updates.shape[1:])
    any_valid = reshape_to(dynamic_slice(valid, (first,), (1,)), (1,) * updates.ndim)
    own = emit(hlo.gather, operand.value, index.value, offset_dims=range(1, updates.ndim),
               collapsed_slice_dims=range(k), start_index_map=range(k), index_vector_dim=1,
               slice_sizes=[1] * k + list(operand.shape[k:]))
    value = where(any_valid, value, wrap(own, value.shape, value.dtype, value.weak))
    keep_index = _core.broadcast_to(reshape_to(valid, (n, 1)), (n, k))
    return (where(keep_index, indices, _core.broadcast_to(index, (n, k))),
            where(keep, updates, _core.broadcast_to(value, updates.shape)))


_IDENTITY = {"add": lambda d: 0, "multiply": lambda d: 1, "max": reductions.lowest, "min": reductions.highest}


def update(x, index, values, mode: str) -> Tensor:
    """x with the elements `x[index]` replaced by (mode "set") or combined with `values`: "add",
    "multiply", "min", "max". An element indexed twice: add/multiply/min/max combine every value (numpy's
    np.add.at); set keeps one of them, which one is unspecified."""
    op = f"at[].{mode}"
    x = as_tensor(x, op)
    entries, advanced, adjacent = parse(op, x, index)
    batch = broadcast_indices(op, entries) if advanced else ()
    view = view_shape(layout_of(entries, advanced, adjacent), batch)
    v = _update_values(op, values, x, view)
    if math.prod(view) == 0:
        return x
    if not advanced and all(e.kind != "slice" or e.step == 1 or e.length == 1 for e in entries):
        return _update_block(x, entries, v, mode)
    return _update_scatter(x, entries, advanced, adjacent, batch, v, mode)


class _IndexedUpdate:
    """`x.at[index]`: the methods return the updated array; x itself never changes."""
    __slots__ = ("_x", "_index")

    def __init__(self, x, index):
        self._x, self._index = x, index

    def get(self) -> Tensor:
        return getitem(self._x, self._index, "at[].get")

    def set(self, values) -> Tensor:
        """x with x[index] = values (an element indexed twice gets one of its values, unspecified which)."""
        return update(self._x, self._index, values, "set")

    def add(self, values) -> Tensor:
        """x with values added at index; repeated indices accumulate, as numpy's np.add.at."""
        return update(self._x, self._index, values, "add")

    def multiply(self, values) -> Tensor:
        return update(self._x, self._index, values, "multiply")

    def min(self, values) -> Tensor:
        return update(self._x, self._index, values, "min")

    def max(self, values) -> Tensor:
        return update(self._x, self._index, values, "max")


class IndexUpdates:
    """`x.at`, indexed as `x.at[index]` (JAX's functional form of `x[index] = v`: traced arrays are values)."""
    __slots__ = ("_x",)

    def __init__(self, x):
        self._x = x

    def __getitem__(self, index) -> _IndexedUpdate:
        return _IndexedUpdate(self._x, index)
