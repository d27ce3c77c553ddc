"""The complex arithmetic and math ops of complex_pairs.py, written out on (re, im) pairs of real values.

A `from_mlir` module can hold any complex op StableHLO has (exp, log, sqrt, sine, tan, tanh, abs, power ...),
and it never goes through the frontend's composites (frontend/ops/complex_math.py). IREE 3.13's own complex
lowering of them kills the process (llvm-cpu: SIGFPE compiling a complex<f64> tan of a constant), does not link
(f64 sin, cos, atan2) or cannot load the values at all (vmvx), so each is built here from real ops; those
(sine, tan, atan2, expm1 ...) then get the accurate_math rewrites that follow complex_pairs in quirks.QUIRKS.

The formulas avoid the overflow and cancellation of the textbook ones where that is cheap: |z| is a scaled
hypot, tanh is Kahan's (no cosh 2x + cos 2y, which cancels near y = pi/2 and overflows for |x| > 355), and
log1p / expm1 keep small arguments' digits. Each rule takes the operands' parts ((re, im) for a complex
operand) and returns (re, im), or one real value for abs.
"""
from __future__ import annotations

import numpy as np

from ..dialects import stablehlo as hlo
from ..dialects.types import dtype_of, shape_of

_INT_VIEW = {"float32": np.int32, "float64": np.int64}


def _splat(value, like):
    return hlo.broadcast_in_dim(hlo.constant(np.array(value, dtype_of(like.type))), shape_of(like.type), [])


def _u(name, x):
    return hlo.unary(name, x)


def _add(a, b):
    return hlo.binary("add", a, b)


def _sub(a, b):
    return hlo.binary("subtract", a, b)


def _mulr(a, b):
    return hlo.binary("multiply", a, b)


def _divr(a, b):
    return hlo.binary("divide", a, b)


def _where(cond, a, b):
    return hlo.select(cond, a, b)


def _eq(a, b):
    return hlo.compare(a, b, "EQ")


def _sign_bit(x):
    """Whether x's sign bit is set (true for -0.0, which a compare with 0 cannot tell)."""
    bits = hlo.bitcast_convert(x, _INT_VIEW[dtype_of(x.type).name])
    return hlo.compare(bits, _splat(0, bits), "LT")


def mul(a, b):
    (ar, ai), (br, bi) = a, b
    return _sub(_mulr(ar, br), _mulr(ai, bi)), _add(_mulr(ar, bi), _mulr(ai, br))


def div(a, b):
    """(ar + i ai) / (br + i bi) with b scaled by max(|br|, |bi|) first (no overflow of br**2 + bi**2)."""
    (ar, ai), (br, bi) = a, b
    s = hlo.binary("maximum", _u("abs", br), _u("abs", bi))
    brs, bis = _divr(br, s), _divr(bi, s)
    d = _add(_mulr(br, brs), _mulr(bi, bis))
    return _divr(_add(_mulr(ar, brs), _mulr(ai, bis)), d), _divr(_sub(_mulr(ai, brs), _mulr(ar, bis)), d)


def hypot(x, y):
    """sqrt(x**2 + y**2) as max * sqrt(1 + (min / max)**2): no overflow or underflow of the squares; inf if
    either part is infinite (even with a NaN other part, as C's hypot)."""
    ax, ay = _u("abs", x), _u("abs", y)
    big, small = hlo.binary("maximum", ax, ay), hlo.binary("minimum", ax, ay)
    zero, one, inf = _splat(0, x), _splat(1, x), _splat(np.inf, x)
    ratio = _divr(small, _where(_eq(big, zero), one, big))
    h = _mulr(big, _u("sqrt", _add(one, _mulr(ratio, ratio))))
    return _where(hlo.binary("or", _eq(ax, inf), _eq(ay, inf)), inf, h)


