"""numpy's polynomial functions on 1-D coefficient arrays (highest power first): the least-squares fit
`polyfit` and the Vandermonde matrix it is built on (`vander`), arithmetic (`polyadd polysub polymul polydiv
polyder polyint`), and `poly` / `roots` between coefficients and roots (roots by the companion matrix's
eigenvalues, as numpy and jax.numpy). Where numpy trims leading zeros from a result (its length the data's),
these keep the static length, as jax.numpy does by default.

polyfit is numpy's algorithm (and jax.numpy's): the Vandermonde matrix of x, rows weighted by w, each column
scaled to unit norm (which keeps the high powers of a wide x from swamping the low ones: cond(V) drops by
orders of magnitude), solved by lstsq (an svd) with rcond = len(x) * eps, then unscaled. `full=True` returns
lstsq's residuals, rank and singular values and the rcond used; `cov=True` the covariance of the
coefficients, scaled by the residuals over the degrees of freedom (or not, with cov="unscaled"). numpy warns
when the fit is rank-deficient; a traced fit cannot (the rank is data), so `full=True` returns it instead,
as jax.numpy does.
"""
from __future__ import annotations

import numpy as np

from ...dialects.types import finfo
from ...errors import ShapeError, TracingError
from ..tensor import Tensor
from .. import dtypes
from .. import eager as _eager   # (loaded: ops imports it before this module)
from . import _core
from ._core import as_tensor, describe, fail
from .complex_math import abs_squared, conj, real
from .joining import concatenate, stack
from .linalg.derived import lstsq
from .linalg.eig import eigvals
from .linalg.lu import inv
from .elementwise import unary
from .matmul import matmul
from .reductions import sum as _sum
from .numeric import convolve
from .shape import eye, reshape


def vander(x, N: int | None = None, increasing: bool = False):
    """numpy.vander: the columns are powers of x (1-D), x^(N-1) ... x^0 (or ascending with increasing=True);
    N defaults to len(x). Each power is a product of the one before (as numpy's cumulative product), so an
    integer x gives exact integer powers."""
    x = as_tensor(x, "vander")
    if x.ndim != 1:
        fail(ShapeError, "vander", f"x must be 1-D, not {describe(x)}")
    n = x.shape[0] if N is None else int(N)
    if n < 0:
        fail(ValueError, "vander", f"N must be non-negative, not {n}")
    columns = []
    power = _core.broadcast_to(_core.constant(1, x.dtype, x.weak), x.shape, "vander")
    for _ in range(n):
        columns.append(power)
        power = power * x
    if not columns:
        return _core.broadcast_to(_core.constant(0, x.dtype, x.weak), (x.shape[0], 0), "vander")
    out = stack(columns, axis=1)
    return out if increasing else out[:, ::-1]


def polyfit(x, y, deg: int, rcond=None, full: bool = False, w=None, cov=False):
    """numpy.polyfit: coefficients p (highest power first, (deg + 1,) or (deg + 1, k) for y (m, k)) minimising
    sum (w * (polyval(p, x) - y))^2; see the module's docstring for full, cov and rank."""
    op = "polyfit"
    deg = int(deg)
    if deg < 0:
        fail(ValueError, op, f"deg must be non-negative, not {deg}")
    x, y = as_tensor(x, op), as_tensor(y, op)
    (x, y), dtype, _ = _core.promote(op, x, y)
    if not dtypes.is_inexact(dtype):
        dtype = dtypes.float32
        x, y = _core.convert(x, dtype), _core.convert(y, dtype)
    real_dtype = dtypes.real_dtype(dtype)
    if x.ndim != 1 or x.shape[0] == 0:
        fail(ShapeError, op, f"x must be a non-empty vector, not {describe(x)}")
    if y.ndim not in (1, 2) or y.shape[0] != x.shape[0]:
        fail(ShapeError, op, f"y must be ({x.shape[0]},) or ({x.shape[0]}, k) to pair with x {describe(x)}, "
                             f"not {describe(y)}")
    m, order = x.shape[0], deg + 1
    if rcond is None:
        rcond = m * float(finfo(real_dtype).eps)
    lhs, rhs = vander(x, order), y
    if w is not None:
        w = _core.convert(as_tensor(w, op), dtype)
        if w.shape != (m,):
            fail(ShapeError, op, f"w must be ({m},) to weight the points of x, not {describe(w)}")
        lhs = lhs * w[:, None]
        rhs = rhs * (w if y.ndim == 1 else w[:, None])
    scale = _core.convert(unary("sqrt", _sum(abs_squared(lhs), axis=0)), dtype)   # the columns' norms
    c, residuals, rank, s = lstsq(lhs / scale, rhs, rcond=rcond)
    c = c / (scale if c.ndim == 1 else scale[:, None])
    if full:
        return c, residuals, rank, s, _core.constant(rcond, real_dtype)
    if not cov:
        return c
    scaled = lhs / scale
    base = inv(matmul(conj(scaled).T, scaled))
    base = base / (scale[:, None] * scale[None, :])
    if cov == "unscaled":
        factor = 1.0
    else:
        if m <= order:
            fail(ValueError, op, f"cov needs more points ({m}) than coefficients ({order}) to scale by the "
                                 "residuals; pass cov='unscaled'")
        factor = residuals / (m - order)
    if c.ndim == 1:
        return c, base * factor
    return c, base[:, :, None] * reshape(factor, (1, 1, -1))



