module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x8xf32>, %arg1: tensor<8x2xf32>, %arg2: tensor<2xf32>) -> (tensor<4x2xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
    %1 = stablehlo.broadcast_in_dim %arg2, dims = [1] : (tensor<2xf32>) -> tensor<1x2xf32>
    %2 = stablehlo.broadcast_in_dim %1, dims = [0, 1] : (tensor<1x2xf32>) -> tensor<4x2xf32>
    %3 = stablehlo.add %0, %2 : tensor<4x2xf32>
    %4 = call @relu(%3) : (tensor<4x2xf32>) -> tensor<4x2xf32>
    return %4 : tensor<4x2xf32>
  }
  func.func private @relu(%arg0: tensor<4x2xf32>) -> tensor<4x2xf32> {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<4x2xf32>
    %1 = stablehlo.maximum %arg0, %0 : tensor<4x2xf32>
    return %1 : tensor<4x2xf32>
  }
}
