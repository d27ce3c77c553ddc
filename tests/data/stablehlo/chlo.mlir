// Conformance cases written for hlojit (hlojit/conformance.py reads them): chlo.
// Expected values are numpy's evaluation of the StableHLO spec's definition of each op.

func.func @chlo_erf_lgamma() {
  %a0 = stablehlo.constant dense<[-1.5, -0.25, 0.0, 0.5, 2.0]> : tensor<5xf32>
  %r0 = chlo.erf %a0 : tensor<5xf32> -> tensor<5xf32>
  %r1 = chlo.lgamma %a0 : tensor<5xf32> -> tensor<5xf32>
  check.expect_almost_eq_const %r0, dense<[-0.966105163, -0.276326388, 0.0, 0.520499885, 0.995322287]> : tensor<5xf32>
  check.expect_almost_eq_const %r1, dense<[0.860047042, 1.58957529, 0x7F800000, 0.572364926, 0.0]> : tensor<5xf32>
  func.return
}

// -----

func.func @chlo_trig() {
  %a0 = stablehlo.constant dense<[-1.5, -0.25, 0.0, 0.5, 2.0]> : tensor<5xf32>
  %r0 = chlo.tan %a0 : tensor<5xf32> -> tensor<5xf32>
  %r1 = chlo.sinh %a0 : tensor<5xf32> -> tensor<5xf32>
  %r2 = chlo.atan %a0 : tensor<5xf32> -> tensor<5xf32>
  check.expect_almost_eq_const %r0, dense<[-14.1014204, -0.255341917, 0.0, 0.546302497, -2.18504]> : tensor<5xf32>
  check.expect_almost_eq_const %r1, dense<[-2.12927938, -0.252612323, 0.0, 0.521095276, 3.62686038]> : tensor<5xf32>
  check.expect_almost_eq_const %r2, dense<[-0.982793748, -0.244978666, 0.0, 0.463647604, 1.10714877]> : tensor<5xf32>
  func.return
}

// -----

func.func @chlo_broadcast_add() {
  %a0 = stablehlo.constant dense<[[1.0, 2.0, 3.0]]> : tensor<1x3xf32>
  %a1 = stablehlo.constant dense<[[10.0], [20.0]]> : tensor<2x1xf32>
  %r0 = chlo.broadcast_add %a0, %a1 : (tensor<1x3xf32>, tensor<2x1xf32>) -> tensor<2x3xf32>
  check.expect_eq_const %r0, dense<[[11.0, 12.0, 13.0], [21.0, 22.0, 23.0]]> : tensor<2x3xf32>
  func.return
}

// -----

func.func @chlo_top_k() {
  %a0 = stablehlo.constant dense<[[1.0, 9.0, 3.0, 7.0], [4.0, 4.0, 2.0, 8.0]]> : tensor<2x4xf32>
  %r0, %r1 = chlo.top_k(%a0, k = 2) : tensor<2x4xf32> -> (tensor<2x2xf32>, tensor<2x2xi32>)
  check.expect_eq_const %r0, dense<[[9.0, 7.0], [8.0, 4.0]]> : tensor<2x2xf32>
  check.expect_eq_const %r1, dense<[[1, 3], [3, 0]]> : tensor<2x2xi32>
  func.return
}

// -----

func.func @chlo_next_after() {
  %a0 = stablehlo.constant dense<[1.0, 0.0]> : tensor<2xf32>
  %a1 = stablehlo.constant dense<[2.0, -1.0]> : tensor<2xf32>
  %r0 = chlo.next_after %a0, %a1 : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
  check.expect_eq_const %r0, dense<[1.00000012, -1.40129846e-45]> : tensor<2xf32>
  func.return
}
