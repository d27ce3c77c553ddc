"""The complex arithmetic and math ops of StableHLO, written out on (re, im) pairs of real values: the one
implementation of complex math on IREE's targets (the frontend emits stablehlo.sine ... on complex operands, and
`from_mlir` modules hold them too; the reference backend computes them with numpy).

IREE 3.13's own complex lowering of these ops kills the process (llvm-cpu: SIGFPE compiling a complex<f64> tan
of a constant), does not link (f64 sin, cos, atan2) or cannot load the values at all (vmvx), so each is built
here from real ops; those (sine, tan, atan2, expm1 ...) then get the accurate_math rewrites that follow in
quirks.QUIRKS. complex_pairs.py applies the rules (to whole functions on vmvx and cpu, op by op on cuda).

The values are numpy's (C99 Annex G, as glibc computes it) at infinite, NaN and signed-zero parts: each rule is
the textbook formula where that is right, and selects the Annex's value where the formula would make a NaN of
inf * 0 or inf - inf (exp(inf + i inf) is inf + i NaN, sqrt(x + i inf) is inf + i inf, sinh(+0 + i inf) is
+0 + i NaN ...). The formulas avoid overflow and cancellation where that is cheap: |z| is a scaled hypot, exp,
sinh and cosh take e^x in two factors past the overflow threshold (e^800 sin(1e-310) is finite), sqrt scales huge
and subnormal operands, log near |z| = 1 is log1p, tanh is Kahan's (no cosh 2x + cos 2y, which cancels near
y = pi/2 and overflows for |x| > 355), and log1p / expm1 keep small arguments' digits. sin, cos and tan are
the hyperbolic ones of iz (sin z = -i sinh(iz), as C99 defines them). power is numpy's algorithm: repeated
products for a whole exponent below 100 (npy_cpow), e^(b log a) otherwise.

Each rule of RULES takes the operands' parts ((re, im) ir.Values of a complex operand) and returns (re, im), or
one real value for abs; the `_`-named ones work on `values.V` pairs.
"""
from __future__ import annotations

import math

import numpy as np

from ..dialects import stablehlo as hlo
from .values import V, where

_PI = math.pi


# --- real helpers on V -------------------------------------------------------------------------------------

def _finfo(x: V):
    return np.finfo(x.dtype)


def _inf(x: V) -> V:
    return x.splat(np.inf)


def _is_inf(x: V) -> V:
    return x.abs() == np.inf


def _is_nan(x: V) -> V:
    return x != x


def _copysign(magnitude, sign: V) -> V:
    """|magnitude| with sign's sign bit (-0.0 and negative NaNs included); magnitude a V or a number. On the bits,
    not by a select of -m and m: vmvx makes a select of a constant -0.0 +0.0."""
    m = magnitude.abs() if isinstance(magnitude, V) else sign.splat(abs(magnitude))
    mask = 1 << (8 * sign.dtype.itemsize - 1)
    return V(hlo.bitcast_convert((m.bits() | (sign.bits() & mask)).value, sign.dtype))


def _signed_zero(sign: V) -> V:
    """0.0 with sign's sign bit, from the run-time bits: 0 * sign for a finite sign, which vmvx folds to +0.0 when
    the 0 is a constant (and inf * 0 with it)."""
    return _copysign(0.0, sign)


def _nan_like(x: V) -> V:
    return x.splat(np.nan)


def _exp_threshold(x: V) -> float:
    """A whole number below log(max float): e^t is finite (709 for f64, 88 for f32; glibc's split point)."""
    return float(int((_finfo(x).maxexp - 1) * math.log(2)))


def _exp_in_two_factors(x: V):
    """(e^a, e^b) with a + b = x and a <= the threshold: the product overflows only where e^x does, so a factor
    that is tiny (sin y for y = 1e-310) multiplied by one first and then the other keeps the result finite."""
    t = _exp_threshold(x)
    large = x > t
    a = where(large, t, x)
    b = where(large, x - t, 0.0)
    return a.unary("exponential"), b.unary("exponential")


