"""Random numbers from stateless, counter-based keys, as `jax.random` has them (core.py says how), and the
distributions built on them (distributions.py).

    key = hj.random.key(0)                   # a uint32[2] array; hj.random.PRNGKey(0) is the same
    key, sub = hj.random.split(key)
    x = hj.random.normal(sub, (3, 4))
"""
from .core import (bernoulli, bits, erfinv_f32, fold_in, key, normal, permutation, randint, split, threefry2x32,
                   uniform)
from .distributions import (PRNGKey, beta, categorical, cauchy, chisquare, choice, dirichlet, exponential, gamma,
                            gumbel, laplace, logistic, multivariate_normal, orthogonal, poisson, rademacher, shuffle,
                            t, truncated_normal)

__all__ = ["key", "PRNGKey", "split", "fold_in", "bits", "uniform", "normal", "randint", "bernoulli", "permutation",
           "threefry2x32", "beta", "categorical", "cauchy", "chisquare", "choice", "dirichlet", "exponential", "gamma",
           "gumbel", "laplace", "logistic", "multivariate_normal", "orthogonal", "poisson", "rademacher", "shuffle",
           "t", "truncated_normal"]
