"""Batching rules of if, case and while, and the lane-by-lane loop for ops that have no batched form.

`if`/`case` with an unbatched selector stay one op whose branches are batched; with a batched selector
every branch runs (inline) and each example picks its branch's results (JAX's rule). A `while` whose
test is the same for every example stays one loop over batched carries; one whose test is batched runs
until every example is done, and an example that is done keeps its carry (it is selected back each trip).
Which carries are batched is found first by following which values depend on batched ones through the
body until nothing changes (a carry the body makes batched must start batched).
"""
from __future__ import annotations

from iree.compiler import ir

from ...dialects import stablehlo as hlo
from ...dialects.types import composite_attributes, dtype_of
from .. import composites, dtypes, ops
from ..autodiff import core as ad
from ..ops._core import constant, emit, wrap
from .core import Batched, at, recreate, register, tensor


def batched_results(region, arguments: list[bool], walk) -> list[bool]:
    """Which values a one-block region returns differ between examples, given which of its block
    arguments do (values it captures are looked up in the walk)."""
    block = region.blocks[0]
    known = {a for a, flag in zip(block.arguments, arguments) if flag}

    def batched(v) -> bool:
        return v in known or (v in walk.env and walk.env[v].dim is not None)
    inner = [o.operation for o in block.operations]
    for op in inner[:-1]:
        if any(batched(v) for v in ad.operands_of(op)[0]):
            known.update(op.results)
    return [batched(v) for v in inner[-1].operands]


def _select(mask, on_true, on_false):
    """on_true where the (size,) bool mask holds, else on_false (both batched at 0)."""
    spread = emit(hlo.broadcast_in_dim, mask.value, list(on_true.shape), [0])
    return wrap(emit(hlo.select, spread, on_true.value, on_false.value), on_true.shape, on_true.dtype)


def _arguments(values, flags) -> list[Batched]:
    return [Batched(tensor(v), 0 if flag else None) for v, flag in zip(values, flags)]


# --- while -----------------------------------------------------------------------------------------

def _carries_batched(p) -> tuple[list[bool], bool]:
    cond, body = p.op.regions
    flags = [b.dim is not None for b in p.args]
    while True:
        after = [a or b for a, b in zip(flags, batched_results(body, flags, p.walk))]
        if after == flags:
            break
        flags = after
    test_batched = batched_results(cond, flags, p.walk)[0]
    return ([True] * len(flags) if test_batched else flags), test_batched


@register("while")
def _while(p):
    cond, body = p.op.regions
    flags, test_batched = _carries_batched(p)
    walk, size = p.walk, p.size

    def test(*values):
        (pred,) = walk.body(cond, _arguments(values, flags))
        return [ops.any(pred.t).value if pred.dim is not None else pred.t.value]

    def step(*values):
        carried = _arguments(values, flags)
        new = walk.body(body, carried)
        out = [at(b, 0, size) if flag else b.t for b, flag in zip(new, flags)]
        if test_batched:   # examples whose test fails keep their carry
            (running,) = walk.body(cond, carried)
            out = [_select(running.t, t, old.t) for t, old in zip(out, carried)]
        return [t.value for t in out]
    init = [at(b, 0, size).value if flag else b.t.value for b, flag in zip(p.args, flags)]
    results = emit(hlo.while_, init, test, step)
    return _arguments(results, flags)


# --- if and case -----------------------------------------------------------------------------------

@register("if", "case")
def _branches(p):
    selector, walk, size = p.args[0], p.walk, p.size
    regions = list(p.op.regions)
    if selector.dim is not None:
        return _every_branch(p, selector, regions)
    flags = [any(found) for found in zip(*[batched_results(r, [], walk) for r in regions])]

    def body_of(region):
        def body():
            results = walk.body(region, [])
            return [(at(b, 0, size) if flag else b.t).value for b, flag in zip(results, flags)]
        return body
    bodies = [body_of(r) for r in regions]
    if p.op.name == "stablehlo.if":
        values = emit(hlo.if_, selector.t.value, *bodies)
    else:
        values = emit(hlo.case, selector.t.value, bodies)
    return _arguments(values, flags)


def _every_branch(p, selector, regions):
    """A batched selector: run every branch, then pick per example (case: an index out of range picks
    the last branch, as StableHLO says)."""
    size = p.size
    results = [[at(b, 0, size) for b in p.walk.body(r, [])] for r in regions]
    if p.op.name == "stablehlo.if":
        return [Batched(_select(selector.t, t, f), 0) for t, f in zip(*results)]
    index = selector.t
    picked = results[-1]
    for k in range(len(regions) - 2, -1, -1):
        mask = ops.equal(index, constant(k, index.dtype))
        picked = [_select(mask, t, other) for t, other in zip(results[k], picked)]
    return [Batched(t, 0) for t in picked]


# --- one example at a time -------------------------------------------------------------------------

def lane_by_lane(p):
    """The op run once per example in a loop, each result written into its row of a stacked buffer:
    for ops with no batched form (custom calls, random bits from a batched state) and batched values in
    the scalar bodies of reductions."""
    size = p.size
    args = [at(b, 0, size) if b.dim is not None else b.t for b in p.args]
    captured = [(v, at(b, 0, size)) for v, b in zip(p.captured_values, p.captured) if b.dim is not None]
    outer = p.walk.outer_values(p.captured_values)
    shapes = p.result_shapes()
    zero = constant(0, dtypes.int32)

    def row(t, i):
        block = emit(hlo.dynamic_slice, t.value, [i] + [zero.value] * (t.ndim - 1), [1, *t.shape[1:]])
        return emit(hlo.reshape, block, list(t.shape[1:]))

    def step(i, *buffers):
        operands = [row(t, i) if b.dim is not None else t.value for t, b in zip(args, p.args)]
        rename = dict(outer)
        rename.update({v: row(t, i) for v, t in captured})
        results = recreate(p, operands, shapes, rename=rename)
        new = [emit(hlo.dynamic_update_slice, buf, emit(hlo.reshape, r.value, [1, *r.shape]),
                    [i] + [zero.value] * r.ndim) for buf, r in zip(buffers, results)]
        return [(tensor(i) + 1).value] + new
    buffers = [ops.zeros((size, *shape), dtype_of(r.type)).value for shape, r in zip(shapes, p.op.results)]
    values = emit(hlo.while_, [zero.value] + buffers, lambda i, *rest: [(tensor(i) < size).value], step)
    return [Batched(tensor(v), 0) for v in values[1:]]


register("custom_call", "rng_bit_generator")(lane_by_lane)


@register("composite")
def _composite(p):
    """hlojit's composites again, on operands batched first: every implementation takes leading batch
    dimensions, so the batch is one op (one kernel call where a target has one). Another module's composite
    (from_mlir) runs lane by lane, its decomposition being for one example's types."""
    name = ir.StringAttr(p.op.attributes["name"]).value
    if name not in composites.IMPLEMENTATIONS:
        return lane_by_lane(p)
    out = composites.emit_composite(name, [at(b, 0, p.size) for b in p.args], composite_attributes(p.op))
    return [Batched(t, 0) for t in (out if isinstance(out, tuple) else (out,))]
