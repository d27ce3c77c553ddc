"""Batching rules of the ops that work element by element (every elementwise record of the registry,
StableHLO's and CHLO's, and map) and of optimization_barrier and bitcast_convert.

An elementwise op takes its operands with the batch at one dimension: the first batched operand's, so an
op whose operands agree moves nothing; the others are moved there, unbatched ones are repeated along it.
0-d operands of a ranked op (select's predicate, clamp's bounds) stay 0-d when unbatched."""
from __future__ import annotations

from ...dialects import registry, stablehlo as hlo
from ..ops._core import emit, wrap
from .core import RULES, Batched, at, i64_array, per_example_shape, recreate, register, with_batch
from .rules_control import lane_by_lane

def aligned(p, rank: int) -> tuple[list, int]:
    """p's operands with their batch at one dimension (for operands of the result's rank), and that dim."""
    dim = next((b.dim for b in p.args if b.dim is not None and len(per_example_shape(b)) == rank), 0)
    shape = with_batch(p.result_shapes()[0], p.size, dim)
    operands = []
    for b in p.args:
        if len(per_example_shape(b)) == rank:
            operands.append(at(b, dim, p.size))
        elif b.dim is None:
            operands.append(b.t)
        else:   # a batched 0-d operand of a ranked op: one value per example, spread over its example
            operands.append(wrap(emit(hlo.broadcast_in_dim, b.t.value, shape, [dim]), shape, b.t.dtype))
    return operands, dim


def _elementwise(p):
    rank = len(p.result_shapes()[0])
    operands, dim = aligned(p, rank)
    shapes = [with_batch(s, p.size, dim) for s in p.result_shapes()]
    return [Batched(t, dim) for t in recreate(p, operands, shapes)]


RULES.update({name: _elementwise for name in registry.names(elementwise=True)})   # one rule for them all


@register("map")
def _map(p):
    if p.captures_batched:
        return lane_by_lane(p)
    rank = len(p.result_shapes()[0])
    operands, dim = aligned(p, rank)
    shape = with_batch(p.result_shapes()[0], p.size, dim)
    (result,) = recreate(p, operands, [shape], {"dimensions": i64_array(range(rank + 1))})
    return [Batched(result, dim)]


@register("optimization_barrier")
def _barrier(p):
    results = recreate(p, [b.t for b in p.args], [b.t.shape for b in p.args])
    return [Batched(t, b.dim) for t, b in zip(results, p.args)]


@register("bitcast_convert")
def _bitcast_convert(p):
    """A change of width adds or consumes the trailing dimension: the batch goes first."""
    x = at(p.args[0], 0, p.size)
    (result,) = recreate(p, [x], [with_batch(p.result_shapes()[0], p.size, 0)])
    return [Batched(result, 0)]
