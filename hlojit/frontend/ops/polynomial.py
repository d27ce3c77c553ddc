"""numpy's least-squares polynomial fit and the Vandermonde matrix it is built on: `polyfit`, `vander`.

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

from ...errors import ShapeError
from .. import dtypes
from . import _core
from ._core import as_tensor, describe, fail
from .complex_math import conj, real
from .joining import stack
from .linalg.derived import lstsq
from .linalg.lu import inv
from .elementwise import unary
from .matmul import matmul
from .reductions import sum as _sum
from .shape import reshape


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
        rcond = m * float(np.finfo(real_dtype).eps)
    lhs, rhs = vander(x, order), y
    if w is not None:
        w = _core.convert(as_tensor(w, op), dtype)
        if w.shape != (m,):
            fail(ShapeError, op, f"w must be ({m},) to weight the points of x, not {describe(w)}")
        lhs = lhs * w[:, None]
        rhs = rhs * (w if y.ndim == 1 else w[:, None])
    scale = _core.convert(unary("sqrt", _sum(real(lhs * conj(lhs)), axis=0)), dtype)   # the columns' norms
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

