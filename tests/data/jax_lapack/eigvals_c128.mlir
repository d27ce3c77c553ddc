// jax.jit(jnp.linalg.eigvals).lower(c128[4, 4]) (jax_enable_x64), jax 0.10.2
module @jit_eigvals attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x4xcomplex<f64>>) -> (tensor<4xcomplex<f64>> {jax.result_info = "result"}) {
    %0 = call @eigvals(%arg0) : (tensor<4x4xcomplex<f64>>) -> tensor<4xcomplex<f64>>
    return %0 : tensor<4xcomplex<f64>>
  }
  func.func private @eigvals(%arg0: tensor<4x4xcomplex<f64>>) -> tensor<4xcomplex<f64>> {
    %0:4 = stablehlo.custom_call @lapack_zgeev_ffi(%arg0) {backend_config = "", mhlo.backend_config = {compute_left = 78 : ui8, compute_right = 78 : ui8}, mhlo.frontend_attributes = {num_batch_dims = "0"}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>], result_layouts = [dense<0> : tensor<1xindex>, dense<[0, 1]> : tensor<2xindex>, dense<[0, 1]> : tensor<2xindex>, dense<> : tensor<0xindex>], sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([k], [l, m], [n, o], []) {i=4, j=4, k=4, l=4, m=4, n=4, o=4}, custom>} : (tensor<4x4xcomplex<f64>>) -> (tensor<4xcomplex<f64>>, tensor<4x4xcomplex<f64>>, tensor<4x4xcomplex<f64>>, tensor<i32>)
    %c = stablehlo.constant dense<0> : tensor<i32>
    %1 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<i32>
    %2 = stablehlo.compare EQ, %0#3, %1, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %3 = stablehlo.broadcast_in_dim %2, dims = [] : (tensor<i1>) -> tensor<1xi1>
    %cst = stablehlo.constant dense<(0x7FF8000000000000,0x7FF8000000000000)> : tensor<complex<f64>>
    %4 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<complex<f64>>) -> tensor<4xcomplex<f64>>
    %5 = stablehlo.broadcast_in_dim %3, dims = [0] : (tensor<1xi1>) -> tensor<4xi1>
    %6 = stablehlo.select %5, %0#0, %4 : tensor<4xi1>, tensor<4xcomplex<f64>>
    return %6 : tensor<4xcomplex<f64>>
  }
}
