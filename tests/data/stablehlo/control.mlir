// Conformance cases written for hlojit (hlojit/conformance.py reads them): control.
// Expected values are numpy's evaluation of the StableHLO spec's definition of each op.

func.func @if() {
  %a0 = stablehlo.constant dense<true> : tensor<i1>
  %a1 = stablehlo.constant dense<2.0> : tensor<f32>
  %r0 = "stablehlo.if"(%a0) ({
    %d = stablehlo.add %a1, %a1 : tensor<f32>
    stablehlo.return %d : tensor<f32>
  }, {
    stablehlo.return %a1 : tensor<f32>
  }) : (tensor<i1>) -> tensor<f32>
  check.expect_eq_const %r0, dense<4.0> : tensor<f32>
  func.return
}

// -----

func.func @case_out_of_range_runs_last() {
  %a0 = stablehlo.constant dense<7> : tensor<i32>
  %r0 = "stablehlo.case"(%a0) ({
    %c = stablehlo.constant dense<10> : tensor<i32>
    stablehlo.return %c : tensor<i32>
  }, {
    %c = stablehlo.constant dense<20> : tensor<i32>
    stablehlo.return %c : tensor<i32>
  }) : (tensor<i32>) -> tensor<i32>
  check.expect_eq_const %r0, dense<20> : tensor<i32>
  func.return
}

// -----

func.func @while_sum() {
  %a0 = stablehlo.constant dense<0> : tensor<i32>
  %a1 = stablehlo.constant dense<0> : tensor<i32>
  %r0, %r1 = stablehlo.while(%i = %a0, %s = %a1) : tensor<i32>, tensor<i32>
    cond {
      %n = stablehlo.constant dense<5> : tensor<i32>
      %c = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %c : tensor<i1>
    } do {
      %one = stablehlo.constant dense<1> : tensor<i32>
      %j = stablehlo.add %i, %one : tensor<i32>
      %t = stablehlo.add %s, %i : tensor<i32>
      stablehlo.return %j, %t : tensor<i32>, tensor<i32>
    }
  check.expect_eq_const %r0, dense<5> : tensor<i32>
  check.expect_eq_const %r1, dense<10> : tensor<i32>
  func.return
}

// -----

func.func @map() {
  %a0 = stablehlo.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %a1 = stablehlo.constant dense<[4.0, 5.0, 6.0]> : tensor<3xf32>
  %r0 = "stablehlo.map"(%a0, %a1) ({
  ^bb0(%p: tensor<f32>, %q: tensor<f32>):
    %m = stablehlo.multiply %p, %q : tensor<f32>
    stablehlo.return %m : tensor<f32>
  }) {dimensions = array<i64: 0>} : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  check.expect_eq_const %r0, dense<[4.0, 10.0, 18.0]> : tensor<3xf32>
  func.return
}

// -----

func.func @optimization_barrier() {
  %a0 = stablehlo.constant dense<[1, 2]> : tensor<2xi32>
  %r0 = stablehlo.optimization_barrier %a0 : tensor<2xi32>
  check.expect_eq_const %r0, dense<[1, 2]> : tensor<2xi32>
  func.return
}

// -----

func.func @tuple() {
  %a0 = stablehlo.constant dense<1> : tensor<i32>
  %a1 = stablehlo.constant dense<2.5> : tensor<f32>
  %t = stablehlo.tuple %a0, %a1 : tuple<tensor<i32>, tensor<f32>>
  %r0 = stablehlo.get_tuple_element %t[1] : (tuple<tensor<i32>, tensor<f32>>) -> tensor<f32>
  check.expect_eq_const %r0, dense<2.5> : tensor<f32>
  func.return
}

// -----

func.func @cholesky() {
  %a0 = stablehlo.constant dense<[[4.0, 2.0, 0.4], [2.0, 5.0, 1.0], [0.4, 1.0, 3.0]]> : tensor<3x3xf64>
  %r0 = stablehlo.cholesky %a0, lower = true : tensor<3x3xf64>
  check.expect_almost_eq_const %r0, dense<[[2.0, 0.0, 0.0], [1.0, 2.0, 0.0], [0.2, 0.4, 1.6733200530681511]]> : tensor<3x3xf64>
  func.return
}

// -----

func.func @triangular_solve_left_lower() {
  %a0 = stablehlo.constant dense<[[2.0, 0.0, 0.0], [1.0, 2.0, 0.0], [0.2, 0.4, 1.6733200530681511]]> : tensor<3x3xf64>
  %a1 = stablehlo.constant dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]> : tensor<3x2xf64>
  %r0 = "stablehlo.triangular_solve"(%a0, %a1) {left_side = true, lower = true, unit_diagonal = false, transpose_a = #stablehlo<transpose NO_TRANSPOSE>} : (tensor<3x3xf64>, tensor<3x2xf64>) -> tensor<3x2xf64>
  check.expect_almost_eq_const %r0, dense<[[0.5, 1.0], [1.25, 1.5], [2.6295029405356662, 3.1075943842694236]]> : tensor<3x2xf64>
  func.return
}

// -----

func.func @triangular_solve_right_upper_transposed() {
  %a0 = stablehlo.constant dense<[[2.0, 1.0, 0.2], [0.0, 2.0, 0.4], [0.0, 0.0, 1.6733200530681511]]> : tensor<3x3xf64>
  %a1 = stablehlo.constant dense<[[1.0, 3.0, 5.0], [2.0, 4.0, 6.0]]> : tensor<2x3xf64>
  %r0 = "stablehlo.triangular_solve"(%a0, %a1) {left_side = false, lower = false, unit_diagonal = false, transpose_a = #stablehlo<transpose TRANSPOSE>} : (tensor<3x3xf64>, tensor<2x3xf64>) -> tensor<2x3xf64>
  check.expect_almost_eq_const %r0, dense<[[-0.25, 0.9023856953328032, 2.988071523335984], [0.0, 1.2828628343993638, 3.5856858280031805]]> : tensor<2x3xf64>
  func.return
}
