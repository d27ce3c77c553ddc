"""numpy's gradient (second-order central differences inside, one- or two-sided second order at the edges,
uniform or coordinate spacings) and unwrap (phase unwrapping by the period), with numpy's formulas.

Integer inputs give the default float, as numpy's (float64 there, float32 here as in jax.numpy).
"""
from __future__ import annotations

import math
import numbers

from ...errors import ShapeError
from .. import dtypes
from ..tensor import Tensor
from . import _core
from ._core import as_tensor, describe, fail
from .elementwise import binary, compare, unary, where
from .joining import concatenate
from .numeric import _floats
from .shape import reshape, slice_axis
from .statistics import cumsum


def _along(t: Tensor, axis: int, ndim: int) -> Tensor:
    """A 1-D `t` shaped to broadcast along `axis` of an ndim-dimensional array."""
    return reshape(t, tuple(t.shape[0] if d == axis else 1 for d in range(ndim)))


def _axis_gradient(f: Tensor, axis: int, spacing, edge_order: int) -> Tensor:
    n = f.shape[axis]
    if n < edge_order + 1:
        fail(ShapeError, "gradient", f"axis {axis} has {n} points; edge_order={edge_order} needs "
                                     f"{edge_order + 1} or more")

    def part(start, stop):
        return slice_axis(f, axis, start, stop)
    if isinstance(spacing, numbers.Number):
        h = float(spacing)
        inside = (part(2, n) - part(0, n - 2)) / (2 * h)
        if edge_order == 1:
            first, last = (part(1, 2) - part(0, 1)) / h, (part(n - 1, n) - part(n - 2, n - 1)) / h
        else:
            first = (-1.5 * part(0, 1) + 2 * part(1, 2) - 0.5 * part(2, 3)) / h
            last = (0.5 * part(n - 3, n - 2) - 2 * part(n - 2, n - 1) + 1.5 * part(n - 1, n)) / h
        return concatenate([first, inside, last], axis=axis)
    x = _core.convert(spacing, f.dtype if not dtypes.is_complex(f.dtype) else dtypes.real_dtype(f.dtype))
    dx = slice_axis(x, 0, 1, n) - slice_axis(x, 0, 0, n - 1)

    def step(start, stop):
        return _along(slice_axis(dx, 0, start, stop), axis, f.ndim)
    dx1, dx2 = step(0, n - 2), step(1, n - 1)
    inside = (-dx2 / (dx1 * (dx1 + dx2)) * part(0, n - 2) + (dx2 - dx1) / (dx1 * dx2) * part(1, n - 1)
              + dx1 / (dx2 * (dx1 + dx2)) * part(2, n))
    if edge_order == 1:
        first = (part(1, 2) - part(0, 1)) / step(0, 1)
        last = (part(n - 1, n) - part(n - 2, n - 1)) / step(n - 2, n - 1)
    else:
        a1, a2 = step(0, 1), step(1, 2)
        first = (-(2 * a1 + a2) / (a1 * (a1 + a2)) * part(0, 1) + (a1 + a2) / (a1 * a2) * part(1, 2)
                 - a1 / (a2 * (a1 + a2)) * part(2, 3))
        b1, b2 = step(n - 3, n - 2), step(n - 2, n - 1)
        last = (b2 / (b1 * (b1 + b2)) * part(n - 3, n - 2) - (b1 + b2) / (b1 * b2) * part(n - 2, n - 1)
                + (2 * b2 + b1) / (b2 * (b1 + b2)) * part(n - 1, n))
    return concatenate([first, inside, last], axis=axis)


def gradient(f, *varargs, axis=None, edge_order: int = 1):
    """numpy.gradient: the derivative of f along each axis (a list of arrays, one array for one axis).
    varargs: nothing (spacing 1), one scalar for every axis, or one scalar or 1-D coordinate array per axis."""
    (f,) = _floats("gradient", f, complex_ok=True)
    if f.ndim == 0:
        fail(ShapeError, "gradient", "needs an array of at least 1 dimension")
    if edge_order not in (1, 2):
        fail(ValueError, "gradient", f"edge_order must be 1 or 2, not {edge_order}")
    axes = list(range(f.ndim)) if axis is None else \
        [_core.normalize_axis("gradient", a, f.ndim) for a in ((axis,) if isinstance(axis, int) else axis)]
    if len(varargs) == 0:
        spacings = [1.0] * len(axes)
    elif len(varargs) == 1 and (isinstance(varargs[0], numbers.Number) or getattr(varargs[0], "ndim", 1) == 0):
        spacings = [varargs[0]] * len(axes)
    elif len(varargs) == len(axes):
        spacings = list(varargs)
    else:
        fail(TypeError, "gradient", f"{len(varargs)} spacings for {len(axes)} axes; give one, or one per axis")
    out = []
    for a, h in zip(axes, spacings):
        if not isinstance(h, numbers.Number):
            h = as_tensor(h, "gradient")
            if h.ndim == 0:
                fail(TypeError, "gradient", "a traced scalar spacing: pass a Python number, or coordinates")
            if h.shape != (f.shape[a],):
                fail(ShapeError, "gradient", f"coordinates {describe(h)} do not match axis {a} of {describe(f)}")
        out.append(_axis_gradient(f, a, h, edge_order))
    return out[0] if len(out) == 1 else out


def unwrap(p, discont=None, axis: int = -1, *, period=2 * math.pi) -> Tensor:
    """numpy.unwrap: p with each jump along `axis` larger than `discont` (default period / 2) replaced by
    its complement modulo `period`."""
    (p,) = _floats("unwrap", p)
    if p.ndim == 0:
        fail(ShapeError, "unwrap", "needs an array of at least 1 dimension")
    axis = _core.normalize_axis("unwrap", axis, p.ndim)
    n = p.shape[axis]
    if n < 2:
        return p
    period = float(period)
    discont = period / 2 if discont is None else float(discont)
    dd = slice_axis(p, axis, 1, n) - slice_axis(p, axis, 0, n - 1)
    low, high = -period / 2, period / 2
    ddmod = binary("remainder", dd - low, _core.constant(period, p.dtype, True)) + low
    ddmod = where(binary("logical_and", compare("equal", ddmod, low), compare("greater", dd, 0)), high, ddmod)
    correction = where(compare("less", unary("abs", dd), discont), 0.0, ddmod - dd)
    return concatenate([slice_axis(p, axis, 0, 1), slice_axis(p, axis, 1, n) + cumsum(correction, axis=axis)],
                       axis=axis)
