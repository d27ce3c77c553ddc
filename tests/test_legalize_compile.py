"""The target rewrites of pipeline/compile_rewrites.py (patterns IREE 3.13 fails to compile or dies on, once
avoided by the frontend itself), before and after (golden text), which targets
get each, and their numbers on IREE against the reference backend for `from_mlir` modules and traced programs."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import hlojit as hj
from hlojit import ops
from hlojit.frontend.from_mlir import parse
from hlojit.pipeline import compile_program, compile_rewrites, cuda, targets

from legalize_runs import on_target_and_reference
from test_bfloat16_rounding import bf16_rounded_once
from test_legalize import rewritten, target_rewritten

EMPTY_DOT = """func.func @main(%a: tensor<3x0xf32>, %b: tensor<0x4xf32>) -> tensor<3x4xf32> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0]
      : (tensor<3x0xf32>, tensor<0x4xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}"""


def test_empty_contraction_becomes_zeros_golden():
    count, text = rewritten(EMPTY_DOT, compile_rewrites.empty_contractions_as_zeros)
    assert count == 1
    assert text == """module {
  func.func @main(%arg0: tensor<3x0xf32>, %arg1: tensor<0x4xf32>) -> tensor<3x4xf32> {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<3x4xf32>
    return %0 : tensor<3x4xf32>
  }
}
"""


def test_contractions_of_zero_free_dimensions_are_left_alone():
    """A 0-long free dimension gives an empty result, which IREE compiles: only empty sums are rewritten."""
    text = """func.func @main(%a: tensor<0x3xf32>, %b: tensor<3x4xf32>) -> tensor<0x4xf32> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0]
      : (tensor<0x3xf32>, tensor<3x4xf32>) -> tensor<0x4xf32>
  return %0 : tensor<0x4xf32>
}"""
    assert rewritten(text, compile_rewrites.empty_contractions_as_zeros)[0] == 0


def _window(body: str, init: str, dims: str = "1, 5", strides: str = "1, 1", padding: str = "[0, 0], [4, 0]",
            out: str = "2x5") -> str:
    return f""""stablehlo.reduce_window"(%m, %{init}) ({{
  ^bb0(%x: tensor<i1>, %y: tensor<i1>):
    %r = stablehlo.{body} %x, %y : tensor<i1>
    stablehlo.return %r : tensor<i1>
  }}) {{window_dimensions = array<i64: {dims}>, window_strides = array<i64: {strides}>,
       padding = dense<[{padding}]> : tensor<2x2xi64>}} : (tensor<2x5xi1>, tensor<i1>) -> tensor<{out}xi1>"""


BOOL_WINDOW = f"""func.func @main(%m: tensor<2x5xi1>) -> tensor<2x5xi1> {{
  %f = stablehlo.constant dense<false> : tensor<i1>
  %0 = {_window("or", "f")}
  return %0 : tensor<2x5xi1>
}}"""


def test_bool_reduce_window_runs_in_int32_golden():
    count, text = rewritten(BOOL_WINDOW, compile_rewrites.bool_reduce_window_in_int32)
    assert count == 1
    assert text == """module {
  func.func @main(%arg0: tensor<2x5xi1>) -> tensor<2x5xi1> {
    %c = stablehlo.constant dense<false> : tensor<i1>
    %0 = stablehlo.convert %arg0 : (tensor<2x5xi1>) -> tensor<2x5xi32>
    %1 = stablehlo.convert %c : (tensor<i1>) -> tensor<i32>
    %2 = "stablehlo.reduce_window"(%0, %1) <{padding = dense<[[0, 0], [4, 0]]> : tensor<2x2xi64>, \
window_dimensions = array<i64: 1, 5>, window_strides = array<i64: 1, 1>}> ({
    ^bb0(%arg1: tensor<i32>, %arg2: tensor<i32>):
      %5 = stablehlo.or %arg1, %arg2 : tensor<i32>
      stablehlo.return %5 : tensor<i32>
    }) : (tensor<2x5xi32>, tensor<i32>) -> tensor<2x5xi32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %3 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i32>) -> tensor<2x5xi32>
    %4 = stablehlo.compare NE, %2, %3, SIGNED : (tensor<2x5xi32>, tensor<2x5xi32>) -> tensor<2x5xi1>
    return %4 : tensor<2x5xi1>
  }
}
"""


def test_bool_windows_of_other_bodies_are_left_alone():
    """A body of more than one op is not rewritten (its i1 ops have no int32 twin here); int windows neither."""
    two_ops = BOOL_WINDOW.replace("%r = stablehlo.or %x, %y : tensor<i1>",
                                  "%s = stablehlo.or %x, %y : tensor<i1>\n    %r = stablehlo.not %s : tensor<i1>")
    assert rewritten(two_ops, compile_rewrites.bool_reduce_window_in_int32)[0] == 0


INT_TO_BF16 = """func.func @main(%n: tensor<3xi32>) -> tensor<3xbf16> {
  %0 = stablehlo.convert %n : (tensor<3xi32>) -> tensor<3xf32>
  %1 = stablehlo.convert %0 : (tensor<3xf32>) -> tensor<3xbf16>
  return %1 : tensor<3xbf16>
}"""


def test_int_to_f32_to_bf16_keeps_its_two_converts_golden():
    count, text = rewritten(INT_TO_BF16, compile_rewrites.double_rounding_kept)
    assert count == 1
    assert text == """module {
  func.func @main(%arg0: tensor<3xi32>) -> tensor<3xbf16> {
    %0 = stablehlo.convert %arg0 : (tensor<3xi32>) -> tensor<3xf32>
    %1 = stablehlo.optimization_barrier %0 : tensor<3xf32>
    %2 = stablehlo.convert %1 : (tensor<3xf32>) -> tensor<3xbf16>
    return %2 : tensor<3xbf16>
  }
}
"""
    widening = INT_TO_BF16.replace("bf16", "f64")      # nothing folds into a wider float's one rounding
    assert rewritten(widening, compile_rewrites.double_rounding_kept)[0] == 0


DIRECT_TO_BF16 = """func.func @main(%x: tensor<12xf64>, %n: tensor<6xi32>, %b: tensor<2xi1>)
    -> (tensor<12xbf16>, tensor<6xbf16>, tensor<2xbf16>) {
  %0 = stablehlo.convert %x : (tensor<12xf64>) -> tensor<12xbf16>
  %1 = stablehlo.convert %n : (tensor<6xi32>) -> tensor<6xbf16>
  %2 = stablehlo.convert %b : (tensor<2xi1>) -> tensor<2xbf16>
  return %0, %1, %2 : tensor<12xbf16>, tensor<6xbf16>, tensor<2xbf16>
}"""
# past f32's precision (one rounding: 2**24 + 2**17; through f32: 2**24), a tie in bf16 that f64 breaks, f32's
# largest and beyond (inf), below f32's subnormals (a signed zero), NaN, inf, -0.0 (no bf16 subnormal: IREE's CPU
# code flushes subnormal results to zero)
DIRECT_F64 = np.array([2.0**24 + 2**16 + 1, -(2.0**24 + 2**16 + 1), 1 + 2.0**-8 + 2.0**-40, 3.4028234663852886e38,
                       1e39, -1e-50, np.nan, -np.inf, -0.0, 1.0, 0.1, 3.0])
DIRECT_INTS = np.array([2**24 + 2**16 + 1, -(2**24 + 2**16 + 1), 2**31 - 1, -2**31, 7, 0], np.int32)


def test_direct_converts_to_bf16_round_once_and_compile(backend="iree:cpu"):
    """llvm-cpu rounded f64 -> bf16 twice (through f32) and could not link i32 -> bf16 on CPUs without AVX512-BF16
    (`__truncsfbf2`); the spec and the reference round once (checked against exact arithmetic). (vmvx still rounds
    f64 -> bf16 twice: it cannot lower the f64 -> f32 convert inside the rounding's dispatch.)"""
    flags = np.array([True, False])
    with np.errstate(over="ignore"):   # 1e39 -> inf
        expected = [bf16_rounded_once(DIRECT_F64.tolist()), bf16_rounded_once(DIRECT_INTS.tolist()),
                    flags.astype(ml_dtypes.bfloat16)]
    for (a, e), want in zip(on_target_and_reference(DIRECT_TO_BF16, [DIRECT_F64, DIRECT_INTS, flags], backend),
                            expected):
        np.testing.assert_array_equal(a.view(np.uint16), want.view(np.uint16))
        np.testing.assert_array_equal(e.view(np.uint16), want.view(np.uint16))


SELECTED_SCATTER = """func.func @main(%x: tensor<5xf32>, %i: tensor<2x1xi8>, %u: tensor<2xf32>, %k: tensor<2xi1>)
    -> tensor<5xf32> {
  %z = stablehlo.constant dense<0.0> : tensor<2xf32>
  %v = stablehlo.select %k, %u, %z : tensor<2xi1>, tensor<2xf32>
  %0 = "stablehlo.scatter"(%x, %i, %v) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %s : tensor<f32>
  }) {scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0],
      index_vector_dim = 1>, indices_are_sorted = false, unique_indices = false}
      : (tensor<5xf32>, tensor<2x1xi8>, tensor<2xf32>) -> tensor<5xf32>
  return %0 : tensor<5xf32>
}"""


def test_scatter_of_selected_updates_gets_a_barrier_golden():
    count, text = rewritten(SELECTED_SCATTER, compile_rewrites.scatter_selected_updates_apart)
    assert count == 1
    assert "%1 = stablehlo.optimization_barrier %0 : tensor<2xf32>" in text
    assert '"stablehlo.scatter"(%arg0, %arg1, %1)' in text, text
    plain = SELECTED_SCATTER.replace('"stablehlo.scatter"(%x, %i, %v)', '"stablehlo.scatter"(%x, %i, %u)')
    assert rewritten(plain, compile_rewrites.scatter_selected_updates_apart)[0] == 0


# every rewrite of compile_rewrites.py on one module: an empty contraction, i1 windows of every body the rewrite
# knows (add and multiply are the spec's OR and AND on i1), strided and padded, and the int -> f32 -> bf16 pair
T = "tensor<2x5xi1>"
EVERYTHING = f"""func.func @main(%a: tensor<3x0xf32>, %b: tensor<0x4xf32>, %m: {T}, %n: tensor<3xi32>)
    -> (tensor<3x4xf32>, {T}, {T}, {T}, {T}, {T}, tensor<2x2xi1>, tensor<3xbf16>) {{
  %f = stablehlo.constant dense<false> : tensor<i1>
  %t = stablehlo.constant dense<true> : tensor<i1>
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0]
      : (tensor<3x0xf32>, tensor<0x4xf32>) -> tensor<3x4xf32>
  %1 = {_window("or", "f")}
  %2 = {_window("and", "t")}
  %3 = {_window("add", "f", dims="1, 2", padding="[0, 0], [1, 0]")}
  %4 = {_window("multiply", "t", dims="2, 1", padding="[1, 0], [0, 0]")}
  %5 = {_window("maximum", "f", dims="1, 3", padding="[0, 0], [2, 0]")}
  %6 = {_window("xor", "f", dims="1, 3", strides="1, 2", padding="[0, 0], [1, 0]", out="2x2")}
  %7 = stablehlo.convert %n : (tensor<3xi32>) -> tensor<3xf32>
  %8 = stablehlo.convert %7 : (tensor<3xf32>) -> tensor<3xbf16>
  return %0, %1, %2, %3, %4, %5, %6, %8 : tensor<3x4xf32>, {T}, {T}, {T}, {T}, {T}, tensor<2x2xi1>, tensor<3xbf16>
}}"""
MASK = np.array([[0, 1, 0, 0, 1], [1, 1, 1, 0, 1]], bool)
# 2**24 + 2**16 + 1 rounds to 2**24 + 2**16 in f32, a tie that bf16 rounds to even (2**24); rounded once: 2**24 + 2**17
BIG = np.array([2**24 + 2**16 + 1, -7, 2**31 - 1], np.int32)
INPUTS = [np.zeros((3, 0), np.float32), np.zeros((0, 4), np.float32), MASK, BIG]


@pytest.mark.parametrize("backend", ["iree:cpu", "iree:vmvx"])
def test_from_mlir_module_compiles_and_matches_the_reference(backend):
    pairs = on_target_and_reference(EVERYTHING, INPUTS, backend)
    for a, e in pairs:
        assert a.dtype == e.dtype and a.shape == e.shape
        np.testing.assert_array_equal(a.astype(np.float64), e.astype(np.float64))
    zeros, any_so_far = pairs[0][1], pairs[1][1]
    assert not zeros.any() and (any_so_far == np.logical_or.accumulate(MASK, axis=1)).all()
    assert pairs[-1][1].astype(np.float64)[0] == 2**24 == BIG.astype(np.float32).astype(ml_dtypes.bfloat16)[0]


def test_from_mlir_modules_compile_for_cuda():
    """One module each: IREE 3.13's cuda fails to bufferize windows of different shapes over one input (a 1x2 and
    a 1x3 window of the same tensor, in f32 as well), which EVERYTHING has."""
    for text in (EMPTY_DOT, BOOL_WINDOW, SELECTED_SCATTER):
        compile_program(parse(text), cuda())


@pytest.mark.parametrize("target, expected", [
    ("cpu", {"empty_contractions_as_zeros": 1, "bool_reduce_window_in_int32": 6, "double_rounding_kept": 1}),
    ("vmvx", {"empty_contractions_as_zeros": 1, "bool_reduce_window_in_int32": 6, "double_rounding_kept": 1}),
    ("cuda", {"empty_contractions_as_zeros": 1, "bool_reduce_window_in_int32": 6}),
])
def test_each_target_gets_only_the_compile_rewrites_it_needs(target, expected):
    applied, _ = target_rewritten(EVERYTHING, target)
    names = {f.__name__ for f in compile_rewrites.ALL_TARGETS + compile_rewrites.VMVX + compile_rewrites.CPU}
    assert {name: n for name, n in applied.items() if name in names} == expected


def test_every_target_gets_the_scatter_barrier():
    """cuda to compile (8-bit indices), llvm-cpu for speed (the scatter with the select fused looked slower)."""
    for target, n in (("cuda", 1), ("cpu", 1), ("vmvx", 1)):
        applied, _ = target_rewritten(SELECTED_SCATTER, target)
        assert applied.get("scatter_selected_updates_apart") == n, (target, applied)


def _traced(a, b, m, n):
    """What the frontend once guarded itself: an empty matmul, a bool cummax/cummin, an int -> bf16 astype."""
    return a @ b, ops.cummax(m, axis=1), ops.cummin(m, axis=0), ops.astype(n, "bfloat16")


@pytest.mark.parametrize("backend", ["iree:cpu", "iree:vmvx"])
def test_traced_program_gets_the_rewrites(backend):
    results = [np.asarray(r) for r in hj.jit(_traced, backend=backend)(*INPUTS)]
    # int -> bfloat16 through float32, as JAX: ml_dtypes 0.7's own astype rounds once (2**24 + 2**17 for BIG[0]),
    # older ones through float32 (2**24), so the expectation names its path rather than trust the version
    expected = [np.zeros((3, 4), np.float32), np.maximum.accumulate(MASK, axis=1), np.minimum.accumulate(MASK, axis=0),
                BIG.astype(np.float32).astype(ml_dtypes.bfloat16)]
    for r, e in zip(results, expected):
        assert r.dtype == e.dtype
        np.testing.assert_array_equal(r.astype(np.float64), e.astype(np.float64))
    rewrites = hj.jit(_traced).explain(*INPUTS, target=backend.removeprefix("iree:")).rewrites
    assert rewrites["empty_contractions_as_zeros"] == 1 and rewrites["bool_reduce_window_in_int32"] == 2


F64_TO_INTS = """func.func @main(%x: tensor<10xf64>)
    -> (tensor<10xi64>, tensor<10xi32>, tensor<10xi8>, tensor<10xui8>) {
  %0 = stablehlo.convert %x : (tensor<10xf64>) -> tensor<10xi64>
  %1 = stablehlo.convert %x : (tensor<10xf64>) -> tensor<10xi32>
  %2 = stablehlo.convert %x : (tensor<10xf64>) -> tensor<10xi8>
  %a = stablehlo.abs %x : tensor<10xf64>
  %3 = stablehlo.convert %a : (tensor<10xf64>) -> tensor<10xui8>
  return %0, %1, %2, %3 : tensor<10xi64>, tensor<10xi32>, tensor<10xi8>, tensor<10xui8>
}"""
# truncation toward zero, zeros and a subnormal, values past 2**53 (a left shift), wrapping to narrower ints
F64_VALUES = np.array([0.0, -0.0, 1.9, -1.9, 127.5, -128.7, 5e-324, 123456.75, 2.0**53 + 2, -(2.0**62)], np.float64)


def test_f64_to_int_becomes_integer_ops_golden():
    count, text = rewritten(F64_TO_INTS, compile_rewrites.f64_to_int_by_bits)
    assert count == 4 and "-> tensor<10xi32>" in text
    assert "stablehlo.convert %arg0 : (tensor<10xf64>)" not in text and "stablehlo.shift_left" in text, text
    assert rewritten(F64_TO_INTS.replace("f64", "f32"), compile_rewrites.f64_to_int_by_bits)[0] == 0


def test_f64_to_int_on_vmvx_matches_the_reference():
    """vmvx could not compile any f64 -> int convert ('arith.fptosi' (f64) -> i32). Values the result type cannot
    hold are the implementation's (numpy's differ by width: x86 gives INT_MIN in 32 bits): compared where they fit."""
    pairs = on_target_and_reference(F64_TO_INTS, [F64_VALUES], "iree:vmvx")
    for (a, e), x in zip(pairs, (F64_VALUES,) * 3 + (np.abs(F64_VALUES),)):
        info = np.iinfo(e.dtype)
        fits = (np.trunc(x) >= info.min) & (np.trunc(x) <= info.max)
        assert a.dtype == e.dtype and fits.sum() >= 7
        np.testing.assert_array_equal(a[fits], e[fits])
    expected = F64_VALUES.astype(np.int64)
    np.testing.assert_array_equal(hj.from_mlir(F64_TO_INTS, backend="reference")(F64_VALUES)[0], expected)


def test_vmvx_alone_gets_f64_to_int_by_bits():
    for target, n in (("vmvx", 4), ("cpu", None), ("cuda", None)):
        applied, _ = target_rewritten(F64_TO_INTS, target)
        assert applied.get("f64_to_int_by_bits") == n, (target, applied)


# A complex128 table and a sort by real part: llvm-cpu's complex-pairs rewrite leaves a function with a complex sort
# complex, so its constant reaches IREE as one (32 elements: IREE's compiler died of SIGFPE on llvm-cpu; cuda failed)
COMPLEX128_TABLE = "[" + ", ".join(f"({k}.5, {k % 3}.0)" for k in range(32)) + "]"
COMPLEX128_CONSTANT = f"""func.func @main(%x: tensor<32xcomplex<f64>>) -> tensor<32xcomplex<f64>> {{
  %c = stablehlo.constant dense<{COMPLEX128_TABLE}> : tensor<32xcomplex<f64>>
  %0 = stablehlo.multiply %x, %c : tensor<32xcomplex<f64>>
  %1 = "stablehlo.sort"(%0) ({{
  ^bb0(%a: tensor<complex<f64>>, %b: tensor<complex<f64>>):
    %ra = stablehlo.real %a : (tensor<complex<f64>>) -> tensor<f64>
    %rb = stablehlo.real %b : (tensor<complex<f64>>) -> tensor<f64>
    %lt = stablehlo.compare LT, %ra, %rb, FLOAT : (tensor<f64>, tensor<f64>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  }}) {{dimension = 0 : i64, is_stable = true}} : (tensor<32xcomplex<f64>>) -> tensor<32xcomplex<f64>>
  return %1 : tensor<32xcomplex<f64>>
}}"""


def test_complex128_constant_becomes_its_parts_golden():
    count, text = rewritten(COMPLEX128_CONSTANT, compile_rewrites.complex128_constants_from_parts)
    assert count == 1
    assert "dense<[5.000000e-01, 1.500000e+00," in text and "dense<[0.000000e+00, 1.000000e+00, 2.000000e+00," in text
    assert "%0 = stablehlo.complex %cst, %cst_0 : tensor<32xcomplex<f64>>" in text
    assert "%1 = stablehlo.multiply %arg0, %0 : tensor<32xcomplex<f64>>" in text and "dense<[(" not in text
    # scalars and complex64 tables compile as they are
    assert rewritten(COMPLEX128_CONSTANT.replace("f64", "f32"), compile_rewrites.complex128_constants_from_parts)[0] == 0


@pytest.mark.parametrize("backend", ["iree:cpu"])       # vmvx sorts no complex values at all (an IREE limit)
def test_complex128_constant_module_matches_the_reference(backend):
    x = (np.linspace(-2, 3, 32) + 1j * np.linspace(1, -1, 32)).astype(np.complex128)
    (actual, expected), = on_target_and_reference(COMPLEX128_CONSTANT, [x], backend)
    np.testing.assert_allclose(actual, expected, rtol=1e-15)
    table = np.array([complex(k + 0.5, k % 3) for k in range(32)])
    np.testing.assert_allclose(expected, sorted(x * table, key=lambda z: z.real), rtol=1e-15)


def test_complex128_constant_module_compiles_for_cuda():
    compile_program(parse(COMPLEX128_CONSTANT), cuda())


def _complex_moves(part: str) -> str:
    """A pad, an update of a slice of zeros, zeros concatenated and a loop started from zeros, of complex values:
    IREE 3.13's cuda compiler died of SIGSEGV on the first two (complex64 and complex128) and had no 128-bit fill
    for the others ("'stream.async.splat' op has no builtin for bit width 128")."""
    t = f"complex<{part}>"
    results = f"tensor<4x4x{t}>, tensor<6x6x{t}>, tensor<4x2x{t}>, tensor<2x2x{t}>"
    return f"""func.func @main(%x: tensor<2x2x{t}>) -> ({results}) {{
  %zero = stablehlo.constant dense<(0.0, 0.0)> : tensor<{t}>
  %one = stablehlo.constant dense<(1.0, -2.0)> : tensor<{t}>
  %pad = stablehlo.pad %x, %one, low = [1, 0], high = [1, 2], interior = [0, 0]
    : (tensor<2x2x{t}>, tensor<{t}>) -> tensor<4x4x{t}>
  %zeros = stablehlo.broadcast_in_dim %zero, dims = [] : (tensor<{t}>) -> tensor<6x6x{t}>
  %i = stablehlo.constant dense<3> : tensor<i32>
  %dus = stablehlo.dynamic_update_slice %zeros, %x, %i, %i
    : (tensor<6x6x{t}>, tensor<2x2x{t}>, tensor<i32>, tensor<i32>) -> tensor<6x6x{t}>
  %small = stablehlo.broadcast_in_dim %zero, dims = [] : (tensor<{t}>) -> tensor<2x2x{t}>
  %cat = stablehlo.concatenate %x, %small, dim = 0 : (tensor<2x2x{t}>, tensor<2x2x{t}>) -> tensor<4x2x{t}>
  %n = stablehlo.constant dense<0> : tensor<i32>
  %loop:2 = stablehlo.while(%k = %n, %acc = %small) : tensor<i32>, tensor<2x2x{t}>
   cond {{
    %three = stablehlo.constant dense<3> : tensor<i32>
    %more = stablehlo.compare LT, %k, %three : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %more : tensor<i1>
  }} do {{
    %step = stablehlo.constant dense<1> : tensor<i32>
    %k1 = stablehlo.add %k, %step : tensor<i32>
    %acc1 = stablehlo.add %acc, %x : tensor<2x2x{t}>
    stablehlo.return %k1, %acc1 : tensor<i32>, tensor<2x2x{t}>
  }}
  return %pad, %dus, %cat, %loop#1 : {results}
}}"""


@pytest.mark.parametrize("part", ["f32", "f64"])
def test_complex_moves_compile_for_cuda(part):
    compile_program(parse(_complex_moves(part)), cuda())


def test_complex_moves_are_rewritten_golden():
    """cuda: the pad and the update moved per part (complex_math_by_parts), complex128 zeros broadcast from their
    parts (complex128_constants_from_parts, every target)."""
    applied, text = target_rewritten(_complex_moves("f64"), "cuda")
    assert applied["complex_math_by_parts"] == 2 and applied["complex128_constants_from_parts"] == 2
    assert not any("stablehlo.pad" in line and "complex" in line for line in text.splitlines())
    assert not any("broadcast_in_dim" in line and "(tensor<complex<f64>>)" in line for line in text.splitlines())
    assert text.count("stablehlo.dynamic_update_slice") == 2 and text.count("stablehlo.pad") == 2


@pytest.mark.parametrize("backend, part", [("iree:cpu", "f64"), ("iree:cpu", "f32"), ("iree:vmvx", "f32")])
def test_complex_moves_match_the_reference(backend, part):
    x = np.array([[1 + 2j, -3j], [0.5, 4 - 1j]], np.complex128 if part == "f64" else np.complex64)
    for actual, expected in on_target_and_reference(_complex_moves(part), [x], backend):
        np.testing.assert_array_equal(actual, expected)
    pad = on_target_and_reference(_complex_moves(part), [x], "reference")[0][0]
    np.testing.assert_array_equal(pad[1:3, :2], x)
    assert (pad[0] == 1 - 2j).all()


@pytest.mark.parametrize("backend", ["iree:cpu", "iree:vmvx"])
def test_complex128_solve_and_inverse_of_arguments(backend):
    """solve and inv of complex128 arguments (a complex eye inside): llvm-cpu's compiler died of SIGFPE on the
    folded eye, and its complex-pairs rewrite did not know a complex iota."""
    rng = np.random.default_rng(5)
    a = rng.standard_normal((4, 4)) + 1j * rng.standard_normal((4, 4))
    b = rng.standard_normal((4, 2)) + 1j * rng.standard_normal((4, 2))
    solved, inverse = hj.jit(lambda a, b: (ops.linalg.solve(a, b), ops.linalg.inv(a)), backend=backend)(a, b)
    np.testing.assert_allclose(np.asarray(solved), np.linalg.solve(a, b), rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(np.asarray(inverse), np.linalg.inv(a), rtol=1e-12, atol=1e-13)


# LU's trailing update and a transposed panel product: slices of one argument that reach data-tiled matmuls, as a
# matmul's operand (%u, %t through a transpose), and beside its result in an elementwise consumer (%s); %n reaches
# one through a negate. Raw IREE 3.13 fails both ways on every x86 CPU ("exceeded stack allocation limit",
# "large vector sizes"), and compiled it again without data tiling.
SLICED_MATMULS = """func.func @main(%a: tensor<256x256xf32>, %p: tensor<192x64xf32>)
    -> (tensor<192x192xf32>, tensor<192x192xf32>) {
  %s = stablehlo.slice %a [64:256, 64:256] : (tensor<256x256xf32>) -> tensor<192x192xf32>
  %n = stablehlo.negate %s : tensor<192x192xf32>
  %u = stablehlo.slice %a [0:64, 64:256] : (tensor<256x256xf32>) -> tensor<64x192xf32>
  %d = stablehlo.dot_general %p, %u, contracting_dims = [1] x [0]
      : (tensor<192x64xf32>, tensor<64x192xf32>) -> tensor<192x192xf32>
  %r = stablehlo.subtract %n, %d : tensor<192x192xf32>
  %t0 = stablehlo.slice %a [0:64, 64:256] : (tensor<256x256xf32>) -> tensor<64x192xf32>
  %t = stablehlo.transpose %t0, dims = [1, 0] : (tensor<64x192xf32>) -> tensor<192x64xf32>
  %e = stablehlo.dot_general %t, %p, contracting_dims = [1] x [1]
      : (tensor<192x64xf32>, tensor<192x64xf32>) -> tensor<192x192xf32>
  return %r, %e : tensor<192x192xf32>, tensor<192x192xf32>
}"""


def test_slices_reaching_matmuls_get_barriers_golden():
    count, text = rewritten(SLICED_MATMULS, compile_rewrites.sliced_matmul_inputs_materialized)
    assert count == 3
    assert text.count("stablehlo.optimization_barrier") == 3
    assert """%0 = stablehlo.slice %arg0 [64:256, 64:256] : (tensor<256x256xf32>) -> tensor<192x192xf32>
    %1 = stablehlo.optimization_barrier %0 : tensor<192x192xf32>
    %2 = stablehlo.negate %1 : tensor<192x192xf32>
    %3 = stablehlo.slice %arg0 [0:64, 64:256] : (tensor<256x256xf32>) -> tensor<64x192xf32>
    %4 = stablehlo.optimization_barrier %3 : tensor<64x192xf32>
    %5 = stablehlo.dot_general %arg1, %4, contracting_dims = [1] x [0]""" in text, text
    assert """%8 = stablehlo.optimization_barrier %7 : tensor<64x192xf32>
    %9 = stablehlo.transpose %8, dims = [1, 0]""" in text, text
    unsliced = """func.func @main(%a: tensor<64x192xf32>, %p: tensor<192x64xf32>, %s: tensor<192x192xf32>) -> tensor<192x192xf32> {
  %d = stablehlo.dot_general %p, %a, contracting_dims = [1] x [0]
      : (tensor<192x64xf32>, tensor<64x192xf32>) -> tensor<192x192xf32>
  %r = stablehlo.subtract %s, %d : tensor<192x192xf32>
  return %r : tensor<192x192xf32>
}"""
    assert rewritten(unsliced, compile_rewrites.sliced_matmul_inputs_materialized)[0] == 0


def test_only_data_tiled_cpu_builds_get_the_slice_barriers():
    """The bare fallback and the quick build tile no matmuls, vmvx and cuda pack none this way."""
    def barriers(target):
        return target_rewritten(SLICED_MATMULS, target)[0].get("sliced_matmul_inputs_materialized", 0)
    assert barriers(targets.cpu()) == barriers(targets.cpu(flag_set="inner-tiled")) == 3
    assert barriers(targets.cpu().fallback) == barriers(targets.quick(targets.cpu())) == 0
    assert barriers(targets.vmvx()) == barriers(targets.cuda()) == 0


def test_sliced_matmuls_compile_data_tiled_and_match_the_reference():
    assert compile_program(parse(SLICED_MATMULS), targets.cpu()).target.flag_set == "data-tiling"  # not its fallback
    rng = np.random.default_rng(0)
    inputs = [rng.standard_normal((256, 256), np.float32), rng.standard_normal((192, 64), np.float32)]
    for a, e in on_target_and_reference(SLICED_MATMULS, inputs, "iree:cpu"):
        np.testing.assert_allclose(a, e, rtol=1e-5, atol=1e-4)


BOOL_MATMULS = """func.func @main(%a: tensor<5x7xi1>, %b: tensor<7x6xi1>) -> tensor<5x6xi32> {
  %0 = stablehlo.convert %a : (tensor<5x7xi1>) -> tensor<5x7xi32>
  %1 = stablehlo.convert %b : (tensor<7x6xi1>) -> tensor<7x6xi32>
  %2 = stablehlo.dot_general %0, %1, contracting_dims = [1] x [0] : (tensor<5x7xi32>, tensor<7x6xi32>) -> tensor<5x6xi32>
  return %2 : tensor<5x6xi32>
}"""


def test_bool_matmuls_keep_integer_operands_golden():
    count, text = rewritten(BOOL_MATMULS, compile_rewrites.bool_dots_behind_barriers)
    assert count == 1 and text.count("stablehlo.optimization_barrier") == 2


def test_bool_matmuls_compile_data_tiled_and_sum_as_numpy():
    """IREE folded the i1 -> int extension into a data-tiled matmul and failed on its i1 encoding: the module
    compiled a second time without data tiling (test_ops' contraction table)."""
    assert compile_program(parse(BOOL_MATMULS), targets.cpu()).target.flag_set == "data-tiling"  # not its fallback
    rng = np.random.default_rng(5)
    a, b = rng.random((5, 7)) < 0.5, rng.random((7, 6)) < 0.5
    for actual, expected in on_target_and_reference(BOOL_MATMULS, [a, b], "iree:cpu"):
        np.testing.assert_array_equal(actual, expected)
    np.testing.assert_array_equal(actual, a.astype(np.int32) @ b.astype(np.int32))



# The real products of a complex identity permuted by LU's pivots (`inv` of a 64 x 64 complex128 matrix): the
# imaginary part is a gather of zeros, which IREE folded into a fill inside the next matmul's dispatch and failed
# ("One or more operations with large vector sizes"), with data tiling and without
GATHERED_ZEROS_MATMUL = """func.func @main(%x: tensor<64x64xf64>, %y: tensor<64x64xf64>, %i: tensor<64x1xi32>)
    -> tensor<64x64xf64> {
  %z = stablehlo.constant dense<0.0> : tensor<64x64xf64>
  %g = "stablehlo.gather"(%z, %i) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0],
      start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 64>}>
      : (tensor<64x64xf64>, tensor<64x1xi32>) -> tensor<64x64xf64>
  %d = stablehlo.dot_general %x, %g, contracting_dims = [1] x [0]
      : (tensor<64x64xf64>, tensor<64x64xf64>) -> tensor<64x64xf64>
  %e = stablehlo.dot_general %y, %d, contracting_dims = [1] x [0]
      : (tensor<64x64xf64>, tensor<64x64xf64>) -> tensor<64x64xf64>
  return %e : tensor<64x64xf64>
}"""


def test_a_matmul_of_spread_zeros_reads_them_through_a_barrier_golden():
    count, text = rewritten(GATHERED_ZEROS_MATMUL, compile_rewrites.splat_matmul_operands_materialized)
    assert count == 1
    assert """    %1 = stablehlo.optimization_barrier %0 : tensor<64x64xf64>
    %2 = stablehlo.dot_general %arg0, %1, contracting_dims = [1] x [0]""" in text, text
    assert rewritten(GATHERED_ZEROS_MATMUL.replace("(%z, %i)", "(%y, %i)"),       # a gather of a value: left
                     compile_rewrites.splat_matmul_operands_materialized)[0] == 0
    # a complex splat (a function complex_pairs leaves complex keeps its constants): the bindings cannot hand out
    # its attribute, and the check raised TypeError
    complex_splat = """func.func @main(%x: tensor<4x4xcomplex<f32>>) -> tensor<4x4xcomplex<f32>> {
  %c = stablehlo.constant dense<(1.0, 2.0)> : tensor<4x4xcomplex<f32>>
  %d = stablehlo.dot_general %x, %c, contracting_dims = [1] x [0]
      : (tensor<4x4xcomplex<f32>>, tensor<4x4xcomplex<f32>>) -> tensor<4x4xcomplex<f32>>
  return %d : tensor<4x4xcomplex<f32>>
}"""
    assert rewritten(complex_splat, compile_rewrites.splat_matmul_operands_materialized)[0] == 1


def test_matmuls_of_spread_zeros_compile_on_cpu_and_match_the_reference():
    for target in (targets.cpu(), targets.cpu().fallback):
        assert compile_program(parse(GATHERED_ZEROS_MATMUL), target).target == target   # no fallback needed
    rng = np.random.default_rng(3)
    inputs = [rng.standard_normal((64, 64)), rng.standard_normal((64, 64)),
              rng.permutation(64).astype(np.int32)[:, None]]
    inputs[1][5, 7] = np.inf                                   # inf times zero is nan: row 5 as the spec's products
    (actual, expected), = on_target_and_reference(GATHERED_ZEROS_MATMUL, inputs, "iree:cpu")
    assert np.isnan(expected[5]).all() and (np.delete(expected, 5, axis=0) == 0).all()
    np.testing.assert_array_equal(actual, expected)


COLUMN_GATHER = """func.func @main(%a: tensor<8x8xf32>, %i: tensor<8x1xi32>) -> tensor<8xf32> {
  %0 = stablehlo.slice %a [0:8, 2:3] : (tensor<8x8xf32>) -> tensor<8x1xf32>
  %1 = stablehlo.reshape %0 : (tensor<8x1xf32>) -> tensor<8xf32>
  %2 = "stablehlo.gather"(%1, %i) <{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [0],
    start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1>}>
    : (tensor<8xf32>, tensor<8x1xi32>) -> tensor<8xf32>
  return %2 : tensor<8xf32>
}"""


def test_a_gather_of_a_slice_reads_a_copy_on_cuda_golden():
    count, text = rewritten(COLUMN_GATHER, compile_rewrites.sliced_gather_operands_materialized)
    assert count == 1
    assert "%2 = stablehlo.optimization_barrier %1 : tensor<8xf32>" in text and '"stablehlo.gather"(%2, %arg1)' in text
    applied = {t: target_rewritten(COLUMN_GATHER, t)[0].get("sliced_gather_operands_materialized")
               for t in ("cpu", "vmvx", "cuda")}
    assert applied == {"cpu": None, "vmvx": None, "cuda": 1}


def test_a_column_indexed_and_a_solve_by_a_column_compile_for_cuda():
    """IREE 3.13's cuda failed both ("LLVM Translation failed for operation: builtin.unrealized_conversion_cast")."""
    a, i = np.eye(8, dtype=np.float32), np.arange(8, dtype=np.int32)
    program = hj.jit(lambda a, i: (ops.take(a[:, 3], i, axis=0), ops.linalg.solve(a, a[:, :1]))).lower(a, i).program
    compile_program(program, cuda())
