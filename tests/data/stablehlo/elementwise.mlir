// Conformance cases written for hlojit (hlojit/conformance.py reads them): elementwise.
// Expected values are numpy's evaluation of the StableHLO spec's definition of each op.

func.func @add_f32() {
  %a0 = stablehlo.constant dense<[-2.5, -0.0, 0.0, 1.5, 3.0, 0x7F800000, 0xFF800000, 0x7FC00000]> : tensor<8xf32>
  %a1 = stablehlo.constant dense<[2.0, 3.0, -1.0, 0.5, -4.0, 2.0, 0x7F800000, 1.0]> : tensor<8xf32>
  %r0 = stablehlo.add %a0, %a1 : tensor<8xf32>
  check.expect_eq_const %r0, dense<[-0.5, 3.0, -1.0, 2.0, -1.0, 0x7F800000, 0xFFC00000, 0x7FC00000]> : tensor<8xf32>
  func.return
}

// -----

func.func @subtract_f32() {
  %a0 = stablehlo.constant dense<[-2.5, -0.0, 0.0, 1.5, 3.0, 0x7F800000, 0xFF800000, 0x7FC00000]> : tensor<8xf32>
  %a1 = stablehlo.constant dense<[2.0, 3.0, -1.0, 0.5, -4.0, 2.0, 0x7F800000, 1.0]> : tensor<8xf32>
  %r0 = stablehlo.subtract %a0, %a1 : tensor<8xf32>
  check.expect_eq_const %r0, dense<[-4.5, -3.0, 1.0, 1.0, 7.0, 0x7F800000, 0xFF800000, 0x7FC00000]> : tensor<8xf32>
  func.return
}

// -----

func.func @multiply_f32() {
  %a0 = stablehlo.constant dense<[-2.5, -0.0, 0.0, 1.5, 3.0, 0x7F800000, 0xFF800000, 0x7FC00000]> : tensor<8xf32>
  %a1 = stablehlo.constant dense<[2.0, 3.0, -1.0, 0.5, -4.0, 2.0, 0x7F800000, 1.0]> : tensor<8xf32>
  %r0 = stablehlo.multiply %a0, %a1 : tensor<8xf32>
  check.expect_eq_const %r0, dense<[-5.0, -0.0, -0.0, 0.75, -12.0, 0x7F800000, 0xFF800000, 0x7FC00000]> : tensor<8xf32>
  func.return
}

// -----

func.func @divide_f32() {
  %a0 = stablehlo.constant dense<[-2.5, -0.0, 0.0, 1.5, 3.0, 0x7F800000, 0xFF800000, 0x7FC00000]> : tensor<8xf32>
  %a1 = stablehlo.constant dense<[2.0, 3.0, -1.0, 0.5, -4.0, 2.0, 0x7F800000, 1.0]> : tensor<8xf32>
  %r0 = stablehlo.divide %a0, %a1 : tensor<8xf32>
  check.expect_eq_const %r0, dense<[-1.25, -0.0, -0.0, 3.0, -0.75, 0x7F800000, 0xFFC00000, 0x7FC00000]> : tensor<8xf32>
  func.return
}

// -----

func.func @maximum_f32() {
  %a0 = stablehlo.constant dense<[-2.5, -0.0, 0.0, 1.5, 3.0, 0x7F800000, 0xFF800000, 0x7FC00000]> : tensor<8xf32>
  %a1 = stablehlo.constant dense<[2.0, 3.0, -1.0, 0.5, -4.0, 2.0, 0x7F800000, 1.0]> : tensor<8xf32>
  %r0 = stablehlo.maximum %a0, %a1 : tensor<8xf32>
  check.expect_eq_const %r0, dense<[2.0, 3.0, 0.0, 1.5, 3.0, 0x7F800000, 0x7F800000, 0x7FC00000]> : tensor<8xf32>
  func.return
}

// -----

func.func @minimum_f32() {
  %a0 = stablehlo.constant dense<[-2.5, -0.0, 0.0, 1.5, 3.0, 0x7F800000, 0xFF800000, 0x7FC00000]> : tensor<8xf32>
  %a1 = stablehlo.constant dense<[2.0, 3.0, -1.0, 0.5, -4.0, 2.0, 0x7F800000, 1.0]> : tensor<8xf32>
  %r0 = stablehlo.minimum %a0, %a1 : tensor<8xf32>
  check.expect_eq_const %r0, dense<[-2.5, -0.0, -1.0, 0.5, -4.0, 2.0, 0xFF800000, 0x7FC00000]> : tensor<8xf32>
  func.return
}

// -----

func.func @remainder_f32() {
  %a0 = stablehlo.constant dense<[-2.5, -0.0, 0.0, 1.5, 3.0, 0x7F800000, 0xFF800000, 0x7FC00000]> : tensor<8xf32>
  %a1 = stablehlo.constant dense<[2.0, 3.0, -1.0, 0.5, -4.0, 2.0, 0x7F800000, 1.0]> : tensor<8xf32>
  %r0 = stablehlo.remainder %a0, %a1 : tensor<8xf32>
  check.expect_eq_const %r0, dense<[-0.5, -0.0, 0.0, 0.0, 3.0, 0xFFC00000, 0xFFC00000, 0x7FC00000]> : tensor<8xf32>
  func.return
}

