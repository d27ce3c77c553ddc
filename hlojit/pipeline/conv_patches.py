"""Convolutions with many input channels as one product of their patches (im2col), on every llvm-cpu flag set but
the one with hand-written products (data-tiling+matmul-kernels convolves by implicit GEMM, matmul_kernel.py): the
default `data-tiling` (portable exports, HLOJIT_CPU_FLAGS=data-tiling, the fallback of the others), its Winograd and
inner-tiled twins, the build without data tiling and tiered compilation's quick build.

Why: IREE 3.13's own convolution (channels last, layout.py) slows as the input channels grow, while its matmuls do
not. Measured on the 2-vCPU Zen 3 (AVX2), 2026-12-07, a 3x3 SAME convolution at batch 8, plain data tiling, best of
4 calls: 64 channels at 56x56 38 GFLOP/s as IREE's convolution against 26 as patches times the kernel; 128 at 28x28
20 against 61; 256 at 14x14 5.7 against 72; 512 at 7x7 3.1 against 99. Without data tiling (iree-benchmark-module,
median of 3): 256 channels 606 ms against 30, 512 611 against 38; the quick build 616 / 398 against 33 / 32.
ResNet-18 b8's forward took 3.9 s with plain data tiling (JAX 0.45). So from PATCHES_FROM_CHANNELS input channels
on: the patches [N * out pixels, window * C] (each window tap a strided slice of the padded input, concatenated
along the channels) times the kernel [window * C, O], one matmul. Not past MAX_PRODUCT_ELEMENTS patch elements (the
copy is the window's size times the input's), nor with feature or batch groups, input dilation (conv_phases.py and
conv_gradients.py take those), window reversal or negative padding: IREE's convolution keeps those.
"""
from __future__ import annotations

import functools
import itertools
import math

import numpy as np
from iree.compiler import ir

from ..dialects import stablehlo as hlo
from ..dialects.types import dtype_of, shape_of
from .conv_phases import MAX_PRODUCT_ELEMENTS
from .legalize import replace_each
from .winograd import conv_attribute_int, conv_attribute_ints, conv_dimensions, transposed

PATCHES_FROM_CHANNELS = 128


def _by_patches(op) -> bool:
    if op.name != "stablehlo.convolution":
        return False
    x, w = op.operands
    out = op.results[0]
    if any(dtype_of(v.type) != np.float32 for v in (x, w, out)):
        return False
    n = len(shape_of(x.type)) - 2
    ints = functools.partial(conv_attribute_ints, op)
    if (ints("lhs_dilation", [1] * n) != [1] * n or min(ints("padding", [0] * (2 * n)), default=0) < 0
            or conv_attribute_int(op, "feature_group_count") != 1 or conv_attribute_int(op, "batch_group_count") != 1
            or "window_reversal" in op.attributes and any(ir.DenseBoolArrayAttr(op.attributes["window_reversal"]))):
        return False
    dims = conv_dimensions(op)
    x_shape, w_shape, out_shape = shape_of(x.type), shape_of(w.type), shape_of(out.type)
    if 0 in x_shape + w_shape + out_shape:
        return False
    channels = x_shape[dims["lhs"]["f"]]
    taps = math.prod(w_shape[dims["rhs"][s]] for s in range(n))
    rows = math.prod(out_shape) // out_shape[dims["out"]["f"]]
    return channels >= PATCHES_FROM_CHANNELS and rows * taps * channels <= MAX_PRODUCT_ELEMENTS


def convolutions_as_patch_products(module: ir.Module) -> int:
    """Each convolution `_by_patches` takes as the product of its patches with its kernel."""
    return replace_each(module, _by_patches, _patch_product)


def _patch_product(op) -> ir.Value:
    dims = conv_dimensions(op)
    lhs, rhs, out = dims["lhs"], dims["rhs"], dims["out"]
    n = len(lhs) - 2
    x = transposed(op.operands[0], [lhs["b"], *[lhs[s] for s in range(n)], lhs["f"]])     # N, *spatial, C
    w = transposed(op.operands[1], [*[rhs[s] for s in range(n)], rhs["i"], rhs["o"]])      # *window, C, O
    padding = conv_attribute_ints(op, "padding", [0] * (2 * n))
    strides = conv_attribute_ints(op, "window_strides", [1] * n)
    dilation = conv_attribute_ints(op, "rhs_dilation", [1] * n)
    if any(padding):
        x = hlo.pad(x, hlo.constant(0, np.float32), [0, *padding[0::2], 0], [0, *padding[1::2], 0])
    batch, channels = shape_of(x.type)[0], shape_of(x.type)[-1]
    window, features = shape_of(w.type)[:n], shape_of(w.type)[-1]
    out_shape = shape_of(op.results[0].type)
    pixels = [out_shape[out[s]] for s in range(n)]
    patches = [hlo.slice(x, [0, *[t * d for t, d in zip(tap, dilation)], 0],
                         [batch, *[t * d + (p - 1) * s + 1 for t, d, p, s in zip(tap, dilation, pixels, strides)],
                          channels], [1, *strides, 1])
               for tap in itertools.product(*[range(k) for k in window])]    # tap-major, as w's rows below
    stacked = patches[0] if len(patches) == 1 else hlo.concatenate(patches, n + 1)
    rows, depth = batch * math.prod(pixels), len(patches) * channels
    product = hlo.dot_general(hlo.reshape(stacked, [rows, depth]), hlo.reshape(w, [depth, features]),
                              lhs_contract=[1], rhs_contract=[0])
    y = hlo.reshape(product, [batch, *pixels, features])                              # N, *spatial, O
    order = [0] * (n + 2)
    for label, axis in out.items():
        order[axis] = 0 if label == "b" else n + 1 if label == "f" else 1 + label
    return transposed(y, order)
