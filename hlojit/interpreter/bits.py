"""Elementwise ops on bits and precision: popcnt, count_leading_zeros, reduce_precision, clamp.

reduce_precision follows XLA's definition, which StableHLO's spec takes: round the mantissa to nearest even
at `mantissa_bits`, then values past the reduced exponent range become infinities (signed) and values at or
below its smallest normal become signed zeros; NaN stays NaN.
"""
from __future__ import annotations

import numpy as np
from iree.compiler import ir

from ..dialects.types import dtype_of
from .interpreter import OPS

_FLOAT_LAYOUT = {"float16": (5, 10), "bfloat16": (8, 7), "float32": (8, 23), "float64": (11, 52)}


def _unsigned(x: np.ndarray) -> np.ndarray:
    return x.view(np.dtype(f"u{x.dtype.itemsize}")) if x.dtype != np.bool_ else x.astype(np.uint8)


def _popcnt(op):
    dtype = dtype_of(op.result.type)
    return lambda x: np.bitwise_count(_unsigned(np.ascontiguousarray(x))).astype(dtype)


def _count_leading_zeros(op):
    dtype = dtype_of(op.result.type)
    width = 1 if dtype == np.bool_ else dtype.itemsize * 8

    def run(x):
        u = _unsigned(np.ascontiguousarray(x)).astype(np.uint64)
        shift = 1 << (max(width, 2) - 1).bit_length() - 1     # the largest power of two below the width
        length = np.zeros(u.shape, np.int64)                   # bit length, by halving
        while shift:
            big = (u >> np.uint64(shift)) != 0
            length += np.where(big, shift, 0)
            u = np.where(big, u >> np.uint64(shift), u)
            shift //= 2
        length += (u != 0)
        return (width - length).astype(dtype)
    return run


def _reduce_precision(op):
    exponent_bits = ir.IntegerAttr(op.attributes["exponent_bits"]).value
    mantissa_bits = ir.IntegerAttr(op.attributes["mantissa_bits"]).value
    dtype = dtype_of(op.result.type)
    source_exponent, source_mantissa = _FLOAT_LAYOUT[dtype.name]
    bits = dtype.itemsize * 8
    unsigned = np.dtype(f"u{dtype.itemsize}")

    def run(x):
        x = np.ascontiguousarray(x, dtype=dtype)
        u = x.view(unsigned).astype(np.uint64)
        if mantissa_bits < source_mantissa:
            drop = source_mantissa - mantissa_bits
            last = np.uint64(1 << drop)
            bias = (u & last) >> np.uint64(drop)
            u = (u + bias + np.uint64((1 << (drop - 1)) - 1)) & ~np.uint64((1 << drop) - 1)
            u &= np.uint64((1 << bits) - 1)
        if exponent_bits < source_exponent:
            sign = u & np.uint64(1 << (bits - 1))
            exponent_mask = np.uint64(((1 << source_exponent) - 1) << source_mantissa)
            source_bias, reduced_bias = (1 << (source_exponent - 1)) - 1, (1 << (exponent_bits - 1)) - 1
            exponent = u & exponent_mask
            overflow = exponent > np.uint64((source_bias + reduced_bias) << source_mantissa)
            underflow = exponent <= np.uint64((source_bias - reduced_bias) << source_mantissa)
            u = np.where(overflow, sign | exponent_mask, np.where(underflow, sign, u))
        out = u.astype(unsigned).view(dtype)
        return np.where(np.isnan(x), x, out)
    return run


def _clamp(op):
    dtype = dtype_of(op.result.type)
    return lambda low, x, high: np.asarray(np.minimum(np.maximum(x, low), high), dtype=dtype)


OPS.update({
    "stablehlo.popcnt": _popcnt,
    "stablehlo.count_leading_zeros": _count_leading_zeros,
    "stablehlo.reduce_precision": _reduce_precision,
    "stablehlo.clamp": _clamp,
})
