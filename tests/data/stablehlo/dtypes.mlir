// Conformance cases written for hlojit (hlojit/conformance.py reads them): the op x dtype corners an audit of the
// reference backend against the StableHLO spec found (complex, half floats, unsigned and wide integers, signed zeros).
// Expected values are Python's math/cmath evaluation of the spec's definitions; float results checked by bits go
// through stablehlo.bitcast_convert, so -0.0 and NaN signs count.

// IEEE maximum/minimum order -0 below +0 in either operand order; NaN propagates (bit patterns checked)
func.func @maximum_minimum_signed_zeros_f16() {
  %a0 = stablehlo.constant dense<[0.0, -0.0, -0.0, 0.0, 0x7E00, 1.5]> : tensor<6xf16>
  %a1 = stablehlo.constant dense<[-0.0, 0.0, -0.0, 0.0, -0.0, -2.0]> : tensor<6xf16>
  %r2 = "stablehlo.maximum"(%a0, %a1) : (tensor<6xf16>, tensor<6xf16>) -> tensor<6xf16>
  %r3 = "stablehlo.bitcast_convert"(%r2) : (tensor<6xf16>) -> tensor<6xi16>
  check.expect_eq_const %r3, dense<[0, 0, -32768, 0, 32256, 15872]> : tensor<6xi16>
  %r4 = "stablehlo.minimum"(%a0, %a1) : (tensor<6xf16>, tensor<6xf16>) -> tensor<6xf16>
  %r5 = "stablehlo.bitcast_convert"(%r4) : (tensor<6xf16>) -> tensor<6xi16>
  check.expect_eq_const %r5, dense<[-32768, -32768, -32768, 0, 32256, -16384]> : tensor<6xi16>
  func.return
}

// -----

// IEEE maximum/minimum order -0 below +0 in either operand order; NaN propagates (bit patterns checked)
func.func @maximum_minimum_signed_zeros_bf16() {
  %a0 = stablehlo.constant dense<[0.0, -0.0, -0.0, 0.0, 0x7FC0, 1.5]> : tensor<6xbf16>
  %a1 = stablehlo.constant dense<[-0.0, 0.0, -0.0, 0.0, -0.0, -2.0]> : tensor<6xbf16>
  %r2 = "stablehlo.maximum"(%a0, %a1) : (tensor<6xbf16>, tensor<6xbf16>) -> tensor<6xbf16>
  %r3 = "stablehlo.bitcast_convert"(%r2) : (tensor<6xbf16>) -> tensor<6xi16>
  check.expect_eq_const %r3, dense<[0, 0, -32768, 0, 32704, 16320]> : tensor<6xi16>
  %r4 = "stablehlo.minimum"(%a0, %a1) : (tensor<6xbf16>, tensor<6xbf16>) -> tensor<6xbf16>
  %r5 = "stablehlo.bitcast_convert"(%r4) : (tensor<6xbf16>) -> tensor<6xi16>
  check.expect_eq_const %r5, dense<[-32768, -32768, -32768, 0, 32704, -16384]> : tensor<6xi16>
  func.return
}

// -----

// IEEE maximum/minimum order -0 below +0 in either operand order; NaN propagates (bit patterns checked)
func.func @maximum_minimum_signed_zeros_f32() {
  %a0 = stablehlo.constant dense<[0.0, -0.0, -0.0, 0.0, 0x7FC00000, 1.5]> : tensor<6xf32>
  %a1 = stablehlo.constant dense<[-0.0, 0.0, -0.0, 0.0, -0.0, -2.0]> : tensor<6xf32>
  %r2 = "stablehlo.maximum"(%a0, %a1) : (tensor<6xf32>, tensor<6xf32>) -> tensor<6xf32>
  %r3 = "stablehlo.bitcast_convert"(%r2) : (tensor<6xf32>) -> tensor<6xi32>
  check.expect_eq_const %r3, dense<[0, 0, -2147483648, 0, 2143289344, 1069547520]> : tensor<6xi32>
  %r4 = "stablehlo.minimum"(%a0, %a1) : (tensor<6xf32>, tensor<6xf32>) -> tensor<6xf32>
  %r5 = "stablehlo.bitcast_convert"(%r4) : (tensor<6xf32>) -> tensor<6xi32>
  check.expect_eq_const %r5, dense<[-2147483648, -2147483648, -2147483648, 0, 2143289344, -1073741824]> : tensor<6xi32>
  func.return
}

// -----

// IEEE maximum/minimum order -0 below +0 in either operand order; NaN propagates (bit patterns checked)
func.func @maximum_minimum_signed_zeros_f64() {
  %a0 = stablehlo.constant dense<[0.0, -0.0, -0.0, 0.0, 0x7FF8000000000000, 1.5]> : tensor<6xf64>
  %a1 = stablehlo.constant dense<[-0.0, 0.0, -0.0, 0.0, -0.0, -2.0]> : tensor<6xf64>
  %r2 = "stablehlo.maximum"(%a0, %a1) : (tensor<6xf64>, tensor<6xf64>) -> tensor<6xf64>
  %r3 = "stablehlo.bitcast_convert"(%r2) : (tensor<6xf64>) -> tensor<6xi64>
  check.expect_eq_const %r3, dense<[0, 0, -9223372036854775808, 0, 9221120237041090560, 4609434218613702656]> : tensor<6xi64>
  %r4 = "stablehlo.minimum"(%a0, %a1) : (tensor<6xf64>, tensor<6xf64>) -> tensor<6xf64>
  %r5 = "stablehlo.bitcast_convert"(%r4) : (tensor<6xf64>) -> tensor<6xi64>
  check.expect_eq_const %r5, dense<[-9223372036854775808, -9223372036854775808, -9223372036854775808, 0, 9221120237041090560, -4611686018427387904]> : tensor<6xi64>
  func.return
}

// -----

// ties away from zero; -0.0 and -0.3 give -0.0; the largest float below 0.5 gives 0 (x + 0.5 would round it up to 1)
func.func @round_nearest_afz_signed_zero_f32() {
  %a0 = stablehlo.constant dense<[-0.0, -0.3, 0.4999999701976776, -2.5, 2.5, 0.5, -0.5, 1.0e+30]> : tensor<8xf32>
  %r1 = "stablehlo.round_nearest_afz"(%a0) : (tensor<8xf32>) -> tensor<8xf32>
  %r2 = "stablehlo.bitcast_convert"(%r1) : (tensor<8xf32>) -> tensor<8xi32>
  check.expect_eq_const %r2, dense<[-2147483648, -2147483648, 0, -1069547520, 1077936128, 1065353216, -1082130432, 1900671690]> : tensor<8xi32>
  func.return
}

// -----

// round_nearest_afz and round_nearest_even of f64 and f16 ties, with signed zeros
func.func @round_f64_f16() {
  %a0 = stablehlo.constant dense<[-0.0, -0.5, 0.5, 1.5, 2.5, -2.5, -0.25]> : tensor<7xf64>
  %r1 = "stablehlo.round_nearest_afz"(%a0) : (tensor<7xf64>) -> tensor<7xf64>
  %r2 = "stablehlo.bitcast_convert"(%r1) : (tensor<7xf64>) -> tensor<7xi64>
  check.expect_eq_const %r2, dense<[-9223372036854775808, -4616189618054758400, 4607182418800017408, 4611686018427387904, 4613937818241073152, -4609434218613702656, -9223372036854775808]> : tensor<7xi64>
  %r3 = "stablehlo.round_nearest_even"(%a0) : (tensor<7xf64>) -> tensor<7xf64>
  %r4 = "stablehlo.bitcast_convert"(%r3) : (tensor<7xf64>) -> tensor<7xi64>
  check.expect_eq_const %r4, dense<[-9223372036854775808, -9223372036854775808, 0, 4611686018427387904, 4611686018427387904, -4611686018427387904, -9223372036854775808]> : tensor<7xi64>
  %a5 = stablehlo.constant dense<[-0.0, -0.5, 0.5, 1.5, 2.5, -2.5, -0.25]> : tensor<7xf16>
  %r6 = "stablehlo.round_nearest_afz"(%a5) : (tensor<7xf16>) -> tensor<7xf16>
  %r7 = "stablehlo.bitcast_convert"(%r6) : (tensor<7xf16>) -> tensor<7xi16>
  check.expect_eq_const %r7, dense<[-32768, -17408, 15360, 16384, 16896, -15872, -32768]> : tensor<7xi16>
  %r8 = "stablehlo.round_nearest_even"(%a5) : (tensor<7xf16>) -> tensor<7xf16>
  %r9 = "stablehlo.bitcast_convert"(%r8) : (tensor<7xf16>) -> tensor<7xi16>
  check.expect_eq_const %r9, dense<[-32768, -32768, 0, 16384, 16384, -16384, -32768]> : tensor<7xi16>
  func.return
}

