"""numpy's array constructors that take data: asarray, array, copy, empty / empty_like, fromfunction.

Inside a trace they give Tensors (a numpy array or a Python scalar becomes a constant, a nested list of
Tensors is stacked as jnp.array stacks it); outside one they run eagerly like every op and give hj.Arrays.
`empty` is zeros, as in JAX: a graph has no uninitialised memory to hand out.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes
from ..tensor import Tensor
from . import _core
from ._core import as_tensor, fail
from .joining import stack
from .shape import reshape, zeros, zeros_like


def _nested(value, op: str) -> Tensor:
    """A Tensor from a value that may be a (nested) list or tuple holding Tensors: stacked level by level."""
    if isinstance(value, (list, tuple)) and any(isinstance(v, (Tensor, list, tuple)) for v in value):
        parts = [_nested(v, op) for v in value]
        (parts), _, _ = _core.promote(op, *parts)
        return stack(parts)
    return as_tensor(value, op)


def asarray(a, dtype=None, order=None, *, copy=None) -> Tensor:
    """numpy.asarray: `a` as an array (of `dtype` if given). order= is accepted as numpy's and means nothing
    here (arrays have one layout); copy= too (a traced value is never shared with the caller)."""
    if order not in (None, "C", "F", "A", "K"):
        fail(ValueError, "asarray", f"order must be one of 'C', 'F', 'A', 'K', not {order!r}")
    t = _nested(a, "asarray")
    return t if dtype is None else t.astype(dtypes.canonical(dtype))


def array(obj, dtype=None, copy: bool = True, order="K", ndmin: int = 0) -> Tensor:
    """numpy.array: asarray, with at least `ndmin` dimensions (ones prepended)."""
    t = asarray(obj, dtype, order)
    if t.ndim < ndmin:
        t = reshape(t, (1,) * (ndmin - t.ndim) + t.shape)
    return t


def copy(a, order="K") -> Tensor:
    """numpy.copy: the values of `a` (a new hj.Array outside a trace)."""
    return asarray(a, order=order)


def empty(shape, dtype=dtypes.float32) -> Tensor:
    """numpy.empty: zeros here (see the module docstring)."""
    return zeros(shape, dtype)


def empty_like(prototype, dtype=None, shape=None) -> Tensor:
    """numpy.empty_like: zeros of prototype's shape and dtype (or the given ones)."""
    if shape is not None:
        proto = as_tensor(prototype, "empty_like")
        return zeros(shape, dtype or proto.dtype)
    return zeros_like(prototype, dtype)


def fromfunction(function, shape, *, dtype=dtypes.float32, **kwargs):
    """numpy.fromfunction: function(*coordinate arrays of `shape`, **kwargs), the coordinates of `dtype`."""
    shape = tuple(int(s) for s in shape)
    grids = np.indices(shape)
    return function(*(_core.constant(g, dtypes.canonical(dtype)) for g in grids), **kwargs)