// -----

func.func @atan2_f32() {
  %a0 = stablehlo.constant dense<[-2.5, -0.0, 0.0, 1.5, 3.0, 0x7F800000, 0xFF800000, 0x7FC00000]> : tensor<8xf32>
  %a1 = stablehlo.constant dense<[2.0, 3.0, -1.0, 0.5, -4.0, 2.0, 0x7F800000, 1.0]> : tensor<8xf32>
  %r0 = stablehlo.atan2 %a0, %a1 : tensor<8xf32>
  check.expect_almost_eq_const %r0, dense<[-0.8960554, -0.0, 3.14159274, 1.24904585, 2.4980917, 1.57079637, -0.785398185, 0x7FC00000]> : tensor<8xf32>
  func.return
}

// -----

func.func @power_f32() {
  %a0 = stablehlo.constant dense<[-2.5, -0.0, 0.0, 1.5, 3.0, 0x7F800000, 0xFF800000, 0x7FC00000]> : tensor<8xf32>
  %a1 = stablehlo.constant dense<[2.0, 3.0, -1.0, 0.5, -4.0, 2.0, 0x7F800000, 1.0]> : tensor<8xf32>
  %r0 = stablehlo.power %a0, %a1 : tensor<8xf32>
  check.expect_almost_eq_const %r0, dense<[6.25, -0.0, 0x7F800000, 1.2247448, 0.0123456791, 0x7F800000, 0x7F800000, 0x7FC00000]> : tensor<8xf32>
  func.return
}

// -----

func.func @divide_i32() {
  %a0 = stablehlo.constant dense<[-7, 7, -7, 7, 0]> : tensor<5xi32>
  %a1 = stablehlo.constant dense<[2, -2, -2, 2, 3]> : tensor<5xi32>
  %r0 = stablehlo.divide %a0, %a1 : tensor<5xi32>
  check.expect_eq_const %r0, dense<[-3, -3, 3, 3, 0]> : tensor<5xi32>
  func.return
}

// -----

func.func @remainder_i32() {
  %a0 = stablehlo.constant dense<[-7, 7, -7, 7, 0]> : tensor<5xi32>
  %a1 = stablehlo.constant dense<[2, -2, -2, 2, 3]> : tensor<5xi32>
  %r0 = stablehlo.remainder %a0, %a1 : tensor<5xi32>
  check.expect_eq_const %r0, dense<[-1, 1, -1, 1, 0]> : tensor<5xi32>
  func.return
}

// -----

func.func @power_i32_negative_exponents() {
  %a0 = stablehlo.constant dense<[2, -2, 1, -1, 3, 0, 2]> : tensor<7xi32>
  %a1 = stablehlo.constant dense<[3, 3, -2, -3, -1, 0, 0]> : tensor<7xi32>
  %r0 = stablehlo.power %a0, %a1 : tensor<7xi32>
  check.expect_eq_const %r0, dense<[8, -8, 1, -1, 0, 1, 1]> : tensor<7xi32>
  func.return
}

// -----

func.func @and_i32() {
  %a0 = stablehlo.constant dense<[-7, 7, -7, 7, 0, -2147483648, 5]> : tensor<7xi32>
  %a1 = stablehlo.constant dense<[2, -2, -2, 2, 3, -1, 0]> : tensor<7xi32>
  %r0 = stablehlo.and %a0, %a1 : tensor<7xi32>
  check.expect_eq_const %r0, dense<[0, 6, -8, 2, 0, -2147483648, 0]> : tensor<7xi32>
  func.return
}

// -----

func.func @or_i32() {
  %a0 = stablehlo.constant dense<[-7, 7, -7, 7, 0, -2147483648, 5]> : tensor<7xi32>
  %a1 = stablehlo.constant dense<[2, -2, -2, 2, 3, -1, 0]> : tensor<7xi32>
  %r0 = stablehlo.or %a0, %a1 : tensor<7xi32>
  check.expect_eq_const %r0, dense<[-5, -1, -1, 7, 3, -1, 5]> : tensor<7xi32>
  func.return
}

// -----

func.func @xor_i32() {
  %a0 = stablehlo.constant dense<[-7, 7, -7, 7, 0, -2147483648, 5]> : tensor<7xi32>
  %a1 = stablehlo.constant dense<[2, -2, -2, 2, 3, -1, 0]> : tensor<7xi32>
  %r0 = stablehlo.xor %a0, %a1 : tensor<7xi32>
  check.expect_eq_const %r0, dense<[-5, -7, 7, 5, 3, 2147483647, 5]> : tensor<7xi32>
  func.return
}

// -----

func.func @and_i1() {
  %a0 = stablehlo.constant dense<[true, true, false, false]> : tensor<4xi1>
  %a1 = stablehlo.constant dense<[true, false, true, false]> : tensor<4xi1>
  %r0 = stablehlo.and %a0, %a1 : tensor<4xi1>
  check.expect_eq_const %r0, dense<[true, false, false, false]> : tensor<4xi1>
  func.return
}