def _sinh_cosh(x: V):
    """(sinh x, cosh x) from expm1 of |x|: sinh keeps small arguments' digits (e - 1/e would cancel)."""
    ax = x.abs()
    em = ax.unary("exponential_minus_one")
    e = em + 1.0
    sinh_abs = 0.5 * (em + em / e)
    cosh = 0.5 * (e + 1.0 / e)
    return _copysign(sinh_abs, x), cosh


def hypot_v(x: V, y: V) -> V:
    """sqrt(x**2 + y**2) as max * sqrt(1 + (min / max)**2): no overflow or underflow of the squares; inf if
    either part is infinite (even with a NaN other part, as C's hypot)."""
    ax, ay = x.abs(), y.abs()
    big, small = ax.maximum(ay), ax.minimum(ay)
    ratio = small / where(big == 0.0, 1.0, big)
    h = big * (1.0 + ratio * ratio).unary("sqrt")
    return where(_is_inf(x) | _is_inf(y), _inf(x), h)


# --- complex helpers on (V, V) ---------------------------------------------------------------------------

def _mul(a, b):
    """The textbook product (numpy's cmul, as npy_cpow multiplies)."""
    (ar, ai), (br, bi) = a, b
    return ar * br - ai * bi, ar * bi + ai * br


def _div(a, b):
    """numpy's complex quotient (Smith's: the ratio of b's smaller part to its larger, so br**2 + bi**2 never
    overflows), and with it numpy's signed zeros and infinities: 1 / (inf + 0j) is 0 (a quotient by b scaled by
    max(|br|, |bi|) was NaN there: inf / inf), logistic(-inf) 0; a zero b gives a / +0 part by part (1 / 0j is
    inf + nan j, as numpy's)."""
    (ar, ai), (br, bi) = a, b
    real_larger = br.abs() >= bi.abs()
    both_zero = (br == 0.0) & (bi == 0.0)
    big = where(real_larger, br, bi)
    small = where(real_larger, bi, br)
    rat = small / where(both_zero, 1.0, big)
    scl = 1.0 / (big + small * rat)
    re = where(real_larger, (ar + ai * rat) * scl, (ar * rat + ai) * scl)
    im = where(real_larger, (ai - ar * rat) * scl, (ai * rat - ar) * scl)
    return where(both_zero, _over_zero(ar), re), where(both_zero, _over_zero(ai), im)


def _over_zero(p: V) -> V:
    """p / +0: +-inf by p's sign, NaN for a zero or NaN p. Not the quotient itself: vmvx folds 0 / y to 0 where the
    0 is a constant (a real number's imaginary part), and 0 / 0 is NaN."""
    return where((p == 0.0) | _is_nan(p), _nan_like(p), _copysign(np.inf, p))


def _c99_mul(a, b):
    """C's complex product (gcc's __muldc3, what glibc's cpow multiplies b by log a with): the textbook one, but
    where both its parts are NaN and a factor has an infinite part, that factor's parts become +-1 and +-0 ("boxed"),
    the other's NaNs +-0, and the product is inf times that of the boxed factors (inf * (1 + 0i) stays infinite)."""
    (ar, ai), (br, bi) = a, b
    x, y = _mul(a, b)
    a_inf, b_inf = _is_inf(ar) | _is_inf(ai), _is_inf(br) | _is_inf(bi)

    def boxed(v):
        return _copysign(where(_is_inf(v), 1.0, v.splat(0.0)), v)

    def zero_nan(v):
        return where(_is_nan(v), _signed_zero(v), v)
    ar2, ai2 = where(a_inf, boxed(ar), zero_nan(ar)), where(a_inf, boxed(ai), zero_nan(ai))
    br2, bi2 = where(b_inf, boxed(br), zero_nan(br)), where(b_inf, boxed(bi), zero_nan(bi))
    ar2, ai2 = where(b_inf & ~a_inf, zero_nan(ar), ar2), where(b_inf & ~a_inf, zero_nan(ai), ai2)
    x2, y2 = _mul((ar2, ai2), (br2, bi2))
    recover = _is_nan(x) & _is_nan(y) & (a_inf | b_inf)
    return where(recover, np.inf * x2, x), where(recover, np.inf * y2, y)


