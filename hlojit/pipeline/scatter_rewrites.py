"""Target rewrite of the scatters IREE 3.13 cannot lower: those with batching dimensions or with more than one
scatter (batch) dimension in their indices, unless they already scatter single elements with the index vector
last ("'iree_linalg_ext.scatter' op expected indices to be equal to batch rank or batch rank + 1"), and those
with a window shorter than its operand dimension (the gradient of x[i, 1:3]: "shape of update value dim#1 must
match original value at dim#1"). Each
becomes a scatter of single elements, the form IREE lowers for any operand: indices
[N, rank] holding every update element's full operand coordinate (start + batching index + window index, the
spec's `full_start_index + full_window_index`), updates [N], every operand dimension inserted.

The spec leaves an update that lands outside the operand implementation-defined; the reference backend skips it
(per element), and so does this: the operands get one more row at the end of dimension 0, the coordinates of an
element out of bounds point into it, and the result is the operand without that row.
"""
from __future__ import annotations

import numpy as np
from iree.compiler import ir

from ..dialects import stablehlo as hlo
from ..dialects.build import create, dims_attr
from ..dialects.types import dimension_numbers, dtype_of, shape_of
from .legalize import walk


def _partial_window(op, dn: dict) -> bool:
    """Whether an update window is shorter than its operand dimension (IREE: "shape of update value dim#1 must
    match original value at dim#1")."""
    n = (len(op.operands) - 1) // 2
    operand_shape, update_shape = shape_of(op.operands[0].type), shape_of(op.operands[n + 1].type)
    dropped = set(dn["inserted_window_dims"]) | set(dn["input_batching_dims"])
    window_axes = [d for d in range(len(operand_shape)) if d not in dropped]
    return any(update_shape[u] != operand_shape[d] for u, d in zip(dn["update_window_dims"], window_axes))


