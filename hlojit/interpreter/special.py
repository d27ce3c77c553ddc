"""CHLO's special functions that numpy lacks: Hurwitz zeta, digamma, polygamma and the scaled Bessel function
i1e, in float64 numpy (scipy is a test dependency only: tests compare with it).

digamma(x) is brought into [1, 2] by its recurrence (psi(x + 1) = psi(x) + 1/x), where a Taylor series about
its positive root x0 = 1.4616... gives it to a few ulps even next to the root (the recurrence up to x >= 10
and the asymptotic series, as before, cancelled to ~0.04 from terms of ~2.4 and truncated the series at 2e-14:
psi(1.5) was 1400 ulps off); above 20 the asymptotic series alone; reflection below 0.

zeta(x, q) sums its first terms directly and the rest by Euler-Maclaurin; polygamma(n, x) is
(-1)^(n+1) n! zeta(n+1, x) for n >= 1 and digamma for n = 0 (how XLA defines it); i1e(x) = exp(-|x|) I1(x)
by its power series (all terms positive: no cancellation) below 30 and its asymptotic series above.
"""
from __future__ import annotations

import math

import numpy as np

# B_2j / (2j)! for j = 1..12: the Euler-Maclaurin coefficients
_BERNOULLI = [1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510, 43867 / 798,
              -174611 / 330, 854513 / 138, -236364091 / 2730]
_EULER_MACLAURIN = [b / math.factorial(2 * j) for j, b in enumerate(_BERNOULLI, start=1)]
_DIRECT_TERMS = 12
_I1E_SERIES_BELOW = 30.0
_quiet = np.errstate(all="ignore")   # inf and nan are results here (and the lanes np.where discards overflow)


def _zeta_positive_q(x, q):
    """zeta(x, q) for x > 1 and q > 0 or whole x (arrays of one shape): sum_{k<N} (q+k)^-x, plus the tail from
    w = q + N by Euler-Maclaurin."""
    shift = np.clip(np.ceil(x - q), 0, 200)          # w >= x keeps the tail's series convergent for large x
    n_terms = _DIRECT_TERMS + shift
    total = np.zeros_like(x)
    for k in range(int(n_terms.max(initial=0))):
        total += np.where(k < n_terms, (q + k) ** -x, 0.0)
    w = q + n_terms
    total += w ** (1 - x) / (x - 1) + 0.5 * w ** -x
    rising, power = x.copy(), w ** (-x - 1)           # x (x+1) ... (x+2j-2) and w^(-x-2j+1)
    for j, coefficient in enumerate(_EULER_MACLAURIN):
        total += coefficient * rising * power
        rising = rising * (x + 2 * j + 1) * (x + 2 * j + 2)
        power = power / (w * w)
    return total


@_quiet
def zeta(x, q):
    """The Hurwitz zeta function sum_k (q+k)^-x, as scipy.special.zeta and XLA: nan for x < 1, inf at x = 1
    and at the poles q = 0, -1, ...; for q < 0 defined only for whole x (a negative base's power)."""
    x, q = np.broadcast_arrays(np.asarray(x, np.float64), np.asarray(q, np.float64))
    valid = (x > 1) & ((q > 0) | ((q < 0) & (q != np.floor(q)) & (x == np.floor(x)) & np.isfinite(x)))
    safe = _zeta_positive_q(np.where(valid, x, 2.0), np.where(valid, q, 1.0))
    pole = (x == 1) | ((q <= 0) & (q == np.floor(q)) & (x > 1))
    out = np.where(valid, safe, np.where(pole, np.inf, np.nan))
    at_infinity = np.where(q > 1, 0.0, np.where(q == 1, 1.0, np.inf))   # x = inf: the first term alone, q^-inf
    out = np.where((x == np.inf) & (q > 0), at_infinity, out)
    return np.where(np.isnan(x) | np.isnan(q), np.nan, out)


_DIGAMMA_ROOT = (1.4616321449683622, 9.549995429965697e-17)   # psi(x0) = 0, x0 as hi + lo (t = x - x0 exact)
_DIGAMMA_ASYMPTOTIC_FROM = 20.0
_DIGAMMA_TAYLOR_TERMS = 40               # |x - x0| <= 0.54 in [1, 2]: terms fall as 0.37^k
_digamma_taylor = None                   # psi^(k)(x0) / k! = (-1)^(k+1) zeta(k+1, x0), k = 1..40, made at first use


