"""LU with partial pivoting (LAPACK getrf's pivots), and what is built on it: solve, inv, det, slogdet,
scipy's lu / lu_factor / lu_solve.

Blocked right-looking on two levels, the block loop unrolled at trace time: each panel of BLOCK columns is
factored by a loop over its sub-panels of SUB columns, whose column steps (unrolled) pivot and eliminate
inside the narrow sub-panel only, then one gather and one small block update reach the rest of the panel;
the panel's row swaps then reach the whole matrix in one gather, its U rows come from one triangular inverse
times a matmul, and the shrinking trailing matrix takes one matmul update. A column step is 4 dispatches
(argmax, pivot row gather, the fused swap and rank-1 update, the pivot record) on size x (2 SUB + 1)
elements. A zero pivot is not divided by (as LAPACK): singular matrices factor, and solving with them gives
inf/nan.
"""
from __future__ import annotations

import numpy as np

from ... import dtypes, ops
from ...control import fori_loop
from ...autodiff import custom_vjp
from ...composites import composite
from .. import _core
from ..shape import iota
from . import _util
from ._util import mm, mT
from .triangular import diagonal_inverses, substitute, triangular_solve


SUB = 16   # columns of a sub-panel. A column step on 1024 rows took 40, 35, 59, 210 us at widths 8, 16, 32, 64
# Padded sizes up to which the sub-panels' column steps take a traced column (see _factor_subpanel): fewer
# dispatches to compile (solve n = 70: 131 -> 82, compile CPU 15.6 -> 13.9 s; n = 6: 47 -> 38), but each step
# runs slower (its column is a dynamic slice, which fuses less: solve at n = 256 took 45 ms, not 18, on the
# loaded 2-core VM; at n = 70 and 128 the run times stayed within the noise, ~3 / 4 ms at best). Small
# matrices always take it (n <= SUB: one sub-panel in a one-iteration loop, whose counter is the traced 0).
TRACED_STEPS_UP_TO = 128


def _factor_subpanel(s, c0, pivots, first_column, counter=None):
    """Pivot and eliminate the SUB columns of s (..., size, 2 SUB + 1) = [columns | row positions | B], all
    steps unrolled. Row c0 + j is eliminated at step j; rows above c0 never pivot. Every row operation reaches
    B too, and B[c0 + j, j] is set to 1 when row c0 + j is final: B's rows c0 .. c0 + SUB end as the inverse of
    the unit lower diagonal block (forward substitution done by the elimination itself). LAPACK's pivots of
    these columns go into pivots (..., 1, block) at first_column + j.

    With `counter`, a traced multiple of SUB (a loop's), step t's column j is (counter + t) % SUB, traced, not
    the Python int t: the SUB steps are then the same dispatches, which IREE compiles once (each step with a
    constant j is 2-4 dispatches of its own). Not a loop of its own: a loop iteration per sub-panel more made
    solve at n = 256 ~2x slower still."""
    size, width = s.shape[-2:]
    sub = (width - 1) // 2
    row = _util.index((size, 1), 0)
    col = _util.index((1, width), 1)
    pivot_col = _util.index((1, pivots.shape[-1]), 1)

    def column(x, j):
        return x[..., :, j:j + 1] if isinstance(j, int) else _util.column(x, j)

    def step(j, carry):
        s, pivots = carry
        c = c0 + j
        column_j = column(s, j)
        magnitude = ops.where(row >= c, ops.abs(column_j), -1)
        pivot = ops.argmax(magnitude, axis=-2, keepdims=True).astype(dtypes.int32)       # (..., 1, 1)
        pivot_row = _gather_rows(s, pivot[..., 0])
        pivot_row = ops.where(col == sub + 1 + j, 1, pivot_row)
        c_row = _util.rows(s, c)
        diagonal = column(pivot_row, j)
        swapped_j = ops.where(row == c, diagonal, ops.where(row == pivot, column(c_row, j), column_j))
        multipliers = ops.where(row > c, swapped_j / ops.where(diagonal == 0, 1, diagonal), 0)
        swapped = ops.where(row == c, pivot_row, ops.where(row == pivot, c_row, s))
        updated = swapped - multipliers * ops.where(ops.logical_and(col > j, col != sub), pivot_row, 0)
        s = ops.where(ops.logical_and(col == j, row > c), multipliers, updated)
        return s, ops.where(pivot_col == first_column + j, pivot, pivots)
    for t in range(sub):
        s, pivots = step(t if counter is None else (counter + t) % sub, (s, pivots))
    return s, pivots


