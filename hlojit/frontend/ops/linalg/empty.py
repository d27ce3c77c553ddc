"""numpy's results for empty matrices and empty stacks of them: one rule per linalg function, in one table.

The factorizations assume at least one row, one column and one matrix (panel widths, pivots, the largest
singular value of a stack), so an input with a zero in its shape never reaches them: its results have known
shapes and, where not empty themselves, known values (numpy's: the determinant of a 0 x 0 matrix is 1, its
rank 0; the full U of an m x 0 svd and the complete Q of an m x 0 qr are identities). Each rule checks and
promotes its input as the function does, so a non-square or integer empty input fails or converts the same way.
`wrap_namespace` puts the rules in front of the public functions (as eager.py wraps them for eager use).
"""
from __future__ import annotations

import functools

import numpy as np

from ... import dtypes
from ... import ops
from .. import _core
from ..complex_math import abs_squared
from . import _util
from ._util import ShapeError
from .eig import _complex_matrix
from .expm import MAX_SQUARINGS

RULES = {}      # name -> (rule taking the function's arguments, which argument is the matrix)


def _rule(name: str, matrix=lambda a, *args, **kwargs: a):
    def register(rule):
        RULES[name] = (rule, matrix)
        return rule
    return register


def _is_empty(x) -> bool:
    """A stack of matrices with a zero in its shape (rank < 2 is the function's own error; None: no matrix)."""
    shape = x.shape if hasattr(x, "shape") else np.shape(x)
    return len(shape) >= 2 and 0 in shape


def _square(op: str, a):
    return _util.matrix(op, a, square=True, complex_ok=True)


def _eye(n: int, shape: tuple, dtype):
    return ops.broadcast_to(_util.eye(n, dtype), shape)


def _real(a):
    return dtypes.real_dtype(a.dtype)


@_rule("det")
def _det(a):
    a = _square("det", a)
    return ops.ones(a.shape[:-2], a.dtype)


@_rule("slogdet")
def _slogdet(a):
    a = _square("slogdet", a)
    return ops.ones(a.shape[:-2], a.dtype), ops.zeros(a.shape[:-2], _real(a))


@_rule("inv")
def _inv(a):
    a = _square("inv", a)
    return ops.zeros(a.shape, a.dtype)


def _solution(op: str, a, b):
    """The zeros of b's shape (a's and b's batch broadcast, their dtype): the solution of an empty system."""
    a, b, vector = _util.matrix_and_rhs(op, _square(op, a), b)
    return ops.zeros(b.shape[:-1] if vector else b.shape, b.dtype)


@_rule("solve")
def _solve(a, b):
    return _solution("solve", a, b)


@_rule("solve_triangular")
def _solve_triangular(a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False, check_finite=True):
    return _solution("solve_triangular", a, b)


@_rule("lu_solve", matrix=lambda lu_and_piv, *args, **kwargs: lu_and_piv[0])
def _lu_solve(lu_and_piv, b, trans=0, overwrite_b=False, check_finite=True):
    return _solution("lu_solve", lu_and_piv[0], b)


@_rule("cho_solve", matrix=lambda c_and_lower, *args, **kwargs: c_and_lower[0])
def _cho_solve(c_and_lower, b, overwrite_b=False, check_finite=True):
    return _solution("cho_solve", c_and_lower[0], b)


@_rule("lu_factor")
def _lu_factor(a, overwrite_a=False, check_finite=True):
    a = _square("lu_factor", a)
    return ops.zeros(a.shape, a.dtype), ops.zeros(a.shape[:-1], dtypes.int32)


@_rule("lu")
def _lu(a, permute_l=False, overwrite_a=False, check_finite=True, p_indices=False):
    a = _util.matrix("lu", a, complex_ok=True)
    batch, (m, n) = a.shape[:-2], a.shape[-2:]
    k = min(m, n)
    l, u = ops.zeros(batch + (m, k), a.dtype), ops.zeros(batch + (k, n), a.dtype)
    if permute_l:
        return l, u
    if p_indices:
        return ops.broadcast_to(ops.arange(m, dtype=dtypes.int32), batch + (m,)), l, u
    return _eye(m, batch + (m, m), a.dtype), l, u


@_rule("cholesky")
def _cholesky(a, upper=False):
    a = _square("cholesky", a)
    return ops.zeros(a.shape, a.dtype)


@_rule("cho_factor")
def _cho_factor(a, lower=False, overwrite_a=False, check_finite=True):
    return _cholesky(a), lower


