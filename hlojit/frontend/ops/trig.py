"""sin, cos, tan with exact argument reduction, and arctan, arctan2, arcsin, arccos, for f32 and f64.

Why not StableHLO's sine/cosine/tan/atan2: on IREE 3.13's llvm-cpu the f32 sine/cosine lose accuracy
linearly in |x| (error 1e-5 at x = 100, garbage beyond 1e7, -inf at 1e30), tan does not lower on
vmvx, and the f64 versions do not link at all. So every target gets the same arithmetic from here:

- Reduction (Payne-Hanek, in integers, exact): |x| = M * 2**E is multiplied by the 192 (f32: 128) bits
  of 2/pi that matter for this E (picked from a table of 2/pi's bits by a chain of selects on E), in
  32-bit limbs in u64. The product's two integer bits are the quadrant q, its fraction bits the
  angle theta in [-pi/4, pi/4], to full precision even for the inputs closest to a multiple of pi/2.
- Kernels: Taylor polynomials of sin and cos on [-pi/4, pi/4], to the term below the dtype's ulp.
- Inverses: atan on [0, tan(pi/8)] by a fitted polynomial (tools/fit_special.py), reached by
  atan(t) = pi/4 + atan((t-1)/(t+1)) and atan(x) = pi/2 - atan(1/x); the rest follows from atan2.

The price is compile time: IREE compiles f32 sin in ~0.3 s more than exp, but cuts f64's 6-limb
reduction into about a dozen dispatches (~2 s more per call site with different shapes).
"""
from __future__ import annotations

import math as _pymath
from fractions import Fraction

import numpy as np

from .. import dtypes
from ..tensor import Tensor
from . import elementwise as ew
from ._core import convert
from .math import FORMATS, _bits, signbit

# --- the bits of 2/pi ------------------------------------------------------------------------------


