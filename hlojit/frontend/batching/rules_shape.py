"""Batching rules of the ops that move elements: reshape, transpose, broadcast_in_dim, slice, pad,
concatenate, reverse, dynamic_slice, dynamic_update_slice. Most keep the batch where it is and shift
their dimension numbers past it; reshape and transpose put it first. A dynamic slice whose starts differ
between examples becomes a gather with the batch as a batching dimension, a dynamic update a scatter of
each element of the update to its own clamped position."""
from __future__ import annotations

import numpy as np
from iree.compiler import ir

from ...dialects import stablehlo as hlo
from .. import dtypes, ops
from ..ops._core import constant, convert, emit, wrap
from .core import Batched, at, i64_array, per_example_shape, recreate, register, shift, tensor, with_batch

NEVER_BATCHED = {
    "stablehlo.constant": "it has no operands, so it is the same in every example: copied as it is",
    "stablehlo.iota": "it has no operands, so it is the same in every example: copied as it is",
}


def _first_batched(p) -> int:
    return next(b.dim for b in p.args if b.dim is not None)


@register("reshape")
def _reshape(p):
    x = at(p.args[0], 0, p.size)
    (result,) = recreate(p, [x], [with_batch(p.result_shapes()[0], p.size, 0)])
    return [Batched(result, 0)]


@register("transpose")
def _transpose(p):
    (b,) = p.args
    perm = [b.dim] + shift(p.ints("permutation"), b.dim)
    (result,) = recreate(p, [b.t], [with_batch(p.result_shapes()[0], p.size, 0)], {"permutation": i64_array(perm)})
    return [Batched(result, 0)]


@register("broadcast_in_dim")
def _broadcast_in_dim(p):
    """The operand's batch becomes the result's first dimension; its other dimensions go where they went."""
    (b,) = p.args
    dims = [d + 1 for d in p.ints("broadcast_dimensions")]
    dims.insert(b.dim, 0)
    (result,) = recreate(p, [b.t], [with_batch(p.result_shapes()[0], p.size, 0)],
                         {"broadcast_dimensions": i64_array(dims)})
    return [Batched(result, 0)]


def _inserted(values, dim: int, value) -> list:
    values = list(values)
    values.insert(dim, value)
    return values


@register("slice")
def _slice(p):
    (b,) = p.args
    attrs = {"start_indices": i64_array(_inserted(p.ints("start_indices"), b.dim, 0)),
             "limit_indices": i64_array(_inserted(p.ints("limit_indices"), b.dim, p.size)),
             "strides": i64_array(_inserted(p.ints("strides"), b.dim, 1))}
    (result,) = recreate(p, [b.t], [with_batch(p.result_shapes()[0], p.size, b.dim)], attrs)
    return [Batched(result, b.dim)]


@register("pad")
def _pad(p):
    """The batch is padded by nothing; a padding value that differs between examples is put in by a
    select on where the operand's elements landed."""
    x, value = p.args
    dim = x.dim if x.dim is not None else 0
    attrs = {name: i64_array(_inserted(p.ints(name), dim, 0))
             for name in ("edge_padding_low", "edge_padding_high", "interior_padding")}
    shape = with_batch(p.result_shapes()[0], p.size, dim)
    operand = at(x, dim, p.size)
    if value.dim is None:
        (result,) = recreate(p, [operand, value.t], [shape], attrs)
        return [Batched(result, dim)]
    (padded,) = recreate(p, [operand, constant(0, operand.dtype)], [shape], attrs)
    low, high, interior = (_inserted(p.ints(name), dim, 0)
                           for name in ("edge_padding_low", "edge_padding_high", "interior_padding"))
    inside = ops.ones(operand.shape, dtypes.bool_)
    mask = wrap(emit(hlo.pad, inside.value, constant(False, dtypes.bool_).value, low, high, interior), shape,
                dtypes.bool_)
    fill = wrap(emit(hlo.broadcast_in_dim, value.t.value, shape, [dim]), shape, operand.dtype)
    return [Batched(ops.where(mask, padded, fill), dim)]


