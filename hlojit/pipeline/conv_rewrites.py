"""Convolutions as im2col + matmul, a speed rewrite for llvm-cpu. StableHLO -> StableHLO, run by `quirks.apply`
after `layout.channels_last` (it takes channels-last convolutions only).

IREE 3.13's CPU convolutions are slow where channels are many and the image small (measured, 3x3: 512 channels
at 7x7 115 ms as a convolution, 7.8 ms as a matmul; 256 at 14x14 71 against 5.4; 128 at 28x28 7.5 against 3.0;
64 at 56x56 5.8 against 5.0), while its matmuls are data-tiled and fast. So from IM2COL_MIN_CHANNELS input
channels up a convolution becomes one strided slice of the padded input per window position, side by side
along the channels (window position major, channel minor), times the kernel flattened to [window * C, O].
"""
from __future__ import annotations

import itertools

import numpy as np
from iree.compiler import ir

from ..dialects import stablehlo as hlo
from ..dialects.types import dtype_of, shape_of
from .layout import conv_labels, integers, padding_pairs
from .legalize import walk

IM2COL_MIN_CHANNELS = 128       # below, IREE's own convolution is about as fast, and compiles quicker
IM2COL_MAX_ELEMENTS = 1 << 25   # the patch matrix: 128 MB of float32 at most


def _int(op, name: str) -> int:
    return ir.IntegerAttr(op.attributes[name]).value


def _window(op, name: str, n: int) -> list[int]:
    return integers(op.attributes[name]) if name in op.attributes else [1] * n


def _fits(op, min_channels: int) -> bool:
    labels = conv_labels(op)
    n = len(shape_of(op.operands[0].type)) - 2
    spatial = [str(i) for i in range(n)]
    if labels != (["b", *spatial, "f"], [*spatial, "i", "o"], ["b", *spatial, "f"]):
        return False
    if _int(op, "feature_group_count") != 1 or _int(op, "batch_group_count") != 1:
        return False
    if any(d != 1 for d in _window(op, "lhs_dilation", n)) or "padding" in op.attributes and any(
            p < 0 for pair in padding_pairs(op) for p in pair):
        return False
    x_shape, w_shape, out_shape = (shape_of(v.type) for v in (op.operands[0], op.operands[1], op.results[0]))
    if 0 in x_shape or 0 in out_shape or x_shape[-1] < min_channels:
        return False
    rows = int(np.prod(out_shape[:-1], dtype=np.int64))
    return rows * int(np.prod(w_shape[:-1], dtype=np.int64)) <= IM2COL_MAX_ELEMENTS


def _as_matmul(op) -> ir.Value:
    x, w = op.operands
    n = len(shape_of(x.type)) - 2
    strides, dilations = _window(op, "window_strides", n), _window(op, "rhs_dilation", n)
    pads = padding_pairs(op) if "padding" in op.attributes else [[0, 0]] * n
    out_type = op.results[0].type
    out_shape, out_dtype = shape_of(out_type), dtype_of(out_type)
    if dtype_of(x.type) != out_dtype:       # 16-bit floats accumulate in the result's float32, as the op does
        x, w = hlo.convert(x, out_dtype), hlo.convert(w, out_dtype)
    if any(lo or hi for lo, hi in pads):
        x = hlo.pad(x, hlo.constant(0, out_dtype), [0, *(lo for lo, _ in pads), 0], [0, *(hi for _, hi in pads), 0])
    batch, channels, window = shape_of(x.type)[0], shape_of(x.type)[-1], shape_of(w.type)[:n]
    pieces = []
    for offsets in itertools.product(*(range(k) for k in window)):
        starts = [o * d for o, d in zip(offsets, dilations)]
        limits = [start + (size - 1) * s + 1 for start, size, s in zip(starts, out_shape[1:-1], strides)]
        pieces.append(hlo.slice(x, [0, *starts, 0], [batch, *limits, channels], [1, *strides, 1]))
    cols = pieces[0] if len(pieces) == 1 else hlo.concatenate(pieces, n + 1)
    patch = int(np.prod(window, dtype=np.int64)) * channels
    rows = int(np.prod(out_shape[:-1], dtype=np.int64))
    product = hlo.dot_general(hlo.reshape(cols, [rows, patch]), hlo.reshape(w, [patch, out_shape[-1]]),
                              lhs_contract=[1], rhs_contract=[0])
    return hlo.reshape(product, out_shape)


def convolutions_as_matmuls(module: ir.Module, min_channels: int = IM2COL_MIN_CHANNELS) -> int:
    """Channels-last convolutions of `min_channels` input channels or more, without groups or input dilation,
    become im2col matmuls (where the patch matrix stays under IM2COL_MAX_ELEMENTS)."""
    count = 0
    for op in list(walk(module.operation)):
        if op.name == "stablehlo.convolution" and _fits(op, min_channels):
            with ir.InsertionPoint(op), op.location:
                new = _as_matmul(op)
            op.results[0].replace_all_uses_with(new)
            op.erase()
            count += 1
    return count
