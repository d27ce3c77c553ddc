"""Cholesky factorization, right-looking and blocked: each panel of BLOCK columns is factored by a loop of
rank-1 updates on the (n x BLOCK) panel alone, then the whole trailing matrix takes one matmul update.

Only the lower triangle of the input is read (numpy's convention). A matrix that is not positive definite
gives NaN on and below the diagonal, as JAX does.
"""
from __future__ import annotations

from ... import ops
from ...control import fori_loop
from . import _util
from ._util import mT
from .triangular import triangular_solve


def _factor_panel(panel, start):
    """Columns start..start+block of L from the updated panel (size x block) of the trailing matrix."""
    size, block = panel.shape[-2:]
    row = _util.index((size, 1), 0)
    col = _util.index((1, block), 1)

    def step(j, p):
        c = start + j
        pj = _util.column(p, j)
        d = ops.sqrt(_util.rows(pj, c))
        l = ops.where(row >= c, pj / d, 0)
        updated = p - l * mT(_util.rows(l, start, block))
        return ops.where(col == j, l, updated)
    return fori_loop(0, block, step, panel)


def lower_factor(a):
    """L (..., n, n), lower triangular, with L @ L.T = a for the symmetric positive definite a."""
    n = a.shape[-1]
    block, size = _util.blocks_of(n)
    a = _util.pad_identity(a, size)

    def panel_step(k, carry):
        trailing, l = carry
        start = k * block
        panel = _factor_panel(_util.column(trailing, start, block), start)
        return trailing - _util.mm(panel, mT(panel)), _util.set_columns(l, panel, start)
    if size == block:
        l = _factor_panel(a, 0)
    else:
        l = fori_loop(0, size // block, panel_step, (a, ops.zeros_like(a)))[1]
    l = l[..., :n, :n]
    failed = ops.any(ops.isnan(l), axis=(-2, -1), keepdims=True)   # JAX: NaN on and below the diagonal
    return ops.where(ops.logical_and(failed, _util.index((n, n), 0) >= _util.index((n, n), 1)), float("nan"), l)


def cholesky(a, upper: bool = False):
    """numpy.linalg.cholesky: the lower factor L of the symmetric positive definite a (..., n, n), a = L @ L.T
    (the upper factor L.T with upper=True). Not positive definite: NaN in the factor's triangle, as JAX."""
    l = lower_factor(_util.matrix("cholesky", a, square=True))
    return mT(l) if upper else l


def cho_factor(a, lower: bool = False, overwrite_a: bool = False, check_finite: bool = True):
    """scipy.linalg.cho_factor: (c, lower) for cho_solve; c is the factor with zeros in the other triangle."""
    return cholesky(a, upper=not lower), lower


def cho_solve(c_and_lower, b, overwrite_b: bool = False, check_finite: bool = True):
    """scipy.linalg.cho_solve: x with a @ x = b from cho_factor's (c, lower)."""
    c, lower = c_and_lower
    c, b, vector = _util.matrix_and_rhs("cho_solve", _util.matrix("cho_solve", c, square=True), b)
    l = c if lower else mT(c)
    x = triangular_solve(l, triangular_solve(l, b, lower=True), lower=True, transpose=True)
    return x[..., 0] if vector else x
