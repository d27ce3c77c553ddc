"""hj.random's distributions: JAX's own numbers where JAX's algorithm is a function of its uniform numbers
(recorded here from jax 0.10.2 for PRNGKey(42)), and the right distribution elsewhere (moments and
Kolmogorov-Smirnov against scipy), on the reference backend and the IREE targets."""
from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import hlojit as hj
from hlojit import random as hr

from conftest import BACKENDS

KEY = np.array([0, 42], np.uint32)
JAX = {  # jax.random.<name>(jax.random.PRNGKey(42), ...) with jax 0.10.2
    "gumbel": [0.3340933918952942, 0.952019453048706, 0.7255305647850037, 0.5481715202331543, 0.2268049567937851],
    "exponential": [0.670817494392395, 1.1388006210327148, 0.9578199982643127, 0.8232924938201904,
                    0.5990096926689148],
    "laplace": [0.022839652374386787, -0.4456535577774048, -0.2646729052066803, -0.1301453858613968,
                0.10392900556325912],
    "logistic": [-0.0451694130897522, 0.7528398036956787, 0.47375231981277466, 0.245286762714386,
                 -0.19806653261184692],
    "cauchy": [-0.03548463061451912, 0.6337261199951172, 0.38244056701660156, 0.1940706968307495,
               -0.15630900859832764],
    "truncated_normal": [0.14770005643367767, 0.5684449076652527, 0.42102551460266113, 0.29997000098228455,
                         0.0691138207912445],
}
JAX_EXACT = {
    "rademacher": [1, -1, -1, -1, 1, -1],
    "categorical": [2, 2, 2, 2, 1, 2, 1, 2],
    "choice": [4, 4, 1, 9],
    "choice_p": [2, 2, 2, 2, 2, 2],
    "choice_without_replacement": [7, 4, 2, 5],
}


def jax_cases(k, p):
    """`p`: the distributions' parameters (PARAMETERS), Python numbers or arguments (see on)."""
    return {
        "gumbel": hr.gumbel(k, (5,)), "exponential": hr.exponential(k, (5,)), "laplace": hr.laplace(k, (5,)),
        "logistic": hr.logistic(k, (5,)), "cauchy": hr.cauchy(k, (5,)),
        "truncated_normal": hr.truncated_normal(k, p["lower"], p["upper"], (5,)),
        "rademacher": hr.rademacher(k, (6,)),
        "categorical": hr.categorical(k, hj.ops.log(p["class_p"]), shape=(8,)),
        "choice": hr.choice(k, 10, (4,)),
        "choice_p": hr.choice(k, 5, (6,), p=p["choice_p"]),
        "choice_without_replacement": hr.choice(k, 10, (4,), replace=False),
    }


N = 20000
PARAMETERS = {"lower": -1.0, "upper": 2.0, "class_p": np.float32([0.1, 0.2, 0.7]),
              "choice_p": np.float32([0.1, 0.2, 0.3, 0.2, 0.2]), "gamma_small": 0.5, "gamma_large": 3.0, "beta_a": 2.0,
              "beta_b": 5.0, "alpha": np.float32([1.0, 2.0, 3.0]), "lam_small": 3.0, "lam_large": 40.0, "t_df": 5.0,
              "chi2_df": 4.0}


def on(backend, fn):
    """fn(KEY, parameters) on `backend`. The reference backend takes the parameters as Python numbers (constants
    of the program, as a user writes them); the IREE targets as f32 arguments, the same numbers: IREE evaluates
    constant expressions (truncated_normal's erf of its bounds, poisson's logs ...) while compiling, by
    JIT-compiling them: truncated_normal alone took 21 s of compiler CPU on cpu with constant bounds, 2 s with
    arguments (vmvx: 16 and 2.5), samples 19 and 11 s; the numbers are the same bits."""
    if backend == "reference":
        return hj.jit(lambda k: fn(k, PARAMETERS), backend=backend)(KEY)
    arguments = {name: np.float32(value) for name, value in PARAMETERS.items()}
    return hj.jit(fn, backend=backend)(KEY, arguments)


@pytest.mark.parametrize("backend", BACKENDS)
def test_jax_numbers(backend):
    out = on(backend, jax_cases)
    for name, expected in JAX.items():
        np.testing.assert_allclose(np.asarray(out[name]), expected, rtol=1e-5, atol=5e-7, err_msg=name)  # ulps
    for name, expected in JAX_EXACT.items():
        np.testing.assert_array_equal(np.asarray(out[name]), expected, err_msg=name)


