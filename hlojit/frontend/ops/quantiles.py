"""Order statistics and weighted moments: quantile, percentile, median (numpy's 13 methods), average, cov,
corrcoef, and the NaN-ignoring reductions (nansum ... nanquantile).

A quantile sorts along the axes (NaN last) and interpolates between two gathered neighbours at numpy's
"virtual index" for the method. With NaNs ignored, each row counts its own numbers, so the virtual index is a
traced value per row and the same gathers serve.
"""
from __future__ import annotations

import numpy as np

from ...errors import DTypeError, ShapeError
from .. import dtypes
from ..tensor import Tensor
from . import _core
from ._core import as_tensor, describe, fail
from .complex_math import abs_squared, complex, conj, imag, real
from .elementwise import binary, compare, unary, where
from .indexing import take_along_axis
from .matmul import dot_general
from .joining import concatenate
from .reductions import all as _all, max as _max, mean as _mean, min as _min, prod as _prod, sum as _sum
from .shape import diagonal, moveaxis, reshape, transpose
from .statistics import argmax, argmin, cumprod, cumsum, sort

# numpy's continuous methods: virtual index = n q + alpha + q (1 - alpha - beta) - 1 (Hyndman & Fan)
_ALPHA_BETA = {"linear": (1, 1), "weibull": (0, 0), "hazen": (0.5, 0.5), "median_unbiased": (1 / 3, 1 / 3),
               "normal_unbiased": (3 / 8, 3 / 8), "interpolated_inverted_cdf": (0, 1)}
_DISCRETE = ("lower", "higher", "nearest", "midpoint", "inverted_cdf", "averaged_inverted_cdf",
             "closest_observation")
METHODS = tuple(_ALPHA_BETA) + _DISCRETE


def _float(op: str, x, complex_ok: bool = False) -> Tensor:
    """x as an inexact array (integers: the default float); complex where the op takes it, else refused (the
    quantiles sort, and complex numbers have no order: jax.numpy refuses them too)."""
    x = as_tensor(x, op)
    if dtypes.is_complex(x.dtype):
        if not complex_ok:
            fail(DTypeError, op, f"does not take complex {describe(x)} (numbers without an order)")
        return x
    return x if dtypes.is_float(x.dtype) else _core.convert(x, dtypes.DEFAULT_FLOAT)


def _rows(op: str, x: Tensor, axis) -> tuple[Tensor, tuple]:
    """x with the reduced axes flattened into one last axis, and the kept axes' positions."""
    axes = _core.normalize_axes(op, axis, x.ndim)
    kept = [d for d in range(x.ndim) if d not in axes]
    moved = transpose(x, kept + list(axes))
    return reshape(moved, tuple(x.shape[d] for d in kept) + (int(np.prod([x.shape[d] for d in axes])),)), axes


def _interpolate(sorted_rows: Tensor, count: Tensor, q: Tensor, method: str) -> Tensor:
    """Quantiles q (shape (k,)) of rows whose first `count` (per row) entries are sorted numbers."""
    dtype = sorted_rows.dtype
    count = _core.convert(count, dtype)[..., None]                  # (..., 1) against q's (k,)
    q = reshape(q, (1,) * (sorted_rows.ndim - 1) + (q.shape[0],))
    if method in _ALPHA_BETA:
        alpha, beta = _ALPHA_BETA[method]
        virtual = count * q + alpha + q * (1 - alpha - beta) - 1
    elif method in ("inverted_cdf", "averaged_inverted_cdf", "closest_observation"):
        virtual = count * q - 1 - (0.5 if method == "closest_observation" else 0.0)
    else:
        virtual = (count - 1) * q
    below = unary("floor", virtual)
    gamma = virtual - below
    if method == "lower":
        gamma = gamma * 0
    elif method == "higher":
        gamma = where(compare("greater", gamma, 0.0), 1.0, 0.0)
    elif method == "nearest":      # numpy rounds half to even
        gamma = where(compare("greater", gamma, 0.5), 1.0, where(compare("less", gamma, 0.5), 0.0,
                      _core.convert(binary("remainder", below, 2.0), dtype)))
    elif method == "midpoint":
        gamma = where(compare("greater", gamma, 0.0), 0.5, 0.0)
    elif method == "inverted_cdf":
        gamma = where(compare("greater", gamma, 0.0), 1.0, 0.0)
    elif method == "averaged_inverted_cdf":
        gamma = where(compare("greater", gamma, 0.0), 1.0, 0.5)
    elif method == "closest_observation":
        gamma = where(compare("greater", gamma, 0.0), 1.0,
                      _core.convert(binary("remainder", below + 1.0, 2.0), dtype))
    last = binary("maximum", count - 1, 0.0)
    lo = binary("minimum", binary("maximum", below, 0.0), last)
    hi = binary("minimum", binary("maximum", below + 1, 0.0), last)
    lo, hi = (_core.convert(i, dtypes.int32) for i in (lo, hi))
    flat_shape = sorted_rows.shape[:-1] + (q.shape[-1],)
    lo, hi = (_core.broadcast_to(i, flat_shape, "quantile") for i in (lo, hi))
    a, b = take_along_axis(sorted_rows, lo, -1), take_along_axis(sorted_rows, hi, -1)
    gamma = _core.broadcast_to(gamma, flat_shape, "quantile")
    # numpy's lerp, from the nearer end (so two -0.0 give -0.0), and exact where not interpolating (so an infinite
    # end is itself, where numpy's lerp gives NaN)
    lerp = where(compare("greater_equal", gamma, 0.5), b - (b - a) * (1 - gamma), a + gamma * (b - a))
    return where(compare("equal", gamma, 0.0), a, lerp)


