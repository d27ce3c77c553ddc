"""VJP rules of gather, scatter and sort. gather and scatter-add transpose into each other (JAX's
rules); a replacing scatter finds which update won each element by scattering ids the same way; a
multiplying one takes the product of the other factors, a maximum/minimum one splits the cotangent among
the values equal to the result; sort sorts an iota along to learn the permutation, and sorts the
cotangent back by it."""
from __future__ import annotations

from typing import Callable, NamedTuple

import numpy as np
from iree.compiler import ir

from ...dialects import stablehlo as hlo
from ...dialects.types import dimension_numbers as parse_dimension_numbers
from .. import dtypes, ops
from ..ops._core import constant, emit
from ..tensor import Tensor
from .core import clone_into, register, tensor
from .rules_reduce import _nonzero, _unsupported, body_op, product_of_the_others
from .rules_shape import op_result


def dimension_numbers(p, attr: str) -> dict:
    return parse_dimension_numbers(p.text(attr))


def _gather(x, indices, *, offset_dims, collapsed, start_index_map, index_vector_dim, slice_sizes,
            operand_batching=(), indices_batching=()):
    value = emit(hlo.gather, x.value, indices.value, offset_dims=offset_dims, collapsed_slice_dims=collapsed,
                 start_index_map=start_index_map, index_vector_dim=index_vector_dim, slice_sizes=slice_sizes,
                 operand_batching_dims=operand_batching, start_indices_batching_dims=indices_batching)
    return op_result(value, x.dtype)


def _scatter(x, indices, updates, body, *, window_dims, inserted, to_operand, index_vector_dim,
             operand_batching=(), indices_batching=()):
    value = emit(hlo.scatter, x.value, indices.value, updates.value, body, update_window_dims=window_dims,
                 inserted_window_dims=inserted, scatter_dims_to_operand_dims=to_operand,
                 index_vector_dim=index_vector_dim, input_batching_dims=operand_batching,
                 scatter_indices_batching_dims=indices_batching)
    return op_result(value, x.dtype)


def _clamped(indices, operand_shape, sizes, start_index_map, index_vector_dim):
    """Starts clamped as gather clamps them: scatter leaves out-of-bounds indices to the target."""
    highest = np.array([operand_shape[d] - sizes[d] for d in start_index_map], dtype=indices.dtype)
    shape = [1] * indices.ndim
    if index_vector_dim < indices.ndim:
        shape[index_vector_dim] = len(start_index_map)
    bound = constant(highest.reshape(shape), indices.dtype)
    return ops.minimum(ops.maximum(indices, 0), bound)


@register("gather")
def _gather_rule(p, cts, active):
    x, indices = p.inputs
    g = cts[0]
    dn = dimension_numbers(p, "dimension_numbers")
    sizes = p.ints("slice_sizes")
    ivd = dn["index_vector_dim"]
    safe = _clamped(indices, x.shape, sizes, dn["start_index_map"], ivd)
    gx = _scatter(ops.zeros(x.shape, x.dtype), safe, g, "add", window_dims=dn["offset_dims"],
                  inserted=dn["collapsed_slice_dims"], to_operand=dn["start_index_map"], index_vector_dim=ivd,
                  operand_batching=dn["operand_batching_dims"], indices_batching=dn["start_indices_batching_dims"])
    return [gx, None]


def _replaces(op) -> bool:
    block = op.regions[0].blocks[0]
    inner = list(block.operations)
    return len(inner) == 1 and list(inner[0].operands) == [block.arguments[1]]


class _Scattered(NamedTuple):
    """What a scatter rule works with: the forward's operand, updates and result, the cotangent, which
    cotangents are needed, and the forward's index geometry as `scatter(target, values, body)` (values
    combined into target where the forward put its updates) and `gather(t)` (t's elements where they went,
    shaped as the updates)."""
    x: Tensor
    updates: Tensor
    result: Tensor
    g: Tensor
    needs_x: bool
    needs_updates: bool
    scatter: Callable
    gather: Callable


def _scatter_add(s: _Scattered):
    return s.g, (s.gather(s.g) if s.needs_updates else None)


def _scatter_set(s: _Scattered):
    """Every element of the result came from the operand or from the one update that won it: found by
    scattering ids the same way."""
    ids = ops.reshape(ops.arange(1, s.updates.size + 1, dtype=dtypes.int32), s.updates.shape)
    winners = s.scatter(ops.zeros(s.x.shape, dtypes.int32), ids, lambda current, update: [update])
    gx = ops.where(winners == 0, s.g, 0.0).astype(s.g.dtype) if s.needs_x else None
    gu = ops.where(s.gather(winners) == ids, s.gather(s.g), 0.0).astype(s.g.dtype) if s.needs_updates else None
    return gx, gu


