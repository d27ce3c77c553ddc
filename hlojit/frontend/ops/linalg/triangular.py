"""Triangular solves (scipy.linalg.solve_triangular) by blocked substitution.

IREE 3.13 cannot lower stablehlo.triangular_solve, so: the diagonal blocks (BLOCK x BLOCK) are inverted
all at once by a row-by-row substitution loop, then one loop over the block rows does
`X_k = inv(L_kk) @ (B_k - L_k,: @ X)`: two matmuls per block, which is where the time goes.
"""
from __future__ import annotations

from ... import ops
from ...control import fori_loop
from .. import _core
from . import _util
from ._util import mT


def lower_inverse(l):
    """inv(l) of lower triangular matrices (..., n, n) by recursive doubling, no loop: inverses of the
    diagonal blocks of size s give those of size 2s as [[A, 0], [C, B]]^-1 = [[A^-1, 0], [-B^-1 C A^-1, B^-1]]
    (n padded with identity to a power of two; log2(n) levels of batched matmuls)."""
    n = l.shape[-1]
    size = 1 << max(n - 1, 0).bit_length()
    l = _util.pad_identity(l, size)
    inverses = (1 / ops.diagonal(l, 0, -2, -1))[..., :, None, None]        # (..., size, 1, 1)
    s = 1
    while s < size:
        a, b = inverses[..., 0::2, :, :], inverses[..., 1::2, :, :]
        c = ops.stack([l[..., k + s:k + 2 * s, k:k + s] for k in range(0, size, 2 * s)], axis=-3)
        corner = -_block_product(_block_product(b, c), a)
        top = ops.concatenate([a, ops.zeros(a.shape, l.dtype)], axis=-1)
        inverses = ops.concatenate([top, ops.concatenate([corner, b], axis=-1)], axis=-2)
        s *= 2
    return inverses[..., 0, :n, :n]


def _block_product(x, y):
    """x @ y for stacks of s x s blocks; below 32 as a broadcast multiply and sum (IREE 3.13's cpu cannot
    compile data-tiled batched matmuls of tiny blocks: "failed to solve for timepoint coverage", or at 16
    inside a loop "large vector sizes")."""
    if x.shape[-1] >= 32:
        return _util.mm(x, y)
    return ops.sum(x[..., :, :, None] * y[..., None, :, :], axis=-2)


def _diagonal_blocks(l, block: int):
    n = l.shape[-1]
    return ops.stack([l[..., k:k + block, k:k + block] for k in range(0, n, block)], axis=-3)


def lower_solve(l, b):
    """X with l @ X = b for lower triangular l (..., n, n) and b (..., n, k) (batch shapes equal)."""
    n = l.shape[-1]
    block, size = _util.blocks_of(n)
    l, b = _util.pad_identity(l, size), _util.pad_rows(b, size)
    inverses = lower_inverse(_diagonal_blocks(l, block))   # (..., size/block, block, block)
    if size == block:
        return _util.mm(inverses[..., 0, :, :], b)[..., :n, :]

    def step(k, x):
        start = k * block
        residual = _util.rows(b, start, block) - _util.mm(_util.rows(l, start, block), x)
        inverse = ops.dynamic_slice(inverses, [0] * (inverses.ndim - 3) + [k, 0, 0],
                                    inverses.shape[:-3] + (1, block, block))[..., 0, :, :]
        return _util.set_rows(x, _util.mm(inverse, residual), start)
    return fori_loop(0, size // block, step, ops.zeros_like(b))[..., :n, :]


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
