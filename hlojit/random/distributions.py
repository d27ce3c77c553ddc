"""Distributions built on the keys and uniform bits of core.py, with jax.random's names and arguments.

Where JAX's algorithm is a function of its uniform or normal numbers (gumbel, exponential, laplace, logistic,
cauchy, rademacher, categorical, choice, truncated_normal, t given its gamma), it is followed exactly, so the
same key gives JAX's numbers (to an ulp, as uniform's). Where JAX runs a rejection loop per element (gamma,
poisson), hlojit draws a fixed number of candidates per element at once and keeps the first accepted
(Marsaglia and Tsang's gamma: acceptance >= 0.95 per candidate, 16 candidates; Knuth's and Hormann's PTRS
poisson): the distribution is right, the numbers are not JAX's. Failing every candidate has probability below
1e-20 and then the last candidate is kept.
"""
from __future__ import annotations

import math

import numpy as np

from ..errors import DTypeError, ShapeError
from ..frontend import dtypes, ops
from ..frontend.ops._core import as_tensor, describe, fail
from ..frontend.tensor import Tensor
from .core import (_check_key, _float_dtype, _public, _row, _shape, bernoulli, erfinv_f32, key as _key, normal,
                   permutation, randint, split, uniform)

_CANDIDATES = 16


def _keys(key: Tensor, n: int) -> list[Tensor]:
    keys = split(key, n)
    return [_row(keys, i) for i in range(n)]


def _finfo(dtype):
    return np.finfo(dtype if dtype != dtypes.bfloat16 else np.float32)


@_public("shape", "dtype")
def gumbel(key, shape=(), dtype=dtypes.float32):
    """Standard Gumbel: -log(-log(u)) for u uniform in [tiny, 1) (JAX's)."""
    key, shape, dtype = _check_key("gumbel", key), _shape("gumbel", shape), _float_dtype("gumbel", dtype)
    u = uniform(key, shape, dtype, float(_finfo(dtype).tiny), 1.0)
    return -ops.log(-ops.log(u))


@_public("shape", "dtype")
def exponential(key, shape=(), dtype=dtypes.float32):
    """Standard exponential: -log1p(-u) (JAX's)."""
    key, shape, dtype = _check_key("exponential", key), _shape("exponential", shape), \
        _float_dtype("exponential", dtype)
    return -ops.log1p(-uniform(key, shape, dtype))


@_public("shape", "dtype")
def laplace(key, shape=(), dtype=dtypes.float32):
    """Standard Laplace: sign(u) log1p(-|u|) for u uniform in (-1, 1) (JAX's)."""
    key, shape, dtype = _check_key("laplace", key), _shape("laplace", shape), _float_dtype("laplace", dtype)
    u = uniform(key, shape, dtype, -1.0 + float(_finfo(dtype).epsneg), 1.0)
    magnitude = ops.log1p(-ops.abs(u))
    return ops.where(u < 0, -magnitude, magnitude)   # = sign(u) * magnitude


@_public("shape", "dtype")
def logistic(key, shape=(), dtype=dtypes.float32):
    """Standard logistic: log(u / (1 - u)) for u uniform in [eps, 1) (JAX's)."""
    key, shape, dtype = _check_key("logistic", key), _shape("logistic", shape), _float_dtype("logistic", dtype)
    u = uniform(key, shape, dtype, float(_finfo(dtype).eps), 1.0)
    return ops.log(u / (1.0 - u))


@_public("shape", "dtype")
def cauchy(key, shape=(), dtype=dtypes.float32):
    """Standard Cauchy: tan(pi (u - 1/2)) for u uniform in [eps, 1) (JAX's)."""
    key, shape, dtype = _check_key("cauchy", key), _shape("cauchy", shape), _float_dtype("cauchy", dtype)
    u = uniform(key, shape, dtype, float(_finfo(dtype).eps), 1.0)
    return ops.tan(math.pi * (u - 0.5))


@_public("shape", "dtype")
def rademacher(key, shape=(), dtype=dtypes.int32):
    """-1 or +1 with equal probability (2 bernoulli - 1, JAX's)."""
    key, shape = _check_key("rademacher", key), _shape("rademacher", shape)
    return ops.astype(bernoulli(key, 0.5, shape), dtype) * 2 - 1


