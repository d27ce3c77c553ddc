"""Shape ops and array creation: reshape, transpose, broadcasting, expand/squeeze, zeros/ones/arange."""
from __future__ import annotations

import math

import numpy as np

from ...dialects import stablehlo as hlo
from ...errors import ShapeError
from .. import dtypes
from ..tensor import Tensor
from . import _core
from ._core import as_tensor, constant, emit, fail, normalize_axes, normalize_axis, wrap


def reshape(x, shape) -> Tensor:
    """numpy reshape; one dimension may be -1."""
    x = as_tensor(x, "reshape")
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
