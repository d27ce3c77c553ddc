"""Golden-text tests of every StableHLO builder in hlojit.dialects.stablehlo but the region builders
(test_dialects_regions.py), and that every public builder has cases in one or the other.

Each case builds one op inside `func.func @main` in a fresh context, checks the op's printed line(s)
exactly, the result type the builder computed (shape and element type), and that the module verifies
(dialect_golden.py).
"""
from __future__ import annotations

import re

import numpy as np
import pytest
from iree.compiler import ir

from hlojit.dialects import stablehlo as hlo

from dialect_golden import BF16, build, check
import test_dialects_regions


# --- constants -----------------------------------------------------------------------------------

CONSTANTS = [
    # id, value, dtype argument, printed line, result type
    ("bool-0d-true", True, None, "%c = stablehlo.constant dense<true> : tensor<i1>", "i1"),
    ("bool-0d-np-false", np.bool_(False), None, "%c = stablehlo.constant dense<false> : tensor<i1>", "i1"),
    ("bool-array", np.array([True, False, True]), None,
     "%c = stablehlo.constant dense<[true, false, true]> : tensor<3xi1>", "3xi1"),
    ("bool-array-2d-11", np.array([[True] * 3 + [False] * 8]), None,  # more than a byte of bits
     "%c = stablehlo.constant dense<[[true, true, true, false, false, false, false, false, false, false, "
     "false]]> : tensor<1x11xi1>", "1x11xi1"),
    ("bool-splat", np.ones((2, 2), np.bool_), None, "%c = stablehlo.constant dense<true> : tensor<2x2xi1>",
     "2x2xi1"),
    ("i8-extremes", np.array([-128, 127], np.int8), None,
     "%c = stablehlo.constant dense<[-128, 127]> : tensor<2xi8>", "2xi8"),
    ("i16-2d", np.array([[-1], [300]], np.int16), None,
     "%c = stablehlo.constant dense<[[-1], [300]]> : tensor<2x1xi16>", "2x1xi16"),
    ("i32-0d-from-python-int", 7, np.int32, "%c = stablehlo.constant dense<7> : tensor<i32>", "i32"),
    ("i32-splat", np.full((2, 3), -5, np.int32), None, "%c = stablehlo.constant dense<-5> : tensor<2x3xi32>",
     "2x3xi32"),
    ("i64-extremes", np.array([-2**63, 2**63 - 1], np.int64), None,
     "%c = stablehlo.constant dense<[-9223372036854775808, 9223372036854775807]> : tensor<2xi64>", "2xi64"),
    ("i64-python-int-default", 3, None, "%c = stablehlo.constant dense<3> : tensor<i64>", "i64"),
    ("u8-extremes", np.array([0, 255], np.uint8), None, "%c = stablehlo.constant dense<[0, 255]> : tensor<2xui8>",
     "2xui8"),
    ("u16-splat", np.full(3, 65535, np.uint16), None, "%c = stablehlo.constant dense<65535> : tensor<3xui16>",
     "3xui16"),
    ("u32-0d-max", np.uint32(2**32 - 1), None, "%c = stablehlo.constant dense<4294967295> : tensor<ui32>", "ui32"),
    ("u64-0d-max", 2**64 - 1, np.uint64,
     "%c = stablehlo.constant dense<18446744073709551615> : tensor<ui64>", "ui64"),
    ("f16-0d", 1.5, np.float16, "%cst = stablehlo.constant dense<1.500000e+00> : tensor<f16>", "f16"),
    ("f16-array-inf", np.array([0.1, -2.5, np.inf, -np.inf], np.float16), None,
     "%cst = stablehlo.constant dense<[9.997550e-02, -2.500000e+00, 0x7C00, 0xFC00]> : tensor<4xf16>", "4xf16"),
    ("f16-from-int", 3, np.float16, "%cst = stablehlo.constant dense<3.000000e+00> : tensor<f16>", "f16"),
    ("bf16-0d", -2.0, BF16, "%cst = stablehlo.constant dense<-2.000000e+00> : tensor<bf16>", "bf16"),
    ("bf16-array", np.array([1.5, -0.1, 3.0], BF16), None,
     "%cst = stablehlo.constant dense<[1.500000e+00, -1.000980e-01, 3.000000e+00]> : tensor<3xbf16>", "3xbf16"),
    ("bf16-splat", np.full((2, 3), 0.5, BF16), None,
     "%cst = stablehlo.constant dense<5.000000e-01> : tensor<2x3xbf16>", "2x3xbf16"),
    ("bf16-from-list", [1, 2], BF16,
     "%cst = stablehlo.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xbf16>", "2xbf16"),
    ("f32-2d", np.array([[1, 2], [3, 4]], np.float32), None,
     "%cst = stablehlo.constant dense<[[1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00]]> : "
     "tensor<2x2xf32>", "2x2xf32"),
    ("f32-0d-nan", np.float32(np.nan), None, "%cst = stablehlo.constant dense<0x7FC00000> : tensor<f32>", "f32"),
    ("f32-splat", np.zeros((2, 3), np.float32), None,
     "%cst = stablehlo.constant dense<0.000000e+00> : tensor<2x3xf32>", "2x3xf32"),
    ("f32-empty", np.zeros((0, 3), np.float32), None, "%cst = stablehlo.constant dense<> : tensor<0x3xf32>",
     "0x3xf32"),
    ("f64-0d", 0.1, np.float64, "%cst = stablehlo.constant dense<1.000000e-01> : tensor<f64>", "f64"),
    ("f64-python-float-default", 2.5, None, "%cst = stablehlo.constant dense<2.500000e+00> : tensor<f64>", "f64"),
    ("f64-array", np.array([1.0, -2.5]), None,
     "%cst = stablehlo.constant dense<[1.000000e+00, -2.500000e+00]> : tensor<2xf64>", "2xf64"),
]


