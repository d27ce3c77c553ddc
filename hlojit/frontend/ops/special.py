"""erf, erfc, lgamma and digamma from basic ops (StableHLO has none of them; CHLO's erf is not what IREE
takes, and the reference backend runs StableHLO only).

- erf(x) = x * Q(x**2) for |x| < 1; erfc(x) = exp(-x**2) * g(1/x) / x for |x| >= 1/2, with g in four
  pieces of 1/x; the other function by 1 - f. Q and g are polynomials fitted for each dtype by
  tools/fit_special.py (float64: ~2e-16, float32: ~1.2e-7 relative). exp(-x**2) is computed as
  exp(-xh**2) * exp(-xl * (x + xh)) with xh = x rounded to half the mantissa, so xh**2 is exact and the
  tail of erfc keeps its relative accuracy instead of losing x**2 ulps.
- lgamma(x) = Stirling's series (Bernoulli numbers, closed form) for large x; below, f64 shifts x up to
  z = x + n >= 8 and subtracts log(x (x+1) ... (x+n-1)), f32 (whose shift would cost its accuracy near
  the zeros at 1 and 2) evaluates a fitted (x-1)(x-2) R(x) on [0.5, 2.5] and steps into it by one
  recurrence. x <= 0 by reflection, log(pi / |sin(pi x)|) - lgamma(1 - x), with sin(pi x) from the exact
  remainder x - round(x). No f64 inside f32: vmvx cannot convert f64 back to f32.
- digamma(x) = log z - 1/(2z) - sum B_2k / (2k z**2k) (the asymptotic series) for z >= 10 (f64) or 6
  (f32); below, x is shifted up by psi(x) = psi(x + n) - (1/x + ... + 1/(x+n-1)), except on [1, 2],
  around psi's positive zero x0, where that difference would cancel: there a fitted (x - x0) R(x) keeps
  the relative accuracy. x <= 0 by reflection, psi(1 - x) - pi cot(pi x), cot from the exact remainder
  x - round(x) as lgamma's sine (near the negative zeros the error is absolute, ~1 ulp of psi(1 - x)).
A fitted polynomial's derivative is no function's: erf, erfc and lgamma carry their textbook ones
(`derivatives.derivative`), and reverse mode through digamma is refused until trigamma is written.
"""
from __future__ import annotations

import math as _pymath
from fractions import Fraction

import numpy as np

from .. import dtypes
from ..derivatives import derivative, no_derivative
from ..tensor import Tensor
from . import elementwise as ew
from .trig import cos_kernel, horner, sin_kernel