@_public("axis", "shape")
def categorical(key, logits, axis=-1, shape=None):
    """Indices drawn with probabilities softmax(logits) along `axis`: the argmax of logits plus Gumbel noise
    (JAX's), int32; `shape` (default: logits' shape without `axis`) may add leading sample dimensions."""
    key, logits = _check_key("categorical", key), as_tensor(logits, "categorical")
    if not dtypes.is_float(logits.dtype):
        fail(DTypeError, "categorical", f"logits must be floats, not {describe(logits)}")
    axis = axis % max(logits.ndim, 1)
    batch = logits.shape[:axis] + logits.shape[axis + 1:]
    shape = batch if shape is None else _shape("categorical", shape)
    if shape[len(shape) - len(batch):] != batch:
        fail(ShapeError, "categorical", f"shape {shape} must end with logits' batch shape {batch}")
    prefix = shape[:len(shape) - len(batch)]
    noise_shape = prefix + batch[:axis] + (logits.shape[axis],) + batch[axis:]
    noisy = gumbel(key, noise_shape, logits.dtype) + ops.reshape(logits, (1,) * len(prefix) + logits.shape)
    return ops.argmax(noisy, axis=len(prefix) + axis)


@_public("a", "shape", "replace", "axis")
def choice(key, a, shape=(), replace=True, p=None, axis=0):
    """Elements of `a` (or of range(a) for an int), with or without replacement, uniformly or with
    probabilities `p` (JAX's algorithms: randint; a permutation's first draws; the inverse CDF; Gumbel top-k)."""
    key = _check_key("choice", key)
    shape = _shape("choice", shape)
    draws = int(np.prod(shape))
    if isinstance(a, (int, np.integer)) and not isinstance(a, bool):
        n, values = int(a), None
    else:
        values = as_tensor(a, "choice")
        if values.ndim == 0:
            fail(ShapeError, "choice", "a must be an int or an array with at least one axis")
        axis = axis % values.ndim
        n = values.shape[axis]
    if n == 0 and draws:
        fail(ValueError, "choice", "cannot choose from an empty set")
    if not replace and draws > n:
        fail(ValueError, "choice", f"cannot take {draws} samples from {n} without replacement")
    if p is None:
        if replace:
            index = randint(key, shape, 0, n)
        else:
            index = ops.reshape(permutation(key, n)[:draws], shape)
    else:
        p = as_tensor(p, "choice")
        if p.shape != (n,):
            fail(ShapeError, "choice", f"p must have shape ({n},), not {describe(p)}")
        if not dtypes.is_float(p.dtype):
            p = ops.astype(p, dtypes.float32)
        if replace:
            cumulative = ops.cumsum(p)
            r = cumulative[n - 1] * (1.0 - uniform(key, shape, p.dtype))
            index = ops.searchsorted(cumulative, r)
        else:
            g = gumbel(key, (n,), p.dtype) + ops.log(p)
            index = ops.reshape(ops.top_k(g, draws)[1], shape)
    if values is None:
        return index
    taken = ops.take(values, ops.reshape(index, (-1,)), axis=axis)
    return ops.reshape(taken, values.shape[:axis] + shape + values.shape[axis + 1:])


@_public("axis")
def shuffle(key, x, axis=0):
    """x permuted along `axis` (jax.random.shuffle, which JAX deprecates for permutation)."""
    x = as_tensor(x, "shuffle")
    moved = ops.moveaxis(x, axis, 0)
    return ops.moveaxis(permutation(key, moved), 0, axis)


@_public("shape", "dtype")
def truncated_normal(key, lower, upper, shape=None, dtype=dtypes.float32):
    """Normal numbers within (lower, upper): sqrt(2) erfinv(u) for u uniform between erf(lower / sqrt 2) and
    erf(upper / sqrt 2), clipped strictly inside the bounds (JAX's recipe)."""
    key, dtype = _check_key("truncated_normal", key), _float_dtype("truncated_normal", dtype)
    lower, upper = (ops.astype(as_tensor(v, "truncated_normal"), dtype) for v in (lower, upper))
    shape = np.broadcast_shapes(lower.shape, upper.shape) if shape is None else _shape("truncated_normal", shape)
    sqrt2 = float(np.float32(np.sqrt(2)))
    a, b = ops.erf(lower / sqrt2), ops.erf(upper / sqrt2)
    u = uniform(key, shape, dtype, a, b)
    out = ops.astype(erfinv_f32(ops.astype(u, dtypes.float32)), dtype) * sqrt2
    return ops.clip(out, ops.nextafter(lower, np.inf), ops.nextafter(upper, -np.inf))