def _sinh_cosh(x):
    """(sinh x, cosh x) from expm1 of |x|: sinh keeps small arguments' digits (e - 1/e would cancel)."""
    ax = _u("abs", x)
    em = _u("exponential_minus_one", ax)
    e = _add(em, _splat(1, x))
    half = _splat(0.5, x)
    sinh_abs = _mulr(half, _add(em, _divr(em, e)))
    cosh = _mulr(half, _add(e, _divr(_splat(1, x), e)))
    return _where(_sign_bit(x), _u("negate", sinh_abs), sinh_abs), cosh


def exp(z):
    """e^x (cos y + i sin y); a zero imaginary part stays exactly zero (exp(inf + 0j) is inf + 0j)."""
    x, y = z
    ex = _u("exponential", x)
    return _mulr(ex, _u("cosine", y)), _where(_eq(y, _splat(0, y)), y, _mulr(ex, _u("sine", y)))


def expm1(z):
    """e^z - 1 with Re = expm1(x) cos y - 2 sin(y/2)**2: no cancellation for small z."""
    x, y = z
    s = _u("sine", _mulr(y, _splat(0.5, y)))
    re = _sub(_mulr(_u("exponential_minus_one", x), _u("cosine", y)), _mulr(_splat(2, y), _mulr(s, s)))
    return re, _where(_eq(y, _splat(0, y)), y, _mulr(_u("exponential", x), _u("sine", y)))


def log(z):
    x, y = z
    return _u("log", hypot(x, y)), hlo.binary("atan2", y, x)


def log1p(z):
    """log(1 + z) with Re = log1p(x (2 + x) + y**2) / 2 (small z keeps its digits); past 1e100 the squares
    could overflow, and there log |1 + z| loses nothing."""
    x, y = z
    one = _splat(1, x)
    xp = _add(x, one)
    small = _mulr(_splat(0.5, x), _u("log_plus_one", _add(_mulr(x, _add(x, _splat(2, x))), _mulr(y, y))))
    far = hlo.compare(_add(_u("abs", x), _u("abs", y)), _splat(1e100 if dtype_of(x.type) == np.float64 else 1e18, x),
                      "GT")
    return _where(far, _u("log", hypot(xp, y)), small), hlo.binary("atan2", y, xp)


def sqrt(z):
    """The principal root, as C's csqrt: t = sqrt((|x| + |z|) / 2), then by the sign of x (and y's sign bit)."""
    x, y = z
    zero = _splat(0, x)
    t = _u("sqrt", _mulr(_add(_u("abs", x), hypot(x, y)), _splat(0.5, x)))
    t_zero = _eq(t, zero)
    half = _where(t_zero, _mulr(zero, y), _divr(y, _mulr(_splat(2, x), _where(t_zero, _splat(1, x), t))))
    non_negative = hlo.compare(x, zero, "GE")
    signed_t = _where(_sign_bit(y), _u("negate", t), t)
    return _where(non_negative, t, _u("abs", half)), _where(non_negative, half, signed_t)


def rsqrt(z):
    return div((_splat(1, z[0]), _splat(0, z[0])), sqrt(z))


def sine(z):
    x, y = z
    sh, ch = _sinh_cosh(y)
    return _mulr(_u("sine", x), ch), _mulr(_u("cosine", x), sh)


def cosine(z):
    x, y = z
    sh, ch = _sinh_cosh(y)
    return _mulr(_u("cosine", x), ch), _u("negate", _mulr(_u("sine", x), sh))


def tanh(z):
    """Kahan's: t = tan y, s = sinh x, b = 1 + t**2; tanh z = (b s sqrt(1 + s**2) + i t) / (1 + b s**2). For
    |x| > 20 it is sign(x) + i 4 sin y cos y e^(-2|x|) to the last bit (and s**2 could overflow)."""
    x, y = z
    far = hlo.compare(_u("abs", x), _splat(20, x), "GT")
    xs = _where(far, _splat(0, x), x)
    one = _splat(1, x)
    t = _u("tan", y)
    s, _ = _sinh_cosh(xs)
    b = _add(one, _mulr(t, t))
    d = _add(one, _mulr(b, _mulr(s, s)))
    re = _divr(_mulr(_mulr(b, s), _u("sqrt", _add(one, _mulr(s, s)))), d)
    im = _divr(t, d)
    sign = _where(_sign_bit(x), _splat(-1, x), one)
    tail = _mulr(_mulr(_splat(4, y), _mulr(_u("sine", y), _u("cosine", y))),
                 _u("exponential", _mulr(_splat(-2, x), _u("abs", x))))
    return _where(far, sign, re), _where(far, tail, im)


