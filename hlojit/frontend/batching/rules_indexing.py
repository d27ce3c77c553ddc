"""Batching rules of gather and scatter. The batch goes first in every operand. A batched operand with
shared indices reads (writes) one more window dimension, the whole batch; batched indices with a shared
operand are more index vectors; when both differ between examples the batch becomes a batching
dimension of the op (StableHLO's operand_batching_dims / input_batching_dims). A scatter's operand and
updates are always batched (each example writes into its own copy)."""
from __future__ import annotations

from ...dialects import stablehlo as hlo
from ..autodiff.core import clone_into
from ..autodiff.rules_indexing import dimension_numbers
from ..ops._core import emit
from .core import Batched, at, register, tensor
from .rules_control import lane_by_lane


def _plus_one(dims) -> list[int]:
    return [d + 1 for d in dims]


def _flag(p, name: str) -> bool:
    return name in p.op.attributes and str(p.op.attributes[name]) == "true"


@register("gather")
def _gather(p):
    x, indices = p.args
    dn = dimension_numbers(p, "dimension_numbers")
    sizes = p.ints("slice_sizes")
    offset, ivd = dn["offset_dims"], dn["index_vector_dim"]
    collapsed, index_map = _plus_one(dn["collapsed_slice_dims"]), _plus_one(dn["start_index_map"])
    x_batching, i_batching = _plus_one(dn["operand_batching_dims"]), dn["start_indices_batching_dims"]
    if indices.dim is None:     # the batch is one more dimension of every window
        operand, idx = at(x, 0, p.size), indices.t
        offset, sizes = [0] + _plus_one(offset), [p.size] + sizes
    elif x.dim is None:         # the examples' index vectors are more index vectors
        operand, idx = x.t, at(indices, 0, p.size)
        offset, ivd, i_batching = _plus_one(offset), ivd + 1, _plus_one(i_batching)
        collapsed, index_map, x_batching = dn["collapsed_slice_dims"], dn["start_index_map"], \
            dn["operand_batching_dims"]
    else:                       # example i's indices read example i's operand
        operand, idx = at(x, 0, p.size), at(indices, 0, p.size)
        offset, ivd, sizes = _plus_one(offset), ivd + 1, [1] + sizes
        x_batching, i_batching = [0] + x_batching, [0] + _plus_one(i_batching)
    value = emit(hlo.gather, operand.value, idx.value, offset_dims=offset, collapsed_slice_dims=collapsed,
                 start_index_map=index_map, index_vector_dim=ivd, slice_sizes=sizes,
                 operand_batching_dims=x_batching, start_indices_batching_dims=i_batching,
                 indices_are_sorted=_flag(p, "indices_are_sorted") and indices.dim is None)
    return [Batched(tensor(value), 0)]


def _body(p):
    """The scatter's combiner, copied into the new scatter's block."""
    block = p.op.regions[0].blocks[0]
    inner = [o.operation for o in block.operations]

    def body(current, update):
        mapping = dict(zip(block.arguments, [current, update]))
        clone_into(inner[:-1], mapping)
        return [mapping.get(v, v) for v in inner[-1].operands]
    return body


@register("scatter")
def _scatter(p):
    """Variadic scatters (several operands at once) and combiners that use batched values go lane by lane."""
    if p.captures_batched or len(p.args) != 3:
        return lane_by_lane(p)
    x, indices, updates = p.args
    dn = dimension_numbers(p, "scatter_dimension_numbers")
    window, ivd = dn["update_window_dims"], dn["index_vector_dim"]
    x_batching, i_batching = _plus_one(dn["input_batching_dims"]), dn["scatter_indices_batching_dims"]
    if indices.dim is None:     # every example's updates land in its own operand: one more window dim
        idx, window = indices.t, [0] + _plus_one(window)
    else:
        idx, window, ivd = at(indices, 0, p.size), _plus_one(window), ivd + 1
        x_batching, i_batching = [0] + x_batching, [0] + _plus_one(i_batching)
    value = emit(hlo.scatter, at(x, 0, p.size).value, idx.value, at(updates, 0, p.size).value, _body(p),
                 update_window_dims=window, inserted_window_dims=_plus_one(dn["inserted_window_dims"]),
                 scatter_dims_to_operand_dims=_plus_one(dn["scatter_dims_to_operand_dims"]), index_vector_dim=ivd,
                 input_batching_dims=x_batching, scatter_indices_batching_dims=i_batching,
                 indices_are_sorted=_flag(p, "indices_are_sorted") and indices.dim is None,
                 unique_indices=_flag(p, "unique_indices"))
    return [Batched(tensor(value), 0)]