def _gamma_at_least_one(key: Tensor, a: Tensor, shape) -> Tensor:
    """Gamma(a) for a >= 1 by Marsaglia and Tsang's squeeze, _CANDIDATES at a time: the first accepted."""
    kz, ku = _keys(key, 2)
    d = a - 1.0 / 3.0
    c = 1.0 / ops.sqrt(9.0 * d)
    z = normal(kz, (_CANDIDATES,) + shape, a.dtype)
    u = uniform(ku, (_CANDIDATES,) + shape, a.dtype)
    v = (1.0 + c * z) ** 3
    safe_v = ops.where(v > 0, v, 1.0)
    accepted = (v > 0) & (ops.log(u) < 0.5 * z * z + d - d * safe_v + d * ops.log(safe_v))
    first = ops.argmax(accepted, axis=0)
    chosen = ops.take_along_axis(d * safe_v, ops.reshape(first, (1,) + shape), axis=0)
    return ops.reshape(chosen, shape)


@_public("shape", "dtype")
def gamma(key, a, shape=None, dtype=dtypes.float32):
    """Gamma(a, 1) numbers for shape parameters a > 0 (broadcast to `shape`); a < 1 by Gamma(a + 1) U^(1/a)."""
    key, dtype = _check_key("gamma", key), _float_dtype("gamma", dtype)
    a = ops.astype(as_tensor(a, "gamma"), dtypes.float32 if dtype.itemsize < 4 else dtype)
    shape = a.shape if shape is None else _shape("gamma", shape)
    a = ops.broadcast_to(a, shape)
    kg, kb = _keys(key, 2)
    boosted = a < 1.0
    x = _gamma_at_least_one(kg, ops.where(boosted, a + 1.0, a), shape)
    u = uniform(kb, shape, a.dtype, float(_finfo(a.dtype).tiny), 1.0)
    x = ops.where(boosted, x * ops.exp(ops.log(u) / a), x)
    return ops.astype(x, dtype)


@_public("shape", "dtype")
def beta(key, a, b, shape=None, dtype=dtypes.float32):
    """Beta(a, b): X / (X + Y) for X ~ Gamma(a), Y ~ Gamma(b)."""
    key = _check_key("beta", key)
    a, b = as_tensor(a, "beta"), as_tensor(b, "beta")
    shape = np.broadcast_shapes(a.shape, b.shape) if shape is None else _shape("beta", shape)
    ka, kb = _keys(key, 2)
    x, y = gamma(ka, ops.broadcast_to(a, shape), shape, dtype), gamma(kb, ops.broadcast_to(b, shape), shape, dtype)
    return x / (x + y)


@_public("shape", "dtype")
def dirichlet(key, alpha, shape=None, dtype=dtypes.float32):
    """Dirichlet(alpha) vectors along the last axis: gammas normalised to sum 1."""
    key, alpha = _check_key("dirichlet", key), as_tensor(alpha, "dirichlet")
    if alpha.ndim < 1:
        fail(ShapeError, "dirichlet", f"alpha must have at least one axis, not {describe(alpha)}")
    shape = alpha.shape[:-1] if shape is None else _shape("dirichlet", shape)
    full = shape + alpha.shape[-1:]
    g = gamma(key, ops.broadcast_to(alpha, full), full, dtype)
    return g / ops.sum(g, axis=-1, keepdims=True)


@_public("shape", "dtype")
def chisquare(key, df, shape=None, dtype=dtypes.float32):
    """Chi-square with df degrees of freedom: 2 Gamma(df / 2)."""
    df = as_tensor(df, "chisquare")
    return 2.0 * gamma(key, df / 2.0, shape, dtype)


@_public("shape", "dtype")
def t(key, df, shape=(), dtype=dtypes.float32):
    """Student's t: normal * sqrt(df/2 / Gamma(df/2)) (JAX's construction)."""
    key = _check_key("t", key)
    shape = _shape("t", shape)
    kn, kg = _keys(key, 2)
    df = as_tensor(df, "t")
    half = ops.broadcast_to(ops.astype(df, dtype) / 2.0, shape)
    return normal(kn, shape, dtype) * ops.sqrt(half / gamma(kg, half, shape, dtype))


def _poisson_knuth(key: Tensor, lam: Tensor, shape, draws: int = 48) -> Tensor:
    """How many partial sums of log-uniforms stay above -lam (Knuth's product of uniforms), for lam < 10."""
    u = uniform(key, shape + (draws,), lam.dtype, float(_finfo(lam.dtype).tiny), 1.0)
    partial = ops.cumsum(ops.log(u), axis=-1)
    return ops.sum(ops.astype(partial > -ops.reshape(lam, shape + (1,)), dtypes.int32), axis=-1)


