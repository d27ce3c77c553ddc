// Conformance cases written for hlojit (hlojit/conformance.py reads them): CHLO's special functions that numpy
// lacks, mulhi, scan, ragged_dot and chlo.constant. Expected values: scipy.special (float64, rounded to the
// result type) and Python's exact integers.

func.func @chlo_bessel_i1e() {
  %a0 = stablehlo.constant dense<[-40.0, -2.5, -0.0, 0.5, 3.0, 35.0]> : tensor<6xf32>
  %r0 = chlo.bessel_i1e %a0 : tensor<6xf32> -> tensor<6xf32>
  check.expect_almost_eq_const %r0, dense<[-0.0624822304, -0.206584647, -0.0, 0.156420797, 0.196826711, 0.0667044297]> : tensor<6xf32>
  func.return
}

// -----

func.func @chlo_zeta_polygamma() {
  %x = stablehlo.constant dense<[2.0, 3.0, 4.5]> : tensor<3xf32>
  %q = stablehlo.constant dense<[1.0, 0.5, 2.0]> : tensor<3xf32>
  %n = stablehlo.constant dense<[0.0, 1.0, 2.0, 3.0]> : tensor<4xf32>
  %y = stablehlo.constant dense<[0.5, 2.0, 3.5, 1.25]> : tensor<4xf32>
  %r0 = chlo.zeta %x, %q : tensor<3xf32>, tensor<3xf32> -> tensor<3xf32>
  %r1 = chlo.polygamma %n, %y : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  check.expect_almost_eq_const %r0, dense<[1.64493406, 8.41439819, 0.0547075123]> : tensor<3xf32>
  check.expect_almost_eq_const %r1, dense<[-1.96351004, 0.644934058, -0.108204052, 2.78214407]> : tensor<4xf32>
  func.return
}

// -----

func.func @chlo_zeta_negative_q_whole_x() {
  %x = stablehlo.constant dense<[2.0, 3.0, 2.5]> : tensor<3xf32>
  %q = stablehlo.constant dense<[-1.5, -2.0, -1.5]> : tensor<3xf32>
  %r0 = chlo.zeta %x, %q : tensor<3xf32>, tensor<3xf32> -> tensor<3xf32>
  check.expect_almost_eq_const %r0, dense<[9.37924671, 0x7F800000, 0x7FC00000]> : tensor<3xf32>
  func.return
}

// -----

func.func @chlo_broadcast_zeta_polygamma_f64() {
  %x = stablehlo.constant dense<[5.0, 1.5]> : tensor<2xf64>
  %q = stablehlo.constant dense<[[0.75], [10.0]]> : tensor<2x1xf64>
  %n = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf64>
  %y = stablehlo.constant dense<[0.25, 7.0]> : tensor<2xf64>
  %r0 = chlo.broadcast_zeta %x, %q : (tensor<2xf64>, tensor<2x1xf64>) -> tensor<2x2xf64>
  %r1 = chlo.broadcast_polygamma %n, %y : (tensor<2xf64>, tensor<2xf64>) -> tensor<2xf64>
  %d0 = stablehlo.slice %r0 [0:1, 0:1] : (tensor<2x2xf64>) -> tensor<1x1xf64>
  %d1 = stablehlo.slice %r0 [1:2, 1:2] : (tensor<2x2xf64>) -> tensor<1x1xf64>
  check.expect_close_const %d0, dense<[[4.283358575642393]]> : tensor<1x1xf64>
  check.expect_close_const %d1, dense<[[0.6486616319415703]]> : tensor<1x1xf64>
  check.expect_close_const %r1, dense<[17.197329154507113, -0.023530472985855234]> : tensor<2xf64>
  func.return
}

// -----

func.func @chlo_broadcast_complex_next_after() {
  %re = stablehlo.constant dense<[1.0, -2.0]> : tensor<2xf32>
  %im = stablehlo.constant dense<0x7F800000> : tensor<f32>
  %a = stablehlo.constant dense<[[1.0], [0.0]]> : tensor<2x1xf32>
  %b = stablehlo.constant dense<[2.0, -1.0]> : tensor<2xf32>
  %r0 = chlo.broadcast_complex %re, %im : (tensor<2xf32>, tensor<f32>) -> tensor<2xcomplex<f32>>
  %r1 = chlo.broadcast_next_after %a, %b : (tensor<2x1xf32>, tensor<2xf32>) -> tensor<2x2xf32>
  check.expect_eq_const %r0, dense<[(1.0, 0x7F800000), (-2.0, 0x7F800000)]> : tensor<2xcomplex<f32>>
  check.expect_eq_const %r1, dense<[[1.00000012, 0.99999994], [1.40129846e-45, -1.40129846e-45]]> : tensor<2x2xf32>
  func.return
}

// -----

