"""numpy's index arithmetic: unravel_index, ravel_multi_index, ix_ and the *_indices_from helpers.

Indices are int32, as JAX's are by default. Out-of-range flat indices cannot raise inside a compiled program,
so unravel_index does what jax.numpy does: a negative index counts from the end once, then every index is
clipped into the array. ravel_multi_index takes numpy's mode='wrap' or 'clip'; its default 'raise' checks the
indices where they are known (numpy or Python values) and asks for one of the others where they are traced.
"""
from __future__ import annotations

import numpy as np

from ...errors import ShapeError, TracingError
from .. import dtypes
from ..tensor import Tensor
from . import _core
from ._core import as_tensor, describe, fail
from .building import diag_indices, tril_indices, triu_indices
from .elementwise import binary, compare, where
from .shape import reshape


def _dims(op: str, shape) -> tuple[int, ...]:
    dims = (int(shape),) if np.ndim(shape) == 0 else tuple(int(d) for d in shape)
    if any(d < 0 for d in dims):
        fail(ValueError, op, f"dimensions must be non-negative, not {dims}")
    return dims


def _index(op: str, value) -> Tensor:
    t = as_tensor(value, op)
    if not dtypes.is_int(t.dtype):
        fail(TypeError, op, f"indices must be integers, not {describe(t)}")
    return _core.convert(t, dtypes.int32)


def unravel_index(indices, shape) -> tuple[Tensor, ...]:
    """The coordinates in an array of `shape` of each flat (C-order) index."""
    dims = _dims("unravel_index", shape)
    flat = _index("unravel_index", indices)
    size = int(np.prod(dims, dtype=np.int64))
    if size == 0:
        fail(ShapeError, "unravel_index", f"an array of shape {dims} has no elements to index")
    flat = where(compare("less", flat, 0), flat + size, flat)
    flat = binary("minimum", binary("maximum", flat, 0), size - 1)
    out = []
    for d in reversed(dims):
        out.append(binary("remainder", flat, d))
        flat = binary("floor_divide", flat, d)
    return tuple(reversed(out))


def ravel_multi_index(multi_index, dims, mode="raise", order="C") -> Tensor:
    """The flat index of each tuple of coordinates in an array of shape `dims` (C or Fortran order)."""
    op = "ravel_multi_index"
    dims = _dims(op, dims)
    if len(multi_index) != len(dims):
        fail(ShapeError, op, f"{len(multi_index)} coordinate arrays for {len(dims)} dimensions")
    if order not in ("C", "F"):
        fail(ValueError, op, f"order must be 'C' or 'F', not {order!r}")
    modes = _modes(mode, len(dims))
    _check_raise_modes(multi_index, dims, modes)
    coords = []
    for c, d, m in zip(multi_index, dims, modes):
        t = _index(op, c)
        if m == "wrap":
            t = binary("remainder", binary("remainder", t, d) + d, d)
        elif m == "clip":
            t = binary("minimum", binary("maximum", t, 0), d - 1)
        elif m != "raise":
            fail(ValueError, op, f"mode must be 'raise', 'wrap' or 'clip', not {m!r}")
        coords.append(t)
    (coords), _, _ = _core.promote(op, *coords)
    order_dims = list(range(len(dims))) if order == "C" else list(reversed(range(len(dims))))
    flat = _core.constant(0, dtypes.int32)
    for k in order_dims:
        flat = flat * dims[k] + coords[k]
    return flat


def _modes(mode, count: int) -> list:
    return [mode] * count if isinstance(mode, str) else list(mode)


def _check_raise_modes(multi_index, dims, modes):
    """mode='raise': the coordinates' values in range of their dimensions (values must be known: numpy,
    Python, an hj.Array; a traced coordinate cannot be checked)."""
    for k, (c, d, m) in enumerate(zip(multi_index, dims, modes)):
        if m != "raise":
            continue
        if isinstance(c, Tensor):
            fail(TracingError, "ravel_multi_index", "mode='raise' cannot check traced indices: pass mode='clip' "
                                                    "or 'wrap'")
        values = np.asarray(c)
        if values.size and (values.min() < 0 or values.max() >= d):
            fail(ValueError, "ravel_multi_index", f"coordinate {k} has an index out of range for dimension {d}")


def ix_(*args) -> tuple[Tensor, ...]:
    """An open mesh: the k-th 1-D sequence shaped to broadcast along axis k of len(args) axes. A boolean
    sequence stands for its nonzero positions (known only when it is not traced)."""
    out = []
    for k, a in enumerate(args):
        if not isinstance(a, Tensor):
            a = np.asarray(a)
            a = np.nonzero(a)[0].astype(np.int32) if a.dtype == bool else a
        t = as_tensor(a, "ix_")
        if t.ndim != 1:
            fail(ShapeError, "ix_", f"each sequence must be 1-D, not {describe(t)}")
        if t.dtype == dtypes.bool_:
            fail(TracingError, "ix_", "a traced boolean sequence has data-dependent positions")
        out.append(reshape(t, (1,) * k + t.shape + (1,) * (len(args) - k - 1)))
    return tuple(out)


def _square_dims(op: str, arr, ndim: int | None = 2) -> tuple[int, ...]:
    shape = np.shape(arr) if not isinstance(arr, Tensor) else arr.shape
    if ndim is not None and len(shape) != ndim:
        fail(ShapeError, op, f"needs a {ndim}-d array, not shape {tuple(shape)}")
    return tuple(shape)


def diag_indices_from(arr) -> tuple[Tensor, ...]:
    """diag_indices for arr (all of whose dimensions must be equal, at least 2 of them)."""
    shape = _square_dims("diag_indices_from", arr, None)
    if len(shape) < 2 or len(set(shape)) != 1:
        fail(ShapeError, "diag_indices_from", f"needs at least 2 equal dimensions, not shape {shape}")
    return diag_indices(shape[0], len(shape))


def tril_indices_from(arr, k: int = 0) -> tuple[Tensor, Tensor]:
    """tril_indices for a 2-d arr's shape."""
    n, m = _square_dims("tril_indices_from", arr)
    return tril_indices(n, k, m)


def triu_indices_from(arr, k: int = 0) -> tuple[Tensor, Tensor]:
    """triu_indices for a 2-d arr's shape."""
    n, m = _square_dims("triu_indices_from", arr)
    return triu_indices(n, k, m)


def _concrete_masks(args, kwargs):
    """ix_ outside a trace: boolean sequences (numpy, lists, hj.Arrays) become their nonzero positions first,
    as jax.numpy does with concrete masks."""
    return tuple(np.nonzero(np.asarray(a))[0].astype(np.int32) if not isinstance(a, Tensor)
                 and np.asarray(a).dtype == bool else a for a in args), kwargs


def _checked_raise(args, kwargs):
    """ravel_multi_index outside a trace: mode='raise' checks the concrete coordinates here, then the program
    clips (a no-op on indices in range)."""
    bound = dict(zip(("multi_index", "dims", "mode", "order"), args), **kwargs)
    modes = _modes(bound.get("mode", "raise"), len(bound["multi_index"]))
    if "raise" in modes:
        _check_raise_modes(bound["multi_index"], _dims("ravel_multi_index", bound["dims"]), modes)
        bound["mode"] = ["clip" if m == "raise" else m for m in modes]
    bound["multi_index"] = tuple(np.asarray(c) if not hasattr(c, "shape") else c for c in bound["multi_index"])
    return (), bound


ix_.prepare_eager = _concrete_masks
ravel_multi_index.prepare_eager = _checked_raise
