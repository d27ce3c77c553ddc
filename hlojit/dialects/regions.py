"""Builders of the StableHLO ops that take a body (a region): reduce, reduce_window, if, case, while,
scatter, sort and map.

A body is a callable that builds its ops at the insertion point the builder sets (inside the region's
block) and returns the values the region yields; the builder adds the `stablehlo.return`. Bodies may use
values of the enclosing block (StableHLO regions capture them). A body that raises, or returns values of
the wrong types, leaves no half-built op behind. The reduction bodies may also be the name of a binary op.
"""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np
from iree.compiler import ir

from .build import create, dims_attr, i64_array, scalar_type, with_shape
from .elementwise import BINARY_OPS, binary, compare
from .types import shape_of

__all__ = ["reduce", "reduce_window", "select_and_scatter", "if_", "case", "while_", "scatter", "sort", "map"]


# --- reductions (a binary op's name, or a body over accumulators and elements) -------------------

def reduction_body(op, scalar_types, body: Callable[..., Sequence[ir.Value]] | str, *, loc=None) -> None:
    """Fill the one empty region of a reduce or reduce_window `op`: block arguments of `scalar_types` twice
    (accumulators, then elements) and `body`, a binary op's name or a callable of the block arguments that
    returns the new accumulators."""
    block = op.regions[0].blocks.append(*scalar_types, *scalar_types)
    with ir.InsertionPoint(block), loc or ir.Location.unknown():
        args = list(block.arguments)
        new = [binary(body, args[0], args[1])] if isinstance(body, str) else list(body(*args))
        create("stablehlo.return", [], new)


def reduce(inputs: Sequence[ir.Value], init_values: Sequence[ir.Value], dimensions: Sequence[int],
           body: Callable[..., Sequence[ir.Value]] | str, *, loc=None, ip=None) -> list[ir.Value]:
    """`stablehlo.reduce` over `dimensions`.

    `body` is either the name of a binary op ("add", "maximum", ...) for a single input, or a callable
    that receives the scalar block arguments (accumulators first, then elements) and returns the new
    accumulators.
    """
    if isinstance(body, str) and body not in BINARY_OPS:  # before creating anything: no half-built op
        raise ValueError(f"unknown StableHLO binary op {body!r} for a reduce body")
    dims = set(dimensions)
    results = []
    for x in inputs:
        shape = shape_of(x.type)
        results.append(with_shape(x, [d for i, d in enumerate(shape) if i not in dims]))
    op = create("stablehlo.reduce", results, [*inputs, *init_values],
                {"dimensions": i64_array(dimensions)}, regions=1, loc=loc, ip=ip)
    reduction_body(op, [scalar_type(v) for v in init_values], body, loc=loc)
    return list(op.results)