// -----

func.func @or_i1() {
  %a0 = stablehlo.constant dense<[true, true, false, false]> : tensor<4xi1>
  %a1 = stablehlo.constant dense<[true, false, true, false]> : tensor<4xi1>
  %r0 = stablehlo.or %a0, %a1 : tensor<4xi1>
  check.expect_eq_const %r0, dense<[true, true, true, false]> : tensor<4xi1>
  func.return
}

// -----

func.func @xor_i1() {
  %a0 = stablehlo.constant dense<[true, true, false, false]> : tensor<4xi1>
  %a1 = stablehlo.constant dense<[true, false, true, false]> : tensor<4xi1>
  %r0 = stablehlo.xor %a0, %a1 : tensor<4xi1>
  check.expect_eq_const %r0, dense<[false, true, true, false]> : tensor<4xi1>
  func.return
}

// -----

func.func @add_i1() {
  %a0 = stablehlo.constant dense<[true, true, false, false]> : tensor<4xi1>
  %a1 = stablehlo.constant dense<[true, false, true, false]> : tensor<4xi1>
  %r0 = stablehlo.add %a0, %a1 : tensor<4xi1>
  check.expect_eq_const %r0, dense<[true, true, true, false]> : tensor<4xi1>
  func.return
}

// -----

func.func @not_i1_i32() {
  %a0 = stablehlo.constant dense<[true, true, false, false]> : tensor<4xi1>
  %a1 = stablehlo.constant dense<[-7, 7, -7, 7, 0, -2147483648, 5]> : tensor<7xi32>
  %r0 = stablehlo.not %a0 : tensor<4xi1>
  %r1 = stablehlo.not %a1 : tensor<7xi32>
  check.expect_eq_const %r0, dense<[false, false, true, true]> : tensor<4xi1>
  check.expect_eq_const %r1, dense<[6, -8, 6, -8, -1, 2147483647, -6]> : tensor<7xi32>
  func.return
}

// -----

func.func @shifts_i32() {
  %a0 = stablehlo.constant dense<[-7, 7, -7, 7, 0, -2147483648, 5]> : tensor<7xi32>
  %a1 = stablehlo.constant dense<[1, 2, 31, 0, 33, 4, 1]> : tensor<7xi32>
  %r0 = stablehlo.shift_left %a0, %a1 : tensor<7xi32>
  %r1 = stablehlo.shift_right_arithmetic %a0, %a1 : tensor<7xi32>
  %r2 = stablehlo.shift_right_logical %a0, %a1 : tensor<7xi32>
  check.expect_eq_const %r0, dense<[-14, 28, -2147483648, 7, 0, 0, 10]> : tensor<7xi32>
  check.expect_eq_const %r1, dense<[-4, 1, -1, 7, 0, -134217728, 2]> : tensor<7xi32>
  check.expect_eq_const %r2, dense<[2147483644, 1, 1, 7, 0, 134217728, 2]> : tensor<7xi32>
  func.return
}

// -----

func.func @negate_f32() {
  %a0 = stablehlo.constant dense<[-2.5, -0.0, 0.0, 1.5, 3.0, 0x7F800000, 0xFF800000, 0x7FC00000]> : tensor<8xf32>
  %r0 = stablehlo.negate %a0 : tensor<8xf32>
  check.expect_eq_const %r0, dense<[2.5, 0.0, -0.0, -1.5, -3.0, 0xFF800000, 0x7F800000, 0xFFC00000]> : tensor<8xf32>
  func.return
}

// -----

func.func @abs_f32() {
  %a0 = stablehlo.constant dense<[-2.5, -0.0, 0.0, 1.5, 3.0, 0x7F800000, 0xFF800000, 0x7FC00000]> : tensor<8xf32>
  %r0 = stablehlo.abs %a0 : tensor<8xf32>
  check.expect_eq_const %r0, dense<[2.5, 0.0, 0.0, 1.5, 3.0, 0x7F800000, 0x7F800000, 0x7FC00000]> : tensor<8xf32>
  func.return
}

// -----

func.func @sign_f32() {
  %a0 = stablehlo.constant dense<[-2.5, -0.0, 0.0, 1.5, 3.0, 0x7F800000, 0xFF800000, 0x7FC00000]> : tensor<8xf32>
  %r0 = stablehlo.sign %a0 : tensor<8xf32>
  check.expect_eq_const %r0, dense<[-1.0, 0.0, 0.0, 1.0, 1.0, 1.0, -1.0, 0x7FC00000]> : tensor<8xf32>
  func.return
}

// -----

func.func @exponential_f32() {
  %a0 = stablehlo.constant dense<[-2.5, -0.0, 0.0, 1.5, 3.0, 0x7F800000, 0xFF800000, 0x7FC00000]> : tensor<8xf32>
  %r0 = stablehlo.exponential %a0 : tensor<8xf32>
  check.expect_almost_eq_const %r0, dense<[0.0820850059, 1.0, 1.0, 4.48168898, 20.085537, 0x7F800000, 0.0, 0x7FC00000]> : tensor<8xf32>
  func.return
}

