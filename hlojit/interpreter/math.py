"""Bit casts and sorting (the math family's StableHLO ops), in numpy.

`stablehlo.sort` takes an arbitrary comparator region, so it is run as a bottom-up merge sort whose
merges are vectorised: every element of every run finds its place in the neighbouring run by a binary
search that evaluates the compiled comparator on whole arrays at once. That is O(log^2 n) numpy passes,
stable, and needs nothing of the comparator but a strict weak order (what StableHLO asks of it).
"""
from __future__ import annotations

import numpy as np
from iree.compiler import ir

from ..dialects.types import dtype_of, shape_of
from .interpreter import OPS, compile_block


def _bitcast_convert(op):
    target, shape = dtype_of(op.result.type), shape_of(op.result.type)
    source = dtype_of(op.operands[0].type)

    def run(x):
        x = np.ascontiguousarray(x, dtype=source)
        if target.itemsize < source.itemsize:  # one element becomes a trailing row of narrower ones
            x = x.reshape(x.shape + (1,))
        return x.view(target).reshape(shape)
    return run


def _merge_positions(keys, width, before):
    """Where each element of the sorted runs [k*2w, k*2w+w) and [k*2w+w, k*2w+2w) lands in their merge.

    `before(a_idx, b_idx)` evaluates the comparator on the elements at positions a_idx and b_idx of each
    batch row (arrays of the same shape) and says whether a goes strictly before b."""
    batch, n = keys
    pos = np.broadcast_to(np.arange(n), (batch, n))
    start = (pos // (2 * width)) * (2 * width)
    in_left = pos - start < width
    other_start = np.where(in_left, start + width, start)
    other_end = np.minimum(np.where(in_left, start + 2 * width, start + width), n)
    lo = np.zeros((batch, n), np.int64)
    hi = np.maximum(other_end - other_start, 0)
    while np.any(lo < hi):
        active = lo < hi
        mid = (lo + hi) // 2
        probe = np.minimum(other_start + mid, n - 1)
        # left elements count the right ones strictly before them; right ones count the left ones not
        # after them: equal elements keep their order (stable)
        goes_first = np.where(in_left, before(probe, pos), ~before(pos, probe))
        lo = np.where(active & goes_first, mid + 1, lo)
        hi = np.where(active & ~goes_first, mid, hi)
    own_start = np.where(in_left, start, start + width)
    return start + (pos - own_start) + lo


def _sort(op):
    dimension = int(ir.IntegerAttr(op.attributes["dimension"]).value)
    comparator = compile_block(op.regions[0].blocks[0], "sort_comparator")
    dtypes = [dtype_of(r.type) for r in op.results]

    def run(*inputs):
        out = _run(*inputs)
        return out if len(out) > 1 else out[0]   # one result: the value itself, as the interpreter expects

    def _run(*inputs):
        shape = inputs[0].shape
        if not shape or shape[dimension] < 2:
            return tuple(np.asarray(x, dtype=d) for x, d in zip(inputs, dtypes))
        n = shape[dimension]
        rows = [np.moveaxis(np.asarray(x), dimension, -1) for x in inputs]
        moved_shape = rows[0].shape
        rows = [r.reshape(-1, n) for r in rows]
        batch = rows[0].shape[0]

        def before(a, b):
            args = []
            for r in rows:
                args += [np.take_along_axis(r, a, 1), np.take_along_axis(r, b, 1)]
            return np.asarray(comparator(*args)[0], dtype=bool)

        width = 1
        while width < n:
            # the element going to position j: an inverse permutation, and still a permutation (ties
            # by old position) should a comparator that is not a strict weak order make targets collide
            order = np.argsort(_merge_positions((batch, n), width, before), axis=1, kind="stable")
            rows = [np.take_along_axis(r, order, 1) for r in rows]
            width *= 2
        return tuple(np.ascontiguousarray(np.moveaxis(r.reshape(moved_shape), -1, dimension)).astype(d)
                     for r, d in zip(rows, dtypes))
    return run


OPS.update({
    "stablehlo.bitcast_convert": _bitcast_convert,
    "stablehlo.sort": _sort,
})
