"""Reductions over axes: sum, prod, max, min, mean, any, all (axis: int, tuple or None; keepdims; numpy's
`where=` mask, `initial=` and `dtype=`).

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
from .elementwise import binary, where as select
from .shape import broadcast_to, reshape


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


def reduce(name: str, x, axis=None, keepdims: bool = False, *, dtype=None, initial=None, where=None) -> Tensor:
    """numpy's reduction `name`: `dtype` converts x first (and is the result's: sum(int8, dtype=int8) wraps as
    numpy's), elements where `where` is False count as the identity, and `initial` joins the reduction (which
    max and min need, as numpy's, for an empty axis or a mask)."""
    x = as_tensor(x, name)
    if dtype is not None:
        x = convert(x, dtypes.canonical(dtype), False)
    axes = normalize_axes(name, axis, x.ndim)
    original = x.shape
    if name in ("max", "min") and initial is None:
        if where is not None:
            fail(ValueError, name, "has no identity: a where= mask needs initial= (numpy's rule)")
        if builtins.any(x.shape[a] == 0 for a in axes):
            fail(ShapeError, name, f"zero-size reduction over axes {axes} of {x.dtype}{list(x.shape)}, "
                                   "which has no identity (pass initial=)")
    if name in ("max", "min") and dtypes.is_complex(x.dtype):
        fail(DTypeError, name, f"complex numbers have no order ({x.dtype}{list(x.shape)})")
    out = x.dtype if dtype is not None and name not in ("any", "all") else _accumulator_dtype(name, x.dtype)
    if name in ("any", "all") and x.dtype != dtypes.bool_:
        x = x != 0
    accumulator = computation_dtype(_accumulator_dtype(name, out)) if name in ("sum", "prod") and axes else out
    x = convert(x, accumulator, x.weak)
    op, bool_op, init, _ = REDUCTIONS[name]
    body = bool_op if accumulator == dtypes.bool_ else op
    if where is not None:
        x = select(where, x, constant(init(accumulator), accumulator))
    shape = tuple(d for i, d in enumerate(x.shape) if i not in axes)
    if axes:
        init_value = constant(init(accumulator), accumulator)
        (value,) = emit(hlo.reduce, [x.value], [init_value.value], axes, body)
        x = wrap(value, shape, accumulator, x.weak)
    if initial is not None:
        x = binary({"or": "logical_or", "and": "logical_and"}.get(body, body), x, constant(initial, accumulator))
    x = convert(x, out, x.weak)
    if keepdims:
        x = reshape(x, tuple(1 if i in axes else d for i, d in enumerate(original)))
    return x


def sum(x, axis=None, keepdims=False, *, dtype=None, initial=None, where=None):
    return reduce("sum", x, axis, keepdims, dtype=dtype, initial=initial, where=where)


def prod(x, axis=None, keepdims=False, *, dtype=None, initial=None, where=None):
    return reduce("prod", x, axis, keepdims, dtype=dtype, initial=initial, where=where)


def max(x, axis=None, keepdims=False, *, initial=None, where=None):
    return reduce("max", x, axis, keepdims, initial=initial, where=where)


def min(x, axis=None, keepdims=False, *, initial=None, where=None):
    return reduce("min", x, axis, keepdims, initial=initial, where=where)


def any(x, axis=None, keepdims=False, *, where=None):
    return reduce("any", x, axis, keepdims, where=where)


def all(x, axis=None, keepdims=False, *, where=None):
    return reduce("all", x, axis, keepdims, where=where)


def mean(x, axis=None, keepdims=False, *, dtype=None, where=None):
    """Arithmetic mean; integers average in the default float (f32) or `dtype`; 16-bit floats sum and divide in
    f32 and round once (JAX's mean); complex numbers stay complex; with a `where` mask, of the elements it keeps
    (NaN where it keeps none, as numpy's)."""
    x = as_tensor(x, "mean")
    if dtype is not None:
        x = convert(x, dtypes.canonical(dtype), False)
    axes = normalize_axes("mean", axis, x.ndim)
    if not dtypes.is_inexact(x.dtype):
        x = convert(x, dtypes.DEFAULT_FLOAT, x.weak)
    if where is not None:
        count = reduce("sum", convert(broadcast_to(as_tensor(where, "mean"), x.shape), computation_dtype(x.dtype)),
                       axes, keepdims)
        return convert(reduce("sum", widened(x), axes, keepdims, where=where) / count, x.dtype, x.weak)
    count = math.prod(x.shape[a] for a in axes)
    total = reduce("sum", widened(x), axes, keepdims) / (count if count else float("nan"))
    return convert(total, x.dtype, x.weak)
