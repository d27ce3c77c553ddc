"""Control flow: stablehlo.if, stablehlo.case and stablehlo.while, run as Python branches and loops over
their region blocks, each compiled once by `compile_block`; the dynamic slices scan steps with;
stablehlo.map (a scalar body over every element); and optimization_barrier (the identity).

Regions may use values of the enclosing block (StableHLO lets them capture): each closure lists those
values in `captures`, and the interpreter passes them after the op's operands.
"""
from __future__ import annotations

import numpy as np

from ..dialects import registry
from ..dialects.types import attr_ints, dtype_of, shape_of
from .interpreter import OPS, RETURNS, compile_block, free_values


def _single(n):
    """The interpreter unpacks a closure's result only when the op has several results."""
    return (lambda values: values[0]) if n == 1 else (lambda values: values)


def _branching(name):
    def build(op, functions):
        captures = free_values(op.regions)
        branches = [compile_block(region.blocks[0], f"{name}_branch{i}", functions, captures)
                    for i, region in enumerate(op.regions)]
        finish = _single(len(op.results))
        last = len(branches) - 1

        if name == "if":
            def run(pred, *captured):
                return finish(branches[0 if pred else 1](*captured))
        else:
            def run(index, *captured):  # an index out of range runs the last branch
                i = int(index)
                return finish(branches[i if 0 <= i < last else last](*captured))
        run.captures = captures
        return run
    build.takes_functions = True
    return build


def _while(op, functions):
    captures = free_values(op.regions)
    cond = compile_block(op.regions[0].blocks[0], "while_cond", functions, captures)
    body = compile_block(op.regions[1].blocks[0], "while_body", functions, captures)
    finish = _single(len(op.results))
    n = len(op.results)

    def run(*args):
        state, captured = args[:n], args[n:]
        while bool(np.asarray(cond(*state, *captured)[0])):
            state = body(*state, *captured)
        return finish(tuple(state))
    run.captures = captures
    return run


_while.takes_functions = True


def _starts(shape, sizes, indices):
    """Start indices clamped so the block of `sizes` stays inside `shape` (StableHLO's rule)."""
    return [min(max(int(i), 0), d - s) for i, d, s in zip(indices, shape, sizes)]


def _dynamic_slice(op):
    sizes = attr_ints(op, "slice_sizes")

    def run(x, *indices):
        starts = _starts(x.shape, sizes, indices)
        return x[tuple(slice(b, b + s) for b, s in zip(starts, sizes))]
    return run


def _dynamic_update_slice(op):
    def run(x, update, *indices):
        starts = _starts(x.shape, update.shape, indices)
        out = np.array(x, copy=True)
        out[tuple(slice(b, b + s) for b, s in zip(starts, update.shape))] = update
        return out
    return run

# Ops that act elementwise when their 0-d operands are whole arrays (numpy broadcasts the constants).
_ELEMENTWISE = frozenset({"stablehlo.constant", *registry.names(elementwise=True)})


def _map(op, functions):
    """stablehlo.map: the scalar body runs once on whole arrays when all its ops are elementwise, else
    once per element."""
    body = compile_block(op.regions[0].blocks[0], "map_body", functions)
    shape, dtype = shape_of(op.result.type), dtype_of(op.result.type)
    names = {inner.operation.name for inner in op.regions[0].blocks[0].operations} - set(RETURNS)
    if names <= _ELEMENTWISE:
        return lambda *xs: np.broadcast_to(np.asarray(body(*xs)[0], dtype), shape)

    def run(*xs):
        out = np.empty(shape, dtype)
        for index in np.ndindex(*shape):
            out[index] = body(*(x[index] for x in xs))[0]
        return out
    return run


_map.takes_functions = True


def _optimization_barrier(op):
    """The operands, unchanged: a barrier only constrains compilers."""
    n = len(op.results)
    return (lambda *values: values) if n != 1 else (lambda value: value)


OPS.update({
    "stablehlo.optimization_barrier": _optimization_barrier,
    "stablehlo.map": _map,
    "stablehlo.if": _branching("if"),
    "stablehlo.case": _branching("case"),
    "stablehlo.while": _while,
    "stablehlo.dynamic_slice": _dynamic_slice,
    "stablehlo.dynamic_update_slice": _dynamic_update_slice,
})
