"""numpy's questions about dtypes and shapes, answered by hlojit's rules: promote_types and result_type by
hlojit's promotion lattice (JAX's: int32 + float32 -> float32, a Python scalar weak), the others as numpy
answers them (can_cast, issubdtype, isdtype, broadcast_shapes) or from the static shape (ndim, size, isscalar).
They build no graph: each returns a numpy dtype, a bool, an int or a tuple, traced or not.
"""
from __future__ import annotations

import numbers

import numpy as np

from .. import dtypes
from ..tensor import Tensor


def _pair(value) -> tuple[np.dtype, bool]:
    """(dtype, weak) of an array, a Tensor, a dtype-like or a Python scalar, for the promotion lattice."""
    if isinstance(value, Tensor):
        return value.dtype, value.weak
    if isinstance(value, (bool, int, float, complex)) and not isinstance(value, np.generic):
        return dtypes.python_scalar_dtype(value)
    if hasattr(value, "dtype"):
        return dtypes.canonical(value.dtype), False
    return dtypes.canonical(value), False


def promote_types(type1, type2) -> np.dtype:
    """The dtype two dtypes promote to (hlojit's lattice, as jax.numpy.promote_types: int32 and float32 give
    float32, not numpy's float64)."""
    return dtypes.result_type((dtypes.canonical(type1), False), (dtypes.canonical(type2), False))[0]


def result_type(*arrays_and_dtypes) -> np.dtype:
    """The dtype an op on these operands gives: Python scalars weak (as in jax.numpy)."""
    if not arrays_and_dtypes:
        raise ValueError("result_type: at least one array or dtype is required")
    return dtypes.result_type(*(_pair(v) for v in arrays_and_dtypes))[0]


def can_cast(from_, to, casting="safe") -> bool:
    """numpy.can_cast between dtypes (or an array's dtype)."""
    source = from_.dtype if isinstance(from_, Tensor) or hasattr(from_, "dtype") else from_
    return bool(np.can_cast(dtypes.canonical(source), dtypes.canonical(to), casting))


def issubdtype(arg1, arg2) -> bool:
    return bool(np.issubdtype(arg1, arg2))


def isdtype(dtype, kind) -> bool:
    """The array API's isdtype: kind a dtype, one of 'bool', 'signed integer', 'unsigned integer', 'integral',
    'real floating', 'complex floating', 'numeric', or a tuple of them."""
    if isinstance(kind, tuple):
        return any(isdtype(dtype, k) for k in kind)
    d = dtypes.canonical(dtype)
    if not isinstance(kind, str):
        return d == dtypes.canonical(kind)
    tests = {"bool": d == dtypes.bool_, "signed integer": d.kind == "i", "unsigned integer": d.kind == "u",
             "integral": d.kind in "iu", "real floating": dtypes.is_float(d),
             "complex floating": dtypes.is_complex(d), "numeric": d != dtypes.bool_}
    if kind not in tests:
        raise ValueError(f"isdtype: unknown kind {kind!r}; one of {', '.join(map(repr, tests))}")
    return bool(tests[kind])


def isscalar(element) -> bool:
    """jax.numpy's isscalar: Python and numpy scalars, and arrays of no dimensions (a traced one too)."""
    if isinstance(element, Tensor):
        return element.ndim == 0
    if isinstance(element, (numbers.Number, np.generic)):
        return True
    return hasattr(element, "shape") and hasattr(element, "dtype") and len(element.shape) == 0


def shape(a) -> tuple[int, ...]:
    """numpy.shape: the static shape. `ops.shape` is this function, as `ops.matmul` is matmul's (the submodule
    of that name is what `from .shape import ...` reads)."""
    return tuple(a.shape) if isinstance(a, Tensor) else tuple(np.shape(a))


def ndim(a) -> int:
    return len(np.shape(a)) if not isinstance(a, Tensor) else a.ndim


def size(a, axis=None) -> int:
    shape = a.shape if isinstance(a, Tensor) else np.shape(a)
    return int(np.prod(shape, dtype=np.int64)) if axis is None else int(shape[axis])


def broadcast_shapes(*shapes) -> tuple[int, ...]:
    return tuple(np.broadcast_shapes(*shapes))