// -----

// ui64/ui32/i64 arithmetic wraps modulo 2^n; negate of an unsigned is the two's complement; abs(INT_MIN) is INT_MIN
func.func @unsigned_and_wide_integers() {
  %a0 = stablehlo.constant dense<[1, 2, 18446744073709551615, 9223372036854775808]> : tensor<4xui64>
  %a1 = stablehlo.constant dense<[3, 9223372036854775808, 2, 2]> : tensor<4xui64>
  %r2 = "stablehlo.multiply"(%a0, %a1) : (tensor<4xui64>, tensor<4xui64>) -> tensor<4xui64>
  check.expect_eq_const %r2, dense<[3, 0, 18446744073709551614, 0]> : tensor<4xui64>
  %r3 = "stablehlo.add"(%a0, %a1) : (tensor<4xui64>, tensor<4xui64>) -> tensor<4xui64>
  check.expect_eq_const %r3, dense<[4, 9223372036854775810, 1, 9223372036854775810]> : tensor<4xui64>
  %r4 = "stablehlo.divide"(%a0, %a1) : (tensor<4xui64>, tensor<4xui64>) -> tensor<4xui64>
  check.expect_eq_const %r4, dense<[0, 0, 9223372036854775807, 4611686018427387904]> : tensor<4xui64>
  %r5 = "stablehlo.negate"(%a0) : (tensor<4xui64>) -> tensor<4xui64>
  check.expect_eq_const %r5, dense<[18446744073709551615, 18446744073709551614, 1, 9223372036854775808]> : tensor<4xui64>
  %r6 = "stablehlo.popcnt"(%a0) : (tensor<4xui64>) -> tensor<4xui64>
  check.expect_eq_const %r6, dense<[1, 1, 64, 1]> : tensor<4xui64>
  %r7 = "stablehlo.count_leading_zeros"(%a0) : (tensor<4xui64>) -> tensor<4xui64>
  check.expect_eq_const %r7, dense<[63, 62, 0, 0]> : tensor<4xui64>
  %a8 = stablehlo.constant dense<[2147483648, 5]> : tensor<2xui32>
  %r9 = "stablehlo.negate"(%a8) : (tensor<2xui32>) -> tensor<2xui32>
  check.expect_eq_const %r9, dense<[2147483648, 4294967291]> : tensor<2xui32>
  %a10 = stablehlo.constant dense<[-9223372036854775808, 9223372036854775807, -5]> : tensor<3xi64>
  %r11 = "stablehlo.abs"(%a10) : (tensor<3xi64>) -> tensor<3xi64>
  check.expect_eq_const %r11, dense<[-9223372036854775808, 9223372036854775807, 5]> : tensor<3xi64>
  %r12 = "stablehlo.negate"(%a10) : (tensor<3xi64>) -> tensor<3xi64>
  check.expect_eq_const %r12, dense<[-9223372036854775808, -9223372036854775807, 5]> : tensor<3xi64>
  %r13 = "stablehlo.convert"(%a0) : (tensor<4xui64>) -> tensor<4xf64>
  check.expect_eq_const %r13, dense<[1.0, 2.0, 1.8446744073709552e+19, 9.223372036854776e+18]> : tensor<4xf64>
  func.return
}

// -----

// complex exp
func.func @exponential_complex() {
  %a0 = stablehlo.constant dense<[(1.0, 2.0), (-0.5, 0.25), (-3.0, -1.0), (0.75, -2.0), (-2.0, 0.0), (-2.0, -0.0), (0.001, 0.0001)]> : tensor<7xcomplex<f32>>
  %r1 = "stablehlo.exponential"(%a0) : (tensor<7xcomplex<f32>>) -> tensor<7xcomplex<f32>>
  check.expect_almost_eq_const %r1, dense<[(-1.13120436668396, 2.471726655960083), (0.5876750946044922, 0.1500580906867981), (0.026900067925453186, -0.041894372552633286), (-0.8809828758239746, -1.9249826669692993), (0.1353352814912796, 0.0), (0.1353352814912796, -0.0), (1.0010005235671997, 0.00010010004916694015)]> : tensor<7xcomplex<f32>> {tolerance = 1e-05 : f64}
  %a2 = stablehlo.constant dense<[(1.0, 2.0), (-0.5, 0.25), (-3.0, -1.0), (0.75, -2.0), (-2.0, 0.0), (-2.0, -0.0), (0.001, 0.0001)]> : tensor<7xcomplex<f64>>
  %r3 = "stablehlo.exponential"(%a2) : (tensor<7xcomplex<f64>>) -> tensor<7xcomplex<f64>>
  check.expect_almost_eq_const %r3, dense<[(-1.1312043837568135, 2.4717266720048188), (0.5876750903439226, 0.15005808662216327), (0.02690006784157161, -0.041894373450204546), (-0.8809828598836126, -1.9249826676958306), (0.1353352832366127, 0.0), (0.1353352832366127, -0.0), (1.001000495161706, 0.00010010004984983743)]> : tensor<7xcomplex<f64>> {tolerance = 1e-12 : f64}
  func.return
}

// -----

// complex expm1 (accurate near 0)
func.func @exponential_minus_one_complex() {
  %a0 = stablehlo.constant dense<[(1.0, 2.0), (-0.5, 0.25), (-3.0, -1.0), (0.75, -2.0), (-2.0, 0.0), (-2.0, -0.0), (0.001, 0.0001)]> : tensor<7xcomplex<f32>>
  %r1 = "stablehlo.exponential_minus_one"(%a0) : (tensor<7xcomplex<f32>>) -> tensor<7xcomplex<f32>>
  check.expect_almost_eq_const %r1, dense<[(-2.13120436668396, 2.471726655960083), (-0.4123249053955078, 0.1500580906867981), (-0.973099946975708, -0.041894372552633286), (-1.8809828758239746, -1.9249826669692993), (-0.8646647334098816, 0.0), (-0.8646647334098816, -0.0), (0.0010004951618611813, 0.00010010004916694015)]> : tensor<7xcomplex<f32>> {tolerance = 1e-05 : f64}
  %a2 = stablehlo.constant dense<[(1.0, 2.0), (-0.5, 0.25), (-3.0, -1.0), (0.75, -2.0), (-2.0, 0.0), (-2.0, -0.0), (0.001, 0.0001)]> : tensor<7xcomplex<f64>>
  %r3 = "stablehlo.exponential_minus_one"(%a2) : (tensor<7xcomplex<f64>>) -> tensor<7xcomplex<f64>>
  check.expect_almost_eq_const %r3, dense<[(-2.1312043837568133, 2.4717266720048188), (-0.4123249096560773, 0.15005808662216327), (-0.9730999321584284, -0.041894373450204546), (-1.8809828598836125, -1.9249826676958306), (-0.8646647167633873, 0.0), (-0.8646647167633873, -0.0), (0.001000495161705845, 0.00010010004984983743)]> : tensor<7xcomplex<f64>> {tolerance = 1e-12 : f64}
  func.return
}