def tan(z):
    """tan z = -i tanh(iz)."""
    x, y = z
    tr, ti = tanh((_u("negate", y), x))
    return ti, _u("negate", tr)


def absolute(z):
    return hypot(*z)


def sign(z):
    """The spec's: (nan, nan) when a part is NaN, (0, 0) at either zero, z / |z| otherwise, which is NaN for an
    infinite z (a complex quotient by (inf, 0); the reference backend's value)."""
    x, y = z
    r = hypot(x, y)
    zero = _eq(r, _splat(0, r))
    safe = _where(zero, _splat(1, r), r)
    re, im = _divr(x, safe), _divr(y, safe)
    nan = hlo.binary("or", hlo.compare(re, re, "NE"), hlo.compare(im, im, "NE"))
    nan_value, zero_value = _splat(np.nan, x), _splat(0, x)
    return (_where(zero, zero_value, _where(nan, nan_value, re)),
            _where(zero, zero_value, _where(nan, nan_value, im)))


def cbrt(z):
    """The principal cube root |z|^(1/3) e^(i arg(z)/3); a zero is its own root, signs kept (the reference
    backend's)."""
    x, y = z
    r = _u("cbrt", hypot(x, y))
    third = _mulr(hlo.binary("atan2", y, x), _splat(1 / 3, x))
    zero = _is_zero(z)
    return _where(zero, x, _mulr(r, _u("cosine", third))), _where(zero, y, _mulr(r, _u("sine", third)))


def atan2(y, x):
    """The spec's complex atan2(y, x) = -i log((x + i y) / sqrt(x^2 + y^2)); i y and -i w from the parts."""
    (yr, yi), (xr, xi) = y, x
    (sr, si), (tr, ti) = mul(x, x), mul(y, y)
    wr, wi = log(div((_sub(xr, yi), _add(xi, yr)), sqrt((_add(sr, tr), _add(si, ti)))))
    return wi, _u("negate", wr)


def logistic(z):
    """1 / (1 + e^-z)."""
    er, ei = exp((_u("negate", z[0]), _u("negate", z[1])))
    return div((_splat(1, er), _splat(0, er)), (_add(_splat(1, er), er), ei))


def _is_zero(z):
    return hlo.binary("and", _eq(z[0], _splat(0, z[0])), _eq(z[1], _splat(0, z[1])))


def power(a, b):
    """a ** b = exp(b log a), with 0 ** 0 = 1 and 0 ** b = 0 otherwise (numpy's values for Re(b) > 0)."""
    a_zero, b_zero = _is_zero(a), _is_zero(b)
    one, zero = _splat(1, a[0]), _splat(0, a[0])
    safe = (_where(a_zero, one, a[0]), a[1])
    pr, pi = exp(mul(b, log(safe)))
    at_zero = _where(b_zero, one, zero)
    return _where(a_zero, at_zero, pr), _where(a_zero, zero, pi)


# stablehlo op -> its rule on the operands' parts (every elementwise complex op of the StableHLO spec but
# remainder, which the spec leaves undefined for complex numbers)
RULES = {f"stablehlo.{name}": rule for name, rule in {
    "multiply": mul, "divide": div, "exponential": exp, "exponential_minus_one": expm1, "log": log,
    "log_plus_one": log1p, "sqrt": sqrt, "rsqrt": rsqrt, "sine": sine, "cosine": cosine, "tan": tan,
    "tanh": tanh, "abs": absolute, "sign": sign, "logistic": logistic, "power": power, "cbrt": cbrt,
    "atan2": atan2}.items()}
