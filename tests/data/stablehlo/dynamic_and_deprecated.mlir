// Conformance cases written for hlojit (hlojit/conformance.py reads them): stablehlo.dynamic_conv (its padding an
// operand) and the deprecated torch_index_select. Expected values: numpy loops over the spec's definitions.
// dynamic_conv is in the generic form: IREE 3.13's parser has no custom assembly for it.

func.func @dynamic_conv_padded() {
  %lhs = stablehlo.constant dense<[[[[1.0], [2.0], [3.0]], [[4.0], [5.0], [6.0]], [[7.0], [8.0], [9.0]]]]> : tensor<1x3x3x1xf32>
  %rhs = stablehlo.constant dense<1.0> : tensor<2x2x1x1xf32>
  %padding = stablehlo.constant dense<[[1, 0], [0, 1]]> : tensor<2x2xi64>
  %r = "stablehlo.dynamic_conv"(%lhs, %rhs, %padding) {dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>, feature_group_count = 1 : i64, batch_group_count = 1 : i64} : (tensor<1x3x3x1xf32>, tensor<2x2x1x1xf32>, tensor<2x2xi64>) -> tensor<1x3x3x1xf32>
  check.expect_eq_const %r, dense<[[[[3.0], [5.0], [3.0]], [[12.0], [16.0], [9.0]], [[24.0], [28.0], [15.0]]]]> : tensor<1x3x3x1xf32>
  func.return
}

// -----

func.func @dynamic_conv_strided() {
  %lhs = stablehlo.constant dense<[[[[1.0], [2.0], [3.0]], [[4.0], [5.0], [6.0]], [[7.0], [8.0], [9.0]]]]> : tensor<1x3x3x1xf32>
  %rhs = stablehlo.constant dense<[[[[1.0]], [[2.0]]], [[[3.0]], [[4.0]]]]> : tensor<2x2x1x1xf32>
  %padding = stablehlo.constant dense<[[1, 0], [0, 1]]> : tensor<2x2xi32>
  %r = "stablehlo.dynamic_conv"(%lhs, %rhs, %padding) {dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>, window_strides = array<i64: 2, 2>, feature_group_count = 1 : i64, batch_group_count = 1 : i64} : (tensor<1x3x3x1xf32>, tensor<2x2x1x1xf32>, tensor<2x2xi32>) -> tensor<1x2x2x1xf32>
  check.expect_eq_const %r, dense<[[[[11.0], [9.0]], [[67.0], [33.0]]]]> : tensor<1x2x2x1xf32>
  func.return
}

// -----

func.func @torch_index_select() {
  %x = stablehlo.constant dense<[[10, 11, 12], [20, 21, 22]]> : tensor<2x3xi32>
  %i = stablehlo.constant dense<[2, 0, 2, 1]> : tensor<4xi64>
  %b = stablehlo.constant dense<[[2, 2], [0, 1]]> : tensor<2x2xi32>
  %r0 = "stablehlo.torch_index_select"(%x, %i) {dim = 1 : i64, batch_dims = 0 : i64} : (tensor<2x3xi32>, tensor<4xi64>) -> tensor<2x4xi32>
  %r1 = "stablehlo.torch_index_select"(%x, %b) {dim = 1 : i64, batch_dims = 1 : i64} : (tensor<2x3xi32>, tensor<2x2xi32>) -> tensor<2x2xi32>
  check.expect_eq_const %r0, dense<[[12, 10, 12, 11], [22, 20, 22, 21]]> : tensor<2x4xi32>
  check.expect_eq_const %r1, dense<[[12, 12], [20, 21]]> : tensor<2x2xi32>
  func.return
}
