"""Joining, slicing, padding and reversing: concatenate, slice, pad, reverse, as StableHLO defines them."""
from __future__ import annotations

import numpy as np
from iree.compiler import ir

from ..dialects.types import attr_ints, dtype_of, shape_of
from .interpreter import OPS


def _concatenate(op):
    axis = int(ir.IntegerAttr(op.attributes["dimension"]).value)
    dtype = dtype_of(op.result.type)
    return lambda *xs: np.concatenate(xs, axis=axis).astype(dtype, copy=False)


def _slice(op):
    index = tuple(slice(lo, hi, st) for lo, hi, st in zip(
        attr_ints(op, "start_indices"), attr_ints(op, "limit_indices"), attr_ints(op, "strides")))
    return lambda x: x[index]


def _pad(op):
    """Interior padding first (the operand's elements land `interior + 1` apart), then the edges: positive
    low/high add padding, negative ones crop."""
    low, high, interior = attr_ints(op, "edge_padding_low"), attr_ints(op, "edge_padding_high"), \
        attr_ints(op, "interior_padding")
    return pad_with(shape_of(op.operands[0].type), low, high, interior)


def pad_with(shape, low, high, interior):
    """The padding closure for an operand of `shape` (dynamic_pad makes one per call)."""
    spread = [d + max(d - 1, 0) * i for d, i in zip(shape, interior)]
    strided = tuple(slice(None, None, i + 1) for i in interior)
    grow = [(max(lo, 0), max(hi, 0)) for lo, hi in zip(low, high)]
    crop = tuple(slice(max(-lo, 0), s + max(lo, 0) + max(hi, 0) - max(-hi, 0))
                 for lo, hi, s in zip(low, high, spread))

    def run(x, value):
        out = np.full(spread, value, dtype=x.dtype)
        out[strided] = x
        return np.pad(out, grow, constant_values=value)[crop]
    return run


def _reverse(op):
    dims = tuple(attr_ints(op, "dimensions"))
    return lambda x: np.flip(x, dims) if dims else x


OPS.update({
    "stablehlo.concatenate": _concatenate,
    "stablehlo.slice": _slice,
    "stablehlo.pad": _pad,
    "stablehlo.reverse": _reverse,
})