// -----

func.func @exponential_minus_one_f32() {
  %a0 = stablehlo.constant dense<[-2.5, -0.0, 0.0, 1.5, 3.0, 0x7F800000, 0xFF800000, 0x7FC00000]> : tensor<8xf32>
  %r0 = stablehlo.exponential_minus_one %a0 : tensor<8xf32>
  check.expect_almost_eq_const %r0, dense<[-0.917915046, -0.0, 0.0, 3.48168898, 19.085537, 0x7F800000, -1.0, 0x7FC00000]> : tensor<8xf32>
  func.return
}

// -----

func.func @log_f32() {
  %a0 = stablehlo.constant dense<[-2.5, -0.0, 0.0, 1.5, 3.0, 0x7F800000, 0xFF800000, 0x7FC00000]> : tensor<8xf32>
  %r0 = stablehlo.log %a0 : tensor<8xf32>
  check.expect_almost_eq_const %r0, dense<[0xFFC00000, 0xFF800000, 0xFF800000, 0.405465096, 1.09861231, 0x7F800000, 0xFFC00000, 0x7FC00000]> : tensor<8xf32>
  func.return
}

// -----

func.func @log_plus_one_f32() {
  %a0 = stablehlo.constant dense<[-2.5, -0.0, 0.0, 1.5, 3.0, 0x7F800000, 0xFF800000, 0x7FC00000]> : tensor<8xf32>
  %r0 = stablehlo.log_plus_one %a0 : tensor<8xf32>
  check.expect_almost_eq_const %r0, dense<[0xFFC00000, -0.0, 0.0, 0.91629076, 1.38629436, 0x7F800000, 0xFFC00000, 0x7FC00000]> : tensor<8xf32>
  func.return
}

// -----

func.func @logistic_f32() {
  %a0 = stablehlo.constant dense<[-2.5, -0.0, 0.0, 1.5, 3.0, 0x7F800000, 0xFF800000, 0x7FC00000]> : tensor<8xf32>
  %r0 = stablehlo.logistic %a0 : tensor<8xf32>
  check.expect_almost_eq_const %r0, dense<[0.0758581832, 0.5, 0.5, 0.817574501, 0.952574134, 1.0, 0.0, 0x7FC00000]> : tensor<8xf32>
  func.return
}

// -----

func.func @sqrt_f32() {
  %a0 = stablehlo.constant dense<[-2.5, -0.0, 0.0, 1.5, 3.0, 0x7F800000, 0xFF800000, 0x7FC00000]> : tensor<8xf32>
  %r0 = stablehlo.sqrt %a0 : tensor<8xf32>
  check.expect_almost_eq_const %r0, dense<[0xFFC00000, -0.0, 0.0, 1.22474492, 1.73205078, 0x7F800000, 0xFFC00000, 0x7FC00000]> : tensor<8xf32>
  func.return
}

// -----

func.func @rsqrt_f32() {
  %a0 = stablehlo.constant dense<[-2.5, -0.0, 0.0, 1.5, 3.0, 0x7F800000, 0xFF800000, 0x7FC00000]> : tensor<8xf32>
  %r0 = stablehlo.rsqrt %a0 : tensor<8xf32>
  check.expect_almost_eq_const %r0, dense<[0xFFC00000, 0xFF800000, 0x7F800000, 0.816496551, 0.577350259, 0.0, 0xFFC00000, 0x7FC00000]> : tensor<8xf32>
  func.return
}

// -----

func.func @cbrt_f32() {
  %a0 = stablehlo.constant dense<[-2.5, -0.0, 0.0, 1.5, 3.0, 0x7F800000, 0xFF800000, 0x7FC00000]> : tensor<8xf32>
  %r0 = stablehlo.cbrt %a0 : tensor<8xf32>
  check.expect_almost_eq_const %r0, dense<[-1.35720873, -0.0, 0.0, 1.14471424, 1.44224966, 0x7F800000, 0xFF800000, 0x7FC00000]> : tensor<8xf32>
  func.return
}

// -----

func.func @tanh_f32() {
  %a0 = stablehlo.constant dense<[-2.5, -0.0, 0.0, 1.5, 3.0, 0x7F800000, 0xFF800000, 0x7FC00000]> : tensor<8xf32>
  %r0 = stablehlo.tanh %a0 : tensor<8xf32>
  check.expect_almost_eq_const %r0, dense<[-0.986614287, -0.0, 0.0, 0.905148208, 0.995054781, 1.0, -1.0, 0x7FC00000]> : tensor<8xf32>
  func.return
}

// -----

func.func @sine_f32() {
  %a0 = stablehlo.constant dense<[-2.5, -0.0, 0.0, 1.5, 3.0, 0x7F800000, 0xFF800000, 0x7FC00000]> : tensor<8xf32>
  %r0 = stablehlo.sine %a0 : tensor<8xf32>
  check.expect_almost_eq_const %r0, dense<[-0.598472178, -0.0, 0.0, 0.997494996, 0.141120002, 0xFFC00000, 0xFFC00000, 0x7FC00000]> : tensor<8xf32>
  func.return
}

