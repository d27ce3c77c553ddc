"""arcsin, arccos, arctan, arcsinh, arccosh and arctanh of complex operands, which StableHLO has no op for.

arcsin, arccos and arccosh are Kahan's formulas ("Branch cuts for complex elementary functions, or much ado about
nothing's sign bit", 1987) on complex square roots, stablehlo.sqrt's (so they go through the pipeline's one
implementation, pipeline/complex_math_pairs.py): with a = sqrt(1 - z), b = sqrt(1 + z),

    arcsin z = atan2(x, Re(a b)) + i asinh(Im(conj(a) b))
    arccos z = 2 atan2(Re a, Re b) + i asinh(Im(conj(b) a))
    arccosh z = asinh(Re(conj(sqrt(z - 1)) sqrt(z + 1))) + 2i atan2(Im sqrt(z - 1), Re sqrt(z + 1))

Each product there is a sum of two terms of one sign (the roots' parts have known signs), so nothing cancels: a
few ulps everywhere, the branch cuts included. 1 - z is built as (1 - x) - iy from the parts, so a zero imaginary
part keeps its sign and picks the side of the cut, as numpy's (C99's) does. arctanh is Kahan's too, on the parts:
Re = log1p(4x / ((1 - x)**2 + y**2)) / 4 (no cancellation of log|1 + z| - log|1 - z|), Im = (arg(1 + z) -
arg(1 - z)) / 2 (two angles of opposite signs); past 2**(max exponent / 2) 1/z instead (the squares would
overflow). arcsinh z = -i arcsin(iz) and arctan z = -i arctanh(iz), as C99 defines them. Annex G's values at
infinite parts where a formula gives inf - inf or inf / inf are selected. Each carries its derivative
(d/dz arcsin = 1 / sqrt(1 - z**2) ...), which autodiff applies with JAX's convention for holomorphic functions.
"""
from __future__ import annotations

import math

import numpy as np

from ..derivatives import derivative
from ..tensor import Tensor
from . import elementwise as ew
from ._core import constant
from .complex_math import complex, imag, real, times_i, times_minus_i


def _sqrt(re: Tensor, im: Tensor) -> tuple[Tensor, Tensor]:
    """The parts of the principal sqrt(re + i im)."""
    root = ew.unary("sqrt", complex(re, im))
    return real(root), imag(root)


def _is_inf(x: Tensor) -> Tensor:
    return ew.unary("isinf", x)


def _is_nan(x: Tensor) -> Tensor:
    return ew.unary("isnan", x)


def _both_infinite_angle(x: Tensor) -> Tensor:
    """pi/4 or 3pi/4 by x's sign: the angle of an infinite x + i inf (Annex G's), where the roots are inf + i inf
    in every quadrant."""
    return ew.where(x > 0, constant(math.pi / 4, x.dtype), constant(3 * math.pi / 4, x.dtype))


def _rsqrt(z: Tensor) -> Tensor:
    return ew.unary("rsqrt", z)


@derivative(lambda z, w: _rsqrt(1 - z * z))
def _arcsin(z: Tensor) -> Tensor:
    x, y = real(z), imag(z)
    ar, ai = _sqrt(1 - x, -y)
    br, bi = _sqrt(1 + x, y)
    re = ew.binary("arctan2", x, ar * br - ai * bi)
    im = ew.unary("arcsinh", ar * bi - ai * br)
    # Annex G where Re(a b) is 0 * inf: arcsin(+-inf + iy) is +-pi/2 + i inf sign(y), arcsin(+-inf + i NaN) NaN + i inf,
    # arcsin(+-0 + i NaN) +-0 + i NaN
    x_inf = _is_inf(x)
    re = ew.where(x_inf & ew.unary("isfinite", y), ew.binary("copysign", math.pi / 2, x), re)
    re = ew.where((x == 0) & _is_nan(y), x, re)
    im = ew.where(x_inf & _is_nan(y), np.inf, im)
    return complex(re, im)


@derivative(lambda z, w: -_rsqrt(1 - z * z))
def _arccos(z: Tensor) -> Tensor:
    x, y = real(z), imag(z)
    ar, ai = _sqrt(1 - x, -y)
    br, bi = _sqrt(1 + x, y)
    re = 2 * ew.binary("arctan2", ar, br)
    im = ew.unary("arcsinh", br * ai - bi * ar)
    # Annex G: arccos(+-0 + i NaN) is pi/2 + i NaN, arccos(NaN + i inf) NaN - i inf, arccos(+-inf + i NaN)
    # NaN - i inf (numpy's sign), arccos(+-inf + i inf) pi/4 or 3pi/4 - i inf
    x_inf, y_inf = _is_inf(x), _is_inf(y)
    re = ew.where((x == 0) & _is_nan(y), math.pi / 2, ew.where(_is_nan(x) & y_inf, np.nan, re))
    re = ew.where(x_inf & y_inf, _both_infinite_angle(x), re)
    im = ew.where(x_inf & _is_nan(y), -np.inf, im)
    return complex(re, im)


