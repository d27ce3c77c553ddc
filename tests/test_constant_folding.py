"""pipeline/constant_folding.py: constant-only expressions become one `stablehlo.constant` before IREE's
const-eval JIT-compiles them (golden text before/after), what must stay stays (big broadcasts, ops on arguments,
loop-carried values, side effects), and the folded values are the reference's, dtype for dtype, on every target."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from iree.compiler import ir

import hlojit as hj
from hlojit.pipeline import constant_folding, kernels, legalize, quirks, targets
from hlojit.pipeline.constant_folding import fold_constants

from conftest import assert_close
from test_legalize import rewritten   # parse, rewrite, verify: (count, text)


def folded(text: str) -> tuple[int, str]:
    """(constants folded, module text) after fold_constants, verified."""
    return rewritten(text, fold_constants)


TAN_EXP = """func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %c = stablehlo.constant dense<[0.5, 1.0]> : tensor<2xf32>
  %t = stablehlo.tan %c : tensor<2xf32>
  %e = stablehlo.exponential %t : tensor<2xf32>
  %y = stablehlo.add %x, %e : tensor<2xf32>
  return %y : tensor<2xf32>
}"""


def test_a_constant_tan_exp_chain_folds_to_one_constant_golden():
    count, text = folded(TAN_EXP)
    assert count == 2
    assert text == """module {
  func.func @main(%arg0: tensor<2xf32>) -> tensor<2xf32> {
    %cst = stablehlo.constant dense<[1.72685623, 4.74650097]> : tensor<2xf32>
    %0 = stablehlo.add %arg0, %cst : tensor<2xf32>
    return %0 : tensor<2xf32>
  }
}
"""


def test_folded_values_are_computed_in_their_dtype():
    """f32 in f32 (np.exp(np.tan(f32)) rounded at each op, as the reference does), not in f64 rounded once."""
    _, text = folded(TAN_EXP)
    with ir.Context() as context:
        context.load_all_available_dialects()
        module = ir.Module.parse(text)
        constant = next(op for op in module.body.operations[0].regions[0].blocks[0].operations
                        if op.operation.name == "stablehlo.constant")
        value = np.array(constant.attributes["value"])
    expected = np.exp(np.tan(np.array([0.5, 1.0], np.float32)))
    assert value.dtype == np.float32 and value.tobytes() == expected.tobytes()


BIG_BROADCAST = """func.func @main() -> (tensor<1000000xf32>, tensor<f32>) {
  %s = stablehlo.constant dense<2.0> : tensor<f32>
  %b = stablehlo.broadcast_in_dim %s, dims = [] : (tensor<f32>) -> tensor<1000000xf32>
  %m = stablehlo.multiply %b, %b : tensor<1000000xf32>
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %r = stablehlo.reduce(%m init: %z) applies stablehlo.add across dimensions = [0]
      : (tensor<1000000xf32>, tensor<f32>) -> tensor<f32>
  return %m, %r : tensor<1000000xf32>, tensor<f32>
}"""


def test_a_big_broadcast_is_not_materialised():
    """Neither the broadcast (a million elements) nor what reads it folds: the module is left as it was."""
    count, text = folded(BIG_BROADCAST)
    assert count == 0
    assert "dense<2.000000e+00> : tensor<f32>" in text and "stablehlo.broadcast_in_dim" in text
    assert "stablehlo.reduce" in text and "tensor<1000000xf32>" in text.split("broadcast_in_dim")[1]


def test_a_splat_broadcast_that_an_op_on_an_argument_reads_stays_golden():
    """`x + 1`'s broadcast of the 1 stays (IREE folds a splat's spread for free, and fuses it): nothing counted;
    exp(2) before such a broadcast folds, the broadcast stays on its constant."""
    count, text = folded("""func.func @main(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %c = stablehlo.constant dense<1.0> : tensor<f32>
  %b = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<f32>) -> tensor<2x3xf32>
  %0 = stablehlo.add %x, %b : tensor<2x3xf32>
  %t = stablehlo.constant dense<2.0> : tensor<f32>
  %e = stablehlo.exponential %t : tensor<f32>
  %eb = stablehlo.broadcast_in_dim %e, dims = [] : (tensor<f32>) -> tensor<2x3xf32>
  %1 = stablehlo.multiply %x, %eb : tensor<2x3xf32>
  return %0, %1 : tensor<2x3xf32>, tensor<2x3xf32>
}""")
    assert count == 1
    assert text == """module {
  func.func @main(%arg0: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<2x3xf32>
    %1 = stablehlo.add %arg0, %0 : tensor<2x3xf32>
    %cst_0 = stablehlo.constant dense<7.38905573> : tensor<f32>
    %2 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<2x3xf32>
    %3 = stablehlo.multiply %arg0, %2 : tensor<2x3xf32>
    return %1, %3 : tensor<2x3xf32>, tensor<2x3xf32>
  }
}
"""


def test_an_iota_that_an_op_on_an_argument_reads_stays_and_one_a_fold_reads_goes():
    text = """func.func @main(%x: tensor<4xi32>) -> (tensor<4xi32>, tensor<4xi32>) {
  %i = stablehlo.iota dim = 0 : tensor<4xi32>
  %0 = stablehlo.add %x, %i : tensor<4xi32>
  %j = stablehlo.iota dim = 0 : tensor<4xi32>
  %s = stablehlo.multiply %j, %j : tensor<4xi32>
  %1 = stablehlo.add %x, %s : tensor<4xi32>
  return %0, %1 : tensor<4xi32>, tensor<4xi32>
}"""
    count, after = folded(text)
    assert count == 2
    assert "stablehlo.iota dim = 0 : tensor<4xi32>\n    %1 = stablehlo.add %arg0, %0" in after
    assert "dense<[0, 1, 4, 9]> : tensor<4xi32>" in after and after.count("stablehlo.iota") == 1


def test_ops_on_arguments_side_effects_and_barriers_are_untouched():
    text = """func.func @main(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) {
  %c = stablehlo.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %a = stablehlo.multiply %x, %c : tensor<3xf32>
  %s = stablehlo.sine %a : tensor<3xf32>
  %b = stablehlo.optimization_barrier %c : tensor<3xf32>
  %e = stablehlo.exponential %b : tensor<3xf32>
  %k = stablehlo.custom_call @some_target(%c) : (tensor<3xf32>) -> tensor<3xf32>
  return %s, %e, %k : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
}"""
    count, after = folded(text)
    assert count == 0
    with ir.Context() as context:
        context.load_all_available_dialects()
        assert after == str(ir.Module.parse(text))


WHILE = """func.func @main(%n: tensor<i32>) -> (tensor<i32>, tensor<f32>) {
  %zero = stablehlo.constant dense<0> : tensor<i32>
  %one = stablehlo.constant dense<1.0> : tensor<f32>
  %r:2 = stablehlo.while(%i = %zero, %acc = %one) : tensor<i32>, tensor<f32>
    cond {
      %lt = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %lt : tensor<i1>
    } do {
      %c = stablehlo.constant dense<0.5> : tensor<f32>
      %step = stablehlo.exponential %c : tensor<f32>
      %next = stablehlo.multiply %acc, %step : tensor<f32>
      %k = stablehlo.constant dense<1> : tensor<i32>
      %j = stablehlo.add %i, %k : tensor<i32>
      stablehlo.return %j, %next : tensor<i32>, tensor<f32>
    }
  return %r#0, %r#1 : tensor<i32>, tensor<f32>
}"""


def test_a_while_body_keeps_its_loop_carried_ops_and_folds_its_invariant_constants_golden():
    """exp(0.5) inside the body reads only a constant: it folds; what reads the carried %i and %acc stays. A while
    whose operands are all constants is never folded itself (its trip count is unbounded)."""
    count, text = folded(WHILE)
    assert count == 1
    assert text == """module {
  func.func @main(%arg0: tensor<i32>) -> (tensor<i32>, tensor<f32>) {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %0:2 = stablehlo.while(%iterArg = %c, %iterArg_0 = %cst) : tensor<i32>, tensor<f32>
    cond {
      %1 = stablehlo.compare LT, %iterArg, %arg0 : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %1 : tensor<i1>
    } do {
      %cst_1 = stablehlo.constant dense<1.64872122> : tensor<f32>
      %1 = stablehlo.multiply %iterArg_0, %cst_1 : tensor<f32>
      %c_2 = stablehlo.constant dense<1> : tensor<i32>
      %2 = stablehlo.add %iterArg, %c_2 : tensor<i32>
      stablehlo.return %2, %1 : tensor<i32>, tensor<f32>
    }
    return %0#0, %0#1 : tensor<i32>, tensor<f32>
  }
}
"""
    constant_loop = WHILE.replace("%lt = stablehlo.compare LT, %i, %n", "%lt = stablehlo.compare LT, %i, %zero")
    count, text = folded(constant_loop)
    assert count == 1 and "stablehlo.while" in text


def test_a_reduction_of_constants_folds_with_its_region_golden():
    text = """func.func @main(%x: tensor<f32>) -> tensor<f32> {
  %c = stablehlo.constant dense<[[1.0, 2.0], [3.0, 4.5]]> : tensor<2x2xf32>
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %r = stablehlo.reduce(%c init: %z) across dimensions = [0, 1] : (tensor<2x2xf32>, tensor<f32>) -> tensor<f32>
    reducer(%a: tensor<f32>, %b: tensor<f32>) {
      %m = stablehlo.maximum %a, %b : tensor<f32>
      stablehlo.return %m : tensor<f32>
    }
  %y = stablehlo.add %x, %r : tensor<f32>
  return %y : tensor<f32>
}"""
    count, after = folded(text)
    assert count == 1
    assert after == """module {
  func.func @main(%arg0: tensor<f32>) -> tensor<f32> {
    %cst = stablehlo.constant dense<4.500000e+00> : tensor<f32>
    %0 = stablehlo.add %arg0, %cst : tensor<f32>
    return %0 : tensor<f32>
  }
}
"""


# Constant-only expressions of every kind of dtype beside one op on the argument, so there is something to run
MIXED = """func.func @main(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<2xcomplex<f32>>, tensor<4xui8>, tensor<4xi1>,
                                          tensor<4xi32>, tensor<4xf16>, tensor<2x3xf32>, tensor<4xf32>) {
  %f = stablehlo.constant dense<[0.25, -1.5, 3.0, 1.0e-3]> : tensor<4xf32>
  %t = stablehlo.tan %f : tensor<4xf32>
  %e = stablehlo.exponential %t : tensor<4xf32>
  %y = stablehlo.multiply %x, %e : tensor<4xf32>
  %k = stablehlo.constant dense<[(1.5, 2.5), (-0.3, 0.4)]> : tensor<2xcomplex<f32>>
  %kt = stablehlo.tan %k : tensor<2xcomplex<f32>>
  %u = stablehlo.constant dense<[200, 100, 255, 7]> : tensor<4xui8>
  %u2 = stablehlo.add %u, %u : tensor<4xui8>
  %l = stablehlo.compare GT, %u2, %u : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xi1>
  %nl = stablehlo.not %l : tensor<4xi1>
  %i = stablehlo.constant dense<[-7, 7, -8, 9]> : tensor<4xi32>
  %d = stablehlo.constant dense<[2, -2, 3, 4]> : tensor<4xi32>
  %q = stablehlo.divide %i, %d : tensor<4xi32>
  %h = stablehlo.convert %f : (tensor<4xf32>) -> tensor<4xf16>
  %hs = stablehlo.sqrt %h : tensor<4xf16>
  %io = stablehlo.iota dim = 1 : tensor<2x3xf32>
  %ic = stablehlo.cosine %io : tensor<2x3xf32>
  %fl = stablehlo.convert %i : (tensor<4xi32>) -> tensor<4xf32>
  %fr = stablehlo.remainder %fl, %e : tensor<4xf32>
  return %y, %kt, %u2, %nl, %q, %hs, %ic, %fr : tensor<4xf32>, tensor<2xcomplex<f32>>, tensor<4xui8>, tensor<4xi1>,
                                                tensor<4xi32>, tensor<4xf16>, tensor<2x3xf32>, tensor<4xf32>
}"""


def test_mixed_dtypes_fold_everything_constant():
    count, text = folded(MIXED)
    assert count == 13
    body = text.split("{", 2)[2]
    assert [line.split("=")[1].split()[0] for line in body.splitlines() if " = " in line].count("stablehlo.constant") \
        == 8 and "stablehlo.multiply %arg0" in text


@pytest.fixture(scope="module")
def unfolded_values():
    """What the reference computes of MIXED as written (the reference folds nothing)."""
    return [np.asarray(v) for v in hj.from_mlir(MIXED, entry="main", backend="reference")(X)]


X = np.array([1.0, -2.0, 0.5, 4.0], np.float32)


@pytest.mark.parametrize("backend", ["iree:cpu", "iree:vmvx"])
def test_folded_modules_give_the_unfolded_values(backend, unfolded_values):
    outputs = hj.from_mlir(MIXED, entry="main", backend=backend)(X)
    assert len(outputs) == len(unfolded_values)
    for actual, expected in zip(outputs, unfolded_values):
        assert_close(actual, expected)


def test_every_target_folds_first_and_counts_it():
    """Folding is every target's first rewrite after calls are inlined (what explain and an artifact's manifest list),
    and the evaluator's modules are part of the compile cache's fingerprint."""
    for name in ("cpu", "vmvx", "cuda"):
        first = [kernels.calls_inlined_but_kernels, kernels.kernel_dispatches] if name == "cpu" else \
            [legalize.calls_inlined]
        assert quirks.QUIRKS[name][:len(first) + 1] == first + [fold_constants]
        with ir.Context() as context:
            context.load_all_available_dialects()
            module = ir.Module.parse(TAN_EXP)
            assert next(iter(quirks.apply(module, targets.get(name)).items())) == ("fold_constants", 2)
    from hlojit.pipeline import cache
    assert set(constant_folding.EVALUATOR_MODULES) <= set(cache.fingerprinted_modules())


MASK_OF_IOTAS = """func.func @main(%x: tensor<9xf64>) -> tensor<9xf64> {
  %i = stablehlo.iota dim = 0 : tensor<9xi32>
  %c = stablehlo.constant dense<4> : tensor<i32>
  %b = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<9xi32>
  %m = stablehlo.compare GT, %i, %b, SIGNED : (tensor<9xi32>, tensor<9xi32>) -> tensor<9xi1>
  %z = stablehlo.constant dense<0.0> : tensor<9xf64>
  %0 = stablehlo.select %m, %x, %z : tensor<9xi1>, tensor<9xf64>
  return %0 : tensor<9xf64>
}"""


def test_a_mask_of_iotas_stays_computed_not_a_bool_constant():
    """A bool mask that is no splat stays the compare that makes it (IREE computes it where it is read); as a
    bool constant in memory, IREE 3.13 with data tiling failed to pack it (an LU gradient compiled twice)."""
    count, text = rewritten(MASK_OF_IOTAS, fold_constants)
    assert count == 0 and "stablehlo.compare" in text and "dense<[" not in text, text


COMPLEX_BY_A_CONSTANT = """func.func @main(%z: tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>> {
  %k = stablehlo.constant dense<(2.0, 0.0)> : tensor<complex<f32>>
  %b = stablehlo.broadcast_in_dim %k, dims = [] : (tensor<complex<f32>>) -> tensor<4xcomplex<f32>>
  %0 = stablehlo.divide %z, %b : tensor<4xcomplex<f32>>
  return %0 : tensor<4xcomplex<f32>>
}"""


@pytest.mark.parametrize("target", ["cpu", "vmvx"])
def test_what_the_complex_pairs_build_on_a_constant_folds_and_the_ends_stay_complex(target):
    """A complex division by a constant: the pairs' Smith division compares and divides the constant's parts;
    those fold after complex_pairs.py (before, IREE's const-eval JIT-compiled them: 4.4 s of the complex128 op
    table's compile), and no complex constant is made (the function's ends stay the pairs' own)."""
    with ir.Context() as context:
        context.load_all_available_dialects()
        module = ir.Module.parse(COMPLEX_BY_A_CONSTANT)
        counts = quirks.apply(module, targets.get(target))
        text = str(module)
    assert counts.get("fold_constants_of_pairs", 0) > 0, counts
    assert "stablehlo.abs" not in text, text
    assert not [line for line in text.splitlines() if "stablehlo.constant" in line and "complex" in line], text
    z = (np.arange(4) + 1j * np.arange(4, 8)).astype(np.complex64)
    assert_close(hj.from_mlir(COMPLEX_BY_A_CONSTANT, backend=f"iree:{target}")(z), z / 2)


EXACT = """func.func @main(%x: tensor<3xbf16>) -> (tensor<3xbf16>, tensor<2xcomplex<f64>>, tensor<3xf64>, tensor<3xui32>,
                                          tensor<3xi64>, tensor<3xi8>) {
  %f = stablehlo.constant dense<[0.1, 1.7, -3.3]> : tensor<3xf32>
  %b = stablehlo.convert %f : (tensor<3xf32>) -> tensor<3xbf16>
  %bt = stablehlo.tanh %b : tensor<3xbf16>
  %0 = stablehlo.multiply %x, %bt : tensor<3xbf16>
  %k = stablehlo.constant dense<[(1.5, 2.5), (3.5, 4.5)]> : tensor<2xcomplex<f64>>
  %kt = stablehlo.tan %k : tensor<2xcomplex<f64>>
  %d = stablehlo.convert %f : (tensor<3xf32>) -> tensor<3xf64>
  %dl = stablehlo.log_plus_one %d : tensor<3xf64>
  %u = stablehlo.constant dense<[4294967295, 3, 2147483648]> : tensor<3xui32>
  %us = stablehlo.shift_right_logical %u, %u : tensor<3xui32>
  %i = stablehlo.constant dense<[-9223372036854775807, 5, -3]> : tensor<3xi64>
  %ir = stablehlo.remainder %i, %i : tensor<3xi64>
  %c = stablehlo.constant dense<[127, -128, 5]> : tensor<3xi8>
  %ca = stablehlo.add %c, %c : tensor<3xi8>
  return %0, %kt, %dl, %us, %ir, %ca : tensor<3xbf16>, tensor<2xcomplex<f64>>, tensor<3xf64>, tensor<3xui32>,
                                       tensor<3xi64>, tensor<3xi8>
}"""


def test_folded_values_are_the_references_bit_for_bit():
    """bf16 (rounded as the reference rounds), complex128, f64, wrapping unsigned and 8-bit ints, i64 extremes:
    the folded module and the module as written give the same bits on the reference backend."""
    count, text = folded(EXACT)
    assert count == 8 and text.count("stablehlo.constant") == 6
    x = np.array([1.0, -2.0, 0.5], ml_dtypes.bfloat16)
    unfolded = hj.from_mlir(EXACT, entry="main", backend="reference")(x)
    refolded = hj.from_mlir(text, entry="main", backend="reference")(x)
    for a, b in zip(unfolded, refolded):
        a, b = np.asarray(a), np.asarray(b)
        assert a.dtype == b.dtype and a.tobytes() == b.tobytes(), (a, b)


def test_a_spread_of_an_empty_constant_stays_as_it_was():
    """An empty constant broadcast into an op that stays is a spread of a splat (nothing to materialise); the
    splat test reshaped it to (0, -1) and raised ValueError, failing the compile."""
    count, text = folded("""func.func @main(%x: tensor<3x0xf32>) -> tensor<3x0xf32> {
  %c = stablehlo.constant dense<> : tensor<0xf32>
  %b = stablehlo.broadcast_in_dim %c, dims = [1] : (tensor<0xf32>) -> tensor<3x0xf32>
  %0 = stablehlo.add %x, %b : tensor<3x0xf32>
  return %0 : tensor<3x0xf32>
}""")
    assert count == 0 and "stablehlo.broadcast_in_dim" in text
