"""Elementwise ops, comparisons, select and convert, by numpy ufuncs with StableHLO's semantics."""
from __future__ import annotations

import numpy as np

from ..dialects.types import astype, dtype_of, enum_attr
from ..errors import BackendError
from .interpreter import OPS


def _is_float(dtype) -> bool:
    return dtype.kind == "f" or dtype.name == "bfloat16"


def _parts(dtype, re, im):
    """re + i*im without arithmetic (1j * inf would make the real part nan)."""
    out = np.empty(np.broadcast_shapes(np.shape(re), np.shape(im)), dtype)
    out.real, out.imag = re, im
    return out


def _int_divide(a, b):
    """StableHLO's integer divide truncates toward zero, numpy's // floors: they differ where the quotient is
    negative and inexact. Not through |a| // |b|: |INT_MIN| wraps negative. The two quotients the spec leaves
    to the implementation are 0, as in openxla's reference interpreter: x / 0 and INT_MIN / -1 (which
    overflows)."""
    with np.errstate(divide="ignore", over="ignore"):
        q, r = np.floor_divide(a, b), np.remainder(a, b)
    if a.dtype.kind == "u":
        return q
    overflow = (a == np.iinfo(a.dtype).min) & (b == -1)
    return np.where(overflow, 0, np.where((r != 0) & ((a < 0) != (b < 0)), q + 1, q)).astype(a.dtype)


def _shift_right_logical(a, b):
    if a.dtype.kind == "u" or a.dtype == np.bool_:
        return np.right_shift(a, b)
    unsigned = np.dtype(f"u{a.dtype.itemsize}")
    return np.right_shift(a.view(unsigned) if a.ndim else a.astype(unsigned), b.astype(unsigned)).astype(a.dtype)


def _shift_right_arithmetic(a, b):
    """The spec shifts the bit pattern, replicating its top bit, for unsigned types too (numpy's right_shift of
    an unsigned is logical): shift the pattern as the signed type of its width. numpy's signed shift already
    gives the spec's rule for amounts at or past the width, taken as unsigned (all copies of the sign bit).
    A 1-bit bool is its own sign bit: every shift leaves it."""
    if a.dtype == np.bool_:
        return a
    if a.dtype.kind != "u":
        return np.right_shift(a, b)
    signed = np.dtype(f"i{a.dtype.itemsize}")
    return np.right_shift(np.asarray(a).view(signed), np.asarray(b).view(signed)).view(a.dtype)


def _power(a, b):
    """Integer powers as StableHLO defines them for negative exponents (numpy raises): 1 ** -n is 1,
    (-1) ** -n is +-1, any other base gives 0 (the truncated reciprocal); 0 ** -n is 0 too."""
    if a.dtype.kind not in "iu" or b.dtype.kind == "u":
        return np.power(a, b)
    negative = b < 0
    if not np.any(negative):
        return np.power(a, b)
    with np.errstate(over="ignore"):
        result = np.power(a, np.where(negative, 0, b))
    odd = (b % 2) != 0
    reciprocal = np.where(a == 1, 1, np.where(a == -1, np.where(odd, -1, 1), 0))
    return np.where(negative, reciprocal, result).astype(a.dtype)


def _remainder_builder(op):
    """C's fmod: lhs - d * rhs with d the spec's divide truncated toward zero. An integer x % 0 and INT_MIN % -1 are
    0, as in openxla's reference interpreter (its tests call them implementation-defined)."""
    dtype = dtype_of(op.result.type)
    if dtype.kind == "c":
        raise BackendError(f"stablehlo.remainder of {op.result.type}: the StableHLO spec leaves the remainder of "
                           f"complex numbers undefined (TBD, openxla/stablehlo#997), so the reference backend has no "
                           f"answer to give (at {op.location})")
    return lambda a, b: np.asarray(np.fmod(a, b), dtype=dtype)


def _complex_divide(a, b):
    """numpy's complex quotient overflows for a subnormal divisor (1e-310 / 1e-310 gives inf+nanj): divide by b
    scaled by a power of two to about 1, then scale the quotient back; both scalings are exact."""
    big = np.maximum(np.abs(b.real), np.abs(b.imag))
    _, e = np.frexp(np.where(np.isfinite(big) & (big > 0), big, 0.5))     # 0.5 = 0.5 * 2**0: left alone
    q = a / _parts(b.dtype, np.ldexp(b.real, -e), np.ldexp(b.imag, -e))
    return _parts(q.dtype, np.ldexp(q.real, -e), np.ldexp(q.imag, -e))


