"""The reference backend's special functions (hlojit/interpreter/special.py) and exact integer CHLO ops against
scipy and Python's integers, over wide grids: the conformance files check a few points on every backend, these
check the numerics of the oracle itself (no IREE compile: fast)."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.special as sp

import hlojit as hj
from hlojit.interpreter import chlo, special

def _relative_error(actual, expected):
    finite = np.isfinite(expected)
    assert np.array_equal(np.isnan(actual), np.isnan(expected))
    assert np.array_equal(actual[~finite & ~np.isnan(expected)], expected[~finite & ~np.isnan(expected)])
    return np.max(np.abs(actual[finite] - expected[finite]) / np.maximum(np.abs(expected[finite]), 1e-300))


def test_bessel_i1e_matches_scipy_to_float64_accuracy():
    rng = np.random.default_rng(1)
    x = np.concatenate([rng.uniform(-60, 60, 4000), rng.uniform(-1, 1, 500), np.geomspace(1e-300, 1e6, 200),
                        [0.0, -0.0, 29.999, 30.0, 30.001, -30.0, np.inf, -np.inf, np.nan]])
    actual = special.bessel_i1e(x)
    assert _relative_error(actual, sp.i1e(x)) < 1e-14
    assert np.signbit(actual[x == 0]).tolist() == np.signbit(x[x == 0]).tolist()   # odd: -0 stays -0


def test_zeta_matches_scipy_on_its_domain_and_edges():
    rng = np.random.default_rng(2)
    x = np.concatenate([rng.uniform(1.001, 80, 3000), [2, 3, 4, 1, 0.5, np.inf, np.inf, np.inf, 2, 3, 2.5]])
    q = np.concatenate([rng.uniform(1e-3, 100, 3000), [1, 0.5, -1.5, 1, 1, 0.5, 1, 2, 0, -2, -1.5]])
    expected = sp.zeta(x, q)
    expected[(x == np.inf) & (q == 2)] = 0.0   # scipy 1.17 answers nan there; the sum's terms are all 0 but q^-x
    assert _relative_error(special.zeta(x, q), expected) < 1e-13


@pytest.mark.parametrize("n", [0, 1, 2, 3, 5, 8])
def test_polygamma_matches_scipy(n):
    x = np.concatenate([np.linspace(-7.9, 30, 777), [0.0, -1.0, -2.0, 1e-3]])
    actual = special.polygamma(np.full_like(x, n), x)
    expected = sp.polygamma(n, x)
    if n == 0:   # digamma's poles: nan, as XLA's chlo.digamma gives (scipy says -inf at 0)
        expected[(x <= 0) & (x == np.floor(x))] = np.nan
    assert _relative_error(actual, expected) < 1e-9 * (1 + n)


def test_digamma_keeps_relative_accuracy_next_to_its_positive_root():
    """psi(1.5) ~ 0.0365 was 1400 ulps off (the recurrence to x >= 10 cancelled from terms of ~2.4 and the
    asymptotic series stopped at 2e-14); psi(x) at the float nearest its root x0 = 1.46163... is ~1e-17 and
    was 1e18 ulps off. scipy.special.digamma is within 2 ulps on x > 0."""
    rng = np.random.default_rng(3)
    x = np.concatenate([np.linspace(1.3, 1.6, 601), rng.uniform(0.01, 40, 2000), [1.5, 1.4616321449683622, 2.0]])
    expected = sp.digamma(x)
    ulps = np.abs(chlo._UNARY["digamma"](x) - expected) / np.spacing(np.abs(expected))
    assert ulps.max() <= 8, (x[ulps.argmax()], ulps.max())


def test_polygamma_is_nan_for_fractional_or_negative_order():
    assert np.isnan(special.polygamma(np.array([1.5, -1.0, np.nan]), np.array([1.0, 1.0, 1.0]))).all()


_MULHI = """func.func @main(%a: tensor<{n}x{t}>, %b: tensor<{n}x{t}>) -> tensor<{n}x{t}> {{
  %r = chlo.mulhi %a, %b : tensor<{n}x{t}>, tensor<{n}x{t}> -> tensor<{n}x{t}>
  return %r : tensor<{n}x{t}>
}}"""


@pytest.mark.parametrize("dtype, spelling", [(np.int8, "i8"), (np.uint16, "ui16"), (np.int32, "i32"),
                                             (np.uint32, "ui32"), (np.int64, "i64"), (np.uint64, "ui64")])
def test_mulhi_is_the_high_half_of_the_exact_product(dtype, spelling):
    info = np.iinfo(dtype)
    rng = np.random.default_rng(3)
    a = np.concatenate([rng.integers(info.min, info.max, 200, dtype=dtype, endpoint=True),
                        np.array([info.min, info.max, info.min, 0, 1], dtype)])
    b = np.concatenate([rng.integers(info.min, info.max, 200, dtype=dtype, endpoint=True),
                        np.array([info.min, info.max, info.max, info.max, info.max], dtype)])
    f = hj.from_mlir(_MULHI.format(n=len(a), t=spelling), backend="reference")
    bits = 8 * np.dtype(dtype).itemsize
    high = [(int(x) * int(y)) >> bits for x, y in zip(a, b)]
    assert np.asarray(f(a, b)).tolist() == high
