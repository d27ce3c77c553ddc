"""Shape ops and array creation: reshape, transpose, moveaxis/swapaxes, broadcasting, expand/squeeze, flip,
diagonal, tril/triu, zeros/ones/arange/linspace/eye. Joining, splitting and padding live in joining.py."""
from __future__ import annotations

import math

import numpy as np

from ...dialects import stablehlo as hlo
from ...errors import ShapeError, TracingError
from .. import dtypes
from ..tensor import Tensor
from . import _core
from ._core import as_tensor, constant, emit, fail, normalize_axes, normalize_axis, wrap


def reshape(x, shape, order="C") -> Tensor:
    """numpy reshape; one dimension may be -1; order "F" reads and writes the elements column-major (the
    reversed axes reshaped, reversed back), as numpy's and JAX's."""
    x = as_tensor(x, "reshape")
    if order not in ("C", "F"):
        fail(ValueError, "reshape", f"order must be 'C' or 'F', not {order!r}")
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(int(d) for d in shape)
    if shape.count(-1) > 1 or any(d < -1 for d in shape):
        fail(ShapeError, "reshape", f"invalid target shape {shape}")
    if -1 in shape:
        known = math.prod(d for d in shape if d != -1)
        if known == 0 or x.size % known:
            fail(ShapeError, "reshape", f"cannot reshape {_core.describe(x)} into {shape}")
        shape = tuple(x.size // known if d == -1 else d for d in shape)
    if math.prod(shape) != x.size:
        fail(ShapeError, "reshape", f"cannot reshape {_core.describe(x)} ({x.size} elements) into {shape}")
    if order == "F" and x.ndim + len(shape) > 2:
        return transpose(reshape(transpose(x), shape[::-1]))
    if shape == x.shape:
        return x
    return wrap(emit(hlo.reshape, x.value, shape), shape, x.dtype, x.weak)


def transpose(x, axes=None) -> Tensor:
    """Permute dimensions; no axes reverses them (numpy's `.T`)."""
    x = as_tensor(x, "transpose")
    if axes is None:
        axes = tuple(reversed(range(x.ndim)))
    axes = tuple(normalize_axis("transpose", a, x.ndim) for a in axes) if x.ndim else tuple(axes)
    if sorted(axes) != list(range(x.ndim)):
        fail(ShapeError, "transpose", f"axes {axes} are not a permutation of the {x.ndim} axes of "
                                      f"{_core.describe(x)}")
    if axes == tuple(range(x.ndim)):
        return x
    shape = tuple(x.shape[a] for a in axes)
    return wrap(emit(hlo.transpose, x.value, axes), shape, x.dtype, x.weak)


def broadcast_to(x, shape) -> Tensor:
    return _core.broadcast_to(as_tensor(x, "broadcast_to"), tuple(shape))


def expand_dims(x, axis) -> Tensor:
    x = as_tensor(x, "expand_dims")
    axes = normalize_axes("expand_dims", axis, x.ndim + len(axis if isinstance(axis, (tuple, list)) else (axis,)))
    shape = list(x.shape)
    for a in axes:
        shape.insert(a, 1)
    return reshape(x, shape)


def squeeze(x, axis=None) -> Tensor:
    x = as_tensor(x, "squeeze")
    if axis is None:
        axes = tuple(i for i, d in enumerate(x.shape) if d == 1)
    else:
        axes = normalize_axes("squeeze", axis, x.ndim)
        for a in axes:
            if x.shape[a] != 1:
                fail(ShapeError, "squeeze", f"cannot squeeze axis {a} of size {x.shape[a]} in {_core.describe(x)}")
    return reshape(x, [d for i, d in enumerate(x.shape) if i not in axes])



# --- axes, slices, flips, diagonals ---------------------------------------------------------------

def static_int(op: str, name: str, value) -> int:
    """A Python int argument that fixes a shape or a position: it must be known while tracing."""
    if isinstance(value, Tensor):
        fail(TracingError, op, f"{name} must be a static int, not a traced {_core.describe(value)}; mark the "
                               "argument static with hj.jit(..., static_argnums=...)")
    if not isinstance(value, (int, np.integer)) or isinstance(value, (bool, np.bool_)):
        fail(TypeError, op, f"{name} must be an int, not {type(value).__name__}")
    return int(value)


def axis_of(op: str, axis, x: Tensor) -> int:
    """An existing axis of x, negative counting from the end (a 0-d array has none)."""
    if x.ndim == 0:
        fail(ShapeError, op, f"axis {axis} is out of range for the 0-d array {_core.describe(x)}")
    return normalize_axis(op, axis, x.ndim)


def _distinct_axes(op: str, axes, x: Tensor) -> list[int]:
    listed = list(axes) if isinstance(axes, (tuple, list)) else [axes]
    result = [axis_of(op, a, x) for a in listed]
    if len(set(result)) != len(result):
        fail(ShapeError, op, f"repeated axis in {axes} for {_core.describe(x)}")
    return result


def slice_axis(x: Tensor, axis: int, start: int, limit: int, stride: int = 1) -> Tensor:
    """x[..., start:limit:stride, ...] along `axis` (stride > 0): one stablehlo.slice. Bounds past the axis are
    clipped as a Python slice's are (x[1:] of an empty axis is empty: the op's verifier refuses start > limit)."""
    start = min(max(start, 0), x.shape[axis])
    limit = min(max(limit, start), x.shape[axis])
    if (start, limit, stride) == (0, x.shape[axis], 1):
        return x
    starts, limits, strides = [0] * x.ndim, list(x.shape), [1] * x.ndim
    starts[axis], limits[axis], strides[axis] = start, limit, stride
    shape = list(x.shape)
    shape[axis] = max(0, -(-(limit - start) // stride))
    return wrap(emit(hlo.slice, x.value, starts, limits, strides), shape, x.dtype, x.weak)


def moveaxis(x, source, destination) -> Tensor:
    """numpy moveaxis: the `source` axes go to positions `destination`; the others keep their order."""
    x = as_tensor(x, "moveaxis")
    src, dst = _distinct_axes("moveaxis", source, x), _distinct_axes("moveaxis", destination, x)
    if len(src) != len(dst):
        fail(ShapeError, "moveaxis", f"source {source} and destination {destination} name different numbers of "
                                     f"axes of {_core.describe(x)}")
    order = [a for a in range(x.ndim) if a not in src]
    for d, a in sorted(zip(dst, src)):
        order.insert(d, a)
    return transpose(x, order)


def swapaxes(x, axis1, axis2) -> Tensor:
    x = as_tensor(x, "swapaxes")
    a, b = axis_of("swapaxes", axis1, x), axis_of("swapaxes", axis2, x)
    order = list(range(x.ndim))
    order[a], order[b] = b, a
    return transpose(x, order)


def ravel(x, order="C") -> Tensor:
    """The elements in row-major order (column-major with order "F") as a 1-d array (numpy's ravel and
    flatten: traced values never alias)."""
    x = as_tensor(x, "ravel")
    return reshape(x, (x.size,), order)


def flip(x, axis=None) -> Tensor:
    """Reverse the order of elements along `axis` (all axes when None): stablehlo.reverse."""
    x = as_tensor(x, "flip")
    axes = normalize_axes("flip", axis, x.ndim) if axis is None else _distinct_axes("flip", axis, x)
    axes = sorted(a for a in axes if x.shape[a] > 1)  # a size-0 or size-1 axis reads the same both ways
    if not axes:
        return x
    return wrap(emit(hlo.reverse, x.value, axes), x.shape, x.dtype, x.weak)


def flipud(x) -> Tensor:
    return flip(x, 0)


def fliplr(x) -> Tensor:
    x = as_tensor(x, "fliplr")
    if x.ndim < 2:
        fail(ShapeError, "fliplr", f"needs an array of at least 2 dimensions, not {_core.describe(x)}")
    return flip(x, 1)


def diagonal(x, offset=0, axis1=0, axis2=1) -> Tensor:
    """numpy diagonal, which becomes the last axis. With rows and columns last and flattened, the
    diagonal is one strided slice: every (columns + 1)-th element from its first one."""
    x = as_tensor(x, "diagonal")
    k = static_int("diagonal", "offset", offset)
    if x.ndim < 2:
        fail(ShapeError, "diagonal", f"needs an array of at least 2 dimensions, not {_core.describe(x)}")
    a1, a2 = axis_of("diagonal", axis1, x), axis_of("diagonal", axis2, x)
    if a1 == a2:
        fail(ShapeError, "diagonal", f"axis1 and axis2 are the same axis {a1} of {_core.describe(x)}")
    x = transpose(x, [a for a in range(x.ndim) if a not in (a1, a2)] + [a1, a2])
    *batch, n, m = x.shape
    length = max(0, min(n, m - k) if k >= 0 else min(n + k, m))
    start = 0 if length == 0 else k if k >= 0 else -k * m
    flat = reshape(x, (*batch, n * m))
    return slice_axis(flat, flat.ndim - 1, start, start + (length - 1) * (m + 1) + 1 if length else start, m + 1)


def _tri_mask(n: int, m: int, k: int, keep) -> Tensor:
    """Bool (n, m), true where keep(column - row, k): the k-th diagonal and what lies above or below it."""
    k = min(max(k, -n), m)  # column - row lies in [1 - n, m - 1]: a wider k changes nothing
    rows, cols = iota(dtypes.int32, (n, m), 0), iota(dtypes.int32, (n, m), 1)
    return keep(cols - rows, k)


def _triangle(op: str, x, k, keep) -> Tensor:
    x = as_tensor(x, op)
    k = static_int(op, "k", k)
    if x.ndim == 0:
        fail(ShapeError, op, f"needs an array of at least 1 dimension, not {_core.describe(x)}")
    shape = x.shape if x.ndim >= 2 else (x.shape[0], x.shape[0])  # numpy: a 1-d row, repeated
    mask = _core.broadcast_to(_tri_mask(shape[-2], shape[-1], k, keep), shape, op)
    zero = _core.broadcast_to(constant(0, x.dtype, x.weak), shape, op)
    x = _core.broadcast_to(x, shape, op)
    return wrap(emit(hlo.select, mask.value, x.value, zero.value), shape, x.dtype, x.weak)


def tril(x, k=0) -> Tensor:
    """Zero the elements above the k-th diagonal (of the last two axes)."""
    return _triangle("tril", x, k, lambda d, k: d <= k)


def triu(x, k=0) -> Tensor:
    """Zero the elements below the k-th diagonal (of the last two axes)."""
    return _triangle("triu", x, k, lambda d, k: d >= k)


# --- creation ------------------------------------------------------------------------------------

def _shape(shape) -> tuple:
    return (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(d) for d in shape)


def full(shape, fill_value, dtype=None) -> Tensor:
    if dtype is None:
        dtype = _core.result_dtype("full", [fill_value])[0]
    value = constant(fill_value, dtype) if not isinstance(fill_value, Tensor) else _core.convert(fill_value, dtype)
    return _core.broadcast_to(value, _shape(shape), "full")


def zeros(shape, dtype=dtypes.float32) -> Tensor:
    return full(shape, 0, dtype)


def ones(shape, dtype=dtypes.float32) -> Tensor:
    return full(shape, 1, dtype)


def full_like(x, fill_value, dtype=None) -> Tensor:
    x = as_tensor(x, "full_like")
    return full(x.shape, fill_value, dtype or x.dtype)


def zeros_like(x, dtype=None) -> Tensor:
    return full_like(x, 0, dtype)


def ones_like(x, dtype=None) -> Tensor:
    return full_like(x, 1, dtype)


def iota(dtype, shape, dimension: int = 0) -> Tensor:
    """0, 1, 2 ... along `dimension` (lax.iota, broadcast_iota)."""
    shape = _shape(shape)
    dimension = normalize_axis("iota", dimension, len(shape))
    dtype = dtypes.canonical(dtype)
    _core._current_trace("iota")
    return wrap(emit(hlo.iota, shape, dimension, dtype), shape, dtype)


def arange(start, stop=None, step=1, dtype=None) -> Tensor:
    """numpy arange with static bounds: an iota, scaled and shifted."""
    if stop is None:
        start, stop = 0, start
    if dtype is None:
        dtype = dtypes.DEFAULT_FLOAT if any(isinstance(v, float) for v in (start, stop, step)) else dtypes.DEFAULT_INT
    if step == 0:
        fail(ValueError, "arange", "step must not be zero")
    n = max(0, math.ceil((stop - start) / step))
    x = iota(dtype, (n,))
    if step != 1:
        x = x * step
    if start != 0:
        x = x + start
    return _core.convert(x, dtype)


def _count(op: str, name: str, value) -> int:
    value = static_int(op, name, value)
    if value < 0:
        fail(ShapeError, op, f"{name} must not be negative, not {value}")
    return value


def linspace(start, stop, num=50, endpoint=True, dtype=None, axis=0) -> Tensor:
    """numpy linspace; start and stop may be arrays (the samples run along `axis`). The default dtype is
    start/stop's float type (f32 for Python numbers).

    Static start/stop: numpy's own samples, as a constant (numpy computes them in f64, which vmvx cannot
    convert to f32 or ints). Traced start/stop: start + i * step in their float type (f64 if either is
    f64, else f32, as numpy computes for f32 arrays), `stop` itself last with endpoint, integer dtypes
    floored first as numpy does."""
    num = _count("linspace", "num", num)
    if dtype is None:
        dtype = _core.result_dtype("linspace", [start, stop])[0]
        dtype = dtype if dtypes.is_float(dtype) else dtypes.DEFAULT_FLOAT
    dtype = dtypes.canonical(dtype)
    if not isinstance(start, Tensor) and not isinstance(stop, Tensor):
        _core._current_trace("linspace")
        try:
            samples = np.linspace(np.asarray(start), np.asarray(stop), num, endpoint, dtype=dtype, axis=axis)
        except ValueError as e:  # numpy's AxisError is one too
            fail(ShapeError, "linspace", f"{e} (start {start!r}, stop {stop!r})")
        return constant(samples, dtype)
    bounds = [v.dtype for v in (start, stop) if isinstance(v, (Tensor, np.ndarray, np.generic))]
    wide = dtypes.float64 if dtypes.float64 in (dtype, *bounds) else dtypes.float32  # (dtype == None is f64)
    (lo, hi), _, _ = _core.promote("linspace", start, stop, dtype=wide)
    lo, hi = _core.broadcast_all("linspace", [lo, hi])
    div = num - 1 if endpoint else num
    step = (hi - lo) / div if div > 0 else hi - lo
    shape = (num, *lo.shape)
    y = iota(wide, shape, 0) * _core.broadcast_to(step, shape) + _core.broadcast_to(lo, shape)
    if endpoint and num > 1:
        from .elementwise import where
        y = where(iota(dtypes.int32, shape, 0) == num - 1, _core.broadcast_to(hi, shape), y)
    if dtypes.is_int(dtype):
        from .elementwise import unary
        y = unary("floor", y)
    axis = normalize_axis("linspace", axis, y.ndim)
    return moveaxis(_core.convert(y, dtype), 0, axis) if axis else _core.convert(y, dtype)


def _ones_where(mask: Tensor, dtype) -> Tensor:
    """1 where mask, else 0, in `dtype`: a select of two constants (vmvx cannot convert i1 to f64)."""
    dtype = dtypes.canonical(dtype)
    if dtype == dtypes.bool_:
        return mask
    one, zero = (_core.broadcast_to(constant(v, dtype), mask.shape) for v in (1, 0))
    return wrap(emit(hlo.select, mask.value, one.value, zero.value), mask.shape, dtype)


def eye(N, M=None, k=0, dtype=dtypes.float32) -> Tensor:
    """Ones on the k-th diagonal of an N x M array, zeros elsewhere."""
    n = _count("eye", "N", N)
    m = n if M is None else _count("eye", "M", M)
    return _ones_where(_tri_mask(n, m, static_int("eye", "k", k), lambda d, k: d == k), dtype)


def tri(N, M=None, k=0, dtype=dtypes.float32) -> Tensor:
    """Ones on and below the k-th diagonal of an N x M array, zeros above."""
    n = _count("tri", "N", N)
    m = n if M is None else _count("tri", "M", M)
    return _ones_where(_tri_mask(n, m, static_int("tri", "k", k), lambda d, k: d <= k), dtype)
