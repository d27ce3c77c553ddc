"""The target rewrites of pipeline/legalize.py, before and after (golden text), and their numbers on IREE
against the reference backend for modules that did not come from hlojit's ops (the conformance cases in
tests/data/stablehlo check the same on constants; these take arguments, so nothing folds at compile time)."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from iree.compiler import ir

import hlojit as hj
from hlojit.frontend.from_mlir import parse
from hlojit.pipeline import accurate_math, cache, explain, legalize, linalg_rewrites, quirks, targets, vmvx_rewrites

from legalize_runs import bundled_on_target_and_reference


def rewritten(text: str, rewrite) -> tuple[int, str]:
    with ir.Context() as context:
        context.load_all_available_dialects()
        module = ir.Module.parse(text)
        count = rewrite(module)
        assert module.operation.verify()
        return count, str(module)


def target_rewritten(text: str, target: "str | targets.Target") -> tuple[dict, str]:
    """(rewrites applied, module text) after every rewrite quirks.py lists for `target`, verified."""
    return rewritten(text, lambda module: quirks.apply(module, targets.get(target)))


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
    (accurate_math.cbrt_by_exp_log, "%0 = stablehlo.cbrt %a : tensor<3xf32>",
     ["stablehlo.log", "stablehlo.exponential", "stablehlo.select"]),
    # the exact reduction multiplies the mantissa with 2/pi's bits in u64 limbs, in a map's scalar body; sine
    # itself is gone
    (accurate_math.trig_by_exact_reduction, "%0 = stablehlo.sine %a : tensor<3xf32>",
     ["stablehlo.map", "stablehlo.bitcast_convert", "tensor<ui64>", "stablehlo.shift_left", "stablehlo.multiply"]),
    (accurate_math.trig_by_exact_reduction, "%0 = stablehlo.atan2 %a, %a : tensor<3xf32>",
     ["stablehlo.divide", "stablehlo.select", "stablehlo.shift_right_logical"]),
    (accurate_math.trig_below_f64_by_exact_reduction, "%0 = stablehlo.cosine %a : tensor<3xf32>",
     ["stablehlo.map", "tensor<ui64>", "stablehlo.is_finite"]),
])
def test_rewrites_golden(rewrite, text, needles):
    module = f"func.func @main(%a: tensor<3xf32>) -> tensor<3xf32> {{\n  {text}\n  return %0 : tensor<3xf32>\n}}"
    count, out = rewritten(module, rewrite)
    assert count == 1 and all(n in out for n in needles), out
    gone = ("reduce_precision", "sine", "cosine", "tan", "atan2", "cbrt")
    assert not any(f"stablehlo.{op} " in out for op in gone)


def unary_module(op: str, dtype: str) -> str:
    t = f"tensor<3x{dtype}>"
    return f"func.func @main(%a: {t}) -> {t} {{\n  %0 = stablehlo.{op} : {t}\n  return %0 : {t}\n}}"


TRIG_EVERY_WIDTH = """func.func @main(%a: tensor<3xf64>, %b: tensor<3xf32>, %c: tensor<3xf64>) -> (tensor<3xf64>,
    tensor<3xf32>, tensor<3xf64>, tensor<3xf64>) {
  %0 = stablehlo.sine %a : tensor<3xf64>
  %1 = stablehlo.sine %b : tensor<3xf32>
  %2 = stablehlo.power %a, %c : tensor<3xf64>
  %3 = stablehlo.tanh %a : tensor<3xf64>
  return %0, %1, %2, %3 : tensor<3xf64>, tensor<3xf32>, tensor<3xf64>, tensor<3xf64>
}"""


@pytest.mark.parametrize("target, expected", [
    # cuda's f64 sine and tanh call libdevice (__nv_sin, __nv_tanh); its f32 sine and every pow are MLIR's
    ("cuda", [("trig_below_f64_by_exact_reduction", 1), ("power_by_magnitude", 1)]),
    ("cpu", [("trig_by_exact_reduction", 2), ("f64_by_basic_ops", 1), ("power_by_magnitude", 1)]),
    ("vmvx", [("trig_by_exact_reduction", 2), ("f64_by_basic_ops", 1), ("power_by_magnitude", 1)]),
])
def test_each_target_gets_only_the_rewrites_it_needs(target, expected):
    applied, text = target_rewritten(TRIG_EVERY_WIDTH, target)
    assert [(name, n) for name, n in applied.items() if name in dict(expected)] == expected
    if target == "cuda":
        assert "stablehlo.sine %arg0 : tensor<3xf64>" in text and "stablehlo.tanh" in text


def test_explain_lists_the_rewrites_that_ran():
    summary = str(explain.explain(parse(unary_module("sine %a", "f64")), targets.cpu()))
    assert "target rewrites: trig_by_exact_reduction 1" in summary, summary


GATHER = """func.func @main(%x: tensor<3x4xi32>, %i: tensor<3x1xi32>) -> tensor<3x4xi32> {
  %0 = "stablehlo.gather"(%x, %i) {dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0],
    start_index_map = [0], index_vector_dim = 1>, slice_sizes = array<i64: 1, 4>} : (tensor<3x4xi32>, tensor<3x1xi32>)
    -> tensor<3x4xi32>
  return %0 : tensor<3x4xi32>
}"""

TRIG_F64 = """func.func @main(%a: tensor<9xf64>, %b: tensor<9xf64>) -> (tensor<9xf64>, tensor<9xf64>, tensor<9xf64>,
    tensor<9xf64>, tensor<9xf64>, tensor<9xf64>) {
  %0 = stablehlo.sine %a : tensor<9xf64>
  %1 = stablehlo.cosine %a : tensor<9xf64>
  %2 = stablehlo.tan %a : tensor<9xf64>
  %3 = stablehlo.tanh %a : tensor<9xf64>
  %4 = stablehlo.atan2 %a, %b : tensor<9xf64>
  %5 = stablehlo.remainder %a, %b : tensor<9xf64>
  return %0, %1, %2, %3, %4, %5 : tensor<9xf64>, tensor<9xf64>, tensor<9xf64>, tensor<9xf64>, tensor<9xf64>,
    tensor<9xf64>
}"""

def _solve(left: bool, lower: bool, unit: bool, transpose: str, b: str) -> str:
    return (f'"stablehlo.triangular_solve"(%a, %{b}) {{left_side = {str(left).lower()}, lower = {str(lower).lower()}, '
            f'unit_diagonal = {str(unit).lower()}, transpose_a = #stablehlo<transpose {transpose}>}}')


T = "tensor<2x3x3xf64>"
LINALG = f"""func.func @main(%a: {T}, %b: {T}) -> ({T}, {T}, {T}, {T}, {T}, {T}) {{
  %0 = {_solve(True, True, False, "NO_TRANSPOSE", "b")} : ({T}, {T}) -> {T}
  %1 = {_solve(True, False, True, "TRANSPOSE", "b")} : ({T}, {T}) -> {T}
  %2 = {_solve(False, True, False, "ADJOINT", "b")} : ({T}, {T}) -> {T}
  %3 = {_solve(False, False, False, "NO_TRANSPOSE", "b")} : ({T}, {T}) -> {T}
  %4 = stablehlo.cholesky %b, lower = true : {T}
  %5 = stablehlo.cholesky %b, lower = false : {T}
  return %0, %1, %2, %3, %4, %5 : {T}, {T}, {T}, {T}, {T}, {T}
}}"""
_RNG = np.random.default_rng(0)
_SQUARES = _RNG.normal(size=(2, 3, 3)) + 3 * np.eye(3)                  # well conditioned either triangle
_SPD = _SQUARES @ np.swapaxes(_SQUARES, 1, 2)                          # symmetric positive definite


def test_triangular_solve_and_cholesky_become_while_loops():
    count, text = rewritten(LINALG, linalg_rewrites.triangular_solve_by_substitution)
    assert count == 4 and text.count("stablehlo.while") == 4 and "triangular_solve" not in text
    assert "stablehlo.dot_general" in text and "stablehlo.dynamic_update_slice" in text
    count, text = rewritten(LINALG, linalg_rewrites.cholesky_by_columns)
    assert count == 2 and text.count("stablehlo.while") == 2 and "cholesky" not in text


# vmvx computed IEEE's remainder (quotient rounded to nearest): -1.93 rem 2.43 gave 0.5, not fmod's -1.93
REMAINDER_HALF_AND_F32 = """func.func @main(%a: tensor<9xf32>, %b: tensor<9xf32>, %c: tensor<9xf16>, %d: tensor<9xf16>) ->
    (tensor<9xf32>, tensor<9xf16>) {
  %0 = stablehlo.remainder %a, %b : tensor<9xf32>
  %1 = stablehlo.remainder %c, %d : tensor<9xf16>
  return %0, %1 : tensor<9xf32>, tensor<9xf16>
}"""
_DIVIDENDS = [-1.93, 0.61, 5.0, 7.0, -7.0, 1e30, -0.0, 3.5, np.nan]   # ties (5 / 2, 7 / 2), a huge quotient
_DIVISORS = [2.43, 1.11, 2.0, -2.0, 2.0, 3.0, 1.5, np.inf, 1.0]
REMAINDER_INPUTS = [np.float32(_DIVIDENDS), np.float32(_DIVISORS),
                    np.float16(_DIVIDENDS[:5] + [600.0, -0.0, 3.5, np.nan]), np.float16(_DIVISORS)]


def test_float_remainder_is_fmod_on_every_target():
    """numpy's fmod is C's, the spec's remainder; the reference backend agrees, so the IREE cases below
    check the targets against it."""
    got = hj.from_mlir(REMAINDER_HALF_AND_F32, backend="reference")(*REMAINDER_INPUTS)
    for actual, (a, b) in zip(got, [REMAINDER_INPUTS[:2], REMAINDER_INPUTS[2:]]):
        np.testing.assert_array_equal(np.asarray(actual), np.fmod(a, b))
        assert np.array_equal(np.signbit(np.asarray(actual)), np.signbit(np.fmod(a, b)))


def test_float_sign_from_the_bits_golden():
    count, text = rewritten(unary_module("sign %a", "f32"), legalize.float_sign_by_bits)
    assert count == 1
    assert text == """module {
  func.func @main(%arg0: tensor<3xf32>) -> tensor<3xf32> {
    %0 = stablehlo.bitcast_convert %arg0 : (tensor<3xf32>) -> tensor<3xui32>
    %c = stablehlo.constant dense<2147483647> : tensor<ui32>
    %1 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<ui32>) -> tensor<3xui32>
    %2 = stablehlo.and %0, %1 : tensor<3xui32>
    %c_0 = stablehlo.constant dense<2147483648> : tensor<ui32>
    %3 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<ui32>) -> tensor<3xui32>
    %4 = stablehlo.and %0, %3 : tensor<3xui32>
    %c_1 = stablehlo.constant dense<1065353216> : tensor<ui32>
    %5 = stablehlo.broadcast_in_dim %c_1, dims = [] : (tensor<ui32>) -> tensor<3xui32>
    %6 = stablehlo.or %4, %5 : tensor<3xui32>
    %7 = stablehlo.bitcast_convert %6 : (tensor<3xui32>) -> tensor<3xf32>
    %c_2 = stablehlo.constant dense<0> : tensor<ui32>
    %8 = stablehlo.broadcast_in_dim %c_2, dims = [] : (tensor<ui32>) -> tensor<3xui32>
    %9 = stablehlo.compare EQ, %2, %8, UNSIGNED : (tensor<3xui32>, tensor<3xui32>) -> tensor<3xi1>
    %c_3 = stablehlo.constant dense<2139095040> : tensor<ui32>
    %10 = stablehlo.broadcast_in_dim %c_3, dims = [] : (tensor<ui32>) -> tensor<3xui32>
    %11 = stablehlo.compare GT, %2, %10, UNSIGNED : (tensor<3xui32>, tensor<3xui32>) -> tensor<3xi1>
    %12 = stablehlo.or %9, %11 : tensor<3xi1>
    %13 = stablehlo.select %12, %arg0, %7 : tensor<3xi1>, tensor<3xf32>
    return %13 : tensor<3xf32>
  }
}
"""
    assert rewritten(unary_module("sign %a", "i32"), legalize.float_sign_by_bits)[0] == 0


def test_reference_sign_keeps_the_sign_of_zero():
    """The spec's sign(-0.0) is -0.0 (numpy's np.sign gave the reference +0.0, IREE's copysign -0.0)."""
    out = np.asarray(hj.from_mlir(unary_module("sign %a", "f32"), backend="reference")(np.float32([-0.0, 0.0, -2])))
    assert np.signbit(out).tolist() == [True, False, True] and out.tolist() == [0.0, 0.0, -1.0]