@register("concatenate")
def _concatenate(p):
    dim = _first_batched(p)
    axis = p.int("dimension")
    axis += axis >= dim
    shape = with_batch(p.result_shapes()[0], p.size, dim)
    attrs = {"dimension": ir.IntegerAttr.get(ir.IntegerType.get_signless(64), axis)}
    (result,) = recreate(p, [at(b, dim, p.size) for b in p.args], [shape], attrs)
    return [Batched(result, dim)]


@register("reverse")
def _reverse(p):
    (b,) = p.args
    attrs = {"dimensions": i64_array(shift(p.ints("dimensions"), b.dim))}
    (result,) = recreate(p, [b.t], [with_batch(p.result_shapes()[0], p.size, b.dim)], attrs)
    return [Batched(result, b.dim)]


# --- dynamic slices --------------------------------------------------------------------------------

def _starts(size: int, starts):
    """(size, len(starts)) int32: each example's starts."""
    columns = []
    for b in starts:
        s = convert(b.t, dtypes.int32)
        columns.append(s if b.dim is not None else ops.broadcast_to(s, (size,)))
    return ops.stack(columns, axis=1)


def _zero_index(starts):
    """The start of the batch dimension: 0, of the other starts' dtype."""
    return constant(0, starts[0].t.dtype if starts else dtypes.int32)


@register("dynamic_slice")
def _dynamic_slice(p):
    x, starts = p.args[0], p.args[1:]
    sizes = p.ints("slice_sizes")
    if all(b.dim is None for b in starts):
        values = [b.t.value for b in starts]
        values.insert(x.dim, _zero_index(starts).value)
        value = emit(hlo.dynamic_slice, x.t.value, values, _inserted(sizes, x.dim, p.size))
        return [Batched(tensor(value), x.dim)]
    operand = at(x, 0, p.size)
    rank = len(sizes)
    value = emit(hlo.gather, operand.value, _starts(p.size, starts).value, offset_dims=list(range(1, rank + 1)),
                 collapsed_slice_dims=[], start_index_map=list(range(1, rank + 1)), index_vector_dim=1,
                 slice_sizes=[1, *sizes], operand_batching_dims=[0], start_indices_batching_dims=[0])
    return [Batched(tensor(value), 0)]


@register("dynamic_update_slice")
def _dynamic_update_slice(p):
    x, update, starts = p.args[0], p.args[1], p.args[2:]
    if all(b.dim is None for b in starts):
        dim = x.dim if x.dim is not None else update.dim
        values = [b.t.value for b in starts]
        values.insert(dim, _zero_index(starts).value)
        value = emit(hlo.dynamic_update_slice, at(x, dim, p.size).value, at(update, dim, p.size).value, values)
        return [Batched(tensor(value), dim)]
    operand, rows = at(x, 0, p.size), at(update, 0, p.size)
    shape, sizes = per_example_shape(x), per_example_shape(update)
    # dynamic_update_slice clamps its starts so the update fits; scatter would write out of bounds
    highest = np.array([n - k for n, k in zip(shape, sizes)], np.int32)
    indices = ops.minimum(ops.maximum(_starts(p.size, starts), 0), constant(highest, dtypes.int32))
    rank = len(shape)
    # one index vector per element of the update (IREE lowers windows only along dimensions not indexed)
    grid = ops.stack([ops.iota(dtypes.int32, tuple(sizes), d) for d in range(rank)], axis=-1)
    spread = ops.reshape(indices, (p.size,) + (1,) * rank + (rank,)) + grid
    value = emit(hlo.scatter, operand.value, spread.value, rows.value, lambda current, new: [new],
                 update_window_dims=[], inserted_window_dims=list(range(1, rank + 1)),
                 scatter_dims_to_operand_dims=list(range(1, rank + 1)), index_vector_dim=rank + 1,
                 input_batching_dims=[0], scatter_indices_batching_dims=[0])
    return [Batched(tensor(value), 0)]
