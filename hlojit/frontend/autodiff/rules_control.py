"""VJP rules of if, case and while (cond, switch, fori_loop, scan).

A region's values are invisible outside it, so the backward pass recomputes what it needs: the
backward `if` copies each branch's ops into its own branch and walks them in reverse there. A `while`
with a trip count known at trace time (fori_loop and scan with Python bounds) runs twice more: a loop
that records the carry at the start of every trip into stacked buffers, then a loop that walks the trips
backwards, each one recomputing its body from the recorded carry and walking it in reverse. Cotangents of
values the body captures from outside are summed in extra carries. A `while_loop` whose trip count
depends on the data has no static bound to record into: DifferentiationError.
"""
from __future__ import annotations

import numpy as np

from ...dialects import stablehlo as hlo
from ...dialects.types import enum_attr
from ...errors import DifferentiationError
from .. import dtypes, ops, trace as _trace
from ..ops._core import constant, emit
from .core import accumulate, backward, clone_into, is_float_value, register, site_of, tensor, zeros_like
from .rules_shape import op_result


def _body_ops(region):
    inner = [o.operation for o in region.blocks[0].operations]
    return inner[:-1], list(inner[-1].operands)


def _walk_copy(region, arguments, seeds, wanted) -> dict:
    """Copy `region`'s body here (its block arguments renamed to `arguments`), seed the cotangents of
    what it returns, walk it backwards; returns the cotangents of `wanted` values (and of `arguments`)."""
    body, returned = _body_ops(region)
    mapping = dict(zip(region.blocks[0].arguments, arguments))
    copies = clone_into(body, mapping)
    cotangents: dict = {}
    for value, ct in zip(returned, seeds):
        value = mapping.get(value, value)
        if ct is not None and is_float_value(value):
            accumulate(cotangents, value, ct, "a region's result")
    backward(copies, cotangents, wanted)
    return cotangents


def _or_zeros(cotangents: dict, value):
    found = cotangents.get(value)
    return found if found is not None else zeros_like(tensor(value))


@register("if", "case")
def _branches(p, cts, active):
    wanted = [c.value for c, needed in zip(p.captures, active[1:]) if needed]
    if not wanted:
        return [None] * len(active)

    def body_of(region):
        def body():
            cotangents = _walk_copy(region, [], cts, wanted)
            return [_or_zeros(cotangents, v).value for v in wanted]
        return body
    bodies = [body_of(region) for region in p.op.regions]
    selector = p.op.operands[0]
    loc = _trace.user_location()
    values = hlo.if_(selector, *bodies, loc=loc) if p.op.name == "stablehlo.if" else hlo.case(selector, bodies, loc=loc)
    grads = iter(tensor(v) for v in values)
    return [None] + [next(grads) if needed else None for needed in active[1:]]


# --- while with a static trip count ----------------------------------------------------------------

def _constant_int(value):
    owner = value.owner
    name = getattr(getattr(owner, "operation", None), "name", None)
    if name != "stablehlo.constant":
        return None
    array = np.array(owner.operation.attributes["value"])
    return int(array.reshape(-1)[0]) if array.size >= 1 else None


def trip_count(op) -> int | None:
    """The trips of a while whose test is `counter < bound` with a constant start and bound and a body
    that adds 1 to the counter (fori_loop's and scan's loops), else None."""
    cond, body = op.regions[0].blocks[0], op.regions[1].blocks[0]
    test = list(cond.operations)[-1].operands[0].owner
    if getattr(test, "name", None) != "stablehlo.compare" or enum_attr(test, "comparison_direction") != "LT":
        return None
    lhs, rhs = test.operands
    args = list(cond.arguments)
    if lhs not in args:
        return None
    counter = args.index(lhs)
    returned = list(list(body.operations)[-1].operands)
    if rhs in args:
        bound_index = args.index(rhs)
        if returned[bound_index] != body.arguments[bound_index]:
            return None
        high = _constant_int(op.operands[bound_index])
    else:
        high = _constant_int(rhs)
    low = _constant_int(op.operands[counter])
    step = returned[counter].owner
    if low is None or high is None or getattr(step, "name", None) != "stablehlo.add":
        return None
    others = [v for v in step.operands if v != body.arguments[counter]]
    if len(others) != 1 or _constant_int(others[0]) != 1:
        return None
    return max(0, high - low)


def _i32(value: int):
    return constant(value, dtypes.int32)


@register("while")
def _while(p, cts, active):
    op = p.op
    n = len(op.operands)
    trips = trip_count(op)
    if trips is None:
        raise DifferentiationError(
            f"reverse mode cannot go through stablehlo.while built at {site_of(op)}: its trip count depends on "
            "the data (a while_loop), so there is no static bound to record the carries into; use fori_loop "
            "or scan with Python int bounds")
    carried = [k for k in range(n) if is_float_value(op.operands[k])]
    wanted = [c.value for c, needed in zip(p.captures, active[n:]) if needed]
    if trips == 0:
        return [cts[k] if active[k] else None for k in range(n)] + [None] * len(p.captures)
    body_region = op.regions[1]
    body_ops, returned = _body_ops(body_region)
    shapes = [tensor(v) for v in op.operands]
    zero = _i32(0)

    def record_body(*args):
        k, carry, stacks = tensor(args[0]), list(args[1:1 + n]), args[1 + n:]
        new_stacks = []
        for stack, value, spec in zip(stacks, carry, shapes):
            row = emit(hlo.reshape, value, [1, *spec.shape])
            new_stacks.append(emit(hlo.dynamic_update_slice, stack, row, [k.value] + [zero.value] * spec.ndim))
        mapping = dict(zip(body_region.blocks[0].arguments, carry))
        clone_into(body_ops, mapping)
        return [(k + 1).value] + [mapping.get(v, v) for v in returned] + new_stacks

    stacks = [ops.zeros((trips, *t.shape), t.dtype).value for t in shapes]
    recorded = emit(hlo.while_, [zero.value] + [v for v in op.operands] + stacks,
                    lambda *args: [(tensor(args[0]) < trips).value], record_body)
    stacks = recorded[1 + n:]

    def backward_body(*args):
        k = tensor(args[0])
        trip = _i32(trips - 1) - k
        cts_in, sums = args[1:1 + len(carried)], args[1 + len(carried):]
        carry = []
        for stack, spec in zip(stacks, shapes):
            row = emit(hlo.dynamic_slice, stack, [trip.value] + [zero.value] * spec.ndim, [1, *spec.shape])
            carry.append(emit(hlo.reshape, row, list(spec.shape)))
        seeds = [None] * n
        for index, ct in zip(carried, cts_in):
            seeds[index] = tensor(ct)
        cotangents = _walk_copy(body_region, carry, seeds, [carry[i] for i in carried] + wanted)
        new_cts = [_or_zeros(cotangents, carry[i]).value for i in carried]
        new_sums = [(tensor(s) + _or_zeros(cotangents, v)).value for s, v in zip(sums, wanted)]
        return [(k + 1).value] + new_cts + new_sums

    init = [zero.value] + [(cts[i] if cts[i] is not None else zeros_like(shapes[i])).value for i in carried] + \
        [zeros_like(tensor(v)).value for v in wanted]
    results = emit(hlo.while_, init, lambda *args: [(tensor(args[0]) < trips).value], backward_body)
    final = dict(zip(carried, results[1:1 + len(carried)]))
    sums = iter(results[1 + len(carried):])
    grads = [op_result(final[k], shapes[k].dtype) if active[k] and k in final else None for k in range(n)]
    return grads + [op_result(next(sums), c.dtype) if needed else None for c, needed in zip(p.captures, active[n:])]