def test_narrow_count_leading_zeros_counts_in_i32_golden():
    count, text = rewritten(unary_module("count_leading_zeros %a", "ui8"),
                            vmvx_rewrites.narrow_count_leading_zeros_in_i32)
    assert count == 1
    assert text == """module {
  func.func @main(%arg0: tensor<3xui8>) -> tensor<3xui8> {
    %0 = stablehlo.convert %arg0 : (tensor<3xui8>) -> tensor<3xui32>
    %c = stablehlo.constant dense<255> : tensor<ui32>
    %1 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<ui32>) -> tensor<3xui32>
    %2 = stablehlo.and %0, %1 : tensor<3xui32>
    %3 = stablehlo.convert %2 : (tensor<3xui32>) -> tensor<3xi32>
    %4 = stablehlo.count_leading_zeros %3 : tensor<3xi32>
    %c_0 = stablehlo.constant dense<24> : tensor<i32>
    %5 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i32>) -> tensor<3xi32>
    %6 = stablehlo.subtract %4, %5 : tensor<3xi32>
    %7 = stablehlo.convert %6 : (tensor<3xi32>) -> tensor<3xui8>
    return %7 : tensor<3xui8>
  }
}
"""
    wide = unary_module("count_leading_zeros %a", "i32")
    assert rewritten(wide, vmvx_rewrites.narrow_count_leading_zeros_in_i32)[0] == 0


