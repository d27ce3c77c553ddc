"""Elementwise math that StableHLO has no op for, or whose IREE lowering is wrong, built from basic ops.

The rows live in elementwise.py's UNARY/BINARY tables (name, kinds, numpy reference); their composites
live here, in trig.py (the inverse trig functions) and in special.py (erf erfc lgamma digamma), each registered
into elementwise's composite tables at its definition (`@ew.composite(name)`). Each declares at its
definition whether half floats compute in f32 and, where its own ops have no derivative worth having, its
textbook one (`derivatives.derivative`). Also here: the float bit-level helpers they share (signbit, frexp,
ldexp by integer arithmetic on the bits, which IREE runs exactly), `bitcast`, `clip`, `nan_to_num` and the
parameterised activations (gelu, elu, leaky_relu).

sin, cos, tan, arctan2, cbrt, expm1, log1p are StableHLO's own ops; where IREE computes them wrongly or cannot
link them, the pipeline rewrites them per target (pipeline/accurate_math.py). Half floats compute in f32 here
(vmvx has no f16 arithmetic) and round once at the end. Nothing here relies on IEEE rounding of an intermediate result
(vmvx folds (x + 1) - 1 into x; llvm-cpu contracts a * b + c into an fma). Float <-> int are plain converts
(vmvx's f64 -> int and i32 -> f64 are pipeline rewrites: compile_rewrites.py, quirks.py).
"""
from __future__ import annotations

import decimal
import math
import numbers
from typing import NamedTuple

import numpy as np

from ...dialects import stablehlo as hlo
from ...dialects.types import finfo
from ...errors import DTypeError, ShapeError
from .. import dtypes
from ..derivatives import closed_form, derivative, no_derivative
from ..tensor import Tensor
from . import complex_math, elementwise as ew
from . import _core
from ._core import as_tensor, convert, describe, emit, fail, wrap
from .elementwise import in_float32_at_least
from .shape import zeros_like


# --- float formats and their bits ------------------------------------------------------------------

class FloatFormat(NamedTuple):
    bits: int
    mantissa: int      # explicit mantissa bits
    bias: int          # exponent bias
    uint: np.dtype     # unsigned int of the same width (bit manipulation)
    int: np.dtype      # signed int of the same width (building bits from an int32 exponent)


FORMATS = {
    dtypes.float16: FloatFormat(16, 10, 15, dtypes.uint16, dtypes.int16),
    dtypes.bfloat16: FloatFormat(16, 7, 127, dtypes.uint16, dtypes.int16),
    dtypes.float32: FloatFormat(32, 23, 127, dtypes.uint32, dtypes.int32),
    dtypes.float64: FloatFormat(64, 52, 1023, dtypes.uint64, dtypes.int64),
}


