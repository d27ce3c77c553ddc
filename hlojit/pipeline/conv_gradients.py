"""Gradient convolutions in forms IREE runs fast: speed rewrites, on llvm-cpu before the layout pass (layout.py) and
the hand-written convolutions (matmul_kernel.py), so that what they make gets both.

JAX (and any tool that takes convolutions' gradients by transposing them) writes the input gradient of a strided
convolution as a convolution of the output gradient dilated by the strides (`lhs_dilation`). IREE 3.13 runs those
as they are, and slowly: in JAX's ResNet-18 training step through hj.from_mlir (batch 8), the stride-2 input
gradients of its layers 2-4 took 28, 159 and 508 ms of a 1.9 s step (2026-12-07, Zen 3, 2 cores). conv_phases.py
computes those of window stride 1 by stride phases (every target); `lhs_dilation_as_padding` takes the rest on
llvm-cpu: the spec defines `lhs_dilation` as zeros inserted between the input's elements before the padding, and it
writes exactly that, a `stablehlo.pad` with interior padding (and the convolution's padding as its edges, negative
ones included), leaving the convolution undilated and unpadded, which the layout pass lays out channels last and
matmul_kernel.py takes as its own (3 of every 4 input rows it reads are then zeros at stride 2: still ~20x faster
than IREE's there; the phases were 8-15% faster still in hlojit's ResNet-18 step, its compile 12.4 against 13.9 s).

A kernel's gradient is a convolution too, whose window is the whole output image and whose output positions are
the kernel's few taps (JAX's rule, and hlojit's autodiff's since 2026-12-07): in that JAX step the 7x7 stem's took
667 ms and the 3x3 layers' 20-50 ms each; IREE ran such convolutions 10-15x slower than XLA (ResNet-18 at batch 8:
64 channels at 56 x 56, 848 against 56 ms; the 7x7 stem 925 against 101). As one product of patches it runs at the
products' speed: `kernel_gradients_as_products` (every target) takes each tap's strided slice of the padded input,
[input batch, window, input batch's partner], stacked [taps, rows, channels] (each tap's rows one contiguous block:
side by side along the channels, each was a strided copy, 16-23% slower) and contracted over the rows, so that
matmul_kernel.py reads the patches from the input (PatchRows) on its flag set and IREE's data-tiled product runs
it elsewhere. hlojit's own ResNet-18 step, its kernel gradients written by autodiff as convolutions and rewritten
here: the program, its results (bit for bit) and its speed as when autodiff wrote the patches itself."""
from __future__ import annotations

import itertools
import math

import numpy as np
from iree.compiler import ir

from ..dialects import stablehlo as hlo
from ..dialects.build import i64_array
from ..dialects.types import dtype_of, shape_of
from .legalize import replace_each, walk
from .winograd import conv_attribute_int, conv_attribute_ints, conv_dimensions, transposed

MAX_TAPS = 64      # a kernel gradient's output positions at most (7 x 7 = 49 for ResNet's stem) ...
WINDOW_RATIO = 1   # ... and its window at least this many times as many elements (a forward convolution's output
#                    is bigger than its kernel: it stays one, for the layout and the hand-written convolution)
MAX_PATCH_ELEMENTS = 1 << 25   # the patches at most (128 MB of f32), as hlojit's autodiff bounds its own (ops.nn)


def _dilated(op) -> bool:
    if op.name != "stablehlo.convolution":
        return False
    spatial = len(shape_of(op.operands[0].type)) - 2
    return any(d != 1 for d in conv_attribute_ints(op, "lhs_dilation", [1] * spatial))


def lhs_dilation_as_padding(module: ir.Module) -> int:
    """Each convolution with `lhs_dilation` reads its input through a stablehlo.pad that inserts the zeros (interior
    padding) and adds the convolution's padding (edges); the convolution keeps its other attributes."""
    convolutions = [op for op in walk(module.operation) if _dilated(op)]
    for op in convolutions:
        x = op.operands[0]
        rank = len(shape_of(x.type))
        spatial = rank - 2
        dilation = conv_attribute_ints(op, "lhs_dilation", [1] * spatial)
        padding = conv_attribute_ints(op, "padding", [0] * (2 * spatial))
        axes = [conv_dimensions(op)["lhs"][s] for s in range(spatial)]
        low, high, interior = [0] * rank, [0] * rank, [0] * rank
        for s, axis in enumerate(axes):
            low[axis], high[axis], interior[axis] = padding[2 * s], padding[2 * s + 1], dilation[s] - 1
        with ir.InsertionPoint(op), op.location:
            zero = hlo.constant(0, dtype_of(x.type))
            op.operands[0] = hlo.pad(x, zero, low, high, interior)
        op.attributes["lhs_dilation"] = i64_array([1] * spatial)
        op.attributes["padding"] = ir.DenseElementsAttr.get(np.zeros((spatial, 2), np.int64))
    return len(convolutions)


