"""Target rewrites of transcendental ops into basic StableHLO ops, where IREE 3.13's own lowering of the op
cannot link or loses accuracy. StableHLO -> StableHLO, listed per target in quirks.py; the frontend emits the
spec's op (stablehlo.sine ...) and the reference backend runs it exactly.

What IREE does with each (measured, tests/test_legalize.py): llvm-cpu (and vmvx, whose constants llvm-cpu
folds) cannot link f64 sine, cosine, tan, tanh, atan2, cbrt and remainder (undefined symbols sin, fmod ...),
and vmvx cannot lower tan or cbrt at all. Below f64, on every target (cuda's too), sine/cosine/tan/atan2/cbrt
are MLIR's polynomial approximations: the f32 argument reduction loses accuracy linearly in |x| (error 1e-5
at x = 100, garbage beyond 1e7), cbrt is 8-16 ulp off and NaN at +-inf. cuda calls libdevice for f64
(__nv_sin, __nv_atan2, __nv_cbrt, __nv_tanh, __nv_expm1, __nv_fmod): those it keeps.

- sine, cosine, tan: exact argument reduction (Payne-Hanek, in integers): |x| = M * 2**E is multiplied by
  the 192 (f32: 128) bits of 2/pi that matter for this E (picked from a table by a chain of selects on E),
  in 32-bit limbs in u64. The product's two integer bits are the quadrant q, its fraction bits the angle
  theta in [-pi/4, pi/4], to full precision even next to a multiple of pi/2; Taylor kernels on theta.
- atan2: atan on [0, tan(pi/8)] by a fitted polynomial (tools/fit_special.py), reached by
  atan(t) = pi/4 + atan((t-1)/(t+1)) and atan(x) = pi/2 - atan(1/x); numpy's signed zeros and infinities.
- cbrt: exp(log|x| / 3) and a Newton step. f64 expm1, log1p: llvm-cpu's are exp(x) - 1 and log(1 + x)
  (expm1(1e-20) = 0): their series near 0.
- tanh (f64): tanh|x| = -expm1(-2|x|) / (2 + expm1(-2|x|)).
- remainder (f64; on vmvx every float, whose own is IEEE's remainder and nan for a subnormal divisor): C's fmod,
  exact for any quotient, in integers on the mantissas (a while loop shifts the dividend's extra exponent in).
f16/bf16 operands compute in f32 and round once. Nothing here relies on IEEE rounding of an intermediate
(vmvx folds (x + 1) - 1 into x; llvm-cpu contracts a * b + c into an fma).
"""
from __future__ import annotations

import functools
import math
from fractions import Fraction

import numpy as np
from iree.compiler import ir

from ..dialects import regions, stablehlo as hlo
from ..dialects.types import dtype_of
from .legalize import walk
from .values import V, where

F32, F64 = np.dtype(np.float32), np.dtype(np.float64)
_HALF = ("float16", "bfloat16")
_FORMAT = {F32: (23, 127), F64: (52, 1023)}      # (mantissa bits, exponent bias)


def horner(u, coefficients):
    """sum(c_k u**k), constant first (u a V or a frontend Tensor: only + and * are used)."""
    acc = None
    for c in reversed(coefficients):
        acc = c if acc is None else acc * u + c
    return acc


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
_LIMBS = {F64: 6, F32: 4}
_CHUNK_VALUES = [0] * _LEAD_ZEROS + [
    (two_over_pi_bits(32 * (_CHUNKS - _LEAD_ZEROS)) >> (32 * (_CHUNKS - _LEAD_ZEROS - 1 - i))) & 0xFFFFFFFF
    for i in range(_CHUNKS - _LEAD_ZEROS)]
