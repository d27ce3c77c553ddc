"""Target rewrites of scatters (pipeline/scatter_rewrites.py), complex triangular solves (linalg_rewrites.py),
vmvx's NaN compares (quirks.py), f16 converts (vmvx_rewrites.py) and subnormal arguments (legalize.py), before
and after, and their numbers on IREE against the reference backend for
modules that take arguments (nothing folds at compile time)."""
from __future__ import annotations

import numpy as np
import pytest

import hlojit as hj
from hlojit import ops
from hlojit.pipeline import legalize, linalg_rewrites, scatter_rewrites, vmvx_rewrites

from legalize_runs import bundled_on_target_and_reference, on_target_and_reference
from test_legalize import rewritten, target_rewritten


def _scatter(operand: str, indices: str, updates: str, numbers: str, body: str = "add") -> str:
    return f"""func.func @main(%x: {operand}, %i: {indices}, %u: {updates}) -> {operand} {{
  %0 = "stablehlo.scatter"(%x, %i, %u) ({{
    ^bb0(%a: tensor<i32>, %b: tensor<i32>):
      %s = stablehlo.{body} %a, %b : tensor<i32>
      stablehlo.return %s : tensor<i32>
  }}) {{scatter_dimension_numbers = #stablehlo.scatter<{numbers}>, indices_are_sorted = false,
       unique_indices = false}} : ({operand}, {indices}, {updates}) -> {operand}
  return %0 : {operand}
}}"""


# two scatter dimensions in the indices, the index vector in the middle, operand dims mapped out of order
TWO_SCATTER_DIMS = _scatter("tensor<3x4x2xi32>", "tensor<2x2x3xi32>", "tensor<2x3x2x2xi32>",
                            "update_window_dims = [2, 3], inserted_window_dims = [0], "
                            "scatter_dims_to_operand_dims = [1, 0], index_vector_dim = 1")
# a batching dimension (operand 0 with indices 1), the window over operand dims 2 and 3
BATCHING = _scatter("tensor<2x3x4x2xi32>", "tensor<2x2x3x2xi32>", "tensor<2x2x3x2x2xi32>",
                    "update_window_dims = [3, 4], inserted_window_dims = [1], input_batching_dims = [0], "
                    "scatter_indices_batching_dims = [1], scatter_dims_to_operand_dims = [2, 1], index_vector_dim = 3")
# the implicit index vector (index_vector_dim = rank), a replacing body, one batching dimension
IMPLICIT = _scatter("tensor<2x5xi32>", "tensor<2x3xi32>", "tensor<2x3xi32>",
                    "inserted_window_dims = [1], input_batching_dims = [0], scatter_indices_batching_dims = [0], "
                    "scatter_dims_to_operand_dims = [1], index_vector_dim = 2", body="maximum")
LEFT_TO_IREE = _scatter("tensor<2x5xi32>", "tensor<2x3x1xi32>", "tensor<2x3xi32>",
                        "inserted_window_dims = [1], input_batching_dims = [0], scatter_indices_batching_dims = [0], "
                        "scatter_dims_to_operand_dims = [1], index_vector_dim = 2")
ONE_SCATTER_DIM = _scatter("tensor<5x2xi32>", "tensor<3x1xi32>", "tensor<3x2xi32>",
                           "update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], "
                           "index_vector_dim = 1")
# windows shorter than their operand dimension (IREE: "shape of update value dim#1 must match original value"):
# rows 3 long out of 5; and the gradient of x[i, 1:3], whose starts index the window's dimension too
PARTIAL_WINDOW = _scatter("tensor<4x5xi32>", "tensor<2x1xi32>", "tensor<2x3xi32>",
                          "update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], "
                          "index_vector_dim = 1")
WINDOW_WITH_A_START = _scatter("tensor<4x5xi32>", "tensor<2x2xi32>", "tensor<2x2xi32>",
                               "update_window_dims = [1], inserted_window_dims = [0], "
                               "scatter_dims_to_operand_dims = [0, 1], index_vector_dim = 1")
_RNG = np.random.default_rng(3)


