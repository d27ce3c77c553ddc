"""Searching, selecting and sets: searchsorted, digitize, partition, lexsort, nonzero/argwhere/flatnonzero,
one-argument where, unique, isin, select, piecewise, extract/compress, bincount, histogram.

A result whose length depends on the data (nonzero, unique, extract ...) has a static length in a compiled
program: these take JAX's `size=` (and `fill_value=`) and raise a TracingError naming the op without it.
Compaction is a stable sort of positions (kept ones first), so nothing scatters and every target runs it.
Orders are numpy's: NaN sorts last and -0.0 equals 0.0.
"""
from __future__ import annotations

import inspect
import math

import numpy as np

from ...errors import DTypeError, ShapeError, TracingError
from .. import dtypes
from ..tensor import Tensor
from . import _core
from ._core import as_tensor, describe, fail
from .elementwise import binary, compare, unary, where
from .indexing import one_hot, take, take_along_axis
from .joining import concatenate, stack
from .reductions import any as _any, max as _max, min as _min, sum as _sum
from .shape import iota, linspace, moveaxis, ravel, reshape, slice_axis
from .statistics import argsort, cumsum, sort


def _less(a: Tensor, b: Tensor) -> Tensor:
    """a < b in sort order: NaN after every number."""
    if not dtypes.is_float(a.dtype):
        return compare("less", a, b)
    return compare("less", a, b) | (unary("isnan", b) & ~unary("isnan", a))


def searchsorted(a, v, side="left", sorter=None, method=None) -> Tensor:
    """Positions in the sorted 1-D `a` where `v`'s elements would go to keep it sorted (int32): the first such
    position (`side="left"`) or the last (`"right"`), by a binary search of ceil(log2(n + 1)) gathers."""
    if side not in ("left", "right"):
        fail(ValueError, "searchsorted", f"side must be 'left' or 'right', not {side!r}")
    (a, v), _, _ = _core.promote("searchsorted", a, v)
    if a.ndim != 1:
        fail(ShapeError, "searchsorted", f"a must be 1-D, not {describe(a)}")
    if sorter is not None:
        a = take(a, sorter)
    n = a.shape[0]
    low = _core.broadcast_to(_core.constant(0, dtypes.int32), v.shape, "searchsorted")
    high = _core.broadcast_to(_core.constant(n, dtypes.int32), v.shape, "searchsorted")
    if n == 0:
        return low
    for _ in range(max(1, math.ceil(math.log2(n + 1)))):
        mid = binary("floor_divide", low + high, 2)
        probe = take(a, binary("minimum", mid, n - 1))
        go_right = _less(probe, v) if side == "left" else ~_less(v, probe)
        go_right = go_right & compare("less", mid, high)
        low = where(go_right, mid + 1, low)
        high = where(go_right, high, mid)
    return low


def digitize(x, bins, right=False) -> Tensor:
    """The index of the bin of each x (numpy.digitize), for increasing or decreasing bins."""
    bins = as_tensor(bins, "digitize")
    if bins.ndim != 1:
        fail(ShapeError, "digitize", f"bins must be 1-D, not {describe(bins)}")
    side = "left" if right else "right"
    n = bins.shape[0]
    if n < 2:
        return searchsorted(bins, x, side)
    rising = searchsorted(bins, x, side)
    falling = n - searchsorted(bins[::-1], x, "left" if right else "right")
    return where(compare("less_equal", bins[0], bins[n - 1]), rising, falling)


def partition(a, kth, axis=-1) -> Tensor:
    """Elements before `kth` are no larger than a[kth], those after no smaller: a full sort satisfies that."""
    return sort(a, axis)


def argpartition(a, kth, axis=-1) -> Tensor:
    """Indices that partition a at `kth` (the stable argsort does)."""
    return argsort(a, axis)


def lexsort(keys, axis=-1) -> Tensor:
    """Indices sorting by the last key, then the one before it ... (numpy.lexsort): stable sorts, first key
    first."""
    keys = [as_tensor(k, "lexsort") for k in (keys if isinstance(keys, (list, tuple)) else list(keys))]
    if not keys:
        fail(ShapeError, "lexsort", "needs at least one key")
    order = None
    for key in keys:
        key = moveaxis(key, axis, -1)
        if order is None:
            order = argsort(key, -1)
        else:
            order = take_along_axis(order, argsort(take_along_axis(key, order, -1), -1), -1)
    return moveaxis(order, -1, axis)