@pytest.mark.parametrize("value, dtype, line, result", [pytest.param(*c[1:], id=c[0]) for c in CONSTANTS])
def test_constant(value, dtype, line, result):
    check(build([], lambda: hlo.constant(value, dtype)), line, [result])


def test_bf16_constant_keeps_the_exact_bits():
    """bf16 goes to MLIR as raw 16-bit words: the printed values must read back to the same bits."""
    values = np.array([1.0, -0.0, 3.140625, -65280.0, 1e-39, 3.3e38, np.inf, -np.inf, 2.0**-133], BF16)
    with ir.Context(), ir.Location.unknown():
        module = ir.Module.create()
        with ir.InsertionPoint(module.body):
            hlo.constant(values)
        assert module.operation.verify() is True
        text = str(module)
    tokens = re.search(r"dense<\[(.*)\]> : tensor<9xbf16>", text).group(1).split(", ")
    bits = [int(t, 16) if t.startswith("0x") else int(np.array(float(t), np.float32).astype(BF16).view(np.uint16))
            for t in tokens]
    assert bits == values.view(np.uint16).tolist()


# --- every other builder (the region builders: test_dialects_regions.py) -------------------------

GOLDEN = [
    # builder, case, argument types, builder call, printed line(s), result types
    ("iota", "i32-dim1", [], lambda: hlo.iota([2, 3], 1, np.int32),
     "%0 = stablehlo.iota dim = 1 : tensor<2x3xi32>", ["2x3xi32"]),
    ("iota", "f32-1d", [], lambda: hlo.iota([4], 0, np.float32),
     "%0 = stablehlo.iota dim = 0 : tensor<4xf32>", ["4xf32"]),
    ("iota", "ui8-dim0", [], lambda: hlo.iota([3, 2], 0, np.uint8),
     "%0 = stablehlo.iota dim = 0 : tensor<3x2xui8>", ["3x2xui8"]),
    ("convert", "f32-bf16", ["2x3xf32"], lambda x: hlo.convert(x, BF16),
     "%0 = stablehlo.convert %arg0 : (tensor<2x3xf32>) -> tensor<2x3xbf16>", ["2x3xbf16"]),
    ("convert", "i32-f32", ["4xi32"], lambda x: hlo.convert(x, np.float32),
     "%0 = stablehlo.convert %arg0 : (tensor<4xi32>) -> tensor<4xf32>", ["4xf32"]),
    ("convert", "f32-bool", ["4xf32"], lambda x: hlo.convert(x, np.bool_),
     "%0 = stablehlo.convert %arg0 : (tensor<4xf32>) -> tensor<4xi1>", ["4xi1"]),
    ("convert", "ui8-i64", ["2xui8"], lambda x: hlo.convert(x, np.int64),
     "%0 = stablehlo.convert %arg0 : (tensor<2xui8>) -> tensor<2xi64>", ["2xi64"]),
    ("convert", "0d-f64-f16", ["f64"], lambda x: hlo.convert(x, np.float16),
     "%0 = stablehlo.convert %arg0 : (tensor<f64>) -> tensor<f16>", ["f16"]),
    ("real", "c64", ["2x3xcomplex<f32>"], lambda x: hlo.real(x),
     "%0 = stablehlo.real %arg0 : (tensor<2x3xcomplex<f32>>) -> tensor<2x3xf32>", ["2x3xf32"]),
    ("imag", "c128", ["2x3xcomplex<f64>"], lambda x: hlo.imag(x),
     "%0 = stablehlo.imag %arg0 : (tensor<2x3xcomplex<f64>>) -> tensor<2x3xf64>", ["2x3xf64"]),
    ("complex", "f32", ["3xf32", "3xf32"], lambda x, y: hlo.complex(x, y),
     "%0 = stablehlo.complex %arg0, %arg1 : tensor<3xcomplex<f32>>", ["3xcomplex<f32>"]),
    ("fft", "fft", ["2x8xcomplex<f32>"], lambda x: hlo.fft(x, "FFT", [8]),
     "%0 = stablehlo.fft %arg0, type = FFT, length = [8] : (tensor<2x8xcomplex<f32>>) -> tensor<2x8xcomplex<f32>>",
     ["2x8xcomplex<f32>"]),
    ("fft", "rfft", ["2x8xf32"], lambda x: hlo.fft(x, "RFFT", [8]),
     "%0 = stablehlo.fft %arg0, type = RFFT, length = [8] : (tensor<2x8xf32>) -> tensor<2x5xcomplex<f32>>",
     ["2x5xcomplex<f32>"]),
    ("fft", "irfft-2d", ["4x5xcomplex<f64>"], lambda x: hlo.fft(x, "IRFFT", [4, 8]),
     "%0 = stablehlo.fft %arg0, type = IRFFT, length = [4, 8] : (tensor<4x5xcomplex<f64>>) -> tensor<4x8xf64>",
     ["4x8xf64"]),
    ("broadcast_in_dim", "leading", ["2x3xf32"], lambda x: hlo.broadcast_in_dim(x, [4, 2, 3], [1, 2]),
     "%0 = stablehlo.broadcast_in_dim %arg0, dims = [1, 2] : (tensor<2x3xf32>) -> tensor<4x2x3xf32>",
     ["4x2x3xf32"]),
    ("broadcast_in_dim", "from-0d", ["i32"], lambda x: hlo.broadcast_in_dim(x, [2, 3], []),
     "%0 = stablehlo.broadcast_in_dim %arg0, dims = [] : (tensor<i32>) -> tensor<2x3xi32>", ["2x3xi32"]),
    ("broadcast_in_dim", "trailing", ["3xbf16"], lambda x: hlo.broadcast_in_dim(x, [3, 4], [0]),
     "%0 = stablehlo.broadcast_in_dim %arg0, dims = [0] : (tensor<3xbf16>) -> tensor<3x4xbf16>", ["3x4xbf16"]),
    ("broadcast_in_dim", "size-1", ["1x3xi1"], lambda x: hlo.broadcast_in_dim(x, [2, 3], [0, 1]),
     "%0 = stablehlo.broadcast_in_dim %arg0, dims = [0, 1] : (tensor<1x3xi1>) -> tensor<2x3xi1>", ["2x3xi1"]),
    ("reshape", "2d", ["2x3xf32"], lambda x: hlo.reshape(x, [3, 2]),
     "%0 = stablehlo.reshape %arg0 : (tensor<2x3xf32>) -> tensor<3x2xf32>", ["3x2xf32"]),
    ("reshape", "flatten", ["2x3xui16"], lambda x: hlo.reshape(x, (6,)),
     "%0 = stablehlo.reshape %arg0 : (tensor<2x3xui16>) -> tensor<6xui16>", ["6xui16"]),
    ("reshape", "to-0d", ["1x1xf16"], lambda x: hlo.reshape(x, []),
     "%0 = stablehlo.reshape %arg0 : (tensor<1x1xf16>) -> tensor<f16>", ["f16"]),
    ("transpose", "3d", ["2x3x4xf32"], lambda x: hlo.transpose(x, [2, 0, 1]),
     "%0 = stablehlo.transpose %arg0, dims = [2, 0, 1] : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>",
     ["4x2x3xf32"]),
    ("transpose", "2d-i8", ["2x5xi8"], lambda x: hlo.transpose(x, (1, 0)),
     "%0 = stablehlo.transpose %arg0, dims = [1, 0] : (tensor<2x5xi8>) -> tensor<5x2xi8>", ["5x2xi8"]),
    ("select", "f32", ["2xi1", "2xf32", "2xf32"], hlo.select,
     "%0 = stablehlo.select %arg0, %arg1, %arg2 : tensor<2xi1>, tensor<2xf32>", ["2xf32"]),
    ("select", "scalar-pred", ["i1", "2x3xi32", "2x3xi32"], hlo.select,
     "%0 = stablehlo.select %arg0, %arg1, %arg2 : tensor<i1>, tensor<2x3xi32>", ["2x3xi32"]),
    ("is_finite", "f32", ["2x3xf32"], hlo.is_finite,
     "%0 = stablehlo.is_finite %arg0 : (tensor<2x3xf32>) -> tensor<2x3xi1>", ["2x3xi1"]),
    ("is_finite", "f16", ["4xf16"], hlo.is_finite,
     "%0 = stablehlo.is_finite %arg0 : (tensor<4xf16>) -> tensor<4xi1>", ["4xi1"]),
    ("is_finite", "bf16-0d", ["bf16"], hlo.is_finite,
     "%0 = stablehlo.is_finite %arg0 : (tensor<bf16>) -> tensor<i1>", ["i1"]),
    ("dot_general", "matmul", ["2x3xf32", "3x4xf32"],
     lambda a, b: hlo.dot_general(a, b, lhs_contract=[1], rhs_contract=[0]),
     "%0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : "
     "(tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>", ["2x4xf32"]),
    ("dot_general", "batched", ["5x2x3xf32", "5x3x4xf32"],
     lambda a, b: hlo.dot_general(a, b, lhs_batch=[0], rhs_batch=[0], lhs_contract=[2], rhs_contract=[1]),
     "%0 = stablehlo.dot_general %arg0, %arg1, batching_dims = [0] x [0], contracting_dims = [2] x [1] : "
     "(tensor<5x2x3xf32>, tensor<5x3x4xf32>) -> tensor<5x2x4xf32>", ["5x2x4xf32"]),
    # batch dims not leading: the result is batch dims, then lhs's free dims, then rhs's free dims
    ("dot_general", "batch-not-leading", ["3x5x2xf32", "2x3x4xf32"],
     lambda a, b: hlo.dot_general(a, b, lhs_batch=[2], rhs_batch=[0], lhs_contract=[0], rhs_contract=[1]),
     "%0 = stablehlo.dot_general %arg0, %arg1, batching_dims = [2] x [0], contracting_dims = [0] x [1] : "
     "(tensor<3x5x2xf32>, tensor<2x3x4xf32>) -> tensor<2x5x4xf32>", ["2x5x4xf32"]),
    ("dot_general", "vector-dot", ["3xi32", "3xi32"],
     lambda a, b: hlo.dot_general(a, b, lhs_contract=[0], rhs_contract=[0]),
     "%0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [0] x [0] : "
     "(tensor<3xi32>, tensor<3xi32>) -> tensor<i32>", ["i32"]),
    ("dot_general", "bf16-accumulate-f32", ["2x3xbf16", "3x4xbf16"],
     lambda a, b: hlo.dot_general(a, b, lhs_contract=[1], rhs_contract=[0], dtype=np.float32),
     "%0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : "
     "(tensor<2x3xbf16>, tensor<3x4xbf16>) -> tensor<2x4xf32>", ["2x4xf32"]),
    # shape family: concatenate, slice, pad, reverse
    ("concatenate", "dim1-three", ["2x3xf32", "2x1xf32"], lambda a, b: hlo.concatenate([a, b, a], 1),
     "%0 = stablehlo.concatenate %arg0, %arg1, %arg0, dim = 1 : (tensor<2x3xf32>, tensor<2x1xf32>, "
     "tensor<2x3xf32>) -> tensor<2x7xf32>", ["2x7xf32"]),
    ("concatenate", "zero-size-i1", ["0x2xi1", "3x2xi1"], lambda a, b: hlo.concatenate([a, b], 0),
     "%0 = stablehlo.concatenate %arg0, %arg1, dim = 0 : (tensor<0x2xi1>, tensor<3x2xi1>) -> tensor<3x2xi1>",
     ["3x2xi1"]),
    ("slice", "unit-strides", ["4x5xi32"], lambda x: hlo.slice(x, [1, 0], [3, 5]),
     "%0 = stablehlo.slice %arg0 [1:3, 0:5] : (tensor<4x5xi32>) -> tensor<2x5xi32>", ["2x5xi32"]),
    ("slice", "strided-uneven", ["10xf64"], lambda x: hlo.slice(x, [1], [10], [4]),  # 1, 5, 9
     "%0 = stablehlo.slice %arg0 [1:10:4] : (tensor<10xf64>) -> tensor<3xf64>", ["3xf64"]),
    ("slice", "empty", ["2x3xf32"], lambda x: hlo.slice(x, [0, 2], [2, 2], [1, 3]),
     "%0 = stablehlo.slice %arg0 [0:2, 2:2:3] : (tensor<2x3xf32>) -> tensor<2x0xf32>", ["2x0xf32"]),
    ("pad", "edges", ["2x3xf32", "f32"], lambda x, v: hlo.pad(x, v, [1, 0], [2, 3]),
     "%0 = stablehlo.pad %arg0, %arg1, low = [1, 0], high = [2, 3], interior = [0, 0] : "
     "(tensor<2x3xf32>, tensor<f32>) -> tensor<5x6xf32>", ["5x6xf32"]),
    ("pad", "interior-negative-i8", ["3x4xi8", "i8"], lambda x, v: hlo.pad(x, v, [-1, 2], [0, -1], [2, 1]),
     "%0 = stablehlo.pad %arg0, %arg1, low = [-1, 2], high = [0, -1], interior = [2, 1] : "
     "(tensor<3x4xi8>, tensor<i8>) -> tensor<6x8xi8>", ["6x8xi8"]),
    ("reverse", "two-dims", ["2x3x4xbf16"], lambda x: hlo.reverse(x, [0, 2]),
     "%0 = stablehlo.reverse %arg0, dims = [0, 2] : tensor<2x3x4xbf16>", ["2x3x4xbf16"]),
    ("reverse", "i1-1d", ["5xi1"], lambda x: hlo.reverse(x, [0]),
     "%0 = stablehlo.reverse %arg0, dims = [0] : tensor<5xi1>", ["5xi1"]),
    ("convolution", "nchw-oihw-strided-padded", ["1x3x8x8xf32", "4x3x3x3xf32"],
     lambda x, w: hlo.convolution(x, w, dimension_numbers="[b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1]",
                                  strides=[2, 2], padding=[[1, 1], [1, 1]], lhs_dilation=[1, 1], rhs_dilation=[1, 1]),
     "%0 = stablehlo.convolution(%arg0, %arg1) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = "
     "{stride = [2, 2], pad = [[1, 1], [1, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, 1]} {batch_group_count = 1 : "
     "i64, feature_group_count = 1 : i64} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x4x4xf32>",
     ["1x4x4x4xf32"]),
    ("convolution", "nhwc-hwio-grouped-dilated", ["2x9x9x6xf32", "3x3x3x4xf32"],
     lambda x, w: hlo.convolution(x, w, dimension_numbers="[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]",
                                  strides=[1, 1], padding=[[0, 0], [0, 0]], lhs_dilation=[1, 1], rhs_dilation=[2, 2],
                                  feature_group_count=2),
     "%0 = stablehlo.convolution(%arg0, %arg1) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = "
     "{stride = [1, 1], pad = [[0, 0], [0, 0]], lhs_dilate = [1, 1], rhs_dilate = [2, 2]} {batch_group_count = 1 : "
     "i64, feature_group_count = 2 : i64} : (tensor<2x9x9x6xf32>, tensor<3x3x3x4xf32>) -> tensor<2x5x5x4xf32>",
     ["2x5x5x4xf32"]),
    ("dynamic_slice", "2d", ["4x5xf32", "i32", "i32"], lambda x, i, j: hlo.dynamic_slice(x, [i, j], [2, 3]),
     "%0 = stablehlo.dynamic_slice %arg0, %arg1, %arg2, sizes = [2, 3] : "
     "(tensor<4x5xf32>, tensor<i32>, tensor<i32>) -> tensor<2x3xf32>", ["2x3xf32"]),
    ("dynamic_slice", "1d-ui32-index", ["6xi64", "ui32"], lambda x, i: hlo.dynamic_slice(x, [i], [1]),
     "%0 = stablehlo.dynamic_slice %arg0, %arg1, sizes = [1] : (tensor<6xi64>, tensor<ui32>) -> tensor<1xi64>",
     ["1xi64"]),
    ("dynamic_update_slice", "2d", ["4x5xf32", "2x3xf32", "i32", "i32"],
     lambda x, u, i, j: hlo.dynamic_update_slice(x, u, [i, j]),
     "%0 = stablehlo.dynamic_update_slice %arg0, %arg1, %arg2, %arg3 : "
     "(tensor<4x5xf32>, tensor<2x3xf32>, tensor<i32>, tensor<i32>) -> tensor<4x5xf32>", ["4x5xf32"]),
    ("dynamic_update_slice", "1d-bool-i64-index", ["6xi1", "1xi1", "i64"],
     lambda x, u, i: hlo.dynamic_update_slice(x, u, [i]),
     "%0 = stablehlo.dynamic_update_slice %arg0, %arg1, %arg2 : (tensor<6xi1>, tensor<1xi1>, tensor<i64>) -> "
     "tensor<6xi1>", ["6xi1"]),
    # random family: a barrier against fusing and folding, and a scalar body mapped over every element
    ("optimization_barrier", "two-values", ["3xf32", "i32"], lambda x, i: hlo.optimization_barrier([x, i]),
     "%0:2 = stablehlo.optimization_barrier %arg0, %arg1 : tensor<3xf32>, tensor<i32>", ["3xf32", "i32"]),
    ("optimization_barrier", "one-value", ["2x2xui32"], lambda x: hlo.optimization_barrier([x]),
     "%0 = stablehlo.optimization_barrier %arg0 : tensor<2x2xui32>", ["2x2xui32"]),
    ("composite", "named-call", ["3x3xf32"],
     lambda x: hlo.composite("hlojit.cholesky", [x], [x.type], "main"),  # a function of its type
     '%0 = stablehlo.composite "hlojit.cholesky" %arg0 {decomposition = @main} : '
     "(tensor<3x3xf32>) -> tensor<3x3xf32>", ["3x3xf32"]),
    # math family: bit casts (same width; narrower adds a dimension; wider consumes one)
    ("bitcast_convert", "f32-i32", ["2x3xf32"], lambda x: hlo.bitcast_convert(x, np.int32),
     "%0 = stablehlo.bitcast_convert %arg0 : (tensor<2x3xf32>) -> tensor<2x3xi32>", ["2x3xi32"]),
    ("bitcast_convert", "bf16-ui16-0d", ["bf16"], lambda x: hlo.bitcast_convert(x, np.uint16),
     "%0 = stablehlo.bitcast_convert %arg0 : (tensor<bf16>) -> tensor<ui16>", ["ui16"]),
    ("bitcast_convert", "f64-to-2xui32", ["3xf64"], lambda x: hlo.bitcast_convert(x, np.uint32),
     "%0 = stablehlo.bitcast_convert %arg0 : (tensor<3xf64>) -> tensor<3x2xui32>", ["3x2xui32"]),
    ("bitcast_convert", "4xi8-to-f32", ["2x4xi8"], lambda x: hlo.bitcast_convert(x, np.float32),
     "%0 = stablehlo.bitcast_convert %arg0 : (tensor<2x4xi8>) -> tensor<2xf32>", ["2xf32"]),
    # gather (indexing family): empty dimension lists and index_vector_dim = 0 print as nothing
    ("gather", "rows-2d-indices", ["4x5xf32", "2x3x1xi32"],
     lambda x, i: hlo.gather(x, i, offset_dims=[2], collapsed_slice_dims=[0], start_index_map=[0], index_vector_dim=2,
                             slice_sizes=[1, 5]),
     '%0 = "stablehlo.gather"(%arg0, %arg1) <{dimension_numbers = #stablehlo.gather<offset_dims = [2], '
     'collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 2>, indices_are_sorted = false, '
     'slice_sizes = array<i64: 1, 5>}> : (tensor<4x5xf32>, tensor<2x3x1xi32>) -> tensor<2x3x5xf32>', ["2x3x5xf32"]),
    ("gather", "points-i64", ["4x5xbf16", "3x2xi64"],
     lambda x, i: hlo.gather(x, i, offset_dims=[], collapsed_slice_dims=[0, 1], start_index_map=[0, 1],
                             index_vector_dim=1, slice_sizes=[1, 1]),
     '%0 = "stablehlo.gather"(%arg0, %arg1) <{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [0, 1], '
     'start_index_map = [0, 1], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 1>}> '
     ': (tensor<4x5xbf16>, tensor<3x2xi64>) -> tensor<3xbf16>', ["3xbf16"]),
    ("gather", "window-with-start", ["4x5xi32", "2xi32"],
     lambda x, i: hlo.gather(x, i, offset_dims=[0, 1], collapsed_slice_dims=[], start_index_map=[1, 0],
                             index_vector_dim=0, slice_sizes=[2, 3]),
     '%0 = "stablehlo.gather"(%arg0, %arg1) <{dimension_numbers = #stablehlo.gather<offset_dims = [0, 1], '
     'start_index_map = [1, 0]>, indices_are_sorted = false, slice_sizes = array<i64: 2, 3>}> : '
     '(tensor<4x5xi32>, tensor<2xi32>) -> tensor<2x3xi32>', ["2x3xi32"]),
    ("gather", "batching-dims", ["3x5xf32", "3x2x1xi32"],
     lambda x, i: hlo.gather(x, i, offset_dims=[], collapsed_slice_dims=[1], operand_batching_dims=[0],
                             start_indices_batching_dims=[0], start_index_map=[1], index_vector_dim=2,
                             slice_sizes=[1, 1], indices_are_sorted=True),
     '%0 = "stablehlo.gather"(%arg0, %arg1) <{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [1], '
     'operand_batching_dims = [0], start_indices_batching_dims = [0], start_index_map = [1], index_vector_dim = 2>, '
     'indices_are_sorted = true, slice_sizes = array<i64: 1, 1>}> : (tensor<3x5xf32>, tensor<3x2x1xi32>) -> '
     'tensor<3x2xf32>', ["3x2xf32"]),
]


