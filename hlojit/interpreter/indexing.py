"""Gather and scatter, by the general semantics of the StableHLO spec, vectorised with numpy fancy indexing.

Both work on index arrays over the result (gather) or the updates (scatter): for every operand dimension,
the operand index of each element is start + batching index + window (offset) index, built by broadcasting.
Gather clamps each start so its block fits inside the operand, as the spec says. Scatter leaves indices out
of bounds implementation-defined; here an update element that would land outside the operand is skipped
(per element, as the spec's `index_in_bounds` reads).
"""
from __future__ import annotations


import numpy as np

from ..dialects.types import attr_ints, dimension_numbers, dtype_of, shape_of
from .interpreter import OPS, compile_block, free_values

_UFUNCS = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply, "maximum": np.maximum,
           "minimum": np.minimum, "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}


def _dimension_numbers(op, attr: str) -> dict:
    return dimension_numbers(str(op.attributes[attr]))


def _index_vectors(indices: np.ndarray, index_vector_dim: int) -> np.ndarray:
    """The index array with its index vectors along the last axis (a trailing axis of 1 when
    index_vector_dim is the rank, the spec's implicit vector), as int64 without wrapping."""
    if indices.dtype == np.uint64:   # clamped below 2**63 (past any axis); narrower unsigned ints fit in int64
        indices = np.minimum(indices, np.uint64(np.iinfo(np.int64).max))
    indices = indices.astype(np.int64)
    if index_vector_dim == indices.ndim:
        return indices[..., None]
    return np.moveaxis(indices, index_vector_dim, -1)


def _batch_axis(indices_dim: int, index_vector_dim: int) -> int:
    """The position among the batch dimensions (the index array's dimensions but index_vector_dim)."""
    return indices_dim - (indices_dim > index_vector_dim)


def _placed(values: np.ndarray, positions, rank: int) -> np.ndarray:
    """`values` (one axis per entry of `positions`) as a rank-`rank` array whose other axes have size 1."""
    shape = [1] * rank
    for axis, position in enumerate(positions):
        shape[position] = values.shape[axis]
    order = sorted(range(len(positions)), key=lambda a: positions[a])
    return np.transpose(values, order).reshape(shape)


def _axis_iota(size: int, position: int, rank: int) -> np.ndarray:
    shape = [1] * rank
    shape[position] = size
    return np.arange(size, dtype=np.int64).reshape(shape)


def _gather(op):
    return gather_with(op, attr_ints(op, "slice_sizes"))


def static_slice_sizes(op) -> list[int]:
    """A (dynamic_)gather's slice sizes as its static result type fixes them: 1 for collapsed and batching
    dimensions, the offset dimensions' sizes for the others."""
    dn = _dimension_numbers(op, "dimension_numbers")
    dropped = set(dn["collapsed_slice_dims"]) | set(dn["operand_batching_dims"])
    result_shape = shape_of(op.result.type)
    offsets = iter(dn["offset_dims"])
    return [1 if d in dropped else result_shape[next(offsets)] for d in range(len(shape_of(op.operands[0].type)))]


def gather_with(op, slice_sizes):
    dn = _dimension_numbers(op, "dimension_numbers")
    operand_shape, result_shape = shape_of(op.operands[0].type), shape_of(op.result.type)
    rank, ivd = len(result_shape), dn["index_vector_dim"]
    offset_dims = dn["offset_dims"]
    batch_positions = [r for r in range(rank) if r not in offset_dims]
    dropped = set(dn["collapsed_slice_dims"]) | set(dn["operand_batching_dims"])
    window_axes = [d for d in range(len(operand_shape)) if d not in dropped]   # one per offset dim

    def run(operand, indices):
        vectors = _index_vectors(indices, ivd)          # batch shape + (len(start_index_map),)
        index = [np.broadcast_to(_coordinates(
            d, vectors, ivd, result_shape, batch_positions, (dn["start_index_map"], dn["operand_batching_dims"],
                                                             dn["start_indices_batching_dims"]),
            window_axes, offset_dims, highest=size - slice_sizes[d]), result_shape)
            for d, size in enumerate(operand_shape)]
        return operand[tuple(index)] if operand.ndim else np.broadcast_to(operand, result_shape).copy()
    return run