def test_scatters_iree_cannot_lower_become_scatters_of_elements_golden():
    for text in (TWO_SCATTER_DIMS, BATCHING, IMPLICIT, PARTIAL_WINDOW, WINDOW_WITH_A_START):
        count, out = rewritten(text, scatter_rewrites.scatter_by_points)
        assert count == 1, out
        assert "input_batching_dims" not in out and "stablehlo.pad" in out and "stablehlo.iota" in out
        assert "index_vector_dim = 1" in out and "update_window_dims" not in out, out
    count, out = rewritten(ONE_SCATTER_DIM, scatter_rewrites.scatter_by_points)
    assert count == 0 and "stablehlo.pad" not in out     # IREE lowers these itself, windows and all


def _solve(transpose: str, left: str = "true") -> str:
    t = "tensor<2x3x3xcomplex<f32>>"
    return f"""func.func @main(%a: {t}, %b: {t}) -> {t} {{
  %0 = "stablehlo.triangular_solve"(%a, %b) {{left_side = {left}, lower = true, unit_diagonal = false,
    transpose_a = #stablehlo<transpose {transpose}>}} : ({t}, {t}) -> {t}
  return %0 : {t}
}}"""


def test_complex_triangular_solve_becomes_a_while_loop_conjugated_for_adjoint():
    count, out = rewritten(_solve("ADJOINT"), linalg_rewrites.triangular_solve_by_substitution)
    assert count == 1 and "triangular_solve" not in out and "stablehlo.while" in out
    assert "stablehlo.imag" in out and "stablehlo.negate" in out and "stablehlo.complex" in out
    count, out = rewritten(_solve("TRANSPOSE"), linalg_rewrites.triangular_solve_by_substitution)
    assert count == 1 and "stablehlo.negate" not in out    # a plain transpose conjugates nothing


def test_complex_triangular_solve_runs_before_complex_pairs():
    for target in ("cpu", "vmvx"):
        applied = list(target_rewritten(_solve("NO_TRANSPOSE"), target)[0])
        assert applied.index("triangular_solve_by_substitution") < applied.index(
            "complex_as_real_pairs" if target == "vmvx" else "complex_as_real_pairs_native_ends")


def _complex(shape):
    return (_RNG.normal(size=shape) + 1j * _RNG.normal(size=shape)).astype(np.complex64)


_TRIANGLES = _complex((2, 3, 3)) + 3 * np.eye(3, dtype=np.complex64)
SOLVES = [(_solve(t, left), [_TRIANGLES, _complex((2, 3, 3))])
          for t, left in (("NO_TRANSPOSE", "true"), ("ADJOINT", "true"), ("ADJOINT", "false"), ("TRANSPOSE", "false"))]