// -----

// complex log: the branch cut on the negative real axis takes the sign of the imaginary zero (-2 + 0i -> +pi, -2 - 0i -> -pi)
func.func @log_complex() {
  %a0 = stablehlo.constant dense<[(1.0, 2.0), (-0.5, 0.25), (-3.0, -1.0), (0.75, -2.0), (-2.0, 0.0), (-2.0, -0.0), (0.001, 0.0001)]> : tensor<7xcomplex<f32>>
  %r1 = "stablehlo.log"(%a0) : (tensor<7xcomplex<f32>>) -> tensor<7xcomplex<f32>>
  check.expect_almost_eq_const %r1, dense<[(0.8047189712524414, 1.1071487665176392), (-0.5815753936767578, 2.677945137023926), (1.1512925624847412, -2.8198421001434326), (0.7589353322982788, -1.2120256423950195), (0.6931471824645996, 3.1415927410125732), (0.6931471824645996, -3.1415927410125732), (-6.902780055999756, 0.09966864436864853)]> : tensor<7xcomplex<f32>> {tolerance = 1e-05 : f64}
  %a2 = stablehlo.constant dense<[(1.0, 2.0), (-0.5, 0.25), (-3.0, -1.0), (0.75, -2.0), (-2.0, 0.0), (-2.0, -0.0), (0.001, 0.0001)]> : tensor<7xcomplex<f64>>
  %r3 = "stablehlo.log"(%a2) : (tensor<7xcomplex<f64>>) -> tensor<7xcomplex<f64>>
  check.expect_almost_eq_const %r3, dense<[(0.8047189562170503, 1.1071487177940904), (-0.5815754049028404, 2.677945044588987), (1.151292546497023, -2.819842099193151), (0.7589353594543049, -1.2120256565243244), (0.6931471805599453, 3.141592653589793), (0.6931471805599453, -3.141592653589793), (-6.902780113555553, 0.09966865249116202)]> : tensor<7xcomplex<f64>> {tolerance = 1e-12 : f64}
  func.return
}

// -----

// complex log1p: the real part keeps its digits near 0 (log(1 + z) loses them)
func.func @log_plus_one_complex() {
  %a0 = stablehlo.constant dense<[(1.0, 2.0), (-0.5, 0.25), (-3.0, -1.0), (0.75, -2.0), (-2.0, 0.0), (-2.0, -0.0), (0.001, 0.0001)]> : tensor<7xcomplex<f32>>
  %r1 = "stablehlo.log_plus_one"(%a0) : (tensor<7xcomplex<f32>>) -> tensor<7xcomplex<f32>>
  check.expect_almost_eq_const %r1, dense<[(1.0397207736968994, 0.7853981852531433), (-0.5815753936767578, 0.46364760398864746), (0.8047189712524414, -2.677945137023926), (0.9773995280265808, -0.8519663214683533), (0.0, 3.1415927410125732), (0.0, -3.1415927410125732), (0.0009995053987950087, 9.990009857574478e-05)]> : tensor<7xcomplex<f32>> {tolerance = 1e-06 : f64}
  %a2 = stablehlo.constant dense<[(1.0, 2.0), (-0.5, 0.25), (-3.0, -1.0), (0.75, -2.0), (-2.0, 0.0), (-2.0, -0.0), (0.001, 0.0001)]> : tensor<7xcomplex<f64>>
  %r3 = "stablehlo.log_plus_one"(%a2) : (tensor<7xcomplex<f64>>) -> tensor<7xcomplex<f64>>
  check.expect_almost_eq_const %r3, dense<[(1.0397207708399179, 0.7853981633974483), (-0.5815754049028404, 0.4636476090008061), (0.8047189562170501, -2.677945044588987), (0.9773995482362796, -0.8519663271732721), (0.0, 3.141592653589793), (0.0, -3.141592653589793), (0.0009995053230984882, 9.990009956776459e-05)]> : tensor<7xcomplex<f64>> {tolerance = 1e-12 : f64}
  func.return
}

// -----

// complex sqrt: the cut's imaginary zero picks +2i or -2i at -4
func.func @sqrt_complex() {
  %a0 = stablehlo.constant dense<[(1.0, 2.0), (-0.5, 0.25), (-3.0, -1.0), (0.75, -2.0), (-2.0, 0.0), (-2.0, -0.0), (0.001, 0.0001)]> : tensor<7xcomplex<f32>>
  %r1 = "stablehlo.sqrt"(%a0) : (tensor<7xcomplex<f32>>) -> tensor<7xcomplex<f32>>
  check.expect_almost_eq_const %r1, dense<[(1.272019624710083, 0.7861513495445251), (0.17178037762641907, 0.727673351764679), (0.28484877943992615, -1.7553173303604126), (1.201249599456787, -0.8324664831161499), (0.0, 1.4142135381698608), (0.0, -1.4142135381698608), (0.03166218474507332, 0.001579170930199325)]> : tensor<7xcomplex<f32>> {tolerance = 1e-05 : f64}
  %a2 = stablehlo.constant dense<[(1.0, 2.0), (-0.5, 0.25), (-3.0, -1.0), (0.75, -2.0), (-2.0, 0.0), (-2.0, -0.0), (0.001, 0.0001)]> : tensor<7xcomplex<f64>>
  %r3 = "stablehlo.sqrt"(%a2) : (tensor<7xcomplex<f64>>) -> tensor<7xcomplex<f64>>
  check.expect_almost_eq_const %r3, dense<[(1.272019649514069, 0.7861513777574233), (0.17178037486125622, 0.7276733451126774), (0.28484878459314106, -1.755317301824428), (1.201249544501346, -0.8324664967220552), (0.0, 1.4142135623730951), (0.0, -1.4142135623730951), (0.03166218219036781, 0.0015791710027873846)]> : tensor<7xcomplex<f64>> {tolerance = 1e-12 : f64}
  func.return
}

// -----

// complex rsqrt
func.func @rsqrt_complex() {
  %a0 = stablehlo.constant dense<[(1.0, 2.0), (-0.5, 0.25), (-3.0, -1.0), (0.75, -2.0), (-2.0, 0.0), (-2.0, -0.0), (0.001, 0.0001)]> : tensor<7xcomplex<f32>>
  %r1 = "stablehlo.rsqrt"(%a0) : (tensor<7xcomplex<f32>>) -> tensor<7xcomplex<f32>>
  check.expect_almost_eq_const %r1, dense<[(0.5688644647598267, -0.3515775799751282), (0.30729007720947266, -1.3017016649246216), (0.09007709473371506, 0.5550800561904907), (0.5623825192451477, 0.38973134756088257), (0.0, -0.7071067690849304), (-0.0, 0.7071067690849304), (31.505048751831055, -1.5713337659835815)]> : tensor<7xcomplex<f32>> {tolerance = 1e-05 : f64}
  %a2 = stablehlo.constant dense<[(1.0, 2.0), (-0.5, 0.25), (-3.0, -1.0), (0.75, -2.0), (-2.0, 0.0), (-2.0, -0.0), (0.001, 0.0001)]> : tensor<7xcomplex<f64>>
  %r3 = "stablehlo.rsqrt"(%a2) : (tensor<7xcomplex<f64>>) -> tensor<7xcomplex<f64>>
  check.expect_almost_eq_const %r3, dense<[(0.5688644810057831, -0.3515775842541429), (0.3072900763121319, -1.3017016520692888), (0.09007709480450048, 0.5550800690066424), (0.5623824990290673, 0.38973133511477287), (0.0, -0.7071067811865475), (-0.0, 0.7071067811865475), (31.505048802620347, -1.5713338774746501)]> : tensor<7xcomplex<f64>> {tolerance = 1e-12 : f64}
  func.return
}

