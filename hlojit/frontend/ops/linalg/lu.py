"""LU with partial pivoting (LAPACK getrf's pivots), and what is built on it: solve, inv, det, slogdet,
scipy's lu / lu_factor / lu_solve.

Blocked right-looking, the block loop unrolled at trace time: each panel of BLOCK columns is factored by a
loop that pivots and eliminates inside the (n x BLOCK) panel only; the panel's row swaps then reach the
whole matrix in one gather, its U rows come from one triangular inverse times a matmul, and the shrinking
trailing matrix takes one matmul update. A zero
pivot is not divided by (as LAPACK): singular matrices factor, and solving with them gives inf/nan.
"""
from __future__ import annotations

from ... import dtypes, ops
from ...control import fori_loop
from ...autodiff import custom_vjp
from .. import _core
from ..shape import iota
from . import _util
from ._util import mm, mT
from .triangular import lower_inverse, triangular_solve


def _factor_panel(panel, start: int):
    """Pivot and eliminate the block columns of the full-height panel (..., size, block + 1) whose column j is
    the matrix's column start + j and whose last column holds the row numbers (they move with the swaps:
    the panel's row order). Rows above `start` are finished U rows and never pivot. Returns the panel and
    LAPACK's pivots of these columns (..., 1, block). The row being eliminated is a loop carry, not a
    constant, so that every panel's loop is the same code (IREE compiles it once)."""
    size, width = panel.shape[-2:]
    block = width - 1
    row = _util.index((size, 1), 0)
    col = _util.index((1, width), 1)
    pivot_col = _util.index((1, block), 1)

    def step(j, carry):
        p, pivots, c = carry
        magnitude = ops.where(row >= c, ops.abs(_util.column(p, j)), -1)
        pivot = ops.argmax(magnitude, axis=-2, keepdims=True).astype(dtypes.int32)     # (..., 1, 1)
        pivot_row = ops.sum(ops.where(row == pivot, p, 0), axis=-2, keepdims=True)   # a gather: 3 more dispatches
        c_row = _util.rows(p, c)
        diagonal = _util.column(pivot_row, j)
        # the swapped column j from p's own column (not from the swapped p): the update then fuses into one dispatch
        swapped_j = ops.where(row == c, diagonal, ops.where(row == pivot, _util.column(c_row, j), _util.column(p, j)))
        multipliers = ops.where(row > c, swapped_j / ops.where(diagonal == 0, 1, diagonal), 0)
        swapped = ops.where(row == c, pivot_row, ops.where(row == pivot, c_row, p))
        updated = swapped - multipliers * ops.where(ops.logical_and(col > j, col < block), pivot_row, 0)
        p = ops.where(ops.logical_and(col == j, row > c), multipliers, updated)
        return p, ops.where(pivot_col == j, pivot, pivots), c + 1
    pivots = ops.zeros(panel.shape[:-2] + (1, block), dtypes.int32)
    p, pivots, _ = _util.column_loop(block, step, (panel, pivots, _core.as_tensor(start, "lu").astype(dtypes.int32)))
    return p, pivots


def _gather_rows(x, order):
    return ops.take_along_axis(x, ops.broadcast_to(order[..., None], x.shape), axis=-2)