@_quiet
def digamma(x):
    """psi(x) = Gamma'(x) / Gamma(x) elementwise in float64: nan at the poles 0, -1, ... and at nan and -inf."""
    global _digamma_taylor
    if _digamma_taylor is None:
        k = np.arange(1, _DIGAMMA_TAYLOR_TERMS + 1, dtype=np.float64)
        _digamma_taylor = np.where(k % 2 == 1, 1.0, -1.0) * zeta(k + 1, _DIGAMMA_ROOT[0])
    x = np.asarray(x, np.float64)
    reflect = x <= 0
    y = np.where(reflect, 1 - x, x)                       # psi(x) = psi(1 - x) - pi / tan(pi x)
    y = np.where(np.isfinite(y), y, 2.0)
    acc = np.where(y < 1, -1 / y, 0.0)
    y = np.where(y < 1, y + 1, y)
    large = y >= _DIGAMMA_ASYMPTOTIC_FROM
    middle = ~large & (y > 2)
    steps = np.where(middle, np.ceil(y - 2), 0.0)         # y - steps in [1, 2]: psi(y) = psi(y - m) + sum 1/(y - j)
    for j in range(1, int(_DIGAMMA_ASYMPTOTIC_FROM) + 1):
        acc = acc + np.where(j <= steps, 1 / (y - j), 0.0)
    t = (np.where(large, 1.5, y - steps) - _DIGAMMA_ROOT[0]) - _DIGAMMA_ROOT[1]
    taylor = np.zeros_like(t)
    for c in _digamma_taylor[::-1]:
        taylor = (taylor + c) * t
    z = np.where(large, y, _DIGAMMA_ASYMPTOTIC_FROM)
    inverse = 1 / (z * z)
    series = inverse * (1 / 12 - inverse * (1 / 120 - inverse * (1 / 252 - inverse * (1 / 240 - inverse / 132))))
    asymptotic = np.log(z) - 0.5 / z - series
    value = acc + np.where(large, asymptotic, taylor)
    fraction = x - np.round(x)                            # exact; tan(pi x) has period 1 in x
    value = np.where(reflect, value - np.pi / np.tan(np.pi * fraction), value)
    value = np.where(reflect & (x == np.floor(x)), np.nan, value)
    value = np.where(x == np.inf, np.inf, value)
    return np.where(np.isnan(x) | (x == -np.inf), np.nan, value)


@_quiet
def polygamma(n, x):
    """psi^(n)(x): nan unless n is a whole number >= 0."""
    n, x = np.broadcast_arrays(np.asarray(n, np.float64), np.asarray(x, np.float64))
    whole = (n >= 0) & (n == np.floor(n)) & np.isfinite(n)
    higher = whole & (n >= 1)
    order = np.where(higher, n, 1.0)
    factorial = np.exp(np.array([math.lgamma(v + 1) for v in order.ravel()]).reshape(order.shape))
    sign = np.where(order % 2 == 1, 1.0, -1.0)
    z = zeta(order + 1, x)
    value = np.where(higher, sign * factorial * z, np.asarray(digamma(x), np.float64))
    return np.where(whole, value, np.nan)


def _i1e_series(x):
    """exp(-|x|) sum_k (x/2)^(2k+1) / (k! (k+1)!) for |x| <= 30."""
    half = x / 2
    term, total = half.copy(), half.copy()
    quarter = half * half
    for k in range(100):
        term = term * quarter / ((k + 1) * (k + 2))
        total += term
    return total * np.exp(-np.abs(x))


def _i1e_asymptotic(x):
    """exp(-x) I1(x) ~ 1/sqrt(2 pi x) sum_k (-1)^k prod_{j<=k} (4 - (2j-1)^2) / (k! (8x)^k) for x > 30."""
    ax = np.abs(x)
    term, total = np.ones_like(ax), np.ones_like(ax)
    for k in range(1, 40):
        term = -term * (4 - (2 * k - 1) ** 2) / (k * 8 * ax)
        total += term
    return np.sign(x) * total / np.sqrt(2 * np.pi * ax)


@_quiet
def bessel_i1e(x):
    x = np.asarray(x, np.float64)
    small = np.abs(x) <= _I1E_SERIES_BELOW
    series = _i1e_series(np.where(small, x, 0.0))
    asymptotic = _i1e_asymptotic(np.where(small | np.isinf(x), _I1E_SERIES_BELOW + 1, x))
    return np.where(small, series, np.where(np.isinf(x), np.copysign(0.0, x), asymptotic))