@pytest.mark.parametrize("args, make, lines, results", [pytest.param(*g[2:], id=f"{g[0]}-{g[1]}") for g in GOLDEN])
def test_golden(args, make, lines, results):
    check(build(args, make), lines, results)


# --- elementwise families: every name in UNARY_OPS and BINARY_OPS, every comparison ---------------

UNARY_DTYPES = {  # op -> element types it is tested with (all must verify)
    "negate": ("f32", "i32"), "abs": ("f32", "i8"), "sign": ("f32", "i64"), "not": ("i1", "i32", "ui8"),
    "exponential": ("f32", "bf16"), "exponential_minus_one": ("f32",), "log": ("f32", "f64"),
    "log_plus_one": ("f32",), "sqrt": ("f32", "f16"), "rsqrt": ("f32",), "cbrt": ("f32",),
    "tanh": ("f32", "bf16"), "logistic": ("f32",), "sine": ("f32",), "cosine": ("f32",), "tan": ("f32",),
    "floor": ("f32", "f16"), "ceil": ("f32",), "round_nearest_even": ("f32",), "round_nearest_afz": ("f64",),
    "popcnt": ("i32", "ui8"), "count_leading_zeros": ("i64", "ui16"),
}
BINARY_DTYPES = {
    "add": ("f32", "i32", "ui8"), "subtract": ("f32", "i64"), "multiply": ("f32", "bf16"),
    "divide": ("f32", "i32"), "remainder": ("f32", "i32"), "power": ("f32", "i32"), "maximum": ("f32", "ui32"),
    "minimum": ("f64", "i16"), "and": ("i1", "i32"), "or": ("i1", "ui8"), "xor": ("i1", "i16"),
    "shift_left": ("i32", "ui8"), "shift_right_arithmetic": ("i32",), "shift_right_logical": ("i32", "ui64"),
    "atan2": ("f32", "f64"),
}