# erf(x) = x * Q(u), u = 2 x**2 - 1, |x| <= 1
_ERF = {
    # erf float64: degree 11, max relative error 2.2e-16
    dtypes.float64: (0.9654687386698673, -0.1405360890227171, 0.019852496688984218, -0.0022854855611440855,
                     0.00021751715603563488, -1.75371694412802e-05, 1.2233827638093572e-06,
                     -7.51156925108609e-08, 4.115751500265885e-09, -2.035231956483527e-10,
                     9.21125018742823e-12, -3.80659122412214e-13),
    # erf float32: degree 5, max relative error 1.2e-07
    dtypes.float32: (0.9654687770939903, -0.14053609137964274, 0.01985180518381977, -0.0022854431428609664,
                     0.0002193591913438419, -1.7650187079697012e-05),
}
# erfc(x) = exp(-x**2) * g(t) * t, t = 1/x, g in pieces (t_lo, t_hi, coefficients in u = mapped t)
_ERFC = {
    dtypes.float64: (
        (1.0, 2.0, (0.35952293862040013, -0.059199010672768594, 0.008289237738504296, -0.0007416500983069243,
                    -7.27960623576909e-05, 6.449072468253527e-05, -2.3324415371774813e-05, 6.613881344277251e-06,
                    -1.620083157658468e-06, 3.4729772421846483e-07, -6.239104523783038e-08,
                    7.639565616977194e-09, 3.8529371171870735e-10, -6.864019114551877e-10,
                    2.8922324172762846e-10, -1.0385767594939522e-10, 4.464590674549907e-11,
                    -1.1653569099955066e-11)),
        (0.5, 1.0, (0.46817959203854037, -0.04227024444636883, 0.0012092420392931552, 0.0006295812459832145,
                    -0.00019713177832962194, 3.680539054988557e-05, -4.423080518138124e-06,
                    3.422973117966253e-08, 1.6981368810553445e-07, -6.190463620076879e-08,
                    1.5041376217890252e-08, -2.7594328919444718e-09, 3.3564960827514737e-10,
                    1.892899934285864e-12, -1.8850641424171484e-11, 9.678493521670722e-12,
                    -2.4398315334080278e-12)),
        (0.25, 0.5, (0.5308603493169751, -0.0189481911967695, -0.0014381248079996852, 0.00034622662915365175,
                     -2.8389142216089188e-05, -1.1538109183295389e-06, 7.486045101159973e-07,
                     -1.2191974888101915e-07, 8.114789490136181e-09, 1.26837800330256e-09,
                     -5.193671541607116e-10, 9.142939754549204e-11, -6.0633225427850955e-12,
                     -1.1413656769305793e-12)),
        (0.0, 0.25, (0.5598813296070474, -0.008424825196312696, -0.003842866650404347, 0.0003432647266468472,
                     5.551282960105142e-05, -1.4924206839566926e-05, -1.9212295278123084e-07,
                     6.270855413130242e-07, -8.438666563960594e-08, -1.8621616921968317e-08,
                     8.212144359555319e-09, -4.3366863041889456e-10, -4.768924196975155e-10,
                     1.3285297433368084e-10, 1.2123286573487087e-11, -1.035869914764401e-11)),
    ),
    dtypes.float32: (
        (1.0, 2.0, (0.35952295223529873, -0.05919901348769273, 0.008288802535813553, -0.0007415600671667951,
                    -7.063285707897205e-05, 6.404182987802679e-05, -2.6733710731724853e-05,
                    7.326842273656034e-06)),
        (0.5, 1.0, (0.46817959203854037, -0.04227025320850987, 0.0012092635663603023, 0.0006296440471195259,
                    -0.0001973022906231517, 3.6723265095245784e-05, -4.092248873291744e-06)),
        (0.25, 0.5, (0.5308603730635327, -0.01894819494254628, -0.0014385520171132477, 0.0003462940969978292,
                     -2.7253444566751892e-05, -1.3343949221727304e-06)),
        (0.0, 0.25, (0.5598813200556629, -0.008424806489053893, -0.0038426970021214644, 0.000342927400184008,
                     5.50955775215283e-05, -1.4015541811591285e-05)),
    ),
}
# exp(-x**2): the split point's fraction bits (x * 2**k rounded has <= half the mantissa bits for
# x below the cutoff, past which erfc underflows to 0 anyway)
_SPLIT = {dtypes.float64: (21, 30.0), dtypes.float32: (8, 11.0)}


def _erf_small(x: Tensor) -> Tensor:
    return x * horner(2 * (x * x) - 1, _ERF[x.dtype])


def _exp_minus_square(a: Tensor) -> Tensor:
    k, cutoff = _SPLIT[a.dtype]
    a = ew.binary("minimum", a, cutoff)
    high = ew.unary("round", a * float(2 ** k)) * float(2.0 ** -k)
    low = a - high
    return ew.unary("exp", -(high * high)) * ew.unary("exp", -(low * (a + high)))


def _erfc_large(a: Tensor) -> Tensor:
    """erfc(a) for a >= 1/2 (or inf); nan for nan."""
    t = 1 / a
    g = None
    for lo, hi, coefficients in _ERFC[a.dtype]:
        piece = horner(t * (2 / (hi - lo)) - (hi + lo) / (hi - lo), coefficients)
        g = piece if g is None else ew.where(t <= hi, piece, g)
    return _exp_minus_square(a) * g * t


@ew.composite("erf")
@derivative(lambda x, y: (2 / _pymath.sqrt(_pymath.pi)) * ew.unary("exp", -x * x))
@ew.in_float32_at_least
def erf(x: Tensor) -> Tensor:
    a = ew.unary("abs", x)
    large = 1 - _erfc_large(a)
    return ew.where(a < 1, _erf_small(x), ew.where(x < 0, -large, large))


@ew.composite("erfc")
@derivative(lambda x, y: (-2 / _pymath.sqrt(_pymath.pi)) * ew.unary("exp", -x * x))
@ew.in_float32_at_least
def erfc(x: Tensor) -> Tensor:
    a = ew.unary("abs", x)
    e = _erfc_large(a)
    return ew.where(a < 0.5, 1 - _erf_small(x), ew.where(x < 0, 2 - e, e))


# --- lgamma -------------------------------------------------------------------------------------------

def _bernoulli(n: int) -> list[Fraction]:
    """B_0 .. B_n (B_1 = +1/2), by the Akiyama-Tanigawa algorithm."""
    row, out = [], []
    for m in range(n + 1):
        row.append(Fraction(1, m + 1))
        for j in range(m, 0, -1):
            row[j - 1] = j * (row[j - 1] - row[j])
        out.append(row[0])
    return out