// -----

func.func @cosine_f32() {
  %a0 = stablehlo.constant dense<[-2.5, -0.0, 0.0, 1.5, 3.0, 0x7F800000, 0xFF800000, 0x7FC00000]> : tensor<8xf32>
  %r0 = stablehlo.cosine %a0 : tensor<8xf32>
  check.expect_almost_eq_const %r0, dense<[-0.801143587, 1.0, 1.0, 0.070737198, -0.989992499, 0xFFC00000, 0xFFC00000, 0x7FC00000]> : tensor<8xf32>
  func.return
}

// -----

func.func @tan_f32() {
  %a0 = stablehlo.constant dense<[-2.5, -0.0, 0.0, 1.5, 3.0, 0x7F800000, 0xFF800000, 0x7FC00000]> : tensor<8xf32>
  %r0 = stablehlo.tan %a0 : tensor<8xf32>
  check.expect_almost_eq_const %r0, dense<[0.747022271, -0.0, 0.0, 14.1014204, -0.142546535, 0xFFC00000, 0xFFC00000, 0x7FC00000]> : tensor<8xf32>
  func.return
}

// -----

func.func @floor_f32() {
  %a0 = stablehlo.constant dense<[-2.5, -0.0, 0.0, 1.5, 3.0, 0x7F800000, 0xFF800000, 0x7FC00000]> : tensor<8xf32>
  %r0 = stablehlo.floor %a0 : tensor<8xf32>
  check.expect_eq_const %r0, dense<[-3.0, -0.0, 0.0, 1.0, 3.0, 0x7F800000, 0xFF800000, 0x7FC00000]> : tensor<8xf32>
  func.return
}

// -----

func.func @ceil_f32() {
  %a0 = stablehlo.constant dense<[-2.5, -0.0, 0.0, 1.5, 3.0, 0x7F800000, 0xFF800000, 0x7FC00000]> : tensor<8xf32>
  %r0 = stablehlo.ceil %a0 : tensor<8xf32>
  check.expect_eq_const %r0, dense<[-2.0, -0.0, 0.0, 2.0, 3.0, 0x7F800000, 0xFF800000, 0x7FC00000]> : tensor<8xf32>
  func.return
}

// -----

func.func @round_nearest_even_f32() {
  %a0 = stablehlo.constant dense<[-2.5, -0.0, 0.0, 1.5, 3.0, 0x7F800000, 0xFF800000, 0x7FC00000]> : tensor<8xf32>
  %r0 = stablehlo.round_nearest_even %a0 : tensor<8xf32>
  check.expect_eq_const %r0, dense<[-2.0, -0.0, 0.0, 2.0, 3.0, 0x7F800000, 0xFF800000, 0x7FC00000]> : tensor<8xf32>
  func.return
}

// -----

func.func @round_nearest_afz_f32() {
  %a0 = stablehlo.constant dense<[-2.5, -0.0, 0.0, 1.5, 3.0, 0x7F800000, 0xFF800000, 0x7FC00000]> : tensor<8xf32>
  %r0 = stablehlo.round_nearest_afz %a0 : tensor<8xf32>
  check.expect_eq_const %r0, dense<[-3.0, 0.0, 0.0, 2.0, 3.0, 0x7F800000, 0xFF800000, 0x7FC00000]> : tensor<8xf32>
  func.return
}

// -----

func.func @sine_f64() {
  %a0 = stablehlo.constant dense<[-2.5, 0.5, 1.0, 3.0, 100.0, 10000000000.0, 0x7FF8000000000000]> : tensor<7xf64>
  %r0 = stablehlo.sine %a0 : tensor<7xf64>
  check.expect_almost_eq_const %r0, dense<[-0.5984721441039565, 0.479425538604203, 0.8414709848078965, 0.1411200080598672, -0.5063656411097588, -0.4875060250875107, 0x7FF8000000000000]> : tensor<7xf64>
  func.return
}

// -----

func.func @cosine_f64() {
  %a0 = stablehlo.constant dense<[-2.5, 0.5, 1.0, 3.0, 100.0, 10000000000.0, 0x7FF8000000000000]> : tensor<7xf64>
  %r0 = stablehlo.cosine %a0 : tensor<7xf64>
  check.expect_almost_eq_const %r0, dense<[-0.8011436155469337, 0.8775825618903728, 0.5403023058681398, -0.9899924966004454, 0.8623188722876839, 0.873119622676856, 0x7FF8000000000000]> : tensor<7xf64>
  func.return
}

// -----

func.func @tan_f64() {
  %a0 = stablehlo.constant dense<[-2.5, 0.5, 1.0, 3.0, 100.0, 10000000000.0, 0x7FF8000000000000]> : tensor<7xf64>
  %r0 = stablehlo.tan %a0 : tensor<7xf64>
  check.expect_almost_eq_const %r0, dense<[0.7470222972386603, 0.5463024898437905, 1.5574077246549023, -0.1425465430742778, -0.5872139151569291, -0.5583496378112418, 0x7FF8000000000000]> : tensor<7xf64>
  func.return
}

// -----