// -----

// principal complex cube root |z|^(1/3) e^(i arg(z)/3)
func.func @cbrt_complex() {
  %a0 = stablehlo.constant dense<[(1.0, 2.0), (-0.5, 0.25), (-3.0, -1.0), (0.75, -2.0), (-2.0, 0.0), (-2.0, -0.0), (0.001, 0.0001)]> : tensor<7xcomplex<f32>>
  %r1 = "stablehlo.cbrt"(%a0) : (tensor<7xcomplex<f32>>) -> tensor<7xcomplex<f32>>
  check.expect_almost_eq_const %r1, dense<[(1.2196165323257446, 0.47171127796173096), (0.5167964696884155, 0.6415027976036072), (0.8657528162002563, -1.185287594795227), (1.184173583984375, -0.5062654614448547), (0.6299605369567871, 1.0911235809326172), (0.6299605369567871, -1.0911235809326172), (0.10011070221662521, 0.0033271904103457928)]> : tensor<7xcomplex<f32>> {tolerance = 1e-05 : f64}
  %a2 = stablehlo.constant dense<[(1.0, 2.0), (-0.5, 0.25), (-3.0, -1.0), (0.75, -2.0), (-2.0, 0.0), (-2.0, -0.0), (0.001, 0.0001)]> : tensor<7xcomplex<f64>>
  %r3 = "stablehlo.cbrt"(%a2) : (tensor<7xcomplex<f64>>) -> tensor<7xcomplex<f64>>
  check.expect_almost_eq_const %r3, dense<[(1.2196165079717578, 0.47171126778938893), (0.516796460394527, 0.6415027846178182), (0.8657528183493822, -1.1852876222892), (1.1841736200427593, -0.5062654410600245), (0.6299605249474367, 1.0911236359717214), (0.6299605249474367, -1.0911236359717214), (0.10011070191996224, 0.0033271904834806074)]> : tensor<7xcomplex<f64>> {tolerance = 1e-12 : f64}
  func.return
}

// -----

// complex tanh
func.func @tanh_complex() {
  %a0 = stablehlo.constant dense<[(1.0, 2.0), (-0.5, 0.25), (-3.0, -1.0), (0.75, -2.0), (-2.0, 0.0), (-2.0, -0.0), (0.001, 0.0001)]> : tensor<7xcomplex<f32>>
  %r1 = "stablehlo.tanh"(%a0) : (tensor<7xcomplex<f32>>) -> tensor<7xcomplex<f32>>
  check.expect_almost_eq_const %r1, dense<[(1.1667362451553345, -0.24345819652080536), (-0.48548728227615356, 0.1980554461479187), (-1.0020549297332764, -0.004517137072980404), (1.2534271478652954, 0.44550132751464844), (-0.9640275835990906, 0.0), (-0.9640275835990906, -0.0), (0.0009999996982514858, 9.999989561038092e-05)]> : tensor<7xcomplex<f32>> {tolerance = 1e-05 : f64}
  %a2 = stablehlo.constant dense<[(1.0, 2.0), (-0.5, 0.25), (-3.0, -1.0), (0.75, -2.0), (-2.0, 0.0), (-2.0, -0.0), (0.001, 0.0001)]> : tensor<7xcomplex<f64>>
  %r3 = "stablehlo.tanh"(%a2) : (tensor<7xcomplex<f64>>) -> tensor<7xcomplex<f64>>
  check.expect_almost_eq_const %r3, dense<[(1.16673625724092, -0.24345820118572534), (-0.4854872810241353, 0.19805544995134958), (-1.0020549882458119, -0.004517137276658425), (1.2534271713346838, 0.44550132143674176), (-0.9640275800758169, 0.0), (-0.9640275800758169, -0.0), (0.000999999676666787, 9.99999003333987e-05)]> : tensor<7xcomplex<f64>> {tolerance = 1e-12 : f64}
  func.return
}

// -----

// complex sine
func.func @sine_complex() {
  %a0 = stablehlo.constant dense<[(1.0, 2.0), (-0.5, 0.25), (-3.0, -1.0), (0.75, -2.0), (-2.0, 0.0), (-2.0, -0.0), (0.001, 0.0001)]> : tensor<7xcomplex<f32>>
  %r1 = "stablehlo.sine"(%a0) : (tensor<7xcomplex<f32>>) -> tensor<7xcomplex<f32>>
  check.expect_almost_eq_const %r1, dense<[(3.165778398513794, 1.9596010446548462), (-0.4944857954978943, 0.2216881662607193), (-0.21775954961776733, 1.1634403467178345), (2.5644583702087402, -2.653733491897583), (-0.9092974066734314, -0.0), (-0.9092974066734314, 0.0), (0.0009999999310821295, 9.999994654208422e-05)]> : tensor<7xcomplex<f32>> {tolerance = 1e-05 : f64}
  %a2 = stablehlo.constant dense<[(1.0, 2.0), (-0.5, 0.25), (-3.0, -1.0), (0.75, -2.0), (-2.0, 0.0), (-2.0, -0.0), (0.001, 0.0001)]> : tensor<7xcomplex<f64>>
  %r3 = "stablehlo.sine"(%a2) : (tensor<7xcomplex<f64>>) -> tensor<7xcomplex<f64>>
  check.expect_almost_eq_const %r3, dense<[(3.165778513216168, 1.9596010414216063), (-0.494485780933195, 0.22168816414957482), (-0.21775955162215221, 1.1634403637032504), (2.564458405835377, -2.65373338938083), (-0.9092974268256817, -0.0), (-0.9092974268256817, 0.0), (0.0009999998383333408, 9.999995016667076e-05)]> : tensor<7xcomplex<f64>> {tolerance = 1e-12 : f64}
  func.return
}

// -----

// complex cosine
func.func @cosine_complex() {
  %a0 = stablehlo.constant dense<[(1.0, 2.0), (-0.5, 0.25), (-3.0, -1.0), (0.75, -2.0), (-2.0, 0.0), (-2.0, -0.0), (0.001, 0.0001)]> : tensor<7xcomplex<f32>>
  %r1 = "stablehlo.cosine"(%a0) : (tensor<7xcomplex<f32>>) -> tensor<7xcomplex<f32>>
  check.expect_almost_eq_const %r1, dense<[(2.0327229499816895, -3.0518977642059326), (0.9051501750946045, 0.12110879272222519), (-1.5276381969451904, -0.1658443957567215), (2.7527565956115723, 2.4722087383270264), (-0.416146844625473, 0.0), (-0.416146844625473, -0.0), (0.9999995231628418, -9.999998695775503e-08)]> : tensor<7xcomplex<f32>> {tolerance = 1e-05 : f64}
  %a2 = stablehlo.constant dense<[(1.0, 2.0), (-0.5, 0.25), (-3.0, -1.0), (0.75, -2.0), (-2.0, 0.0), (-2.0, -0.0), (0.001, 0.0001)]> : tensor<7xcomplex<f64>>
  %r3 = "stablehlo.cosine"(%a2) : (tensor<7xcomplex<f64>>) -> tensor<7xcomplex<f64>>
  check.expect_almost_eq_const %r3, dense<[(2.0327230070196656, -3.0518977991518), (0.9051501505596068, 0.12110879604381165), (-1.5276382501165433, -0.1658444019189788), (2.7527567096909453, 2.472208631182566), (-0.4161468365471424, 0.0), (-0.4161468365471424, -0.0), (0.9999995050000391, -9.999998350000081e-08)]> : tensor<7xcomplex<f64>> {tolerance = 1e-12 : f64}
  func.return
}

// -----

