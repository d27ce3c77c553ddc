"""Golden-text tests of the region builders of hlojit.dialects (regions.py): reduce, reduce_window,
select_and_scatter, if_, case, while_, map, sort and scatter, whose bodies are callables (or a binary op's name)
built into the op's regions. As test_dialects.py: each case's printed lines exactly, its result types, a module
that verifies."""
from __future__ import annotations

import numpy as np
import pytest

from hlojit.dialects import stablehlo as hlo

from dialect_golden import build, check


def argmax_body(acc_value, acc_index, value, index):
    """A two-input reduction body: keep the larger value and its index (accumulators come first)."""
    greater = hlo.compare(value, acc_value, "GT")
    return [hlo.select(greater, value, acc_value), hlo.select(greater, index, acc_index)]


def argmax(values, indices):
    inits = [hlo.constant(np.float32(-np.inf)), hlo.constant(np.int32(0))]
    return hlo.reduce([values, indices], inits, [1], argmax_body)


GOLDEN = [
    # builder, case, argument types, builder call, printed line(s), result types
    ("reduce", "named-add", ["2x3xf32"],
     lambda x: hlo.reduce([x], [hlo.constant(np.float32(0))], [1], "add"),
     ["%cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>",
      "%0 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.add across dimensions = [1] : "
      "(tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>"], ["2xf32"]),
    ("reduce", "named-maximum-all-dims", ["2x3xi32"],
     lambda x: hlo.reduce([x], [hlo.constant(np.int32(-2**31))], [0, 1], "maximum"),
     ["%c = stablehlo.constant dense<-2147483648> : tensor<i32>",
      "%0 = stablehlo.reduce(%arg0 init: %c) applies stablehlo.maximum across dimensions = [0, 1] : "
      "(tensor<2x3xi32>, tensor<i32>) -> tensor<i32>"], ["i32"]),
    ("reduce", "named-or-bool", ["4x2xi1"],
     lambda x: hlo.reduce([x], [hlo.constant(False)], [0], "or"),
     ["%c = stablehlo.constant dense<false> : tensor<i1>",
      "%0 = stablehlo.reduce(%arg0 init: %c) applies stablehlo.or across dimensions = [0] : "
      "(tensor<4x2xi1>, tensor<i1>) -> tensor<2xi1>"], ["2xi1"]),
    ("reduce", "callable-argmax", ["2x3xf32", "2x3xi32"], argmax,
     ["%cst = stablehlo.constant dense<0xFF800000> : tensor<f32>",
      "%c = stablehlo.constant dense<0> : tensor<i32>",
      "%0:2 = stablehlo.reduce(%arg0 init: %cst), (%arg1 init: %c) across dimensions = [1] : "
      "(tensor<2x3xf32>, tensor<2x3xi32>, tensor<f32>, tensor<i32>) -> (tensor<2xf32>, tensor<2xi32>)",
      "reducer(%arg2: tensor<f32>, %arg4: tensor<f32>) (%arg3: tensor<i32>, %arg5: tensor<i32>)  {",
      "%1 = stablehlo.compare GT, %arg4, %arg2, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>",
      "%2 = stablehlo.select %1, %arg4, %arg2 : tensor<i1>, tensor<f32>",
      "%3 = stablehlo.select %1, %arg5, %arg3 : tensor<i1>, tensor<i32>",
      "stablehlo.return %2, %3 : tensor<f32>, tensor<i32>",
      "}"], ["2xf32", "2xi32"]),
    ("reduce_window", "max-pool-same", ["1x3x8x8xf32", "f32"],
     lambda x, init: hlo.reduce_window([x], [init], window=[1, 1, 3, 3], strides=[1, 1, 2, 2],
                                       padding=[[0, 0], [0, 0], [1, 1], [1, 1]], body="maximum")[0],
     ['%0 = "stablehlo.reduce_window"(%arg0, %arg1) <{padding = dense<[[0, 0], [0, 0], [1, 1], [1, 1]]> : '
      'tensor<4x2xi64>, window_dimensions = array<i64: 1, 1, 3, 3>, window_strides = array<i64: 1, 1, 2, 2>}> ({',
      "^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):",
      "%1 = stablehlo.maximum %arg2, %arg3 : tensor<f32>",
      "stablehlo.return %1 : tensor<f32>",
      "}) : (tensor<1x3x8x8xf32>, tensor<f32>) -> tensor<1x3x4x4xf32>"], ["1x3x4x4xf32"]),
    ("select_and_scatter", "max-pool-gradient", ["4x6xf32", "2x2xf32", "f32"],
     lambda x, g, init: hlo.select_and_scatter(x, g, init, window=[2, 3], strides=[2, 3], padding=[[0, 0], [0, 0]],
                                               select="GE", scatter="add"),
     ['%0 = "stablehlo.select_and_scatter"(%arg0, %arg1, %arg2) <{padding = dense<0> : tensor<2x2xi64>, '
      'window_dimensions = array<i64: 2, 3>, window_strides = array<i64: 2, 3>}> ({',
      "^bb0(%arg3: tensor<f32>, %arg4: tensor<f32>):",
      "%1 = stablehlo.compare GE, %arg3, %arg4, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>",
      "stablehlo.return %1 : tensor<i1>", "}, {",
      "^bb0(%arg3: tensor<f32>, %arg4: tensor<f32>):",
      "%1 = stablehlo.add %arg3, %arg4 : tensor<f32>",
      "stablehlo.return %1 : tensor<f32>",
      "}) : (tensor<4x6xf32>, tensor<2x2xf32>, tensor<f32>) -> tensor<4x6xf32>"], ["4x6xf32"]),
    # control family: region bodies are callables; if/case take their result types from the bodies
    ("if_", "one-result", ["i1", "3xf32"], lambda p, x: hlo.if_(p, lambda: [hlo.unary("negate", x)], lambda: [x]),
     ['%0 = "stablehlo.if"(%arg0) ({', "%1 = stablehlo.negate %arg1 : tensor<3xf32>",
      "stablehlo.return %1 : tensor<3xf32>", "}, {", "stablehlo.return %arg1 : tensor<3xf32>",
      "}) : (tensor<i1>) -> tensor<3xf32>"], ["3xf32"]),
    ("if_", "two-results", ["i1", "2xi32", "f16"],
     lambda p, x, y: hlo.if_(p, lambda: [x, y], lambda: [hlo.binary("add", x, x), hlo.unary("negate", y)]),
     ['%0:2 = "stablehlo.if"(%arg0) ({', "stablehlo.return %arg1, %arg2 : tensor<2xi32>, tensor<f16>", "}, {",
      "%1 = stablehlo.add %arg1, %arg1 : tensor<2xi32>", "%2 = stablehlo.negate %arg2 : tensor<f16>",
      "stablehlo.return %1, %2 : tensor<2xi32>, tensor<f16>",
      "}) : (tensor<i1>) -> (tensor<2xi32>, tensor<f16>)"], ["2xi32", "f16"]),
    ("case", "three-branches", ["i32", "2xf32"],
     lambda k, x: hlo.case(k, [lambda: [x], lambda: [hlo.unary("abs", x)], lambda: [hlo.binary("multiply", x, x)]]),
     ['%0 = "stablehlo.case"(%arg0) ({', "stablehlo.return %arg1 : tensor<2xf32>", "}, {",
      "%1 = stablehlo.abs %arg1 : tensor<2xf32>", "stablehlo.return %1 : tensor<2xf32>", "}, {",
      "%1 = stablehlo.multiply %arg1, %arg1 : tensor<2xf32>", "stablehlo.return %1 : tensor<2xf32>",
      "}) : (tensor<i32>) -> tensor<2xf32>"], ["2xf32"]),
    ("case", "one-branch-returns-its-index", ["i32", "ui8"], lambda k, x: hlo.case(k, [lambda: [x, k]]),
     ['%0:2 = "stablehlo.case"(%arg0) ({', "stablehlo.return %arg1, %arg0 : tensor<ui8>, tensor<i32>",
      "}) : (tensor<i32>) -> (tensor<ui8>, tensor<i32>)"], ["ui8", "i32"]),
    ("while_", "count-to-n", ["i32", "3xf32"],
     lambda n, x: hlo.while_([hlo.constant(np.int32(0)), x], lambda i, a: [hlo.compare(i, n, "LT")],
                             lambda i, a: [hlo.binary("add", i, hlo.constant(np.int32(1))), hlo.binary("multiply", a, a)]),
     ["%c = stablehlo.constant dense<0> : tensor<i32>",
      "%0:2 = stablehlo.while(%iterArg = %c, %iterArg_0 = %arg1) : tensor<i32>, tensor<3xf32>", "cond {",
      "%1 = stablehlo.compare LT, %iterArg, %arg0, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>",
      "stablehlo.return %1 : tensor<i1>", "} do {", "%c_1 = stablehlo.constant dense<1> : tensor<i32>",
      "%1 = stablehlo.add %iterArg, %c_1 : tensor<i32>", "%2 = stablehlo.multiply %iterArg_0, %iterArg_0 : tensor<3xf32>",
      "stablehlo.return %1, %2 : tensor<i32>, tensor<3xf32>", "}"], ["i32", "3xf32"]),
    ("while_", "one-value", ["ui32"],
     lambda x: hlo.while_([x], lambda a: [hlo.compare(a, x, "NE")], lambda a: [a]),
     ["%0 = stablehlo.while(%iterArg = %arg0) : tensor<ui32>", "cond {",
      "%1 = stablehlo.compare NE, %iterArg, %arg0, UNSIGNED : (tensor<ui32>, tensor<ui32>) -> tensor<i1>",
      "stablehlo.return %1 : tensor<i1>", "} do {", "stablehlo.return %iterArg : tensor<ui32>", "}"], ["ui32"]),
    ("map", "xor", ["3xui32", "3xui32"], lambda a, b: hlo.map([a, b], lambda x, y: hlo.binary("xor", x, y)),
     ['%0 = "stablehlo.map"(%arg0, %arg1) <{dimensions = array<i64: 0>}> ({',
      "^bb0(%arg2: tensor<ui32>, %arg3: tensor<ui32>):", "%1 = stablehlo.xor %arg2, %arg3 : tensor<ui32>",
      "stablehlo.return %1 : tensor<ui32>", "}) : (tensor<3xui32>, tensor<3xui32>) -> tensor<3xui32>"], ["3xui32"]),
    ("map", "2d-to-bool", ["2x2xf32"],
     lambda a: hlo.map([a], lambda x: hlo.compare(x, hlo.constant(np.float32(0)), "GT")),
     ['%0 = "stablehlo.map"(%arg0) <{dimensions = array<i64: 0, 1>}> ({', "^bb0(%arg1: tensor<f32>):",
      "%cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>",
      "%1 = stablehlo.compare GT, %arg1, %cst, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>",
      "stablehlo.return %1 : tensor<i1>", "}) : (tensor<2x2xf32>) -> tensor<2x2xi1>"], ["2x2xi1"]),
    ("sort", "one-operand", ["2x3xf32"], lambda x: hlo.sort([x], 1, lambda a, b: hlo.compare(a, b, "LT")),
     ['%0 = "stablehlo.sort"(%arg0) <{dimension = 1 : i64, is_stable = false}> ({',
      "^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>):",
      "%1 = stablehlo.compare LT, %arg1, %arg2, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>",
      "stablehlo.return %1 : tensor<i1>", "}) : (tensor<2x3xf32>) -> tensor<2x3xf32>"], ["2x3xf32"]),
    ("sort", "stable-with-indices", ["4xi8", "4xi32"],
     lambda x, i: hlo.sort([x, i], 0, lambda a, b, ia, ib: hlo.compare(a, b, "GT"), is_stable=True),
     ['%0:2 = "stablehlo.sort"(%arg0, %arg1) <{dimension = 0 : i64, is_stable = true}> ({',
      "^bb0(%arg2: tensor<i8>, %arg3: tensor<i8>, %arg4: tensor<i32>, %arg5: tensor<i32>):",
      "%1 = stablehlo.compare GT, %arg2, %arg3, SIGNED : (tensor<i8>, tensor<i8>) -> tensor<i1>",
      "stablehlo.return %1 : tensor<i1>", "}) : (tensor<4xi8>, tensor<4xi32>) -> (tensor<4xi8>, tensor<4xi32>)"],
     ["4xi8", "4xi32"]),
    ("scatter", "add-rows", ["5x3xf32", "4x1xi32", "4x3xf32"],
     lambda x, i, u: hlo.scatter(x, i, u, "add", update_window_dims=[1], inserted_window_dims=[0],
                                 scatter_dims_to_operand_dims=[0], index_vector_dim=1),
     ['%0 = "stablehlo.scatter"(%arg0, %arg1, %arg2) <{indices_are_sorted = false, scatter_dimension_numbers = '
      '#stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], '
      'index_vector_dim = 1>, unique_indices = false}> ({',
      "^bb0(%arg3: tensor<f32>, %arg4: tensor<f32>):", "%1 = stablehlo.add %arg3, %arg4 : tensor<f32>",
      "stablehlo.return %1 : tensor<f32>",
      "}) : (tensor<5x3xf32>, tensor<4x1xi32>, tensor<4x3xf32>) -> tensor<5x3xf32>"], ["5x3xf32"]),
    ("scatter", "replace-bool", ["5xi1", "2x1xi32", "2xi1"],
     lambda x, i, u: hlo.scatter(x, i, u, lambda current, update: [update], update_window_dims=[],
                                 inserted_window_dims=[0], scatter_dims_to_operand_dims=[0], index_vector_dim=1,
                                 unique_indices=True),
     ['%0 = "stablehlo.scatter"(%arg0, %arg1, %arg2) <{indices_are_sorted = false, scatter_dimension_numbers = '
      '#stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, '
      'unique_indices = true}> ({',
      "^bb0(%arg3: tensor<i1>, %arg4: tensor<i1>):", "stablehlo.return %arg4 : tensor<i1>",
      "}) : (tensor<5xi1>, tensor<2x1xi32>, tensor<2xi1>) -> tensor<5xi1>"], ["5xi1"]),
    ("scatter", "batching-dims-max", ["3x5xi8", "3x2x1xi32", "3x2xi8"],
     lambda x, i, u: hlo.scatter(x, i, u, "maximum", update_window_dims=[], inserted_window_dims=[1],
                                 input_batching_dims=[0], scatter_indices_batching_dims=[0],
                                 scatter_dims_to_operand_dims=[1], index_vector_dim=2),
     ['%0 = "stablehlo.scatter"(%arg0, %arg1, %arg2) <{indices_are_sorted = false, scatter_dimension_numbers = '
      '#stablehlo.scatter<inserted_window_dims = [1], input_batching_dims = [0], scatter_indices_batching_dims = '
      '[0], scatter_dims_to_operand_dims = [1], index_vector_dim = 2>, unique_indices = false}> ({',
      "^bb0(%arg3: tensor<i8>, %arg4: tensor<i8>):", "%1 = stablehlo.maximum %arg3, %arg4 : tensor<i8>",
      "stablehlo.return %1 : tensor<i8>",
      "}) : (tensor<3x5xi8>, tensor<3x2x1xi32>, tensor<3x2xi8>) -> tensor<3x5xi8>"], ["3x5xi8"]),
]


@pytest.mark.parametrize("args, make, lines, results", [pytest.param(*g[2:], id=f"{g[0]}-{g[1]}") for g in GOLDEN])
def test_golden(args, make, lines, results):
    check(build(args, make), lines, results)