# --- polynomial arithmetic (1-D coefficient arrays, highest power first) ---------------------------------

def _coefficients(op: str, *ps) -> list[Tensor]:
    tensors, _, _ = _core.promote(op, *(as_tensor(p, op) for p in ps))
    for t in tensors:
        if t.ndim != 1:
            fail(ShapeError, op, f"coefficients must be 1-D, not {describe(t)}")
    return tensors


def _leading_zeros(p: Tensor, count: int) -> Tensor:
    return p if count <= 0 else concatenate([_core.broadcast_to(_core.constant(0, p.dtype, p.weak), (count,), "pad"),
                                             p])


def polyadd(a1, a2) -> Tensor:
    """The sum of two polynomials (the shorter padded with leading zeros)."""
    a, b = _coefficients("polyadd", a1, a2)
    n = max(a.shape[0], b.shape[0])
    return _leading_zeros(a, n - a.shape[0]) + _leading_zeros(b, n - b.shape[0])


def polysub(a1, a2) -> Tensor:
    """The difference of two polynomials."""
    a, b = _coefficients("polysub", a1, a2)
    n = max(a.shape[0], b.shape[0])
    return _leading_zeros(a, n - a.shape[0]) - _leading_zeros(b, n - b.shape[0])


def polymul(a1, a2) -> Tensor:
    """The product of two polynomials: their coefficients' convolution; no coefficients are the zero polynomial
    [0] (numpy's poly1d, JAX's)."""
    a, b = (_leading_zeros(p, 1) if p.shape[0] == 0 else p for p in _coefficients("polymul", a1, a2))
    return convolve(a, b)


def polyder(p, m: int = 1) -> Tensor:
    """The m-th derivative (numpy.polyder); integer coefficients stay integers; of a polynomial of degree below
    m, no coefficients (numpy's and JAX's empty array)."""
    (p,) = _coefficients("polyder", p)
    m = int(m)
    if m < 0:
        fail(ValueError, "polyder", f"the order m must be non-negative, not {m}")
    for _ in range(m):
        n = p.shape[0]
        if n <= 1:
            return p[:0]
        powers = _core.constant(np.arange(n - 1, 0, -1), p.dtype)
        p = p[: n - 1] * powers
    return p


def polyint(p, m: int = 1, k=None) -> Tensor:
    """The m-th antiderivative (numpy.polyint), with integration constants k (one, or one per integration,
    the first integration's first; default 0)."""
    (p,) = _coefficients("polyint", p)
    m = int(m)
    if m < 0:
        fail(ValueError, "polyint", f"the order m must be non-negative, not {m}")
    if not dtypes.is_inexact(p.dtype):
        p = _core.convert(p, dtypes.DEFAULT_FLOAT)
    constants = [0] * m if k is None else list(np.atleast_1d(np.asarray(k)))
    if len(constants) == 1 and m > 1:
        constants = constants * m
    if len(constants) != m:
        fail(ValueError, "polyint", f"k must have {m} constants (one per integration), not {len(constants)}")
    for c in constants:
        n = p.shape[0]
        p = concatenate([p / _core.constant(np.arange(n, 0, -1), p.dtype), reshape(
            _core.convert(as_tensor(c, "polyint"), p.dtype), (1,))])
    return p


