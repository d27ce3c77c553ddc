module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<12xf64>) -> (tensor<12xf64> {jax.result_info = "result"}) {
    %0 = call @fft(%arg0) : (tensor<12xf64>) -> tensor<12xcomplex<f64>>
    %1 = stablehlo.abs %0 : (tensor<12xcomplex<f64>>) -> tensor<12xf64>
    return %1 : tensor<12xf64>
  }
  func.func private @fft(%arg0: tensor<12xf64>) -> tensor<12xcomplex<f64>> {
    %0 = stablehlo.convert %arg0 : (tensor<12xf64>) -> tensor<12xcomplex<f64>>
    %1 = stablehlo.fft %0, type = FFT, length = [12] : (tensor<12xcomplex<f64>>) -> tensor<12xcomplex<f64>>
    return %1 : tensor<12xcomplex<f64>>
  }
}
