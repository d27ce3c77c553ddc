"""compile_rewrites.reverses_before_strided_slices: llvm-cpu cannot compile a reverse of a slice strided along the
last dimension ("LLVM Translation failed for operation: builtin.unrealized_conversion_cast"); the reverse moves before
the slice, a chain of slices counting as the one slice it composes to."""
import numpy as np
import pytest

from hlojit.pipeline import compile_rewrites

from legalize_runs import on_target_and_reference
from test_legalize import rewritten


# JAX's x[:, 1::2][::-1, ::-1]: a slice strided along the last dimension, then a reverse
STRIDED_THEN_REVERSED = """func.func @main(%x: tensor<3x7xf32>) -> tensor<{out}xf32> {{
  %0 = stablehlo.slice %x [{slice}] : (tensor<3x7xf32>) -> tensor<{out}xf32>
  %1 = stablehlo.reverse %0, dims = [{dims}] : tensor<{out}xf32>
  return %1 : tensor<{out}xf32>
}}"""


def test_strided_slice_then_reverse_becomes_reverse_then_slice_golden():
    count, text = rewritten(STRIDED_THEN_REVERSED.format(slice="0:3, 1:7:2", dims="0, 1", out="3x3"),
                            compile_rewrites.reverses_before_strided_slices)
    assert count == 1
    assert text == """module {
  func.func @main(%arg0: tensor<3x7xf32>) -> tensor<3x3xf32> {
    %0 = stablehlo.reverse %arg0, dims = [0, 1] : tensor<3x7xf32>
    %1 = stablehlo.slice %0 [0:3, 1:6:2] : (tensor<3x7xf32>) -> tensor<3x3xf32>
    return %1 : tensor<3x3xf32>
  }
}
"""
    unit = STRIDED_THEN_REVERSED.format(slice="0:3:2, 1:4", dims="1", out="2x3")   # compiles as it is
    assert rewritten(unit, compile_rewrites.reverses_before_strided_slices)[0] == 0


# a diagonal as JAX's and hlojit's tridiagonal reduction takes it (a stride of n + 1 over the flattened matrix), cut
# to its first 4 elements, then reversed (LAPACK's upper form): the composed slice is the strided one
DIAGONAL_CUT_REVERSED = """func.func @main(%x: tensor<6x6xf32>) -> tensor<4xf32> {
  %0 = stablehlo.reshape %x : (tensor<6x6xf32>) -> tensor<36xf32>
  %1 = stablehlo.slice %0 [0:36:7] : (tensor<36xf32>) -> tensor<6xf32>
  %2 = stablehlo.slice %1 [1:5] : (tensor<6xf32>) -> tensor<4xf32>
  %3 = stablehlo.reverse %2, dims = [0] : tensor<4xf32>
  return %3 : tensor<4xf32>
}"""


def test_a_chain_of_slices_reversed_is_one_slice_of_the_reverse_golden():
    count, text = rewritten(DIAGONAL_CUT_REVERSED, compile_rewrites.reverses_before_strided_slices)
    assert count == 1
    assert "%1 = stablehlo.reverse %0, dims = [0] : tensor<36xf32>" in text, text
    assert "%2 = stablehlo.slice %1 [7:29:7] : (tensor<36xf32>) -> tensor<4xf32>" in text, text
    assert text.count("stablehlo.slice") == 1, text


@pytest.mark.parametrize("backend", ["iree:cpu", "iree:vmvx"])
def test_a_chain_of_slices_reversed_compiles_and_matches_the_reference(backend):
    """llvm-cpu failed on it (the unit slice hid the strided one from the rewrite): JAX's lax.linalg.tridiagonal
    with lower=False did not compile for iree:cpu."""
    x = np.arange(36, dtype=np.float32).reshape(6, 6)
    (actual, expected), = on_target_and_reference(DIAGONAL_CUT_REVERSED, [x], backend)
    np.testing.assert_array_equal(actual, expected)
    np.testing.assert_array_equal(actual, np.diagonal(x)[1:5][::-1])


@pytest.mark.parametrize("backend", ["iree:cpu", "iree:vmvx"])
@pytest.mark.parametrize("spec", [("0:3, 1:7:2", "0, 1", "3x3"), ("0:3, 0:7:3", "1", "3x3"),
                                  ("1:3, 2:6:3", "0", "2x2"), ("0:3:2, 6:7:4", "0, 1", "2x1")])
def test_strided_slices_reversed_compile_and_match_the_reference(backend, spec):
    """llvm-cpu failed on each ("LLVM Translation failed for operation: builtin.unrealized_conversion_cast")."""
    text = STRIDED_THEN_REVERSED.format(slice=spec[0], dims=spec[1], out=spec[2])
    x = np.arange(21, dtype=np.float32).reshape(3, 7)
    (actual, expected), = on_target_and_reference(text, [x], backend)
    np.testing.assert_array_equal(actual, expected)
