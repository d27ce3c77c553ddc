"""Complex numbers: the parts (real, imag, conj, angle, complex), and the elementwise ops on complex operands.

add, subtract, multiply, divide, negate and matmul are StableHLO's own complex ops. The transcendental
functions (exp log sqrt sin cos tan sinh cosh tanh ...) are built here from the real and imaginary parts
with hlojit's real ops, because IREE 3.13's llvm-cpu cannot link the f64 complex ones (sin, cos, atan2 are
missing symbols) and its f32 ones are only as accurate as its real sine/cosine (trig.py). Comparisons and
the isnan family compare the parts. The composites are the one table COMPOSITES at the bottom of this file,
which elementwise's unary / binary / compare read when an operand is complex; the autodiff rules of
real/imag/complex make them differentiable (JAX's convention: grad of a real loss L(z) is dL/dx - i dL/dy).
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


# --- elementwise composites on the parts ----------------------------------------------------------

def _parts(z: Tensor):
    return real(z), imag(z)


def _abs(z):
    x, y = _parts(z)
    return ew.binary("hypot", x, y)


def _exp(z):
    """e^x (cos y + i sin y); a zero imaginary part stays exactly zero (exp(inf + 0j) is inf + 0j)."""
    x, y = _parts(z)
    ex = ew.unary("exp", x)
    im = ew.where(y == 0, y, ex * ew.unary("sin", y))
    return complex(ex * ew.unary("cos", y), im)


def _log(z):
    x, y = _parts(z)
    return complex(ew.unary("log", ew.binary("hypot", x, y)), ew.binary("arctan2", y, x))


def _sqrt(z):
    """The principal root, as C's csqrt: t = sqrt((|x| + |z|) / 2), then by the sign of x."""
    x, y = _parts(z)
    t = ew.unary("sqrt", (ew.unary("abs", x) + ew.binary("hypot", x, y)) * 0.5)
    half = ew.where(t == 0, 0.0 * y, y / (2 * ew.where(t == 0, 1.0, t)))
    re = ew.where(x >= 0, t, ew.unary("abs", half))
    im = ew.where(x >= 0, half, ew.binary("copysign", t, y))
    return complex(re, im)


def _sin(z):
    x, y = _parts(z)
    return complex(ew.unary("sin", x) * ew.unary("cosh", y), ew.unary("cos", x) * ew.unary("sinh", y))


def _cos(z):
    x, y = _parts(z)
    return complex(ew.unary("cos", x) * ew.unary("cosh", y), -(ew.unary("sin", x) * ew.unary("sinh", y)))


def _sinh(z):
    x, y = _parts(z)
    return complex(ew.unary("sinh", x) * ew.unary("cos", y), ew.unary("cosh", x) * ew.unary("sin", y))


def _cosh(z):
    x, y = _parts(z)
    return complex(ew.unary("cosh", x) * ew.unary("cos", y), ew.unary("sinh", x) * ew.unary("sin", y))


def _tanh(z):
    """(sinh 2x + i sin 2y) / (cosh 2x + cos 2y); for |x| > 20 it is sign(x) + 0i to the last bit (and the
    formula would divide inf by inf)."""
    x, y = _parts(z)
    far = ew.unary("abs", x) > 20
    xs = ew.where(far, 0.0 * x, x)
    d = ew.unary("cosh", 2 * xs) + ew.unary("cos", 2 * y)
    re = ew.where(far, ew.where(x < 0, -1.0, 1.0).astype(x.dtype), ew.unary("sinh", 2 * xs) / d)
    im = ew.where(far, 0.0 * y, ew.unary("sin", 2 * y) / d)
    return complex(re, im)


def _tan(z):
    """tan z = -i tanh(iz)."""
    t = _tanh(complex(-imag(z), real(z)))
    return complex(imag(t), -real(t))


def _sign(z):
    """z / |z|, 0 at 0 (numpy 2 and JAX)."""
    r = _abs(z)
    safe = ew.where(r == 0, 1.0, r)
    x, y = _parts(z)
    return complex(ew.where(r == 0, 0.0 * x, x / safe), ew.where(r == 0, 0.0 * y, y / safe))


def _scaled_log(scale):
    """log(z) * scale, part by part (-inf + 0j times a complex scale would make the imaginary part nan)."""
    def build(z):
        w = _log(z)
        return complex(real(w) * scale, imag(w) * scale)
    return build


def _equal(a: Tensor, b: Tensor) -> Tensor:
    (xa, ya), (xb, yb) = _parts(a), _parts(b)
    return (xa == xb) & (ya == yb)


def _power(a: Tensor, b: Tensor) -> Tensor:
    """a ** b = exp(b log a), with 0 ** 0 = 1 and 0 ** b = 0 for Re(b) > 0 (numpy's values)."""
    zero = _equal(a, a * 0)
    p = _exp(b * _log(ew.where(zero, a * 0 + 1, a)))
    b_zero = _equal(b, b * 0)
    return ew.where(zero, ew.where(b_zero, p * 0 + 1, p * 0), p)


def _isnan(z):
    x, y = _parts(z)
    return ew.unary("isnan", x) | ew.unary("isnan", y)


def _isinf(z):
    x, y = _parts(z)
    return ew.unary("isinf", x) | ew.unary("isinf", y)


def _isfinite(z):
    x, y = _parts(z)
    return ew.unary("isfinite", x) & ew.unary("isfinite", y)


# numpy name -> the composite that elementwise.unary / binary / compare build for complex operands of the op
# (one table, read there; ops neither here nor taking complex in their elementwise row are a DTypeError)
COMPOSITES = {
    "abs": _abs, "exp": _exp, "log": _log, "sqrt": _sqrt, "sin": _sin, "cos": _cos, "tan": _tan,
    "sinh": _sinh, "cosh": _cosh, "tanh": _tanh, "sign": _sign,
    "log2": _scaled_log(1 / math.log(2)), "log10": _scaled_log(1 / math.log(10)),
    "exp2": lambda z: _exp(z * math.log(2)), "isnan": _isnan, "isinf": _isinf, "isfinite": _isfinite,
    "square": lambda z: z * z, "reciprocal": lambda z: 1 / z, "negative": lambda z: complex(-real(z), -imag(z)),
    "power": _power,
    "equal": _equal, "not_equal": lambda a, b: ~_equal(a, b),
}

__all__ = ["angle", "complex", "conj", "conjugate", "imag", "iscomplex", "iscomplexobj", "isreal", "isrealobj",
           "real"]