def _is_zero(z) -> V:
    return (z[0] == 0.0) & (z[1] == 0.0)


def _one(z):
    """1 + 0i, the 0 a run-time value (|a signed zero|): products with a constant 0 are folded to 0 on vmvx, whose
    inf * 0 would not be NaN then."""
    return z[0].splat(1.0), _signed_zero(z[0]).abs()


def _times_i(z):
    """i z, from the parts (a complex product by i would make inf * 0 a NaN)."""
    return -z[1], z[0]


def _times_minus_i(z):
    return z[1], -z[0]


# --- the rules on V pairs ---------------------------------------------------------------------------------

def _exp(z):
    """e^x (cos y + i sin y), e^x in two factors past overflow; a zero y stays exactly y (exp(inf + 0j) is
    inf + 0j, exp(nan + 0j) nan + 0j). Annex G where y is infinite or NaN: x = +inf gives inf + i NaN, x = -inf
    +-0 +- i0 (the formula's inf * NaN is NaN), a finite x NaN + i NaN (the formula's own)."""
    x, y = z
    ea, eb = _exp_in_two_factors(x)
    re = (y.unary("cosine") * eb) * ea
    im = where(y == 0.0, y, (y.unary("sine") * eb) * ea)
    y_not_finite = ~y.is_finite()
    at_plus_inf, at_minus_inf = y_not_finite & (x == np.inf), y_not_finite & (x == -np.inf)
    re = where(at_plus_inf, x, where(at_minus_inf, 0.0, re))
    im = where(at_plus_inf, _nan_like(y), where(at_minus_inf, _signed_zero(y), im))
    return re, im


def _expm1(z):
    """e^z - 1 with Re = expm1(x) cos y - 2 sin(y/2)**2: no cancellation for small z; numpy's formula, special
    values and all (expm1(inf + 0j) is inf + nan j, e^inf * sin 0, where exp's is inf + 0j)."""
    x, y = z
    s = (y * 0.5).unary("sine")
    re = x.unary("exponential_minus_one") * y.unary("cosine") - 2.0 * (s * s)
    return re, x.unary("exponential") * y.unary("sine")


def _log(z):
    """log|z| + i atan2(y, x); near |z| = 1 the real part is log1p((big - 1)(big + 1) + small**2) / 2 (log of a
    rounded |z| would keep only its absolute error there). hypot and atan2 give Annex G's infinities and zeros."""
    x, y = z
    ax, ay = x.abs(), y.abs()
    big, small = ax.maximum(ay), ax.minimum(ay)
    near_one = (big >= 0.5) & (big <= 2.0)
    near = 0.5 * ((big - 1.0) * (big + 1.0) + small * small).unary("log_plus_one")
    return where(near_one, near, hypot_v(x, y).unary("log")), V(_atan2(y, x))


def _atan2(y: V, x: V):
    return hlo.binary("atan2", y.value, x.value)


def _log1p(z):
    """log(1 + z) with Re = log1p(x (2 + x) + y**2) / 2 (small z keeps its digits); past 1e100 the squares
    could overflow, and there log |1 + z| loses nothing; so too at an infinite part beside a NaN one (numpy's
    log1p(inf + nan j) is inf + nan j: |1 + z| is inf)."""
    x, y = z
    xp = x + 1.0
    small = 0.5 * (x * (x + 2.0) + y * y).unary("log_plus_one")
    far = ((x.abs() + y.abs()) > (1e100 if x.dtype == np.float64 else 1e18)) | _is_inf(x) | _is_inf(y)
    return where(far, hypot_v(xp, y).unary("log"), small), V(_atan2(y, xp))


