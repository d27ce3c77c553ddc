// Conformance cases written for hlojit (hlojit/conformance.py reads them): reductions.
// Expected values are numpy's evaluation of the StableHLO spec's definition of each op.

func.func @reduce_sum() {
  %a0 = stablehlo.constant dense<[[-5.0, -4.0, -3.0, -2.0], [-1.0, 0.0, 1.0, 2.0], [3.0, 4.0, 5.0, 6.0]]> : tensor<3x4xf32>
  %a1 = stablehlo.constant dense<0.0> : tensor<f32>
  %r0 = stablehlo.reduce(%a0 init: %a1) applies stablehlo.add across dimensions = [1] : (tensor<3x4xf32>, tensor<f32>) -> tensor<3xf32>
  check.expect_eq_const %r0, dense<[-14.0, 2.0, 18.0]> : tensor<3xf32>
  func.return
}

// -----

func.func @reduce_max_i32() {
  %a0 = stablehlo.constant dense<[[-5, -4, -3, -2], [-1, 0, 1, 2], [3, 4, 5, 6]]> : tensor<3x4xi32>
  %a1 = stablehlo.constant dense<-2147483648> : tensor<i32>
  %r0 = stablehlo.reduce(%a0 init: %a1) applies stablehlo.maximum across dimensions = [0, 1] : (tensor<3x4xi32>, tensor<i32>) -> tensor<i32>
  check.expect_eq_const %r0, dense<6> : tensor<i32>
  func.return
}

// -----