def _needs_size(op: str, size):
    if size is None:
        fail(TracingError, op, "the length of the result depends on the data: pass size= (and fill_value=) as "
                               "jax.numpy takes them")
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 0:
        fail(ValueError, op, f"size must be a non-negative int, not {size!r}")
    return int(size)


def _first_positions(mask: Tensor, size: int) -> tuple[Tensor, Tensor]:
    """(int32 positions of the first `size` True elements of 1-D `mask`, which of those slots are real)."""
    n = mask.shape[0]
    position = iota(dtypes.int32, (n,), 0)
    keys = sort(where(mask, position, n))            # kept positions first, in order; the rest are n
    if size > n:
        keys = concatenate([keys, _core.broadcast_to(_core.constant(n, dtypes.int32), (size - n,), "compact")])
    keys = slice_axis(keys, 0, 0, size)
    return keys, compare("less", keys, n)


def flatnonzero(a, size=None, fill_value=None) -> Tensor:
    """The flat indices of the nonzero elements (int32), `size` of them."""
    flat = ravel(as_tensor(a, "flatnonzero"))
    size = _needs_size("flatnonzero", size)
    found, real = _first_positions(compare("not_equal", flat, _core.constant(0, flat.dtype)), size)
    fill = 0 if fill_value is None else fill_value
    return where(real, found, _core.constant(fill, dtypes.int32))


def nonzero(a, size=None, fill_value=None) -> tuple[Tensor, ...]:
    """One int32 array of indices per dimension, of the nonzero elements in row-major order."""
    x = as_tensor(a, "nonzero")
    if x.ndim == 0:
        fail(ShapeError, "nonzero", "of a 0-d array is undefined (numpy deprecated it): use atleast_1d")
    size = _needs_size("nonzero", size)
    found, real = _first_positions(compare("not_equal", ravel(x), _core.constant(0, x.dtype)), size)
    fills = fill_value if isinstance(fill_value, (tuple, list)) else [fill_value or 0] * x.ndim
    out, rest = [], found
    strides = [int(np.prod(x.shape[d + 1:])) for d in range(x.ndim)]
    for d, stride in enumerate(strides):
        index = binary("floor_divide", rest, stride) if stride > 1 else rest
        rest = binary("remainder", rest, stride) if stride > 1 else rest * 0
        out.append(where(real, index, _core.constant(fills[d], dtypes.int32)))
    return tuple(out)


def argwhere(a, size=None, fill_value=None) -> Tensor:
    """(size, ndim) int32: the indices of the nonzero elements, one row each."""
    x = as_tensor(a, "argwhere")
    if x.ndim == 0:   # no index has any component
        return _core.broadcast_to(_core.constant(0, dtypes.int32), (_needs_size("argwhere", size), 0), "argwhere")
    return stack(nonzero(x, size, fill_value), axis=1)


def where_indices(condition, size=None, fill_value=None) -> tuple[Tensor, ...]:
    """`where(condition)` with one argument: nonzero(condition)."""
    return nonzero(condition, size, fill_value)


def extract(condition, arr, size=None, fill_value=0) -> Tensor:
    """The elements of flattened arr where flattened condition is true, `size` of them."""
    flat, mask = ravel(as_tensor(arr, "extract")), ravel(as_tensor(condition, "extract"))
    if mask.shape != flat.shape:
        fail(ShapeError, "extract", f"condition {describe(mask)} and arr {describe(flat)} differ in size")
    size = _needs_size("extract", size)
    found, real = _first_positions(compare("not_equal", mask, _core.constant(0, mask.dtype)), size)
    values = take(flat, binary("minimum", found, max(flat.shape[0] - 1, 0))) if flat.shape[0] else \
        _core.broadcast_to(_core.constant(0, flat.dtype), (size,), "extract")
    return where(real, values, _core.constant(fill_value, flat.dtype, flat.weak))


