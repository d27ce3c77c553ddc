"""Typed builders for StableHLO ops on top of `iree.compiler.ir`.

Each builder takes `ir.Value` operands and plain Python attributes, computes the result type, builds the
attributes and creates the op at the current (or given) insertion point. This is the only module that
spells StableHLO op names. It knows nothing about tracing: use it to build StableHLO from any Python code.

Shapes are not validated beyond what the result type needs: the frontend checks them first and raises
errors that name the user's line.
"""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np
from iree.compiler import ir

from .types import dtype_of, element_type, shape_of, tensor_type

__all__ = [
    "constant", "iota", "convert", "broadcast_in_dim", "reshape", "transpose", "compare", "select",
    "reduce", "dot_general", "unary", "binary", "is_finite", "UNARY_OPS", "BINARY_OPS", "COMPARISON_DIRECTIONS",
]


def _create(name, results, operands=(), attributes=None, regions=0, *, loc=None, ip=None):
    if loc is not None:  # `"stablehlo.add"(file:line)`: the name survives fusion, so explain can report it
        loc = ir.Location.name(name, childLoc=loc)
    return ir.Operation.create(name, results=list(results), operands=list(operands),
                               attributes=attributes or {}, regions=regions, loc=loc, ip=ip)


def _i64_array(values) -> ir.Attribute:
    return ir.DenseI64ArrayAttr.get([int(v) for v in values])


# --- elementwise ---------------------------------------------------------------------------------

# Ops whose result type is their operand's type. Names are the StableHLO names without the prefix.
UNARY_OPS = (
    "negate", "abs", "sign", "not", "exponential", "exponential_minus_one", "log", "log_plus_one",
    "sqrt", "rsqrt", "cbrt", "tanh", "logistic", "sine", "cosine", "tan", "floor", "ceil",
    "round_nearest_even", "round_nearest_afz", "popcnt", "count_leading_zeros",
)
BINARY_OPS = (
    "add", "subtract", "multiply", "divide", "remainder", "power", "maximum", "minimum", "and", "or",
    "xor", "shift_left", "shift_right_arithmetic", "shift_right_logical", "atan2",
)


def unary(op: str, x: ir.Value, *, loc=None, ip=None) -> ir.Value:
    """`stablehlo.<op> x` for an op of UNARY_OPS; the result has x's type."""
    if op not in UNARY_OPS:
        raise ValueError(f"unknown StableHLO unary op {op!r}")
    return _create(f"stablehlo.{op}", [x.type], [x], loc=loc, ip=ip).result


def binary(op: str, lhs: ir.Value, rhs: ir.Value, *, loc=None, ip=None) -> ir.Value:
    """`stablehlo.<op> lhs, rhs` for an op of BINARY_OPS; operands share one type, so does the result."""
    if op not in BINARY_OPS:
        raise ValueError(f"unknown StableHLO binary op {op!r}")
    if lhs.type != rhs.type:
        raise ValueError(f"stablehlo.{op}: operand types differ: {lhs.type} vs {rhs.type}")
    return _create(f"stablehlo.{op}", [lhs.type], [lhs, rhs], loc=loc, ip=ip).result


def is_finite(x: ir.Value, *, loc=None, ip=None) -> ir.Value:
    result = ir.RankedTensorType.get(shape_of(x.type), ir.IntegerType.get_signless(1))
    return _create("stablehlo.is_finite", [result], [x], loc=loc, ip=ip).result


COMPARISON_DIRECTIONS = ("EQ", "NE", "LT", "LE", "GT", "GE")


def _compare_type(dtype: np.dtype) -> str:
    if dtype.kind == "f" or dtype.name == "bfloat16":
        return "FLOAT"
    if dtype.kind == "u" or dtype.kind == "b":
        return "UNSIGNED"
    return "SIGNED"


def compare(lhs: ir.Value, rhs: ir.Value, direction: str, *, loc=None, ip=None) -> ir.Value:
    """`stablehlo.compare direction, lhs, rhs` giving i1; the comparison type follows the dtype."""
    if direction not in COMPARISON_DIRECTIONS:
        raise ValueError(f"comparison direction must be one of {COMPARISON_DIRECTIONS}, not {direction!r}")
    kind = _compare_type(dtype_of(lhs.type))
    result = ir.RankedTensorType.get(shape_of(lhs.type), ir.IntegerType.get_signless(1))
    attrs = {
        "comparison_direction": ir.Attribute.parse(f"#stablehlo<comparison_direction {direction}>"),
        "compare_type": ir.Attribute.parse(f"#stablehlo<comparison_type {kind}>"),
    }
    return _create("stablehlo.compare", [result], [lhs, rhs], attrs, loc=loc, ip=ip).result


def select(pred: ir.Value, on_true: ir.Value, on_false: ir.Value, *, loc=None, ip=None) -> ir.Value:
    return _create("stablehlo.select", [on_true.type], [pred, on_true, on_false], loc=loc, ip=ip).result


# --- creation and conversion ---------------------------------------------------------------------

