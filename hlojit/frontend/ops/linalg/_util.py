"""What the linalg ops share: input checks (ShapeError naming the op), batched matrix helpers, masks.

Every factorization works on a stack of matrices (..., m, n): masks built from iotas and batched matmuls
let one loop step treat every matrix of the stack at once, with no per-matrix gathers.
"""
from __future__ import annotations

import numpy as np

from .... import errors
from ....dialects.types import finfo
from ... import dtypes
from ... import ops  # the op namespace, complete by the time linalg is imported (its last line)
from .. import _core
from ..indexing import dynamic_slice, dynamic_update_slice
from ..shape import iota, swapaxes
from ...control import fori_loop

ShapeError, DTypeError = errors.ShapeError, errors.DTypeError

BLOCK = 64   # panel width of the blocked factorizations
UNROLL = 8   # columns per loop step inside a panel (unrolled at trace time)


def matrix(op: str, x, square: bool = False, min_ndim: int = 2, complex_ok: bool = False):
    """x as a float Tensor of rank >= 2 (ints become the default float); square when `square`; complex too
    for the ops that take it (`complex_ok`)."""
    x = _core.as_tensor(x, op)
    if x.ndim < min_ndim:
        _core.fail(ShapeError, op, f"needs an array of at least {min_ndim} dimensions, not {_core.describe(x)}")
    if square and x.shape[-1] != x.shape[-2]:
        _core.fail(ShapeError, op, f"needs square matrices in the last two dimensions, not {_core.describe(x)}")
    if dtypes.is_int(x.dtype) or x.dtype == dtypes.bool_:
        return _core.convert(x, dtypes.DEFAULT_FLOAT)
    if not (dtypes.is_float(x.dtype) or complex_ok and dtypes.is_complex(x.dtype)):
        _core.fail(DTypeError, op, f"supports float arrays, not {_core.describe(x)}")
    return _core.convert(x, x.dtype)  # drop weak typing: results are as wide as the matrix


def mT(x):
    return swapaxes(x, -1, -2)


def mH(x):
    """The conjugate transpose (the transpose of a real x: no conjugate op in a real path's program)."""
    return conj(mT(x))


def conj(x):
    """x's complex conjugate; x itself when real (the real paths' programs stay as they were)."""
    return ops.conjugate(x) if dtypes.is_complex(x.dtype) else x


def real_diagonal(x):
    """x (..., n, n) with its diagonal's imaginary parts dropped (x itself when real): what LAPACK's Hermitian
    routines (zpotrf, zheevd) read of a diagonal, so that neither the result nor its gradient depends on them."""
    if not dtypes.is_complex(x.dtype):
        return x
    n = x.shape[-1]
    return ops.where(index((n, n), 0) == index((n, n), 1), ops.real(x).astype(x.dtype), x)


def eye(n: int, dtype, m: int | None = None):
    m = n if m is None else m
    return ops.eye(n, m, dtype=dtype)


def index(shape: tuple, axis: int):
    """int32 iota of `shape` counting along `axis` (row or column numbers, for masks)."""
    return iota(dtypes.int32, tuple(shape), axis % len(shape))


def column(x, j, width: int = 1):
    """Columns j..j+width of x (..., m, n) for a traced j."""
    return dynamic_slice(x, [0] * (x.ndim - 1) + [j], x.shape[:-1] + (width,))


def rows(x, i, height: int = 1):
    """Rows i..i+height of x (..., m, n) for a traced i."""
    return dynamic_slice(x, [0] * (x.ndim - 2) + [i, 0], x.shape[:-2] + (height, x.shape[-1]))


def set_columns(x, update, j):
    return dynamic_update_slice(x, update, [0] * (x.ndim - 1) + [j])


def set_rows(x, update, i):
    return dynamic_update_slice(x, update, [0] * (x.ndim - 2) + [i, 0])