_STIRLING = {dtypes.float64: 10, dtypes.float32: 7}    # terms of Stirling's series: B_2k / (2k (2k-1) z**(2k-1))
_STIRLING = {d: tuple(float(_bernoulli(2 * k)[2 * k] / (2 * k * (2 * k - 1))) for k in range(1, n + 1))
             for d, n in _STIRLING.items()}
_HALF_LOG_2PI_MINUS_HALF = 0.5 * _pymath.log(2 * _pymath.pi) - 0.5
# float32 lgamma(x) = (x-1)(x-2) R(u), u = x - 1.5, x in [0.5, 2.5]: R has no zeros, so lgamma keeps its
# relative accuracy at its zeros 1 and 2 (tools/fit_special.py)
_LGAMMA_R32 = (0.4831289416337161, -0.14595989022908623, 0.06291253756887767, -0.03130921288024502,
               0.016773619763470804, -0.00941063771760576, 0.005628417871921764, -0.0033281914372642212,
               0.001244672223478555, -0.0007316779161107373, 0.0020401957244113346, -0.0012854598161847741,
               -0.0010843058664308394, 0.0006952763798801888, 0.000721114916129506, -0.0004582450270214339)


def _stirling(z: Tensor) -> Tensor:
    """lgamma(z) for z large enough (f64: 8, f32: 3.5) that the series' terms fall below an ulp."""
    w = 1 / z
    series = w * horner(w * w, _STIRLING[z.dtype])
    return (z - 0.5) * (ew.unary("log", z) - 1) + (_HALF_LOG_2PI_MINUS_HALF + series)


def _lgamma_positive_f64(y: Tensor) -> Tensor:
    """Shift y up to z = y + n >= 8: lgamma(y) = lgamma(z) - log(y (y+1) ... (y+n-1)). Its absolute error
    (~1e-15) is what Stirling's value near 8-9 carries, so near the zeros 1 and 2 the error is absolute."""
    z, product = y, None
    for _ in range(8):
        below = z < 8
        product = ew.where(below, z, 1.0) if product is None else ew.where(below, product * z, product)
        z = ew.where(below, z + 1, z)
    return _stirling(z) - ew.unary("log", product)


def _lgamma_positive_f32(y: Tensor) -> Tensor:
    """The fitted (x-1)(x-2) R(x) on [0.5, 2.5], one step of the recurrence either side of it, Stirling
    from 3.5 on."""
    def fitted(v):
        return (v - 1) * (v - 2) * horner(v - 1.5, _LGAMMA_R32)
    below, above = fitted(y + 1) - ew.unary("log", y), fitted(y - 1) + ew.unary("log", y - 1)
    y_large = ew.binary("maximum", y, 3.5)             # keeps the unused lanes of Stirling finite
    out = ew.where(y < 3.5, above, _stirling(y_large))
    out = ew.where(y <= 2.5, fitted(y), out)
    out = ew.where(y < 0.5, below, out)
    return ew.where(ew.unary("isnan", y), y, out)


def _abs_sin_pi(x: Tensor) -> Tensor:
    """|sin(pi x)| from r = x - round(x) (exact), so it is 0 exactly at the integers."""
    r = ew.unary("abs", x - ew.unary("round", x))
    near = sin_kernel(_pymath.pi * r)
    far = cos_kernel(_pymath.pi * (0.5 - r))
    return ew.where(r <= 0.25, near, far)


@ew.composite("lgamma")
@derivative(lambda x, y: ew.unary("digamma", x))
@ew.in_float32_at_least
def lgamma(x: Tensor) -> Tensor:
    """log|Gamma(x)|; +inf at the poles (0, -1, -2 ...) and at +-inf, as math.lgamma's limits; +0.0 at 1 and 2
    (C's, scipy's: the fit's -0.0 is not)."""
    positive = x > 0
    y = ew.where(positive, x, 1 - x)
    value = _lgamma_positive_f64(y) if x.dtype == dtypes.float64 else _lgamma_positive_f32(y)
    sin_pi = _abs_sin_pi(x)
    reflected = (_pymath.log(_pymath.pi) - ew.unary("log", sin_pi)) - value
    out = ew.where(positive, value, ew.where(sin_pi == 0, np.inf, reflected))
    return ew.where(ew.unary("isinf", x), np.inf, ew.where(out == 0, 0.0, out))


# --- digamma ------------------------------------------------------------------------------------------

