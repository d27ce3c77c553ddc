"""norm, vector_norm, matrix_norm: numpy.linalg's ord conventions (2 / -2 / 'nuc' from singular values); of
complex input, real norms of |x| (as numpy's)."""
from __future__ import annotations

import math

from ... import ops
from .. import _core
from ..complex_math import abs_squared
from ..statistics import _float_input
from .spectral import svdvals
from ._util import ShapeError


def vector_norm(x, axis=None, keepdims: bool = False, ord=2):
    """numpy.linalg.vector_norm: over `axis` (all axes when None); ord inf, -inf, 0, or any p."""
    x = _float_input("vector_norm", x, complex_ok=True)
    axes = _core.normalize_axes("vector_norm", axis, x.ndim)
    a = ops.abs(x)
    if ord == math.inf:
        return ops.max(a, axis=axes, keepdims=keepdims)
    if ord == -math.inf:
        return ops.min(a, axis=axes, keepdims=keepdims)
    if ord == 0:
        return ops.sum((x != 0).astype(a.dtype), axis=axes, keepdims=keepdims)
    if ord == 1:
        return ops.sum(a, axis=axes, keepdims=keepdims)
    if ord == 2:
        return ops.sqrt(ops.sum(abs_squared(x), axis=axes, keepdims=keepdims))
    if not isinstance(ord, (int, float)) or isinstance(ord, bool):
        _core.fail(ValueError, "vector_norm", f"invalid ord {ord!r} for a vector norm")
    return ops.sum(a ** float(ord), axis=axes, keepdims=keepdims) ** (1.0 / ord)


def _restore(result, axes, ndim, keepdims):
    if not keepdims:
        return result
    for axis in sorted(axes):
        result = ops.expand_dims(result, axis)
    return result


def matrix_norm(x, keepdims: bool = False, ord="fro", axis=(-2, -1)):
    """numpy.linalg.matrix_norm of the matrices in the two `axis` dimensions: 'fro', 'nuc', 1, -1, 2, -2,
    inf, -inf."""
    x = _float_input("matrix_norm", x, complex_ok=True)
    if x.ndim < 2:
        _core.fail(ShapeError, "matrix_norm", f"needs at least 2 dimensions, not {_core.describe(x)}")
    row, col = (_core.normalize_axis("matrix_norm", a, x.ndim) for a in axis)
    if row == col:
        _core.fail(ValueError, "matrix_norm", f"axis {axis} names one dimension twice")
    if ord in ("fro", None):
        return ops.sqrt(ops.sum(abs_squared(x), axis=(row, col), keepdims=keepdims))
    if ord in (1, -1, math.inf, -math.inf):
        summed, other = (row, col) if ord in (1, -1) else (col, row)
        sums = ops.sum(ops.abs(x), axis=summed, keepdims=True)
        reduce = ops.max if ord > 0 else ops.min
        return _restore(ops.squeeze(reduce(sums, axis=other, keepdims=True), (row, col)), (row, col), x.ndim, keepdims)
    if ord in (2, -2, "nuc"):
        s = svdvals(ops.moveaxis(x, (row, col), (-2, -1)))
        value = ops.sum(s, axis=-1) if ord == "nuc" else s[..., 0] if ord == 2 else s[..., -1]
        return _restore(value, (row, col), x.ndim, keepdims)
    _core.fail(ValueError, "matrix_norm", f"invalid ord {ord!r} for a matrix norm")


def norm(x, ord=None, axis=None, keepdims: bool = False):
    """numpy.linalg.norm: a vector norm for 1-d x or an int axis, a matrix norm for 2-d x or a pair of
    axes; with ord=None and axis=None, the 2-norm of x flattened."""
    x = _float_input("norm", x, complex_ok=True)
    if axis is None:
        if ord is None:
            return _restore(ops.sqrt(ops.sum(abs_squared(x))), range(x.ndim), x.ndim, keepdims)
        if x.ndim == 1:
            return vector_norm(x, 0, keepdims, ord)
        if x.ndim == 2:
            return matrix_norm(x, keepdims, ord, (0, 1))
        _core.fail(ValueError, "norm", f"ord {ord!r} needs a 1-d or 2-d array or an axis, not {_core.describe(x)}")
    if isinstance(axis, (tuple, list)) and len(axis) == 2:
        return matrix_norm(x, keepdims, "fro" if ord is None else ord, tuple(axis))
    if isinstance(axis, (tuple, list)) and len(axis) == 1:
        axis = axis[0]
    if isinstance(axis, (tuple, list)):
        _core.fail(ValueError, "norm", f"axis must be an int or a pair of ints, not {axis!r}")
    if isinstance(ord, str):
        _core.fail(ValueError, "norm", f"ord {ord!r} is a matrix norm; a vector norm takes a number")
    return vector_norm(x, axis, keepdims, 2 if ord is None else ord)
