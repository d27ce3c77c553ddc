"""Cholesky factorization, blocked and right-looking, its block loop unrolled at trace time (n is static):
each diagonal block (BLOCK x BLOCK) is factored by a short loop that also inverts its factor, the panel
below it is a matmul by that inverse, and the shrinking trailing matrix takes one matmul update. Every
diagonal block has the same shape, so IREE compiles their loops once (identical dispatches
are deduplicated); only the matmuls differ from block to block.

Only the lower triangle of the input is read (numpy's convention). A matrix that is not positive definite
gives NaN on and below the diagonal, as JAX does.

A real matrix's factorization is one `stablehlo.composite "hlojit.cholesky"` (frontend/composites.py) whose
decomposition is this code; a target may run a kernel of its own for it instead (pipeline/kernels.py: at
256 x 256 ~0.25 ms against ~1.5 for these loops' dispatches).
"""
from __future__ import annotations

from ... import dtypes, ops
from ...composites import composite
from . import _util
from ._util import mH, mm, mT
from .triangular import triangular_solve


def _real_sqrt(d):
    """sqrt of a pivot: of its real part for a Hermitian (complex) matrix, whose pivots are real, so that one
    that is not positive gives NaN as in the real case (a complex sqrt of -1 is i)."""
    if dtypes.is_complex(d.dtype):
        return ops.sqrt(ops.real(d)).astype(d.dtype)
    return ops.sqrt(d)


def _factor_block(a):
    """(L, inv(L)) of one diagonal block (..., b, b), column by column (_util.column_loop). L is the product
    of the elementary matrices E_0 E_1 ... whose column j is L's, so inv(L) takes their inverses from the
    left as it goes: one more rank-1 update per column."""
    b = a.shape[-1]
    row, col = _util.index((b, 1), 0), _util.index((1, b), 1)

    def step(j, carry):
        p, x = carry
        pj = _util.column(p, j)
        d = _real_sqrt(_util.rows(pj, j))
        l = ops.where(row >= j, pj / d, 0)
        p = ops.where(col == j, l, ops.where(col > j, p - l * mH(l), p))
        xj = _util.rows(x, j) / d
        x = ops.where(row == j, xj, ops.where(row > j, x - l * xj, x))
        return p, x
    l, x = _util.column_loop(b, step, (a, ops.broadcast_to(_util.eye(b, a.dtype), a.shape)))
    return ops.tril(l), x


def lower_factor(a):
    """L (..., n, n), lower triangular, with L @ L^H = a for the symmetric (Hermitian) positive definite a; of
    a complex a's diagonal only the real parts are read (zpotrf's: the imaginary parts reached L's diagonal
    and the gradient). A real one is the composite hlojit.cholesky."""
    return _lower_factor(_util.real_diagonal(a)) if dtypes.is_complex(a.dtype) else _real_lower_factor(a)


def _lower_factor(a):
    """lower_factor of a matrix whose diagonal is real."""
    n = a.shape[-1]
    block, size = _util.blocks_of(n)
    a = _util.pad_identity(a, size)
    panels = []
    for start in range(0, size, block):
        l11, x11 = _factor_block(a[..., :block, :block])
        if start + block == size:
            panels.append(l11)
            break
        l21 = mm(a[..., block:, :block], mH(x11))
        panels.append(ops.concatenate([l11, l21], axis=-2))
        a = a[..., block:, block:] - mm(l21, mH(l21))
    l = ops.concatenate([_util.pad_above(p, size) for p in panels], axis=-1)[..., :n, :n]
    failed = ops.any(ops.isnan(l), axis=(-2, -1), keepdims=True)   # JAX: NaN on and below the diagonal
    return ops.where(ops.logical_and(failed, _util.index((n, n), 0) >= _util.index((n, n), 1)), float("nan"), l)


_real_lower_factor = composite("hlojit.cholesky")(_lower_factor)


def cholesky(a, upper: bool = False):
    """numpy.linalg.cholesky: the lower factor L of the symmetric (complex: Hermitian) positive definite a
    (..., n, n), a = L @ L^H, from a's lower triangle; with upper=True the upper factor U, a = U^H @ U, from a's
    upper triangle (numpy's and LAPACK's uplo='U'). Not positive definite: NaN in the
    factor's triangle, as JAX."""
    a = _util.matrix("cholesky", a, square=True, complex_ok=True)
    return mH(lower_factor(mH(a))) if upper else lower_factor(a)


def cho_factor(a, lower: bool = False, overwrite_a: bool = False, check_finite: bool = True):
    """scipy.linalg.cho_factor: (c, lower) for cho_solve; c is the factor with zeros in the other triangle."""
    return cholesky(a, upper=not lower), lower


def cho_solve(c_and_lower, b, overwrite_b: bool = False, check_finite: bool = True):
    """scipy.linalg.cho_solve: x with a @ x = b from cho_factor's (c, lower): L y = b, then L^H x = y."""
    c, lower = c_and_lower
    c, b, vector = _util.matrix_and_rhs("cho_solve", _util.matrix("cho_solve", c, square=True, complex_ok=True), b)
    l = c if lower else mH(c)
    x = triangular_solve(_util.conj(l), triangular_solve(l, b, lower=True), lower=True, transpose=True)
    return x[..., 0] if vector else x