func.func @reduce_window_sum() {
  %a0 = stablehlo.constant dense<[0.0, 1.0, 2.0, 3.0, 4.0]> : tensor<5xf32>
  %a1 = stablehlo.constant dense<0.0> : tensor<f32>
  %r0 = "stablehlo.reduce_window"(%a0, %a1) ({
  ^bb0(%p: tensor<f32>, %q: tensor<f32>):
    %s = stablehlo.add %p, %q : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) {window_dimensions = array<i64: 2>, window_strides = array<i64: 2>, padding = dense<[[1, 0]]> : tensor<1x2xi64>} : (tensor<5xf32>, tensor<f32>) -> tensor<3xf32>
  check.expect_eq_const %r0, dense<[0.0, 3.0, 7.0]> : tensor<3xf32>
  func.return
}

// -----

func.func @reduce_window_dilated() {
  %a0 = stablehlo.constant dense<[0.0, 1.0, 2.0, 3.0]> : tensor<4xf32>
  %a1 = stablehlo.constant dense<0.0> : tensor<f32>
  %r0 = "stablehlo.reduce_window"(%a0, %a1) ({
  ^bb0(%p: tensor<f32>, %q: tensor<f32>):
    %s = stablehlo.add %p, %q : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) {window_dimensions = array<i64: 2>, window_strides = array<i64: 1>, base_dilations = array<i64: 2>, window_dilations = array<i64: 2>} : (tensor<4xf32>, tensor<f32>) -> tensor<5xf32>
  check.expect_eq_const %r0, dense<[1.0, 0.0, 3.0, 0.0, 5.0]> : tensor<5xf32>
  func.return
}

// -----

func.func @select_and_scatter() {
  %a0 = stablehlo.constant dense<[[1.0, 5.0], [2.0, 3.0], [7.0, 4.0], [1.0, 9.0]]> : tensor<4x2xf32>
  %a1 = stablehlo.constant dense<[[10.0, 20.0]]> : tensor<1x2xf32>
  %a2 = stablehlo.constant dense<0.0> : tensor<f32>
  %r0 = "stablehlo.select_and_scatter"(%a0, %a1, %a2) ({
  ^bb0(%p: tensor<f32>, %q: tensor<f32>):
    %c = stablehlo.compare GE, %p, %q, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }, {
  ^bb0(%p: tensor<f32>, %q: tensor<f32>):
    %s = stablehlo.add %p, %q : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) {window_dimensions = array<i64: 4, 1>, window_strides = array<i64: 4, 1>} : (tensor<4x2xf32>, tensor<1x2xf32>, tensor<f32>) -> tensor<4x2xf32>
  check.expect_eq_const %r0, dense<[[0.0, 0.0], [0.0, 0.0], [10.0, 0.0], [0.0, 20.0]]> : tensor<4x2xf32>
  func.return
}

// -----

func.func @sort_descending() {
  %a0 = stablehlo.constant dense<[3, 1, 2, 5]> : tensor<4xi32>
  %r0 = "stablehlo.sort"(%a0) ({
  ^bb0(%p: tensor<i32>, %q: tensor<i32>):
    %c = stablehlo.compare GT, %p, %q, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }) {dimension = 0 : i64, is_stable = true} : (tensor<4xi32>) -> tensor<4xi32>
  check.expect_eq_const %r0, dense<[5, 3, 2, 1]> : tensor<4xi32>
  func.return
}

// -----

func.func @dot_general_matmul() {
  %a0 = stablehlo.constant dense<[[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]> : tensor<2x3xf32>
  %a1 = stablehlo.constant dense<[[0.0, 1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0], [8.0, 9.0, 10.0, 11.0]]> : tensor<3x4xf32>
  %r0 = stablehlo.dot_general %a0, %a1, contracting_dims = [1] x [0] : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  check.expect_eq_const %r0, dense<[[20.0, 23.0, 26.0, 29.0], [56.0, 68.0, 80.0, 92.0]]> : tensor<2x4xf32>
  func.return
}

// -----

func.func @dot_general_batched() {
  %a0 = stablehlo.constant dense<[[[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]], [[6.0, 7.0, 8.0], [9.0, 10.0, 11.0]]]> : tensor<2x2x3xf32>
  %a1 = stablehlo.constant dense<[[[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]], [[6.0, 7.0, 8.0], [9.0, 10.0, 11.0]]]> : tensor<2x2x3xf32>
  %r0 = stablehlo.dot_general %a0, %a1, batching_dims = [0] x [0], contracting_dims = [2] x [2] : (tensor<2x2x3xf32>, tensor<2x2x3xf32>) -> tensor<2x2x2xf32>
  check.expect_eq_const %r0, dense<[[[5.0, 14.0], [14.0, 50.0]], [[149.0, 212.0], [212.0, 302.0]]]> : tensor<2x2x2xf32>
  func.return
}

// -----

func.func @dot_general_i8() {
  %a0 = stablehlo.constant dense<[[0, 1, 2], [3, 4, 5]]> : tensor<2x3xi8>
  %a1 = stablehlo.constant dense<[[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]]> : tensor<3x4xi8>
  %r0 = stablehlo.dot_general %a0, %a1, contracting_dims = [1] x [0] : (tensor<2x3xi8>, tensor<3x4xi8>) -> tensor<2x4xi32>
  check.expect_eq_const %r0, dense<[[20, 23, 26, 29], [56, 68, 80, 92]]> : tensor<2x4xi32>
  func.return
}

// -----

func.func @dot_legacy() {
  %a0 = stablehlo.constant dense<[[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]> : tensor<2x3xf32>
  %a1 = stablehlo.constant dense<[[0.0, 1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0], [8.0, 9.0, 10.0, 11.0]]> : tensor<3x4xf32>
  %r0 = stablehlo.dot %a0, %a1 : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  check.expect_eq_const %r0, dense<[[20.0, 23.0, 26.0, 29.0], [56.0, 68.0, 80.0, 92.0]]> : tensor<2x4xf32>
  func.return
}

// -----

func.func @convolution_nchw() {
  %a0 = stablehlo.constant dense<[[[[0.0, 1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0], [8.0, 9.0, 10.0, 11.0], [12.0, 13.0, 14.0, 15.0]]]]> : tensor<1x1x4x4xf32>
  %a1 = stablehlo.constant dense<[[[[1.0, 0.0], [0.0, -1.0]]]]> : tensor<1x1x2x2xf32>
  %r0 = stablehlo.convolution(%a0, %a1) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {stride = [1, 1], pad = [[0, 0], [0, 0]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x1x4x4xf32>, tensor<1x1x2x2xf32>) -> tensor<1x1x3x3xf32>
  check.expect_eq_const %r0, dense<[[[[-5.0, -5.0, -5.0], [-5.0, -5.0, -5.0], [-5.0, -5.0, -5.0]]]]> : tensor<1x1x3x3xf32>
  func.return
}

// -----

func.func @batch_norm_inference() {
  %a0 = stablehlo.constant dense<[[[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]], [[6.0, 7.0], [8.0, 9.0], [10.0, 11.0]]]> : tensor<2x3x2xf32>
  %a1 = stablehlo.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %a2 = stablehlo.constant dense<[0.0, 1.0, -1.0]> : tensor<3xf32>
  %a3 = stablehlo.constant dense<[3.5, 5.5, 7.5]> : tensor<3xf32>
  %a4 = stablehlo.constant dense<[9.25, 9.25, 9.25]> : tensor<3xf32>
  %r0 = "stablehlo.batch_norm_inference"(%a0, %a1, %a2, %a3, %a4) {epsilon = 0.001 : f32, feature_index = 1 : i64} : (tensor<2x3x2xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x2xf32>
  check.expect_almost_eq_const %r0, dense<[[[-1.15073073, -0.821950495], [-1.30146146, -0.64390099], [-4.45219231, -3.46585155]], [[0.821950495, 1.15073073], [2.64390087, 3.30146146], [1.46585155, 2.45219231]]]> : tensor<2x3x2xf32>
  func.return
}

// -----

func.func @batch_norm_training() {
  %a0 = stablehlo.constant dense<[[[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]], [[6.0, 7.0], [8.0, 9.0], [10.0, 11.0]]]> : tensor<2x3x2xf32>
  %a1 = stablehlo.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %a2 = stablehlo.constant dense<[0.0, 1.0, -1.0]> : tensor<3xf32>
  %r0, %r1, %r2 = "stablehlo.batch_norm_training"(%a0, %a1, %a2) {epsilon = 0.001 : f32, feature_index = 1 : i64} : (tensor<2x3x2xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3x2xf32>, tensor<3xf32>, tensor<3xf32>)
  check.expect_almost_eq_const %r0, dense<[[[-1.15073073, -0.821950495], [-1.30146146, -0.64390099], [-4.45219231, -3.46585155]], [[0.821950495, 1.15073073], [2.64390087, 3.30146146], [1.46585155, 2.45219231]]]> : tensor<2x3x2xf32>
  check.expect_almost_eq_const %r1, dense<[3.5, 5.5, 7.5]> : tensor<3xf32>
  check.expect_almost_eq_const %r2, dense<[9.25, 9.25, 9.25]> : tensor<3xf32>
  func.return
}

// -----

func.func @integer_products_in_the_wider_result_type() {
  %a0 = stablehlo.constant dense<[[100, -100, 127], [-128, 50, 3]]> : tensor<2x3xi8>
  %a1 = stablehlo.constant dense<[[100, 1], [100, 2], [127, -128]]> : tensor<3x2xi8>
  %r0 = stablehlo.dot_general %a0, %a1, contracting_dims = [1] x [0] : (tensor<2x3xi8>, tensor<3x2xi8>) -> tensor<2x2xi32>
  %x = stablehlo.constant dense<[[[[120], [120], [120]]]]> : tensor<1x1x3x1xi8>
  %w = stablehlo.constant dense<[[[[100]], [[100]]]]> : tensor<1x2x1x1xi8>
  %r1 = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 1]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x1x3x1xi8>, tensor<1x2x1x1xi8>) -> tensor<1x1x2x1xi32>
  check.expect_eq_const %r0, dense<[[16129, -16356], [-7419, -412]]> : tensor<2x2xi32>
  check.expect_eq_const %r1, dense<[[[[24000], [24000]]]]> : tensor<1x1x2x1xi32>
  func.return
}
