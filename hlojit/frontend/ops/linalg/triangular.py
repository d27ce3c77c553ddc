"""Triangular solves (scipy.linalg.solve_triangular) by blocked substitution.

IREE 3.13 cannot lower stablehlo.triangular_solve, so: the diagonal blocks (SOLVE_BLOCK x SOLVE_BLOCK) are
inverted all at once by a row-by-row substitution loop, then the block rows, unrolled at trace time, take
`X_k = inv(T_kk) @ (B_k - T_k,done @ X_done)`: two matmuls per block.
"""
from __future__ import annotations

from ... import dtypes, ops
from ...composites import composite
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


SOLVE_BLOCK = 64   # block rows of the substitution: inverting the diagonal blocks costs a loop step per row of one


def _as_lower_blocks(t, block: int, lower: bool, unit: bool):
    """t's diagonal blocks (..., n / block, block, block), their named triangle (ones on the diagonal if unit),
    upper ones with rows and columns reversed (then lower)."""
    n = t.shape[-1]
    blocks = ops.stack([t[..., k:k + block, k:k + block] for k in range(0, n, block)], axis=-3)
    if unit:
        identity = _util.eye(block, t.dtype)
        blocks = (ops.tril(blocks, -1) if lower else ops.triu(blocks, 1)) + identity
    else:
        blocks = ops.tril(blocks) if lower else ops.triu(blocks)
    return blocks if lower else ops.flip(blocks, (-2, -1))


def diagonal_inverses(t, triangles):
    """For each (lower, unit) of triangles: the inverses of t's diagonal blocks of that triangle, padded as
    substitute pads (..., size / block, block, block); one loop inverts them all."""
    n = t.shape[-1]
    block = min(n, SOLVE_BLOCK)
    t = _util.pad_identity(t, -(-n // block) * block)
    stacked = [_as_lower_blocks(t, block, lower, unit) for lower, unit in triangles]
    inverses = lower_inverse(stacked[0] if len(stacked) == 1 else ops.concatenate(stacked, axis=-3))
    count = stacked[0].shape[-3]
    parts = [inverses[..., i * count:(i + 1) * count, :, :] for i in range(len(triangles))]
    return [p if lower else ops.flip(p, (-2, -1)) for p, (lower, _) in zip(parts, triangles)]


def substitute(t, b, lower: bool, unit: bool = False, inverses=None):
    """X with T @ X = b, T the lower (upper) triangle of t (..., n, n) (unit diagonal if `unit`), b (..., n, k)
    (batch shapes equal), by block rows unrolled at trace time: X_k = inv(T_kk) @ (B_k - T_k,done @ X_done).
    Only the diagonal blocks are masked: the blocks left (right) of them lie wholly in the triangle, so t is
    read as it is, with no masked or flipped copy of the whole matrix. `inverses`: diagonal_inverses' for
    this triangle, if already made."""
    n = t.shape[-1]
    block = min(n, SOLVE_BLOCK)
    size = -(-n // block) * block
    t, b = _util.pad_identity(t, size), _util.pad_rows(b, size)
    if inverses is None:
        inverses = diagonal_inverses(t, [(lower, unit)])[0]
    starts = list(range(0, size, block)) if lower else list(range(size - block, -1, -block))
    solved = []   # in the order of starts
    for start in starts:
        k, end = start // block, start + block
        residual = b[..., start:end, :]
        if solved:
            done = solved[0] if len(solved) == 1 else ops.concatenate(solved if lower else solved[::-1], axis=-2)
            coupling = t[..., start:end, :start] if lower else t[..., start:end, end:]
            residual = residual - _util.mm(coupling, done)
        solved.append(_util.mm(inverses[..., k, :, :], residual))
    x = solved[0] if len(solved) == 1 else ops.concatenate(solved if lower else solved[::-1], axis=-2)
    return x[..., :n, :]


def triangular_solve(a, b, lower: bool, transpose: bool = False, unit_diagonal: bool = False):
    """X with op(t) @ X = b, t the lower (or upper) triangle of a, op the transpose when `transpose`. Real
    ones are the composite hlojit.triangular_solve (a target may run a kernel of its own: pipeline/kernels.py)."""
    if transpose:
        a, lower = mT(a), not lower
    if not dtypes.is_complex(a.dtype) and a.shape[:-2] == b.shape[:-2]:
        return _real_substitute(a, b, lower=int(lower), unit=int(unit_diagonal))
    return substitute(a, b, lower, unit_diagonal)


def _substitution(t, b, *, lower: int, unit: int):
    """hlojit.triangular_solve's meaning: substitute, its int attributes as flags."""
    return substitute(t, b, bool(lower), bool(unit))


_real_substitute = composite("hlojit.triangular_solve")(_substitution)


def solve_triangular(a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False, check_finite=True):
    """scipy.linalg.solve_triangular: x with a @ x = b (trans 0 / 'N'), a.T @ x = b (1 / 'T') or a^H @ x = b
    (2 / 'C') for the lower (or upper) triangle of a (..., n, n), real or complex; b is (..., n) or (..., n, k);
    batches broadcast."""
    op = "solve_triangular"
    a = _util.matrix(op, a, square=True, complex_ok=True)
    transpose = {0: False, "N": False, 1: True, "T": True, 2: True, "C": True}.get(trans)
    if transpose is None:
        _core.fail(ValueError, op, f"trans must be 0, 1, 2, 'N', 'T' or 'C', not {trans!r}")
    a, b, vector = _util.matrix_and_rhs(op, a, b)
    if trans in (2, "C"):   # the conjugate transpose (the transpose of a real a)
        a = _util.conj(a)
    x = triangular_solve(a, b, bool(lower), transpose, bool(unit_diagonal))
    return x[..., 0] if vector else x