def test_tables_cover_every_elementwise_op():
    assert set(UNARY_DTYPES) == set(hlo.UNARY_OPS)
    assert set(BINARY_DTYPES) == set(hlo.BINARY_OPS)


@pytest.mark.parametrize("op, elt", [(op, e) for op in hlo.UNARY_OPS for e in UNARY_DTYPES.get(op, ("f32",))])
def test_unary(op, elt):
    built = build([f"2x3x{elt}"], lambda x: hlo.unary(op, x))
    check(built, f"%0 = stablehlo.{op} %arg0 : tensor<2x3x{elt}>", [f"2x3x{elt}"])


@pytest.mark.parametrize("op, elt", [(op, e) for op in hlo.BINARY_OPS for e in BINARY_DTYPES.get(op, ("f32",))])
def test_binary(op, elt):
    built = build([f"4x{elt}", f"4x{elt}"], lambda x, y: hlo.binary(op, x, y))
    check(built, f"%0 = stablehlo.{op} %arg0, %arg1 : tensor<4x{elt}>", [f"4x{elt}"])


def test_binary_on_0d():
    check(build(["f32", "f32"], lambda x, y: hlo.binary("add", x, y)),
          "%0 = stablehlo.add %arg0, %arg1 : tensor<f32>", ["f32"])