def constant(value, dtype=None, *, loc=None, ip=None) -> ir.Value:
    """`stablehlo.constant` holding a numpy array (or scalar) of a supported dtype."""
    array = np.asarray(value, dtype=dtype)
    result = tensor_type(array.shape, array.dtype)
    if array.dtype.kind in "biuf" and array.dtype.name != "bfloat16":
        attr = ir.DenseElementsAttr.get(np.ascontiguousarray(array), type=result)
    else:  # bfloat16 and friends: hand MLIR the raw bits
        bits = np.ascontiguousarray(array).view(np.dtype(f"u{array.dtype.itemsize}"))
        attr = ir.DenseElementsAttr.get(bits, type=result.element_type, shape=list(array.shape))
    return _create("stablehlo.constant", [result], attributes={"value": attr}, loc=loc, ip=ip).result


def iota(shape: Sequence[int], dimension: int, dtype, *, loc=None, ip=None) -> ir.Value:
    """Counts 0, 1, 2 ... along `dimension` of a tensor of `shape`."""
    attrs = {"iota_dimension": ir.IntegerAttr.get(ir.IntegerType.get_signless(64), dimension)}
    return _create("stablehlo.iota", [tensor_type(shape, dtype)], attributes=attrs, loc=loc, ip=ip).result


def convert(x: ir.Value, dtype, *, loc=None, ip=None) -> ir.Value:
    result = ir.RankedTensorType.get(shape_of(x.type), element_type(dtype))
    return _create("stablehlo.convert", [result], [x], loc=loc, ip=ip).result


# --- shape ---------------------------------------------------------------------------------------

def _with_shape(x: ir.Value, shape) -> ir.RankedTensorType:
    return ir.RankedTensorType.get(list(shape), ir.RankedTensorType(x.type).element_type)


def broadcast_in_dim(x: ir.Value, shape: Sequence[int], dimensions: Sequence[int], *, loc=None,
                     ip=None) -> ir.Value:
    """Operand dimension i becomes result dimension `dimensions[i]` of a tensor of `shape`."""
    attrs = {"broadcast_dimensions": _i64_array(dimensions)}
    return _create("stablehlo.broadcast_in_dim", [_with_shape(x, shape)], [x], attrs, loc=loc, ip=ip).result


def reshape(x: ir.Value, shape: Sequence[int], *, loc=None, ip=None) -> ir.Value:
    return _create("stablehlo.reshape", [_with_shape(x, shape)], [x], loc=loc, ip=ip).result


def transpose(x: ir.Value, permutation: Sequence[int], *, loc=None, ip=None) -> ir.Value:
    shape = shape_of(x.type)
    result = _with_shape(x, [shape[p] for p in permutation])
    attrs = {"permutation": _i64_array(permutation)}
    return _create("stablehlo.transpose", [result], [x], attrs, loc=loc, ip=ip).result


# --- reductions and contractions -----------------------------------------------------------------

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
        results.append(_with_shape(x, [d for i, d in enumerate(shape) if i not in dims]))
    op = _create("stablehlo.reduce", results, [*inputs, *init_values],
                 {"dimensions": _i64_array(dimensions)}, regions=1, loc=loc, ip=ip)
    scalar_types = [ir.RankedTensorType.get([], ir.RankedTensorType(v.type).element_type)
                    for v in init_values]
    block = op.regions[0].blocks.append(*scalar_types, *scalar_types)
    with ir.InsertionPoint(block), loc or ir.Location.unknown():
        args = list(block.arguments)
        if isinstance(body, str):
            new = [binary(body, args[0], args[1])]
        else:
            new = list(body(*args))
        _create("stablehlo.return", [], new)
    return list(op.results)


def _dot_attr(lhs_batch, rhs_batch, lhs_contract, rhs_contract) -> ir.Attribute:
    def dims(values):
        return "[" + ", ".join(str(int(v)) for v in values) + "]"
    return ir.Attribute.parse(
        f"#stablehlo.dot<lhs_batching_dimensions = {dims(lhs_batch)}, "
        f"rhs_batching_dimensions = {dims(rhs_batch)}, "
        f"lhs_contracting_dimensions = {dims(lhs_contract)}, "
        f"rhs_contracting_dimensions = {dims(rhs_contract)}>")


def dot_general(lhs: ir.Value, rhs: ir.Value, *, lhs_batch: Sequence[int] = (), rhs_batch: Sequence[int] = (),
                lhs_contract: Sequence[int], rhs_contract: Sequence[int], dtype=None, loc=None,
                ip=None) -> ir.Value:
    """Contract lhs_contract with rhs_contract, batching over the batch dimensions.

    The result's dimensions are the batch dimensions, then lhs's free ones, then rhs's free ones;
    its element type is `dtype` (default: lhs's).
    """
    lhs_shape, rhs_shape = shape_of(lhs.type), shape_of(rhs.type)
    lhs_free = [d for i, d in enumerate(lhs_shape) if i not in set(lhs_batch) | set(lhs_contract)]
    rhs_free = [d for i, d in enumerate(rhs_shape) if i not in set(rhs_batch) | set(rhs_contract)]
    shape = [lhs_shape[i] for i in lhs_batch] + lhs_free + rhs_free
    result = tensor_type(shape, dtype if dtype is not None else dtype_of(lhs.type))
    attrs = {"dot_dimension_numbers": _dot_attr(lhs_batch, rhs_batch, lhs_contract, rhs_contract)}
    return _create("stablehlo.dot_general", [result], [lhs, rhs], attrs, loc=loc, ip=ip).result