def compress(condition, a, axis=None, size=None, fill_value=0) -> Tensor:
    """The slices of a along axis (flattened: None) where condition is true, `size` of them; a shorter condition
    is False past its end (numpy's)."""
    x = as_tensor(a, "compress")
    if axis is None:
        x, axis = ravel(x), 0
    axis = _core.normalize_axis("compress", axis, x.ndim)
    mask = ravel(as_tensor(condition, "compress"))
    size = _needs_size("compress", size)
    n = x.shape[axis]
    if mask.shape[0] > n:
        fail(ShapeError, "compress", f"condition has {mask.shape[0]} entries, axis {axis} of {describe(x)} has {n}")
    if mask.shape[0] < n:   # numpy: missing entries are False
        mask = concatenate([mask, _core.broadcast_to(_core.constant(False, mask.dtype), (n - mask.shape[0],),
                                                     "compress")])
    found, real = _first_positions(compare("not_equal", mask, _core.constant(0, mask.dtype)), size)
    picked = take(x, binary("minimum", found, max(n - 1, 0)), axis=axis)
    shape = [1] * x.ndim
    shape[axis] = size
    return where(reshape(real, tuple(shape)), picked, _core.constant(fill_value, x.dtype, x.weak))


def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None, *, equal_nan=True,
           size=None, fill_value=None):
    """The sorted unique elements of flattened `ar` (`size` of them; the rest `fill_value`, by default the
    smallest), and numpy's optional first indices, inverse and counts (int32)."""
    if axis is not None:
        fail(ValueError, "unique", "axis= is not supported; flatten or use a loop over slices")
    flat = ravel(as_tensor(ar, "unique"))
    size = _needs_size("unique", size)
    n = flat.shape[0]
    if n == 0:
        return _unique_of_nothing(flat, as_tensor(ar, "unique").shape, size, fill_value, return_index,
                                  return_inverse, return_counts)
    order = argsort(flat)
    values = take(flat, order)
    previous = concatenate([slice_axis(values, 0, 0, 1), slice_axis(values, 0, 0, n - 1)])
    new = compare("not_equal", values, previous)
    if equal_nan and dtypes.is_float(flat.dtype):
        new = new & ~(unary("isnan", values) & unary("isnan", previous))
    new = binary("logical_or", new, compare("equal", iota(dtypes.int32, (n,), 0), 0))
    starts, real = _first_positions(new, size)
    safe = binary("minimum", starts, n - 1)
    fill = take(values, 0) if fill_value is None else _core.constant(fill_value, flat.dtype, flat.weak)
    out = [where(real, take(values, safe), fill)]
    if return_index:
        out.append(where(real, take(order, safe), _core.constant(0, dtypes.int32)))
    if return_inverse:
        group = cumsum(_core.convert(new, dtypes.int32)) - 1         # each sorted element's unique value
        inverse = take(group, argsort(order))                        # back to the original positions
        out.append(reshape(inverse, as_tensor(ar, "unique").shape))      # numpy 2: the input's shape
    if return_counts:
        ends = concatenate([slice_axis(starts, 0, 1, size), _core.constant(np.array([n], np.int32), dtypes.int32)])
        ends = where(compare("less", ends, n), ends, n)
        out.append(where(real, ends - starts, _core.constant(0, dtypes.int32)))
    return out[0] if len(out) == 1 else tuple(out)


def _unique_of_nothing(flat, shape, size, fill_value, return_index, return_inverse, return_counts):
    """unique of an empty array: `size` fill values (none: numpy's empty results; an eager call's size is 0),
    zero first indices and counts, an empty inverse of the input's shape."""
    if size and fill_value is None:
        fail(ShapeError, "unique", f"of an empty array has no elements to fill {size} places with: pass fill_value=")
    fill = _core.constant(0 if fill_value is None else fill_value, flat.dtype, flat.weak)
    zeros = _core.broadcast_to(_core.constant(0, dtypes.int32), (size,), "unique")
    out = [_core.broadcast_to(fill, (size,), "unique")]
    out += [zeros] if return_index else []
    out += [_core.broadcast_to(_core.constant(0, dtypes.int32), shape, "unique")] if return_inverse else []
    out += [zeros] if return_counts else []
    return out[0] if len(out) == 1 else tuple(out)


def isin(element, test_elements, invert=False) -> Tensor:
    """Whether each element is in test_elements (a comparison against each; NaN is in nothing)."""
    (x, tests), _, _ = _core.promote("isin", element, test_elements)
    flat = ravel(tests)
    hit = _any(compare("equal", reshape(x, x.shape + (1,)), reshape(flat, (1,) * x.ndim + flat.shape)), axis=-1) \
        if flat.shape[0] else _core.broadcast_to(_core.constant(False, dtypes.bool_), x.shape, "isin")
    return ~hit if invert else hit