def _divide(a, b):
    if a.dtype.kind in "iu":
        return _int_divide(a, b)
    return _complex_divide(a, b) if a.dtype.kind == "c" else np.true_divide(a, b)


def _maximum(a, b):
    """IEEE maximum: NaN propagates (as numpy's does) and +0 is above -0 (numpy returns its first operand when
    the two compare equal). Complex numbers in numpy's lexicographic order, as the spec orders them."""
    out = np.maximum(a, b)
    if _is_float(a.dtype):
        out = np.where((a == 0) & (b == 0), np.where(np.signbit(a), b, a), out)
    return out


def _minimum(a, b):
    out = np.minimum(a, b)
    if _is_float(a.dtype):
        out = np.where((a == 0) & (b == 0), np.where(np.signbit(a), a, b), out)
    return out


def _atan2(y, x):
    """Complex atan2 as the spec's complex numbers define it (and MLIR's complex dialect expands it):
    -i log((x + i y) / sqrt(x^2 + y^2)); i y and -i w are built from the parts (no inf * 0); complex64 computes in
    double (its own rounding left 6e-8 where atan2(0, 1 - 2.5i) is 0)."""
    if y.dtype.kind != "c":
        return np.arctan2(y, x)
    wide_y, wide_x = y.astype(np.complex128), x.astype(np.complex128)      # complex64 in double, rounded once
    numerator = _parts(np.complex128, wide_x.real - wide_y.imag, wide_x.imag + wide_y.real)
    w = np.log(_complex_divide(numerator, np.sqrt(wide_x * wide_x + wide_y * wide_y)))
    return _parts(y.dtype, w.imag, -w.real)


def _cbrt(x):
    """The principal cube root of a complex number, |z|^(1/3) e^(i arg(z)/3), in double precision (a zero is
    its own root, signs kept, as a real zero is); reals by numpy's cbrt."""
    if x.dtype.kind != "c":
        return np.cbrt(x)
    z = x.astype(np.complex128)
    r, third = np.cbrt(np.abs(z)), np.arctan2(z.imag, z.real) / 3
    return np.where(x == 0, x, _parts(x.dtype, r * np.cos(third), r * np.sin(third)))


def _log_plus_one(x):
    """numpy's complex log1p is log(1 + z), which loses the real part's digits near 0 (3e-5 relative in
    complex64 at 1e-4 + 2e-4j): the real part is log1p(x(2 + x) + y^2) / 2 there, the imaginary part
    atan2(y, 1 + x); complex64 computes in double."""
    if x.dtype.kind != "c":
        return np.log1p(x)
    z = x.astype(np.complex128)
    re, im = z.real, z.imag
    near = np.abs(z) < 0.5
    real = np.where(near, 0.5 * np.log1p(re * (2 + re) + im * im), np.log(np.hypot(1 + re, im)))
    return _parts(x.dtype, real, np.arctan2(im, 1 + re))


def _logistic(x):
    return (1 / (1 + np.exp(-x.astype(np.float64) if x.dtype.itemsize < 4 else -x))).astype(x.dtype)


def _round_afz(x):
    """Ties away from zero: trunc(x), one step further from zero where the dropped part is at least a half. Not
    floor(|x| + 0.5): that sum rounds 0.49999997f up to 1, and sign(x) * ... loses -0.0."""
    t = np.trunc(x)
    return np.where(np.abs(x - t) >= 0.5, t + np.copysign(np.ones_like(t), x), t).astype(x.dtype)


def _sign(x):
    """The spec's sign: a zero keeps its sign (numpy's sign(-0.0) is +0.0). A complex x is (NaN, NaN) when a part
    is NaN, (0, 0) when it is zero, else x / abs(x), each part divided by the real |x| (XLA's, and numpy's at
    finite x: sign(-0 + 1j) is -0 + 1j, where a complex quotient by (|x|, 0) gave +0), NaN for an infinite x
    (numpy's sign gives the limit there: hj.numpy.sign's composite)."""
    if x.dtype.kind != "c":
        return np.where(x == 0, x, np.sign(x))
    magnitude = np.abs(x)
    with np.errstate(invalid="ignore", divide="ignore"):
        unit = _parts(x.dtype, x.real / magnitude, x.imag / magnitude)
    nan = np.isnan(unit.real) | np.isnan(unit.imag)   # a NaN part, or an infinite x
    return np.where(x == 0, np.zeros((), x.dtype), np.where(nan, np.array(complex(np.nan, np.nan), x.dtype), unit))


