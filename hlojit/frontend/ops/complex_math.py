"""Complex numbers: the parts (real, imag, conj, angle, complex), and the elementwise functions of complex operands
that StableHLO has no complex op for.

exp, log, sqrt, sin, cos, tan, tanh, abs, power ... are StableHLO's own ops on complex operands, which
elementwise.py emits as it does for real ones (the reference backend computes them with numpy; the pipeline writes
them out on real parts for IREE: pipeline/complex_math_pairs.py, the one implementation). The rest are the table
FUNCTIONS at the bottom of this file (complex_composites.COMPOSITES, which elementwise's unary reads when an operand
is complex, joins them with complex_inverse_trig's), each built from
those ops so its values at infinite, NaN and signed-zero parts are numpy's: sinh z = -i sin(iz), cosh z = cos(-iz),
log2 / log10 / exp2 by real scalings of log and exp, sign by stablehlo.sign with numpy's values at infinite parts, reciprocal by numpy's own formula, and the inverse trigonometric and hyperbolic functions by
Kahan's formulas on complex square roots (complex_inverse_trig.py). The isnan family looks at the parts. The
autodiff rules of real/imag/complex and of the ops make them differentiable (JAX's convention: the gradient of a
real loss L(z) is dL/dx - i dL/dy).
"""
from __future__ import annotations

import math

from ...dialects import stablehlo as hlo
from ...errors import DTypeError
from .. import dtypes
from ..tensor import Tensor
from . import elementwise as ew
from ._core import as_tensor, broadcast_all, constant, convert, emit, fail, promote, wrap


# --- the parts -------------------------------------------------------------------------------------

def _part(op: str, builder, x: Tensor) -> Tensor:
    return wrap(emit(builder, x.value), x.shape, dtypes.real_dtype(x.dtype), x.weak)


def real(x) -> Tensor:
    """The real part (a float array); a real array is its own real part."""
    x = as_tensor(x, "real")
    return _part("real", hlo.real, x) if dtypes.is_complex(x.dtype) else x


def imag(x) -> Tensor:
    """The imaginary part (a float array); zeros for a real array."""
    x = as_tensor(x, "imag")
    if dtypes.is_complex(x.dtype):
        return _part("imag", hlo.imag, x)
    from .shape import broadcast_to
    return broadcast_to(constant(0, x.dtype, x.weak), x.shape)


def complex(re, im) -> Tensor:  # noqa: A001  (lax.complex's name)
    """re + i*im from two real arrays (broadcast and promoted; ints become f32), as jax.lax.complex."""
    (re, im), dtype, weak = promote("complex", re, im)
    if dtypes.is_complex(dtype):
        fail(DTypeError, "complex", f"takes real parts, not {dtype}")
    if not dtypes.is_float(dtype) or dtype in (dtypes.float16, dtypes.bfloat16):
        dtype = dtypes.float32
        re, im = convert(re, dtype, weak), convert(im, dtype, weak)
    re, im = broadcast_all("complex", [re, im])
    return wrap(emit(hlo.complex, re.value, im.value), re.shape, dtypes.complex_dtype(dtype), weak)


def conjugate(x) -> Tensor:
    """The complex conjugate; a real array is its own conjugate."""
    x = as_tensor(x, "conjugate")
    return complex(real(x), -imag(x)) if dtypes.is_complex(x.dtype) else x


conj = conjugate


def abs_squared(x) -> Tensor:
    """|x|^2, real: re^2 + im^2 of a complex x (x * x would be its complex square), x * x of a real one. What
    var, std, nanvar, the norms and polyfit's column scales sum."""
    x = as_tensor(x, "abs_squared")
    return real(x * conjugate(x)) if dtypes.is_complex(x.dtype) else x * x


def angle(z, deg: bool = False) -> Tensor:
    """The argument of z, atan2(imag, real), in radians (degrees with deg=True); real input gives 0 or pi."""
    z = as_tensor(z, "angle")
    if not dtypes.is_inexact(z.dtype):
        z = convert(z, dtypes.DEFAULT_FLOAT, z.weak)
    a = ew.binary("arctan2", imag(z), real(z))
    return a * (180 / math.pi) if deg else a


def iscomplexobj(x) -> bool:
    """Whether x has a complex dtype (static: the dtype is known while tracing)."""
    return dtypes.is_complex(as_tensor(x, "iscomplexobj").dtype)