def test_bf16_add_computes_in_f32_golden():
    count, text = rewritten(unary_module("add %a, %a", "bf16"), vmvx_rewrites.bf16_arithmetic_in_f32)
    assert count == 1
    assert text == """module {
  func.func @main(%arg0: tensor<3xbf16>) -> tensor<3xbf16> {
    %0 = stablehlo.convert %arg0 : (tensor<3xbf16>) -> tensor<3xf32>
    %1 = stablehlo.convert %arg0 : (tensor<3xbf16>) -> tensor<3xf32>
    %2 = stablehlo.add %0, %1 : tensor<3xf32>
    %3 = stablehlo.convert %2 : (tensor<3xf32>) -> tensor<3xbf16>
    return %3 : tensor<3xbf16>
  }
}
"""


def test_vmvx_converts_f16_constants_to_f32_constants():
    """An f16 -> f32 convert of a constant (or of a broadcast of one) becomes the f32 constant (broadcast the same
    way), not bit ops on it: those are a constant expression, which IREE JIT-compiles while compiling (vmvx's f16
    floor_divide took 6 s of compiler CPU, 1 s without). An argument's convert keeps the bit ops."""
    count, text = rewritten("""func.func @main(%a: tensor<2xf16>) -> (tensor<2x3xf32>, tensor<3xf32>, tensor<2xf32>) {
  %c = stablehlo.constant dense<6.0> : tensor<f16>
  %b = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<f16>) -> tensor<2x3xf16>
  %0 = stablehlo.convert %b : (tensor<2x3xf16>) -> tensor<2x3xf32>
  %v = stablehlo.constant dense<[1.5, -0.0, 5.96046448E-8]> : tensor<3xf16>
  %1 = stablehlo.convert %v : (tensor<3xf16>) -> tensor<3xf32>
  %2 = stablehlo.convert %a : (tensor<2xf16>) -> tensor<2xf32>
  return %0, %1, %2 : tensor<2x3xf32>, tensor<3xf32>, tensor<2xf32>
}""", vmvx_rewrites.f16_converts_by_bits)
    assert count == 3
    lines = text.splitlines()
    assert lines[4:7] == [
        "    %cst_0 = stablehlo.constant dense<6.000000e+00> : tensor<f32>",
        "    %1 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<2x3xf32>",
        "    %cst_1 = stablehlo.constant dense<[1.500000e+00, -0.000000e+00, 5.960460e-08]> : tensor<3xf16>"]
    assert lines[7] == ("    %cst_2 = stablehlo.constant dense<[1.500000e+00, -0.000000e+00, 5.96046448E-8]> : "
                        "tensor<3xf32>")
    assert lines[8] == "    %2 = stablehlo.bitcast_convert %arg0 : (tensor<2xf16>) -> tensor<2xui16>"
    assert "bitcast_convert %cst" not in text and "bitcast_convert %0 " not in text


