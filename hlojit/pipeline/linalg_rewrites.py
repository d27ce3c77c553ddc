"""Target rewrites of the spec's factorization ops that IREE 3.13 cannot legalize at all (`failed to legalize
operation 'stablehlo.triangular_solve'`, likewise cholesky), for modules that did not come from hlojit's own
ops (hlojit.ops.linalg builds its factorizations from matmuls): each becomes a stablehlo.while over the rows
(columns), one matrix-vector product per step, of static shape: cholesky for real floats, triangular_solve for
real and complex ones (before complex_pairs.py, which then carries the loop's complex values as real pairs).

- triangular_solve: op(a) is made explicit (the named triangle, a unit diagonal if asked, transposed if
  asked, conjugated too for ADJOINT of complex a), a right-side solve x op(a) = b becomes op(a)^T x^T = b^T,
  and the rows of x follow by forward (lower) or back (upper) substitution: x_i = (b_i - m_i . x) / m_ii,
  where the rows of x not yet solved are zero.
- cholesky: left-looking, column by column on the lower triangle (the upper one's transpose for lower =
  false): l_j = (a_j - L l_j^T) / sqrt(that at j), rows above j zero. Not positive definite: NaNs.
"""
from __future__ import annotations

import numpy as np
from iree.compiler import ir

from ..dialects import stablehlo as hlo
from ..dialects.types import dtype_of, shape_of
from .complex_math_pairs import div
from .legalize import walk


def _flag(op, name: str) -> bool:
    return name in op.attributes and ir.BoolAttr(op.attributes[name]).value


def _real_float(value: ir.Value) -> bool:
    dtype = dtype_of(value.type)
    return dtype.kind == "f" or dtype.name == "bfloat16"


def _float_or_complex(value: ir.Value) -> bool:
    return _real_float(value) or dtype_of(value.type).kind == "c"


def _conjugate(x: ir.Value) -> ir.Value:
    return hlo.complex(hlo.real(x), hlo.unary("negate", hlo.imag(x)))


def _splat(value, like: ir.Value) -> ir.Value:
    return hlo.broadcast_in_dim(hlo.constant(np.array(value, dtype_of(like.type))), shape_of(like.type), [])


def _index(value) -> ir.Value:
    return hlo.constant(np.array(value, np.int32))


def _swap_last(x: ir.Value) -> ir.Value:
    rank = len(shape_of(x.type))
    return hlo.transpose(x, [*range(rank - 2), rank - 1, rank - 2])


def _triangle(a: ir.Value, lower: bool, unit: bool) -> ir.Value:
    """a's named triangle, zero elsewhere, with ones on the diagonal if unit."""
    shape = shape_of(a.type)
    rows, cols = (hlo.iota(shape, len(shape) - k, np.int32) for k in (2, 1))
    m = hlo.select(hlo.compare(rows, cols, "GE" if lower else "LE"), a, _splat(0, a))
    return hlo.select(hlo.compare(rows, cols, "EQ"), _splat(1, a), m) if unit else m


def _block(x: ir.Value, row, col, sizes) -> ir.Value:
    """The [..., sizes] block of x at (row, col) of its last two dimensions (whole batch dimensions)."""
    shape = shape_of(x.type)
    return hlo.dynamic_slice(x, [_index(0)] * (len(shape) - 2) + [row, col], [*shape[:-2], *sizes])


def _put(x: ir.Value, block: ir.Value, row, col) -> ir.Value:
    return hlo.dynamic_update_slice(x, block, [_index(0)] * (len(shape_of(x.type)) - 2) + [row, col])


def _batched_product(lhs: ir.Value, rhs: ir.Value, lhs_contract: int, rhs_contract: int) -> ir.Value:
    batch = list(range(len(shape_of(lhs.type)) - 2))
    return hlo.dot_general(lhs, rhs, lhs_batch=batch, rhs_batch=batch, lhs_contract=[len(batch) + lhs_contract],
                           rhs_contract=[len(batch) + rhs_contract])


def _loop(n: int, start: ir.Value, step) -> ir.Value:
    """step(i, carried) -> next carried, for i = 0 .. n-1 (a 0-d i32)."""
    def cond(i, _):
        return [hlo.compare(i, _index(n), "LT")]

    def body(i, carried):
        return [hlo.binary("add", i, _index(1)), step(i, carried)]
    return hlo.while_([_index(0), start], cond, body)[1]


def substitution(m: ir.Value, b: ir.Value, lower: bool) -> ir.Value:
    """x with m x = b, m [..., n, n] triangular (zero outside its triangle), b [..., n, k]."""
    n, k = shape_of(b.type)[-2:]

    def step(i, x):
        row = i if lower else hlo.binary("subtract", _index(n - 1), i)
        done = _batched_product(_block(m, row, _index(0), [1, n]), x, 1, 0)          # [..., 1, k]
        diagonal = _block(m, row, row, [1, 1])
        shape = shape_of(done.type)
        rest = hlo.binary("subtract", _block(b, row, _index(0), [1, k]), done)
        xi = hlo.binary("divide", rest, hlo.broadcast_in_dim(diagonal, shape, list(range(len(shape)))))
        return _put(x, xi, row, _index(0))
    return _loop(n, _splat(0, b), step)


