"""numpy's array-building names: stacks, atleast_*, grids and index arrays, rot90, append/insert/delete,
resize, identity, logspace/geomspace.

All sizes are static, so each is a fixed arrangement of the joining and shape ops; index-returning functions
(`tril_indices` ...) give int32 arrays, as JAX's do by default.
"""
from __future__ import annotations

import math
import numbers

import numpy as np

from ...errors import ShapeError
from .. import dtypes
from ..tensor import Tensor
from . import _core
from ._core import as_tensor, describe, fail
from .elementwise import where
from .joining import _sequence, _take, concatenate, stack, tile
from .shape import (_count, _shape, arange, broadcast_to, eye, flip, iota, linspace, moveaxis, ravel, reshape,
                    slice_axis, static_int, swapaxes)


def atleast_1d(*arrays):
    """Each array with at least one dimension (a scalar becomes shape (1,)); one array: not a list."""
    out = [reshape(x, (1,)) if x.ndim == 0 else x for x in (as_tensor(a, "atleast_1d") for a in arrays)]
    return out[0] if len(out) == 1 else out


def atleast_2d(*arrays):
    """Each array with at least two dimensions: (n,) becomes (1, n)."""
    out = [reshape(x, (1,) * (2 - x.ndim) + x.shape) if x.ndim < 2 else x
           for x in (as_tensor(a, "atleast_2d") for a in arrays)]
    return out[0] if len(out) == 1 else out


def atleast_3d(*arrays):
    """Each array with at least three dimensions: (n,) becomes (1, n, 1), (m, n) becomes (m, n, 1)."""
    def lift(x):
        if x.ndim == 0:
            return reshape(x, (1, 1, 1))
        if x.ndim == 1:
            return reshape(x, (1, x.shape[0], 1))
        if x.ndim == 2:
            return reshape(x, x.shape + (1,))
        return x
    out = [lift(as_tensor(a, "atleast_3d")) for a in arrays]
    return out[0] if len(out) == 1 else out


def _tensors(op: str, arrays) -> list[Tensor]:
    return [as_tensor(a, op) for a in _sequence(op, arrays)]


def vstack(arrays, dtype=None) -> Tensor:
    """Rows: join along axis 0 after atleast_2d."""
    parts = [atleast_2d(t) for t in _tensors("vstack", arrays)]
    return concatenate(parts, axis=0, dtype=dtype)


row_stack = vstack


def hstack(arrays, dtype=None) -> Tensor:
    """Columns: join along axis 1 (axis 0 for 1-D arrays)."""
    parts = [atleast_1d(t) for t in _tensors("hstack", arrays)]
    return concatenate(parts, axis=0 if parts[0].ndim == 1 else 1, dtype=dtype)


def dstack(arrays, dtype=None) -> Tensor:
    """Depth: join along axis 2 after atleast_3d."""
    parts = [atleast_3d(t) for t in _tensors("dstack", arrays)]
    return concatenate(parts, axis=2, dtype=dtype)


def column_stack(arrays) -> Tensor:
    """1-D arrays as columns of a 2-D array; 2-D arrays as they are; joined along axis 1."""
    parts = [reshape(t, (t.shape[0] if t.ndim else 1, 1)) if t.ndim < 2 else t
             for t in _tensors("column_stack", arrays)]
    return concatenate(parts, axis=1)


def broadcast_arrays(*arrays) -> list[Tensor]:
    """The arrays broadcast against each other to one shape."""
    tensors = [as_tensor(a, "broadcast_arrays") for a in arrays]
    return _core.broadcast_all("broadcast_arrays", tensors)


def meshgrid(*xi, indexing="xy", sparse=False, copy=True) -> list[Tensor]:
    """Coordinate arrays from 1-D coordinate vectors; `indexing="xy"` (numpy's default) swaps the first two."""
    if indexing not in ("xy", "ij"):
        fail(ValueError, "meshgrid", f"indexing must be 'xy' or 'ij', not {indexing!r}")
    vectors = [ravel(as_tensor(x, "meshgrid")) for x in xi]
    n = len(vectors)
    shape = [v.shape[0] for v in vectors]
    if indexing == "xy" and n >= 2:
        shape[0], shape[1] = shape[1], shape[0]
    out = []
    for i, v in enumerate(vectors):
        axis = (1 if i == 0 else 0 if i == 1 else i) if indexing == "xy" and n >= 2 else i
        lone = [1] * n
        lone[axis] = v.shape[0]
        grid = reshape(v, tuple(lone))
        out.append(grid if sparse else broadcast_to(grid, tuple(shape)))
    return out