func.func @tanh_f64() {
  %a0 = stablehlo.constant dense<[-2.5, 0.5, 1.0, 3.0, 100.0, 10000000000.0, 0x7FF8000000000000]> : tensor<7xf64>
  %r0 = stablehlo.tanh %a0 : tensor<7xf64>
  check.expect_almost_eq_const %r0, dense<[-0.9866142981514303, 0.46211715726000974, 0.7615941559557649, 0.9950547536867305, 1.0, 1.0, 0x7FF8000000000000]> : tensor<7xf64>
  func.return
}

// -----

func.func @atan2_remainder_f64() {
  %a0 = stablehlo.constant dense<[-2.5, 0.5, 1.0, 3.0, 100.0, 10000000000.0, 0x7FF8000000000000]> : tensor<7xf64>
  %a1 = stablehlo.constant dense<[0x7FF8000000000000, 10000000000.0, 100.0, 3.0, 1.0, 0.5, -2.5]> : tensor<7xf64>
  %r0 = stablehlo.atan2 %a0, %a1 : tensor<7xf64>
  %r1 = stablehlo.remainder %a0, %a1 : tensor<7xf64>
  check.expect_almost_eq_const %r0, dense<[0x7FF8000000000000, 5.0e-11, 0.009999666686665238, 0.7853981633974483, 1.5607966601082315, 1.5707963267448966, 0x7FF8000000000000]> : tensor<7xf64>
  check.expect_almost_eq_const %r1, dense<[0x7FF8000000000000, 0.5, 1.0, 0.0, 0.0, 0.0, 0x7FF8000000000000]> : tensor<7xf64>
  func.return
}

// -----

func.func @floor_ceil_subnormal_f32() {
  %a0 = stablehlo.constant dense<[9.9999461e-41, -3.00000065e-39, 1.40129846e-45, 2.5, -0.5]> : tensor<5xf32>
  %r0 = stablehlo.floor %a0 : tensor<5xf32>
  %r1 = stablehlo.ceil %a0 : tensor<5xf32>
  check.expect_eq_const %r0, dense<[0.0, -1.0, 0.0, 2.0, -1.0]> : tensor<5xf32>
  check.expect_eq_const %r1, dense<[1.0, -0.0, 1.0, 3.0, -0.0]> : tensor<5xf32>
  func.return
}

// -----

func.func @power_negative_base_f64() {
  %a0 = stablehlo.constant dense<[-2.0, -2.0, -8.0, 2.0]> : tensor<4xf64>
  %a1 = stablehlo.constant dense<[3.0, 2.0, 0.3333333333333333, 0.5]> : tensor<4xf64>
  %r0 = stablehlo.power %a0, %a1 : tensor<4xf64>
  check.expect_almost_eq_const %r0, dense<[-8.0, 4.0, 0xFFF8000000000000, 1.4142135623730951]> : tensor<4xf64>
  func.return
}

// -----

func.func @is_finite_f32() {
  %a0 = stablehlo.constant dense<[-2.5, -0.0, 0.0, 1.5, 3.0, 0x7F800000, 0xFF800000, 0x7FC00000]> : tensor<8xf32>
  %r0 = stablehlo.is_finite %a0 : (tensor<8xf32>) -> tensor<8xi1>
  check.expect_eq_const %r0, dense<[true, true, true, true, true, false, false, false]> : tensor<8xi1>
  func.return
}

// -----

func.func @compare_eq_f32() {
  %a0 = stablehlo.constant dense<[-2.5, -0.0, 0.0, 1.5, 3.0, 0x7F800000, 0xFF800000, 0x7FC00000]> : tensor<8xf32>
  %a1 = stablehlo.constant dense<[2.0, 3.0, -1.0, 0.5, -4.0, 2.0, 0x7F800000, 1.0]> : tensor<8xf32>
  %r0 = stablehlo.compare EQ, %a0, %a1, FLOAT : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xi1>
  check.expect_eq_const %r0, dense<[false, false, false, false, false, false, false, false]> : tensor<8xi1>
  func.return
}

// -----

func.func @compare_ne_f32() {
  %a0 = stablehlo.constant dense<[-2.5, -0.0, 0.0, 1.5, 3.0, 0x7F800000, 0xFF800000, 0x7FC00000]> : tensor<8xf32>
  %a1 = stablehlo.constant dense<[2.0, 3.0, -1.0, 0.5, -4.0, 2.0, 0x7F800000, 1.0]> : tensor<8xf32>
  %r0 = stablehlo.compare NE, %a0, %a1, FLOAT : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xi1>
  check.expect_eq_const %r0, dense<[true, true, true, true, true, true, true, true]> : tensor<8xi1>
  func.return
}

// -----

func.func @compare_lt_f32() {
  %a0 = stablehlo.constant dense<[-2.5, -0.0, 0.0, 1.5, 3.0, 0x7F800000, 0xFF800000, 0x7FC00000]> : tensor<8xf32>
  %a1 = stablehlo.constant dense<[2.0, 3.0, -1.0, 0.5, -4.0, 2.0, 0x7F800000, 1.0]> : tensor<8xf32>
  %r0 = stablehlo.compare LT, %a0, %a1, FLOAT : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xi1>
  check.expect_eq_const %r0, dense<[true, true, false, false, false, false, true, false]> : tensor<8xi1>
  func.return
}