def _gather_rows(x, order):
    """x[..., order, :], whole rows (a gather of slices: ~10x faster in IREE than take_along_axis's gather of
    single elements)."""
    batch = x.shape[:-2]
    index = tuple(np.arange(n).reshape([-1 if i == d else 1 for i in range(len(batch))] + [1])
                  for d, n in enumerate(batch))
    return x[index + (order,)]


def _as_index(x):
    """Row numbers (..., size) held as floats (whole, exact; a complex matrix's in the real parts), as int32
    (vmvx's f64 -> int is a pipeline rewrite: compile_rewrites.f64_to_int_by_bits)."""
    return (ops.real(x) if dtypes.is_complex(x.dtype) else x).astype(dtypes.int32)


def _factor_panel(a, start: int, block: int):
    """Factor the full-height panel a (..., size, block) whose column 0 is the matrix's column `start`, a loop
    over its sub-panels (the same code for every panel: IREE compiles it once). Returns the panel and its row
    order relative to a's rows, LAPACK's pivots, and the inverses of the sub-panels' unit lower diagonal
    blocks (..., block, SUB), stacked.

    The loop carries w = [panel | row numbers]: each sub-panel is factored on its own narrow columns (the
    per-column steps touch size x (2 SUB + 1) elements, not size x block), then w takes its row order (one
    gather) and the panel's columns right of it one block update, two small matmuls."""
    size = a.shape[-2]
    batch = a.shape[:-2]
    dtype = a.dtype
    sub = min(SUB, block)
    positions = ops.broadcast_to(iota(dtype, (size, 1), 0), batch + (size, 1))
    inverse_space = ops.zeros(batch + (size, sub), dtype)
    pivots = ops.zeros(batch + (1, block), dtypes.int32)
    c0 = _core.as_tensor(start, "lu").astype(dtypes.int32)
    if block == sub:   # one sub-panel (n <= SUB): nothing else to update; a one-iteration loop gives the counter
        s, pivots = fori_loop(0, 1, lambda i, carry: _factor_subpanel(carry[0], c0, carry[1], 0, i * sub),
                              (ops.concatenate([a, positions, inverse_space], axis=-1), pivots))
        return s[..., :, :sub], _as_index(s[..., :, sub]), pivots[..., 0, :], s[..., start:start + sub, sub + 1:]
    w = ops.concatenate([a, positions], axis=-1)
    row = _util.index((size, 1), 0)
    right = _util.index((1, block + 1), 1)

    def step(k, carry):
        w, pivots, c0, fresh, inverses = carry
        first = k * sub
        panel = ops.concatenate([_util.column(w, first, sub), fresh], axis=-1)
        s, pivots = _factor_subpanel(panel, c0, pivots, first, first if size <= TRACED_STEPS_UP_TO else None)
        w = _gather_rows(w, _as_index(s[..., :, sub]))
        others = ops.logical_and(right >= first + sub, right != block)
        top = _util.rows(w, c0, sub)
        u = mm(_util.rows(s[..., :, sub + 1:], c0, sub), ops.where(others, top, 0))  # (..., sub, block + 1)
        lower = ops.where(row >= c0 + sub, s[..., :, :sub], 0)
        w = _util.set_rows(w - mm(lower, u), ops.where(others, u, top), c0)
        w = _util.set_columns(w, s[..., :, :sub], first)
        inverses = _util.set_rows(inverses, _util.rows(s[..., :, sub + 1:], c0, sub), first)
        return w, pivots, c0 + sub, fresh, inverses
    # the sub-panels' row positions and zero B, carried unchanged: captured by the loop, IREE 3.13 fails to compile
    # the factorization ("'stream.async.dispatch' op : streamable op expected to be in an execution region")
    fresh = ops.concatenate([positions, inverse_space], axis=-1)
    inverses = ops.zeros(batch + (block, sub), dtype)
    w, pivots, _, _, inverses = fori_loop(0, block // sub, step, (w, pivots, c0, fresh, inverses))
    return w[..., :, :block], _as_index(w[..., :, block]), pivots[..., 0, :], inverses


def _unit_lower_inverse(l, diagonal_inverses):
    """inv(L) of the unit lower L (..., block, block) whose strict lower triangle is l's, from the inverses
    D_k of its diagonal blocks (stacked in diagonal_inverses (..., block, sub)), by block forward substitution
    X_k = D_k (I_k - L_k,<k X_<k): block / sub steps of two small matmuls, where inverting L row by row
    would take a loop of `block` steps. The same shapes for every panel: IREE compiles it once."""
    block, sub = diagonal_inverses.shape[-2:]
    identity = ops.broadcast_to(_util.eye(block, l.dtype), l.shape)
    done = []
    for k in range(0, block, sub):
        rhs = identity[..., k:k + sub, :]
        if done:
            rhs = rhs - mm(l[..., k:k + sub, :k], done[0] if len(done) == 1 else ops.concatenate(done, axis=-2))
        done.append(mm(diagonal_inverses[..., k:k + sub, :], rhs))
    return done[0] if len(done) == 1 else ops.concatenate(done, axis=-2)


def _sizes(n: int) -> tuple[int, int]:
    """(block, padded size): a single sub-panel up to SUB, else blocks of whole sub-panels."""
    if n <= SUB:
        return n, n
    return _util.blocks_of(-(-n // SUB) * SUB)


def factor(a):
    """(lu, pivots, order, swaps) of square a (..., n, n): L below the diagonal (unit diagonal implied), U on
    and above it, LAPACK's 0-based pivots (row i was swapped with pivots[i]), the row order they make
    (a[order] = L @ U) and the number of real swaps. A real a's is the composite hlojit.lu (a target may run a
    kernel of its own: pipeline/kernels.py); the block loop below is unrolled at trace time."""
    return _factor(a) if dtypes.is_complex(a.dtype) else _real_factor(a)


def _factor(a):
    """factor's StableHLO."""
    n = a.shape[-1]
    if n == 1:   # nothing to pivot. The loop would overwrite its whole pivot record in its one step, and IREE 3.13
        # then failed on the loop that carries it ("'scf.while' op ... region branch point has 6 operands, but
        # region successor needs 4 inputs", or died: "LLVM ERROR: out of memory"; det of a 1 x 1 matrix)
        zeros = ops.zeros(a.shape[:-1], dtypes.int32)
        return a, zeros, zeros, ops.zeros(a.shape[:-2], dtypes.int32)
    block, size = _sizes(n)
    a = _util.pad_identity(a, size)
    batch = a.shape[:-2]
    order = ops.broadcast_to(_util.index((size,), 0), batch + (size,))
    pivots = []
    for start in range(0, size, block):
        end = start + block
        panel, panel_order, panel_pivots, inverses = _factor_panel(a[..., :, start:end], start, block)
        pivots.append(panel_pivots)
        parts = [_gather_rows(a[..., :, :start], panel_order)] if start else []   # no gathers of empty blocks:
        parts.append(panel)                                                           # IREE 3.13 fails on them
        if end < size:
            parts.append(_gather_rows(a[..., :, end:], panel_order))
        a = ops.concatenate(parts, axis=-1) if len(parts) > 1 else panel
        order = ops.take_along_axis(order, panel_order, axis=-1)
        if end == size:
            break
        u12 = mm(_unit_lower_inverse(panel[..., start:end, :], inverses), a[..., start:end, end:])
        a22 = a[..., end:, end:] - mm(panel[..., end:, :], u12)
        right = ops.concatenate([a[..., :start, end:], u12, a22], axis=-2)
        a = ops.concatenate([a[..., :, :end], right], axis=-1)
    pivots = ops.concatenate(pivots, axis=-1) if len(pivots) > 1 else pivots[0]
    swaps = ops.sum((pivots != _util.index((size,), 0)).astype(dtypes.int32), axis=-1)
    return a[..., :n, :n], pivots[..., :n], order[..., :n], swaps


_real_factor = composite("hlojit.lu")(_factor)


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
    """x with a @ x = b (a.T @ x = b when `transpose`) from a's LU factors and row order; for real factors not
    transposed the composite hlojit.lu_solve (a target may run a kernel of its own: pipeline/kernels.py)."""
    if not transpose and not dtypes.is_complex(lu.dtype) and lu.shape[:-2] == b.shape[:-2]:
        return _real_solve_factored(lu, order, b)
    return _solve_factored(lu, order, b, transpose)


def _solve_factored(lu, order, b, transpose: bool = False):
    """solve_factored's StableHLO: blocked triangular solves."""
    if not transpose:   # both triangles' diagonal blocks inverted in one loop
        unit_lower, upper = diagonal_inverses(lu, [(True, True), (False, False)])
        y = substitute(lu, _gather_rows(b, order), lower=True, unit=True, inverses=unit_lower)
        return substitute(lu, y, lower=False, inverses=upper)
    y = triangular_solve(lu, b, lower=False, transpose=True)
    x = triangular_solve(lu, y, lower=True, transpose=True, unit_diagonal=True)
    inverse_order = ops.argsort(order, axis=-1).astype(dtypes.int32)
    return _gather_rows(x, inverse_order)


_real_solve_factored = composite("hlojit.lu_solve")(_solve_factored)


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
    """JAX's rule, gb = a^-T g and ga = -gb x^T: plain transposes for complex a too (solve is holomorphic, and
    a cotangent is the transpose of the linear map, JAX's convention)."""
    lu, order, x = residuals
    gb = solve_factored(lu, order, g, transpose=True)
    return -mm(gb, mT(x)), gb


_solve.defvjp(_solve_fwd, _solve_bwd)


def solve(a, b):
    """numpy.linalg.solve: x with a @ x = b for square a (..., n, n); b (n,) is a vector, else (..., n, k);
    batch dimensions broadcast. Singular a: inf/nan, as JAX."""
    a = _util.matrix("solve", a, square=True, complex_ok=True)
    a, b, vector = _util.matrix_and_rhs("solve", a, b)
    x = _solve(a, b)
    return x[..., 0] if vector else x


def inv(a):
    """numpy.linalg.inv of square a (..., n, n). Singular a: inf/nan, as JAX."""
    a = _util.matrix("inv", a, square=True, complex_ok=True)
    identity = ops.broadcast_to(_util.eye(a.shape[-1], a.dtype), a.shape)
    return _solve(a, identity)


def _log_det_parts(a):
    """(sign, log|det|, det) from the LU factors (the swaps' parity times the diagonal of U); for complex a
    the sign is a phase (ops.sign of a complex number: z / |z|, 0 at 0) and log|det| is real."""
    lu, _, _, swaps = factor(a)
    diagonal = ops.diagonal(lu, 0, -2, -1)
    parity = 1 - 2 * (swaps % 2).astype(a.dtype)
    sign = parity * ops.prod(ops.sign(diagonal), axis=-1)
    return sign, ops.sum(ops.log(ops.abs(diagonal)), axis=-1), parity * ops.prod(diagonal, axis=-1)


@custom_vjp
def _det(a):
    return _log_det_parts(a)[2]


def _det_fwd(a):
    d = _log_det_parts(a)[2]
    return d, (a, d)


def _det_bwd(residuals, g):
    """g det(a) a^-T (holomorphic: the same for complex a)."""
    a, d = residuals
    return ((g * d)[..., None, None] * mT(inv(a)),)


_det.defvjp(_det_fwd, _det_bwd)


@custom_vjp
def _slogdet(a):
    sign, logabs, _ = _log_det_parts(a)
    return sign, logabs


def _slogdet_fwd(a):
    sign, logabs, _ = _log_det_parts(a)
    return (sign, logabs), (a, sign)


def _slogdet_bwd(residuals, g):
    """JAX's rule: with t = trace(a^-1 da), d log|det| = Re t and d sign = i Im(t) sign (0 for real a), so
    ga = (g_logabs + i Im(g_sign sign)) a^-T."""
    (a, sign), (g_sign, g_logabs) = residuals, g
    weight = g_logabs
    if dtypes.is_complex(a.dtype):
        weight = ops.complex(g_logabs, ops.imag(g_sign * sign))
    return (weight[..., None, None] * mT(inv(a)),)


_slogdet.defvjp(_slogdet_fwd, _slogdet_bwd)


def det(a):
    """numpy.linalg.det of square a (..., n, n), from LU with partial pivoting (0 for singular a)."""
    return _det(_util.matrix("det", a, square=True, complex_ok=True))


def slogdet(a):
    """numpy.linalg.slogdet: (sign, log|det|) of square a (..., n, n); singular a gives (0, -inf)."""
    return _slogdet(_util.matrix("slogdet", a, square=True, complex_ok=True))


def lu_factor(a, overwrite_a: bool = False, check_finite: bool = True):
    """scipy.linalg.lu_factor: (lu, piv) of square a (..., n, n): L below the diagonal (unit diagonal), U on and
    above it, and LAPACK's 0-based pivots (int32: row i was interchanged with row piv[i])."""
    lu, pivots, _, _ = factor(_util.matrix("lu_factor", a, square=True, complex_ok=True))
    return lu, pivots


def lu_solve(lu_and_piv, b, trans=0, overwrite_b: bool = False, check_finite: bool = True):
    """scipy.linalg.lu_solve: x with a @ x = b (trans 0), a.T @ x = b (trans 1) or a^H @ x = b (trans 2: the
    conjugate transpose, a.T for real a) from lu_factor. a^H's factors are those of conj(a): conj(lu)."""
    lu, pivots = lu_and_piv
    lu = _util.matrix("lu_solve", lu, square=True, complex_ok=True)
    lu, b, vector = _util.matrix_and_rhs("lu_solve", lu, b)
    if trans not in (0, 1, 2):
        _core.fail(ValueError, "lu_solve", f"trans must be 0, 1 or 2, not {trans!r}")
    lu = _util.conj(lu) if trans == 2 else lu
    x = solve_factored(lu, permutation(_core.as_tensor(pivots, "lu_solve")), b, transpose=trans != 0)
    return x[..., 0] if vector else x


def lu(a, permute_l: bool = False, overwrite_a: bool = False, check_finite: bool = True, p_indices: bool = False):
    """scipy.linalg.lu: (p, l, u) with a = p @ l @ u for a (..., m, n); (p @ l, u) with permute_l=True; p as
    row indices (a[p] = l @ u... scipy's: l[p] rows) with p_indices=True."""
    a = _util.matrix("lu", a, complex_ok=True)
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
    p = mT(ops.one_hot(order, m, dtype=dtypes.real_dtype(a.dtype)))   # real for complex a, as scipy
    return p, l, u