# PAIRS[j] = chunk j and j+1 as one u64: a 32-bit window at any bit offset within chunk j is one shift
_PAIRS = [(_CHUNK_VALUES[j] << 32) | _CHUNK_VALUES[j + 1] for j in range(_CHUNKS - 1)]
_PIO2 = Fraction(2 ** 1184, two_over_pi_bits(1184))            # pi/2 to ~1180 bits
_PIO2_SPLIT = {  # pi/2 = HI + LO, HI in the dtype, LO its rounding error
    d: (float(t(_PIO2)), float(_PIO2 - Fraction(float(t(_PIO2))))) for d, t in
    ((F64, float), (F32, lambda v: np.float32(float(v))))}
_M32 = 0xFFFFFFFF
U64, I32 = np.dtype(np.uint64), np.dtype(np.int32)


def _window(c: V, offset: V, first: int, last: int, count: int) -> list[V]:
    """The `count` 32-bit limbs of 2/pi starting at bit `offset` of chunk c (most significant first),
    for c in [first, last]: PAIRS[c + k], k < count, by a barrel shifter on the bits of c - first, the largest
    first: stage b moves the table down by 2**b where that bit is set, and keeps only the entries the smaller
    shifts can still reach. f64: 62 selects on 6 bit tests, where a chain of selects per limb took 192 compares
    and 192 selects: IREE compiled five f64 trig ops in 1.4 s against 2.0, test_complex's complex128 table in
    19.9 s against 23.1 (2-vCPU Xeon, 2026-12-06)."""
    index = c - first
    bits = max(last - first, 1).bit_length()
    table: list = [_PAIRS[first + i] for i in range(last - first + count)]    # ints until a select makes a V
    for b in reversed(range(bits)):
        step, keep = 1 << b, count + (1 << b) - 1     # entries shifts below 2**b can still reach
        set_ = ((index >> b) & 1) == 1
        shifted = []
        for i in range(min(keep, len(table))):
            # c + k beyond last + count - 1 (no c reaches it), or the same chunk either way: no select
            if i + step >= len(table) or isinstance(table[i], int) and table[i] == table[i + step]:
                shifted.append(table[i])
            else:
                low = table[i] if isinstance(table[i], V) else offset.splat(table[i])
                shifted.append(where(set_, table[i + step], low))
        table = shifted
    return [((pair if isinstance(pair, V) else offset.splat(pair)) << offset >> 32) & _M32 for pair in table[:count]]


def _product_limbs(mantissa: V, window: list[V], wide: bool) -> list[V]:
    """M * window mod 2**(32 limbs), in 32-bit limbs from the least significant (M of two limbs if wide)."""
    hi, lo = mantissa >> 32, mantissa & _M32
    parts = [[lo * w] for w in window]
    if wide:
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
    return product


def reduce_quadrant(a: V) -> tuple[V, V]:
    """(q, theta) with a = (4n + q) * pi/2 + theta, |theta| <= pi/4, for a >= pi/4 of a's dtype (f32 or
    f64), by exact integer arithmetic; other a give garbage that callers select away."""
    (mantissa_bits, bias), limbs = _FORMAT[a.dtype], _LIMBS[a.dtype]
    bits = a.bits().to(U64)
    field = (bits >> mantissa_bits).to(I32)                 # a = M * 2**E, E = field - bias - mantissa
    mantissa = (bits & ((1 << mantissa_bits) - 1)) | (1 << mantissa_bits)
    # 2/pi's bits from position E - 1 on (earlier ones give whole turns): chunk c, bit offset within it
    e2 = field - (bias + mantissa_bits + 2)
    offset = (e2 & 31).to(U64)
    first = (-mantissa_bits - 3) // 32 + _LEAD_ZEROS          # c for a = pi/4
    last = (bias - mantissa_bits - 1) // 32 + _LEAD_ZEROS      # c for inf and nan
    c = ((e2 >> 5) + _LEAD_ZEROS).maximum(first).minimum(last)
    window = _window(c, offset, first, last, limbs)[::-1]
    product = _product_limbs(mantissa, window, wide=mantissa_bits >= 32)
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
        term = where(up, n, f).to(a.dtype) * float(2.0 ** -(30 + 32 * (limbs - 1 - k)))
        turns = term if turns is None else turns + term
    hi, lo = _PIO2_SPLIT[a.dtype]
    theta = turns * hi + turns * lo
    q = (((top >> 30) + up.to(U64)) & 3).to(I32)
    return q, where(up, -theta, theta)