def _columns(x: ir.Value, start: int, stop: int) -> ir.Value:
    shape = shape_of(x.type)
    return hlo.slice(x, [0] * len(shape), [*shape[:-1], stop]) if start == 0 else \
        hlo.slice(x, [0] * (len(shape) - 1) + [start], shape)


def complex_substitution(m: ir.Value, b: ir.Value, lower: bool) -> ir.Value:
    """substitution() for complex m and b, in real arithmetic on one carried real [..., n, 2k] tensor (the real
    parts' columns, then the imaginary parts'): two real products a step. Carrying the complex x as two real
    tensors of four products a step (complex_pairs.py's form of the complex loop) crashed llvm-cpu's data
    tiling (LLVM ERROR in iree-stream-encode-host-tensors: 'Failed to infer result type(s)' of arith.constant)."""
    n, k = shape_of(b.type)[-2:]
    m_re, m_im = hlo.real(m), hlo.imag(m)
    both = hlo.concatenate([hlo.real(b), hlo.imag(b)], len(shape_of(b.type)) - 1)

    def step(i, x):
        row = i if lower else hlo.binary("subtract", _index(n - 1), i)
        by_re, by_im = (_batched_product(_block(part, row, _index(0), [1, n]), x, 1, 0) for part in (m_re, m_im))
        done = (hlo.binary("subtract", _columns(by_re, 0, k), _columns(by_im, k, 2 * k)),
                hlo.binary("add", _columns(by_re, k, 2 * k), _columns(by_im, 0, k)))
        given = _block(both, row, _index(0), [1, 2 * k])
        rest = tuple(hlo.binary("subtract", _columns(given, *span), d) for span, d in zip(((0, k), (k, 2 * k)), done))
        shape = shape_of(rest[0].type)
        diagonal = tuple(hlo.broadcast_in_dim(_block(part, row, row, [1, 1]), shape, list(range(len(shape))))
                         for part in (m_re, m_im))
        xi = div(rest, diagonal)
        return _put(x, hlo.concatenate(list(xi), len(shape) - 1), row, _index(0))
    x = _loop(n, _splat(0, both), step)
    return hlo.complex(_columns(x, 0, k), _columns(x, k, 2 * k))


def triangular_solve_by_substitution(module: ir.Module) -> int:
    count = 0
    for op in list(walk(module.operation)):
        if op.name != "stablehlo.triangular_solve" or not _float_or_complex(op.operands[0]):
            continue
        a, b = op.operands
        lower, left = _flag(op, "lower"), _flag(op, "left_side")
        transpose = str(op.attributes["transpose_a"])
        transposed = "NO_TRANSPOSE" not in transpose   # ADJOINT is TRANSPOSE for reals
        with ir.InsertionPoint(op), op.location:
            m = _triangle(a, lower, _flag(op, "unit_diagonal"))
            if "ADJOINT" in transpose and dtype_of(a.type).kind == "c":
                m = _conjugate(m)
            if transposed != (not left):      # x op(a) = b is op(a)^T x^T = b^T: one more transpose of m
                m, lower = _swap_last(m), not lower
            solve = complex_substitution if dtype_of(a.type).kind == "c" else substitution
            x = solve(m, b if left else _swap_last(b), lower)
            new = x if left else _swap_last(x)
        op.result.replace_all_uses_with(new)
        op.erase()
        count += 1
    return count


def lower_cholesky(a: ir.Value) -> ir.Value:
    """L with L L^T = a, reading a's lower triangle only, a [..., n, n]."""
    shape = shape_of(a.type)
    n = shape[-1]
    column_shape = [*shape[:-2], n, 1]
    rows = hlo.iota(column_shape, len(shape) - 2, np.int32)

    def step(j, factor):
        earlier = _batched_product(factor, _block(factor, j, _index(0), [1, n]), 1, 1)   # [..., n, 1]
        column = hlo.binary("subtract", _block(a, _index(0), j, [n, 1]), earlier)
        pivot = hlo.unary("sqrt", _block(column, j, _index(0), [1, 1]))
        scaled = hlo.binary("divide", column, hlo.broadcast_in_dim(pivot, column_shape, list(range(len(shape)))))
        below = hlo.compare(rows, hlo.broadcast_in_dim(j, column_shape, []), "GE")
        return _put(factor, hlo.select(below, scaled, _splat(0, scaled)), _index(0), j)
    return _loop(n, _splat(0, a), step)


def cholesky_by_columns(module: ir.Module) -> int:
    count = 0
    for op in list(walk(module.operation)):
        if op.name != "stablehlo.cholesky" or not _real_float(op.operands[0]):
            continue
        a = op.operands[0]
        lower = _flag(op, "lower")
        with ir.InsertionPoint(op), op.location:
            factor = lower_cholesky(a if lower else _swap_last(a))
            new = factor if lower else _swap_last(factor)
        op.result.replace_all_uses_with(new)
        op.erase()
        count += 1
    return count


ALL_TARGETS = [triangular_solve_by_substitution, cholesky_by_columns]