def isrealobj(x) -> bool:
    return not iscomplexobj(x)


def iscomplex(x) -> Tensor:
    """Elementwise: the imaginary part is nonzero."""
    return imag(x) != 0


def isreal(x) -> Tensor:
    """Elementwise: the imaginary part is zero."""
    return imag(x) == 0


# --- elementwise functions without a StableHLO complex op -------------------------------------------------

def times_i(z: Tensor) -> Tensor:
    """i z from the parts (-y + ix): a complex product by i would make inf * 0 a NaN."""
    return complex(-imag(z), real(z))


def times_minus_i(z: Tensor) -> Tensor:
    """-i z from the parts (y - ix)."""
    return complex(imag(z), -real(z))


def _sinh(z):
    """sinh z = -i sin(iz), numpy's values at every special point (C99 defines csin by it)."""
    return times_minus_i(ew.unary("sin", times_i(z)))


def _cosh(z):
    """cosh z = cos(-iz): numpy's signs of zero where cos(iz) would flip them (cosh(nan + 0j) is nan + 0j)."""
    return ew.unary("cos", times_minus_i(z))


def _scaled_log(scale):
    """log(z) with both parts times a real scale (numpy's log2, log10; the -inf + 0j of log(0) times a complex
    scale would make the imaginary part nan)."""
    def build(z):
        w = ew.unary("log", z)
        return complex(real(w) * scale, imag(w) * scale)
    return build


def _exp2(z):
    """2**z = exp(z ln 2), z scaled part by part (numpy's)."""
    return ew.unary("exp", complex(real(z) * math.log(2), imag(z) * math.log(2)))


def _sign(z):
    """numpy's sign of a complex z: z / |z| (stablehlo.sign, which is NaN at every infinite part), except where one
    part is infinite: (+-1, 0) where only the real part is, (0, +-1) where only the imaginary part is (a NaN beside
    it included: numpy's |inf + nan j| is inf); NaN where both are."""
    x, y = real(z), imag(z)
    x_inf, y_inf = ew.unary("isinf", x), ew.unary("isinf", y)
    zero = constant(0, x.dtype, x.weak)
    along_x = complex(ew.unary("sign", x), zero)
    along_y = complex(zero, ew.unary("sign", y))
    quotient = wrap(emit(hlo.unary, "sign", z.value), z.shape, z.dtype, z.weak)
    return ew.where(x_inf & ~y_inf, along_x, ew.where(y_inf & ~x_inf, along_y, quotient))


def _reciprocal(z):
    """numpy's 1 / z, which is its own loop, not its quotient: with r the ratio of the smaller part to the larger,
    (1 / d, -r / d) where |y| <= |x| (d = x + y r), else (r / d, -1 / d) (d = x r + y). So 1 / 0j is nan + nan j
    and 1 / (-1j) is +0 + 1j, where numpy's 1 / z gives inf + nan j and -0 + 1j."""
    x, y = real(z), imag(z)
    real_larger = ew.unary("abs", y) <= ew.unary("abs", x)
    r = ew.where(real_larger, y / x, x / y)
    d = ew.where(real_larger, x + y * r, x * r + y)
    return complex(ew.where(real_larger, 1.0 / d, r / d), ew.where(real_larger, -r / d, -1.0 / d))


def _isnan(z):
    x, y = real(z), imag(z)
    return ew.unary("isnan", x) | ew.unary("isnan", y)


def _isinf(z):
    x, y = real(z), imag(z)
    return ew.unary("isinf", x) | ew.unary("isinf", y)


def _isfinite(z):
    x, y = real(z), imag(z)
    return ew.unary("isfinite", x) & ew.unary("isfinite", y)


# numpy name -> the composite of a complex operand built here (complex_composites.COMPOSITES takes these in)
FUNCTIONS = {
    "sinh": _sinh, "cosh": _cosh, "exp2": _exp2, "sign": _sign, "reciprocal": _reciprocal,
    "log2": _scaled_log(1 / math.log(2)), "log10": _scaled_log(1 / math.log(10)),
    "isnan": _isnan, "isinf": _isinf, "isfinite": _isfinite,
}

__all__ = ["angle", "complex", "conj", "conjugate", "imag", "iscomplex", "iscomplexobj", "isreal", "isrealobj",
           "real"]