@_rule("qr")
def _qr(a, mode="reduced"):
    a = _util.matrix("qr", a, complex_ok=True)
    if mode not in ("reduced", "complete", "r"):
        _core.fail(ValueError, "qr", f"mode must be 'reduced', 'complete' or 'r', not {mode!r}")
    batch, (m, n) = a.shape[:-2], a.shape[-2:]
    k = m if mode == "complete" else min(m, n)
    r = ops.zeros(batch + (k, n), a.dtype)
    if mode == "r":
        return r
    q = _eye(m, batch + (m, m), a.dtype) if mode == "complete" else ops.zeros(batch + (m, k), a.dtype)
    return q, r


@_rule("eigh")
def _eigh(a, UPLO="L"):
    a = _square("eigh", a)
    return ops.zeros(a.shape[:-1], _real(a)), ops.zeros(a.shape, a.dtype)


@_rule("eigvalsh")
def _eigvalsh(a, UPLO="L"):
    a = _square("eigvalsh", a)
    return ops.zeros(a.shape[:-1], _real(a))


@_rule("eig")
def _eig(a):
    a = _complex_matrix("eig", a)
    return ops.zeros(a.shape[:-1], a.dtype), ops.zeros(a.shape, a.dtype)


@_rule("eigvals")
def _eigvals(a):
    a = _complex_matrix("eigvals", a)
    return ops.zeros(a.shape[:-1], a.dtype)


def _singular_values(op: str, a):
    a = _util.matrix(op, a, complex_ok=True)
    return a, ops.zeros(a.shape[:-2] + (min(a.shape[-2:]),), _real(a))


@_rule("svd")
def _svd(a, full_matrices=True, compute_uv=True, hermitian=False):
    a, s = _singular_values("svd", a)
    if not compute_uv:
        return s
    batch, (m, n), k = a.shape[:-2], a.shape[-2:], s.shape[-1]
    if full_matrices:
        return _eye(m, batch + (m, m), a.dtype), s, _eye(n, batch + (n, n), a.dtype)
    return ops.zeros(batch + (m, k), a.dtype), s, ops.zeros(batch + (k, n), a.dtype)


@_rule("svdvals")
def _svdvals(a):
    return _singular_values("svdvals", a)[1]


@_rule("pinv")
def _pinv(a, rcond=None, hermitian=False, *, rtol=None):
    a = _util.matrix("pinv", a, complex_ok=True)
    return ops.zeros(a.shape[:-2] + (a.shape[-1], a.shape[-2]), a.dtype)


@_rule("matrix_rank")
def _matrix_rank(a, tol=None, hermitian=False, *, rtol=None):
    a = _util.matrix("matrix_rank", a, complex_ok=True)
    return ops.zeros(a.shape[:-2], dtypes.int32)


@_rule("cond")
def _cond(x, p=None):
    x = _util.matrix("cond", x, complex_ok=True)
    if x.shape[-1] == 0 or x.shape[-2] == 0:
        _core.fail(ShapeError, "cond", f"is not defined for empty matrices ({_core.describe(x)}), as in numpy")
    return ops.zeros(x.shape[:-2], _real(x))


@_rule("lstsq")
def _lstsq(a, b, rcond=None):
    op = "lstsq"
    a = _util.matrix(op, a, complex_ok=True)
    if a.ndim != 2:
        _core.fail(ShapeError, op, f"a must be 2-d, not {_core.describe(a)}")
    (m, n), k = a.shape, min(a.shape)
    at, b2, vector = _util.matrix_and_rhs(op, _util.mT(a), b)
    real = dtypes.real_dtype(b2.dtype)
    x = ops.zeros((n,) if vector else (n, b2.shape[-1]), b2.dtype)
    # numpy's residuals: |b|^2 per column where m > n (a's columns, none or not, fit nothing), else empty
    residuals = ops.sum(abs_squared(b2), axis=0) if m > n else ops.zeros((0,), real)
    return x, residuals, ops.zeros((), dtypes.int32), ops.zeros((k,), real)


def _negative_power_of(a, n):
    """The matrix of matrix_power when its power is negative (an inverse); others multiply empties alone."""
    return a if isinstance(n, (int, np.integer)) and not isinstance(n, bool) and n < 0 else None


@_rule("matrix_power", matrix=_negative_power_of)
def _matrix_power(a, n):
    a = _square("matrix_power", a)
    return ops.zeros(a.shape, a.dtype)


@_rule("expm")
def _expm(A, *, upper_triangular=False, max_squarings=MAX_SQUARINGS):
    A = _util.matrix("expm", A, square=True)
    return ops.zeros(A.shape, A.dtype)


def wrap_namespace(namespace: dict):
    """Put each rule in front of the namespace's function of its name: empty input takes the rule."""
    for name, (rule, matrix) in RULES.items():
        fn = namespace[name]

        @functools.wraps(fn)
        def guarded(*args, _fn=fn, _rule=rule, _matrix=matrix, **kwargs):
            if args and _is_empty(_matrix(*args, **kwargs)):
                return _rule(*args, **kwargs)
            return _fn(*args, **kwargs)
        namespace[name] = guarded