def select(condlist, choicelist, default=0) -> Tensor:
    """The choice of the first true condition, elementwise; `default` where none is."""
    if len(condlist) != len(choicelist):
        fail(ShapeError, "select", f"{len(condlist)} conditions and {len(choicelist)} choices")
    if not condlist:
        fail(ShapeError, "select", "needs at least one condition")
    out = default
    for condition, choice in reversed(list(zip(condlist, choicelist))):
        condition = as_tensor(condition, "select")
        if condition.dtype != dtypes.bool_:
            fail(DTypeError, "select", f"conditions must be bool, not {describe(condition)}")
        out = where(condition, choice, out)
    return out


def piecewise(x, condlist, funclist, *args, **kw) -> Tensor:
    """numpy.piecewise: funclist[i](x) where condlist[i] (a later true condition wins); one extra function is
    the value where no condition holds; a constant instead of a function is that value; 0 elsewhere."""
    x = as_tensor(x, "piecewise")
    if isinstance(condlist, (Tensor, np.ndarray)) and getattr(condlist, "ndim", 0) == x.ndim:
        condlist = [condlist]
    conditions = [as_tensor(c, "piecewise") for c in condlist]
    if len(funclist) not in (len(conditions), len(conditions) + 1):
        fail(ShapeError, "piecewise", f"{len(conditions)} conditions take {len(conditions)} or "
                                      f"{len(conditions) + 1} functions, not {len(funclist)}")

    def value(f):
        return _core.convert(as_tensor(f(x, *args, **kw) if callable(f) else f, "piecewise"), x.dtype, x.weak)
    out = _core.broadcast_to(_core.constant(0, x.dtype, x.weak), x.shape, "piecewise")
    if len(funclist) > len(conditions):
        none = ~_any(stack(_core.broadcast_all("piecewise", conditions)), axis=0) if conditions else True
        out = where(none, value(funclist[-1]), out)
    for condition, f in zip(conditions, funclist):
        out = where(condition, value(f), out)
    return out


def bincount(x, weights=None, minlength=0, *, length=None) -> Tensor:
    """Counts (or summed weights) of each non-negative integer in 1-D x, `length` of them (static; JAX's
    `length=`; numpy's max(x) + 1 is data-dependent). Values outside [0, length) are dropped."""
    x = as_tensor(x, "bincount")
    if x.ndim != 1 or x.dtype.kind not in "iu" or x.dtype == dtypes.bool_:
        fail(DTypeError, "bincount", f"takes a 1-D integer array, not {describe(x)}")
    if length is None:
        fail(TracingError, "bincount", "the length of the result depends on the data: pass length=")
    length = max(int(length), int(minlength))
    if weights is None:
        return _sum(one_hot(x, length, dtypes.int32), axis=0)
    (w,), wdtype, _ = _core.promote("bincount", weights)
    if not dtypes.is_float(wdtype):
        w = _core.convert(w, dtypes.float64 if wdtype.itemsize == 8 else dtypes.DEFAULT_FLOAT)
    if w.shape != x.shape:
        fail(ShapeError, "bincount", f"weights {describe(w)} and x {describe(x)} differ in shape")
    # a select, not a product by the one-hot: numpy adds each weight to its own bin alone (an inf weight times
    # the one-hot's zeros would be NaN in every other bin)
    return _sum(where(one_hot(x, length, dtypes.bool_), reshape(w, w.shape + (1,)), 0.0), axis=0)


