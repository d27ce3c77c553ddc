"""Typed builders for StableHLO ops on top of `iree.compiler.ir`: the one namespace (`hlo.<op>`) of them all.

Each builder takes `ir.Value` operands and plain Python attributes, computes the result type, builds the
attributes and creates the op at the current insertion point, or at `ip=`, located at `loc=` (both
keyword-only, as in MLIR's Python dialects). The op names, arities and the result-type rules of the
elementwise ops are records of registry.py; elementwise.py generates those ops' builders from them,
regions.py holds the ops that take a body, this module the structured ops. It knows nothing about
tracing: use it to build StableHLO from any Python code.

Shapes are not validated beyond what the result type needs: the frontend checks them first and raises
errors that name the user's line.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
from iree.compiler import ir

from . import elementwise, regions
from .build import create, dims_attr, i64_array, with_shape
from .elementwise import *  # noqa: F401,F403  (the elementwise builders, unary, binary, compare, convert)
from .regions import *  # noqa: F401,F403  (reduce, reduce_window, select_and_scatter, if_, case, while_, ...)
from .types import dtype_of, shape_of, tensor_type

__all__ = [
    *elementwise.__all__, *regions.__all__,
    "constant", "iota", "fft", "FFT_TYPES", "broadcast_in_dim", "reshape", "transpose", "dot_general",
    "convolution", "concatenate", "slice", "pad", "reverse", "dynamic_slice", "dynamic_update_slice",
    "gather", "bitcast_convert", "optimization_barrier", "composite",
]


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
    return create("stablehlo.constant", [result], attributes={"value": attr}, loc=loc, ip=ip).result


def iota(shape: Sequence[int], dimension: int, dtype, *, loc=None, ip=None) -> ir.Value:
    """Counts 0, 1, 2 ... along `dimension` of a tensor of `shape`."""
    attrs = {"iota_dimension": ir.IntegerAttr.get(ir.IntegerType.get_signless(64), dimension)}
    return create("stablehlo.iota", [tensor_type(shape, dtype)], attributes=attrs, loc=loc, ip=ip).result


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
    attrs = {"fft_type": ir.Attribute.parse(f"#stablehlo<fft_type {fft_type}>"), "fft_length": i64_array(length)}
    return create("stablehlo.fft", [ir.RankedTensorType.get(shape, element)], [x], attrs, loc=loc, ip=ip).result


# --- shape ---------------------------------------------------------------------------------------

def broadcast_in_dim(x: ir.Value, shape: Sequence[int], dimensions: Sequence[int], *, loc=None,
                     ip=None) -> ir.Value:
    """Operand dimension i becomes result dimension `dimensions[i]` of a tensor of `shape`."""
    attrs = {"broadcast_dimensions": i64_array(dimensions)}
    return create("stablehlo.broadcast_in_dim", [with_shape(x, shape)], [x], attrs, loc=loc, ip=ip).result


def reshape(x: ir.Value, shape: Sequence[int], *, loc=None, ip=None) -> ir.Value:
    return create("stablehlo.reshape", [with_shape(x, shape)], [x], loc=loc, ip=ip).result


def transpose(x: ir.Value, permutation: Sequence[int], *, loc=None, ip=None) -> ir.Value:
    shape = shape_of(x.type)
    result = with_shape(x, [shape[p] for p in permutation])
    attrs = {"permutation": i64_array(permutation)}
    return create("stablehlo.transpose", [result], [x], attrs, loc=loc, ip=ip).result


# --- reductions and contractions -----------------------------------------------------------------

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
    return create("stablehlo.dot_general", [result], [lhs, rhs], attrs, loc=loc, ip=ip).result


# --- convolution (nn family; reduce_window, with its body, is in regions.py) -------------------------

def _conv_dims_attr(spec: str) -> ir.Attribute:
    return ir.Attribute.parse(f"#stablehlo.conv<{spec}>")


def conv_spec_text(lhs_spec: Sequence[int], rhs_spec: Sequence[int], out_spec: Sequence[int]) -> str:
    """Dimension numbers as `convolution` takes them from JAX's index tuples (lhs (batch, feature, *spatial),
    rhs (out, in, *spatial), out (batch, feature, *spatial), each the axes they are): "[b, f, 0, 1]x..."."""
    def labels(spec, first, second):
        out = [""] * len(spec)
        out[spec[0]], out[spec[1]] = first, second
        for i, d in enumerate(spec[2:]):
            out[d] = str(i)
        return "[" + ", ".join(out) + "]"
    return f"{labels(lhs_spec, 'b', 'f')}x{labels(rhs_spec, 'o', 'i')}->{labels(out_spec, 'b', 'f')}"


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
        "window_strides": i64_array(strides),
        "padding": ir.DenseElementsAttr.get(np.asarray(padding, dtype=np.int64).reshape(len(strides), 2)),
        "lhs_dilation": i64_array(lhs_dilation),
        "rhs_dilation": i64_array(rhs_dilation),
        "feature_group_count": ir.IntegerAttr.get(i64, feature_group_count),
        "batch_group_count": ir.IntegerAttr.get(i64, batch_group_count),
    }
    return create("stablehlo.convolution", [result], [lhs, rhs], attrs, loc=loc, ip=ip).result


# --- joining, slicing, padding, reversing (shape family) ---------------------------------------------
# `slice` shadows the builtin inside this module, as the other builders carry their op's name.

def concatenate(inputs: Sequence[ir.Value], dimension: int, *, loc=None, ip=None) -> ir.Value:
    """Join `inputs` (same element type, same sizes except along `dimension`) along `dimension`."""
    shapes = [shape_of(v.type) for v in inputs]
    shape = list(shapes[0])
    shape[dimension] = sum(s[dimension] for s in shapes)
    attrs = {"dimension": ir.IntegerAttr.get(ir.IntegerType.get_signless(64), int(dimension))}
    return create("stablehlo.concatenate", [with_shape(inputs[0], shape)], inputs, attrs, loc=loc, ip=ip).result


def slice(x: ir.Value, start: Sequence[int], limit: Sequence[int], strides: Sequence[int] | None = None, *,
          loc=None, ip=None) -> ir.Value:
    """Elements start[d], start[d] + strides[d], ... below limit[d] of each dimension d (static bounds)."""
    strides = [1] * len(start) if strides is None else list(strides)
    shape = [max(0, -(-(hi - lo) // st)) for lo, hi, st in zip(start, limit, strides)]
    attrs = {"start_indices": i64_array(start), "limit_indices": i64_array(limit), "strides": i64_array(strides)}
    return create("stablehlo.slice", [with_shape(x, shape)], [x], attrs, loc=loc, ip=ip).result


def pad(x: ir.Value, padding_value: ir.Value, low: Sequence[int], high: Sequence[int],
        interior: Sequence[int] | None = None, *, loc=None, ip=None) -> ir.Value:
    """`padding_value` (a 0-d tensor) `low[d]` times before, `high[d]` times after and `interior[d]` times
    between the elements of dimension d; negative low/high crop."""
    interior = [0] * len(low) if interior is None else list(interior)
    shape = [lo + hi + d + max(d - 1, 0) * i for d, lo, hi, i in zip(shape_of(x.type), low, high, interior)]
    attrs = {"edge_padding_low": i64_array(low), "edge_padding_high": i64_array(high),
             "interior_padding": i64_array(interior)}
    return create("stablehlo.pad", [with_shape(x, shape)],
                  [x, padding_value], attrs, loc=loc, ip=ip).result


def reverse(x: ir.Value, dimensions: Sequence[int], *, loc=None, ip=None) -> ir.Value:
    """x with the order of its elements reversed along each of `dimensions`."""
    attrs = {"dimensions": i64_array(dimensions)}
    return create("stablehlo.reverse", [x.type], [x], attrs, loc=loc, ip=ip).result


# --- dynamic slices (control family: scan reads and writes one step at a time) -----------------------

def dynamic_slice(x: ir.Value, start_indices: Sequence[ir.Value], slice_sizes: Sequence[int], *, loc=None,
                  ip=None) -> ir.Value:
    """The block of `slice_sizes` starting at `start_indices` (one 0-d integer tensor per dimension,
    clamped so the block stays inside x, as StableHLO defines)."""
    attrs = {"slice_sizes": i64_array(slice_sizes)}
    return create("stablehlo.dynamic_slice", [with_shape(x, slice_sizes)], [x, *start_indices], attrs,
                  loc=loc, ip=ip).result


def dynamic_update_slice(x: ir.Value, update: ir.Value, start_indices: Sequence[ir.Value], *, loc=None,
                         ip=None) -> ir.Value:
    """x with the block at `start_indices` (clamped so `update` fits inside x) replaced by `update`."""
    return create("stablehlo.dynamic_update_slice", [x.type], [x, update, *start_indices], loc=loc,
                  ip=ip).result


# --- gather (indexing family; scatter, with its body, is in regions.py) -----------------------------

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
        "dimension_numbers": dims_attr("gather", [
            ("offset_dims", offset_dims), ("collapsed_slice_dims", collapsed_slice_dims),
            ("operand_batching_dims", operand_batching_dims),
            ("start_indices_batching_dims", start_indices_batching_dims),
            ("start_index_map", start_index_map), ("index_vector_dim", int(index_vector_dim))]),
        "slice_sizes": i64_array(slice_sizes),
        "indices_are_sorted": ir.BoolAttr.get(bool(indices_are_sorted)),
    }
    return create("stablehlo.gather", [with_shape(operand, shape)], [operand, start_indices], attrs,
                  loc=loc, ip=ip).result


# --- bit casts (math family) ----------------------------------------------------------------------

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
    return create("stablehlo.bitcast_convert", [tensor_type(shape, target)], [x], loc=loc, ip=ip).result


# --- optimization barrier (random family) -----------------------------------------------------------

def optimization_barrier(values: Sequence[ir.Value], *, loc=None, ip=None) -> list[ir.Value]:
    """The values, unchanged, but opaque to the compiler: nothing is folded, reordered or fused across
    the barrier (IREE's llvm-cpu contracts a * b + c into an fma otherwise, so bits would differ from
    targets that round the product)."""
    return list(create("stablehlo.optimization_barrier", [v.type for v in values], values, loc=loc,
                       ip=ip).results)


# --- composite: a named op and the function that is its meaning --------------------------------------

def composite(name: str, operands: Sequence[ir.Value], result_types: Sequence[ir.Type], decomposition: str, *,
              attributes: dict | None = None, loc=None, ip=None) -> list[ir.Value]:
    """`stablehlo.composite "name"`: calls the function @decomposition with the operands (the spec's meaning),
    while a compiler that knows `name` may run a kernel of its own instead (hlojit's llvm-cpu target does
    for some of its linalg: pipeline/kernels.py). `attributes`: the composite_attributes, ints (as i64)."""
    i64 = ir.IntegerType.get_signless(64)
    ints = {k: ir.IntegerAttr.get(i64, int(v)) for k, v in (attributes or {}).items()}
    op_attributes = {"name": ir.StringAttr.get(name), "decomposition": ir.FlatSymbolRefAttr.get(decomposition),
                     "composite_attributes": ir.DictAttr.get(ints),
                     "version": ir.IntegerAttr.get(ir.IntegerType.get_signless(32), 0)}
    return list(create("stablehlo.composite", result_types, operands, op_attributes, loc=loc, ip=ip).results)