@derivative(lambda z, w: 1 / (ew.unary("sqrt", z - 1) * ew.unary("sqrt", z + 1)))
def _arccosh(z: Tensor) -> Tensor:
    x, y = real(z), imag(z)
    cr, ci = _sqrt(x - 1, y)
    dr, di = _sqrt(x + 1, y)
    re = ew.unary("arcsinh", cr * dr + ci * di)
    im = 2 * ew.binary("arctan2", ci, dr)
    # Annex G: arccosh(+-0 + i NaN) is NaN + i pi/2, arccosh(+-inf + i NaN) and arccosh(NaN +- i inf) inf + i NaN,
    # arccosh(+-inf + i inf) inf + i (pi/4 or 3pi/4)
    x_inf, y_inf = _is_inf(x), _is_inf(y)
    im = ew.where((x == 0) & _is_nan(y), math.pi / 2, im)
    im = ew.where(x_inf & y_inf, ew.binary("copysign", _both_infinite_angle(x), y), im)
    infinite_and_nan = (x_inf & _is_nan(y)) | (_is_nan(x) & y_inf)
    re = ew.where(infinite_and_nan, np.inf, re)
    im = ew.where(infinite_and_nan, np.nan, im)
    return complex(re, im)


@derivative(lambda z, w: _rsqrt(z * z + 1))
def _arcsinh(z: Tensor) -> Tensor:
    """-i arcsin(iz)."""
    return times_minus_i(_arcsin(times_i(z)))


def _large(x: Tensor) -> float:
    """A magnitude past which (1 - x)**2 + y**2 could overflow."""
    return float(2.0 ** (np.finfo(x.dtype).maxexp // 2 - 2))


@derivative(lambda z, w: 1 / (1 - z * z))
def _arctanh(z: Tensor) -> Tensor:
    x, y = real(z), imag(z)
    ax, ay = ew.unary("abs", x), ew.unary("abs", y)
    big, small = ew.binary("maximum", ax, ay), ew.binary("minimum", ax, ay)
    # Re is odd in x: computed for |x|, where 4|x| / d is positive and log1p keeps its digits (for x near -1 it
    # would be log1p of a rounded -1 + eps)
    d = (1 - ax) * (1 - ax) + y * y
    re = 0.25 * ew.unary("log1p", 4 * ax / d)
    # next to +-1 the squares of |1 -+ z| underflow: log|1 + z| - log|1 - z| by hypot (nothing cancels there)
    tiny = float(np.finfo(x.dtype).tiny) * 2.0 ** np.finfo(x.dtype).nmant
    log_hypot = lambda a: ew.unary("log", ew.binary("hypot", a, y))      # noqa: E731
    by_hypot = 0.5 * (log_hypot(1 + ax) - log_hypot(1 - ax))
    re = ew.binary("copysign", ew.where(d < tiny, by_hypot, re), x)
    re = ew.where(x == 0, x, re)                          # arctanh(+-0 + i NaN) is +-0 + i NaN
    one_minus_x = 1 - x
    im = 0.5 * (ew.binary("arctan2", y, 1 + x) - ew.binary("arctan2", -y, one_minus_x))
    # far from 1: arctanh z = 1/z + ..., Re 1/z = x / |z|**2 without the squares; +-0 at an infinite part
    far = (ax > _large(x)) | (ay > _large(x))            # not by big: maximum(inf, nan) is nan
    safe_big = ew.where(far, big, 1.0)
    ratio = small / safe_big
    re_far = (x / safe_big) / (safe_big * (1 + ratio * ratio))
    re_far = ew.where(_is_inf(x) | _is_inf(y), ew.binary("copysign", 0.0, x), re_far)
    # NaN + i y (y finite) is NaN + i NaN (C99, numpy); only an infinite y fixes the angle
    im_far = ew.where(ew.unary("isnan", y) | (ew.unary("isnan", x) & ~_is_inf(y)), np.nan,
                      ew.binary("copysign", math.pi / 2, y))
    return complex(ew.where(far, re_far, re), ew.where(far, im_far, im))


@derivative(lambda z, w: 1 / (1 + z * z))
def _arctan(z: Tensor) -> Tensor:
    """-i arctanh(iz)."""
    return times_minus_i(_arctanh(times_i(z)))


# numpy name -> the composite of a complex operand (complex_composites.COMPOSITES takes these in)
FUNCTIONS = {"arcsin": _arcsin, "arccos": _arccos, "arctan": _arctan, "arcsinh": _arcsinh, "arccosh": _arccosh,
             "arctanh": _arctanh}