def test_chlo_tan_becomes_stablehlo_tan_golden():
    count, text = rewritten("""func.func @main(%a: tensor<3xf32>) -> tensor<3xf32> {
  %0 = chlo.tan %a : tensor<3xf32> -> tensor<3xf32>
  return %0 : tensor<3xf32>
}""", legalize.chlo_as_stablehlo)
    assert count == 1
    assert text == """module {
  func.func @main(%arg0: tensor<3xf32>) -> tensor<3xf32> {
    %0 = stablehlo.tan %arg0 : tensor<3xf32>
    return %0 : tensor<3xf32>
  }
}
"""


def test_bf16_reduces_become_f32_reduces():
    """Each step rounds to bf16 (the spec's bf16 reduce); the init's convert folds into an f32 constant."""
    count, text = rewritten(BF16_REDUCES, vmvx_rewrites.bf16_arithmetic_in_f32)
    assert count == 6 and text.count("across dimensions = [0] : (tensor<2x3xf32>, tensor<f32>) -> tensor<3xf32>") == 2
    assert text.count("reducer(") == text.count(": (tensor<f32>) -> tensor<bf16>") == 5, text
    assert "tensor<bf16>) -> tensor<3xbf16>" not in text and "(tensor<2x3xbf16>) -> tensor<2x3xf64>" not in text


def test_bf16_rewrite_passes_over_tuples():
    count, _ = rewritten("""func.func @main(%a: tensor<i32>, %b: tensor<bf16>) -> tensor<bf16> {
  %t = stablehlo.tuple %a, %b : tuple<tensor<i32>, tensor<bf16>>
  %0 = stablehlo.get_tuple_element %t[1] : (tuple<tensor<i32>, tensor<bf16>>) -> tensor<bf16>
  return %0 : tensor<bf16>
}""", vmvx_rewrites.bf16_arithmetic_in_f32)
    assert count == 0


