"""Target rewrite of stable sorts for IREE 3.13's llvm-cpu and vmvx, which ignore `is_stable = true`: elements the
comparator finds equal came back in any order (keys 0..4 with a payload of positions, 1000 along the axis: the
payloads out of order), where the spec keeps them in their order. StableHLO -> StableHLO, listed in quirks.py.

A stable sort becomes an unstable one of one more operand, the positions along the sort dimension (an iota), with
the comparator made a total order: a before b where the comparator says so, or where it says neither and a's
position is the smaller. The comparator's ops are built twice (a, b and b, a); one whose body holds an op with a
region is left alone. The frontend's own sorts need none of this: their comparators break ties by position
already, so they are emitted unstable.

A sort that already carries the positions (an integer iota along its dimension: JAX's argsort sorts (x, iota))
breaks ties on that operand and gets none added. An added one goes behind an optimization barrier: llvm-cpu
failed to compile a sort of two iotas whose comparator reads one ("'linalg.generic' op write affecting operations
on global resources are restricted to workgroup distributed contexts": IREE hoists the constant operands), so a
stable argsort exported from JAX did not compile on iree:cpu.

Every IREE target: a sort whose results are sliced passes them through an optimization barrier first. IREE 3.13
turns sort-then-slice into its own top-k, which compares floats as plain floats whatever the comparator says: the
expansion of chlo.top_k (JAX's lax.top_k), a stable sort by `compare GT, TOTALORDER` and a slice, put NaN after
-0.0 on iree:cpu and iree:vmvx (the slice of all elements too), where the reference backend and XLA put +NaN
first. The frontend's top_k once had this barrier itself; from_mlir modules lacked it.

Order (quirks.py): on llvm-cpu and vmvx after CHLO's expansion, so chlo.top_k's stable sort is made stable too.

cuda only: a sort reads operands made by other ops (but iotas) through an optimization barrier, and where one of
its results is nobody's, writes them all through another. IREE 3.13's cuda codegen fails to bufferize ("failed to
bufferize op") a sort of several operands along 32 elements or more with a dead result (JAX's argsort, a sort of
(x, iota) that returns the positions alone, did not compile for iree:cuda), and a sort of any length whose operand
is a slice it fuses in (hlojit's f64 eigh and eigvalsh sort the diagonal, a strided slice, by value and position:
they did not compile for cuda even at 8 x 8). cuda gets no position operand for stability, so its one-operand
stable sorts stay as they are (whether IREE's cuda sort is stable is untested here).
"""
from __future__ import annotations

import numpy as np
from iree.compiler import ir

from ..dialects import stablehlo as hlo
from ..dialects.build import create, scalar_type
from ..dialects.types import dtype_of, shape_of
from .legalize import behind_barrier, producer, walk


class _HasRegions(Exception):
    """A comparator op with a region of its own: not rebuilt here."""


def rebuilt_comparator(block: ir.Block, arguments: list[ir.Value]) -> ir.Value:
    """The comparator `block`'s ops built again at the insertion point, on `arguments`; the value it returns."""
    mapping = {arg: value for arg, value in zip(block.arguments, arguments)}
    for inner in block.operations:
        op = inner.operation
        operands = [mapping.get(v, v) for v in op.operands]    # a value from outside the block is itself
        if op.name == "stablehlo.return":
            return operands[0]
        if len(op.regions):
            raise _HasRegions(op.name)
        attributes = {name: op.attributes[name] for name in op.attributes}
        new = create(op.name, [r.type for r in op.results], operands, attributes)
        mapping.update(zip(op.results, new.results))
    raise ValueError("a sort comparator without stablehlo.return")


def _is_stable(op) -> bool:
    return "is_stable" in op.attributes and ir.BoolAttr(op.attributes["is_stable"]).value