COMPARE_TYPES = [  # element type -> the comparison type the builder must pick
    ("f32", "FLOAT"), ("f16", "FLOAT"), ("bf16", "FLOAT"), ("f64", "FLOAT"),
    ("i8", "SIGNED"), ("i32", "SIGNED"), ("i64", "SIGNED"),
    ("ui8", "UNSIGNED"), ("ui32", "UNSIGNED"), ("ui64", "UNSIGNED"), ("i1", "UNSIGNED"),
]


def test_comparison_directions():
    assert hlo.COMPARISON_DIRECTIONS == ("EQ", "NE", "LT", "LE", "GT", "GE")


@pytest.mark.parametrize("elt, kind", COMPARE_TYPES)
@pytest.mark.parametrize("direction", ["EQ", "NE", "LT", "LE", "GT", "GE"])
def test_compare(direction, elt, kind):
    built = build([f"3x{elt}", f"3x{elt}"], lambda x, y: hlo.compare(x, y, direction))
    check(built, f"%0 = stablehlo.compare {direction}, %arg0, %arg1, {kind} : "
                 f"(tensor<3x{elt}>, tensor<3x{elt}>) -> tensor<3xi1>", ["3xi1"])


def test_compare_0d():
    check(build(["i32", "i32"], lambda x, y: hlo.compare(x, y, "LE")),
          "%0 = stablehlo.compare LE, %arg0, %arg1, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>", ["i1"])