// complex tan
func.func @tan_complex() {
  %a0 = stablehlo.constant dense<[(1.0, 2.0), (-0.5, 0.25), (-3.0, -1.0), (0.75, -2.0), (-2.0, 0.0), (-2.0, -0.0), (0.001, 0.0001)]> : tensor<7xcomplex<f32>>
  %r1 = "stablehlo.tan"(%a0) : (tensor<7xcomplex<f32>>) -> tensor<7xcomplex<f32>>
  check.expect_almost_eq_const %r1, dense<[(0.03381282463669777, 1.0147936344146729), (-0.504500687122345, 0.31242069602012634), (0.05916853994131088, -0.7680176496505737), (0.036432888358831406, -0.9967473745346069), (2.185039758682251, 0.0), (2.185039758682251, -0.0), (0.0010000003967434168, 0.00010000009933719411)]> : tensor<7xcomplex<f32>> {tolerance = 1e-05 : f64}
  %a2 = stablehlo.constant dense<[(1.0, 2.0), (-0.5, 0.25), (-3.0, -1.0), (0.75, -2.0), (-2.0, 0.0), (-2.0, -0.0), (0.001, 0.0001)]> : tensor<7xcomplex<f64>>
  %r3 = "stablehlo.tan"(%a2) : (tensor<7xcomplex<f64>>) -> tensor<7xcomplex<f64>>
  check.expect_almost_eq_const %r3, dense<[(0.0338128260798967, 1.0147936161466335), (-0.504500702698564, 0.31242069250258875), (0.05916853956605073, -0.768017647286911), (0.03643288937571832, -0.9967473999046033), (2.185039863261519, 0.0), (2.185039863261519, -0.0), (0.0010000003233334533, 0.00010000009966673201)]> : tensor<7xcomplex<f64>> {tolerance = 1e-12 : f64}
  func.return
}

// -----

// complex logistic 1 / (1 + e^-z)
func.func @logistic_complex() {
  %a0 = stablehlo.constant dense<[(1.0, 2.0), (-0.5, 0.25), (-3.0, -1.0), (0.75, -2.0), (-2.0, 0.0), (-2.0, -0.0), (0.001, 0.0001)]> : tensor<7xcomplex<f32>>
  %r1 = "stablehlo.logistic"(%a0) : (tensor<7xcomplex<f32>>) -> tensor<7xcomplex<f32>>
  check.expect_almost_eq_const %r1, dense<[(1.02141535282135, 0.4034387171268463), (0.37572482228279114, 0.059002965688705444), (0.027813507243990898, -0.03966222703456879), (0.9680037498474121, -0.5175069570541382), (0.11920291930437088, 0.0), (0.11920291930437088, 0.0), (0.500249981880188, 2.499999391147867e-05)]> : tensor<7xcomplex<f32>> {tolerance = 1e-05 : f64}
  %a2 = stablehlo.constant dense<[(1.0, 2.0), (-0.5, 0.25), (-3.0, -1.0), (0.75, -2.0), (-2.0, 0.0), (-2.0, -0.0), (0.001, 0.0001)]> : tensor<7xcomplex<f64>>
  %r3 = "stablehlo.logistic"(%a2) : (tensor<7xcomplex<f64>>) -> tensor<7xcomplex<f64>>
  check.expect_almost_eq_const %r3, dense<[(1.0214153641721806, 0.4034387060815425), (0.3757248355800388, 0.059002964314508036), (0.02781350678868927, -0.039662227401978334), (0.9680037656300103, -0.5175069450797777), (0.11920292202211755, 0.0), (0.11920292202211755, 0.0), (0.5002499999797916, 2.4999993770834353e-05)]> : tensor<7xcomplex<f64>> {tolerance = 1e-12 : f64}
  func.return
}

// -----

