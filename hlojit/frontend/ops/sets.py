"""numpy's set routines on flattened arrays (intersect1d, union1d, setdiff1d, setxor1d) and the array API's
unique_values / unique_counts / unique_inverse / unique_all.

Each result's length depends on the data, so, as in jax.numpy, a traced call takes a static `size=`: the first
`size` sorted values, the slots past the real ones holding `fill_value` (by default the smallest value found,
0 where none is). One way for all four set routines: sort the candidates, mark each value's first copy, keep
those the routine wants (a membership test against the other array), and compact them into `size` slots.
NaN is a member of nothing (NaN != NaN), as in numpy's set routines, and NaNs count as one value (numpy's
unique): union1d keeps one, intersect1d none, setdiff1d ar1's, setxor1d one where either array has it.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .. import dtypes
from ..tensor import Tensor
from . import _core
from ._core import as_tensor
from .elementwise import binary, compare, unary, where
from .indexing import take
from .joining import concatenate
from .searching import _first_positions, _needs_size, isin, searchsorted, sized_eagerly, unique
from .shape import iota, ravel, slice_axis
from .statistics import argsort


def _sorted_firsts(values: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """(the stable sort order of 1-D values, the sorted values, True at each value's first copy: of the
    NaNs, the first)."""
    n = values.shape[0]
    order = argsort(values)
    ordered = take(values, order)
    if n == 0:
        return order, ordered, compare("equal", ordered, ordered)
    previous = concatenate([slice_axis(ordered, 0, 0, 1), slice_axis(ordered, 0, 0, n - 1)])
    first = compare("not_equal", ordered, previous)
    if dtypes.is_float(ordered.dtype):   # NaNs sort last and count as one value, as numpy's unique counts them
        first = binary("logical_and", first, unary("logical_not", binary(
            "logical_and", unary("isnan", ordered), unary("isnan", previous))))
    return order, ordered, binary("logical_or", first, compare("equal", iota(dtypes.int32, (n,), 0), 0))


def _compact(op: str, ordered: Tensor, keep: Tensor, size, fill_value):
    """(the kept values in `size` slots, the filled rest, their positions in `ordered`, which slots are real)."""
    size = _needs_size(op, size)
    positions, real = _first_positions(keep, size)
    safe = binary("minimum", positions, max(ordered.shape[0] - 1, 0))
    found = take(ordered, safe) if ordered.shape[0] else _core.broadcast_to(
        _core.constant(0, ordered.dtype), (size,), op)
    if fill_value is None:
        first = slice_axis(found, 0, 0, 1) if size else found
        fill = where(slice_axis(real, 0, 0, 1), first, _core.constant(0, ordered.dtype)) if size else first
    else:
        fill = _core.constant(fill_value, ordered.dtype)
    return where(real, found, fill), safe, real


def _flat_pair(op: str, ar1, ar2) -> tuple[Tensor, Tensor]:
    (a, b), _, _ = _core.promote(op, ravel(as_tensor(ar1, op)), ravel(as_tensor(ar2, op)))
    return a, b


def union1d(ar1, ar2, *, size=None, fill_value=None) -> Tensor:
    """The sorted values in either array."""
    a, b = _flat_pair("union1d", ar1, ar2)
    _, ordered, first = _sorted_firsts(concatenate([a, b]))
    return _compact("union1d", ordered, first, size, fill_value)[0]


def intersect1d(ar1, ar2, assume_unique: bool = False, return_indices: bool = False, *, size=None,
                fill_value=None):
    """The sorted values in both arrays; with return_indices, also the index of each one's first copy in the
    flattened ar1 and ar2 (0 in the filled slots). assume_unique is accepted and changes nothing."""
    a, b = _flat_pair("intersect1d", ar1, ar2)
    order, ordered, first = _sorted_firsts(a)
    keep = binary("logical_and", first, isin(ordered, b))
    values, safe, real = _compact("intersect1d", ordered, keep, size, fill_value)
    if not return_indices:
        return values
    zero = _core.constant(0, dtypes.int32)
    index1 = where(real, take(order, safe), zero)
    order2 = argsort(b)
    at = binary("minimum", searchsorted(take(b, order2), values), max(b.shape[0] - 1, 0))
    index2 = where(real, take(order2, at), zero)
    return values, index1, index2


def setdiff1d(ar1, ar2, assume_unique: bool = False, *, size=None, fill_value=None) -> Tensor:
    """The sorted values of ar1 that are not in ar2."""
    a, b = _flat_pair("setdiff1d", ar1, ar2)
    _, ordered, first = _sorted_firsts(a)
    keep = binary("logical_and", first, unary("logical_not", isin(ordered, b)))
    return _compact("setdiff1d", ordered, keep, size, fill_value)[0]


def setxor1d(ar1, ar2, assume_unique: bool = False, *, size=None, fill_value=None) -> Tensor:
    """The sorted values in exactly one of the arrays."""
    a, b = _flat_pair("setxor1d", ar1, ar2)
    _, ordered, first = _sorted_firsts(concatenate([a, b]))
    once = binary("logical_xor", isin(ordered, a), isin(ordered, b))
    nan = unary("isnan", ordered) if dtypes.is_float(ordered.dtype) else None
    if nan is not None:   # NaN is in neither by the membership test, but it is an element of one: numpy keeps it
        once = binary("logical_or", once, nan)
    return _compact("setxor1d", ordered, binary("logical_and", first, once), size, fill_value)[0]


class UniqueAllResult(NamedTuple):
    values: Tensor
    indices: Tensor
    inverse_indices: Tensor
    counts: Tensor


class UniqueCountsResult(NamedTuple):
    values: Tensor
    counts: Tensor


class UniqueInverseResult(NamedTuple):
    values: Tensor
    inverse_indices: Tensor


def unique_values(x, *, size=None, fill_value=None) -> Tensor:
    return unique(x, size=size, fill_value=fill_value)


def unique_counts(x, *, size=None, fill_value=None) -> UniqueCountsResult:
    return UniqueCountsResult(*unique(x, return_counts=True, size=size, fill_value=fill_value))


def unique_inverse(x, *, size=None, fill_value=None) -> UniqueInverseResult:
    return UniqueInverseResult(*unique(x, return_inverse=True, size=size, fill_value=fill_value))


def unique_all(x, *, size=None, fill_value=None) -> UniqueAllResult:
    return UniqueAllResult(*unique(x, return_index=True, return_inverse=True, return_counts=True, size=size,
                                   fill_value=fill_value))


sized_eagerly(union1d, lambda v: np.union1d(v["ar1"], v["ar2"]).shape[0])
sized_eagerly(intersect1d, lambda v: np.intersect1d(v["ar1"], v["ar2"]).shape[0])
sized_eagerly(setdiff1d, lambda v: np.setdiff1d(v["ar1"], v["ar2"]).shape[0])
sized_eagerly(setxor1d, lambda v: np.setxor1d(v["ar1"], v["ar2"]).shape[0])
for _fn in (unique_values, unique_counts, unique_inverse, unique_all):
    sized_eagerly(_fn, lambda v: np.unique(np.ravel(v["x"])).shape[0])
