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
    "convolution", "reduce_window",
    "concatenate", "slice", "pad", "reverse",
    "if_", "case", "while_", "dynamic_slice", "dynamic_update_slice",
    "gather", "scatter",
    "bitcast_convert", "sort",
    "optimization_barrier", "map",
    "real", "imag", "complex", "fft",
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
    if array.dtype.kind in "biufc" and array.dtype.name != "bfloat16":
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


def _part_type(x: ir.Value) -> ir.RankedTensorType:
    element = ir.ComplexType(ir.RankedTensorType(x.type).element_type).element_type
    return ir.RankedTensorType.get(shape_of(x.type), element)


def real(x: ir.Value, *, loc=None, ip=None) -> ir.Value:
    """`stablehlo.real`: the real part of a complex tensor, as a float tensor."""
    return _create("stablehlo.real", [_part_type(x)], [x], loc=loc, ip=ip).result


def imag(x: ir.Value, *, loc=None, ip=None) -> ir.Value:
    """`stablehlo.imag`: the imaginary part of a complex tensor, as a float tensor."""
    return _create("stablehlo.imag", [_part_type(x)], [x], loc=loc, ip=ip).result


def complex(re: ir.Value, im: ir.Value, *, loc=None, ip=None) -> ir.Value:  # noqa: A001  (StableHLO's name)
    """`stablehlo.complex re, im`: a complex tensor from two float tensors of one type."""
    element = ir.ComplexType.get(ir.RankedTensorType(re.type).element_type)
    result = ir.RankedTensorType.get(shape_of(re.type), element)
    return _create("stablehlo.complex", [result], [re, im], loc=loc, ip=ip).result


FFT_TYPES = ("FFT", "IFFT", "RFFT", "IRFFT")


def fft(x: ir.Value, fft_type: str, length: Sequence[int], *, loc=None, ip=None) -> ir.Value:
    """`stablehlo.fft` over the trailing len(length) dimensions. RFFT takes floats and keeps n//2 + 1
    complex elements of the last one; IRFFT takes those and gives `length[-1]` floats."""
    if fft_type not in FFT_TYPES:
        raise ValueError(f"fft_type must be one of {FFT_TYPES}, not {fft_type!r}")
    shape, element = list(shape_of(x.type)), ir.RankedTensorType(x.type).element_type
    if fft_type == "RFFT":
        shape[-1], element = length[-1] // 2 + 1, ir.ComplexType.get(element)
    elif fft_type == "IRFFT":
        shape[-1], element = length[-1], ir.ComplexType(element).element_type
    attrs = {"fft_type": ir.Attribute.parse(f"#stablehlo<fft_type {fft_type}>"), "fft_length": _i64_array(length)}
    return _create("stablehlo.fft", [ir.RankedTensorType.get(shape, element)], [x], attrs, loc=loc, ip=ip).result


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


# --- convolution and windowed reductions (nn) ------------------------------------------------------

def _conv_dims_attr(spec: str) -> ir.Attribute:
    return ir.Attribute.parse(f"#stablehlo.conv<{spec}>")


