// Conformance cases written for hlojit (hlojit/conformance.py reads them): indexing.
// Expected values are numpy's evaluation of the StableHLO spec's definition of each op.

func.func @gather_rows_clamped() {
  %a0 = stablehlo.constant dense<[[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]]> : tensor<3x4xi32>
  %a1 = stablehlo.constant dense<[[2], [0], [5]]> : tensor<3x1xi32>
  %r0 = "stablehlo.gather"(%a0, %a1) {dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, slice_sizes = array<i64: 1, 4>} : (tensor<3x4xi32>, tensor<3x1xi32>) -> tensor<3x4xi32>
  check.expect_eq_const %r0, dense<[[8, 9, 10, 11], [0, 1, 2, 3], [8, 9, 10, 11]]> : tensor<3x4xi32>
  func.return
}

// -----

func.func @dynamic_gather() {
  %a0 = stablehlo.constant dense<[[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]]> : tensor<3x4xi32>
  %a1 = stablehlo.constant dense<[[1], [0]]> : tensor<2x1xi32>
  %a2 = stablehlo.constant dense<[1, 2]> : tensor<2xi64>
  %r0 = "stablehlo.dynamic_gather"(%a0, %a1, %a2) {dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>} : (tensor<3x4xi32>, tensor<2x1xi32>, tensor<2xi64>) -> tensor<2x2xi32>
  check.expect_eq_const %r0, dense<[[4, 5], [0, 1]]> : tensor<2x2xi32>
  func.return
}

// -----

func.func @scatter_add_repeated() {
  %a0 = stablehlo.constant dense<[0.0, 0.0, 0.0, 0.0]> : tensor<4xf32>
  %a1 = stablehlo.constant dense<[[1], [3], [1]]> : tensor<3x1xi32>
  %a2 = stablehlo.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %r0 = "stablehlo.scatter"(%a0, %a1, %a2) ({
  ^bb0(%p: tensor<f32>, %q: tensor<f32>):
    %s = stablehlo.add %p, %q : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) {scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>} : (tensor<4xf32>, tensor<3x1xi32>, tensor<3xf32>) -> tensor<4xf32>
  check.expect_eq_const %r0, dense<[0.0, 4.0, 0.0, 2.0]> : tensor<4xf32>
  func.return
}

// -----

func.func @scatter_batching_dims() {
  %a0 = stablehlo.constant dense<[[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]> : tensor<2x3xf32>
  %a1 = stablehlo.constant dense<[[2], [0]]> : tensor<2x1xi32>
  %a2 = stablehlo.constant dense<[5.0, 7.0]> : tensor<2xf32>
  %r0 = "stablehlo.scatter"(%a0, %a1, %a2) ({
  ^bb0(%p: tensor<f32>, %q: tensor<f32>):
    stablehlo.return %q : tensor<f32>
  }) {scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [1], input_batching_dims = [0], scatter_indices_batching_dims = [0], scatter_dims_to_operand_dims = [1], index_vector_dim = 1>} : (tensor<2x3xf32>, tensor<2x1xi32>, tensor<2xf32>) -> tensor<2x3xf32>
  check.expect_eq_const %r0, dense<[[0.0, 0.0, 5.0], [7.0, 0.0, 0.0]]> : tensor<2x3xf32>
  func.return
}