def _quantile(op: str, a, q, axis, method: str, keepdims: bool, ignore_nan: bool) -> Tensor:
    if method not in METHODS:
        fail(ValueError, op, f"method must be one of {', '.join(METHODS)}, not {method!r}")
    x = _float(op, a)
    q_t = _core.convert(as_tensor(np.asarray(q) if isinstance(q, (list, tuple)) else q, op), x.dtype)
    if q_t.ndim > 1:
        fail(ShapeError, op, f"q must be a scalar or 1-D, not {describe(q_t)}")
    if isinstance(q, (int, float, np.ndarray, list, tuple)) and np.any((np.asarray(q) < 0) | (np.asarray(q) > 1)):
        fail(ValueError, op, "quantiles must be in [0, 1] (percentiles in [0, 100])")
    qs = reshape(q_t, (-1,)) if q_t.ndim else reshape(q_t, (1,))
    rows, axes = _rows(op, x, axis)
    if rows.shape[-1] == 0:       # numpy's (and JAX's) quantile of nothing is NaN: one NaN row gives it
        rows = _core.broadcast_to(_core.constant(np.nan, rows.dtype), rows.shape[:-1] + (1,), op)
    ordered = sort(rows, -1)
    nan = unary("isnan", ordered)
    if ignore_nan:
        count = _sum(_core.convert(~nan, dtypes.int32), axis=-1)
        out = _interpolate(ordered, count, qs, method)
        out = where(compare("equal", count, 0)[..., None], float("nan"), out)   # all-NaN rows: NaN
    else:
        count = _core.broadcast_to(_core.constant(rows.shape[-1], dtypes.int32), rows.shape[:-1], op)
        out = _interpolate(ordered, count, qs, method)
        out = where(unary("isnan", ordered[..., rows.shape[-1] - 1])[..., None], float("nan"), out)
    out = moveaxis(out, -1, 0)                                                    # q first, as numpy
    if keepdims:
        shape = list(x.shape)
        for d in axes:
            shape[d] = 1
        out = reshape(out, (out.shape[0],) + tuple(shape))
    return out if q_t.ndim else out[0]


def quantile(a, q, axis=None, method="linear", keepdims=False) -> Tensor:
    """numpy.quantile: q in [0, 1] (scalar or 1-D; a 1-D q leads the result), numpy's methods; NaN in the
    selection gives NaN."""
    return _quantile("quantile", a, q, axis, method, keepdims, False)


def percentile(a, q, axis=None, method="linear", keepdims=False) -> Tensor:
    """numpy.percentile: quantile of q / 100."""
    return _quantile("percentile", a, _percent(q), axis, method, keepdims, False)


def median(a, axis=None, keepdims=False) -> Tensor:
    return _quantile("median", a, 0.5, axis, "linear", keepdims, False)


def nanquantile(a, q, axis=None, method="linear", keepdims=False) -> Tensor:
    return _quantile("nanquantile", a, q, axis, method, keepdims, True)


def nanpercentile(a, q, axis=None, method="linear", keepdims=False) -> Tensor:
    return _quantile("nanpercentile", a, _percent(q), axis, method, keepdims, True)