def histogram(a, bins=10, range=None, weights=None, density=False) -> tuple[Tensor, Tensor]:
    """(counts, edges) of a flattened, numpy.histogram's rule: `bins` equal bins over `range` (default: the data's
    min and max, (0, 1) for no data; static or traced) or explicit increasing edges, the last bin closed on the
    right."""
    x = ravel(as_tensor(a, "histogram"))
    if dtypes.is_complex(x.dtype):
        fail(DTypeError, "histogram", f"does not take complex {describe(x)} (bins need ordered numbers)")
    if not dtypes.is_float(x.dtype):
        x = _core.convert(x, dtypes.DEFAULT_FLOAT)
    if isinstance(bins, (int, np.integer)) and not isinstance(bins, bool):
        count = int(bins)
        if count < 1:
            fail(ValueError, "histogram", f"bins must be positive, not {count}")
        if range is None and x.shape[0] == 0:
            range = (0.0, 1.0)
        if range is None:
            low, high = _min(x), _max(x)
        else:
            low, high = (_core.convert(as_tensor(r, "histogram"), x.dtype) for r in range)
        equal = compare("equal", low, high)
        low, high = where(equal, low - 0.5, low), where(equal, high + 0.5, high)
        steps = linspace(0.0, 1.0, count + 1, dtype=x.dtype)
        edges = low + (high - low) * steps
        edges = concatenate([slice_axis(edges, 0, 0, count), reshape(high, (1,))])
    else:
        edges = _core.convert(ravel(as_tensor(bins, "histogram")), x.dtype)
        count = edges.shape[0] - 1
        if count < 1:
            fail(ShapeError, "histogram", "bin edges need at least two entries")
    index = searchsorted(edges, x, "right") - 1
    last = compare("equal", x, take(edges, count))
    index = where(last, count - 1, index)
    inside = compare("greater_equal", x, take(edges, 0)) & compare("less_equal", x, take(edges, count))
    index = where(inside, index, count)                   # outside: a bin one_hot drops
    hist = bincount(index, weights if weights is None else ravel(as_tensor(weights, "histogram")), length=count)
    if density:
        widths = slice_axis(edges, 0, 1, count + 1) - slice_axis(edges, 0, 0, count)
        hist = _core.convert(hist, x.dtype) if hist.dtype != x.dtype else hist
        hist = hist / (_sum(hist) * widths)
    return hist, edges


__all__ = ["argpartition", "argwhere", "bincount", "compress", "digitize", "extract", "flatnonzero", "histogram",
           "isin", "lexsort", "nonzero", "partition", "piecewise", "searchsorted", "select", "unique",
           "where_indices"]


def numpy_where(condition, x=None, y=None, *, size=None, fill_value=None):
    """numpy's where: with x and y, x where condition else y (broadcast, promoted); with the condition alone,
    its nonzero indices (`size=` as for nonzero)."""
    if x is None and y is None:
        return nonzero(condition, size, fill_value)
    if x is None or y is None:
        fail(TypeError, "where", "takes a condition alone, or a condition, x and y")
    return where(condition, x, y)


# --- outside a trace the data is known: a call without size= gets the size its values give --------------

def sized_eagerly(fn, count):
    """Give `fn` (which takes size=) the eager hook that, outside a trace, where its inputs are concrete, fills
    in a missing size= with count(arguments, their values as numpy) before the call runs, as jax.numpy computes
    a data-dependent shape eagerly. The result is then exactly numpy's (its length the data's); inside a trace
    size= stays required."""
    signature = inspect.signature(fn)

    def prepare(args, kwargs):
        bound = signature.bind(*args, **kwargs)
        if bound.arguments.get("size") is None:
            size = count({name: _concrete(v) for name, v in bound.arguments.items()})
            if size is not None:   # None: this call's result has no data-dependent length
                bound.arguments["size"] = int(size)
        return bound.args, bound.kwargs
    fn.prepare_eager = prepare
    return fn


def _concrete(value):
    """numpy's view of a concrete argument (hj.Array, numpy, Python), other arguments (flags, None) as they are."""
    return np.asarray(value) if hasattr(value, "__array__") or isinstance(value, (list, tuple)) and value and \
        all(hasattr(v, "__array__") or isinstance(v, (int, float, bool, complex)) for v in value) else value


def _nonzeros(name: str):
    return lambda v: np.count_nonzero(v[name])


sized_eagerly(flatnonzero, _nonzeros("a"))
sized_eagerly(nonzero, _nonzeros("a"))
sized_eagerly(argwhere, _nonzeros("a"))
sized_eagerly(where_indices, _nonzeros("condition"))
sized_eagerly(extract, _nonzeros("condition"))
sized_eagerly(compress, lambda v: np.count_nonzero(v["condition"]) if v.get("axis") is None else
              np.count_nonzero(np.asarray(v["condition"])[: np.shape(v["a"])[v["axis"]]]))
sized_eagerly(unique, lambda v: np.unique(np.ravel(v["ar"]), equal_nan=v.get("equal_nan", True)).shape[0])
sized_eagerly(numpy_where, lambda v: np.count_nonzero(v["condition"]) if v.get("x") is None and v.get("y") is None
              else None)