def _coordinates(d: int, vectors, ivd: int, shape, index_positions, maps, window_axes, window_dims,
                 highest=None):
    """Operand dimension d's coordinate at every element of a gather's result / a scatter's updates (`shape`):
    the start from the index vectors (clipped into [0, highest] for a gather), plus the batch position along
    a batching dimension, plus the position in the window along a window dimension. `maps`: (index vector
    component -> operand dimension, operand batching dimensions, index batching dimensions)."""
    to_operand, batching, index_batching = maps
    rank = len(shape)
    full = np.zeros([1] * rank, np.int64)
    if d in to_operand:
        start = vectors[..., to_operand.index(d)]
        if highest is not None:
            start = np.clip(start, 0, highest)
        full = full + _placed(start, index_positions, rank)
    if d in batching:
        axis = _batch_axis(index_batching[batching.index(d)], ivd)
        full = full + _axis_iota(shape[index_positions[axis]], index_positions[axis], rank)
    if d in window_axes:
        position = window_dims[window_axes.index(d)]
        full = full + _axis_iota(shape[position], position, rank)
    return full


def _scatter_combiner(op, n: int):
    """How the update computation combines: ("set", None), ("ufunc", np.add ...) or ("general", None)."""
    block = op.regions[0].blocks[0]
    ops, args = list(block.operations), list(block.arguments)
    if len(ops) == 1 and list(ops[0].operands) == args[n:]:
        return "set", None
    if n == 1 and len(ops) == 2 and list(ops[1].operands) == [ops[0].results[0]]:
        name = ops[0].operation.name.removeprefix("stablehlo.")
        if name in _UFUNCS and list(ops[0].operands) == args:
            return "ufunc", _UFUNCS[name]
    return "general", None


def _scatter(op, functions):
    n = (len(op.operands) - 1) // 2
    dn = _dimension_numbers(op, "scatter_dimension_numbers")
    operand_shape, update_shape = shape_of(op.operands[0].type), shape_of(op.operands[n + 1].type)
    rank, ivd = len(update_shape), dn["index_vector_dim"]
    window_dims = dn["update_window_dims"]
    scatter_positions = [u for u in range(rank) if u not in window_dims]
    dropped = set(dn["inserted_window_dims"]) | set(dn["input_batching_dims"])
    window_axes = [d for d in range(len(operand_shape)) if d not in dropped]   # one per update window dim
    kind, ufunc = _scatter_combiner(op, n)
    captures = free_values(op.regions)
    combine = compile_block(op.regions[0].blocks[0], "scatter_body", functions, captures) \
        if kind == "general" else None
    dtypes = [dtype_of(r.type) for r in op.results]

    def run(*args):
        operands, indices, updates = args[:n], args[n], args[n + 1:2 * n + 1]
        captured = args[2 * n + 1:]
        vectors = _index_vectors(indices, ivd)
        index, inside = [], np.ones(update_shape, bool)
        for d, size in enumerate(operand_shape):
            full = np.broadcast_to(_coordinates(
                d, vectors, ivd, update_shape, scatter_positions, (dn["scatter_dims_to_operand_dims"],
                                                                   dn["input_batching_dims"],
                                                                   dn["scatter_indices_batching_dims"]),
                window_axes, window_dims), update_shape)
            inside &= (full >= 0) & (full < size)
            index.append(full)
        where = tuple(i[inside] for i in index)
        values = [np.asarray(u)[inside] for u in updates]
        results = [np.array(x, dtype=dt, copy=True) for x, dt in zip(operands, dtypes)]
        if kind == "set":
            for out, v in zip(results, values):
                out[where] = v
        elif kind == "ufunc":
            ufunc.at(results[0], where, values[0])
        else:  # any other update computation: element by element, in the order of the updates
            for k in range(values[0].size if values else 0):
                at = tuple(i[k] for i in where)
                new = combine(*(np.asarray(out[at]) for out in results), *(np.asarray(v[k]) for v in values),
                              *captured)
                for out, value in zip(results, new):
                    out[at] = value
        return results[0] if n == 1 else tuple(results)
    run.captures = captures
    return run


_scatter.takes_functions = True

OPS.update({
    "stablehlo.gather": _gather,
    "stablehlo.scatter": _scatter,
})