def nanmedian(a, axis=None, keepdims=False) -> Tensor:
    return _quantile("nanmedian", a, 0.5, axis, "linear", keepdims, True)


def _percent(q):
    if isinstance(q, Tensor):
        return q / 100.0
    return np.asarray(q, np.float64) / 100.0


# --- NaN-ignoring reductions ---------------------------------------------------------------------------

def _without_nan(op: str, a, fill) -> tuple[Tensor, Tensor | None]:
    x = as_tensor(a, op)
    if not dtypes.is_inexact(x.dtype):
        return x, None
    nan = unary("isnan", x)   # of a complex number: either part NaN
    return where(nan, fill, x), nan


def nansum(a, axis=None, keepdims=False) -> Tensor:
    return _sum(_without_nan("nansum", a, 0.0)[0], axis, keepdims)


def nanprod(a, axis=None, keepdims=False) -> Tensor:
    return _prod(_without_nan("nanprod", a, 1.0)[0], axis, keepdims)


def _nan_extreme(op: str, a, axis, keepdims, reduce, fill) -> Tensor:
    x, nan = _without_nan(op, a, fill)
    out = reduce(x, axis, keepdims)
    if nan is None:
        return out
    all_nan = _min(_core.convert(nan, dtypes.int32), axis, keepdims)   # numpy: NaN where every one is NaN
    return where(compare("equal", all_nan, 1), float("nan"), out)


def nanmax(a, axis=None, keepdims=False) -> Tensor:
    return _nan_extreme("nanmax", a, axis, keepdims, _max, -np.inf)


def nanmin(a, axis=None, keepdims=False) -> Tensor:
    return _nan_extreme("nanmin", a, axis, keepdims, _min, np.inf)


def _nan_count(x: Tensor, nan: Tensor | None, axis, keepdims) -> Tensor:
    """How many numbers (not NaN) there are, in x's real dtype."""
    dtype = dtypes.real_dtype(x.dtype) if dtypes.is_complex(x.dtype) else x.dtype
    if nan is None:
        ones = _core.broadcast_to(_core.constant(1, dtype), x.shape, "nanmean")
        return _sum(ones, axis, keepdims)
    return _sum(_core.convert(~nan, dtype), axis, keepdims)


def nanmean(a, axis=None, keepdims=False) -> Tensor:
    """The mean of the numbers (NaN where there are none)."""
    x, nan = _without_nan("nanmean", _float("nanmean", a, complex_ok=True), 0.0)
    return _sum(x, axis, keepdims) / _nan_count(x, nan, axis, keepdims)


def nanvar(a, axis=None, ddof=0, keepdims=False) -> Tensor:
    x = _float("nanvar", a, complex_ok=True)
    clean, nan = _without_nan("nanvar", x, 0.0)
    count = _nan_count(clean, nan, axis, True)
    mean = _sum(clean, axis, True) / count
    deviation = where(nan, 0.0, x - mean) if nan is not None else x - mean
    total = _sum(abs_squared(deviation), axis, keepdims)
    dof = _nan_count(clean, nan, axis, keepdims) - ddof
    return where(dof > 0, total / binary("maximum", dof, 1.0), np.nan)   # numpy's NaN where dof <= 0


def nanstd(a, axis=None, ddof=0, keepdims=False) -> Tensor:
    return unary("sqrt", nanvar(a, axis, ddof, keepdims))


def nanargmax(a, axis=None, keepdims=False) -> Tensor:
    """argmax ignoring NaNs; -1 where every element is NaN (JAX's answer; numpy raises)."""
    return _nan_arg("nanargmax", a, axis, keepdims, argmax, -np.inf)


def nanargmin(a, axis=None, keepdims=False) -> Tensor:
    return _nan_arg("nanargmin", a, axis, keepdims, argmin, np.inf)


def _nan_arg(op, a, axis, keepdims, arg, fill) -> Tensor:
    x, nan = _without_nan(op, a, fill)
    out = arg(x, axis, keepdims)
    if nan is None:
        return out
    return where(_all(nan, axis, keepdims), -1, out)


def nancumsum(a, axis=None) -> Tensor:
    return cumsum(_without_nan("nancumsum", a, 0.0)[0], axis)


def nancumprod(a, axis=None) -> Tensor:
    return cumprod(_without_nan("nancumprod", a, 1.0)[0], axis)