VMVX_ONLY = """func.func @main(%a: tensor<3xf32>, %b: tensor<3xi32>, %c: tensor<3xui8>, %d: tensor<3xbf16>) ->
    (tensor<3xf32>, tensor<3xf32>, tensor<3xi32>, tensor<3xui8>, tensor<3xbf16>) {
  %0 = chlo.tan %a : tensor<3xf32> -> tensor<3xf32>
  %1 = stablehlo.sign %a : tensor<3xf32>
  %2 = stablehlo.popcnt %b : tensor<3xi32>
  %3 = stablehlo.count_leading_zeros %c : tensor<3xui8>
  %4 = stablehlo.add %d, %d : tensor<3xbf16>
  return %0, %1, %2, %3, %4 : tensor<3xf32>, tensor<3xf32>, tensor<3xi32>, tensor<3xui8>, tensor<3xbf16>
}"""


@pytest.mark.parametrize("target", ["vmvx", "cpu", "cuda"])
def test_vmvx_rewrites_run_for_vmvx_alone(target):
    applied, text = target_rewritten(VMVX_ONLY, target)
    ours = {"popcnt_by_bits", "narrow_count_leading_zeros_in_i32", "bf16_arithmetic_in_f32"}
    if target == "vmvx":
        assert ours <= set(applied) and "stablehlo.popcnt" not in text, applied
    else:
        assert not ours & set(applied), applied
    # CHLO is expanded first on llvm-cpu too (tests/test_chlo_expansion.py)
    assert ("chlo_as_stablehlo" in applied) == (target != "cuda") and ("chlo.tan" in text) == (target == "cuda")
    # llvm-cpu's copysign flushes subnormals too; cuda's sign is left to IREE
    assert ("float_sign_by_bits" in applied) == (target != "cuda") and ("stablehlo.sign" in text) == (target == "cuda")


def test_every_rewrite_module_is_in_the_cache_key():
    """An edit to a rewrite must make new cache keys: vmvx_rewrites.py's edits once reused stale vmfbs (its source
    was not fingerprinted, nor fft_rewrites.py's or complex_math_pairs.py's)."""
    import sys
    fingerprinted = {m.__name__ for m in cache.fingerprinted_modules()}
    rewrites = {name for name, m in sys.modules.items() if name.startswith("hlojit.pipeline.") and m is not None
                and any(f.__module__ == name for fs in quirks.QUIRKS.values() for f in fs)}
    imported = {f"hlojit.pipeline.{name}" for name in ("complex_math_pairs", "values")}   # what the rewrites build with
    assert rewrites and (rewrites | imported) <= fingerprinted, sorted((rewrites | imported) - fingerprinted)


def test_what_the_fingerprinted_modules_import_from_the_pipeline_is_fingerprinted():
    """A module a rewrite builds its text with is part of what it compiles: svd_kernel.py's rotation_buffer.py
    was not in the key when it first came. Exempt: the modules that carry a program to IREE and back, not its
    text (the flags are in every key by themselves)."""
    import ast
    carriers = {"cache", "compile_worker", "private_files", "program", "targets"}
    fingerprinted = {m.__name__ for m in cache.fingerprinted_modules()}
    missing = set()
    for module in cache.fingerprinted_modules():
        if module.__name__.startswith("hlojit.pipeline."):
            for node in ast.walk(ast.parse(open(module.__file__).read())):
                if isinstance(node, ast.ImportFrom) and node.level == 1:
                    for name in [node.module] if node.module else [alias.name for alias in node.names]:
                        if name.split(".")[0] not in carriers:
                            missing.add(f"hlojit.pipeline.{name.split('.')[0]}")
    assert missing <= fingerprinted, sorted(missing - fingerprinted)


def test_popcnt_becomes_shifts_masks_and_adds():
    count, text = rewritten(unary_module("popcnt %a", "i32"), vmvx_rewrites.popcnt_by_bits)
    assert count == 1 and "popcnt" not in text and "stablehlo.shift_right_logical" in text, text


SIGNED_ZEROS = """func.func @main(%a: tensor<2xf32>, %b: tensor<2xf32>, %i: tensor<2xi32>)
    -> (tensor<2xf32>, tensor<2xf32>, tensor<2xi32>) {
  %0 = stablehlo.maximum %a, %b : tensor<2xf32>
  %1 = stablehlo.round_nearest_even %a : tensor<2xf32>
  %2 = stablehlo.minimum %i, %i : tensor<2xi32>
  return %0, %1, %2 : tensor<2xf32>, tensor<2xf32>, tensor<2xi32>
}"""


