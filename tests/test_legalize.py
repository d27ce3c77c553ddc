"""The target rewrites of pipeline/legalize.py, before and after (golden text), and their numbers on IREE
against the reference backend for modules that did not come from hlojit's ops (the conformance cases in
tests/data/stablehlo check the same on constants; these take arguments, so nothing folds at compile time)."""
from __future__ import annotations

import numpy as np
import pytest
from iree.compiler import ir

import hlojit as hj
from hlojit.pipeline import legalize


def rewritten(text: str, rewrite) -> tuple[int, str]:
    with ir.Context() as context:
        context.load_all_available_dialects()
        module = ir.Module.parse(text)
        count = rewrite(module)
        assert module.operation.verify()
        return count, str(module)


BOOL_ADD = """func.func @main(%a: tensor<2xi1>, %b: tensor<2xi1>) -> tensor<2xi1> {
  %0 = stablehlo.add %a, %b : tensor<2xi1>
  return %0 : tensor<2xi1>
}"""


def test_bool_add_becomes_or_golden():
    count, text = rewritten(BOOL_ADD, legalize.bool_arithmetic_as_logic)
    assert count == 1
    assert text == """module {
  func.func @main(%arg0: tensor<2xi1>, %arg1: tensor<2xi1>) -> tensor<2xi1> {
    %0 = stablehlo.or %arg0, %arg1 : tensor<2xi1>
    return %0 : tensor<2xi1>
  }
}
"""


def test_float_adds_are_left_alone():
    count, _ = rewritten(BOOL_ADD.replace("i1", "f32"), legalize.bool_arithmetic_as_logic)
    assert count == 0


@pytest.mark.parametrize("rewrite, text, needles", [
    (legalize.floor_ceil_of_subnormals, "%0 = stablehlo.floor %a : tensor<3xf32>",
     ["stablehlo.bitcast_convert", "stablehlo.floor", "stablehlo.select"]),
    (legalize.power_by_magnitude, "%0 = stablehlo.power %a, %a : tensor<3xf32>",
     ["stablehlo.abs", "stablehlo.power", "stablehlo.select"]),
    (legalize.reduce_precision_by_bits, "%0 = stablehlo.reduce_precision %a, format = e5m2 : tensor<3xf32>",
     ["stablehlo.shift_right_logical", "stablehlo.bitcast_convert"]),
    (legalize.infinities_of_cbrt_and_atan2, "%0 = stablehlo.cbrt %a : tensor<3xf32>",
     ["stablehlo.cbrt", "stablehlo.abs", "stablehlo.select"]),
])
def test_rewrites_golden(rewrite, text, needles):
    module = f"func.func @main(%a: tensor<3xf32>) -> tensor<3xf32> {{\n  {text}\n  return %0 : tensor<3xf32>\n}}"
    count, out = rewritten(module, rewrite)
    assert count == 1 and all(n in out for n in needles), out
    assert "reduce_precision" not in out


GATHER = """func.func @main(%x: tensor<3x4xi32>, %i: tensor<3x1xi32>) -> tensor<3x4xi32> {
  %0 = "stablehlo.gather"(%x, %i) {dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0],
    start_index_map = [0], index_vector_dim = 1>, slice_sizes = array<i64: 1, 4>} : (tensor<3x4xi32>, tensor<3x1xi32>)
    -> tensor<3x4xi32>
  return %0 : tensor<3x4xi32>
}"""

ARGUMENT_CASES = [  # (module text, inputs): run on each IREE target and on the reference backend
    (BOOL_ADD, [np.array([True, True]), np.array([True, False])]),
    (BOOL_ADD.replace("add", "multiply"), [np.array([True, False]), np.array([True, True])]),
    ("""func.func @main(%a: tensor<5xf32>) -> (tensor<5xf32>, tensor<5xf32>) {
  %0 = stablehlo.floor %a : tensor<5xf32>
  %1 = stablehlo.ceil %a : tensor<5xf32>
  return %0, %1 : tensor<5xf32>, tensor<5xf32>
}""", [np.float32([1e-40, -3e-39, 1.5e-45, -2.5, 0.0])]),
    ("""func.func @main(%a: tensor<6xf64>, %b: tensor<6xf64>) -> tensor<6xf64> {
  %0 = stablehlo.power %a, %b : tensor<6xf64>
  return %0 : tensor<6xf64>
}""", [np.float64([-2, -2, -8, 1, np.nan, -0.0]), np.float64([3, 2, 1 / 3, np.inf, 0, -1])]),
    ("""func.func @main(%a: tensor<6xf32>) -> tensor<6xf32> {
  %0 = stablehlo.reduce_precision %a, format = e8m0 : tensor<6xf32>
  return %0 : tensor<6xf32>
}""", [np.float32([1.0, 1.5, 3.0, -5.0, np.nan, np.inf])]),
    ("""func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.atan2 %a, %b : tensor<4xf32>
  return %0 : tensor<4xf32>
}""", [np.float32([np.inf, -np.inf, np.inf, 8]), np.float32([np.inf, np.inf, -np.inf, -1])]),
    ("""func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.cbrt %a : tensor<4xf32>
  return %0 : tensor<4xf32>
}""", [np.float32([np.inf, -np.inf, -8, 27])]),
    (GATHER, [np.arange(12, dtype=np.int32).reshape(3, 4), np.int32([[2], [0], [5]])]),
]


@pytest.mark.parametrize("backend", ["iree:cpu", "iree:vmvx"])
@pytest.mark.parametrize("index", range(len(ARGUMENT_CASES)))
def test_from_mlir_modules_get_the_spec_meaning_on_iree(backend, index):
    text, inputs = ARGUMENT_CASES[index]
    if backend == "iree:vmvx" and "cbrt" in text:
        pytest.skip("IREE 3.13's vmvx cannot lower math.cbrt at all")
    expected = hj.from_mlir(text, backend="reference")(*inputs)
    actual = hj.from_mlir(text, backend=backend)(*inputs)
    expected, actual = (e if isinstance(e, tuple) else (e,) for e in (expected, actual))
    for a, e in zip(actual, expected):
        np.testing.assert_allclose(np.asarray(a), np.asarray(e), rtol=1e-6, atol=0, equal_nan=True)