def _conv_output_shape(lhs_shape, rhs_shape, spec: str, strides, padding, lhs_dilation, rhs_dilation,
                      batch_group_count: int = 1) -> list[int]:
    """Result shape of a convolution whose dimension numbers are `spec` ("[b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1]")."""
    lhs_spec, rest = spec.split("x")
    rhs_spec, out_spec = rest.split("->")
    parse = lambda s: [t.strip() for t in s.strip()[1:-1].split(",")]  # noqa: E731
    lhs_spec, rhs_spec, out_spec = parse(lhs_spec), parse(rhs_spec), parse(out_spec)
    spatial = sorted(t for t in lhs_spec if t.isdigit())
    sizes = {"b": lhs_shape[lhs_spec.index("b")] // batch_group_count, "f": rhs_shape[rhs_spec.index("o")]}
    for i, s in enumerate(spatial):
        size = (lhs_shape[lhs_spec.index(s)] - 1) * lhs_dilation[i] + 1 + padding[i][0] + padding[i][1]
        window = (rhs_shape[rhs_spec.index(s)] - 1) * rhs_dilation[i] + 1
        sizes[s] = max(0, (size - window) // strides[i] + 1) if size >= window else 0
    return [sizes[t] for t in out_spec]


def convolution(lhs: ir.Value, rhs: ir.Value, *, dimension_numbers: str, strides: Sequence[int],
                padding: Sequence[Sequence[int]], lhs_dilation: Sequence[int], rhs_dilation: Sequence[int],
                feature_group_count: int = 1, batch_group_count: int = 1, dtype=None, loc=None, ip=None) -> ir.Value:
    """`stablehlo.convolution`; `dimension_numbers` as StableHLO prints it, e.g. for NCHW input, OIHW
    kernel: "[b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1]". The result shape is computed from the window."""
    shape = _conv_output_shape(shape_of(lhs.type), shape_of(rhs.type), dimension_numbers, strides, padding,
                              lhs_dilation, rhs_dilation, batch_group_count)
    result = tensor_type(shape, dtype if dtype is not None else dtype_of(lhs.type))
    i64 = ir.IntegerType.get_signless(64)
    attrs = {
        "dimension_numbers": _conv_dims_attr(dimension_numbers),
        "window_strides": _i64_array(strides),
        "padding": ir.DenseElementsAttr.get(np.asarray(padding, dtype=np.int64).reshape(len(strides), 2)),
        "lhs_dilation": _i64_array(lhs_dilation),
        "rhs_dilation": _i64_array(rhs_dilation),
        "feature_group_count": ir.IntegerAttr.get(i64, feature_group_count),
        "batch_group_count": ir.IntegerAttr.get(i64, batch_group_count),
    }
    return _create("stablehlo.convolution", [result], [lhs, rhs], attrs, loc=loc, ip=ip).result


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
        results.append(_with_shape(x, out))
    attrs = {"window_dimensions": _i64_array(window), "window_strides": _i64_array(strides),
             "padding": ir.DenseElementsAttr.get(np.asarray(padding, dtype=np.int64).reshape(len(window), 2))}
    op = _create("stablehlo.reduce_window", results, [*inputs, *init_values], attrs, regions=1, loc=loc, ip=ip)
    scalar_types = [ir.RankedTensorType.get([], ir.RankedTensorType(v.type).element_type) for v in init_values]
    block = op.regions[0].blocks.append(*scalar_types, *scalar_types)
    with ir.InsertionPoint(block), loc or ir.Location.unknown():
        args = list(block.arguments)
        new = [binary(body, args[0], args[1])] if isinstance(body, str) else list(body(*args))
        _create("stablehlo.return", [], new)
    return list(op.results)


# --- joining, slicing, padding, reversing (shape family) ---------------------------------------------
# `slice` shadows the builtin inside this module, as the other builders carry their op's name.

def concatenate(inputs: Sequence[ir.Value], dimension: int, *, loc=None, ip=None) -> ir.Value:
    """Join `inputs` (same element type, same sizes except along `dimension`) along `dimension`."""
    shapes = [shape_of(v.type) for v in inputs]
    shape = list(shapes[0])
    shape[dimension] = sum(s[dimension] for s in shapes)
    attrs = {"dimension": ir.IntegerAttr.get(ir.IntegerType.get_signless(64), int(dimension))}
    return _create("stablehlo.concatenate", [_with_shape(inputs[0], shape)], inputs, attrs, loc=loc, ip=ip).result


def slice(x: ir.Value, start: Sequence[int], limit: Sequence[int], strides: Sequence[int] | None = None, *,
          loc=None, ip=None) -> ir.Value:
    """Elements start[d], start[d] + strides[d], ... below limit[d] of each dimension d (static bounds)."""
    strides = [1] * len(start) if strides is None else list(strides)
    shape = [max(0, -(-(hi - lo) // st)) for lo, hi, st in zip(start, limit, strides)]
    attrs = {"start_indices": _i64_array(start), "limit_indices": _i64_array(limit), "strides": _i64_array(strides)}
    return _create("stablehlo.slice", [_with_shape(x, shape)], [x], attrs, loc=loc, ip=ip).result


def pad(x: ir.Value, padding_value: ir.Value, low: Sequence[int], high: Sequence[int],
        interior: Sequence[int] | None = None, *, loc=None, ip=None) -> ir.Value:
    """`padding_value` (a 0-d tensor) `low[d]` times before, `high[d]` times after and `interior[d]` times
    between the elements of dimension d; negative low/high crop."""
    interior = [0] * len(low) if interior is None else list(interior)
    shape = [lo + hi + d + max(d - 1, 0) * i for d, lo, hi, i in zip(shape_of(x.type), low, high, interior)]
    attrs = {"edge_padding_low": _i64_array(low), "edge_padding_high": _i64_array(high),
             "interior_padding": _i64_array(interior)}
    return _create("stablehlo.pad", [_with_shape(x, shape)],
                   [x, padding_value], attrs, loc=loc, ip=ip).result


def reverse(x: ir.Value, dimensions: Sequence[int], *, loc=None, ip=None) -> ir.Value:
    """x with the order of its elements reversed along each of `dimensions`."""
    attrs = {"dimensions": _i64_array(dimensions)}
    return _create("stablehlo.reverse", [x.type], [x], attrs, loc=loc, ip=ip).result


# --- control flow: if, case, while (control family) -------------------------------------------------
# A region body is a callable that builds its ops at the insertion point the builder sets (inside the
# region's block) and returns the values the region yields; the builder adds the `stablehlo.return`.
# Bodies may use values of the enclosing block (StableHLO regions capture them).

def _types(values) -> str:
    return "(" + ", ".join(str(v.type) for v in values) + ")"


def _branches(name: str, operands, bodies, loc, ip) -> list[ir.Value]:
    """Build each body into a region of a scratch op first: the result types are only known once the
    bodies are built. Then create the op with those types and move the blocks into its regions."""
    scratch = _create(name, [], operands, regions=len(bodies), loc=loc, ip=ip)
    try:
        returned = []
        for region, body in zip(scratch.regions, bodies):
            block = region.blocks.append()
            with ir.InsertionPoint(block), loc or ir.Location.unknown():
                values = list(body())
                _create("stablehlo.return", [], values)
            returned.append(values)
        for i, values in enumerate(returned[1:], 1):
            if [v.type for v in values] != [v.type for v in returned[0]]:
                raise ValueError(f"{name}: branch {i} returns {_types(values)} but branch 0 returns "
                                 f"{_types(returned[0])}")
        op = _create(name, [v.type for v in returned[0]], operands, regions=len(bodies), loc=loc,
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
    op = _create("stablehlo.while", types, operands, regions=2, loc=loc, ip=ip)
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
                _create("stablehlo.return", [], values)
    except BaseException:
        op.erase()
        raise
    return list(op.results)


# --- dynamic slices (control family: scan reads and writes one step at a time) -----------------------

def dynamic_slice(x: ir.Value, start_indices: Sequence[ir.Value], slice_sizes: Sequence[int], *, loc=None,
                  ip=None) -> ir.Value:
    """The block of `slice_sizes` starting at `start_indices` (one 0-d integer tensor per dimension,
    clamped so the block stays inside x, as StableHLO defines)."""
    attrs = {"slice_sizes": _i64_array(slice_sizes)}
    return _create("stablehlo.dynamic_slice", [_with_shape(x, slice_sizes)], [x, *start_indices], attrs,
                   loc=loc, ip=ip).result


def dynamic_update_slice(x: ir.Value, update: ir.Value, start_indices: Sequence[ir.Value], *, loc=None,
                         ip=None) -> ir.Value:
    """x with the block at `start_indices` (clamped so `update` fits inside x) replaced by `update`."""
    return _create("stablehlo.dynamic_update_slice", [x.type], [x, update, *start_indices], loc=loc,
                   ip=ip).result


# --- gather and scatter (indexing family) ----------------------------------------------------------

def _dims_attr(kind: str, fields) -> ir.Attribute:
    """`#stablehlo.<kind><name = [..], ..., index_vector_dim = n>`; empty batching lists are left out,
    as MLIR prints them."""
    parts = []
    for name, value in fields:
        if isinstance(value, int):
            parts.append(f"{name} = {value}")
        elif value or "batching" not in name:
            parts.append(f"{name} = [{', '.join(str(int(v)) for v in value)}]")
    return ir.Attribute.parse(f"#stablehlo.{kind}<{', '.join(parts)}>")


def gather(operand: ir.Value, start_indices: ir.Value, *, offset_dims: Sequence[int],
           collapsed_slice_dims: Sequence[int], start_index_map: Sequence[int], index_vector_dim: int,
           slice_sizes: Sequence[int], operand_batching_dims: Sequence[int] = (),
           start_indices_batching_dims: Sequence[int] = (), indices_are_sorted: bool = False, loc=None,
           ip=None) -> ir.Value:
    """`stablehlo.gather`: for each index vector of `start_indices` (along `index_vector_dim`), the block
    of `slice_sizes` of `operand` starting there (starts clamped so the block fits, as StableHLO says).

    The result's dimensions are the batch dimensions (those of `start_indices` but `index_vector_dim`)
    and, at the positions `offset_dims`, the block's dimensions that are neither collapsed nor batching.
    """
    index_shape = list(shape_of(start_indices.type))
    batch = [d for i, d in enumerate(index_shape) if i != index_vector_dim]
    dropped = set(collapsed_slice_dims) | set(operand_batching_dims)
    offsets = iter([s for i, s in enumerate(slice_sizes) if i not in dropped])
    batches = iter(batch)
    shape = [next(offsets) if r in set(offset_dims) else next(batches)
             for r in range(len(batch) + len(offset_dims))]
    attrs = {
        "dimension_numbers": _dims_attr("gather", [
            ("offset_dims", offset_dims), ("collapsed_slice_dims", collapsed_slice_dims),
            ("operand_batching_dims", operand_batching_dims),
            ("start_indices_batching_dims", start_indices_batching_dims),
            ("start_index_map", start_index_map), ("index_vector_dim", int(index_vector_dim))]),
        "slice_sizes": _i64_array(slice_sizes),
        "indices_are_sorted": ir.BoolAttr.get(bool(indices_are_sorted)),
    }
    return _create("stablehlo.gather", [_with_shape(operand, shape)], [operand, start_indices], attrs,
                   loc=loc, ip=ip).result


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
        "scatter_dimension_numbers": _dims_attr("scatter", [
            ("update_window_dims", update_window_dims), ("inserted_window_dims", inserted_window_dims),
            ("input_batching_dims", input_batching_dims),
            ("scatter_indices_batching_dims", scatter_indices_batching_dims),
            ("scatter_dims_to_operand_dims", scatter_dims_to_operand_dims),
            ("index_vector_dim", int(index_vector_dim))]),
        "indices_are_sorted": ir.BoolAttr.get(bool(indices_are_sorted)),
        "unique_indices": ir.BoolAttr.get(bool(unique_indices)),
    }
    op = _create("stablehlo.scatter", [operand.type], [operand, scatter_indices, updates], attrs, regions=1,
                 loc=loc, ip=ip)
    scalar = ir.RankedTensorType.get([], ir.RankedTensorType(operand.type).element_type)
    block = op.regions[0].blocks.append(scalar, scalar)
    try:
        with ir.InsertionPoint(block), loc or ir.Location.unknown():
            current, update = block.arguments
            new = [binary(body, current, update)] if isinstance(body, str) else list(body(current, update))
            _create("stablehlo.return", [], new)
    except BaseException:
        op.erase()
        raise
    return op.result


# --- bit casts and sorting (math family) -------------------------------------------------------------

def bitcast_convert(x: ir.Value, dtype, *, loc=None, ip=None) -> ir.Value:
    """x's bits read as `dtype`. Same width: same shape. A narrower dtype adds a trailing dimension of
    (input bits / output bits) elements; a wider one consumes x's trailing dimension, which must have
    that many elements (StableHLO's rule)."""
    source, target = dtype_of(x.type), np.dtype(dtype)
    shape = list(shape_of(x.type))
    in_bits, out_bits = 8 * source.itemsize, 8 * target.itemsize
    if out_bits < in_bits:
        shape.append(in_bits // out_bits)
    elif out_bits > in_bits:
        if not shape or shape[-1] != out_bits // in_bits:
            raise ValueError(f"stablehlo.bitcast_convert: {x.type} to {target} needs a trailing dimension of "
                             f"{out_bits // in_bits}")
        shape.pop()
    return _create("stablehlo.bitcast_convert", [tensor_type(shape, target)], [x], loc=loc, ip=ip).result


def sort(inputs: Sequence[ir.Value], dimension: int, comparator: Callable[..., ir.Value], *,
         is_stable: bool = False, loc=None, ip=None) -> list[ir.Value]:
    """`stablehlo.sort` of same-shaped `inputs` together along `dimension`, ordered by `comparator`,
    which receives 0-d block arguments (lhs_0, rhs_0, lhs_1, rhs_1, ...) and returns a 0-d i1 that is
    true when lhs goes before rhs."""
    op = _create("stablehlo.sort", [v.type for v in inputs], inputs,
                 {"dimension": ir.IntegerAttr.get(ir.IntegerType.get_signless(64), int(dimension)),
                  "is_stable": ir.BoolAttr.get(bool(is_stable))}, regions=1, loc=loc, ip=ip)
    scalars = [ir.RankedTensorType.get([], ir.RankedTensorType(v.type).element_type) for v in inputs]
    block = op.regions[0].blocks.append(*[t for t in scalars for _ in (0, 1)])
    try:
        with ir.InsertionPoint(block), loc or ir.Location.unknown():
            _create("stablehlo.return", [], [comparator(*block.arguments)])
    except BaseException:
        op.erase()
        raise
    return list(op.results)


# --- optimization barrier and map (random family) ----------------------------------------------------
# `map` shadows the builtin inside this module, as `slice` does: use comprehensions here.

def optimization_barrier(values: Sequence[ir.Value], *, loc=None, ip=None) -> list[ir.Value]:
    """The values, unchanged, but opaque to the compiler: nothing is folded, reordered or fused across
    the barrier (IREE's llvm-cpu contracts a * b + c into an fma otherwise, so bits would differ from
    targets that round the product)."""
    return list(_create("stablehlo.optimization_barrier", [v.type for v in values], values, loc=loc,
                        ip=ip).results)


def map(inputs: Sequence[ir.Value], body: Callable[..., ir.Value], *, loc=None, ip=None) -> ir.Value:
    """`stablehlo.map`: `body` (given one 0-d block argument per input, returning one 0-d value) applied
    to every element of the same-shaped `inputs`; the result has the body's element type. IREE keeps the
    body as one loop body, so a long scalar computation (a hash) costs one op to compile, not a graph of
    hundreds of elementwise ops to fuse."""
    shape = shape_of(inputs[0].type)
    op = _create("stablehlo.map", [inputs[0].type], inputs, {"dimensions": _i64_array(range(len(shape)))},
                 regions=1, loc=loc, ip=ip)
    scalars = [ir.RankedTensorType.get([], ir.RankedTensorType(v.type).element_type) for v in inputs]
    block = op.regions[0].blocks.append(*scalars)
    try:
        with ir.InsertionPoint(block), loc or ir.Location.unknown():
            value = body(*block.arguments)
            if shape_of(value.type) != ():
                raise ValueError(f"stablehlo.map: the body returns {value.type}, it must return a 0-d tensor")
            _create("stablehlo.return", [], [value])
    except BaseException:
        op.erase()
        raise
    op.result.set_type(ir.RankedTensorType.get(list(shape), ir.RankedTensorType(value.type).element_type))
    return op.result
