"""vmap of `from_mlir` modules holding spec ops that hlojit's own ops never emit: CHLO's elementwise ops (the
elementwise rule), reduce_precision, and ops batched lane by lane (triangular_solve, batch_norm_inference),
against a Python loop over the examples on the reference backend."""
import numpy as np
import pytest

import hlojit as hj

MODULES = {
    "chlo_erf_and_reduce_precision": ("""
func.func @main(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %0 = chlo.erf %x : tensor<3xf32> -> tensor<3xf32>
  %1 = stablehlo.reduce_precision %x, format = e5m2 : tensor<3xf32>
  return %0, %1 : tensor<3xf32>, tensor<3xf32>
}""", [np.float32([[0.1, -1.5, 3.0], [2.0, 0.25, -0.5], [1e-3, 7.0, -7.0], [0.0, 1.0, -1.0]])]),
    "triangular_solve": ("""
func.func @main(%a: tensor<2x2xf64>, %b: tensor<2x1xf64>) -> tensor<2x1xf64> {
  %0 = "stablehlo.triangular_solve"(%a, %b) {left_side = true, lower = true, unit_diagonal = false,
       transpose_a = #stablehlo<transpose NO_TRANSPOSE>} : (tensor<2x2xf64>, tensor<2x1xf64>) -> tensor<2x1xf64>
  return %0 : tensor<2x1xf64>
}""", [np.float64([[[2, 0], [1, 4]], [[1, 0], [3, 1]], [[5, 0], [-1, 2]]]), np.float64([[[2], [5]], [[1], [1]],
                                                                                         [[10], [0]]])]),
}


@pytest.mark.parametrize("name", list(MODULES))
def test_vmap_of_spec_ops_matches_a_loop(name):
    text, inputs = MODULES[name]
    module = hj.from_mlir(text, backend="reference")
    batched = hj.jit(hj.vmap(module), backend="reference")(*inputs)
    batched = batched if isinstance(batched, tuple) else (batched,)
    looped = [module(*(x[i] for x in inputs)) for i in range(inputs[0].shape[0])]
    looped = [r if isinstance(r, tuple) else (r,) for r in looped]
    for k, out in enumerate(batched):
        np.testing.assert_allclose(np.asarray(out), np.stack([np.asarray(r[k]) for r in looped]), rtol=1e-6)
