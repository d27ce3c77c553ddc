module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3x20xf32>) -> (tensor<3x20xf32> {jax.result_info = "result"}) {
    %0 = call @fft(%arg0) : (tensor<3x20xf32>) -> tensor<3x11xcomplex<f32>>
    %cst = stablehlo.constant dense<(5.000000e-01,0.000000e+00)> : tensor<complex<f32>>
    %1 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<complex<f32>>) -> tensor<3x11xcomplex<f32>>
    %2 = stablehlo.multiply %0, %1 : tensor<3x11xcomplex<f32>>
    %c = stablehlo.constant dense<0> : tensor<i64>
    %3 = call @_pad(%2, %c) : (tensor<3x11xcomplex<f32>>, tensor<i64>) -> tensor<3x11xcomplex<f32>>
    %4 = call @fft_0(%3) : (tensor<3x11xcomplex<f32>>) -> tensor<3x20xf32>
    return %4 : tensor<3x20xf32>
  }
  func.func private @fft(%arg0: tensor<3x20xf32>) -> tensor<3x11xcomplex<f32>> {
    %0 = stablehlo.fft %arg0, type = RFFT, length = [20] : (tensor<3x20xf32>) -> tensor<3x11xcomplex<f32>>
    return %0 : tensor<3x11xcomplex<f32>>
  }
  func.func private @_pad(%arg0: tensor<3x11xcomplex<f32>>, %arg1: tensor<i64>) -> tensor<3x11xcomplex<f32>> {
    %0 = stablehlo.convert %arg1 : (tensor<i64>) -> tensor<complex<f32>>
    %1 = stablehlo.pad %arg0, %0, low = [0, 0], high = [0, 0], interior = [0, 0] : (tensor<3x11xcomplex<f32>>, tensor<complex<f32>>) -> tensor<3x11xcomplex<f32>>
    return %1 : tensor<3x11xcomplex<f32>>
  }
  func.func private @fft_0(%arg0: tensor<3x11xcomplex<f32>>) -> tensor<3x20xf32> {
    %0 = stablehlo.fft %arg0, type = IRFFT, length = [20] : (tensor<3x11xcomplex<f32>>) -> tensor<3x20xf32>
    return %0 : tensor<3x20xf32>
  }
}