def _sqrt(z):
    """The principal root, as C's csqrt: t = sqrt((|x| + |z|) / 2), then by the sign of x (and y's sign bit).
    Huge operands are scaled by 1/4 and subnormal ones by 2**(2k) first (the root by 2 and 2**-k after): |x| + |z|
    would overflow, or lose digits below the normal range. sqrt(x + i inf) is inf + i inf for every x, NaN too."""
    x, y = z
    info = _finfo(x)
    k = info.nmant + 3
    big = x.abs().maximum(y.abs())
    huge, tiny = big > float(info.max) / 8, big < float(info.tiny) * 2.0 ** info.nmant
    scale = where(huge, 0.25, where(tiny, 2.0 ** (2 * k), x.splat(1.0)))
    unscale = where(huge, 2.0, where(tiny, 2.0 ** -k, x.splat(1.0)))
    xs, ys = x * scale, y * scale
    t = ((xs.abs() + hypot_v(xs, ys)) * 0.5).unary("sqrt")
    t_zero = t == 0.0
    half = where(t_zero, _signed_zero(ys), 0.5 * (ys / where(t_zero, 1.0, t)))     # glibc's rounding of a subnormal
    non_negative = x >= 0.0
    re = where(non_negative, t, half.abs()) * unscale
    im = where(non_negative, half, _copysign(t, y)) * unscale
    y_inf = _is_inf(y)
    return where(y_inf, _inf(x), re), where(y_inf, y, im)


def _rsqrt(z):
    return _div(_one(z), _sqrt(z))


def _sinh_parts(z):
    """csinh(x + iy) = sinh x cos y + i cosh x sin y, with e^|x| in two factors past overflow. Annex G: a zero y
    stays y (sinh(inf + 0i), sinh(nan + 0i)); where y is infinite or NaN, x = +-0 gives x + i NaN and x = +-inf
    +inf + i NaN (glibc's sign; the formula's 0 * NaN and inf * NaN are NaN), a finite nonzero x NaN + i NaN (the
    formula's own)."""
    x, y = z
    ax = x.abs()
    t = _exp_threshold(x)
    large = ax > t
    sh, ch = _sinh_cosh(where(large, 0.0, x))
    ea, eb = _exp_in_two_factors(where(large, ax, 0.0))     # e^|x| = ea eb; sinh |x| = cosh x = e^|x| / 2 there
    c, s = y.unary("cosine"), y.unary("sine")
    re_large = (c * (0.5 * eb)) * ea
    re = where(large, where(x.signbit(), -re_large, re_large), sh * c)
    im = where(large, (s * (0.5 * eb)) * ea, ch * s)
    im = where(y == 0.0, y, im)
    y_not_finite = ~y.is_finite()
    x_zero, x_inf = y_not_finite & (x == 0.0), y_not_finite & _is_inf(x)
    re = where(x_zero, x, where(x_inf, _inf(x), re))
    im = where(x_zero | x_inf, _nan_like(y), im)
    return re, im


def _cosh_parts(z):
    """ccosh(x + iy) = cosh x cos y + i sinh x sin y, e^|x| in two factors past overflow. Annex G: a zero y gives
    the imaginary part sign(x) y (cosh(inf + 0i) is inf + 0i, cosh(-inf + 0i) inf - 0i); where y is infinite or NaN,
    x = +-0 gives NaN +- 0 and x = +-inf inf + i NaN (the formula's 0 * NaN and inf * NaN are NaN)."""
    x, y = z
    ax = x.abs()
    t = _exp_threshold(x)
    large = ax > t
    sh, ch = _sinh_cosh(where(large, 0.0, x))
    ea, eb = _exp_in_two_factors(where(large, ax, 0.0))
    c, s = y.unary("cosine"), y.unary("sine")
    re = where(large, (c * (0.5 * eb)) * ea, ch * c)
    im_large = (s * (0.5 * eb)) * ea
    im = where(large, where(x.signbit(), -im_large, im_large), sh * s)
    im = where(y == 0.0, where(x.signbit() & ~_is_nan(x), -y, y), im)   # a NaN's sign bit means nothing
    y_not_finite = ~y.is_finite()
    x_zero, x_inf = y_not_finite & (x == 0.0), y_not_finite & _is_inf(x)
    re = where(x_zero, _nan_like(x), where(x_inf, _inf(x), re))
    im = where(x_zero, x.splat(0.0), where(x_inf, _nan_like(y), im))
    return re, im


