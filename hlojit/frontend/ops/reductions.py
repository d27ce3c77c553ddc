"""Reductions over axes: sum, prod, max, min, mean, any, all (axis: int, tuple or None; keepdims).

A row: name -> (binary op of the reduce body, the init value for a dtype). Small integers and bools
sum in 32 bits, as in JAX. 16-bit floats (float16, bfloat16) are summed and multiplied in float32 and
rounded once at the end, as JAX does: a float16 accumulator stops counting at 2048 (sum(ones(4096)) would
be 2048 on IREE, bfloat16's at 256), and IREE's and numpy's reduction orders differ.
"""
from __future__ import annotations

import builtins
import math

import numpy as np

from ...dialects import stablehlo as hlo
from ...errors import DTypeError, ShapeError
from .. import dtypes
from ..tensor import Tensor
from ._core import as_tensor, constant, convert, emit, fail, normalize_axes, wrap


def lowest(dtype):
    if dtype == dtypes.bool_:
        return False
    return -np.inf if dtypes.is_float(dtype) else np.iinfo(dtype).min


def highest(dtype):
    if dtype == dtypes.bool_:
        return True
    return np.inf if dtypes.is_float(dtype) else np.iinfo(dtype).max


REDUCTIONS = {  # name -> (body op, body op for bool, init(dtype), numpy reference)
    "sum": ("add", "or", lambda d: 0, np.sum),
    "prod": ("multiply", "and", lambda d: 1, np.prod),
    "max": ("maximum", "or", lowest, np.max),
    "min": ("minimum", "and", highest, np.min),
    "any": ("or", "or", lambda d: False, np.any),
    "all": ("and", "and", lambda d: True, np.all),
}


HALF_FLOATS = (dtypes.float16, dtypes.bfloat16)


def computation_dtype(dtype):
    """The dtype sums, products and moments of `dtype` are computed in: float32 for 16-bit floats."""
    return dtypes.float32 if dtype in HALF_FLOATS else dtype


def widened(x: Tensor) -> Tensor:
    """x in its computation dtype (16-bit floats as float32); the caller rounds the result back."""
    return convert(x, computation_dtype(x.dtype), x.weak)


def _accumulator_dtype(name: str, dtype):
    if name in ("sum", "prod"):
        if dtype == dtypes.bool_ or dtype in (dtypes.int8, dtypes.int16):
            return dtypes.int32
        if dtype in (dtypes.uint8, dtypes.uint16):
            return dtypes.uint32
    if name in ("any", "all"):
        return dtypes.bool_
    return dtype


def reduce(name: str, x, axis=None, keepdims: bool = False) -> Tensor:
    x = as_tensor(x, name)
    axes = normalize_axes(name, axis, x.ndim)
    original = x.shape
    if name in ("max", "min") and builtins.any(x.shape[a] == 0 for a in axes):
        fail(ShapeError, name, f"zero-size reduction over axes {axes} of {x.dtype}{list(x.shape)}, "
                               "which has no identity")
    if name in ("max", "min") and dtypes.is_complex(x.dtype):
        fail(DTypeError, name, f"complex numbers have no order ({x.dtype}{list(x.shape)})")
    out = _accumulator_dtype(name, x.dtype)
    if name in ("any", "all") and x.dtype != dtypes.bool_:
        x = x != 0
    dtype = computation_dtype(out) if name in ("sum", "prod") and axes else out
    x = convert(x, dtype, x.weak)
    op, bool_op, init, _ = REDUCTIONS[name]
    shape = tuple(d for i, d in enumerate(x.shape) if i not in axes)
    if axes:
        init_value = constant(init(dtype), dtype)
        body = bool_op if dtype == dtypes.bool_ else op
        (value,) = emit(hlo.reduce, [x.value], [init_value.value], axes, body)
        x = wrap(value, shape, dtype, x.weak)
    x = convert(x, out, x.weak)
    if keepdims:
        from .shape import reshape
        x = reshape(x, tuple(1 if i in axes else d for i, d in enumerate(original)))
    return x


def sum(x, axis=None, keepdims=False):
    return reduce("sum", x, axis, keepdims)


def prod(x, axis=None, keepdims=False):
    return reduce("prod", x, axis, keepdims)


def max(x, axis=None, keepdims=False):
    return reduce("max", x, axis, keepdims)


def min(x, axis=None, keepdims=False):
    return reduce("min", x, axis, keepdims)


def any(x, axis=None, keepdims=False):
    return reduce("any", x, axis, keepdims)


def all(x, axis=None, keepdims=False):
    return reduce("all", x, axis, keepdims)


def mean(x, axis=None, keepdims=False):
    """Arithmetic mean; integers average in the default float (f32); 16-bit floats sum and divide in f32
    and round once (JAX's mean); complex numbers stay complex."""
    x = as_tensor(x, "mean")
    axes = normalize_axes("mean", axis, x.ndim)
    if not dtypes.is_inexact(x.dtype):
        x = convert(x, dtypes.DEFAULT_FLOAT, x.weak)
    count = math.prod(x.shape[a] for a in axes)
    total = reduce("sum", widened(x), axes, keepdims) / (count if count else float("nan"))
    return convert(total, x.dtype, x.weak)