def _arctan_inverse(n: int, scale: int) -> int:
    """atan(1/n) * scale in integers (the alternating series; scale carries the guard bits)."""
    total, power, k, sign = 0, scale // n, 1, 1
    while power:
        total += sign * (power // k)
        power //= n * n
        k += 2
        sign = -sign
    return total


def two_over_pi_bits(bits: int) -> int:
    """floor(2/pi * 2**bits), from Machin's pi = 16 atan(1/5) - 4 atan(1/239) with 64 guard bits."""
    scale = 1 << (bits + 64)
    pi = 16 * _arctan_inverse(5, scale) - 4 * _arctan_inverse(239, scale)
    return ((2 * scale * scale) // pi) >> 64


_LEAD_ZEROS = 2       # zero chunks before 2/pi's first bit: reductions of |x| >= pi/4 start there
_CHUNKS = 39          # 32-bit chunks: bits of 2/pi up to 1184, enough for the largest f64 (E = 971)
# bits of 2/pi multiplied with the mantissa: enough for the mantissa, 2 quadrant bits and the fraction to
# its precision even for the input closest to a multiple of pi/2 (f64: ~61 bits cancel, f32: ~30)
_LIMBS = {dtypes.float64: 6, dtypes.float32: 4}
_CHUNK_VALUES = [0] * _LEAD_ZEROS + [
    (two_over_pi_bits(32 * (_CHUNKS - _LEAD_ZEROS)) >> (32 * (_CHUNKS - _LEAD_ZEROS - 1 - i))) & 0xFFFFFFFF
    for i in range(_CHUNKS - _LEAD_ZEROS)]
# PAIRS[j] = chunk j and j+1 as one u64: a 32-bit window at any bit offset within chunk j is one shift
_PAIRS = np.array([(_CHUNK_VALUES[j] << 32) | _CHUNK_VALUES[j + 1] for j in range(_CHUNKS - 1)], np.uint64)
_PIO2 = Fraction(2 ** 1184, two_over_pi_bits(1184))            # pi/2 to ~1180 bits
_PIO2_SPLIT = {  # pi/2 = HI + LO, HI in the dtype, LO its rounding error
    d: (float(t(_PIO2)), float(_PIO2 - Fraction(float(t(_PIO2))))) for d, t in
    ((dtypes.float64, float), (dtypes.float32, lambda v: np.float32(float(v))))}
_M32 = 0xFFFFFFFF


def _window(c: Tensor, offset: Tensor, first: int, last: int, count: int) -> list[Tensor]:
    """The `count` 32-bit limbs of 2/pi starting at bit `offset` of chunk c (most significant first),
    for c in [first, last]: PAIRS[c + k] picked by a chain of selects."""
    out = []
    for k in range(count):
        pair = None
        for j in range(first, last + 1):
            value = np.uint64(_PAIRS[j + k])
            pair = ew.as_tensor(value, "sin") if pair is None else ew.where(c == j, value, pair)
        out.append(((pair << offset) >> 32) & _M32)
    return out


def reduce_quadrant(a: Tensor) -> tuple[Tensor, Tensor]:
    """(q, theta) with a = (4n + q) * pi/2 + theta, |theta| <= pi/4, for a >= pi/4 of a's float dtype
    (f32 or f64), by exact integer arithmetic; other a give garbage that callers select away."""
    fmt, limbs = FORMATS[a.dtype], _LIMBS[a.dtype]
    bits = _bits(a)
    field = convert(bits >> fmt.mantissa, dtypes.int32)     # a = M * 2**E, E = field - bias - mantissa
    mantissa = convert((bits & ((1 << fmt.mantissa) - 1)) | (1 << fmt.mantissa), dtypes.uint64)
    # 2/pi's bits from position E - 1 on (earlier ones give whole turns): chunk c, bit offset within it
    e2 = field - (fmt.bias + fmt.mantissa + 2)
    offset = convert(e2 & 31, dtypes.uint64)
    first = (-fmt.mantissa - 3) // 32 + _LEAD_ZEROS          # c for a = pi/4
    last = (fmt.bias - fmt.mantissa - 1) // 32 + _LEAD_ZEROS  # c for inf and nan
    c = ew.binary("minimum", ew.binary("maximum", (e2 >> 5) + _LEAD_ZEROS, first), last)
    window = _window(c, offset, first, last, limbs)[::-1]
    hi, lo = mantissa >> 32, mantissa & _M32
    # M * window mod 2**(32 limbs), in 32-bit limbs from the least significant: 2 integer bits (the
    # quadrant), the rest the fraction of a turn's quarter
    parts = [[lo * w] for w in window]
    if fmt.mantissa >= 32:   # f32's mantissa fits the low limb
        for j, w in enumerate(window[:-1]):
            parts[j + 1].append(hi * w)
    product, carry = [], None
    for terms in parts:
        t = terms[0] & _M32
        for term in terms[1:]:
            t = t + (term & _M32)
        if carry is not None:
            t = t + carry
        product.append(t & _M32)
        carry = t >> 32
        for term in terms:
            carry = carry + (term >> 32)
    top = product[-1]
    # a fraction >= 1/2 rounds up to the next quadrant: theta = -(1 - fraction), negated in the limbs
    up = ((top >> 29) & 1) == 1
    fraction = product[:-1] + [top & ((1 << 30) - 1)]
    masks = [_M32] * (limbs - 1) + [(1 << 30) - 1]
    negated, carry = [], 1
    for limb, mask in zip(fraction, masks):
        t = (limb ^ mask) + carry
        negated.append(t & mask)
        carry = t >> 32
    turns = None
    for k, (n, f) in enumerate(zip(negated, fraction)):   # least significant first: one rounding at the end
        scale = 30 + 32 * (limbs - 1 - k)
        term = convert(ew.where(up, n, f), a.dtype) * float(2.0 ** -scale)
        turns = term if turns is None else turns + term
    hi_, lo_ = _PIO2_SPLIT[a.dtype]
    theta = turns * hi_ + turns * lo_
    q = convert(((top >> 30) + convert(up, dtypes.uint64)) & 3, dtypes.int32)
    return q, ew.where(up, -theta, theta)


# --- kernels on [-pi/4, pi/4] ------------------------------------------------------------------------

def horner(u: Tensor, coefficients) -> Tensor:
    """sum(c_k u**k), constant first."""
    acc = None
    for c in reversed(coefficients):
        acc = c if acc is None else acc * u + c
    return acc


def _taylor(first: int, terms: int) -> tuple[float, ...]:
    """Coefficients of s**k of sum_k (-1)**(k + first//2) / (2k + first)! (sin: first=3, cos: first=4)."""
    return tuple(float(Fraction((-1) ** ((k * 2 + first) // 2), _pymath.factorial(2 * k + first)))
                 for k in range(terms))


_SIN = {dtypes.float64: _taylor(3, 8), dtypes.float32: _taylor(3, 5)}   # to theta**17 / theta**11
_COS = {dtypes.float64: _taylor(4, 8), dtypes.float32: _taylor(4, 5)}   # to theta**18 / theta**12


def sin_kernel(theta: Tensor) -> Tensor:
    s = theta * theta
    return theta + theta * s * horner(s, _SIN[theta.dtype])


def cos_kernel(theta: Tensor) -> Tensor:
    s = theta * theta
    return 1 - 0.5 * s + s * s * horner(s, _COS[theta.dtype])


def _reduced(x: Tensor):
    """(sin theta, cos theta, q) for |x| = (4n + q) pi/2 + theta."""
    a = ew.unary("abs", x)
    q, theta = reduce_quadrant(a)
    small = a < _pymath.pi / 4
    theta = ew.where(small, a, theta)
    q = ew.where(small, 0, q)
    return sin_kernel(theta), cos_kernel(theta), q


def _finish(x: Tensor, y: Tensor, odd: bool) -> Tensor:
    if odd:
        y = ew.where(signbit(x), -y, y)
    return ew.where(ew.unary("isfinite", x), y, np.nan)


def sin(x: Tensor) -> Tensor:
    s, c, q = _reduced(x)
    y = ew.where((q & 1) == 1, c, s)
    return _finish(x, ew.where((q & 2) == 2, -y, y), odd=True)


def cos(x: Tensor) -> Tensor:
    s, c, q = _reduced(x)
    y = ew.where((q & 1) == 1, s, c)
    return _finish(x, ew.where(((q + 1) & 2) == 2, -y, y), odd=False)


def tan(x: Tensor) -> Tensor:
    s, c, q = _reduced(x)
    return _finish(x, ew.where((q & 1) == 1, -c / s, s / c), odd=True)


# --- inverse functions --------------------------------------------------------------------------------

# atan(z) = z + z*s*P(u), s = z**2 in [0, tan(pi/8)**2], u = 2s/tan(pi/8)**2 - 1 (tools/fit_special.py)
_TAN_PI_8 = _pymath.tan(_pymath.pi / 8)
_ATAN = {
    # atan float64: degree 10, max relative error 1.8e-16
    dtypes.float64: (-0.3171618194239173, 0.015247015915512188, -0.0008672151785396302, 5.3558515673225723e-05,
                     -3.4742616363432327e-06, 2.3286126835259806e-07, -1.5976280884166548e-08,
                     1.1154094912751123e-09, -7.894957049499994e-11, 5.732324457376465e-12,
                     -4.139657860196088e-13),
    # atan float32: degree 4, max relative error 1.2e-07
    dtypes.float32: (-0.3171618194239173, 0.015246942708419777, -0.0008672101549504704, 5.3850993238098126e-05,
                     -3.494331159527703e-06),
}


def atan_unit(t: Tensor) -> Tensor:
    """atan(t) for t in [0, 1]."""
    big = t > _TAN_PI_8
    z = ew.where(big, (t - 1) / (t + 1), t)
    s = z * z
    r = z + z * s * horner(s * (2 / _TAN_PI_8 ** 2) - 1, _ATAN[t.dtype])
    return ew.where(big, _pymath.pi / 4 + r, r)


def arctan(x: Tensor) -> Tensor:
    a = ew.unary("abs", x)
    inverted = a > 1
    r = atan_unit(ew.where(inverted, 1 / a, a))
    r = ew.where(inverted, _pymath.pi / 2 - r, r)
    return ew.where(signbit(x), -r, r)


def arctan2(y: Tensor, x: Tensor) -> Tensor:
    """numpy's arctan2, signed zeros and infinities included (atan2(+-0, -0) = +-pi ...)."""
    ax, ay = ew.unary("abs", x), ew.unary("abs", y)
    swap = ay > ax
    t = ew.where(swap, ax / ay, ay / ax)
    t = ew.where((ax == 0) & (ay == 0), 0.0, t)            # 0/0: the angle is 0 (or pi, below)
    t = ew.where((ax == np.inf) & (ay == np.inf), 1.0, t)  # inf/inf: pi/4 (or 3pi/4)
    r = atan_unit(t)
    r = ew.where(swap, _pymath.pi / 2 - r, r)
    r = ew.where(signbit(x), _pymath.pi - r, r)
    return ew.where(signbit(y), -r, r)


def arcsin(x: Tensor) -> Tensor:
    return arctan2(x, ew.unary("sqrt", (1 - x) * (1 + x)))


def arccos(x: Tensor) -> Tensor:
    return 2 * arctan2(ew.unary("sqrt", 1 - x), ew.unary("sqrt", 1 + x))
