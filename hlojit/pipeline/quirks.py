"""Rewrites of a StableHLO module that work around IREE 3.13 bugs on one target.

Each quirk was found by the cross-target tests (reference vs each target). They run just before
compiling, on the module the compiler is about to consume, so traced programs and `from_mlir` programs
get them alike and the StableHLO users see stays as they wrote it.
"""
from __future__ import annotations

from iree.compiler import ir

from ..dialects import stablehlo as hlo
from ..dialects.types import dtype_of, shape_of
from .targets import Target


def _walk(op):
    for region in op.regions:
        for block in region.blocks:
            for inner in list(block.operations):
                yield inner.operation
                yield from _walk(inner.operation)


def _is_float(dtype) -> bool:
    return dtype.kind == "f" or dtype.name == "bfloat16"


_VIA_SIGNED = {"uint8": "int32", "uint16": "int32", "uint32": "int64"}


def truncate_before_float_to_int(module: ir.Module) -> int:
    """vmvx converts float -> int rounding to nearest (0.5 -> 1, -1.7 -> -2), not toward zero as
    StableHLO says: make the value whole first, rounding toward zero, so any rounding agrees. It cannot
    lower float -> small unsigned at all (arith.fptoui): go through a wider signed int."""
    count = 0
    for op in list(_walk(module.operation)):
        if op.name != "stablehlo.convert":
            continue
        source, target = dtype_of(op.operands[0].type), dtype_of(op.results[0].type)
        if not _is_float(source) or target.kind not in "iu":  # to bool is `!= 0`: no truncating
            continue
        x = op.operands[0]
        with ir.InsertionPoint(op), op.location:
            zero = hlo.broadcast_in_dim(hlo.constant(0, source), shape_of(x.type), [])
            whole = hlo.select(hlo.compare(x, zero, "LT"), hlo.unary("ceil", x), hlo.unary("floor", x))
            if target.name in _VIA_SIGNED:
                whole = hlo.convert(whole, _VIA_SIGNED[target.name])
        op.operands[0] = whole
        count += 1
    return count


QUIRKS = {"vmvx": [truncate_before_float_to_int]}


def apply(module: ir.Module, target: Target) -> None:
    with module.context:
        for quirk in QUIRKS.get(target.name, ()):
            quirk(module)
