"""Triangular solves (scipy.linalg.solve_triangular) by blocked substitution.

IREE 3.13 cannot lower stablehlo.triangular_solve, so: the diagonal blocks (BLOCK x BLOCK) are inverted
all at once by a row-by-row substitution loop, then the block rows, unrolled at trace time, take
`X_k = inv(L_kk) @ (B_k - L_k,:k @ X_:k)`: two matmuls per block.
"""
from __future__ import annotations

from ... import ops
from .. import _core
from . import _util
from ._util import mT


def lower_inverse(l):
    """inv(l) of lower triangular matrices (..., n, n), a row of the inverse per step (_util.column_loop):
    l is the product E_0 E_1 ... E_{n-1} of the elementary matrices whose column j is l's, so inv(l) is
    their inverses applied from the left in turn (row j scaled by 1 / l_jj, then subtracted from the rows
    below it, weighted by l's column j)."""
    n = l.shape[-1]
    row = _util.index((n, 1), 0)

    def step(j, x):
        lj = _util.column(l, j)
        xj = _util.rows(x, j) / _util.rows(lj, j)
        return ops.where(row == j, xj, ops.where(row > j, x - lj * xj, x))
    return _util.column_loop(n, step, ops.broadcast_to(_util.eye(n, l.dtype), l.shape))


def _diagonal_blocks(l, block: int):
    n = l.shape[-1]
    return ops.stack([l[..., k:k + block, k:k + block] for k in range(0, n, block)], axis=-3)


def lower_solve(l, b):
    """X with l @ X = b for lower triangular l (..., n, n) and b (..., n, k) (batch shapes equal); the block
    rows unrolled at trace time, X_k = inv(L_kk) @ (B_k - L_k,:k @ X_:k)."""
    n = l.shape[-1]
    block, size = _util.blocks_of(n)
    l, b = _util.pad_identity(l, size), _util.pad_rows(b, size)
    inverses = lower_inverse(_diagonal_blocks(l, block))   # (..., size/block, block, block), one loop
    solved = []
    for k, start in enumerate(range(0, size, block)):
        residual = b[..., start:start + block, :]
        if solved:
            done = solved[0] if len(solved) == 1 else ops.concatenate(solved, axis=-2)
            residual = residual - _util.mm(l[..., start:start + block, :start], done)
        solved.append(_util.mm(inverses[..., k, :, :], residual))
    x = solved[0] if len(solved) == 1 else ops.concatenate(solved, axis=-2)
    return x[..., :n, :]


def triangular_solve(a, b, lower: bool, transpose: bool = False, unit_diagonal: bool = False):
    """X with op(t) @ X = b, t the lower (or upper) triangle of a, op the transpose when `transpose`."""
    t = ops.tril(a) if lower else ops.triu(a)
    if unit_diagonal:
        t = t - ops.diagonal(t, 0, -2, -1)[..., None] * _util.eye(a.shape[-1], a.dtype) + \
            _util.eye(a.shape[-1], a.dtype)
    if transpose:
        t, lower = mT(t), not lower
    if lower:
        return lower_solve(t, b)
    # an upper triangular system is a lower one with rows and columns reversed
    return ops.flip(lower_solve(ops.flip(t, (-2, -1)), ops.flip(b, -2)), -2)


def solve_triangular(a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False, check_finite=True):
    """scipy.linalg.solve_triangular: x with a @ x = b (trans 0 / 'N'), a.T @ x = b (1 / 'T' / 2 / 'C')
    for the lower (or upper) triangle of a (..., n, n); b is (..., n) or (..., n, k); batches broadcast."""
    op = "solve_triangular"
    a = _util.matrix(op, a, square=True)
    transpose = {0: False, "N": False, 1: True, "T": True, 2: True, "C": True}.get(trans)
    if transpose is None:
        _core.fail(ValueError, op, f"trans must be 0, 1, 2, 'N', 'T' or 'C', not {trans!r}")
    a, b, vector = _util.matrix_and_rhs(op, a, b)
    x = triangular_solve(a, b, bool(lower), transpose, bool(unit_diagonal))
    return x[..., 0] if vector else x