def _is_kernel_gradient(op) -> bool:
    """A float convolution without input dilation or groups whose output positions are few (MAX_TAPS) against its
    window (WINDOW_RATIO): the gradient of a convolution with respect to its kernel, as JAX writes it; with patches
    of at most MAX_PATCH_ELEMENTS (where the hand-written product does not read them in place, IREE writes them)."""
    if op.name != "stablehlo.convolution":
        return False
    x, r = op.operands
    out = op.results[0]
    if len({dtype_of(v.type) for v in (x, r, out)}) != 1 or np.dtype(dtype_of(x.type)).kind != "f":
        return False
    spatial = len(shape_of(x.type)) - 2
    if spatial < 1 or _dilated(op) or conv_attribute_int(op, "feature_group_count") != 1 \
            or conv_attribute_int(op, "batch_group_count") != 1 or 0 in shape_of(out.type) + shape_of(x.type):
        return False
    dims = conv_dimensions(op)
    taps = math.prod(shape_of(out.type)[dims["out"][s]] for s in range(spatial))
    window = math.prod(shape_of(r.type)[dims["rhs"][s]] for s in range(spatial))
    patches = taps * window * shape_of(x.type)[dims["lhs"]["f"]] * shape_of(x.type)[dims["lhs"]["b"]]
    return taps <= MAX_TAPS and window >= WINDOW_RATIO * taps and patches <= MAX_PATCH_ELEMENTS


def kernel_gradients_as_products(module: ir.Module) -> int:
    """Each kernel-gradient convolution (`_is_kernel_gradient`) as one product of its input's patches."""
    return replace_each(module, _is_kernel_gradient, _as_product)


def _as_product(op) -> ir.Value:
    """out[b, o, t] = sum over i, w of x_padded[b, i, t * strides + w * rhs_dilation] r[i, o, w]: x laid out
    [i, *spatial, b], each output position t's strided slice [i, *window, b] as rows [1, i * window, b], stacked
    [taps, rows, b] and contracted with r laid out [i * window, o]: [taps, b, o], then the output's layout."""
    x, r = op.operands
    out = op.results[0]
    dims = conv_dimensions(op)
    spatial = len(shape_of(x.type)) - 2
    lhs, rhs, result = dims["lhs"], dims["rhs"], dims["out"]
    strides = conv_attribute_ints(op, "window_strides", [1] * spatial)
    dilation = conv_attribute_ints(op, "rhs_dilation", [1] * spatial)
    padding = conv_attribute_ints(op, "padding", [0] * (2 * spatial))
    x = transposed(x, [lhs["f"], *(lhs[s] for s in range(spatial)), lhs["b"]])
    if any(padding):
        x = hlo.pad(x, hlo.constant(0, dtype_of(x.type)), [0, *padding[0::2], 0], [0, *padding[1::2], 0])
    x_shape = shape_of(x.type)
    window = [shape_of(r.type)[rhs[s]] for s in range(spatial)]
    positions = [shape_of(out.type)[result[s]] for s in range(spatial)]
    rows = x_shape[0] * math.prod(window)
    pieces = []
    for tap in itertools.product(*(range(n) for n in positions)):
        starts = [t * st for t, st in zip(tap, strides)]
        limits = [start + (w - 1) * d + 1 for start, w, d in zip(starts, window, dilation)]
        piece = hlo.slice(x, [0, *starts, 0], [x_shape[0], *limits, x_shape[-1]], [1, *dilation, 1])
        pieces.append(hlo.reshape(piece, [1, rows, x_shape[-1]]))
    patches = hlo.concatenate(pieces, 0) if len(pieces) > 1 else pieces[0]
    gradient = transposed(r, [rhs["i"], *(rhs[s] for s in range(spatial)), rhs["o"]])
    gradient = hlo.reshape(gradient, [rows, shape_of(r.type)[rhs["o"]]])
    flat = hlo.dot_general(patches, gradient, lhs_contract=[1], rhs_contract=[0])       # taps, b, o
    kernel = hlo.reshape(flat, [*positions, x_shape[-1], shape_of(r.type)[rhs["o"]]])
    source = {result[s]: s for s in range(spatial)} | {result["b"]: spatial, result["f"]: spatial + 1}
    return transposed(kernel, [source[axis] for axis in range(spatial + 2)])