def reduce_window(inputs: Sequence[ir.Value], init_values: Sequence[ir.Value], *, window: Sequence[int],
                  strides: Sequence[int], padding: Sequence[Sequence[int]],
                  body: Callable[..., Sequence[ir.Value]] | str, loc=None, ip=None) -> list[ir.Value]:
    """`stablehlo.reduce_window` (no dilations): each output element reduces one window of the padded
    input with `body` (a binary op name, or a callable as for `reduce`)."""
    if isinstance(body, str) and body not in BINARY_OPS:
        raise ValueError(f"unknown StableHLO binary op {body!r} for a reduce_window body")
    results = []
    for x in inputs:
        shape = shape_of(x.type)
        out = [max(0, (d + lo + hi - w) // s + 1) for d, w, s, (lo, hi) in zip(shape, window, strides, padding)]
        results.append(with_shape(x, out))
    attrs = {"window_dimensions": i64_array(window), "window_strides": i64_array(strides),
             "padding": ir.DenseElementsAttr.get(np.asarray(padding, dtype=np.int64).reshape(len(window), 2))}
    op = create("stablehlo.reduce_window", results, [*inputs, *init_values], attrs, regions=1, loc=loc, ip=ip)
    reduction_body(op, [scalar_type(v) for v in init_values], body, loc=loc)
    return list(op.results)


def select_and_scatter(operand: ir.Value, source: ir.Value, init_value: ir.Value, *, window: Sequence[int],
                       strides: Sequence[int], padding: Sequence[Sequence[int]], select: str, scatter: str,
                       loc=None, ip=None) -> ir.Value:
    """`stablehlo.select_and_scatter` (the gradient of a max or min pool): in each window of the padded operand
    the element `select` prefers (a compare direction, "GE" for the first maximum, "LE" for the first minimum)
    receives the window's source element, combined by `scatter` (a binary op name) from `init_value`."""
    if scatter not in BINARY_OPS:
        raise ValueError(f"unknown StableHLO binary op {scatter!r} for a select_and_scatter scatter region")
    if select not in ("GE", "GT", "LE", "LT"):
        raise ValueError(f"select_and_scatter selects by GE, GT, LE or LT, not {select!r}")
    attrs = {"window_dimensions": i64_array(window), "window_strides": i64_array(strides),
             "padding": ir.DenseElementsAttr.get(np.asarray(padding, dtype=np.int64).reshape(len(window), 2))}
    op = create("stablehlo.select_and_scatter", [operand.type], [operand, source, init_value], attrs, regions=2,
                loc=loc, ip=ip)
    element = scalar_type(operand)
    select_block = op.regions[0].blocks.append(element, element)
    with ir.InsertionPoint(select_block), loc or ir.Location.unknown():
        create("stablehlo.return", [], [compare(*select_block.arguments, select)])
    scatter_block = op.regions[1].blocks.append(scalar_type(source), scalar_type(source))
    with ir.InsertionPoint(scatter_block), loc or ir.Location.unknown():
        create("stablehlo.return", [], [binary(scatter, *scatter_block.arguments)])
    return op.result


# --- control flow: if, case, while (control family) -------------------------------------------------

def _types(values) -> str:
    return "(" + ", ".join(str(v.type) for v in values) + ")"


def _branches(name: str, operands, bodies, loc, ip) -> list[ir.Value]:
    """Build each body into a region of a scratch op first: the result types are only known once the
    bodies are built. Then create the op with those types and move the blocks into its regions."""
    scratch = create(name, [], operands, regions=len(bodies), loc=loc, ip=ip)
    try:
        returned = []
        for region, body in zip(scratch.regions, bodies):
            block = region.blocks.append()
            with ir.InsertionPoint(block), loc or ir.Location.unknown():
                values = list(body())
                create("stablehlo.return", [], values)
            returned.append(values)
        for i, values in enumerate(returned[1:], 1):
            if [v.type for v in values] != [v.type for v in returned[0]]:
                raise ValueError(f"{name}: branch {i} returns {_types(values)} but branch 0 returns "
                                 f"{_types(returned[0])}")
        op = create(name, [v.type for v in returned[0]], operands, regions=len(bodies), loc=loc,
                    ip=ir.InsertionPoint(scratch))
        for source, target in zip(scratch.regions, op.regions):
            source.blocks[0].append_to(target)
        return list(op.results)
    finally:
        scratch.erase()


def if_(pred: ir.Value, true_body: Callable[[], Sequence[ir.Value]], false_body: Callable[[], Sequence[ir.Value]],
        *, loc=None, ip=None) -> list[ir.Value]:
    """`stablehlo.if`: the values of `true_body()` when the 0-d i1 `pred` holds, else of `false_body()`.
    Both bodies must return values of the same types, which become the result types."""
    return _branches("stablehlo.if", [pred], [true_body, false_body], loc, ip)


def case(index: ir.Value, bodies: Sequence[Callable[[], Sequence[ir.Value]]], *, loc=None,
         ip=None) -> list[ir.Value]:
    """`stablehlo.case`: the values of `bodies[index]` for a 0-d i32 `index`; an index out of
    [0, len(bodies)) runs the last body (StableHLO's rule)."""
    if not bodies:
        raise ValueError("stablehlo.case needs at least one body")
    return _branches("stablehlo.case", [index], list(bodies), loc, ip)


def while_(operands: Sequence[ir.Value], cond_body: Callable[..., Sequence[ir.Value]],
           body: Callable[..., Sequence[ir.Value]], *, loc=None, ip=None) -> list[ir.Value]:
    """`stablehlo.while` over carried values starting at `operands`: while `cond_body(*carried)` returns
    a true 0-d i1, `body(*carried)` returns the next carried values (of the operands' types)."""
    types = [v.type for v in operands]
    op = create("stablehlo.while", types, operands, regions=2, loc=loc, ip=ip)
    try:
        i1 = ir.RankedTensorType.get([], ir.IntegerType.get_signless(1))
        for region, fn, expected, what in ((op.regions[0], cond_body, [i1], "condition"),
                                           (op.regions[1], body, types, "body")):
            block = region.blocks.append(*types)
            with ir.InsertionPoint(block), loc or ir.Location.unknown():
                values = list(fn(*block.arguments))
                if [v.type for v in values] != expected:
                    raise ValueError(f"stablehlo.while: the {what} returns {_types(values)}, it must return "
                                     f"({', '.join(str(t) for t in expected)})")
                create("stablehlo.return", [], values)
    except BaseException:
        op.erase()
        raise
    return list(op.results)


# --- scatter (indexing family) --------------------------------------------------------------------

def scatter(operand: ir.Value, scatter_indices: ir.Value, updates: ir.Value,
            body: Callable[[ir.Value, ir.Value], Sequence[ir.Value]] | str, *, update_window_dims: Sequence[int],
            inserted_window_dims: Sequence[int], scatter_dims_to_operand_dims: Sequence[int],
            index_vector_dim: int, input_batching_dims: Sequence[int] = (),
            scatter_indices_batching_dims: Sequence[int] = (), indices_are_sorted: bool = False,
            unique_indices: bool = False, loc=None, ip=None) -> ir.Value:
    """`stablehlo.scatter`: `operand` with each element of `updates` combined into the element it lands
    on, `new = body(current, update)`; the dimension numbers mirror gather's.

    `body` is the name of a binary op ("add", "maximum", ...) or a callable receiving the 0-d block
    arguments (current, update) and returning [new]; `lambda current, update: [update]` replaces.
    Unlike gather, StableHLO leaves indices out of bounds implementation-defined (IREE 3.13 on llvm-cpu
    writes out of bounds): callers keep them in bounds.
    """
    if isinstance(body, str) and body not in BINARY_OPS:  # before creating anything: no half-built op
        raise ValueError(f"unknown StableHLO binary op {body!r} for a scatter body")
    attrs = {
        "scatter_dimension_numbers": dims_attr("scatter", [
            ("update_window_dims", update_window_dims), ("inserted_window_dims", inserted_window_dims),
            ("input_batching_dims", input_batching_dims),
            ("scatter_indices_batching_dims", scatter_indices_batching_dims),
            ("scatter_dims_to_operand_dims", scatter_dims_to_operand_dims),
            ("index_vector_dim", int(index_vector_dim))]),
        "indices_are_sorted": ir.BoolAttr.get(bool(indices_are_sorted)),
        "unique_indices": ir.BoolAttr.get(bool(unique_indices)),
    }
    op = create("stablehlo.scatter", [operand.type], [operand, scatter_indices, updates], attrs, regions=1,
                loc=loc, ip=ip)
    scalar = scalar_type(operand)
    block = op.regions[0].blocks.append(scalar, scalar)
    try:
        with ir.InsertionPoint(block), loc or ir.Location.unknown():
            current, update = block.arguments
            new = [binary(body, current, update)] if isinstance(body, str) else list(body(current, update))
            create("stablehlo.return", [], new)
    except BaseException:
        op.erase()
        raise
    return op.result


# --- sorting (math family) ------------------------------------------------------------------------

def sort(inputs: Sequence[ir.Value], dimension: int, comparator: Callable[..., ir.Value], *,
         is_stable: bool = False, loc=None, ip=None) -> list[ir.Value]:
    """`stablehlo.sort` of same-shaped `inputs` together along `dimension`, ordered by `comparator`,
    which receives 0-d block arguments (lhs_0, rhs_0, lhs_1, rhs_1, ...) and returns a 0-d i1 that is
    true when lhs goes before rhs."""
    op = create("stablehlo.sort", [v.type for v in inputs], inputs,
                {"dimension": ir.IntegerAttr.get(ir.IntegerType.get_signless(64), int(dimension)),
                 "is_stable": ir.BoolAttr.get(bool(is_stable))}, regions=1, loc=loc, ip=ip)
    scalars = [scalar_type(v) for v in inputs]
    block = op.regions[0].blocks.append(*[t for t in scalars for _ in (0, 1)])
    try:
        with ir.InsertionPoint(block), loc or ir.Location.unknown():
            create("stablehlo.return", [], [comparator(*block.arguments)])
    except BaseException:
        op.erase()
        raise
    return list(op.results)


# --- map (random family) -------------------------------------------------------------------------
# `map` shadows the builtin inside this module: use comprehensions here.

def map(inputs: Sequence[ir.Value], body: Callable[..., ir.Value], *, loc=None, ip=None) -> ir.Value:
    """`stablehlo.map`: `body` (given one 0-d block argument per input, returning one 0-d value) applied
    to every element of the same-shaped `inputs`; the result has the body's element type. IREE keeps the
    body as one loop body, so a long scalar computation (a hash) costs one op to compile, not a graph of
    hundreds of elementwise ops to fuse."""
    shape = shape_of(inputs[0].type)
    op = create("stablehlo.map", [inputs[0].type], inputs, {"dimensions": i64_array(range(len(shape)))},
                regions=1, loc=loc, ip=ip)
    scalars = [scalar_type(v) for v in inputs]
    block = op.regions[0].blocks.append(*scalars)
    try:
        with ir.InsertionPoint(block), loc or ir.Location.unknown():
            value = body(*block.arguments)
            if shape_of(value.type) != ():
                raise ValueError(f"stablehlo.map: the body returns {value.type}, it must return a 0-d tensor")
            create("stablehlo.return", [], [value])
    except BaseException:
        op.erase()
        raise
    op.result.set_type(ir.RankedTensorType.get(list(shape), ir.RankedTensorType(value.type).element_type))
    return op.result