def _needs_points(op) -> bool:
    dn = dimension_numbers(str(op.attributes["scatter_dimension_numbers"]))
    indices_rank = len(shape_of(op.operands[(len(op.operands) - 1) // 2].type))
    scatter_dims = indices_rank - (dn["index_vector_dim"] < indices_rank)
    operand_rank = len(shape_of(op.operands[0].type))
    # IREE lowers scatters of single elements with the index vector last (hlojit's vmap of dynamic_update_slice)
    lowered = not dn["update_window_dims"] and dn["index_vector_dim"] == indices_rank - 1
    unlowered = bool(dn["input_batching_dims"]) or scatter_dims > 1 or _partial_window(op, dn)
    return operand_rank > 0 and unlowered and not lowered


def _splat(value, shape) -> ir.Value:
    return hlo.broadcast_in_dim(hlo.constant(np.int64(value)), shape, [])


def _index_vectors(indices: ir.Value, index_vector_dim: int) -> ir.Value:
    """The indices as i64 with the index vector last (a trailing 1 for the spec's implicit vector)."""
    indices = hlo.convert(indices, np.int64)
    shape = shape_of(indices.type)
    if index_vector_dim == len(shape):
        return hlo.reshape(indices, [*shape, 1])
    order = [d for d in range(len(shape)) if d != index_vector_dim] + [index_vector_dim]
    return hlo.transpose(indices, order)


def _coordinates(op, dn: dict) -> list[ir.Value]:
    """For each operand dimension, every update element's coordinate in it (i64, the updates' shape)."""
    n = (len(op.operands) - 1) // 2
    operand_shape, update_shape = shape_of(op.operands[0].type), shape_of(op.operands[n + 1].type)
    window_dims = dn["update_window_dims"]
    scatter_positions = [u for u in range(len(update_shape)) if u not in window_dims]
    dropped = set(dn["inserted_window_dims"]) | set(dn["input_batching_dims"])
    window_axes = [d for d in range(len(operand_shape)) if d not in dropped]
    vectors = _index_vectors(op.operands[n], dn["index_vector_dim"])
    batch_shape = shape_of(vectors.type)[:-1]
    coordinates = []
    for d in range(len(operand_shape)):
        full = _splat(0, update_shape)
        if d in dn["scatter_dims_to_operand_dims"]:
            k = dn["scatter_dims_to_operand_dims"].index(d)
            start = hlo.reshape(hlo.slice(vectors, [0] * len(batch_shape) + [k], [*batch_shape, k + 1]), batch_shape)
            full = hlo.binary("add", full, hlo.broadcast_in_dim(start, update_shape, scatter_positions))
        if d in dn["input_batching_dims"]:
            i = dn["input_batching_dims"].index(d)
            axis = dn["scatter_indices_batching_dims"][i]
            axis -= axis > dn["index_vector_dim"]
            full = hlo.binary("add", full, hlo.iota(update_shape, scatter_positions[axis], np.int64))
        if d in window_axes:
            full = hlo.binary("add", full, hlo.iota(update_shape, window_dims[window_axes.index(d)], np.int64))
        coordinates.append(full)
    return coordinates


def _point_indices(coordinates: list[ir.Value], operand_shape) -> ir.Value:
    """[N, rank] coordinates, those of elements out of bounds moved to the extra row (operand_shape[0], 0 ...)."""
    shape = shape_of(coordinates[0].type)
    inside = None
    for full, size in zip(coordinates, operand_shape):
        ok = hlo.binary("and", hlo.compare(full, _splat(0, shape), "GE"), hlo.compare(full, _splat(size, shape), "LT"))
        inside = ok if inside is None else hlo.binary("and", inside, ok)
    count = int(np.prod(shape))
    columns = [hlo.reshape(hlo.select(inside, full, _splat(operand_shape[0] if d == 0 else 0, shape)), [count, 1])
               for d, full in enumerate(coordinates)]
    return hlo.concatenate(columns, 1) if len(columns) > 1 else columns[0]


def _scatter_points(op) -> list[ir.Value]:
    n = (len(op.operands) - 1) // 2
    dn = dimension_numbers(str(op.attributes["scatter_dimension_numbers"]))
    operands, updates = list(op.operands[:n]), list(op.operands[n + 1:])
    operand_shape = shape_of(operands[0].type)
    rank = len(operand_shape)
    indices = _point_indices(_coordinates(op, dn), operand_shape)
    count = shape_of(indices.type)[0]
    padded = []
    for x in operands:
        zero = hlo.constant(0, dtype_of(x.type))
        padded.append(hlo.pad(x, zero, [0] * rank, [1] + [0] * (rank - 1)))
    flat = [hlo.reshape(u, [count]) for u in updates]
    attrs = {"scatter_dimension_numbers": dims_attr("scatter", [
        ("update_window_dims", []), ("inserted_window_dims", list(range(rank))), ("input_batching_dims", []),
        ("scatter_indices_batching_dims", []), ("scatter_dims_to_operand_dims", list(range(rank))),
        ("index_vector_dim", 1)])}
    for name in ("indices_are_sorted", "unique_indices"):
        if name in op.attributes:
            attrs[name] = op.attributes[name]
    new = create("stablehlo.scatter", [p.type for p in padded], [*padded, indices, *flat], attrs, regions=1)
    old_block = op.regions[0].blocks[0]
    block = new.regions[0].blocks.append(*[a.type for a in old_block.arguments])
    for old, arg in zip(old_block.arguments, block.arguments):
        old.replace_all_uses_with(arg)
    for inner in list(old_block.operations):
        block.append(inner.operation)
    return [hlo.slice(r, [0] * rank, operand_shape) for r in new.results]


def scatter_by_points(module: ir.Module) -> int:
    count = 0
    for op in list(walk(module.operation)):
        if op.name != "stablehlo.scatter" or not _needs_points(op):
            continue
        with ir.InsertionPoint(op), op.location:
            results = _scatter_points(op)
        for old, new in zip(op.results, results):
            old.replace_all_uses_with(new)
        op.erase()
        count += 1
    return count


ALL_TARGETS = [scatter_by_points]