def _position_operand(op, dimension: int) -> int | None:
    """The index of an operand that holds each element's position along `dimension` already (an integer iota
    along it, wide enough to count them), or None."""
    size = shape_of(op.operands[0].type)[dimension]
    for k, value in enumerate(op.operands):
        iota = producer(value)
        if iota is None or iota.name != "stablehlo.iota":
            continue
        dtype = np.dtype(dtype_of(value.type))
        iota_dimension = ir.IntegerAttr(iota.attributes["iota_dimension"]).value
        if dtype.kind in "iu" and iota_dimension == dimension and size - 1 <= np.iinfo(dtype).max:
            return k
    return None


def _stable_by_position(op) -> bool:
    dimension = ir.IntegerAttr(op.attributes["dimension"]).value
    shape = shape_of(op.operands[0].type)
    position_dtype = np.int32 if shape[dimension] < 2**31 else np.int64
    old = op.regions[0].blocks[0]
    inputs = len(op.operands)
    added = []                                   # the ops that build a position operand, if one is added
    with ir.InsertionPoint(op), op.location:
        position = _position_operand(op, dimension)
        operands = list(op.operands)
        if position is None:
            position = inputs
            operands.append(hlo.optimization_barrier([hlo.iota(shape, dimension, position_dtype)])[0])
            added = [operands[-1].owner.operation, operands[-1].owner.operation.operands[0].owner.operation]
        attributes = {"dimension": op.attributes["dimension"], "is_stable": ir.BoolAttr.get(False)}
        new = create("stablehlo.sort", [v.type for v in operands], operands, attributes, regions=1)
        block = new.regions[0].blocks.append(*(t for v in operands for t in (scalar_type(v), scalar_type(v))))
        args = list(block.arguments)
        swapped = [args[k + 1 - k % 2 * 2] for k in range(len(args))]    # (b0, a0, b1, a1, ...)
        try:
            with ir.InsertionPoint(block):
                before = rebuilt_comparator(old, args[:2 * inputs])
                after = rebuilt_comparator(old, swapped[:2 * inputs])
                tie = hlo.binary("and", hlo.unary("not", after),
                                 hlo.compare(args[2 * position], args[2 * position + 1], "LT"))
                create("stablehlo.return", [], [hlo.binary("or", before, tie)])
        except _HasRegions:
            new.erase()
            for built in added:                  # the barrier, then the iota it reads
                built.erase()
            return False
    for result, value in zip(op.results, new.results):
        result.replace_all_uses_with(value)
    op.erase()
    return True


def stable_sort_by_position(module: ir.Module) -> int:
    sorts = [op for op in walk(module.operation) if op.name == "stablehlo.sort" and _is_stable(op)]
    return sum(_stable_by_position(op) for op in sorts)


def sorts_apart_from_slices(module: ir.Module) -> int:
    count = 0
    for op in [op for op in walk(module.operation) if op.name == "stablehlo.sort"]:
        if any(use.owner.operation.name == "stablehlo.slice" for result in op.results for use in result.uses):
            behind_barrier(op)
            count += 1
    return count


def sorts_on_their_own_buffers(module: ir.Module) -> int:
    count = 0
    for op in [op for op in walk(module.operation) if op.name == "stablehlo.sort"]:
        made = [k for k, value in enumerate(op.operands) if producer(value) is not None
                and producer(value).name not in ("stablehlo.optimization_barrier", "stablehlo.iota")]
        dead = len(op.results) > 1 and any(next(iter(result.uses), None) is None for result in op.results)
        if made:
            with ir.InsertionPoint(op), op.location:
                kept = hlo.optimization_barrier([op.operands[k] for k in made])
            for k, value in zip(made, kept):
                op.operands[k] = value
        if dead:
            behind_barrier(op)
        count += bool(made) or dead
    return count


CPU = [stable_sort_by_position, sorts_apart_from_slices]     # llvm-cpu and vmvx (then sort_networks.py's)
CUDA = [sorts_apart_from_slices, sorts_on_their_own_buffers]