# --- kernels on [-pi/4, pi/4] ------------------------------------------------------------------------

def _taylor(first: int, terms: int) -> tuple[float, ...]:
    """Coefficients of s**k of sum_k (-1)**(k + first//2) / (2k + first)! (sin: first=3, cos: first=4)."""
    return tuple(float(Fraction((-1) ** ((k * 2 + first) // 2), math.factorial(2 * k + first)))
                 for k in range(terms))


_SIN = {F64: _taylor(3, 8), F32: _taylor(3, 5)}   # to theta**17 / theta**11
_COS = {F64: _taylor(4, 8), F32: _taylor(4, 5)}   # to theta**18 / theta**12


def sin_kernel(theta):
    """sin on [-pi/4, pi/4] (theta a V or a frontend Tensor of f32 or f64)."""
    s = theta * theta
    return theta + theta * s * horner(s, _SIN[theta.dtype])


def cos_kernel(theta):
    s = theta * theta
    return 1 - 0.5 * s + s * s * horner(s, _COS[theta.dtype])


def _reduced(x: V):
    """(sin theta, cos theta, q) for |x| = (4n + q) pi/2 + theta."""
    a = x.abs()
    q, theta = reduce_quadrant(a)
    small = a < math.pi / 4
    theta = where(small, a, theta)
    q = where(small, 0, q)
    return sin_kernel(theta), cos_kernel(theta), q


def _finish(x: V, y: V, odd: bool) -> V:
    if odd:
        y = where(x.signbit(), -y, y)
    return where(x.is_finite(), y, np.nan)


def sine(x: V) -> V:
    s, c, q = _reduced(x)
    y = where((q & 1) == 1, c, s)
    return _finish(x, where((q & 2) == 2, -y, y), odd=True)


def cosine(x: V) -> V:
    s, c, q = _reduced(x)
    y = where((q & 1) == 1, s, c)
    return _finish(x, where(((q + 1) & 2) == 2, -y, y), odd=False)


def tan(x: V) -> V:
    s, c, q = _reduced(x)
    return _finish(x, where((q & 1) == 1, -c / s, s / c), odd=True)


# --- atan2 ---------------------------------------------------------------------------------------------

# atan(z) = z + z*s*P(u), s = z**2 in [0, tan(pi/8)**2], u = 2s/tan(pi/8)**2 - 1 (tools/fit_special.py)
_TAN_PI_8 = math.tan(math.pi / 8)
_ATAN = {
    # atan float64: degree 10, max relative error 1.8e-16
    F64: (-0.3171618194239173, 0.015247015915512188, -0.0008672151785396302, 5.3558515673225723e-05,
          -3.4742616363432327e-06, 2.3286126835259806e-07, -1.5976280884166548e-08,
          1.1154094912751123e-09, -7.894957049499994e-11, 5.732324457376465e-12,
          -4.139657860196088e-13),
    # atan float32: degree 4, max relative error 1.2e-07
    F32: (-0.3171618194239173, 0.015246942708419777, -0.0008672101549504704, 5.3850993238098126e-05,
          -3.494331159527703e-06),
}


def _atan_unit(t: V) -> V:
    """atan(t) for t in [0, 1]."""
    big = t > _TAN_PI_8
    z = where(big, (t - 1) / (t + 1), t)
    s = z * z
    r = z + z * s * horner(s * (2 / _TAN_PI_8 ** 2) - 1, _ATAN[t.dtype])
    return where(big, math.pi / 4 + r, r)


def atan2(y: V, x: V) -> V:
    """numpy's arctan2, signed zeros and infinities included (atan2(+-0, -0) = +-pi ...)."""
    ax, ay = x.abs(), y.abs()
    swap = ay > ax
    t = where(swap, ax / ay, ay / ax)
    t = where((ax == 0) & (ay == 0), 0.0, t)            # 0/0: the angle is 0 (or pi, below)
    t = where((ax == np.inf) & (ay == np.inf), 1.0, t)  # inf/inf: pi/4 (or 3pi/4)
    r = _atan_unit(t)
    r = where(swap, math.pi / 2 - r, r)
    r = where(x.signbit(), math.pi - r, r)
    return where(y.signbit(), -r, r)


# --- cbrt; expm1, log1p, tanh (f64); fmod --------------------------------------------------------------

def cbrt(x: V) -> V:
    """exp(log|x|/3) refined by one Newton step (error squared: a few ulp to ~1 ulp), subnormals scaled into
    the normal range first; 0, inf and nan come back as they are, with x's sign."""
    mantissa_bits, bias = _FORMAT[x.dtype]
    a = x.abs()
    k = mantissa_bits + 8                                  # a * 2**(3k) is normal for every subnormal a
    tiny = a < float(2.0 ** -(bias - 1))
    scaled = where(tiny, a * float(2.0 ** (3 * k)), a)
    y = (scaled.unary("log") * float(1 / 3)).unary("exponential")
    y = y - (y - scaled / (y * y)) * float(1 / 3)
    y = where(tiny, y * float(2.0 ** -k), y)
    y = where((a == 0) | (a == np.inf), a, y)
    return where(x.signbit(), -y, y)


# expm1 = x + x^2 P(x) on |x| <= ln2/2 (Taylor to x^14); log1p = 2 atanh(s) = 2s + 2s^3 Q(s^2), s = x / (2 + x),
# on 1 + x in [1/sqrt2, sqrt2] (to s^23)
_EXPM1_P = tuple(1 / math.factorial(k) for k in range(2, 15))
_LOG1P_Q = tuple(1 / (2 * k + 1) for k in range(1, 12))


def expm1(x: V) -> V:
    """llvm-cpu's f64 expm1 is exp(x) - 1 (expm1(1e-20) = 0): a Taylor polynomial near 0, exp(x) - 1 beyond."""
    near = x + x * x * horner(x, _EXPM1_P)
    return where(x.abs() <= float(np.log(2) / 2), near, x.unary("exponential") - 1)


def log1p(x: V) -> V:
    """llvm-cpu's f64 log1p is log(1 + x): the atanh series near 0, log(1 + x) beyond."""
    s = x / (2 + x)
    near = 2 * s + 2 * s * (s * s) * horner(s * s, _LOG1P_Q)
    return where((x >= float(np.sqrt(0.5) - 1)) & (x <= float(np.sqrt(2) - 1)), near, (1 + x).unary("log"))


def tanh(x: V) -> V:
    """tanh|x| = -expm1(-2|x|) / (2 + expm1(-2|x|)), exact to ~1 ulp, with x's sign."""
    e = expm1(-2 * x.abs())
    t = -e / (e + 2)
    return where(x < 0, -t, t)


I64 = np.dtype(np.int64)
_INT = {F32: I32, F64: I64}        # a signed int as wide as the float: converts exactly from m < 2**53 (2**24)


def _integer_remainder(x: V, y: V) -> V:
    return V(hlo.binary("remainder", x.value, y.value))


def _largest(x: V) -> V:
    """The largest element of x, 0-d."""
    if not x.shape:
        return x
    return V(hlo.reduce([x.value], [hlo.constant(0, x.dtype)], list(range(len(x.shape))), "maximum")[0])


def _shift_step(m: V, divisor: V, shift: V, done: V | int, step: int) -> V:
    """m's next step of (m * 2**shift) mod divisor, `done` bits of the shift shifted in already."""
    bits = (shift - shift.minimum(done)).minimum(step)
    return _integer_remainder(m << bits, divisor)


def _shifted_remainder(m: V, divisor: V, shift: V, step: int) -> V:
    """(m * 2**shift) mod divisor for m < divisor < 2**(64 - step) (u64), `step` bits of the shift at a time: a
    while loop over a 0-d count of the steps the largest shift needs (none for quotients below 2**step), which
    carries m alone. The count is taken once, before the loop: a reduction in the loop's condition cost
    ~100 ms per 2**20 elements."""
    most = _largest(shift) + (step - 1)
    steps = V(hlo.binary("divide", most.value, most.splat(step).value))

    def more(i, m):
        return [(V(i) < steps).value]

    def next_step(i, m):
        i = V(i)
        done = V(hlo.broadcast_in_dim((i * step).value, shift.shape, []))
        return [(i + 1).value, _shift_step(V(m), divisor, shift, done, step).value]
    return V(hlo.while_([steps.splat(0).value, m.value], more, next_step)[1])


def _shifted_remainder_unrolled(m: V, divisor: V, shift: V, step: int, largest_shift: int) -> V:
    """As _shifted_remainder, in the steps the largest possible shift needs (f64: 186, f32: 7), for the bodies of
    reduce, sort, scatter ...: IREE lowers no while there (their ops become a linalg region's scalar code)."""
    for k in range(-(-largest_shift // step)):
        m = _shift_step(m, divisor, shift, k * step, step)
    return m


def _scaled(m: V, exponent: V, dtype: np.dtype) -> V:
    """The bits (u64) of m * 2**(exponent - bias - mantissa bits) in dtype, for m below 2**(mantissa bits + 1)
    and exponent >= 1 (fmod's result, which is representable): a normal result takes m's own float bits with the
    exponent field moved, a subnormal one is m shifted into place. Integers only: no float op meets a subnormal
    (llvm-cpu flushes some, vmvx's f32 remainder by a subnormal gave nan)."""
    mantissa_bits, bias = _FORMAT[dtype]
    fm = m.to(_INT[dtype]).to(dtype).bits().to(I64)        # exact: m fits the mantissa
    field = (fm >> mantissa_bits) + (exponent.to(I64) - (bias + mantissa_bits))
    normal = (fm & ((1 << mantissa_bits) - 1)) | (field << mantissa_bits)
    subnormal = m.to(I64) << (exponent.to(I64) - 1)       # m == 0 lands here too: +0
    return where((field >= 1) & (m != 0), normal, subnormal).to(U64)


def _fields(a: V, b: V) -> tuple[V, V, V, V, V]:
    """(|a|'s bits, |b|'s bits, their exponents (subnormals: 1), regular) as u64; regular: a and b finite, b not
    zero, |a| >= |b| (where fmod is neither nan nor a). Compares on the bits: no NaN compare for vmvx to get wrong."""
    mantissa_bits, _ = _FORMAT[a.dtype]
    sign = 1 << (8 * a.dtype.itemsize - 1)
    ua, ub = ((x.bits() & (sign - 1)).to(U64) for x in (a, b))
    ea, eb = ((u >> mantissa_bits).maximum(1) for u in (ua, ub))
    return ua, ub, ea, eb, (ua < sign - (1 << mantissa_bits)) & (ua >= ub) & (ub != 0)   # (inf's bits)


def _fmod_result(a: V, b: V, m: V) -> V:
    """fmod(a, b) from m = (ma 2**(ea - eb)) mod mb; numpy's special cases: nan for a nan operand, an infinite a or
    a zero b; a itself when |a| < |b| (b infinite included); zeros with a's sign."""
    mantissa_bits, _ = _FORMAT[a.dtype]
    sign = 1 << (8 * a.dtype.itemsize - 1)
    ua, ub, _, eb, regular = _fields(a, b)
    nan = (ua > sign - (1 << mantissa_bits)) | (ub > sign - (1 << mantissa_bits)) | ~(regular | (ua < ub))
    bits = _scaled(m, eb, a.dtype).to(a.bits().dtype) | (a.bits() & sign)
    return where(regular, V(hlo.bitcast_convert(bits.value, a.dtype)), where(nan, np.nan, a))


def fmod(a: V, b: V, in_body: bool = False) -> V:
    """C's fmod (the dividend's sign) of f32 or f64, exact for every quotient, as the C library computes it (IREE
    cannot link f64 fmod; a - trunc(a/b) * b is off in the last bits from |a/b| ~ 1 on and loses every digit past
    2**53). |a| = ma 2**ea and |b| = mb 2**eb in integers (subnormals: exponent 1, no implicit bit); the
    remainder is (ma 2**(ea - eb)) mod mb, times 2**eb. The result is assembled from a and b behind a barrier: IREE
    would merge those ops with the ones before the loop and keep each of their tensors across it (2**20 f64
    elements that need no step: 190 ms, 40 ms behind it; the trunc formula took 10). `in_body` (a body IREE
    lowers to scalar code, where no while goes): the steps of the largest shift unrolled."""
    mantissa_bits, bias = _FORMAT[a.dtype]
    ua, ub, ea, eb, regular = _fields(a, b)
    ma = ua - ((ea - 1) << mantissa_bits)                    # the implicit bit where the number is normal
    mb = where(regular, ub - ((eb - 1) << mantissa_bits), 1)
    m, shift, step = _integer_remainder(ma, mb), where(regular, ea - eb, 0), 63 - mantissa_bits
    if in_body:        # the largest shift: the largest finite exponent field (2 bias) less the smallest (1)
        return _fmod_result(a, b, _shifted_remainder_unrolled(m, mb, shift, step, 2 * bias - 1))
    m = _shifted_remainder(m, mb, shift, step)
    a, b = (V(v) for v in hlo.optimization_barrier([a.value, b.value]))
    return _fmod_result(a, b, m)


# --- the rewrites -----------------------------------------------------------------------------------------

_BUILD = {"stablehlo.sine": sine, "stablehlo.cosine": cosine, "stablehlo.tan": tan, "stablehlo.atan2": atan2,
          "stablehlo.cbrt": cbrt, "stablehlo.tanh": tanh, "stablehlo.remainder": fmod,
          "stablehlo.exponential_minus_one": expm1, "stablehlo.log_plus_one": log1p}


_BUILD_IN_BODY = {"stablehlo.remainder": functools.partial(fmod, in_body=True)}
_TENSOR_REGIONS = ("func.func", "stablehlo.while", "stablehlo.if", "stablehlo.case")


def _in_scalar_body(op) -> bool:
    """Whether op is in the body of a reduce, sort, scatter, map ... (at any depth): IREE lowers those bodies to
    the scalar code of a linalg region, where a while cannot go."""
    parent = op.parent
    while parent is not None and parent.name != "func.func":
        if parent.name not in _TENSOR_REGIONS:
            return True
        parent = parent.parent
    return False


def _in_float32_at_least(build, operands: list[V]) -> V:
    """build(operands), f16/bf16 ones computed in f32 and rounded once."""
    dtype = operands[0].dtype
    if dtype.name not in _HALF:
        return build(*operands)
    return build(*(x.to(F32) for x in operands)).to(dtype)


def _mapped(build, operands: list[V]) -> V:
    """build(operands) as the scalar body of one stablehlo.map over their elements. Built on the tensors, the
    exact reduction's integer limbs feed several ops each, and IREE 3.13 cut that graph into many dispatches
    (f64 sine: 14, each writing its intermediates to memory; 2^20 points took 25.5 ms against numpy's 9.4); a
    map body is one loop body, one dispatch (2026-12-05)."""
    return V(regions.map([x.value for x in operands], lambda *scalars: build([V(s) for s in scalars]).value))


def by_basic_ops(name: str, names: tuple[str, ...], dtype_names: tuple[str, ...]):
    """The rewrite `name` (what `explain` lists) of the ops `names` (stablehlo.sine ...) whose result dtype is
    one of `dtype_names` into basic ops: inside a body (a reduce's, a map's ...) where the op stands, else as
    the body of a stablehlo.map of its own (`_mapped`). Remainder stays on the tensors: its exact loop cannot go
    in a body (its loop-free variant, _BUILD_IN_BODY's, serves ops already in one), and neither do 0-d ops."""
    def rewrite(module: ir.Module) -> int:
        count = 0
        for op in list(walk(module.operation)):
            if op.name not in names or dtype_of(op.results[0].type).name not in dtype_names:
                continue
            with ir.InsertionPoint(op), op.location:
                operands = [V(x) for x in op.operands]
                if _in_scalar_body(op):
                    new = _in_float32_at_least(_BUILD_IN_BODY.get(op.name, _BUILD[op.name]), operands)
                elif op.name in _BUILD_IN_BODY or not operands[0].shape:
                    new = _in_float32_at_least(_BUILD[op.name], operands)
                else:
                    new = _mapped(lambda xs, build=_BUILD[op.name]: _in_float32_at_least(build, xs), operands)
            op.result.replace_all_uses_with(new.value)
            op.erase()
            count += 1
        return count
    rewrite.__name__ = rewrite.__qualname__ = name
    return rewrite


_FLOATS = ("float16", "bfloat16", "float32", "float64")
_NOT_F64 = ("float16", "bfloat16", "float32")
TRIG = ("stablehlo.sine", "stablehlo.cosine", "stablehlo.tan", "stablehlo.atan2")
F64_ONLY = ("stablehlo.tanh", "stablehlo.remainder", "stablehlo.exponential_minus_one", "stablehlo.log_plus_one")

# llvm-cpu and vmvx: every float trig op and cbrt (f64 does not link, f32 is inaccurate; vmvx lowers neither tan
# nor cbrt), f64 tanh and fmod (no link), expm1 and log1p (exp(x) - 1 and log(1 + x))
trig_by_exact_reduction = by_basic_ops("trig_by_exact_reduction", TRIG, _FLOATS)
cbrt_by_exp_log = by_basic_ops("cbrt_by_exp_log", ("stablehlo.cbrt",), _FLOATS)
f64_by_basic_ops = by_basic_ops("f64_by_basic_ops", F64_ONLY, ("float64",))
# cuda: its f64 ops call libdevice (__nv_sin, __nv_cbrt ...); below f64, trig and cbrt are MLIR's polynomial
# approximations, as on llvm-cpu
trig_below_f64_by_exact_reduction = by_basic_ops("trig_below_f64_by_exact_reduction", TRIG, _NOT_F64)
cbrt_below_f64_by_exp_log = by_basic_ops("cbrt_below_f64_by_exp_log", ("stablehlo.cbrt",), _NOT_F64)
# vmvx: its float remainder below f64 is IEEE 754's (the quotient rounded to nearest: remainder(-1.93, 2.43) gave
# 0.5, fmod's is -1.93) and nan for a subnormal divisor (1 % 1e-45 in f32): the exact fmod (f16/bf16 in f32)
remainder_exactly_below_f64 = by_basic_ops("remainder_exactly_below_f64", ("stablehlo.remainder",), _NOT_F64)
CPU = [trig_by_exact_reduction, cbrt_by_exp_log, f64_by_basic_ops]
VMVX = [remainder_exactly_below_f64]
CUDA = [trig_below_f64_by_exact_reduction, cbrt_below_f64_by_exp_log]