_PSI_SHIFT = {dtypes.float64: 10, dtypes.float32: 6}   # the asymptotic series from here on
_PSI_TERMS = {dtypes.float64: 8, dtypes.float32: 4}    # its terms B_2k / (2k z**2k), down to below an ulp
_PSI_SERIES = {d: tuple(float(_bernoulli(2 * k)[2 * k] / (2 * k)) for k in range(1, n + 1))
               for d, n in _PSI_TERMS.items()}
# psi's positive zero, split hi + lo for each dtype, and digamma(x) = (x - x0) R(u), u = 2x - 3, x in [1, 2]
# (tools/fit_special.py)
_PSI_ZERO = Fraction("1.46163214496836234126265954232572132846819620400644635129599")
_PSI_ZERO_SPLIT = {d: (hi, float(_PSI_ZERO - Fraction(hi))) for d, hi in
                   ((dtypes.float64, float(_PSI_ZERO)), (dtypes.float32, float(np.float32(_PSI_ZERO))))}
_PSI_R = {
    # digamma float64: degree 21, max relative error 2.2e-16
    dtypes.float64: (0.951055876031833, -0.21181371064073026, 0.06013562106019355, -0.018550615381738605,
                     0.005936795278433826, -0.0019350666647832667, 0.000636888028319074, -0.00021074841215733007,
                     6.995020484160625e-05, -2.325823828431376e-05, 7.741156881253708e-06, -2.578107848270217e-06,
                     8.591324222417666e-07, -2.8628755280038686e-07, 9.500926192924096e-08,
                     -3.166618072027162e-08, 1.10370884388543e-08, -3.6788868183645545e-09,
                     8.668257373761658e-10, -2.889363639216111e-10, 2.4765474440031764e-10,
                     -8.25512972008104e-11),
    # digamma float32: degree 9, max relative error 9.6e-08
    dtypes.float32: (0.9510558962329134, -0.21181371736950597, 0.06013461324811798, -0.018550279690076197,
                     0.005944763862086814, -0.0019377209019169558, 0.0006151471771783476,
                     -0.00020350689239956258, 9.339481030694158e-05, -3.1067026487559866e-05),
}


def _digamma_near_zero(x: Tensor) -> Tensor:
    """(x - x0) R(2x - 3) on [1, 2]: x - hi is exact there, so psi keeps its relative accuracy at x0."""
    hi, lo = _PSI_ZERO_SPLIT[x.dtype]
    return ((x - hi) - lo) * horner(2 * x - 3, _PSI_R[x.dtype])


def _digamma_asymptotic(z: Tensor) -> Tensor:
    """log z - 1/(2z) - sum B_2k / (2k z**2k), for z at least the series' start."""
    w = 1 / z
    s = w * w
    return ew.unary("log", z) - (0.5 * w + s * horner(s, _PSI_SERIES[z.dtype]))


def _digamma_positive(y: Tensor) -> Tensor:
    """Shift y up to z = y + n >= the series' start: psi(y) = psi(z) - (1/y + 1/(y+1) + ... + 1/(y+n-1))."""
    start = _PSI_SHIFT[y.dtype]
    z, total = y, None
    for _ in range(start):
        below = z < start
        term = ew.where(below, 1 / z, 0.0)
        total = term if total is None else total + term
        z = ew.where(below, z + 1, z)
    return _digamma_asymptotic(z) - total


def _pi_cot_pi(r: Tensor) -> Tensor:
    """pi cot(pi r) for r in [-1/2, 1/2], by the sine and cosine kernels on [0, pi/4]."""
    a = ew.unary("abs", r)
    near, far = _pymath.pi * a, _pymath.pi * (0.5 - a)
    small = a <= 0.25
    cos_pi_a = ew.where(small, cos_kernel(near), sin_kernel(far))
    sin_pi_a = ew.where(small, sin_kernel(near), cos_kernel(far))
    cot = _pymath.pi * cos_pi_a / sin_pi_a
    return ew.where(r < 0, -cot, cot)


@ew.composite("digamma")
@no_derivative("its derivative (trigamma) is not implemented")
@ew.in_float32_at_least
def digamma(x: Tensor) -> Tensor:
    """psi(x) = d lgamma(x) / dx, with scipy.special.digamma's limits: -inf at +0, +inf at -0, nan at the
    negative integers and at -inf."""
    positive = x > 0
    value = _digamma_positive(ew.where(positive, x, 1 - x))
    r = x - ew.unary("round", x)
    reflected = ew.where(r == 0, np.nan, value - _pi_cot_pi(r))
    near_zero = (x >= 1) & (x <= 2)
    value = ew.where(near_zero, _digamma_near_zero(x), value)
    return ew.where(positive, value, ew.where(x == 0, -1 / x, reflected))