# --- weighted moments ----------------------------------------------------------------------------------

def average(a, axis=None, weights=None, returned=False, keepdims=False):
    """The weighted mean (weights 1-D along one axis, or of a's shape); with returned, also the weights' sum."""
    x = _float("average", a, complex_ok=True)
    if weights is None:
        out = _mean(x, axis, keepdims)
        total = _core.broadcast_to(_core.constant(x.size / max(out.size, 1), x.dtype), out.shape, "average")
        return (out, total) if returned else out
    w = _core.convert(as_tensor(weights, "average"), x.dtype)
    if w.shape != x.shape:
        if axis is None or w.ndim != 1:
            fail(ShapeError, "average", f"weights {describe(w)} must have the shape of a {describe(x)}, or be "
                                        "1-D along the given axis")
        ax = _core.normalize_axis("average", axis, x.ndim)
        if w.shape[0] != x.shape[ax]:
            fail(ShapeError, "average", f"weights {describe(w)} do not match axis {ax} of {describe(x)}")
        w = reshape(w, tuple(w.shape[0] if d == ax else 1 for d in range(x.ndim)))
        w = _core.broadcast_to(w, x.shape, "average")
    total = _sum(w, axis, keepdims)
    out = _sum(x * w, axis, keepdims) / total
    return (out, total) if returned else out


def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None) -> Tensor:
    """numpy.cov: the covariance of the variables (rows, unless rowvar=False) over the observations."""
    x = _float("cov", m, complex_ok=True)
    if x.ndim > 2:
        fail(ShapeError, "cov", f"takes 1-D or 2-D arrays, not {describe(x)}")
    x = reshape(x, (1, x.shape[0])) if x.ndim == 1 else (x if rowvar else transpose(x))
    if y is not None:
        yt = _float("cov", y, complex_ok=True)
        yt = reshape(yt, (1, yt.shape[0])) if yt.ndim == 1 else (yt if rowvar else transpose(yt))
        (x, yt), _, _ = _core.promote("cov", x, yt)
        x = concatenate([x, yt], axis=0)
    n = x.shape[1]
    w = None
    if fweights is not None:
        w = _core.convert(as_tensor(fweights, "cov"), x.dtype)
    if aweights is not None:
        a = _core.convert(as_tensor(aweights, "cov"), x.dtype)
        w = a if w is None else w * a
    if ddof is None:
        ddof = 0 if bias else 1
    if w is None:
        mean = _mean(x, 1, True)
        centred = x - mean
        # numpy's degrees of freedom: N - ddof, clipped at 0 (one sample, or none, gives inf / NaN, not a sign flip)
        return _squeeze_cov(dot_general(centred, conj(centred), ((1,), (1,))) / max(n - ddof, 0))
    total = _sum(w)
    mean = _sum(x * w, 1, True) / total
    centred = x - mean
    if aweights is None:
        factor = total - ddof
    else:
        factor = total - ddof * _sum(w * _core.convert(as_tensor(aweights, "cov"), x.dtype)) / total
    factor = where(compare("less", factor, 0), 0.0, factor)
    return _squeeze_cov(dot_general(centred * w, conj(centred), ((1,), (1,))) / factor)


def _squeeze_cov(c: Tensor) -> Tensor:
    return reshape(c, ()) if c.shape == (1, 1) else c


def corrcoef(x, y=None, rowvar=True) -> Tensor:
    """Pearson correlation coefficients: cov normalised by the standard deviations, clipped to [-1, 1]."""
    c = cov(x, y, rowvar)
    if c.ndim == 0:
        return c / c
    d = unary("sqrt", real(diagonal(c))) if dtypes.is_complex(c.dtype) else unary("sqrt", diagonal(c))
    out = c / reshape(d, (-1, 1)) / reshape(d, (1, -1))
    if dtypes.is_complex(out.dtype):   # numpy clips the real and imaginary parts each
        return complex(*(binary("minimum", binary("maximum", part, -1.0), 1.0) for part in (real(out), imag(out))))
    return binary("minimum", binary("maximum", out, -1.0), 1.0)


__all__ = ["average", "corrcoef", "cov", "median", "nanargmax", "nanargmin", "nancumprod", "nancumsum", "nanmax",
           "nanmean", "nanmedian", "nanmin", "nanpercentile", "nanprod", "nanquantile", "nanstd", "nansum", "nanvar",
           "percentile", "quantile"]
