"""numpy's named products and diagonals: tensordot, inner, outer, kron, vdot, cross, trace, diag, diagflat.

Each is a fixed arrangement of `dot_general`, `reshapes, slices and selects, with numpy's shape rules; the
errors name the numpy function the user called.
"""
from __future__ import annotations

import numbers

from ...errors import ShapeError
from ..tensor import Tensor
from . import _core
from ._core import as_tensor, describe, fail
from .complex_math import conj
from .elementwise import where
from .joining import pad, stack
from .matmul import dot_general, matmul
from .reductions import sum as _sum
from .shape import diagonal, eye, moveaxis, ravel, reshape, static_int


def _axes_list(op: str, axes, ndim: int) -> list[int]:
    axes = [axes] if isinstance(axes, numbers.Integral) else list(axes)
    return [_core.normalize_axis(op, a, ndim) for a in axes]


def tensordot(a, b, axes=2) -> Tensor:
    """Contract a's `axes[0]` with b's `axes[1]` (an int n: a's last n with b's first n); the free axes of a,
    then of b, remain."""
    (a, b), _, _ = _core.promote("tensordot", a, b)
    if isinstance(axes, numbers.Integral):
        n = int(axes)
        if not 0 <= n <= min(a.ndim, b.ndim):
            fail(ShapeError, "tensordot", f"axes={n} is out of range for {describe(a)} and {describe(b)}")
        xa, xb = list(range(a.ndim - n, a.ndim)), list(range(n))
    else:
        try:
            first, second = axes
        except (TypeError, ValueError):
            fail(ValueError, "tensordot", f"axes must be an int or a pair of axis lists, not {axes!r}")
        xa, xb = _axes_list("tensordot", first, a.ndim), _axes_list("tensordot", second, b.ndim)
        if len(xa) != len(xb):
            fail(ShapeError, "tensordot", f"axes {axes} pair {len(xa)} axes of a with {len(xb)} of b")
    for i, j in zip(xa, xb):
        if a.shape[i] != b.shape[j]:
            fail(ShapeError, "tensordot", f"axis {i} of {describe(a)} and axis {j} of {describe(b)} differ")
    return dot_general(a, b, (tuple(xa), tuple(xb)))


def inner(a, b) -> Tensor:
    """The sum product over the last axes of a and b (a product for scalars)."""
    (a, b), _, _ = _core.promote("inner", a, b)
    if a.ndim == 0 or b.ndim == 0:
        return a * b
    if a.shape[-1] != b.shape[-1]:
        fail(ShapeError, "inner", f"last axes of {describe(a)} and {describe(b)} differ")
    return dot_general(a, b, ((a.ndim - 1,), (b.ndim - 1,)))


def outer(a, b) -> Tensor:
    """Every element of flattened a times every element of flattened b: shape (a.size, b.size)."""
    (a, b), _, _ = _core.promote("outer", a, b)
    a, b = ravel(a), ravel(b)
    return reshape(a, (a.shape[0], 1)) * reshape(b, (1, b.shape[0]))


def vdot(a, b) -> Tensor:
    """The dot product of the flattened arrays (conjugating a, which changes nothing for real dtypes)."""
    (a, b), _, _ = _core.promote("vdot", a, b)
    a, b = ravel(a), ravel(b)
    if a.shape != b.shape:
        fail(ShapeError, "vdot", f"flattened sizes {a.shape[0]} and {b.shape[0]} differ")
    return dot_general(conj(a), b, ((0,), (0,)))


def kron(a, b) -> Tensor:
    """The Kronecker product: blocks a[i] * b, the lower-rank operand padded with leading ones."""
    (a, b), _, _ = _core.promote("kron", a, b)
    ndim = max(a.ndim, b.ndim)
    a = reshape(a, (1,) * (ndim - a.ndim) + a.shape)
    b = reshape(b, (1,) * (ndim - b.ndim) + b.shape)
    interleaved_a = tuple(d for n in a.shape for d in (n, 1))
    interleaved_b = tuple(d for n in b.shape for d in (1, n))
    product = reshape(a, interleaved_a) * reshape(b, interleaved_b)
    return reshape(product, tuple(p * q for p, q in zip(a.shape, b.shape)))