def factor(a):
    """(lu, pivots, order, swaps) of square a (..., n, n): L below the diagonal (unit diagonal implied), U on
    and above it, LAPACK's 0-based pivots (row i was swapped with pivots[i]), the row order they make
    (a[order] = L @ U) and the number of real swaps. The block loop is unrolled at trace time."""
    n = a.shape[-1]
    block, size = _util.blocks_of(n)
    a = _util.pad_identity(a, size)
    batch = a.shape[:-2]
    float_rows, float_numbers = iota(a.dtype, (size, 1), 0), iota(a.dtype, (1, size), 1)
    int_numbers = _util.index((1, size), 1)
    order = ops.broadcast_to(_util.index((size,), 0), batch + (size,))
    pivots = []
    for start in range(0, size, block):
        end = start + block
        panel = ops.concatenate([a[..., :, start:end], ops.broadcast_to(float_rows, batch + (size, 1))], axis=-1)
        panel, panel_pivots = _factor_panel(panel, start)
        pivots.append(panel_pivots[..., 0, :])
        # the row numbers back as ints by comparison: vmvx cannot convert f64 to int
        panel_order = ops.sum(ops.where(panel[..., :, block:] == float_numbers, int_numbers, 0), axis=-1)
        a = ops.concatenate([_gather_rows(a[..., :, :start], panel_order), panel[..., :, :block],
                             _gather_rows(a[..., :, end:], panel_order)], axis=-1)
        order = ops.take_along_axis(order, panel_order, axis=-1)
        if end == size:
            break
        unit_lower = ops.tril(panel[..., start:end, :block], -1) + _util.eye(block, a.dtype)
        u12 = mm(lower_inverse(unit_lower), a[..., start:end, end:])
        a22 = a[..., end:, end:] - mm(panel[..., end:, :block], u12)
        right = ops.concatenate([a[..., :start, end:], u12, a22], axis=-2)
        a = ops.concatenate([a[..., :, :end], right], axis=-1)
    pivots = ops.concatenate(pivots, axis=-1) if len(pivots) > 1 else pivots[0]
    swaps = ops.sum((pivots != _util.index((size,), 0)).astype(dtypes.int32), axis=-1)
    return a[..., :n, :n], pivots[..., :n], order[..., :n], swaps


def permutation(pivots):
    """The row order (..., n) that LAPACK pivots apply: a[order] = L @ U."""
    n = pivots.shape[-1]
    positions = _util.index((n,), 0)

    def step(i, order):
        target = ops.sum(ops.where(positions == i, pivots, 0), axis=-1, keepdims=True)
        at_i = ops.sum(ops.where(positions == i, order, 0), axis=-1, keepdims=True)
        at_target = ops.sum(ops.where(positions == target, order, 0), axis=-1, keepdims=True)
        return ops.where(positions == i, at_target, ops.where(positions == target, at_i, order))
    return fori_loop(0, n, step, ops.broadcast_to(positions, pivots.shape))


def solve_factored(lu, order, b, transpose: bool = False):
    """x with a @ x = b (a.T @ x = b when `transpose`) from a's LU factors and row order."""
    if not transpose:
        y = triangular_solve(lu, _gather_rows(b, order), lower=True, unit_diagonal=True)
        return triangular_solve(lu, y, lower=False)
    y = triangular_solve(lu, b, lower=False, transpose=True)
    x = triangular_solve(lu, y, lower=True, transpose=True, unit_diagonal=True)
    inverse_order = ops.argsort(order, axis=-1).astype(dtypes.int32)
    return _gather_rows(x, inverse_order)


# --- the public functions, with JAX's derivative rules where the loops would be slow to differentiate ----

@custom_vjp
def _solve(a, b):
    lu, _, order, _ = factor(a)
    return solve_factored(lu, order, b)


def _solve_fwd(a, b):
    lu, _, order, _ = factor(a)
    x = solve_factored(lu, order, b)
    return x, (lu, order, x)


def _solve_bwd(residuals, g):
    lu, order, x = residuals
    gb = solve_factored(lu, order, g, transpose=True)
    return -mm(gb, mT(x)), gb


_solve.defvjp(_solve_fwd, _solve_bwd)


def solve(a, b):
    """numpy.linalg.solve: x with a @ x = b for square a (..., n, n); b (n,) is a vector, else (..., n, k);
    batch dimensions broadcast. Singular a: inf/nan, as JAX."""
    a = _util.matrix("solve", a, square=True)
    a, b, vector = _util.matrix_and_rhs("solve", a, b)
    x = _solve(a, b)
    return x[..., 0] if vector else x


def inv(a):
    """numpy.linalg.inv of square a (..., n, n). Singular a: inf/nan, as JAX."""
    a = _util.matrix("inv", a, square=True)
    identity = ops.broadcast_to(_util.eye(a.shape[-1], a.dtype), a.shape)
    return _solve(a, identity)