def _same_type(fn):
    """Elementwise ops: compute with numpy, keep the result type (numpy scalars upcast otherwise)."""
    def build(op):
        dtype = dtype_of(op.result.type)
        return lambda *xs: np.asarray(fn(*xs), dtype=dtype)
    return build


_UNARY = {
    "negate": np.negative, "abs": np.abs, "sign": _sign, "exponential": np.exp,
    "exponential_minus_one": np.expm1, "log": np.log, "log_plus_one": _log_plus_one, "sqrt": np.sqrt,
    "rsqrt": lambda x: 1 / np.sqrt(x), "cbrt": _cbrt, "tanh": np.tanh, "logistic": _logistic,
    "sine": np.sin, "cosine": np.cos, "tan": np.tan, "floor": np.floor, "ceil": np.ceil,
    "round_nearest_even": np.round, "round_nearest_afz": _round_afz,
    "not": lambda x: np.logical_not(x) if x.dtype == np.bool_ else np.invert(x),
}
_BINARY = {
    "add": np.add, "subtract": np.subtract, "multiply": np.multiply, "maximum": _maximum,
    "minimum": _minimum, "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor,
    "atan2": _atan2, "shift_left": np.left_shift, "shift_right_arithmetic": _shift_right_arithmetic,
    "shift_right_logical": _shift_right_logical, "power": _power, "divide": _divide, "remainder": np.fmod,
}
_COMPARE = {"EQ": np.equal, "NE": np.not_equal, "LT": np.less, "LE": np.less_equal, "GT": np.greater,
            "GE": np.greater_equal}


def _total_order_key(x):
    """Floats as integers in IEEE totalOrder (-NaN < -inf < ... < -0 < +0 < ... < +inf < +NaN): the bits,
    negatives mirrored below zero."""
    bits = np.dtype(f"i{x.dtype.itemsize}")
    i = np.ascontiguousarray(x).view(bits).astype(np.int64)
    return np.where(i < 0, np.iinfo(bits).min - i - 1, i)   # -0 (the bits of min) just below +0


def _lexicographic(direction):
    """Complex LT, LE, GT, GE: the real parts decide unless they are equal, then the imaginary parts (numpy's
    complex comparisons are false whenever a part is NaN, even one that does not decide)."""
    strict, last = _COMPARE[direction.replace("E", "T")], _COMPARE[direction]
    return lambda a, b: strict(a.real, b.real) | ((a.real == b.real) & last(a.imag, b.imag))


def _compare(op):
    """compare_type TOTALORDER orders floats by totalOrder (NaNs by sign and payload, -0 before +0); complex
    numbers are ordered lexicographically, as (real, imag) pairs; the others (FLOAT, SIGNED, UNSIGNED) are numpy's
    comparison of the operands' own type."""
    direction = enum_attr(op, "comparison_direction")
    compare = _COMPARE[direction]
    total = "compare_type" in op.attributes and enum_attr(op, "compare_type") == "TOTALORDER"
    operand = dtype_of(op.operands[0].type)
    if total and _is_float(operand):
        return lambda a, b: compare(_total_order_key(a), _total_order_key(b))
    if operand.kind == "c" and direction not in ("EQ", "NE"):
        return _lexicographic(direction)
    return compare


def _convert(op):
    """numpy's astype (to bfloat16 rounded once: types.astype); complex -> real or integer keeps the real part
    (StableHLO's rule; numpy would warn), but complex -> i1 is true for every nonzero number (the spec's rule for
    booleans: 1j is true)."""
    dtype = dtype_of(op.result.type)
    if dtype.kind != "c" and dtype_of(op.operands[0].type).kind == "c":
        if dtype == np.bool_:
            return lambda x: np.asarray(x) != 0
        return lambda x: astype(np.real(x), dtype)
    return lambda x: astype(x, dtype)


OPS.update({f"stablehlo.{name}": _same_type(fn) for name, fn in {**_UNARY, **_BINARY}.items()})
OPS.update({
    "stablehlo.compare": _compare,
    "stablehlo.select": _same_type(np.where),
    "stablehlo.remainder": _remainder_builder,
    "stablehlo.is_finite": lambda op: np.isfinite,
    "stablehlo.convert": _convert,
})