func.func @chlo_mulhi() {
  %a0 = stablehlo.constant dense<[2147483647, -2147483648, -7, 123456789]> : tensor<4xi32>
  %b0 = stablehlo.constant dense<[2147483647, 3, 5, -987654321]> : tensor<4xi32>
  %a1 = stablehlo.constant dense<[18446744073709551615, 12345678901234567890, 3]> : tensor<3xui64>
  %b1 = stablehlo.constant dense<[18446744073709551615, 9876543210987654321, 5]> : tensor<3xui64>
  %a2 = stablehlo.constant dense<[-9223372036854775808, 9223372036854775807, -5]> : tensor<3xi64>
  %b2 = stablehlo.constant dense<[-9223372036854775808, -3, 7]> : tensor<3xi64>
  %r0 = chlo.mulhi %a0, %b0 : tensor<4xi32>, tensor<4xi32> -> tensor<4xi32>
  %r1 = chlo.mulhi %a1, %b1 : tensor<3xui64>, tensor<3xui64> -> tensor<3xui64>
  %r2 = chlo.mulhi %a2, %b2 : tensor<3xi64>, tensor<3xi64> -> tensor<3xi64>
  check.expect_eq_const %r0, dense<[1073741823, -2, -1, -28389653]> : tensor<4xi32>
  check.expect_eq_const %r1, dense<[18446744073709551614, 6609981178781634653, 0]> : tensor<3xui64>
  check.expect_eq_const %r2, dense<[4611686018427387904, -2, -1]> : tensor<3xi64>
  func.return
}

// -----

func.func @chlo_scan_reverse_product() {
  %input = stablehlo.constant dense<[[1.0, 2.0, 3.0], [0.5, -1.0, 4.0]]> : tensor<2x3xf32>
  %init = stablehlo.constant dense<1.0> : tensor<2xf32>
  %0:2 = chlo.scan(%input) inits(%init) dimension=1 attributes {is_reverse = true} {
  ^bb0(%element: tensor<2xf32>, %carry: tensor<2xf32>):
    %p = stablehlo.multiply %element, %carry : tensor<2xf32>
    %offset = stablehlo.constant dense<[0.0, 10.0]> : tensor<2xf32>
    %o = stablehlo.add %p, %offset : tensor<2xf32>
    stablehlo.return %o, %p : tensor<2xf32>, tensor<2xf32>
  } : (tensor<2x3xf32>, tensor<2xf32>) -> (tensor<2x3xf32>, tensor<2xf32>)
  check.expect_eq_const %0#0, dense<[[6.0, 6.0, 3.0], [8.0, 6.0, 14.0]]> : tensor<2x3xf32>
  check.expect_eq_const %0#1, dense<[6.0, -2.0]> : tensor<2xf32>
  func.return
}

// -----

func.func @chlo_ragged_dot_rows() {
  %lhs = stablehlo.constant dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0]]> : tensor<4x2xf32>
  %rhs = stablehlo.constant dense<[[[1.0, 0.0, 2.0], [0.0, 1.0, 1.0]], [[2.0, 1.0, 0.0], [1.0, -1.0, 3.0]]]> : tensor<2x2x3xf32>
  %sizes = stablehlo.constant dense<[1, 2]> : tensor<2xi64>
  %r = "chlo.ragged_dot"(%lhs, %rhs, %sizes) {ragged_dot_dimension_numbers = #chlo.ragged_dot<lhs_batching_dimensions = [], rhs_batching_dimensions = [], lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1], lhs_ragged_dimensions = [0], rhs_group_dimensions = [0]>} : (tensor<4x2xf32>, tensor<2x2x3xf32>, tensor<2xi64>) -> tensor<4x3xf32>
  check.expect_eq_const %r, dense<[[1.0, 2.0, 4.0], [10.0, -1.0, 12.0], [16.0, -1.0, 18.0], [0.0, 0.0, 0.0]]> : tensor<4x3xf32>
  func.return
}

// -----

func.func @chlo_ragged_dot_contracting() {
  %lhs = stablehlo.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %rhs = stablehlo.constant dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]> : tensor<3x2xf32>
  %sizes = stablehlo.constant dense<[2, 1]> : tensor<2xi32>
  %r = "chlo.ragged_dot"(%lhs, %rhs, %sizes) {ragged_dot_dimension_numbers = #chlo.ragged_dot<lhs_batching_dimensions = [], rhs_batching_dimensions = [], lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0], lhs_ragged_dimensions = [1], rhs_group_dimensions = []>} : (tensor<2x3xf32>, tensor<3x2xf32>, tensor<2xi32>) -> tensor<2x2x2xf32>
  check.expect_eq_const %r, dense<[[[7.0, 10.0], [19.0, 28.0]], [[15.0, 18.0], [30.0, 36.0]]]> : tensor<2x2x2xf32>
  func.return
}

// -----

func.func @chlo_constant() {
  %c = chlo.constant dense<[1.5, -0.0, 0x7FC00000]> : tensor<3xf32>
  check.expect_eq_const %c, dense<[1.5, -0.0, 0x7FC00000]> : tensor<3xf32>
  func.return
}