def test_vmvx_maximum_of_equal_floats_takes_the_and_of_their_bits():
    """vmvx's maximum(-0.0, +0.0) was -0.0: equal operands give the AND of their bits (+0 if either is); integers
    are left alone. Values on vmvx: tests/data/stablehlo/dtypes.mlir (maximum_minimum_signed_zeros_*)."""
    count, text = rewritten(SIGNED_ZEROS, vmvx_rewrites.signed_zeros_of_maximum_minimum)
    assert count == 1
    assert text.splitlines()[2:-3] == [f"    {line}" for line in [
        "%0 = stablehlo.bitcast_convert %arg0 : (tensor<2xf32>) -> tensor<2xui32>",
        "%1 = stablehlo.bitcast_convert %arg1 : (tensor<2xf32>) -> tensor<2xui32>",
        "%2 = stablehlo.and %0, %1 : tensor<2xui32>",
        "%3 = stablehlo.maximum %arg0, %arg1 : tensor<2xf32>",
        "%4 = stablehlo.compare EQ, %arg0, %arg1, FLOAT : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xi1>",
        "%5 = stablehlo.bitcast_convert %2 : (tensor<2xui32>) -> tensor<2xf32>",
        "%6 = stablehlo.select %4, %5, %3 : tensor<2xi1>, tensor<2xf32>",
        "%7 = stablehlo.round_nearest_even %arg0 : tensor<2xf32>",
        "%8 = stablehlo.minimum %arg2, %arg2 : tensor<2xi32>"]], text


def test_vmvx_round_nearest_even_takes_its_operands_sign_bit():
    """vmvx's round_nearest_even(-0.5) was +0.0: the rounded bits without their sign, or x's sign bit."""
    count, text = rewritten(SIGNED_ZEROS, vmvx_rewrites.signed_round_nearest_even)
    assert count == 1
    assert "%4 = stablehlo.and %2, %3 : tensor<2xui32>" in text and "%7 = stablehlo.and %5, %6 : tensor<2xui32>" in text
    assert "%8 = stablehlo.or %4, %7 : tensor<2xui32>" in text and "return %0, %9, %10" in text, text


T6 = "tensor<6xf32>"
CHLO_F32 = f"""func.func @main(%a: {T6}, %q: {T6}) -> ({T6}, {T6}, {T6}, {T6}) {{
  %0 = chlo.tan %a : {T6} -> {T6}
  %1 = chlo.bessel_i1e %a : {T6} -> {T6}
  %2 = chlo.zeta %q, %q : {T6}, {T6} -> {T6}
  %n = stablehlo.floor %q : {T6}
  %3 = chlo.polygamma %n, %q : {T6}, {T6} -> {T6}
  return %0, %1, %2, %3 : {T6}, {T6}, {T6}, {T6}
}}"""
BITS = """func.func @main(%a: tensor<5xi8>, %b: tensor<5xi16>, %c: tensor<5xi32>, %d: tensor<5xi64>, %e: tensor<5xui8>,
    %f: tensor<5xui16>) -> (tensor<5xi8>, tensor<5xi16>, tensor<5xi32>, tensor<5xi64>, tensor<5xui8>, tensor<5xi8>,
    tensor<5xi16>, tensor<5xui8>, tensor<5xui16>) {
  %0 = stablehlo.popcnt %a : tensor<5xi8>
  %1 = stablehlo.popcnt %b : tensor<5xi16>
  %2 = stablehlo.popcnt %c : tensor<5xi32>
  %3 = stablehlo.popcnt %d : tensor<5xi64>
  %4 = stablehlo.popcnt %e : tensor<5xui8>
  %5 = stablehlo.count_leading_zeros %a : tensor<5xi8>
  %6 = stablehlo.count_leading_zeros %b : tensor<5xi16>
  %7 = stablehlo.count_leading_zeros %e : tensor<5xui8>
  %8 = stablehlo.count_leading_zeros %f : tensor<5xui16>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8 : tensor<5xi8>, tensor<5xi16>, tensor<5xi32>, tensor<5xi64>,
    tensor<5xui8>, tensor<5xi8>, tensor<5xi16>, tensor<5xui8>, tensor<5xui16>
}"""
_BIT_PATTERNS = [0, 1, -1, 0x55, -128]          # every width's 0, 1, all ones, alternating bits and sign bit alone
B6 = "tensor<6xbf16>"
BF16_OPS = f"""func.func @main(%a: {B6}, %b: {B6}, %i: tensor<6xi32>) -> ({B6}, {B6}, {B6}, {B6}, {B6}, {B6},
    tensor<6xi1>, tensor<6xi32>, {B6}, {B6}, {B6}) {{
  %0 = stablehlo.add %a, %b : {B6}
  %1 = stablehlo.multiply %a, %b : {B6}
  %2 = stablehlo.divide %a, %b : {B6}
  %3 = stablehlo.maximum %a, %b : {B6}
  %4 = stablehlo.sqrt %b : {B6}
  %5 = stablehlo.exponential %a : {B6}
  %6 = stablehlo.compare GE, %a, %b : ({B6}, {B6}) -> tensor<6xi1>
  %7 = stablehlo.convert %b : ({B6}) -> tensor<6xi32>
  %8 = stablehlo.convert %i : (tensor<6xi32>) -> {B6}
  %9 = stablehlo.sign %a : {B6}
  %10 = stablehlo.select %6, %a, %b : tensor<6xi1>, {B6}
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10 : {B6}, {B6}, {B6}, {B6}, {B6}, {B6}, tensor<6xi1>, tensor<6xi32>,
    {B6}, {B6}, {B6}
}}"""
_BF16 = ml_dtypes.bfloat16
B23 = "tensor<2x3xbf16>"
BF16_REDUCES = f"""func.func @main(%a: {B23}, %b: tensor<1x3xbf16>, %c: {B23}) -> (tensor<3xbf16>, tensor<2xbf16>,
    tensor<1xbf16>, tensor<2x3xf64>, tensor<2xbf16>, tensor<3xbf16>) {{
  %ninf = stablehlo.constant dense<0xFF80> : tensor<bf16>
  %inf = stablehlo.constant dense<0x7F80> : tensor<bf16>
  %zero = stablehlo.constant dense<0.0> : tensor<bf16>
  %one = stablehlo.constant dense<1.0> : tensor<bf16>
  %0 = stablehlo.reduce(%a init: %ninf) applies stablehlo.maximum across dimensions = [0] : ({B23}, tensor<bf16>)
    -> tensor<3xbf16>
  %1 = stablehlo.reduce(%a init: %inf) applies stablehlo.minimum across dimensions = [1] : ({B23}, tensor<bf16>)
    -> tensor<2xbf16>
  %2 = stablehlo.reduce(%b init: %inf) applies stablehlo.minimum across dimensions = [1] : (tensor<1x3xbf16>,
    tensor<bf16>) -> tensor<1xbf16>
  %3 = stablehlo.convert %a : ({B23}) -> tensor<2x3xf64>
  %4 = stablehlo.reduce(%c init: %zero) applies stablehlo.add across dimensions = [1] : ({B23}, tensor<bf16>)
    -> tensor<2xbf16>
  %5 = stablehlo.reduce(%c init: %one) applies stablehlo.multiply across dimensions = [0] : ({B23}, tensor<bf16>)
    -> tensor<3xbf16>
  return %0, %1, %2, %3, %4, %5 : tensor<3xbf16>, tensor<2xbf16>, tensor<1xbf16>, tensor<2x3xf64>, tensor<2xbf16>,
    tensor<3xbf16>
}}"""
SIGNS = """func.func @main(%a: tensor<8xf32>, %b: tensor<8xf64>) -> (tensor<8xf32>, tensor<8xf64>) {
  %0 = stablehlo.sign %a : tensor<8xf32>
  %1 = stablehlo.sign %b : tensor<8xf64>
  return %0, %1 : tensor<8xf32>, tensor<8xf64>
}"""