def _scatter_multiply(s: _Scattered):
    """result = x * the updates that land on it: the operand's slope is their product, an update's the
    product of x and the others (rules_reduce.product_of_the_others: exact with zero updates, repeats too)."""
    gx = gu = None
    if s.needs_x:
        gx = s.g * s.scatter(ops.ones_like(s.x), s.updates, "multiply")
    if s.needs_updates:
        u = s.updates
        zeros = s.scatter(ops.zeros_like(s.x), (u == 0).astype(u.dtype), "add")
        rest = s.scatter(s.x, _nonzero(u), "multiply")
        gu = s.gather(s.g) * product_of_the_others(u, s.gather(zeros), s.gather(rest))
    return gx, gu


def _scatter_extremum(s: _Scattered):
    """maximum/minimum: the cotangent goes to whichever of the operand and the updates equal the result,
    split evenly on a tie (JAX's rule, and reduce max's here)."""
    picked_x = s.x == s.result
    picked_u = s.updates == s.gather(s.result)
    count = picked_x.astype(s.g.dtype) + s.scatter(ops.zeros_like(s.x), picked_u.astype(s.g.dtype), "add")
    share = s.g / ops.maximum(count, 1.0)     # count is 0 only where the result is nan
    gx = ops.where(picked_x, share, 0.0).astype(s.g.dtype) if s.needs_x else None
    gu = ops.where(picked_u, s.gather(share), 0.0).astype(s.g.dtype) if s.needs_updates else None
    return gx, gu


_SCATTER_RULES = {"add": _scatter_add, "set": _scatter_set, "multiply": _scatter_multiply,
                  "maximum": _scatter_extremum, "minimum": _scatter_extremum}


@register("scatter")
def _scatter_rule(p, cts, active):
    if len(p.inputs) != 3:
        _unsupported(p, "several operands")
    x, indices, updates = p.inputs
    kind = "set" if _replaces(p.op) else body_op(p.op)
    if kind not in _SCATTER_RULES:
        _unsupported(p, f"a {kind or 'general'} update (add, set, multiply, maximum and minimum have rules)")
    dn = dimension_numbers(p, "scatter_dimension_numbers")
    window_dims, inserted = dn["update_window_dims"], dn["inserted_window_dims"]
    batching = dn["input_batching_dims"]
    sizes, position = [], 0
    for d in range(x.ndim):
        if d in inserted or d in batching:
            sizes.append(1)
        else:
            sizes.append(updates.shape[window_dims[position]])
            position += 1
    gather_args = dict(offset_dims=window_dims, collapsed=inserted, start_index_map=dn["scatter_dims_to_operand_dims"],
                       index_vector_dim=dn["index_vector_dim"], slice_sizes=sizes, operand_batching=batching,
                       indices_batching=dn["scatter_indices_batching_dims"])
    scatter_args = dict(window_dims=window_dims, inserted=inserted, to_operand=dn["scatter_dims_to_operand_dims"],
                        index_vector_dim=dn["index_vector_dim"], operand_batching=batching,
                        indices_batching=dn["scatter_indices_batching_dims"])
    scattered = _Scattered(x, updates, p.outputs[0], cts[0], active[0], active[2],
                           lambda target, values, body: _scatter(target, indices, values, body, **scatter_args),
                           lambda t: _gather(t, indices, **gather_args))
    gx, gu = _SCATTER_RULES[kind](scattered)
    return [gx, None, gu]


@register("sort")
def _sort(p, cts, active):
    """Sort again with an iota alongside (the same comparator on the same keys gives the same order),
    then put each cotangent back where its element came from by sorting it by that permutation."""
    axis = p.int("dimension")
    shape = p.inputs[0].shape
    position = op_result(emit(hlo.iota, list(shape), axis, dtypes.int32), dtypes.int32)
    comparator = p.op.regions[0].blocks[0]
    inner = [o.operation for o in comparator.operations]
    n = len(p.inputs)

    def compare(*args):
        mapping = dict(zip(comparator.arguments, args[:2 * n]))
        clone_into(inner[:-1], mapping)
        return mapping.get(inner[-1].operands[0], inner[-1].operands[0])
    stable = "is_stable" in p.op.attributes and ir.BoolAttr(p.op.attributes["is_stable"]).value
    results = emit(hlo.sort, [t.value for t in p.inputs] + [position.value], axis, compare, is_stable=stable)
    permutation = op_result(results[-1], dtypes.int32)
    grads = []
    for x, g, needed in zip(p.inputs, cts, active):
        if not needed or g is None:
            grads.append(None)
            continue
        back = emit(hlo.sort, [permutation.value, g.value], axis, lambda a, b, c, d: hlo.compare(a, b, "LT"))
        grads.append(tensor(back[1]))
    return grads