def polydiv(u, v):
    """(quotient, remainder) of u / v by long division. The remainder keeps u's length, its leading zeros not
    trimmed (numpy trims them, which makes its length the data's): jax.numpy's default."""
    u, v = _coefficients("polydiv", u, v)
    if not dtypes.is_inexact(u.dtype):
        u, v = _core.convert(u, dtypes.DEFAULT_FLOAT), _core.convert(v, dtypes.DEFAULT_FLOAT)
    m, n = u.shape[0] - 1, v.shape[0] - 1
    q, r = [], u
    for k in range(max(m - n + 1, 0)):
        d = r[k] / v[0]
        q.append(d)
        r = r - concatenate([_core.broadcast_to(_core.constant(0, r.dtype), (k,), "pad"), d * v,
                             _core.broadcast_to(_core.constant(0, r.dtype), (m - n - k,), "pad")])
    quotient = stack(q) if q else _core.broadcast_to(_core.constant(0, u.dtype), (1,), "polydiv")
    return quotient, r


def poly(seq_of_zeros) -> Tensor:
    """The monic polynomial with these roots (1-D), or the characteristic polynomial of a square matrix (its
    eigenvalues' polynomial: real coefficients for a real matrix). No roots: the constant 1.0, 0-d (numpy's)."""
    z = as_tensor(seq_of_zeros, "poly")
    real_matrix = False
    if z.ndim == 2 and z.shape[0] == z.shape[1] and z.shape[0] > 0:
        real_matrix = not dtypes.is_complex(z.dtype)
        z = eigvals(z)
    elif z.ndim != 1:
        fail(ShapeError, "poly", f"needs a 1-D sequence of roots or a square matrix, not {describe(z)}")
    if not dtypes.is_inexact(z.dtype):
        z = _core.convert(z, dtypes.DEFAULT_FLOAT)
    if z.shape[0] == 0:
        return _core.constant(1, z.dtype)
    p = _core.broadcast_to(_core.constant(1, z.dtype), (1,), "poly")
    for i in range(z.shape[0]):
        p = concatenate([p, _core.broadcast_to(_core.constant(0, z.dtype), (1,), "poly")]) - \
            concatenate([_core.broadcast_to(_core.constant(0, z.dtype), (1,), "poly"), p * z[i]])
    return real(p) if real_matrix else p


def roots(p, *, strip_zeros: bool = True) -> Tensor:
    """The roots of the polynomial p, as the eigenvalues of its companion matrix (complex, as jax.numpy's).
    strip_zeros (numpy's behaviour, jax.numpy's default) removes leading zeros and turns trailing ones into
    exact zero roots, which needs p's values (numpy, Python or an hj.Array); with strip_zeros=False a traced p
    works and a leading zero gives non-finite roots. Runs eagerly outside a trace, as the ops do."""
    if not strip_zeros:
        return _companion_roots_anywhere(p, 0)
    if isinstance(p, Tensor):
        fail(TracingError, "roots", "strip_zeros=True needs the coefficients' values (numpy or Python), not a "
                                    f"traced {describe(p)}: pass strip_zeros=False")
    values = np.atleast_1d(np.asarray(p))
    if values.ndim != 1:
        fail(ShapeError, "roots", f"coefficients must be 1-D, not shape {values.shape}")
    nonzero = np.flatnonzero(values)
    if nonzero.size == 0:
        values, zero_roots = values[:1], 0
    else:
        values, zero_roots = values[nonzero[0]: nonzero[-1] + 1], int(values.shape[0] - nonzero[-1] - 1)
    return _companion_roots_anywhere(values, zero_roots)


def _companion_roots(p, zero_roots: int) -> Tensor:
    """The eigenvalues of p's companion matrix, then `zero_roots` exact zeros."""
    (p,) = _coefficients("roots", p)
    if not dtypes.is_inexact(p.dtype):
        p = _core.convert(p, dtypes.DEFAULT_FLOAT)
    complex_dtype = dtypes.complex_dtype(p.dtype)
    n = p.shape[0] - 1
    if n < 1:
        found = _core.broadcast_to(_core.constant(0, complex_dtype), (0,), "roots")
    else:
        first_row = reshape(-p[1:] / p[0], (1, n))
        companion = first_row if n == 1 else concatenate(
            [first_row, concatenate([eye(n - 1, dtype=p.dtype), _core.broadcast_to(
                _core.constant(0, p.dtype), (n - 1, 1), "roots")], axis=1)], axis=0)
        found = _core.convert(eigvals(companion), complex_dtype)
    if zero_roots:
        found = concatenate([found, _core.broadcast_to(_core.constant(0, complex_dtype), (zero_roots,), "roots")])
    return found


_companion_roots_anywhere = _eager.dispatching(_companion_roots)   # roots is a Python helper: it strips first
