module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3x4xf32>) -> (tensor<4xf32> {jax.result_info = "result"}) {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<3x4xf32>
    %1 = stablehlo.compare GT, %arg0, %0, FLOAT : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xi1>
    %cst_0 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %2 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<3x4xf32>
    %3 = stablehlo.multiply %2, %arg0 : tensor<3x4xf32>
    %4 = call @_where(%1, %arg0, %3) : (tensor<3x4xi1>, tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %5 = stablehlo.reduce(%4 init: %cst_1) applies stablehlo.add across dimensions = [0] : (tensor<3x4xf32>, tensor<f32>) -> tensor<4xf32>
    %cst_2 = stablehlo.constant dense<3.000000e+00> : tensor<f32>
    %6 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %7 = stablehlo.divide %5, %6 : tensor<4xf32>
    return %7 : tensor<4xf32>
  }
  func.func private @_where(%arg0: tensor<3x4xi1>, %arg1: tensor<3x4xf32>, %arg2: tensor<3x4xf32>) -> tensor<3x4xf32> {
    %0 = stablehlo.select %arg0, %arg1, %arg2 : tensor<3x4xi1>, tensor<3x4xf32>
    return %0 : tensor<3x4xf32>
  }
}