SCATTERS = [
    (TWO_SCATTER_DIMS, [np.arange(24, dtype=np.int32).reshape(3, 4, 2), np.int32([[[0, 1, 2], [2, 0, 1]],
                                                                                 [[0, 1, 0], [1, 0, 9]]]),
                        _RNG.integers(-5, 5, (2, 3, 2, 2)).astype(np.int32)]),        # (9, 0) lands outside
    (BATCHING, [np.arange(48, dtype=np.int32).reshape(2, 3, 4, 2), np.int32(
        [[[[0, 0], [1, 0], [2, 1]], [[0, 1], [1, 1], [0, 9]]], [[[0, 0], [2, 1], [2, 2]], [[1, 2], [-1, 1], [1, 0]]]]),
        _RNG.integers(-5, 5, (2, 2, 3, 2, 2)).astype(np.int32)]),   # (1, 2) and (2, 2) partly outside, (0, 9), -1
    (IMPLICIT, [np.zeros((2, 5), np.int32), np.int32([[4, 0, 4], [1, 7, 3]]), np.int32([[3, 8, 5], [2, 6, 1]])]),
    (LEFT_TO_IREE, [np.zeros((2, 5), np.int32), np.int32([[[4], [0], [2]], [[1], [3], [2]]]),
                    np.int32([[3, 8, 5], [2, 6, 1]])]),
    (PARTIAL_WINDOW, [np.zeros((4, 5), np.int32), np.int32([[1], [3]]), np.int32([[1, 2, 3], [4, 5, 6]])]),
    (WINDOW_WITH_A_START, [np.ones((4, 5), np.int32), np.int32([[1, 1], [3, 4]]),     # (3, 5) lands outside
                           np.int32([[1, 2], [3, 4]])]),
]
# vmvx gave true for NaN == NaN where IREE merged two equal NaN constants into one value
NAN_CONSTANTS = """func.func @main(%c: tensor<2xf32>) -> (tensor<i1>, tensor<i1>, tensor<i1>, tensor<i1>, tensor<2xi1>) {
  %a = stablehlo.constant dense<0x7FF8000000000000> : tensor<f64>
  %b = stablehlo.constant dense<0x7FF8000000000000> : tensor<f64>
  %x = stablehlo.optimization_barrier %a : tensor<f64>
  %y = stablehlo.optimization_barrier %b : tensor<f64>
  %0 = stablehlo.compare EQ, %x, %y : (tensor<f64>, tensor<f64>) -> tensor<i1>
  %1 = stablehlo.compare NE, %x, %y : (tensor<f64>, tensor<f64>) -> tensor<i1>
  %2 = stablehlo.compare LE, %x, %y : (tensor<f64>, tensor<f64>) -> tensor<i1>
  %3 = stablehlo.compare GE, %x, %y : (tensor<f64>, tensor<f64>) -> tensor<i1>
  %n = stablehlo.constant dense<0x7FC00000> : tensor<2xf32>
  %m = stablehlo.optimization_barrier %n : tensor<2xf32>
  %4 = stablehlo.compare EQ, %m, %c : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xi1>
  return %0, %1, %2, %3, %4 : tensor<i1>, tensor<i1>, tensor<i1>, tensor<i1>, tensor<2xi1>
}"""
# vmvx lowered no f16 <-> f32 convert (the f32 computation of f16 tan made them): every f16 value, then f32 ties,
# values near f16's limits, subnormals and random bit patterns (NaNs among them) to f16
N = 65536
HALF_CONVERTS = f"""func.func @main(%a: tensor<{N}xf16>, %b: tensor<{N}xf32>) -> (tensor<{N}xf32>, tensor<{N}xf16>) {{
  %0 = stablehlo.convert %a : (tensor<{N}xf16>) -> tensor<{N}xf32>
  %1 = stablehlo.convert %b : (tensor<{N}xf32>) -> tensor<{N}xf16>
  return %0, %1 : tensor<{N}xf32>, tensor<{N}xf16>
}}"""
_EVERY_HALF = np.arange(N, dtype=np.uint32).astype(np.uint16).view(np.float16)
_TO_HALF = np.concatenate([_EVERY_HALF.astype(np.float32)[:30000] * np.float32(1 + 2.0 ** -11),
                           np.float32([65504, 65519.99, 65520, 2.0 ** -25, 2.0 ** -25 * 1.0001, 3 * 2.0 ** -26, 1e-40]),
                           _RNG.integers(0, 2 ** 32, N - 30007, dtype=np.uint64).astype(np.uint32).view(np.float32)])
H6 = "tensor<6xf16>"
# vmvx lowered no f16 arithmetic ('arith.extf' f16 -> f32 illegal): each op computes in f32, rounded to f16 once
F16_OPS = f"""func.func @main(%a: {H6}, %b: {H6}, %i: tensor<6xi32>) -> ({H6}, {H6}, {H6}, {H6}, {H6}, tensor<6xi1>,
    tensor<6xi32>, {H6}, {H6}, {H6}, tensor<f16>, {H6}) {{
  %z = stablehlo.constant dense<0.0> : tensor<f16>
  %0 = stablehlo.add %a, %b : {H6}
  %1 = stablehlo.multiply %a, %b : {H6}
  %2 = stablehlo.divide %a, %b : {H6}
  %3 = stablehlo.maximum %a, %b : {H6}
  %4 = stablehlo.sqrt %b : {H6}
  %5 = stablehlo.compare GE, %a, %b : ({H6}, {H6}) -> tensor<6xi1>
  %6 = stablehlo.convert %b : ({H6}) -> tensor<6xi32>
  %7 = stablehlo.convert %i : (tensor<6xi32>) -> {H6}
  %8 = stablehlo.sign %a : {H6}
  %9 = stablehlo.select %5, %a, %b : tensor<6xi1>, {H6}
  %10 = stablehlo.reduce(%a init: %z) applies stablehlo.add across dimensions = [0] : ({H6}, tensor<f16>) -> tensor<f16>
  %11 = stablehlo.tan %a : {H6}
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11 : {H6}, {H6}, {H6}, {H6}, {H6}, tensor<6xi1>, tensor<6xi32>,
    {H6}, {H6}, {H6}, tensor<f16>, {H6}
}}"""
ARGUMENT_CASES = SOLVES + SCATTERS + [(NAN_CONSTANTS, [np.float32([np.nan, 1.0])]),
                                      (HALF_CONVERTS, [_EVERY_HALF, _TO_HALF]),
                                      (F16_OPS, [np.float16([1.5, -2.25, 100.0, 0.1, np.nan, -0.0]),
                                                 np.float16([0.3, 3.0, -7.0, 0.1, 1.0, 6.5e4]),
                                                 np.int32([1, -3, 257, 4097, 0, 7])])]