ARGUMENT_CASES = [  # (module text, inputs): run on each IREE target and on the reference backend
    (LINALG, [_SQUARES, _SPD]),
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
    ("""func.func @main(%a: tensor<6xf32>, %b: tensor<6xf64>) -> (tensor<6xf32>, tensor<6xf64>, tensor<6xf64>,
    tensor<6xf64>) {
  %0 = stablehlo.cbrt %a : tensor<6xf32>
  %1 = stablehlo.cbrt %b : tensor<6xf64>
  %2 = stablehlo.exponential_minus_one %b : tensor<6xf64>
  %3 = stablehlo.log_plus_one %b : tensor<6xf64>
  return %0, %1, %2, %3 : tensor<6xf32>, tensor<6xf64>, tensor<6xf64>, tensor<6xf64>
}""", [np.float32([np.inf, -np.inf, -8, 27, 1e-30, -0.0]), np.float64([1e-20, -3e-5, 0.3, 27, 1e-300, -0.0])]),
    (GATHER, [np.arange(12, dtype=np.int32).reshape(3, 4), np.int32([[2], [0], [5]])]),
    ("""func.func @main(%a: tensor<6xf64>, %b: tensor<6xf64>) -> (tensor<6xf64>, tensor<6xf64>) {
  %0 = stablehlo.power %a, %b : tensor<6xf64>
  %1 = stablehlo.power %b, %a : tensor<6xf64>
  return %0, %1 : tensor<6xf64>, tensor<6xf64>
}""", [np.float64([-np.inf, -1, -0.0, -2.5, 0.5, -1]), np.float64([0.5, np.inf, 0.5, -3, -np.inf, -np.inf])]),
    (TRIG_F64, [np.float64([0.3, -1e22, 7.5e15, 12345.678, np.pi / 2, -0.0, np.inf, np.nan, -3e-300]),
       np.float64([-2.0, 3.0, -np.inf, 0.5, -0.0, 2.0, np.inf, 1.0, 7.0])]),
    (TRIG_F64.replace("f64", "f32"), [
        np.float32([0.3, -1e22, 7.5e15, 12345.678, np.pi / 2, -0.0, np.inf, np.nan, -3e-30]),
        np.float32([-2.0, 3.0, -np.inf, 0.5, -0.0, 2.0, np.inf, 1.0, 7.0])]),
    ("""func.func @main(%a: tensor<9xf32>, %b: tensor<9xf32>) -> tensor<9xf32> {
  %0 = stablehlo.remainder %a, %b : tensor<9xf32>
  return %0 : tensor<9xf32>
}""", REMAINDER_INPUTS[:2]),   # f32 only: vmvx compiles no f16 arithmetic (docs/support_matrix.md)
    # vmvx could not lower the copysign of sign and of bessel_i1e's expansion, tan (math.tan), popcnt (math.ctpop),
    # bf16 arithmetic; it counted the leading zeros of narrow ints in 32 bits
    (CHLO_F32, [np.float32([-40.0, -2.5, -0.0, 0.5, 3.0, 35.0]), np.float32([2.0, 3.0, 4.5, 1.5, 2.25, 5.0])]),
    # llvm-cpu's copysign flushed subnormals: sign(1e-40) in f32 and sign(-5e-324) in f64 gave 0
    (SIGNS, [np.float32([-2.5, -0.0, 0.0, 1e-40, 3.0, np.inf, -np.inf, np.nan]),
             np.float64([-2.5, -0.0, 0.0, -5e-324, 3.0, np.inf, -np.inf, np.nan])]),
    (BITS, [np.array(_BIT_PATTERNS, t) for t in (np.int8, np.int16, np.int32, np.int64)] +
     [np.array(_BIT_PATTERNS, np.int8).view(np.uint8), np.array([0, 1, 0xFFFF, 0x5555, 0x8000], np.uint16)]),
    (BF16_REDUCES, [np.array([[1.5, -2.25, 100.0], [0.1, np.nan, -0.0]], _BF16), np.array([[-1.0, 3.0, -0.0]], _BF16),
                    np.array([[1, 2, 4], [0.5, -3, 0.25]], _BF16)]),     # sums and products exact in any order
    (BF16_OPS, [np.array([1.5, -2.25, 100.0, 0.1, np.nan, -0.0], _BF16),
                np.array([0.3, 3.0, -7.0, 0.1, 1.0, 6.5e4], _BF16), np.int32([1, -3, 257, 16777217, 0, 7])]),
]


