"""What is built from the factorizations: pinv, lstsq, matrix_rank, cond, matrix_power, multi_dot; real or
complex (pinv, lstsq through svd's u and vh^H; singular values, residuals, rank and cond real, as numpy's)."""
from __future__ import annotations

import numpy as np

from ... import dtypes, ops
from .. import _core
from ..complex_math import abs_squared
from . import _util
from ._util import ShapeError, mH, mT
from .lu import inv
from .norms import matrix_norm
from .spectral import svd


def _cutoff(s, rtol, m: int, n: int, dtype):
    """Singular values above rtol * largest count (numpy's default rtol: max(m, n) * eps)."""
    rtol = max(m, n) * _util.eps(dtype) if rtol is None else rtol
    return s > rtol * s[..., :1]


def pinv(a, rcond=None, hermitian: bool = False, *, rtol=None):
    """numpy.linalg.pinv of a (..., m, n) from its svd; singular values at most rtol (or rcond) times the
    largest are dropped (numpy's default rtol: max(m, n) * eps)."""
    a = _util.matrix("pinv", a, complex_ok=True)
    m, n = a.shape[-2:]
    u, s, vh = svd(a, full_matrices=False)
    keep = _cutoff(s, rtol if rtol is not None else rcond, m, n, a.dtype)
    s_inv = ops.where(keep, 1 / ops.where(keep, s, 1), 0)
    return _util.mm(mH(vh) * s_inv.astype(a.dtype)[..., None, :], mH(u))


def lstsq(a, b, rcond=None):
    """numpy.linalg.lstsq for a (m, n) and b (m,) or (m, k): (x, residuals, rank, s). residuals are the squared
    column norms of b - a @ x; numpy returns an empty array when rank < n or m <= n: this does for m <= n
    (known when tracing) and, like JAX, gives the sums otherwise."""
    op = "lstsq"
    a = _util.matrix(op, a, complex_ok=True)
    if a.ndim != 2:
        _core.fail(ShapeError, op, f"a must be 2-d, not {_core.describe(a)}")
    m, n = a.shape
    a, b2, vector = _util.matrix_and_rhs(op, mT(a), b)   # b's rows pair with a's rows: a.T has them as columns
    a = mT(a)
    u, s, vh = svd(a, full_matrices=False)
    keep = _cutoff(s, rcond, m, n, a.dtype)
    s_inv = ops.where(keep, 1 / ops.where(keep, s, 1), 0)
    x = mH(vh) @ (s_inv.astype(a.dtype)[:, None] * (mH(u) @ b2))
    rank = ops.sum(keep.astype(dtypes.int32))
    if m > n:
        residuals = ops.sum(abs_squared(b2 - a @ x), axis=0)
    else:
        residuals = ops.zeros((0,), s.dtype)
    return (x[:, 0] if vector else x), residuals, rank, s


def matrix_rank(a, tol=None, hermitian: bool = False, *, rtol=None):
    """numpy.linalg.matrix_rank: singular values above tol (absolute) or rtol * largest (default max(m, n) * eps)."""
    a = _core.as_tensor(a, "matrix_rank")
    if a.ndim < 2:
        return ops.any(a != 0).astype(dtypes.int32)
    a = _util.matrix("matrix_rank", a, complex_ok=True)
    m, n = a.shape[-2:]
    s = svd(a, compute_uv=False)
    keep = s > tol if tol is not None else _cutoff(s, rtol, m, n, a.dtype)
    return ops.sum(keep.astype(dtypes.int32), axis=-1)


def cond(x, p=None):
    """numpy.linalg.cond: the condition number in norm p (None / 2 / -2 from singular values; 'fro', 'nuc',
    1, -1, inf, -inf as norm(x, p) * norm(inv(x), p)); singular x gives inf."""
    x = _util.matrix("cond", x, complex_ok=True)
    if p in (None, 2, -2):
        s = svd(x, compute_uv=False)
        ratio = s[..., 0] / s[..., -1] if p in (None, 2) else s[..., -1] / s[..., 0]
        return ops.where(ops.isnan(ratio), float("inf"), ratio)
    x = _util.matrix("cond", x, square=True, complex_ok=True)
    value = matrix_norm(x, ord=p) * matrix_norm(inv(x), ord=p)
    return ops.where(ops.isnan(value), float("inf"), value)


def matrix_power(a, n: int):
    """numpy.linalg.matrix_power: a (..., m, m) to the integer power n (repeated squaring; inv(a) for n < 0)."""
    op = "matrix_power"
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool):
        _core.fail(TypeError, op, f"the exponent must be an int, not {type(n).__name__}")
    a = _core.as_tensor(a, op)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        _core.fail(ShapeError, op, f"needs square matrices in the last two dimensions, not {_core.describe(a)}")
    if n == 0:
        return ops.broadcast_to(_util.eye(a.shape[-1], a.dtype), a.shape)
    if n < 0:
        a, n = inv(a), -n
    result, power = None, a
    while n:
        if n & 1:
            result = power if result is None else _util.mm(result, power)
        n >>= 1
        if n:
            power = _util.mm(power, power)
    return result


def _chain_order(dims: list[int]) -> list:
    """The cheapest parenthesisation of a matrix chain (the classic dynamic program): split[i][j]."""
    count = len(dims) - 1
    cost = [[0] * count for _ in range(count)]
    split = [[0] * count for _ in range(count)]
    for length in range(1, count):
        for i in range(count - length):
            j = i + length
            cost[i][j] = float("inf")
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k
    return split


def multi_dot(arrays):
    """numpy.linalg.multi_dot: the product of a chain of matrices in the cheapest order; the first may be
    1-d (a row vector) and the last 1-d (a column vector)."""
    op = "multi_dot"
    arrays = [_core.as_tensor(x, op) for x in arrays]
    if len(arrays) < 2:
        _core.fail(ValueError, op, f"needs at least two arrays, not {len(arrays)}")
    first, last = arrays[0].ndim == 1, arrays[-1].ndim == 1
    if first:
        arrays[0] = ops.reshape(arrays[0], (1, arrays[0].shape[0]))
    if last:
        arrays[-1] = ops.reshape(arrays[-1], (arrays[-1].shape[0], 1))
    for i, x in enumerate(arrays):
        if x.ndim != 2:
            _core.fail(ShapeError, op, f"array {i} must be 2-d, not {_core.describe(x)}")
    for i, (x, y) in enumerate(zip(arrays, arrays[1:])):
        if x.shape[1] != y.shape[0]:
            _core.fail(ShapeError, op, f"arrays {i} {_core.describe(x)} and {i + 1} {_core.describe(y)} do not chain")
    split = _chain_order([arrays[0].shape[0]] + [x.shape[1] for x in arrays])

    def product(i, j):
        return arrays[i] if i == j else product(i, split[i][j]) @ product(split[i][j] + 1, j)
    result = product(0, len(arrays) - 1)
    if first and last:
        return ops.reshape(result, ())
    if first or last:
        return ops.reshape(result, (result.shape[1],) if first else (result.shape[0],))
    return result

