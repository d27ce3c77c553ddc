"""Fit the polynomial coefficients that hlojit/frontend/ops/trig.py and special.py evaluate.

Run `python tools/fit_special.py [names...]` (needs mpmath) and paste its output over the COEFFICIENTS tables.
Each function is interpolated at Chebyshev nodes of its interval in 60-digit arithmetic, the Chebyshev
series is turned into monomials of u = (2v - (lo + hi)) / (hi - lo) (so |u| <= 1 and Horner is
well conditioned), and the smallest degree whose float64/float32 Horner evaluation meets the target
relative error on 4000 points is kept.
"""
from __future__ import annotations

import sys

import mpmath as mp
import numpy as np

mp.mp.dps = 60


def _atan_p(s):  # atan(z) = z + z*s*P(s), s = z^2
    if s == 0:
        return mp.mpf(-1) / 3
    z = mp.sqrt(s)
    return (mp.atan(z) / z - 1) / s


def _erf_q(s):  # erf(x) = x*Q(s), s = x^2
    if s == 0:
        return 2 / mp.sqrt(mp.pi)
    x = mp.sqrt(s)
    return mp.erf(x) / x


def _erfc_g(t):  # erfc(x) = exp(-x^2) * g(1/x) / x, t = 1/x
    if t == 0:
        return 1 / mp.sqrt(mp.pi)
    x = 1 / t
    return x * mp.exp(x * x) * mp.erfc(x)


def _lgamma_r(x):  # lgamma(x) = (x-1)(x-2)*R(x): R has no zeros, so R's relative error is lgamma's
    if x == 1:
        return -mp.digamma(1)
    if x == 2:
        return mp.digamma(2)
    return mp.loggamma(x) / ((x - 1) * (x - 2))


DIGAMMA_ROOT = mp.findroot(mp.digamma, mp.mpf("1.46"))   # psi's positive zero


def _digamma_r(x):  # digamma(x) = (x - root)*R(x): R's relative error is digamma's near its zero
    if x == DIGAMMA_ROOT:
        return mp.psi(1, x)
    return mp.digamma(x) / (x - DIGAMMA_ROOT)


FUNCTIONS = {  # name -> (f, lo, hi): fitted in v in [lo, hi]
    "atan": (_atan_p, mp.mpf(0), mp.tan(mp.pi / 8) ** 2),
    "erf": (_erf_q, mp.mpf(0), mp.mpf(1)),
    "erfc_0": (_erfc_g, mp.mpf(1), mp.mpf(2)),           # x in [0.5, 1]
    "erfc_1": (_erfc_g, mp.mpf(1) / 2, mp.mpf(1)),       # x in [1, 2]
    "erfc_2": (_erfc_g, mp.mpf(1) / 4, mp.mpf(1) / 2),   # x in [2, 4]
    "erfc_3": (_erfc_g, mp.mpf(0), mp.mpf(1) / 4),       # x in [4, inf)
    "lgamma": (_lgamma_r, mp.mpf(1) / 2, mp.mpf(5) / 2),
    "digamma": (_digamma_r, mp.mpf(1), mp.mpf(2)),
}
TARGETS = {"float64": 2.5e-16, "float32": 1.5e-7}


def chebyshev_monomials(f, lo, hi, degree):
    """Monomial coefficients (constant first) in u of the degree-`degree` Chebyshev interpolant."""
    n = degree + 1
    nodes = [mp.cos(mp.pi * (k + mp.mpf(1) / 2) / n) for k in range(n)]
    values = [f((hi - lo) / 2 * u + (hi + lo) / 2) for u in nodes]
    cheb = [2 * mp.fsum(values[k] * mp.cos(j * mp.pi * (k + mp.mpf(1) / 2) / n) for k in range(n)) / n
            for j in range(n)]
    cheb[0] /= 2
    t_prev, t_cur = [mp.mpf(1)], [mp.mpf(0), mp.mpf(1)]   # T_0, T_1 as monomials
    mono = [mp.mpf(0)] * n
    for j in range(n):
        t = t_prev if j == 0 else t_cur
        if j >= 2:
            t = [2 * a for a in [mp.mpf(0)] + t_cur]
            for i, a in enumerate(t_prev):
                t[i] -= a
            t_prev, t_cur = t_cur, t
        for i, a in enumerate(t):
            mono[i] += cheb[j] * a
    return mono


def max_error(f, lo, hi, coefficients, dtype):
    v = np.linspace(float(lo), float(hi), 4000)
    u = ((2 * v - float(lo + hi)) / float(hi - lo)).astype(dtype)
    acc = np.zeros_like(u)
    for c in reversed(coefficients):
        acc = acc * u + dtype(float(c))
    exact = np.array([float(f(mp.mpf(x))) for x in v])
    return float(np.max(np.abs(acc - exact) / np.abs(exact)))


def main(names):
    for name in names or FUNCTIONS:
        f, lo, hi = FUNCTIONS[name]
        for dtype_name, target in TARGETS.items():
            dtype = np.dtype(dtype_name).type
            for degree in range(2, 40):
                mono = chebyshev_monomials(f, lo, hi, degree)
                err = max_error(f, lo, hi, mono, dtype)
                if err < target:
                    break
            print(f"    # {name} {dtype_name}: degree {degree}, max relative error {err:.2g}")
            print(f"    ({name!r}, {dtype_name!r}): ({float(lo)!r}, {float(hi)!r}, (")
            print("        " + ", ".join(repr(float(c)) for c in mono) + ")),")


if __name__ == "__main__":
    main(sys.argv[1:])