def _sine(z):
    """sin z = -i sinh(iz) (C99's definition, and numpy's values), but NaN + i inf where that is NaN +- i inf
    (an infinite or NaN x with an infinite y: the sign Annex G leaves open is +, glibc's)."""
    re, im = _times_minus_i(_sinh_parts(_times_i(z)))
    return re, where(_is_nan(re) & _is_inf(im), _inf(im), im)


def _cosine(z):
    """cos z = cosh(iz)."""
    return _cosh_parts(_times_i(z))


def _tanh(z):
    """Kahan's: t = tan y, s = sinh x, b = 1 + t**2; tanh z = (b s sqrt(1 + s**2) + i t) / (1 + b s**2). For
    |x| > 20 it is sign(x) + i 4 sin y cos y e^(-2|x|) to the last bit (and s**2 could overflow). Annex G: a zero
    y stays y; tanh(+-inf + iy) is +-1 + i0 sin 2y, +-1 +- i0 for an infinite or NaN y; a finite x with an
    infinite or NaN y gives NaN + i NaN, +-0 + i NaN for x = +-0 (C11's, and glibc's)."""
    x, y = z
    far = x.abs() > 20.0
    xs = where(far, 0.0, x)
    t = y.unary("tan")
    s, _ = _sinh_cosh(xs)
    b = 1.0 + t * t
    d = 1.0 + b * (s * s)
    re = ((b * s) * (1.0 + s * s).unary("sqrt")) / d
    im = t / d
    sign = _copysign(1.0, x)
    y_finite = y.is_finite()
    tail = (4.0 * (y.unary("sine") * y.unary("cosine"))) * (-2.0 * x.abs()).unary("exponential")
    tail = where(y_finite, tail, _signed_zero(y))
    re, im = where(far, sign, re), where(far, tail, im)
    finite_x_bad_y = x.is_finite() & ~y_finite
    re = where(finite_x_bad_y, where(x == 0.0, x, _nan_like(x)), re)
    return re, where(y == 0.0, y, where(finite_x_bad_y, _nan_like(y), im))


def _tan(z):
    """tan z = -i tanh(iz)."""
    return _times_minus_i(_tanh(_times_i(z)))


def _absolute(z):
    return hypot_v(*z)


def _sign(z):
    """The spec's: (nan, nan) when a part is NaN, (0, 0) at either zero, z / |z| otherwise, each part divided by
    the real |z| (signed zeros kept), which is NaN for an infinite z (the reference backend's value; numpy's limits
    there are hj.numpy.sign's composite)."""
    x, y = z
    r = hypot_v(x, y)
    zero = r == 0.0
    safe = where(zero, 1.0, r)
    re, im = x / safe, y / safe
    nan = _is_nan(re) | _is_nan(im)
    return where(zero, 0.0, where(nan, np.nan, re)), where(zero, 0.0, where(nan, np.nan, im))


def _cbrt(z):
    """The principal cube root |z|^(1/3) e^(i arg(z)/3); a zero is its own root, signs kept (the reference
    backend's)."""
    x, y = z
    r = hypot_v(x, y).unary("cbrt")
    third = V(_atan2(y, x)) * (1 / 3)
    zero = _is_zero(z)
    return where(zero, x, r * third.unary("cosine")), where(zero, y, r * third.unary("sine"))


def _atan2_complex(y, x):
    """The spec's complex atan2(y, x) = -i log((x + i y) / sqrt(x^2 + y^2)); i y and -i w from the parts."""
    (yr, yi), (xr, xi) = y, x
    (sr, si), (tr, ti) = _mul(x, x), _mul(y, y)
    wr, wi = _log(_div((xr - yi, xi + yr), _sqrt((sr + tr, si + ti))))
    return wi, -wr