// complex atan2(y, x) = -i log((x + i y) / sqrt(x^2 + y^2))
func.func @atan2_complex() {
  %a0 = stablehlo.constant dense<[(1.0, 0.0), (0.5, -1.0), (-2.0, 1.0), (3.0, 0.0)]> : tensor<4xcomplex<f32>>
  %a1 = stablehlo.constant dense<[(1.0, 0.0), (2.0, 0.25), (1.0, -1.0), (-4.0, 0.0)]> : tensor<4xcomplex<f32>>
  %r2 = "stablehlo.atan2"(%a0, %a1) : (tensor<4xcomplex<f32>>, tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>>
  check.expect_almost_eq_const %r2, dense<[(0.7853981852531433, 1.1102230246251565e-16), (0.244978666305542, -0.5493061542510986), (-1.0172219276428223, -0.14694666862487793), (2.498091459274292, -2.7755575615628914e-17)]> : tensor<4xcomplex<f32>> {tolerance = 1e-05 : f64}
  %a3 = stablehlo.constant dense<[(1.0, 0.0), (0.5, -1.0), (-2.0, 1.0), (3.0, 0.0)]> : tensor<4xcomplex<f64>>
  %a4 = stablehlo.constant dense<[(1.0, 0.0), (2.0, 0.25), (1.0, -1.0), (-4.0, 0.0)]> : tensor<4xcomplex<f64>>
  %r5 = "stablehlo.atan2"(%a3, %a4) : (tensor<4xcomplex<f64>>, tensor<4xcomplex<f64>>) -> tensor<4xcomplex<f64>>
  check.expect_almost_eq_const %r5, dense<[(0.7853981633974483, 1.1102230246251565e-16), (0.24497866312686414, -0.5493061443340548), (-1.0172219678978514, -0.14694666622552968), (2.498091544796509, -2.7755575615628914e-17)]> : tensor<4xcomplex<f64>> {tolerance = 1e-12 : f64}
  func.return
}

// -----

// complex add, subtract, multiply, negate (exact), divide, power and abs
func.func @arithmetic_complex() {
  %a0 = stablehlo.constant dense<[(1.0, 2.0), (-0.5, 0.25), (3.0, -1.0), (0.0, -2.0)]> : tensor<4xcomplex<f32>>
  %a1 = stablehlo.constant dense<[(0.5, -1.0), (2.0, 2.0), (-1.0, 0.0), (1.0, 1.0)]> : tensor<4xcomplex<f32>>
  %r2 = "stablehlo.add"(%a0, %a1) : (tensor<4xcomplex<f32>>, tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>>
  check.expect_eq_const %r2, dense<[(1.5, 1.0), (1.5, 2.25), (2.0, -1.0), (1.0, -1.0)]> : tensor<4xcomplex<f32>>
  %r3 = "stablehlo.subtract"(%a0, %a1) : (tensor<4xcomplex<f32>>, tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>>
  check.expect_eq_const %r3, dense<[(0.5, 3.0), (-2.5, -1.75), (4.0, -1.0), (-1.0, -3.0)]> : tensor<4xcomplex<f32>>
  %r4 = "stablehlo.multiply"(%a0, %a1) : (tensor<4xcomplex<f32>>, tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>>
  check.expect_eq_const %r4, dense<[(2.5, 0.0), (-1.5, -0.5), (-3.0, 1.0), (2.0, -2.0)]> : tensor<4xcomplex<f32>>
  %r5 = "stablehlo.negate"(%a0) : (tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>>
  check.expect_eq_const %r5, dense<[(-1.0, -2.0), (0.5, -0.25), (-3.0, 1.0), (-0.0, 2.0)]> : tensor<4xcomplex<f32>>
  %r6 = "stablehlo.divide"(%a0, %a1) : (tensor<4xcomplex<f32>>, tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>>
  check.expect_almost_eq_const %r6, dense<[(-1.2000000476837158, 1.600000023841858), (-0.0625, 0.1875), (-3.0, 1.0), (-1.0, -1.0)]> : tensor<4xcomplex<f32>> {tolerance = 1e-05 : f64}
  %r8 = "stablehlo.abs"(%a0) : (tensor<4xcomplex<f32>>) -> tensor<4xf32>
  check.expect_almost_eq_const %r8, dense<[2.2360680103302, 0.55901700258255, 3.1622776985168457, 2.0]> : tensor<4xf32> {tolerance = 1e-05 : f64}
  %a9 = stablehlo.constant dense<[(1.0, 2.0), (-0.5, 0.25), (3.0, -1.0), (0.0, -2.0)]> : tensor<4xcomplex<f64>>
  %a10 = stablehlo.constant dense<[(0.5, -1.0), (2.0, 2.0), (-1.0, 0.0), (1.0, 1.0)]> : tensor<4xcomplex<f64>>
  %r11 = "stablehlo.add"(%a9, %a10) : (tensor<4xcomplex<f64>>, tensor<4xcomplex<f64>>) -> tensor<4xcomplex<f64>>
  check.expect_eq_const %r11, dense<[(1.5, 1.0), (1.5, 2.25), (2.0, -1.0), (1.0, -1.0)]> : tensor<4xcomplex<f64>>
  %r12 = "stablehlo.subtract"(%a9, %a10) : (tensor<4xcomplex<f64>>, tensor<4xcomplex<f64>>) -> tensor<4xcomplex<f64>>
  check.expect_eq_const %r12, dense<[(0.5, 3.0), (-2.5, -1.75), (4.0, -1.0), (-1.0, -3.0)]> : tensor<4xcomplex<f64>>
  %r13 = "stablehlo.multiply"(%a9, %a10) : (tensor<4xcomplex<f64>>, tensor<4xcomplex<f64>>) -> tensor<4xcomplex<f64>>
  check.expect_eq_const %r13, dense<[(2.5, 0.0), (-1.5, -0.5), (-3.0, 1.0), (2.0, -2.0)]> : tensor<4xcomplex<f64>>
  %r14 = "stablehlo.negate"(%a9) : (tensor<4xcomplex<f64>>) -> tensor<4xcomplex<f64>>
  check.expect_eq_const %r14, dense<[(-1.0, -2.0), (0.5, -0.25), (-3.0, 1.0), (-0.0, 2.0)]> : tensor<4xcomplex<f64>>
  %r15 = "stablehlo.divide"(%a9, %a10) : (tensor<4xcomplex<f64>>, tensor<4xcomplex<f64>>) -> tensor<4xcomplex<f64>>
  check.expect_almost_eq_const %r15, dense<[(-1.2, 1.6), (-0.0625, 0.1875), (-3.0, 1.0), (-1.0, -1.0)]> : tensor<4xcomplex<f64>> {tolerance = 1e-12 : f64}
  %r17 = "stablehlo.abs"(%a9) : (tensor<4xcomplex<f64>>) -> tensor<4xf64>
  check.expect_almost_eq_const %r17, dense<[2.23606797749979, 0.5590169943749475, 3.1622776601683795, 2.0]> : tensor<4xf64> {tolerance = 1e-12 : f64}
  func.return
}

func.func @power_complex() {
  %a0 = stablehlo.constant dense<[(1.0, 2.0), (-0.5, 0.25), (3.0, -1.0), (0.0, -2.0)]> : tensor<4xcomplex<f32>>
  %a1 = stablehlo.constant dense<[(0.5, -1.0), (2.0, 2.0), (-1.0, 0.0), (1.0, 1.0)]> : tensor<4xcomplex<f32>>
  %r7 = "stablehlo.power"(%a0, %a1) : (tensor<4xcomplex<f32>>, tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>>
  check.expect_almost_eq_const %r7, dense<[(4.382565021514893, -1.1243975162506104), (-0.0007324910839088261, -0.0012803621357306838), (0.30000001192092896, 0.10000000149011612), (6.1474175453186035, -7.40081262588501)]> : tensor<4xcomplex<f32>> {tolerance = 1e-05 : f64}
  %a9 = stablehlo.constant dense<[(1.0, 2.0), (-0.5, 0.25), (3.0, -1.0), (0.0, -2.0)]> : tensor<4xcomplex<f64>>
  %a10 = stablehlo.constant dense<[(0.5, -1.0), (2.0, 2.0), (-1.0, 0.0), (1.0, 1.0)]> : tensor<4xcomplex<f64>>
  %r16 = "stablehlo.power"(%a9, %a10) : (tensor<4xcomplex<f64>>, tensor<4xcomplex<f64>>) -> tensor<4xcomplex<f64>>
  check.expect_almost_eq_const %r16, dense<[(4.382565059863358, -1.1243974773611554), (-0.000732491068154499, -0.0012803621428321157), (0.3, 0.09999999999999999), (6.1474175340389845, -7.4008126711400495)]> : tensor<4xcomplex<f64>> {tolerance = 1e-12 : f64}
  func.return
}

// -----

// a subnormal divisor: tiny / tiny is 1 (a quotient through 1/|b| overflows)
func.func @divide_complex_by_a_subnormal() {
  %a0 = stablehlo.constant dense<[(1.401298464324817e-45, 0.0), (4.203895392974451e-45, 1.401298464324817e-45), (6.0, 8.0)]> : tensor<3xcomplex<f32>>
  %a1 = stablehlo.constant dense<[(1.401298464324817e-45, 0.0), (1.401298464324817e-45, 0.0), (3.0, 4.0)]> : tensor<3xcomplex<f32>>
  %r2 = "stablehlo.divide"(%a0, %a1) : (tensor<3xcomplex<f32>>, tensor<3xcomplex<f32>>) -> tensor<3xcomplex<f32>>
  check.expect_almost_eq_const %r2, dense<[(1.0, 0.0), (3.0, 1.0), (2.0, 0.0)]> : tensor<3xcomplex<f32>> {tolerance = 1e-06 : f64}
  %a3 = stablehlo.constant dense<[(5.0e-324, 0.0), (1.5e-323, 5.0e-324), (6.0, 8.0)]> : tensor<3xcomplex<f64>>
  %a4 = stablehlo.constant dense<[(5.0e-324, 0.0), (5.0e-324, 0.0), (3.0, 4.0)]> : tensor<3xcomplex<f64>>
  %r5 = "stablehlo.divide"(%a3, %a4) : (tensor<3xcomplex<f64>>, tensor<3xcomplex<f64>>) -> tensor<3xcomplex<f64>>
  check.expect_almost_eq_const %r5, dense<[(1.0, 0.0), (3.0, 1.0), (2.0, 0.0)]> : tensor<3xcomplex<f64>> {tolerance = 1e-06 : f64}
  func.return
}

// -----

// (0, 0) at zero, (nan, nan) for a NaN part, x / |x| otherwise (parts checked by bits)
func.func @sign_complex() {
  %a0 = stablehlo.constant dense<[(-0.0, -0.0), (1.0, 0x7FC00000), (4.0, 0.0), (0.0, -2.0), (0.0, -0.0)]> : tensor<5xcomplex<f32>>
  %r1 = "stablehlo.sign"(%a0) : (tensor<5xcomplex<f32>>) -> tensor<5xcomplex<f32>>
  %r2 = "stablehlo.real"(%r1) : (tensor<5xcomplex<f32>>) -> tensor<5xf32>
  %r3 = "stablehlo.imag"(%r1) : (tensor<5xcomplex<f32>>) -> tensor<5xf32>
  %r4 = "stablehlo.bitcast_convert"(%r2) : (tensor<5xf32>) -> tensor<5xi32>
  check.expect_eq_const %r4, dense<[0, 2143289344, 1065353216, 0, 0]> : tensor<5xi32>
  %r5 = "stablehlo.bitcast_convert"(%r3) : (tensor<5xf32>) -> tensor<5xi32>
  check.expect_eq_const %r5, dense<[0, 2143289344, 0, -1082130432, 0]> : tensor<5xi32>
  %a6 = stablehlo.constant dense<[(-0.0, -0.0), (1.0, 0x7FF8000000000000), (4.0, 0.0), (0.0, -2.0), (0.0, -0.0)]> : tensor<5xcomplex<f64>>
  %r7 = "stablehlo.sign"(%a6) : (tensor<5xcomplex<f64>>) -> tensor<5xcomplex<f64>>
  %r8 = "stablehlo.real"(%r7) : (tensor<5xcomplex<f64>>) -> tensor<5xf64>
  %r9 = "stablehlo.imag"(%r7) : (tensor<5xcomplex<f64>>) -> tensor<5xf64>
  %r10 = "stablehlo.bitcast_convert"(%r8) : (tensor<5xf64>) -> tensor<5xi64>
  check.expect_eq_const %r10, dense<[0, 9221120237041090560, 4607182418800017408, 0, 0]> : tensor<5xi64>
  %r11 = "stablehlo.bitcast_convert"(%r9) : (tensor<5xf64>) -> tensor<5xi64>
  check.expect_eq_const %r11, dense<[0, 9221120237041090560, 0, -4616189618054758400, 0]> : tensor<5xi64>
  func.return
}

// -----

// complex order is lexicographic on (real, imag): the real parts decide even beside a NaN imaginary part; EQ/NE compare both parts
func.func @compare_complex_lexicographic() {
  %a0 = stablehlo.constant dense<[(0.0, 0.0), (0.5, 0x7FC00000), (1.0, 1.0), (1.0, 2.0), (0x7FC00000, 0.0), (1.0, 1.0)]> : tensor<6xcomplex<f32>>
  %a1 = stablehlo.constant dense<[(0.5, 0x7FC00000), (0.0, 0.0), (1.0, 2.0), (1.0, 1.0), (0.0, 0.0), (1.0, 1.0)]> : tensor<6xcomplex<f32>>
  %r2 = "stablehlo.compare"(%a0, %a1) {comparison_direction = #stablehlo<comparison_direction LT>, compare_type = #stablehlo<comparison_type FLOAT>} : (tensor<6xcomplex<f32>>, tensor<6xcomplex<f32>>) -> tensor<6xi1>
  check.expect_eq_const %r2, dense<[true, false, true, false, false, false]> : tensor<6xi1>
  %r3 = "stablehlo.compare"(%a0, %a1) {comparison_direction = #stablehlo<comparison_direction GE>, compare_type = #stablehlo<comparison_type FLOAT>} : (tensor<6xcomplex<f32>>, tensor<6xcomplex<f32>>) -> tensor<6xi1>
  check.expect_eq_const %r3, dense<[false, true, false, true, false, true]> : tensor<6xi1>
  %r4 = "stablehlo.compare"(%a0, %a1) {comparison_direction = #stablehlo<comparison_direction EQ>, compare_type = #stablehlo<comparison_type FLOAT>} : (tensor<6xcomplex<f32>>, tensor<6xcomplex<f32>>) -> tensor<6xi1>
  check.expect_eq_const %r4, dense<[false, false, false, false, false, true]> : tensor<6xi1>
  %r5 = "stablehlo.compare"(%a0, %a1) {comparison_direction = #stablehlo<comparison_direction NE>, compare_type = #stablehlo<comparison_type FLOAT>} : (tensor<6xcomplex<f32>>, tensor<6xcomplex<f32>>) -> tensor<6xi1>
  check.expect_eq_const %r5, dense<[true, true, true, true, true, false]> : tensor<6xi1>
  %a6 = stablehlo.constant dense<[(0.0, 0.0), (0.5, 0x7FF8000000000000), (1.0, 1.0), (1.0, 2.0), (0x7FF8000000000000, 0.0), (1.0, 1.0)]> : tensor<6xcomplex<f64>>
  %a7 = stablehlo.constant dense<[(0.5, 0x7FF8000000000000), (0.0, 0.0), (1.0, 2.0), (1.0, 1.0), (0.0, 0.0), (1.0, 1.0)]> : tensor<6xcomplex<f64>>
  %r8 = "stablehlo.compare"(%a6, %a7) {comparison_direction = #stablehlo<comparison_direction LT>, compare_type = #stablehlo<comparison_type FLOAT>} : (tensor<6xcomplex<f64>>, tensor<6xcomplex<f64>>) -> tensor<6xi1>
  check.expect_eq_const %r8, dense<[true, false, true, false, false, false]> : tensor<6xi1>
  %r9 = "stablehlo.compare"(%a6, %a7) {comparison_direction = #stablehlo<comparison_direction GE>, compare_type = #stablehlo<comparison_type FLOAT>} : (tensor<6xcomplex<f64>>, tensor<6xcomplex<f64>>) -> tensor<6xi1>
  check.expect_eq_const %r9, dense<[false, true, false, true, false, true]> : tensor<6xi1>
  %r10 = "stablehlo.compare"(%a6, %a7) {comparison_direction = #stablehlo<comparison_direction EQ>, compare_type = #stablehlo<comparison_type FLOAT>} : (tensor<6xcomplex<f64>>, tensor<6xcomplex<f64>>) -> tensor<6xi1>
  check.expect_eq_const %r10, dense<[false, false, false, false, false, true]> : tensor<6xi1>
  %r11 = "stablehlo.compare"(%a6, %a7) {comparison_direction = #stablehlo<comparison_direction NE>, compare_type = #stablehlo<comparison_type FLOAT>} : (tensor<6xcomplex<f64>>, tensor<6xcomplex<f64>>) -> tensor<6xi1>
  check.expect_eq_const %r11, dense<[true, true, true, true, true, false]> : tensor<6xi1>
  func.return
}

// -----

// complex -> i1 is true for any nonzero number; -> i32 and -> f32 keep the real part; c64 -> c128 converts both parts; real -> complex has a zero imaginary part
func.func @convert_complex() {
  %a0 = stablehlo.constant dense<[(0.0, 0.0), (-0.0, 0.0), (0.0, 1.0), (-2.5, 1.0), (3.0, 0.0)]> : tensor<5xcomplex<f32>>
  %r1 = "stablehlo.convert"(%a0) : (tensor<5xcomplex<f32>>) -> tensor<5xi1>
  check.expect_eq_const %r1, dense<[false, false, true, true, true]> : tensor<5xi1>
  %r2 = "stablehlo.convert"(%a0) : (tensor<5xcomplex<f32>>) -> tensor<5xi32>
  check.expect_eq_const %r2, dense<[0, 0, 0, -2, 3]> : tensor<5xi32>
  %r3 = "stablehlo.convert"(%a0) : (tensor<5xcomplex<f32>>) -> tensor<5xf32>
  check.expect_eq_const %r3, dense<[0.0, -0.0, 0.0, -2.5, 3.0]> : tensor<5xf32>
  %r4 = "stablehlo.convert"(%a0) : (tensor<5xcomplex<f32>>) -> tensor<5xcomplex<f64>>
  check.expect_eq_const %r4, dense<[(0.0, 0.0), (-0.0, 0.0), (0.0, 1.0), (-2.5, 1.0), (3.0, 0.0)]> : tensor<5xcomplex<f64>>
  %a5 = stablehlo.constant dense<[1.5, -0.0, 3.0]> : tensor<3xf32>
  %r6 = "stablehlo.convert"(%a5) : (tensor<3xf32>) -> tensor<3xcomplex<f64>>
  check.expect_eq_const %r6, dense<[(1.5, 0.0), (-0.0, 0.0), (3.0, 0.0)]> : tensor<3xcomplex<f64>>
  %a7 = stablehlo.constant dense<[255, 0, 7]> : tensor<3xui8>
  %r8 = "stablehlo.convert"(%a7) : (tensor<3xui8>) -> tensor<3xcomplex<f64>>
  check.expect_eq_const %r8, dense<[(255.0, 0.0), (0.0, 0.0), (7.0, 0.0)]> : tensor<3xcomplex<f64>>
  func.return
}

// -----

// real, imag and complex of complex<f64> (and of a real operand: x and 0)
func.func @real_imag_complex_c128() {
  %a0 = stablehlo.constant dense<[(1.0, 2.0), (-0.0, 0x7FF0000000000000), (0x7FF8000000000000, -3.0)]> : tensor<3xcomplex<f64>>
  %r1 = "stablehlo.real"(%a0) : (tensor<3xcomplex<f64>>) -> tensor<3xf64>
  %r2 = "stablehlo.imag"(%a0) : (tensor<3xcomplex<f64>>) -> tensor<3xf64>
  %r3 = "stablehlo.bitcast_convert"(%r1) : (tensor<3xf64>) -> tensor<3xi64>
  check.expect_eq_const %r3, dense<[4607182418800017408, -9223372036854775808, 9221120237041090560]> : tensor<3xi64>
  %r4 = "stablehlo.bitcast_convert"(%r2) : (tensor<3xf64>) -> tensor<3xi64>
  check.expect_eq_const %r4, dense<[4611686018427387904, 9218868437227405312, -4609434218613702656]> : tensor<3xi64>
  %r5 = "stablehlo.complex"(%r1, %r2) : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xcomplex<f64>>
  check.expect_eq_const %r5, dense<[(1.0, 2.0), (-0.0, 0x7FF0000000000000), (0x7FF8000000000000, -3.0)]> : tensor<3xcomplex<f64>>
  %a6 = stablehlo.constant dense<[2.5, -1.0]> : tensor<2xf32>
  %r7 = "stablehlo.imag"(%a6) : (tensor<2xf32>) -> tensor<2xf32>
  check.expect_eq_const %r7, dense<[0.0, 0.0]> : tensor<2xf32>
  func.return
}

// -----

// f16 exp, log, sqrt, tanh, sine, logistic and floor with its infinities and NaN
func.func @math_f16() {
  %a0 = stablehlo.constant dense<[0.0, -0.0, 1.0, -1.5, 2.5, 0.300048828125, 0x7C00, 0xFC00, 0x7E00]> : tensor<9xf16>
  %r1 = "stablehlo.exponential"(%a0) : (tensor<9xf16>) -> tensor<9xf16>
  check.expect_almost_eq_const %r1, dense<[1.0, 1.0, 2.71875, 0.22314453125, 12.1796875, 1.349609375, 0x7C00, 0.0, 0x7E00]> : tensor<9xf16> {tolerance = 0.002 : f64}
  %r2 = "stablehlo.log"(%a0) : (tensor<9xf16>) -> tensor<9xf16>
  check.expect_almost_eq_const %r2, dense<[0xFC00, 0xFC00, 0.0, 0x7E00, 0.91650390625, -1.2041015625, 0x7C00, 0x7E00, 0x7E00]> : tensor<9xf16> {tolerance = 0.002 : f64}
  %r3 = "stablehlo.sqrt"(%a0) : (tensor<9xf16>) -> tensor<9xf16>
  check.expect_almost_eq_const %r3, dense<[0.0, -0.0, 1.0, 0x7E00, 1.5810546875, 0.5478515625, 0x7C00, 0x7E00, 0x7E00]> : tensor<9xf16> {tolerance = 0.002 : f64}
  %r4 = "stablehlo.tanh"(%a0) : (tensor<9xf16>) -> tensor<9xf16>
  check.expect_almost_eq_const %r4, dense<[0.0, -0.0, 0.76171875, -0.9052734375, 0.98681640625, 0.291259765625, 1.0, -1.0, 0x7E00]> : tensor<9xf16> {tolerance = 0.002 : f64}
  %r5 = "stablehlo.sine"(%a0) : (tensor<9xf16>) -> tensor<9xf16>
  check.expect_almost_eq_const %r5, dense<[0.0, -0.0, 0.84130859375, -0.99755859375, 0.5986328125, 0.295654296875, 0x7E00, 0x7E00, 0x7E00]> : tensor<9xf16> {tolerance = 0.002 : f64}
  %r6 = "stablehlo.logistic"(%a0) : (tensor<9xf16>) -> tensor<9xf16>
  check.expect_almost_eq_const %r6, dense<[0.5, 0.5, 0.73095703125, 0.182373046875, 0.92431640625, 0.57421875, 1.0, 0.0, 0x7E00]> : tensor<9xf16> {tolerance = 0.002 : f64}
  %r7 = "stablehlo.floor"(%a0) : (tensor<9xf16>) -> tensor<9xf16>
  %r8 = "stablehlo.bitcast_convert"(%r7) : (tensor<9xf16>) -> tensor<9xi16>
  check.expect_eq_const %r8, dense<[0, -32768, 15360, -16384, 16384, 0, 31744, -1024, 32256]> : tensor<9xi16>
  func.return
}

// -----

// bf16 exp, log, sqrt, tanh, sine, logistic and floor with its infinities and NaN
func.func @math_bf16() {
  %a0 = stablehlo.constant dense<[0.0, -0.0, 1.0, -1.5, 2.5, 0.30078125, 0x7F80, 0xFF80, 0x7FC0]> : tensor<9xbf16>
  %r1 = "stablehlo.exponential"(%a0) : (tensor<9xbf16>) -> tensor<9xbf16>
  check.expect_almost_eq_const %r1, dense<[1.0, 1.0, 2.71875, 0.22265625, 12.1875, 1.3515625, 0x7F80, 0.0, 0x7FC0]> : tensor<9xbf16> {tolerance = 0.016 : f64}
  %r2 = "stablehlo.log"(%a0) : (tensor<9xbf16>) -> tensor<9xbf16>
  check.expect_almost_eq_const %r2, dense<[0xFF80, 0xFF80, 0.0, 0x7FC0, 0.91796875, -1.203125, 0x7F80, 0x7FC0, 0x7FC0]> : tensor<9xbf16> {tolerance = 0.016 : f64}
  %r3 = "stablehlo.sqrt"(%a0) : (tensor<9xbf16>) -> tensor<9xbf16>
  check.expect_almost_eq_const %r3, dense<[0.0, -0.0, 1.0, 0x7FC0, 1.578125, 0.546875, 0x7F80, 0x7FC0, 0x7FC0]> : tensor<9xbf16> {tolerance = 0.016 : f64}
  %r4 = "stablehlo.tanh"(%a0) : (tensor<9xbf16>) -> tensor<9xbf16>
  check.expect_almost_eq_const %r4, dense<[0.0, -0.0, 0.76171875, -0.90625, 0.98828125, 0.29296875, 1.0, -1.0, 0x7FC0]> : tensor<9xbf16> {tolerance = 0.016 : f64}
  %r5 = "stablehlo.sine"(%a0) : (tensor<9xbf16>) -> tensor<9xbf16>
  check.expect_almost_eq_const %r5, dense<[0.0, -0.0, 0.83984375, -0.99609375, 0.59765625, 0.296875, 0x7FC0, 0x7FC0, 0x7FC0]> : tensor<9xbf16> {tolerance = 0.016 : f64}
  %r6 = "stablehlo.logistic"(%a0) : (tensor<9xbf16>) -> tensor<9xbf16>
  check.expect_almost_eq_const %r6, dense<[0.5, 0.5, 0.73046875, 0.1826171875, 0.92578125, 0.57421875, 1.0, 0.0, 0x7FC0]> : tensor<9xbf16> {tolerance = 0.016 : f64}
  %r7 = "stablehlo.floor"(%a0) : (tensor<9xbf16>) -> tensor<9xbf16>
  %r8 = "stablehlo.bitcast_convert"(%r7) : (tensor<9xbf16>) -> tensor<9xi16>
  check.expect_eq_const %r8, dense<[0, -32768, 16256, -16384, 16384, 0, 32640, -128, 32704]> : tensor<9xi16>
  func.return
}