def indices(dimensions, dtype=dtypes.int32, sparse=False):
    """An array of the index grids of `dimensions` (stacked along a new first axis; a tuple if sparse)."""
    dims = _shape(dimensions)
    grids = []
    for axis, n in enumerate(dims):
        shape = tuple(n if a == axis else (d if not sparse else 1) for a, d in enumerate(dims))
        grids.append(iota(dtype, shape, axis))
    return tuple(grids) if sparse else stack(grids) if grids else reshape(arange(0, dtype=dtype), (0,))


def _index_pairs(op: str, mask: np.ndarray) -> tuple[Tensor, Tensor]:
    rows, cols = np.nonzero(mask)
    return (_core.constant(rows.astype(np.int32), dtypes.int32, op=op),
            _core.constant(cols.astype(np.int32), dtypes.int32, op=op))


def tril_indices(n, k=0, m=None) -> tuple[Tensor, Tensor]:
    """Row and column indices of the lower triangle of an (n, m) array (static: computed while tracing)."""
    n = _count("tril_indices", "n", n)
    m = n if m is None else _count("tril_indices", "m", m)
    return _index_pairs("tril_indices", np.tri(n, m, static_int("tril_indices", "k", k), dtype=bool))


def triu_indices(n, k=0, m=None) -> tuple[Tensor, Tensor]:
    """Row and column indices of the upper triangle of an (n, m) array."""
    n = _count("triu_indices", "n", n)
    m = n if m is None else _count("triu_indices", "m", m)
    return _index_pairs("triu_indices", ~np.tri(n, m, static_int("triu_indices", "k", k) - 1, dtype=bool))


def diag_indices(n, ndim=2) -> tuple[Tensor, ...]:
    """The indices of the main diagonal of an n x ... x n array: ndim copies of arange(n)."""
    n = _count("diag_indices", "n", n)
    index = arange(n, dtype=dtypes.int32)
    return (index,) * static_int("diag_indices", "ndim", ndim)


def identity(n, dtype=dtypes.float32) -> Tensor:
    """The n x n identity matrix."""
    return eye(n, dtype=dtype)


def rot90(m, k=1, axes=(0, 1)) -> Tensor:
    """Rotate by 90 degrees k times in the plane of `axes`, from the first axis towards the second."""
    m = as_tensor(m, "rot90")
    k = static_int("rot90", "k", k) % 4
    if m.ndim < 2:
        fail(ShapeError, "rot90", f"needs an array of at least 2 dimensions, not {describe(m)}")
    a, b = (_core.normalize_axis("rot90", x, m.ndim) for x in axes)
    if a == b:
        fail(ShapeError, "rot90", f"axes {axes} name one axis twice")
    if k == 0:
        return m
    if k == 2:
        return flip(flip(m, a), b)
    if k == 1:
        return swapaxes(flip(m, b), a, b)
    return flip(swapaxes(m, a, b), b)


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0) -> Tensor:
    """base ** linspace(start, stop, num)."""
    exponents = linspace(start, stop, num, endpoint, dtype=dtype, axis=axis)
    return _core.convert(_core.as_tensor(base, "logspace") ** exponents, exponents.dtype)


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0) -> Tensor:
    """Numbers spaced evenly on a log scale from start to stop (nonzero, one sign), the ends exact as numpy's."""
    if not isinstance(start, numbers.Real) or not isinstance(stop, numbers.Real):
        fail(TypeError, "geomspace", "start and stop must be Python numbers (static)")
    if start == 0 or stop == 0 or (start < 0) != (stop < 0):
        fail(ValueError, "geomspace", f"start {start} and stop {stop} must be nonzero and of one sign")
    sign = -1.0 if start < 0 else 1.0
    logs = linspace(math.log10(abs(start)), math.log10(abs(stop)), num, endpoint, dtype=dtype, axis=axis)
    out = sign * (10.0 ** logs)
    axis = _core.normalize_axis("geomspace", axis, logs.ndim)
    count = logs.shape[axis]
    position = iota(dtypes.int32, logs.shape, axis)
    out = where(position == 0, float(start), out)
    if endpoint and count > 1:
        out = where(position == count - 1, float(stop), out)
    return out