def _logistic(z):
    """1 / (1 + e^-z)."""
    er, ei = _exp((-z[0], -z[1]))
    return _div(_one(z), (er + 1.0, ei))


_WHOLE_POWER_BITS = 7          # numpy multiplies out whole exponents of magnitude below 100 < 2**7


def _whole_power(a, n: V):
    """a ** n for a whole n with |n| < 100, as npy_cpow computes it: a itself, a * a and a * (a * a) for n = 1, 2,
    3; for any other n (negative ones too) 1 * a ** (bits of |n|) by repeated squaring, starting from (1, 0) as
    numpy's does, and 1 / that (numpy's quotient) for a negative n."""
    m = n.abs()
    acc = _one(a)
    started = (n > 3.0) | (n < 0.0)     # numpy multiplies out 1, 2 and 3 from a itself, the others from 1 + 0i
    p = a
    for bit in range(_WHOLE_POWER_BITS):
        has_bit = ((m * 2.0 ** -bit).unary("floor") - 2.0 * (m * 2.0 ** -(bit + 1)).unary("floor")) == 1.0
        product = _mul(acc, p)
        acc = tuple(where(has_bit, where(started, q, pp), old) for q, pp, old in zip(product, p, acc))
        started = started | has_bit
        if bit + 1 < _WHOLE_POWER_BITS:
            p = _mul(p, p)
    inverse = _div(_one(a), acc)
    negative = n < 0.0
    return tuple(where(negative, i, r) for i, r in zip(inverse, acc))


def _power(a, b):
    """numpy's complex power (npy_cpow): b == 0 gives 1; a == 0 gives 0 for Re b > 0, else NaN + i NaN; a whole
    real b below 100 in magnitude repeated products (_whole_power); anything else glibc's cpow, e^(b log a) with
    C's product (_c99_mul)."""
    br, bi = b
    a_zero, b_zero = _is_zero(a), _is_zero(b)
    safe = (where(a_zero, 1.0, a[0]), a[1])
    general = _exp(_c99_mul(b, _log(safe)))
    whole = (bi == 0.0) & (br == br.unary("round_nearest_even")) & (br.abs() < 100.0)
    whole_power = _whole_power(safe, where(whole, br, 0.0))
    out = tuple(where(whole, w, g) for w, g in zip(whole_power, general))
    at_zero = where(br > 0.0, 0.0, br.splat(np.nan))
    out = tuple(where(a_zero, at_zero, o) for o in out)
    return tuple(where(b_zero, v, o) for v, o in zip((1.0, 0.0), out))


# --- the rules on ir.Values -------------------------------------------------------------------------------

def _on_values(rule):
    """rule on V pairs as a rule on (re, im) ir.Value pairs (a real V result: one ir.Value)."""
    def apply(*operands):
        out = rule(*((V(re), V(im)) for re, im in operands))
        return tuple(v.value for v in out) if isinstance(out, tuple) else out.value
    apply.__name__ = apply.__qualname__ = rule.__name__.lstrip("_")
    apply.__doc__ = rule.__doc__
    return apply


mul = _on_values(_mul)
div = _on_values(_div)

# stablehlo op -> its rule on the operands' parts (every elementwise complex op of the StableHLO spec but
# remainder, which the spec leaves undefined for complex numbers)
RULES = {f"stablehlo.{name}": _on_values(rule) for name, rule in {
    "multiply": _mul, "divide": _div, "exponential": _exp, "exponential_minus_one": _expm1, "log": _log,
    "log_plus_one": _log1p, "sqrt": _sqrt, "rsqrt": _rsqrt, "sine": _sine, "cosine": _cosine, "tan": _tan,
    "tanh": _tanh, "abs": _absolute, "sign": _sign, "logistic": _logistic, "power": _power,
    "cbrt": _cbrt, "atan2": _atan2_complex}.items()}