@pytest.mark.shares_compiles
@pytest.mark.parametrize("backend", ["iree:cpu", "iree:vmvx"])
@pytest.mark.parametrize("index", range(len(ARGUMENT_CASES)))
def test_rewritten_modules_agree_with_the_reference_backend(backend, index):
    for a, e in bundled_on_target_and_reference(ARGUMENT_CASES, index, backend):
        if e.dtype.kind == "c":
            np.testing.assert_allclose(a, e, rtol=1e-5, atol=1e-6)
        elif e.dtype.kind == "f":        # bit for bit, any NaN for a NaN
            bits = f"u{e.itemsize}"
            np.testing.assert_array_equal(np.where(np.isnan(a), 0, a.view(bits)), np.where(np.isnan(e), 0, e.view(bits)))
        else:
            np.testing.assert_array_equal(a, e)


def test_the_reference_backend_solves_complex_systems_as_numpy():
    """The oracle itself, against numpy: a x = b, a^H x = b and x a^H = b."""
    a, b = SOLVES[0][1]
    lower = np.tril(a)
    for k, (text, _) in enumerate(SOLVES[:3]):
        x = np.asarray(hj.from_mlir(text, backend="reference")(a, b))
        m = lower if k == 0 else np.conj(np.swapaxes(lower, 1, 2))
        np.testing.assert_allclose(m @ x if k < 2 else x @ m, b, rtol=1e-4, atol=1e-5)


def test_f16_arithmetic_computes_in_f32_golden():
    count, out = rewritten(F16_OPS, vmvx_rewrites.f16_arithmetic_in_f32)
    assert count == 10 and "stablehlo.add %0, %1 : tensor<6xf32>" in out, out   # the converts: f16_converts_by_bits
    assert "applies stablehlo.add" not in out and "tensor<6xf16>) -> tensor<6xf32>" in out


def test_f16_converts_become_integer_ops_on_vmvx_golden():
    count, out = rewritten(HALF_CONVERTS, vmvx_rewrites.f16_converts_by_bits)
    assert count == 2 and "stablehlo.convert %arg0 : (tensor<65536xf16>)" not in out and "-> tensor<65536xf16>" in out
    assert out.count("stablehlo.bitcast_convert") >= 4 and "stablehlo.shift_right_logical" in out
    assert rewritten(HALF_CONVERTS.replace("f16", "bf16"), vmvx_rewrites.f16_converts_by_bits)[0] == 0


def _tiny_module(dtype: str) -> str:
    t = f"tensor<8x{dtype}>"
    tan = f"chlo.tan %a : {t} -> {t}" if dtype == "f32" else f"stablehlo.tan %a : {t}"  # cpu links no f64 chlo.tan
    return f"""func.func @main(%a: {t}, %b: {t}) -> ({t}, {t}, {t}, {t}, {t}, {t}, {t}) {{
  %0 = stablehlo.remainder %a, %b : {t}
  %1 = stablehlo.exponential_minus_one %a : {t}
  %2 = stablehlo.log_plus_one %a : {t}
  %3 = stablehlo.cbrt %a : {t}
  %4 = {tan}
  %5 = stablehlo.floor %a : {t}
  %6 = stablehlo.ceil %a : {t}
  return %0, %1, %2, %3, %4, %5, %6 : {t}, {t}, {t}, {t}, {t}, {t}, {t}
}}"""


