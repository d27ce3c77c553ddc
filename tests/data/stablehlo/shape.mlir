// Conformance cases written for hlojit (hlojit/conformance.py reads them): shape.
// Expected values are numpy's evaluation of the StableHLO spec's definition of each op.

func.func @broadcast_in_dim() {
  %a0 = stablehlo.constant dense<[1, 2, 3]> : tensor<3xi32>
  %r0 = stablehlo.broadcast_in_dim %a0, dims = [1] : (tensor<3xi32>) -> tensor<2x3xi32>
  check.expect_eq_const %r0, dense<[[1, 2, 3], [1, 2, 3]]> : tensor<2x3xi32>
  func.return
}

// -----

func.func @broadcast_in_dim_transposing() {
  %a0 = stablehlo.constant dense<[[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]> : tensor<2x3xf32>
  %r0 = stablehlo.broadcast_in_dim %a0, dims = [2, 0] : (tensor<2x3xf32>) -> tensor<3x4x2xf32>
  check.expect_eq_const %r0, dense<[[[0.0, 3.0], [0.0, 3.0], [0.0, 3.0], [0.0, 3.0]], [[1.0, 4.0], [1.0, 4.0], [1.0, 4.0], [1.0, 4.0]], [[2.0, 5.0], [2.0, 5.0], [2.0, 5.0], [2.0, 5.0]]]> : tensor<3x4x2xf32>
  func.return
}

// -----

func.func @reshape_transpose() {
  %a0 = stablehlo.constant dense<[[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]> : tensor<2x3xf32>
  %r0 = stablehlo.reshape %a0 : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %r1 = stablehlo.transpose %a0, dims = [1, 0] : (tensor<2x3xf32>) -> tensor<3x2xf32>
  check.expect_eq_const %r0, dense<[[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]]> : tensor<3x2xf32>
  check.expect_eq_const %r1, dense<[[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]> : tensor<3x2xf32>
  func.return
}

// -----

func.func @concatenate() {
  %a0 = stablehlo.constant dense<[[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]> : tensor<2x3xf32>
  %a1 = stablehlo.constant dense<[[0.0], [3.0]]> : tensor<2x1xf32>
  %r0 = stablehlo.concatenate %a0, %a1, dim = 1 : (tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>
  check.expect_eq_const %r0, dense<[[0.0, 1.0, 2.0, 0.0], [3.0, 4.0, 5.0, 3.0]]> : tensor<2x4xf32>
  func.return
}

// -----

func.func @slice_strided() {
  %a0 = stablehlo.constant dense<[0, 1, 2, 3, 4, 5, 6, 7, 8, 9]> : tensor<10xi32>
  %r0 = stablehlo.slice %a0 [1:9:3] : (tensor<10xi32>) -> tensor<3xi32>
  check.expect_eq_const %r0, dense<[1, 4, 7]> : tensor<3xi32>
  func.return
}

// -----

func.func @pad_interior_negative() {
  %a0 = stablehlo.constant dense<[1, 2, 3]> : tensor<3xi32>
  %a1 = stablehlo.constant dense<0> : tensor<i32>
  %r0 = stablehlo.pad %a0, %a1, low = [-1], high = [2], interior = [1] : (tensor<3xi32>, tensor<i32>) -> tensor<6xi32>
  check.expect_eq_const %r0, dense<[0, 2, 0, 3, 0, 0]> : tensor<6xi32>
  func.return
}

// -----

func.func @reverse() {
  %a0 = stablehlo.constant dense<[[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]> : tensor<2x3xf32>
  %r0 = stablehlo.reverse %a0, dims = [0, 1] : tensor<2x3xf32>
  check.expect_eq_const %r0, dense<[[5.0, 4.0, 3.0], [2.0, 1.0, 0.0]]> : tensor<2x3xf32>
  func.return
}

// -----

func.func @iota() {
  %r0 = stablehlo.iota dim = 1 : tensor<2x3xi32>
  check.expect_eq_const %r0, dense<[[0, 1, 2], [0, 1, 2]]> : tensor<2x3xi32>
  func.return
}

// -----

func.func @dynamic_slice_clamped() {
  %a0 = stablehlo.constant dense<[0, 1, 2, 3, 4, 5, 6, 7, 8, 9]> : tensor<10xi32>
  %a1 = stablehlo.constant dense<8> : tensor<i64>
  %r0 = stablehlo.dynamic_slice %a0, %a1, sizes = [4] : (tensor<10xi32>, tensor<i64>) -> tensor<4xi32>
  check.expect_eq_const %r0, dense<[6, 7, 8, 9]> : tensor<4xi32>
  func.return
}

// -----

func.func @dynamic_update_slice() {
  %a0 = stablehlo.constant dense<[0, 0, 0, 0, 0]> : tensor<5xi32>
  %a1 = stablehlo.constant dense<[7, 8]> : tensor<2xi32>
  %a2 = stablehlo.constant dense<-2> : tensor<i32>
  %r0 = stablehlo.dynamic_update_slice %a0, %a1, %a2 : (tensor<5xi32>, tensor<2xi32>, tensor<i32>) -> tensor<5xi32>
  check.expect_eq_const %r0, dense<[7, 8, 0, 0, 0]> : tensor<5xi32>
  func.return
}

// -----

func.func @get_dimension_size() {
  %a0 = stablehlo.constant dense<[[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]> : tensor<2x3xf32>
  %r0 = stablehlo.get_dimension_size %a0, dim = 1 : (tensor<2x3xf32>) -> tensor<i32>
  check.expect_eq_const %r0, dense<3> : tensor<i32>
  func.return
}

// -----

func.func @dynamic_reshape() {
  %a0 = stablehlo.constant dense<[[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]> : tensor<2x3xf32>
  %a1 = stablehlo.constant dense<[3, 2]> : tensor<2xi64>
  %r0 = stablehlo.dynamic_reshape %a0, %a1 : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<3x2xf32>
  check.expect_eq_const %r0, dense<[[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]]> : tensor<3x2xf32>
  func.return
}

// -----

func.func @dynamic_iota() {
  %a0 = stablehlo.constant dense<[3]> : tensor<1xi64>
  %r0 = stablehlo.dynamic_iota %a0, dim = 0 : (tensor<1xi64>) -> tensor<3xi32>
  check.expect_eq_const %r0, dense<[0, 1, 2]> : tensor<3xi32>
  func.return
}

// -----

func.func @dynamic_broadcast_in_dim() {
  %a0 = stablehlo.constant dense<[1, 2]> : tensor<2xi32>
  %a1 = stablehlo.constant dense<[3, 2]> : tensor<2xi64>
  %r0 = stablehlo.dynamic_broadcast_in_dim %a0, %a1, dims = [1] : (tensor<2xi32>, tensor<2xi64>) -> tensor<3x2xi32>
  check.expect_eq_const %r0, dense<[[1, 2], [1, 2], [1, 2]]> : tensor<3x2xi32>
  func.return
}

// -----

func.func @dynamic_pad() {
  %a0 = stablehlo.constant dense<[1, 2]> : tensor<2xi32>
  %a1 = stablehlo.constant dense<9> : tensor<i32>
  %a2 = stablehlo.constant dense<[1]> : tensor<1xi64>
  %a3 = stablehlo.constant dense<[0]> : tensor<1xi64>
  %a4 = stablehlo.constant dense<[1]> : tensor<1xi64>
  %r0 = stablehlo.dynamic_pad %a0, %a1, %a2, %a3, %a4 : (tensor<2xi32>, tensor<i32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4xi32>
  check.expect_eq_const %r0, dense<[9, 1, 9, 2]> : tensor<4xi32>
  func.return
}

// -----

func.func @real_dynamic_slice() {
  %a0 = stablehlo.constant dense<[0, 1, 2, 3, 4, 5, 6, 7]> : tensor<8xi32>
  %a1 = stablehlo.constant dense<[1]> : tensor<1xi64>
  %a2 = stablehlo.constant dense<[7]> : tensor<1xi64>
  %a3 = stablehlo.constant dense<[2]> : tensor<1xi64>
  %r0 = stablehlo.real_dynamic_slice %a0, %a1, %a2, %a3 : (tensor<8xi32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi32>
  check.expect_eq_const %r0, dense<[1, 3, 5]> : tensor<3xi32>
  func.return
}