def _log_det_parts(a):
    """(sign, log|det|, det) from the LU factors (the swaps' parity times the diagonal of U)."""
    lu, _, _, swaps = factor(a)
    diagonal = ops.diagonal(lu, 0, -2, -1)
    parity = 1 - 2 * (swaps % 2).astype(a.dtype)
    sign = parity * ops.prod(_util.sign(diagonal), axis=-1)
    return sign, ops.sum(ops.log(ops.abs(diagonal)), axis=-1), parity * ops.prod(diagonal, axis=-1)


@custom_vjp
def _det(a):
    return _log_det_parts(a)[2]


def _det_fwd(a):
    d = _log_det_parts(a)[2]
    return d, (a, d)


def _det_bwd(residuals, g):
    a, d = residuals
    return ((g * d)[..., None, None] * mT(inv(a)),)


_det.defvjp(_det_fwd, _det_bwd)


@custom_vjp
def _slogdet(a):
    sign, logabs, _ = _log_det_parts(a)
    return sign, logabs


def _slogdet_fwd(a):
    sign, logabs, _ = _log_det_parts(a)
    return (sign, logabs), (a,)


def _slogdet_bwd(residuals, g):
    (a,), (_, g_logabs) = residuals, g
    return (g_logabs[..., None, None] * mT(inv(a)),)


_slogdet.defvjp(_slogdet_fwd, _slogdet_bwd)


def det(a):
    """numpy.linalg.det of square a (..., n, n), from LU with partial pivoting (0 for singular a)."""
    return _det(_util.matrix("det", a, square=True))


def slogdet(a):
    """numpy.linalg.slogdet: (sign, log|det|) of square a (..., n, n); singular a gives (0, -inf)."""
    return _slogdet(_util.matrix("slogdet", a, square=True))


def lu_factor(a, overwrite_a: bool = False, check_finite: bool = True):
    """scipy.linalg.lu_factor: (lu, piv) of square a (..., n, n): L below the diagonal (unit diagonal), U on and
    above it, and LAPACK's 0-based pivots (int32: row i was interchanged with row piv[i])."""
    lu, pivots, _, _ = factor(_util.matrix("lu_factor", a, square=True))
    return lu, pivots


def lu_solve(lu_and_piv, b, trans=0, overwrite_b: bool = False, check_finite: bool = True):
    """scipy.linalg.lu_solve: x with a @ x = b (trans 0) or a.T @ x = b (trans 1 or 2) from lu_factor."""
    lu, pivots = lu_and_piv
    lu = _util.matrix("lu_solve", lu, square=True)
    lu, b, vector = _util.matrix_and_rhs("lu_solve", lu, b)
    if trans not in (0, 1, 2):
        _core.fail(ValueError, "lu_solve", f"trans must be 0, 1 or 2, not {trans!r}")
    x = solve_factored(lu, permutation(_core.as_tensor(pivots, "lu_solve")), b, transpose=trans != 0)
    return x[..., 0] if vector else x


def lu(a, permute_l: bool = False, overwrite_a: bool = False, check_finite: bool = True, p_indices: bool = False):
    """scipy.linalg.lu: (p, l, u) with a = p @ l @ u for a (..., m, n); (p @ l, u) with permute_l=True; p as
    row indices (a[p] = l @ u... scipy's: l[p] rows) with p_indices=True."""
    a = _util.matrix("lu", a)
    m, n = a.shape[-2:]
    k = min(m, n)
    lu_full, _, order, _ = factor(_util.pad_rectangular(a, max(m, n)))
    order = order[..., :m]
    l = ops.tril(lu_full[..., :m, :k], -1) + _util.eye(m, a.dtype, k)
    u = ops.triu(lu_full[..., :k, :n])
    if permute_l:
        return _gather_rows(l, ops.argsort(order, axis=-1).astype(dtypes.int32)), u
    if p_indices:
        return order, l, u
    p = mT(ops.one_hot(order, m, dtype=a.dtype))
    return p, l, u