def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None) -> Tensor:
    """The cross product of 3-vectors along the given axes, broadcast; a 2-vector's z component is 0, and of
    two 2-vectors numpy gives the z component alone."""
    (a, b), _, _ = _core.promote("cross", a, b)
    if axis is not None:
        axisa = axisb = axisc = axis
    a = moveaxis(a, _core.normalize_axis("cross", axisa, a.ndim), -1)
    b = moveaxis(b, _core.normalize_axis("cross", axisb, b.ndim), -1)
    if a.shape[-1] not in (2, 3) or b.shape[-1] not in (2, 3):
        fail(ShapeError, "cross", f"vectors must have 2 or 3 components, not {describe(a)} and {describe(b)}")
    if a.shape[-1] == 2 and b.shape[-1] == 2:
        return a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]

    def components(x):
        zero = _core.broadcast_to(_core.constant(0, x.dtype, x.weak), x.shape[:-1], "cross")
        return [x[..., i] for i in range(x.shape[-1])] + [zero] * (3 - x.shape[-1])
    (a0, a1, a2), (b0, b1, b2) = components(a), components(b)
    c = stack(_core.broadcast_all("cross", [a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0]), axis=-1)
    return moveaxis(c, -1, _core.normalize_axis("cross", axisc, c.ndim))


def trace(a, offset=0, axis1=0, axis2=1, dtype=None) -> Tensor:
    """The sum along a diagonal (numpy: of axes axis1 and axis2; the other axes remain)."""
    d = diagonal(a, offset, axis1, axis2)
    if dtype is not None:
        d = _core.convert(d, dtype)
    return _sum(d, axis=-1)


def diag(v, k=0) -> Tensor:
    """numpy diag: of a 1-D array, the 2-D array with it on the k-th diagonal; of a 2-D one, that diagonal."""
    v = as_tensor(v, "diag")
    k = static_int("diag", "k", k)
    if v.ndim == 2:
        return diagonal(v, k)
    if v.ndim != 1:
        fail(ShapeError, "diag", f"takes a 1-D or 2-D array, not {describe(v)}")
    n = v.shape[0] + abs(k)
    # result[i, i + k] = v[i]: v runs along the rows for k >= 0 (row i holds v[i]), along the columns below
    padded = pad(v, ((0, abs(k)),))
    along = reshape(padded, (n, 1)) if k >= 0 else reshape(padded, (1, n))
    zero = _core.constant(0, v.dtype, v.weak)
    return where(eye(n, n, k, dtype=bool), along, zero)


def diagflat(v, k=0) -> Tensor:
    """The flattened input on the k-th diagonal of a new 2-D array."""
    return diag(ravel(as_tensor(v, "diagflat")), k)


# --- the array API's vector products (numpy 2.x, jax.numpy): batched over leading axes, x1 conjugated -------

def vecdot(x1, x2, axis: int = -1) -> Tensor:
    """sum(conj(x1) * x2) along `axis`, the other axes broadcast."""
    (x1, x2), _, _ = _core.promote("vecdot", x1, x2)
    for t in (x1, x2):
        if t.ndim == 0:
            fail(ShapeError, "vecdot", f"needs vectors, not {describe(t)}")
    a1 = _core.normalize_axis("vecdot", axis, x1.ndim)
    a2 = _core.normalize_axis("vecdot", axis, x2.ndim)
    if x1.shape[a1] != x2.shape[a2]:
        fail(ShapeError, "vecdot", f"{describe(x1)} and {describe(x2)} differ along axis {axis}")
    return _sum(conj(moveaxis(x1, a1, -1)) * moveaxis(x2, a2, -1), axis=-1)


def matvec(x1, x2) -> Tensor:
    """Matrix (..., m, n) times vector (..., n): (..., m), the batch axes broadcast."""
    x1, x2 = as_tensor(x1, "matvec"), as_tensor(x2, "matvec")
    if x1.ndim < 2 or x2.ndim < 1 or x1.shape[-1] != x2.shape[-1]:
        fail(ShapeError, "matvec", f"needs (..., m, n) and (..., n), not {describe(x1)} and {describe(x2)}")
    product = matmul(x1, reshape(x2, x2.shape + (1,)))
    return reshape(product, product.shape[:-1])


def vecmat(x1, x2) -> Tensor:
    """conj(vector (..., m)) times matrix (..., m, n): (..., n), the batch axes broadcast."""
    x1, x2 = as_tensor(x1, "vecmat"), as_tensor(x2, "vecmat")
    if x2.ndim < 2 or x1.ndim < 1 or x1.shape[-1] != x2.shape[-2]:
        fail(ShapeError, "vecmat", f"needs (..., m) and (..., m, n), not {describe(x1)} and {describe(x2)}")
    product = matmul(reshape(conj(x1), x1.shape[:-1] + (1, x1.shape[-1])), x2)
    return reshape(product, product.shape[:-2] + product.shape[-1:])


def matrix_transpose(x) -> Tensor:
    """The last two axes swapped (the array API's `x.mT`)."""
    x = as_tensor(x, "matrix_transpose")
    if x.ndim < 2:
        fail(ShapeError, "matrix_transpose", f"needs at least 2 dimensions, not {describe(x)}")
    return moveaxis(x, -1, -2)
