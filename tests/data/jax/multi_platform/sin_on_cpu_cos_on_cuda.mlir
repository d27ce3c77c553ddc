// jax.export.export(jax.jit(lambda x: lax.platform_dependent(x, cpu=jnp.sin, cuda=jnp.cos) * 2),
//                  platforms=("cuda", "cpu")) of f32[4], jax 0.10.2; locations dropped
module @jit_f attributes {jax.uses_shape_polymorphism = true, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<i32> {jax.global_constant = "_platform_index"}, %arg1: tensor<4xf32>) -> (tensor<4xf32> {jax.result_info = "result"}) {
    %cst = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %c_0 = stablehlo.constant dense<1> : tensor<i32>
    %0 = "stablehlo.case"(%arg0) ({
      stablehlo.return %c_0 : tensor<i32>
    }, {
      stablehlo.return %c : tensor<i32>
    }) : (tensor<i32>) -> tensor<i32>
    %1 = "stablehlo.case"(%0) ({
      stablehlo.return %c : tensor<i32>
    }, {
      stablehlo.return %c_0 : tensor<i32>
    }) : (tensor<i32>) -> tensor<i32>
    %2 = "stablehlo.case"(%1) ({
      stablehlo.return %c_0 : tensor<i32>
    }, {
      stablehlo.return %c : tensor<i32>
    }) : (tensor<i32>) -> tensor<i32>
    %3 = "stablehlo.case"(%2) ({
      %6 = stablehlo.cosine %arg1 : tensor<4xf32>
      stablehlo.return %6 : tensor<4xf32>
    }, {
      %6 = stablehlo.sine %arg1 : tensor<4xf32>
      stablehlo.return %6 : tensor<4xf32>
    }) : (tensor<i32>) -> tensor<4xf32>
    %4 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %5 = stablehlo.multiply %3, %4 : tensor<4xf32>
    return %5 : tensor<4xf32>
  }
}