# --- coverage of the module's public builders ------------------------------------------------------

TESTED_BY_FAMILY = {"constant", "unary", "binary", "compare"}  # test_constant, test_unary, test_binary, ...
GENERATED = {fn.__name__ for fn in hlo.BUILDERS.values()}   # elementwise builders made from registry records


def public_builders():
    """The hand-written builders hlo exports (those of stablehlo.py, elementwise.py and regions.py)."""
    return {name for name, value in vars(hlo).items()
            if callable(value) and not name.startswith("_") and name not in GENERATED
            and getattr(value, "__module__", "").startswith("hlojit.dialects.")
            and not isinstance(value, type) and name in hlo.__all__}


def test_public_builders_are_found():
    assert {"constant", "unary", "reduce", "if_", "gather", "scatter", "map", "compare", "convert"} <= public_builders()


# --- the generated elementwise builders: one per registry record, result type by the record's rule ---------

GENERATED_CASES = {  # builder -> (argument types, printed line, result), beside UNARY_OPS and BINARY_OPS
    "is_finite": (["3xf64"], "%0 = stablehlo.is_finite %arg0 : (tensor<3xf64>) -> tensor<3xi1>", "3xi1"),
    "real": (["3xcomplex<f64>"], "%0 = stablehlo.real %arg0 : (tensor<3xcomplex<f64>>) -> tensor<3xf64>", "3xf64"),
    "imag": (["2xcomplex<f32>"], "%0 = stablehlo.imag %arg0 : (tensor<2xcomplex<f32>>) -> tensor<2xf32>", "2xf32"),
    "complex": (["2xf64", "2xf64"], "%0 = stablehlo.complex %arg0, %arg1 : tensor<2xcomplex<f64>>",
                "2xcomplex<f64>"),
    "select": (["i1", "2xi8", "2xi8"], "%0 = stablehlo.select %arg0, %arg1, %arg2 : tensor<i1>, tensor<2xi8>", "2xi8"),
    "clamp": (["f32", "3xf32", "f32"],
              "%0 = stablehlo.clamp %arg0, %arg1, %arg2 : (tensor<f32>, tensor<3xf32>, tensor<f32>) -> tensor<3xf32>",
              "3xf32"),
}


def test_every_generated_builder_is_tested():
    assert set(hlo.BUILDERS) == set(GENERATED_CASES) | set(hlo.UNARY_OPS) | set(hlo.BINARY_OPS)


@pytest.mark.parametrize("name", sorted(GENERATED_CASES))
def test_generated_builder(name):
    args, line, result = GENERATED_CASES[name]
    check(build(args, hlo.BUILDERS[name]), line, [result])


def test_abs_of_complex_is_real():
    check(build(["2xcomplex<f32>"], lambda x: hlo.unary("abs", x)),
          "%0 = stablehlo.abs %arg0 : (tensor<2xcomplex<f32>>) -> tensor<2xf32>", ["2xf32"])


def test_every_public_builder_has_golden_cases():
    covered = {g[0] for g in GOLDEN + test_dialects_regions.GOLDEN} | TESTED_BY_FAMILY
    assert public_builders() - covered == set()


def test_all_lists_every_public_builder():
    assert public_builders() <= set(hlo.__all__)