// -----

func.func @compare_le_f32() {
  %a0 = stablehlo.constant dense<[-2.5, -0.0, 0.0, 1.5, 3.0, 0x7F800000, 0xFF800000, 0x7FC00000]> : tensor<8xf32>
  %a1 = stablehlo.constant dense<[2.0, 3.0, -1.0, 0.5, -4.0, 2.0, 0x7F800000, 1.0]> : tensor<8xf32>
  %r0 = stablehlo.compare LE, %a0, %a1, FLOAT : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xi1>
  check.expect_eq_const %r0, dense<[true, true, false, false, false, false, true, false]> : tensor<8xi1>
  func.return
}

// -----

func.func @compare_gt_f32() {
  %a0 = stablehlo.constant dense<[-2.5, -0.0, 0.0, 1.5, 3.0, 0x7F800000, 0xFF800000, 0x7FC00000]> : tensor<8xf32>
  %a1 = stablehlo.constant dense<[2.0, 3.0, -1.0, 0.5, -4.0, 2.0, 0x7F800000, 1.0]> : tensor<8xf32>
  %r0 = stablehlo.compare GT, %a0, %a1, FLOAT : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xi1>
  check.expect_eq_const %r0, dense<[false, false, true, true, true, true, false, false]> : tensor<8xi1>
  func.return
}

// -----

func.func @compare_ge_f32() {
  %a0 = stablehlo.constant dense<[-2.5, -0.0, 0.0, 1.5, 3.0, 0x7F800000, 0xFF800000, 0x7FC00000]> : tensor<8xf32>
  %a1 = stablehlo.constant dense<[2.0, 3.0, -1.0, 0.5, -4.0, 2.0, 0x7F800000, 1.0]> : tensor<8xf32>
  %r0 = stablehlo.compare GE, %a0, %a1, FLOAT : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xi1>
  check.expect_eq_const %r0, dense<[false, false, true, true, true, true, false, false]> : tensor<8xi1>
  func.return
}

// -----

func.func @compare_lt_unsigned() {
  %a0 = stablehlo.constant dense<[1, 200, 3]> : tensor<3xui8>
  %a1 = stablehlo.constant dense<[2, 100, 3]> : tensor<3xui8>
  %r0 = stablehlo.compare LT, %a0, %a1, UNSIGNED : (tensor<3xui8>, tensor<3xui8>) -> tensor<3xi1>
  check.expect_eq_const %r0, dense<[true, false, false]> : tensor<3xi1>
  func.return
}

// -----

func.func @select() {
  %a0 = stablehlo.constant dense<[true, true, false, false]> : tensor<4xi1>
  %a1 = stablehlo.constant dense<[1, 2, 3, 4]> : tensor<4xi32>
  %a2 = stablehlo.constant dense<[5, 6, 7, 8]> : tensor<4xi32>
  %r0 = stablehlo.select %a0, %a1, %a2 : tensor<4xi1>, tensor<4xi32>
  check.expect_eq_const %r0, dense<[1, 2, 7, 8]> : tensor<4xi32>
  func.return
}

// -----