def test_outside_jit_and_prngkey():
    np.testing.assert_array_equal(np.asarray(hr.PRNGKey(42)), KEY)
    np.testing.assert_allclose(np.asarray(hr.gumbel(hr.PRNGKey(42), (5,))), JAX["gumbel"], rtol=2e-6)
    picked = np.asarray(hr.choice(KEY, np.arange(20, 30), (2, 2)))
    assert picked.shape == (2, 2) and set(picked.ravel()) <= set(range(20, 30))


def samples(k, p):
    keys = hr.split(k, 8)
    return {
        "gamma_0.5": hr.gamma(keys[0], p["gamma_small"], (N,)), "gamma_3": hr.gamma(keys[1], p["gamma_large"], (N,)),
        "beta": hr.beta(keys[2], p["beta_a"], p["beta_b"], (N,)),
        "dirichlet": hr.dirichlet(keys[3], p["alpha"], (N,)),
        "poisson_3": hr.poisson(keys[4], p["lam_small"], (N,)), "poisson_40": hr.poisson(keys[5], p["lam_large"], (N,)),
        "t": hr.t(keys[6], p["t_df"], (N,)), "chisquare": hr.chisquare(keys[7], p["chi2_df"], (N,)),
    }


def ks(x, cdf):
    return stats.kstest(np.asarray(x, np.float64), cdf).pvalue


@pytest.mark.parametrize("backend", ["reference", "iree:cpu"])
def test_distributions_are_right(backend):
    out = {k: np.asarray(v) for k, v in on(backend, samples).items()}
    assert ks(out["gamma_0.5"], stats.gamma(0.5).cdf) > 1e-3
    assert ks(out["gamma_3"], stats.gamma(3.0).cdf) > 1e-3
    assert ks(out["beta"], stats.beta(2.0, 5.0).cdf) > 1e-3
    assert ks(out["t"], stats.t(5.0).cdf) > 1e-3
    assert ks(out["chisquare"], stats.chi2(4.0).cdf) > 1e-3
    d = out["dirichlet"]
    np.testing.assert_allclose(d.sum(-1), 1.0, rtol=1e-5)
    np.testing.assert_allclose(d.mean(0), [1 / 6, 2 / 6, 3 / 6], atol=0.01)
    for lam in (3, 40):
        p = out[f"poisson_{lam}"]
        assert p.dtype == np.int32 and p.min() >= 0
        assert abs(p.mean() - lam) < 4 * np.sqrt(lam / N) and abs(p.var() / lam - 1) < 0.05
        observed = np.bincount(p, minlength=lam * 3)[: lam * 3]
        expected = stats.poisson(lam).pmf(np.arange(lam * 3)) * N
        keep = expected > 20
        assert stats.chisquare(observed[keep], expected[keep] * observed[keep].sum() / expected[keep].sum()).pvalue \
            > 1e-3


def test_shuffle_and_errors():
    x = np.arange(12).reshape(3, 4)
    out = np.asarray(hr.shuffle(KEY, x, axis=1))
    assert sorted(out[0]) == [0, 1, 2, 3] and (out[1:] - out[:-1] == 4).all()   # whole columns move
    with pytest.raises(ValueError, match="without replacement"):
        hr.choice(KEY, 3, (5,), replace=False)
    with pytest.raises(hj.ShapeError, match="p must have shape"):
        hr.choice(KEY, 3, (2,), p=np.float32([0.5, 0.5]))


def test_multivariate_normal_and_orthogonal():
    cov = np.float32([[2.0, 0.6], [0.6, 1.0]])
    x = np.asarray(hr.multivariate_normal(KEY, np.float32([1.0, -1.0]), cov, (N,)))
    np.testing.assert_allclose(x.mean(0), [1.0, -1.0], atol=0.05)
    np.testing.assert_allclose(np.cov(x.T), cov, atol=0.06)
    q = np.asarray(hr.orthogonal(KEY, 4, (3,)))
    np.testing.assert_allclose(q @ np.swapaxes(q, -1, -2), np.broadcast_to(np.eye(4), (3, 4, 4)), atol=1e-5)