def _flat_or_axis(op: str, x: Tensor, axis):
    if axis is None:
        return ravel(x), 0
    return x, _core.normalize_axis(op, axis, x.ndim)


def _static_positions(op: str, obj, length: int, allow_end: bool) -> list[int]:
    """Python ints, slices or static arrays of positions along an axis of `length` (numpy's meaning)."""
    if isinstance(obj, slice):
        return list(range(length))[obj]
    if isinstance(obj, Tensor):
        fail(TypeError, op, "positions must be static (Python ints, slices or numpy arrays), not a traced Tensor")
    values = np.asarray(obj)
    if values.size == 0:    # [] is float64 to numpy, and no positions (numpy's delete and insert take it)
        return []
    if values.dtype == bool:
        fail(TypeError, op, "boolean masks are not supported; use positions")
    if values.dtype.kind not in "iu":
        fail(TypeError, op, f"positions must be integers, not {values.dtype}")
    high = length if allow_end else length - 1   # insert may append: position == length
    out = []
    for p in values.ravel().tolist():
        if not -length <= p <= high:
            fail(ShapeError, op, f"position {p} is out of bounds for an axis of size {length}")
        out.append(p + length if p < 0 else p)
    return out


def append(arr, values, axis=None) -> Tensor:
    """values joined after arr (both flattened when axis is None)."""
    arr = as_tensor(arr, "append")
    values = as_tensor(values, "append")
    if axis is None:
        return concatenate([ravel(arr), ravel(values)])
    return concatenate([arr, values], axis=axis)


def delete(arr, obj, axis=None) -> Tensor:
    """arr without the positions `obj` along `axis` (flattened when None); positions are static."""
    x, axis = _flat_or_axis("delete", as_tensor(arr, "delete"), axis)
    drop = set(_static_positions("delete", obj, x.shape[axis], False))
    return _take(x, axis, [i for i in range(x.shape[axis]) if i not in drop])


def insert(arr, obj, values, axis=None) -> Tensor:
    """values inserted before the static positions `obj` along `axis` (flattened when None), as numpy does:
    at a scalar position `values` goes in as one block (its leading axis moved to `axis`), at a sequence of
    positions one slice each, in the order given, values broadcast to those slices."""
    x, axis = _flat_or_axis("insert", as_tensor(arr, "insert"), axis)
    values = _core.convert(as_tensor(values, "insert"), x.dtype, x.weak)
    n = x.shape[axis]
    slab = list(x.shape)
    if isinstance(obj, numbers.Integral):
        (position,) = _static_positions("insert", [obj], n, True)
        block = reshape(values, (1,) * (x.ndim - values.ndim) + values.shape) if values.ndim < x.ndim else values
        block = moveaxis(block, 0, axis)
        slab[axis] = block.shape[axis]
        positions, slices = [position], [broadcast_to(block, tuple(slab))]
    else:
        positions = _static_positions("insert", obj, n, True)
        slab[axis] = len(positions)
        block = broadcast_to(values, tuple(slab))
        slices = [slice_axis(block, axis, i, i + 1) for i in range(len(positions))]
    pieces, start = [], 0
    for i in sorted(range(len(positions)), key=lambda i: positions[i]):   # stable: numpy's order for ties
        pieces += [slice_axis(x, axis, start, positions[i]), slices[i]]
        start = positions[i]
    pieces.append(slice_axis(x, axis, start, n))
    return concatenate(pieces, axis=axis)


def resize(a, new_shape) -> Tensor:
    """numpy.resize: the flattened array repeated (or cut) to fill `new_shape`; an empty array gives zeros (numpy's,
    JAX's)."""
    x = ravel(as_tensor(a, "resize"))
    shape = _shape(new_shape)
    size = int(np.prod(shape))
    if x.shape[0] == 0:
        return _core.broadcast_to(_core.constant(0, x.dtype, x.weak), shape, "resize")
    return reshape(slice_axis(tile(x, -(-size // x.shape[0])), 0, 0, size), shape)