func.func @clamp() {
  %a0 = stablehlo.constant dense<-1.0> : tensor<f32>
  %a1 = stablehlo.constant dense<[-2.5, -0.0, 0.0, 1.5, 3.0, 0x7F800000, 0xFF800000, 0x7FC00000]> : tensor<8xf32>
  %a2 = stablehlo.constant dense<2.0> : tensor<f32>
  %r0 = stablehlo.clamp %a0, %a1, %a2 : (tensor<f32>, tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  check.expect_eq_const %r0, dense<[-1.0, -0.0, 0.0, 1.5, 2.0, 2.0, -1.0, 0x7FC00000]> : tensor<8xf32>
  func.return
}

// -----

func.func @clamp_elementwise_i32() {
  %a0 = stablehlo.constant dense<[0, 5, -3]> : tensor<3xi32>
  %a1 = stablehlo.constant dense<[-2, 9, 0]> : tensor<3xi32>
  %a2 = stablehlo.constant dense<[1, 7, -1]> : tensor<3xi32>
  %r0 = stablehlo.clamp %a0, %a1, %a2 : tensor<3xi32>
  check.expect_eq_const %r0, dense<[0, 7, -1]> : tensor<3xi32>
  func.return
}

// -----

func.func @popcnt_i32() {
  %a0 = stablehlo.constant dense<[0, 1, -1, 255, 2147483647, -2147483648]> : tensor<6xi32>
  %r0 = stablehlo.popcnt %a0 : tensor<6xi32>
  check.expect_eq_const %r0, dense<[0, 1, 32, 8, 31, 1]> : tensor<6xi32>
  func.return
}

// -----

func.func @count_leading_zeros() {
  %a0 = stablehlo.constant dense<[0, 1, -1, 255, 2147483647, -2147483648]> : tensor<6xi32>
  %a1 = stablehlo.constant dense<[0, 1, 255, 16]> : tensor<4xui8>
  %a2 = stablehlo.constant dense<[0, 1, -1]> : tensor<3xi64>
  %r0 = stablehlo.count_leading_zeros %a0 : tensor<6xi32>
  %r1 = stablehlo.count_leading_zeros %a1 : tensor<4xui8>
  %r2 = stablehlo.count_leading_zeros %a2 : tensor<3xi64>
  check.expect_eq_const %r0, dense<[32, 31, 0, 24, 1, 0]> : tensor<6xi32>
  check.expect_eq_const %r1, dense<[8, 7, 0, 3]> : tensor<4xui8>
  check.expect_eq_const %r2, dense<[64, 63, 0]> : tensor<3xi64>
  func.return
}

// -----

func.func @reduce_precision_to_f16() {
  %a0 = stablehlo.constant dense<[1.0, 1.00097656, 1.00146484, 3.14159274, 65504.0, 100000.0, 9.99999975e-06, 5.99999979e-08, -2.5, 0x7F800000, 0x7FC00000]> : tensor<11xf32>
  %r0 = stablehlo.reduce_precision %a0, format = e5m10 : tensor<11xf32>
  check.expect_eq_const %r0, dense<[1.0, 1.00097656, 1.00195312, 3.140625, 65504.0, 0x7F800000, 0.0, 0.0, -2.5, 0x7F800000, 0x7FC00000]> : tensor<11xf32>
  func.return
}

// -----

func.func @reduce_precision_zero_mantissa() {
  %a0 = stablehlo.constant dense<[1.0, 1.5, 1.75, 3.0, -5.0, 0x7FC00000, 0x7F800000]> : tensor<7xf32>
  %r0 = stablehlo.reduce_precision %a0, format = e8m0 : tensor<7xf32>
  check.expect_eq_const %r0, dense<[1.0, 2.0, 2.0, 2.0, -4.0, 0x7FC00000, 0x7F800000]> : tensor<7xf32>
  func.return
}

// -----

func.func @convert_f32_to_i32_u8() {
  %a0 = stablehlo.constant dense<[-1.70000005, -0.5, 0.5, 2.9000001]> : tensor<4xf32>
  %r0 = stablehlo.convert %a0 : (tensor<4xf32>) -> tensor<4xi32>
  check.expect_eq_const %r0, dense<[-1, 0, 0, 2]> : tensor<4xi32>
  func.return
}

// -----

func.func @convert_i32_f64_bool() {
  %a0 = stablehlo.constant dense<[0, 3, -2]> : tensor<3xi32>
  %r0 = stablehlo.convert %a0 : (tensor<3xi32>) -> tensor<3xf64>
  %r1 = stablehlo.convert %a0 : (tensor<3xi32>) -> tensor<3xi1>
  check.expect_eq_const %r0, dense<[0.0, 3.0, -2.0]> : tensor<3xf64>
  check.expect_eq_const %r1, dense<[false, true, true]> : tensor<3xi1>
  func.return
}

// -----

func.func @bitcast_convert() {
  %a0 = stablehlo.constant dense<[1.0, -2.0]> : tensor<2xf32>
  %r0 = stablehlo.bitcast_convert %a0 : (tensor<2xf32>) -> tensor<2xi32>
  %r1 = stablehlo.bitcast_convert %a0 : (tensor<2xf32>) -> tensor<2x2xui16>
  check.expect_eq_const %r0, dense<[1065353216, -1073741824]> : tensor<2xi32>
  check.expect_eq_const %r1, dense<[[0, 16256], [0, 49152]]> : tensor<2x2xui16>
  func.return
}

// -----

func.func @add_bf16() {
  %a0 = stablehlo.constant dense<[1.5, -2.25, 100.0, 0.100097656]> : tensor<4xbf16>
  %a1 = stablehlo.constant dense<[1.5, -2.25, 100.0, 0.100097656]> : tensor<4xbf16>
  %r0 = stablehlo.add %a0, %a1 : tensor<4xbf16>
  check.expect_eq_const %r0, dense<[3.0, -4.5, 200.0, 0.200195312]> : tensor<4xbf16>
  func.return
}

// -----

func.func @compare_totalorder_f32() {
  %a0 = stablehlo.constant dense<[0xFFC00000, -0.0, 0x7FC00000, 1.0, 0xFF800000, -0.0]> : tensor<6xf32>
  %a1 = stablehlo.constant dense<[0xFF800000, 0.0, 0x7F800000, 1.0, 0x7FC00000, -0.0]> : tensor<6xf32>
  %r0 = stablehlo.compare LT, %a0, %a1, TOTALORDER : (tensor<6xf32>, tensor<6xf32>) -> tensor<6xi1>
  %r1 = stablehlo.compare EQ, %a0, %a1, TOTALORDER : (tensor<6xf32>, tensor<6xf32>) -> tensor<6xi1>
  check.expect_eq_const %r0, dense<[true, true, false, false, true, false]> : tensor<6xi1>
  check.expect_eq_const %r1, dense<[false, false, false, true, false, true]> : tensor<6xi1>
  func.return
}