def _poisson_ptrs(key: Tensor, lam: Tensor, shape) -> Tensor:
    """Hormann's transformed rejection with squeeze (PTRS), for lam >= 10, _CANDIDATES at a time."""
    ku, kv = _keys(key, 2)
    lam = ops.where(lam >= 10.0, lam, 10.0)
    slam, loglam = ops.sqrt(lam), ops.log(lam)
    b = 0.931 + 2.53 * slam
    a = -0.059 + 0.02483 * b
    inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
    vr = 0.9277 - 3.6224 / (b - 2.0)
    u = uniform(ku, (_CANDIDATES,) + shape, lam.dtype) - 0.5
    v = uniform(kv, (_CANDIDATES,) + shape, lam.dtype, float(_finfo(lam.dtype).tiny), 1.0)
    us = 0.5 - ops.abs(u)
    k = ops.floor((2.0 * a / us + b) * u + lam + 0.43)
    quick = (us >= 0.07) & (v <= vr)
    reject = (k < 0) | ((us < 0.013) & (v > us))
    log_accept = ops.log(v) + ops.log(inv_alpha) - ops.log(a / (us * us) + b) <= \
        -lam + k * loglam - ops.lgamma(ops.maximum(k, 0.0) + 1.0)
    accepted = quick | (~reject & log_accept)
    first = ops.argmax(accepted, axis=0)
    chosen = ops.take_along_axis(k, ops.reshape(first, (1,) + shape), axis=0)
    return ops.astype(ops.reshape(chosen, shape), dtypes.int32)


@_public("shape", "dtype")
def poisson(key, lam, shape=None, dtype=dtypes.int32):
    """Poisson(lam) counts: Knuth's method below lam = 10, PTRS above (as JAX switches), int32."""
    key = _check_key("poisson", key)
    lam = ops.astype(as_tensor(lam, "poisson"), dtypes.float32)
    shape = lam.shape if shape is None else _shape("poisson", shape)
    lam = ops.broadcast_to(lam, shape)
    k1, k2 = _keys(key, 2)
    counts = ops.where(lam < 10.0, _poisson_knuth(k1, ops.minimum(lam, 10.0), shape), _poisson_ptrs(k2, lam, shape))
    return ops.astype(ops.where(lam == 0.0, 0, counts), dtype)


@_public("shape", "dtype")
def multivariate_normal(key, mean, cov, shape=None, dtype=dtypes.float32):
    """mean + L z for z standard normal and L the Cholesky factor of cov (JAX's default method)."""
    key = _check_key("multivariate_normal", key)
    mean, cov = ops.astype(as_tensor(mean, "multivariate_normal"), dtype), ops.astype(
        as_tensor(cov, "multivariate_normal"), dtype)
    n = mean.shape[-1]
    if cov.shape[-2:] != (n, n):
        fail(ShapeError, "multivariate_normal", f"cov {describe(cov)} must be ({n}, {n}) for mean {describe(mean)}")
    shape = np.broadcast_shapes(mean.shape[:-1], cov.shape[:-2]) if shape is None else \
        _shape("multivariate_normal", shape)
    factor = ops.linalg.cholesky(cov)
    z = normal(key, shape + (n,), dtype)
    return mean + ops.einsum("...ij,...j->...i", factor, z)


@_public("n", "shape", "dtype")
def orthogonal(key, n, shape=(), dtype=dtypes.float32):
    """Haar-distributed orthogonal n x n matrices: Q of the QR of a normal matrix, columns signed by R's
    diagonal (JAX's)."""
    key = _check_key("orthogonal", key)
    shape = _shape("orthogonal", shape)
    z = normal(key, shape + (n, n), dtype)
    q, r = ops.linalg.qr(z)
    d = ops.diagonal(r, 0, -2, -1)
    return q * ops.expand_dims(ops.where(d < 0, -1.0, 1.0), -2)


def PRNGKey(seed):   # noqa: N802 (JAX's name)
    """JAX's older name of key(seed): the same uint32[2] key."""
    return _key(seed)


__all__ = ["PRNGKey", "beta", "categorical", "cauchy", "chisquare", "choice", "dirichlet", "exponential", "gamma",
           "gumbel", "laplace", "logistic", "multivariate_normal", "orthogonal", "poisson", "rademacher", "shuffle",
           "t", "truncated_normal"]