@pytest.mark.shares_compiles
@pytest.mark.parametrize("backend", ["iree:cpu", "iree:vmvx"])
@pytest.mark.parametrize("index", range(len(ARGUMENT_CASES)))
def test_from_mlir_modules_get_the_spec_meaning_on_iree(backend, index):
    text, _ = ARGUMENT_CASES[index]
    for a, e in bundled_on_target_and_reference(ARGUMENT_CASES, index, backend):
        if e.dtype == _BF16:
            a, e = a.astype(np.float32), e.astype(np.float32)
        tolerance = 1e-6 if e.dtype != np.float64 else 1e-12 if "cholesky" in text else 4e-15   # solves reorder sums
        if text == CHLO_F32:   # CHLO's f32 expansions (polygamma: 1.1e-6); llvm-cpu's chlo.tan: math.tan (2.5e-6)
            tolerance = 1e-5
        np.testing.assert_allclose(a, e, rtol=tolerance, atol=0, equal_nan=True)
        if text in (SIGNS, BF16_OPS, BF16_REDUCES):   # and the zeros' signs (floor, cbrt, f64 fmod, cpu's chlo.tan
            # lose some on IREE)
            np.testing.assert_array_equal(np.signbit(a[e == 0]), np.signbit(e[e == 0]))


class _RecordImports:
    """A meta-path finder that only records the modules Python searches for (and finds none)."""

    def __init__(self):
        self.names = []

    def find_spec(self, name, path=None, target=None):
        self.names.append(name)
        return None


def test_a_walk_over_stablehlo_ops_imports_nothing():
    """The MLIR bindings import `<prefix>.stablehlo` for each op they hand out until one import succeeds;
    without hlojit.dialects.opviews every op of every rewrite's walk searched sys.path again (30 s for one
    600-op module)."""
    import sys
    ops = "\n".join(f"  %{i + 1} = stablehlo.add %{i}, %{i} : tensor<2xf32>" for i in range(50))
    text = f"func.func @main(%0: tensor<2xf32>) -> tensor<2xf32> {{\n{ops}\n  return %50 : tensor<2xf32>\n}}"
    with ir.Context() as context:
        context.load_all_available_dialects()
        module = ir.Module.parse(text)
        list(legalize.walk(module.operation))          # the first walk may import the (empty) module once
        finder = _RecordImports()
        sys.meta_path.insert(0, finder)
        try:
            walked = [op.name for op in legalize.walk(module.operation)]
        finally:
            sys.meta_path.remove(finder)
    assert walked.count("stablehlo.add") == 50
    assert finder.names == []