def bitcast(x, dtype) -> Tensor:
    """x's bits read as `dtype` (numpy's `x.view(dtype)`, lax.bitcast_convert_type). A narrower dtype adds
    a trailing dimension (f64[3] -> u32[3, 2], little-endian order); a wider one consumes the trailing
    dimension, which must hold exactly the right number of elements."""
    x = as_tensor(x, "bitcast")
    target = dtypes.canonical(dtype)
    if dtypes.bool_ in (x.dtype, target):
        fail(DTypeError, "bitcast", f"cannot bitcast {describe(x)} to {target}: bool has no bit layout here")
    shape = list(x.shape)
    if target.itemsize < x.dtype.itemsize:
        shape.append(x.dtype.itemsize // target.itemsize)
    elif target.itemsize > x.dtype.itemsize:
        ratio = target.itemsize // x.dtype.itemsize
        if not shape or shape[-1] != ratio:
            fail(ShapeError, "bitcast", f"{describe(x)} to {target} needs a last dimension of {ratio} "
                                        f"elements ({ratio} {x.dtype} make one {target})")
        shape.pop()
    if target == x.dtype:
        return x
    return wrap(emit(hlo.bitcast_convert, x.value, target), shape, target)


def _bits(x: Tensor) -> Tensor:
    return bitcast(x, FORMATS[x.dtype].uint)


def _from_bits(b: Tensor, dtype, weak=False) -> Tensor:
    y = bitcast(b, dtype)
    return wrap(y.value, y.shape, y.dtype, weak)


def _full(x: Tensor, value, dtype=None) -> Tensor:
    return ew._full_like(x, value, dtype)


def signbit(x) -> Tensor:
    """numpy's signbit: true for negative numbers, -0.0 and NaNs with the sign bit set."""
    x = as_tensor(x, "signbit")
    if dtypes.is_float(x.dtype):
        return (_bits(x) >> (FORMATS[x.dtype].bits - 1)) != 0
    if x.dtype.kind == "i":
        return x < 0
    return _full(x, False, dtypes.bool_)


def _with_sign_of(magnitude: Tensor, x: Tensor) -> Tensor:
    """magnitude (>= 0 or nan) carrying x's sign, -0.0 included."""
    return ew.where(signbit(x), -magnitude, magnitude)


def _power_of_two(n: Tensor, dtype) -> Tensor:
    """2**n as `dtype` for integer n in the normal exponent range, built from its bits."""
    fmt = FORMATS[dtype]
    return _from_bits(convert(n + fmt.bias, fmt.int) << fmt.mantissa, dtype)


def ldexp(y: Tensor, n: Tensor) -> Tensor:
    """y * 2**n for an integer n, exactly (one rounding, at a subnormal result), overflowing to inf."""
    fmt = FORMATS[y.dtype]
    n = ew.binary("minimum", ew.binary("maximum", n, -2 * (fmt.bias - 1)), 2 * fmt.bias)
    half = n >> 1
    return y * _power_of_two(half, y.dtype) * _power_of_two(n - half, y.dtype)


def frexp(x: Tensor) -> tuple[Tensor, Tensor]:
    """(m, e) with x = m * 2**e, m in [1, 2), e int32, for finite x > 0 (subnormals too)."""
    fmt = FORMATS[x.dtype]
    tiny = float(finfo(x.dtype).smallest_normal)
    subnormal = x < tiny
    x = ew.where(subnormal, x * float(2 ** (fmt.mantissa + 1)), x)
    bits = _bits(x)
    e = convert(bits >> fmt.mantissa, dtypes.int32) - fmt.bias
    e = ew.where(subnormal, e - (fmt.mantissa + 1), e)
    m = _from_bits((bits & ((1 << fmt.mantissa) - 1)) | (fmt.bias << fmt.mantissa), x.dtype)
    return m, e


def _binary_composite(fn):
    """fn(a, b) as a BINARY composite: in f32 for half floats, and as weakly typed as its promoted operands."""
    def run(a, b):
        out = in_float32_at_least(fn)(a, b)
        return wrap(out.value, out.shape, out.dtype, a.weak)
    run.__name__ = fn.__name__
    return run


def _unary(name, x):
    return ew.unary(name, x)


# --- exponentials and logarithms -------------------------------------------------------------------

@ew.composite("exp2")
@derivative(lambda x, y: y * math.log(2))
@in_float32_at_least
def _exp2(x):
    """2**x = 2**n * exp(f*ln2), n = round(x), |f| <= 1/2: exact for integer x, no error growth with |x|."""
    fmt = FORMATS[x.dtype]
    limit = float(2 * fmt.bias + fmt.mantissa + 4)  # beyond: 0 or inf anyway
    clipped = ew.binary("minimum", ew.binary("maximum", x, -limit), limit)
    n = _unary("round", clipped)
    f = clipped - n
    y = ldexp(_unary("exp", f * float(np.log(2))), convert(n, fmt.int))
    return ew.where(_unary("isnan", x), x, y)


def _log2_parts(x):
    """(e, log(m)) with x = m * 2**e, m in [sqrt(1/2), sqrt(2)): log(m) is small and accurate."""
    m, e = frexp(x)
    big = m > float(np.sqrt(2))
    m = ew.where(big, m * 0.5, m)
    e = ew.where(big, e + 1, e)
    return convert(e, x.dtype), _unary("log", m)


def _log_specials(x, y):
    """numpy's log* at the edges: log(0) = -inf, log(inf) = inf, log(<0) = nan, nan stays nan."""
    y = ew.where(x == 0, -np.inf, y)
    y = ew.where(x == np.inf, np.inf, y)
    return ew.where((x < 0) | _unary("isnan", x), np.nan, y)


@ew.composite("log2")
@derivative(lambda x, y: 1 / (x * math.log(2)))
@in_float32_at_least
def _log2(x):
    """log2 by the exponent bits: exact at powers of two (floor(log2(8)) must be 3)."""
    e, log_m = _log2_parts(x)
    return _log_specials(x, e + log_m * float(1 / np.log(2)))


def _split_log10_2(bits: int) -> tuple[float, float]:
    """log10(2) = hi + lo with hi holding `bits` significant bits, so e * hi is exact for any exponent e
    (fdlibm's way to make log10(10**n) == n)."""
    with decimal.localcontext() as ctx:
        ctx.prec = 50
        exact = decimal.Decimal(2).log10()
        hi = math.ldexp(math.floor(math.ldexp(float(exact), bits + 1)), -(bits + 1))
        return hi, float(exact - decimal.Decimal(hi))


_LOG10_2 = {dtypes.float64: _split_log10_2(40), dtypes.float32: _split_log10_2(12)}


@ew.composite("log10")
@derivative(lambda x, y: 1 / (x * math.log(10)))
@in_float32_at_least
def _log10(x):
    e, log_m = _log2_parts(x)
    hi, lo = _LOG10_2[x.dtype]
    y = e * hi + (e * lo + log_m * float(1 / np.log(10)))
    return _log_specials(x, y)


@ew.composite("trunc")
@derivative(lambda x, y: zeros_like(x))
def _trunc(x):
    if not dtypes.is_float(x.dtype):
        return x
    return ew.where(x < 0, _unary("ceil", x), _unary("floor", x))


# --- hyperbolic functions and their inverses ---------------------------------------------------------

@ew.composite("sinh")
@derivative(lambda x, y: _unary("cosh", x))
@in_float32_at_least
def _sinh(x):
    """expm1 near 0 (no cancellation); (t/2)*t - 1/(2t^2) with t = exp(|x|/2) beyond, which overflows
    only where sinh does."""
    a = _unary("abs", x)
    e = _unary("expm1", a)
    near = 0.5 * (e + e / (e + 1))
    t = _unary("exp", 0.5 * a)
    far = (0.5 * t) * t - 0.5 / (t * t)
    return _with_sign_of(ew.where(a < 1, near, far), x)


@ew.composite("cosh")
@derivative(lambda x, y: _unary("sinh", x))
@in_float32_at_least
def _cosh(x):
    t = _unary("exp", 0.5 * _unary("abs", x))
    return (0.5 * t) * t + 0.5 / (t * t)


def _large(x):
    """|x| beyond which 1 + x^2 == x^2 in x's precision: asinh/acosh become log(2|x|)."""
    return float(2.0 ** (FORMATS[x.dtype].mantissa // 2 + 2))


@ew.composite("arcsinh")
@derivative(lambda x, y: _unary("rsqrt", x * x + 1))
@in_float32_at_least
def _arcsinh(x):
    a = _unary("abs", x)
    near = _unary("log1p", a + a * a / (1 + _unary("sqrt", 1 + a * a)))
    far = _unary("log", a) + float(np.log(2))
    return _with_sign_of(ew.where(a < _large(x), near, far), x)


@ew.composite("arccosh")
@derivative(lambda x, y: _unary("rsqrt", (x - 1) * (x + 1)))
@in_float32_at_least
def _arccosh(x):
    t = x - 1
    near = _unary("log1p", t + _unary("sqrt", 2 * t + t * t))
    far = _unary("log", x) + float(np.log(2))
    return ew.where(x < 1, np.nan, ew.where(x < _large(x), near, far))


@ew.composite("arctanh")
@derivative(lambda x, y: 1 / (1 - x * x))
@in_float32_at_least
def _arctanh(x):
    a = _unary("abs", x)
    return _with_sign_of(0.5 * _unary("log1p", 2 * a / (1 - a)), x)


# --- two-argument functions ---------------------------------------------------------------------------

@ew.composite("hypot")
@derivative(lambda x, y, z: (x / z, y / z))
@_binary_composite
def _hypot(a, b):
    """max * sqrt(1 + (min/max)^2): no overflow or underflow in between; inf beats nan, as in C."""
    x, y = _unary("abs", a), _unary("abs", b)
    big, small = ew.binary("maximum", x, y), ew.binary("minimum", x, y)
    r = small / big
    h = big * _unary("sqrt", 1 + r * r)
    h = ew.where(big == 0, 0.0, h)
    return ew.where((x == np.inf) | (y == np.inf), np.inf, h)


@ew.composite("copysign")
@derivative(lambda x, y, z: (ew.where(signbit(x) == signbit(y), 1.0, -1.0).astype(x.dtype),
                             zeros_like(y)))
@_binary_composite
def _copysign(a, b):
    """By the bits: vmvx cannot lower f64 copysign, and the sign of -0.0 and nan must carry over."""
    fmt = FORMATS[a.dtype]
    sign = 1 << (fmt.bits - 1)
    return _from_bits((_bits(a) & (sign - 1)) | (_bits(b) & sign), a.dtype)


@ew.composite("nextafter")
@no_derivative("it steps to the neighbouring float, a function of no slope")
@_binary_composite
def _nextafter(a, b):
    """The next float after a toward b: one step of the bits (which count magnitudes) up or down."""
    fmt = FORMATS[a.dtype]
    bits = _bits(a)
    away_from_zero = (b > a) == (a > 0)
    stepped = _from_bits(ew.where(away_from_zero, bits + 1, bits - 1), a.dtype)
    smallest = _from_bits((_bits(b) & (1 << (fmt.bits - 1))) | 1, a.dtype)  # toward b from +-0
    y = ew.where(a == 0, smallest, stepped)
    y = ew.where(a == b, b, y)
    return ew.where(_unary("isnan", a) | _unary("isnan", b), a + b, y)


# --- activations ----------------------------------------------------------------------------------

@ew.composite("relu6")
def _relu6(x):
    return ew.binary("minimum", ew.binary("maximum", x, 0), 6)


@ew.composite("silu")
@in_float32_at_least
def _silu(x):
    return x * _unary("sigmoid", x)


@ew.composite("log_sigmoid")
@in_float32_at_least
def _log_sigmoid(x):
    """log(sigmoid(x)) = -(max(-x, 0) + log1p(exp(-|x|))): no overflow, no log(0) for very negative x, and -0.0
    at +inf (scipy's log_expit, JAX's -softplus(-x))."""
    return -(ew.binary("maximum", -x, 0) + _unary("log1p", _unary("exp", -_unary("abs", x))))


def _float_operand(op: str, x) -> Tensor:
    x = as_tensor(x, op)
    if not dtypes.is_float(x.dtype):
        x = convert(x, dtypes.DEFAULT_FLOAT, x.weak)
    return x


def _gelu_backward(like, x, g, approximate: bool = False) -> Tensor:
    """g * gelu'(x), the slope recomputed from x (derivatives.closed_form): differentiated op by op, the tanh
    form's chain kept each intermediate (x*x*x, tanh, 1 + t ...) alive for the backward pass, so IREE wrote
    out every one of them (five 4 MB dispatches in the transformer block's MLP) instead of fusing the forward.
    The exact form's slope is written on the forward's own u = -x/sqrt2, whose erfc IREE then shares with the
    forward (grad of dense + gelu + dense, 256x256 by 256x1024 on iree:cpu: 5 dispatches and 12.7-12.8 ms of CPU a
    step; op by op 5 and 12.3-13.9 ms; the erfc polynomial run twice, 6 and 15.8 ms). The tanh form's x once went
    behind a barrier: IREE merged the slope's tanh with the forward's, and plain data tiling then refused the
    transformer step (targets.rescue now compiles it data-tiled: 2-5% slower than with the barrier there, the
    same on the matmul kernels' flag set, 2026-12-07)."""
    if approximate:   # y = x/2 (1 + tanh(v)), v = sqrt(2/pi) (x + 0.044715 x^3)
        t = _unary("tanh", float(np.sqrt(2 / np.pi)) * (x + 0.044715 * (x * x * x)))
        dv = float(np.sqrt(2 / np.pi)) * (1 + 3 * 0.044715 * (x * x))
        return g * (0.5 * (1 + t) + 0.5 * x * (1 - t * t) * dv)
    # y = x Phi(x) = x/2 erfc(u): Phi(x) + x phi(x) = erfc(u)/2 - u exp(-u^2)/sqrt(pi)
    u = x * float(-1 / np.sqrt(2))
    return g * (0.5 * _unary("erfc", u) - u * _unary("exp", -(u * u)) * float(1 / np.sqrt(np.pi)))


@closed_form(_gelu_backward, keep="input")
def gelu(x, approximate: bool = False) -> Tensor:
    """x * Phi(x) (the Gaussian CDF) = x/2 * erfc(-x/sqrt2): exact by default (as torch), or the tanh
    approximation with approximate=True (jax.nn.gelu's default)."""
    x = _float_operand("gelu", x)
    if approximate:
        inner = float(np.sqrt(2 / np.pi)) * (x + 0.044715 * (x * x * x))
        return 0.5 * x * (1 + _unary("tanh", inner))
    return 0.5 * x * _unary("erfc", x * float(-1 / np.sqrt(2)))


def elu(x, alpha: float = 1.0) -> Tensor:
    """x for x > 0, alpha * (exp(x) - 1) otherwise."""
    x = _float_operand("elu", x)
    return ew.where(x > 0, x, alpha * _unary("expm1", x))


def leaky_relu(x, negative_slope: float = 0.01) -> Tensor:
    x = _float_operand("leaky_relu", x)
    return ew.where(x >= 0, x, negative_slope * x)


# --- clip and nan_to_num ------------------------------------------------------------------------------

def clip(x, min=None, max=None) -> Tensor:  # noqa: A002  (numpy's names)
    """numpy's clip: minimum(maximum(x, min), max), either bound optional, broadcast and promoted."""
    x = as_tensor(x, "clip")
    bounds = [as_tensor(b, "clip") for b in (min, max) if b is not None and not _core.is_scalar(b)]
    _core.broadcast_shapes("clip", x.shape, *(b.shape for b in bounds))   # errors name clip, not maximum
    if min is not None:
        x = ew.binary("maximum", x, min)
    if max is not None:
        x = ew.binary("minimum", x, max)
    return x


def nan_to_num(x, nan: float = 0.0, posinf: float | None = None, neginf: float | None = None) -> Tensor:
    """numpy's nan_to_num: nan -> `nan`, +-inf -> `posinf`/`neginf` (default: the dtype's largest finite
    values); integers and bools come back unchanged."""
    x = as_tensor(x, "nan_to_num")
    for name, value in (("nan", nan), ("posinf", posinf), ("neginf", neginf)):
        if value is not None and (not isinstance(value, numbers.Real) or isinstance(value, Tensor)):
            fail(TypeError, "nan_to_num", f"{name} must be a Python number, not {type(value).__name__}")
    if dtypes.is_complex(x.dtype):   # numpy: each part on its own
        return complex_math.complex(*(nan_to_num(part, nan, posinf, neginf)
                                      for part in (complex_math.real(x), complex_math.imag(x))))
    if not dtypes.is_float(x.dtype):
        return x
    info = finfo(x.dtype)
    posinf = float(info.max) if posinf is None else float(posinf)
    neginf = float(info.min) if neginf is None else float(neginf)
    y = ew.where(x == np.inf, posinf, x)
    y = ew.where(x == -np.inf, neginf, y)
    return ew.where(_unary("isnan", x), float(nan), y)