@pytest.mark.parametrize("backend", ["iree:cpu", "iree:vmvx"])
@pytest.mark.parametrize("dtype, tiny", [("f32", 1e-40), ("f64", 5e-324)])
def test_subnormals_and_signed_zeros_of_remainder_expm1_log1p_cbrt_tan_floor_ceil(backend, dtype, tiny):
    """IREE's CPU code flushed subnormal arguments (expm1, log1p, chlo.tan, f64 remainder gave 0, cbrt NaN on
    llvm-cpu), f64 remainder lost the sign of zero results (-4 rem 2 gave +0) and vmvx's ceil(-1e-40) was +0."""
    np_dtype = np.float32 if dtype == "f32" else np.float64
    a = np.array([tiny, -tiny, -0.0, 0.0, -4.0, 2.5, -7.25, 3 * tiny], np_dtype)
    b = np.array([1.0, 1.0, 1.0, 3.0, 2.0, -1.0, 2.0, -2.0], np_dtype)   # a subnormal divisor: NaN on IREE
    outputs = on_target_and_reference(_tiny_module(dtype), [a, b], backend)
    for name, (x, e) in zip(["remainder", "expm1", "log1p", "cbrt", "tan", "floor", "ceil"], outputs):
        np.testing.assert_allclose(x, e, rtol=2e-6, atol=0, err_msg=name)
        np.testing.assert_array_equal(np.signbit(x[e == e]), np.signbit(e[e == e]), err_msg=name)   # NaN's sign open


def test_float_rewrites_wrap_the_op_golden():
    out = rewritten(_tiny_module("f32"), lambda m: sum(r(m) for r in legalize.CPU_FIRST))[1]
    assert out.count("stablehlo.remainder") == 1 and out.count("stablehlo.cbrt") == 2 and "chlo.tan" in out
    assert out.count("stablehlo.select") >= 5 and "stablehlo.bitcast_convert" in out


def test_scatters_of_single_elements_with_the_index_vector_last_are_left_to_iree():
    """hlojit's own vmap of dynamic_update_slice emits these (batching dims, no window): IREE lowers them."""
    assert rewritten(LEFT_TO_IREE, scatter_rewrites.scatter_by_points)[0] == 0    # its numbers: SCATTERS


@pytest.mark.parametrize("backend", ["iree:cpu", "iree:vmvx"])
def test_gradient_of_a_gather_with_a_partial_window_compiles(backend):
    """grad of x[i, 1:3] is a scatter-add of 2-long rows into rows of 5, started at (i, 1): IREE lowered no such
    scatter ("expected indices to be equal to batch rank or batch rank + 1"); scatter_by_points now takes it."""
    x, i = np.arange(20, dtype=np.float32).reshape(4, 5), np.int32([1, 3])
    grad = hj.grad(lambda x, i: ops.sum(x[i, 1:3] ** 2))
    expected = np.zeros_like(x)
    expected[[1, 3], 1:3] = 2 * x[[1, 3], 1:3]
    np.testing.assert_array_equal(np.asarray(hj.jit(grad, backend=backend)(x, i)), expected)


UNSIGNED_GATHER = """func.func @main(%x: tensor<20xf32>, %i: tensor<4x1x{t}>) -> tensor<4xf32> {{
  %0 = "stablehlo.gather"(%x, %i) <{{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [0],
    start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1>}}>
    : (tensor<20xf32>, tensor<4x1x{t}>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}}"""


@pytest.mark.parametrize("backend", ["reference", "iree:cpu", "iree:vmvx"])
@pytest.mark.parametrize("index_type", ["ui8", "ui32", "ui64"])
def test_gathers_by_unsigned_indices_clamp_them(backend, index_type):
    """JAX's searchsorted and histogram gather by ui32 indices: the reference backend raised OverflowError (numpy 2
    refuses int64's maximum as a uint32 bound) before it clamped them."""
    dtype = {"ui8": np.uint8, "ui32": np.uint32, "ui64": np.uint64}[index_type]
    x = np.arange(20, dtype=np.float32) * 1.5
    indices = np.array([[0], [3], [19], [200]], dtype)               # 200 starts past the end: clamped to 19
    actual = hj.from_mlir(UNSIGNED_GATHER.format(t=index_type), backend=backend)(x, indices)
    np.testing.assert_array_equal(np.asarray(actual), x[[0, 3, 19, 19]])
