"""Builders of the elementwise StableHLO ops, generated from their registry records, plus the two that take
more than operands (compare, convert) and the name-dispatching `unary` / `binary`.

Each generated builder is `hlo.<op>(*operands, loc=None, ip=None)` (a Python keyword gets a trailing
underscore: `not_`, `and_`, `or_`), as MLIR's Python dialects spell them; its result type is the record's
rule applied to the operand types. Adding an op's record adds its builder.
"""
from __future__ import annotations

import keyword

import numpy as np
from iree.compiler import ir

from . import registry
from .build import create
from .types import dtype_of, element_type, shape_of


def python_name(record: registry.OpRecord) -> str:
    return record.short + "_" if keyword.iskeyword(record.short) else record.short


def _builder(record: registry.OpRecord):
    """The builder of one elementwise record: checks the operand count (and that same-type ops get operands
    of one type), infers the result type, creates the op."""
    infer, name = record.result_type.infer, python_name(record)
    same_types = record.result_type is registry.SAME and record.arity > 1

    def build(*operands: ir.Value, loc=None, ip=None) -> ir.Value:
        if len(operands) != record.arity:
            raise TypeError(f"{record.name} takes {record.arity} operands, not {len(operands)}")
        if same_types and any(v.type != operands[0].type for v in operands[1:]):
            raise ValueError(f"{record.name}: operand types differ: "
                             f"{' vs '.join(str(v.type) for v in operands)}")
        return create(record.name, [infer([v.type for v in operands])], operands, loc=loc, ip=ip).result
    build.__name__ = build.__qualname__ = name
    build.__module__ = __name__
    build.__doc__ = f"`{record.name}` of {record.arity} operand(s); the result type is {record.result_type.describe}."
    return build


BUILDERS = {r.short: _builder(r) for r in registry.buildable_elementwise()}   # op name -> builder
globals().update({fn.__name__: fn for fn in BUILDERS.values()})

# Ops whose result type is their operand's type (abs: of a real operand). Names without the prefix.
UNARY_OPS = tuple(r.short for r in registry.buildable_elementwise()
                  if r.arity == 1 and r.result_type in (registry.SAME, registry.MAGNITUDE))
BINARY_OPS = tuple(r.short for r in registry.buildable_elementwise()
                   if r.arity == 2 and r.result_type is registry.SAME)


def unary(op: str, x: ir.Value, *, loc=None, ip=None) -> ir.Value:
    """`stablehlo.<op> x` for an op of UNARY_OPS."""
    if op not in UNARY_OPS:
        raise ValueError(f"unknown StableHLO unary op {op!r}")
    return BUILDERS[op](x, loc=loc, ip=ip)


def binary(op: str, lhs: ir.Value, rhs: ir.Value, *, loc=None, ip=None) -> ir.Value:
    """`stablehlo.<op> lhs, rhs` for an op of BINARY_OPS; operands share one type, so does the result."""
    if op not in BINARY_OPS:
        raise ValueError(f"unknown StableHLO binary op {op!r}")
    return BUILDERS[op](lhs, rhs, loc=loc, ip=ip)


COMPARISON_DIRECTIONS = ("EQ", "NE", "LT", "LE", "GT", "GE")


def _compare_type(dtype: np.dtype) -> str:
    if dtype.kind in "fc" or dtype.name == "bfloat16":
        return "FLOAT"
    if dtype.kind == "u" or dtype.kind == "b":
        return "UNSIGNED"
    return "SIGNED"


def compare(lhs: ir.Value, rhs: ir.Value, direction: str, *, loc=None, ip=None) -> ir.Value:
    """`stablehlo.compare direction, lhs, rhs` giving i1; the comparison type follows the dtype."""
    if direction not in COMPARISON_DIRECTIONS:
        raise ValueError(f"comparison direction must be one of {COMPARISON_DIRECTIONS}, not {direction!r}")
    kind = _compare_type(dtype_of(lhs.type))
    attrs = {
        "comparison_direction": ir.Attribute.parse(f"#stablehlo<comparison_direction {direction}>"),
        "compare_type": ir.Attribute.parse(f"#stablehlo<comparison_type {kind}>"),
    }
    result = registry.PREDICATE.infer([lhs.type])
    return create("stablehlo.compare", [result], [lhs, rhs], attrs, loc=loc, ip=ip).result


def convert(x: ir.Value, dtype, *, loc=None, ip=None) -> ir.Value:
    """x's elements converted to `dtype` (StableHLO's rounding and wrapping)."""
    result = ir.RankedTensorType.get(shape_of(x.type), element_type(dtype))
    return create("stablehlo.convert", [result], [x], loc=loc, ip=ip).result


__all__ = ["BUILDERS", "UNARY_OPS", "BINARY_OPS", "COMPARISON_DIRECTIONS", "unary", "binary", "compare", "convert",
           *(fn.__name__ for fn in BUILDERS.values())]