def pad_identity(a, size: int):
    """a (..., n, n) as the block diagonal [[a, 0], [0, I]] of `size`: factorizations of it hold a's.
    Built by concatenation: IREE 3.13's runtime rejects (OUT_OF_RANGE in copy_buffer) some loops over a
    stablehlo.pad result whose output is then sliced."""
    n, extra, batch = a.shape[-1], size - a.shape[-1], a.shape[:-2]
    if extra == 0:
        return a
    right = ops.zeros(batch + (n, extra), a.dtype)
    below = ops.concatenate([ops.zeros(batch + (extra, n), a.dtype),
                             ops.broadcast_to(eye(extra, a.dtype), batch + (extra, extra))], axis=-1)
    return ops.concatenate([ops.concatenate([a, right], axis=-1), below], axis=-2)


def pad_rows(b, size: int):
    """b (..., n, k) with zero rows appended up to `size` rows."""
    if b.shape[-2] == size:
        return b
    return ops.concatenate([b, ops.zeros(b.shape[:-2] + (size - b.shape[-2], b.shape[-1]), b.dtype)], axis=-2)


def blocks_of(n: int) -> tuple[int, int]:
    """(block size, padded size) of the blocked algorithms for an n x n matrix: BLOCK, twice that above 512
    (the block loop is unrolled at trace time: each block adds its own matmul dispatches to compile)."""
    block = min(n, BLOCK if n <= 512 else 2 * BLOCK)
    return block, -(-n // block) * block


def column_loop(count: int, step, init):
    """step(j, carry) for j = 0 .. count-1: UNROLL unrolled steps per loop iteration (a loop iteration costs
    a host round trip, an unrolled step about one fused dispatch), all of them in one iteration when
    count <= UNROLL. Always a loop: with QR's small panels unrolled without one, IREE 3.13's cpu fails on
    lstsq and svdvals in one module ("'scf.while' op ... region branch point has 6 operands, but region
    successor needs 8 inputs", on the Jacobi loops)."""
    unroll = count if count <= UNROLL else UNROLL if count % UNROLL == 0 else 1
    return fori_loop(0, count, step, init, unroll=unroll)


def pad_above(x, rows: int):
    """x (..., r, k) with zero rows prepended up to `rows` rows."""
    if x.shape[-2] == rows:
        return x
    return ops.concatenate([ops.zeros(x.shape[:-2] + (rows - x.shape[-2], x.shape[-1]), x.dtype), x], axis=-2)


def eps(dtype) -> float:
    return float(finfo(dtype).eps)


def matrix_and_rhs(op: str, a, b):
    """(a, b, b_was_a_vector) for solvers: b (..., n) or (..., n, k) as (..., n, k), a and b promoted to
    one float dtype and their batch dimensions broadcast. A b of rank 1 is always a vector (numpy 2)."""
    b = _core.as_tensor(b, op)
    (a, b), dtype, _ = _core.promote(op, a, b)
    if not (dtypes.is_float(dtype) or dtypes.is_complex(dtype)):
        a, b = _core.convert(a, dtypes.DEFAULT_FLOAT), _core.convert(b, dtypes.DEFAULT_FLOAT)
    if b.ndim == 0:
        _core.fail(ShapeError, op, f"b must have at least one dimension, not {_core.describe(b)}")
    vector = b.ndim == 1
    if vector:
        b = b[:, None]
    if b.shape[-2] != a.shape[-1]:
        _core.fail(ShapeError, op, f"a {_core.describe(a)} and b {_core.describe(b)} have different numbers of "
                                   "rows")
    batch = _core.broadcast_shapes(op, a.shape[:-2], b.shape[:-2])
    a = _core.broadcast_to(a, batch + a.shape[-2:], op)
    b = _core.broadcast_to(b, batch + b.shape[-2:], op)
    return a, b, vector


def mm(a, b):
    """a @ b for the factorizations."""
    return a @ b


def pad_rectangular(a, size: int):
    """a (..., m, n) with zero rows and columns appended up to (size, size): LU with partial pivoting of
    it factors a (a zero column pivots on its own row and eliminates nothing)."""
    m, n = a.shape[-2:]
    if n < size:
        a = ops.concatenate([a, ops.zeros(a.shape[:-1] + (size - n,), a.dtype)], axis=-1)
    return pad_rows(a, size)
