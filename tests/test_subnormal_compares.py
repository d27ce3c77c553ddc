"""pipeline/subnormal_compares.py: float compares exact for subnormals on llvm-cpu and vmvx (IREE flushes subnormal
operands to zero: 1e-40 > 0 was false, 1e-40 == 0 true, in f32, f64 and bf16), before and after (golden text),
and every direction on every pair of special values against numpy, on every target."""
from __future__ import annotations

import itertools
import tracemalloc

import ml_dtypes
import numpy as np
import pytest

import hlojit as hj
from hlojit.pipeline import subnormal_compares
from test_legalize import rewritten, target_rewritten

DIRECTIONS = {"EQ": np.equal, "NE": np.not_equal, "LT": np.less, "LE": np.less_equal, "GT": np.greater,
              "GE": np.greater_equal}
# name, MLIR element type, a subnormal
DTYPES = {"float32": ("f32", 1e-40), "float64": ("f64", 5e-320), "bfloat16": ("bf16", 1e-39)}


def _dense(array: np.ndarray) -> str:
    return f'dense<"0x{np.ascontiguousarray(array).tobytes().hex().upper()}">'


def _compare_module(t: str, n: int, constants: list[np.ndarray], scalar: list[np.ndarray]) -> tuple[str, int]:
    """(module, results): every direction of a vs b, a vs a, a vs each constant of `constants` (a tensor
    constant), a vs each of `scalar` (a broadcast scalar constant) and each of those vs a."""
    tensor, lines, results = f"tensor<{n}x{t}>", [], []
    for i, c in enumerate(constants):
        lines.append(f"%c{i} = stablehlo.constant {_dense(c)} : {tensor}")
    for i, c in enumerate(scalar):
        lines.append(f"%s{i} = stablehlo.constant {_dense(c)} : tensor<{t}>")
        lines.append(f"%b{i} = stablehlo.broadcast_in_dim %s{i}, dims = [] : (tensor<{t}>) -> {tensor}")
    pairs = ([("%a", "%b"), ("%a", "%a")] + [("%a", f"%c{i}") for i in range(len(constants))]
             + [(x, y) for i in range(len(scalar)) for x, y in (("%a", f"%b{i}"), (f"%b{i}", "%a"))])
    for lhs, rhs in pairs:
        for d in DIRECTIONS:
            results.append(f"%r{len(results)}")
            lines.append(f"{results[-1]} = stablehlo.compare {d}, {lhs}, {rhs}, FLOAT : ({tensor}, {tensor}) -> "
                         f"tensor<{n}xi1>")
    types = ", ".join([f"tensor<{n}xi1>"] * len(results))
    body = "\n  ".join(lines)
    text = (f"func.func @main(%a: {tensor}, %b: {tensor}) -> ({types}) {{\n  {body}\n"
            f"  return {', '.join(results)} : {types}\n}}")
    return text, pairs


@pytest.mark.parametrize("dtype_name", list(DTYPES))
def test_every_compare_of_special_values_matches_numpy(backend, dtype_name):
    """Subnormals of both signs, +-0, NaN, +-inf, the smallest normal and 1, every pair, every direction, as
    arguments (nothing folds) and as constants: zero, a subnormal, a normal (left alone: exact under flushing),
    NaN, and a tensor constant of every value."""
    t, sub = DTYPES[dtype_name]
    dtype = np.dtype(getattr(ml_dtypes, dtype_name, None) or dtype_name)
    values = np.array([sub, -sub, 2 * sub, 0.0, -0.0, np.nan, np.inf, -np.inf, 1.0,
                       float(ml_dtypes.finfo(dtype).smallest_normal)], dtype)
    pairs = list(itertools.product(range(len(values)), repeat=2))
    a, b = values[[i for i, _ in pairs]], values[[j for _, j in pairs]]
    scalars = [np.array(v, dtype) for v in (0.0, -0.0, sub, -sub, 1.0, np.nan)]
    text, operand_pairs = _compare_module(t, len(pairs), [b], scalars)
    got = [np.asarray(r) for r in hj.from_mlir(text, backend=backend)(a, b)]
    named = {"%a": a.astype(np.float64), "%b": b.astype(np.float64), "%c0": b.astype(np.float64)}
    named.update({f"%b{i}": np.full(len(pairs), float(c)) for i, c in enumerate(scalars)})
    expected = [fn(named[x], named[y]) for x, y in operand_pairs for fn in DIRECTIONS.values()]
    for k, (g, e) in enumerate(zip(got, expected)):
        (x, y), d = operand_pairs[k // 6], list(DIRECTIONS)[k % 6]
        wrong = np.nonzero(g != e)[0]
        assert not len(wrong), f"{x} {d} {y}: wrong at {[(float(a[i]), float(b[i])) for i in wrong[:6]]}"


POSITIVE = """func.func @main(%a: tensor<3xf32>) -> tensor<3xi1> {
  %z = stablehlo.constant dense<0.0> : tensor<3xf32>
  %0 = stablehlo.compare GT, %a, %z, FLOAT : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xi1>
  return %0 : tensor<3xi1>
}"""


def test_compare_with_zero_becomes_bounds_on_the_bits_golden():
    """x > 0 is 0 < bits <= +inf's bits, as signed ints: the NaN test is in the upper bound."""
    count, text = rewritten(POSITIVE, subnormal_compares.float_compares_by_bits)
    assert count == 1
    assert text == """module {
  func.func @main(%arg0: tensor<3xf32>) -> tensor<3xi1> {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<3xf32>
    %0 = stablehlo.bitcast_convert %arg0 : (tensor<3xf32>) -> tensor<3xi32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %1 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<3xi32>
    %2 = stablehlo.compare GT, %0, %1, SIGNED : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi1>
    %c_0 = stablehlo.constant dense<2139095040> : tensor<i32>
    %3 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i32>) -> tensor<3xi32>
    %4 = stablehlo.compare LE, %0, %3, SIGNED : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi1>
    %5 = stablehlo.and %2, %4 : tensor<3xi1>
    return %5 : tensor<3xi1>
  }
}
"""


def test_two_variables_compare_keys_and_test_nans():
    text = POSITIVE.replace("%a: tensor<3xf32>", "%a: tensor<3xf32>, %z: tensor<3xf32>").replace(
        "  %z = stablehlo.constant dense<0.0> : tensor<3xf32>\n", "")
    count, out = rewritten(text, subnormal_compares.float_compares_by_bits)
    assert count == 1 and "FLOAT" not in out
    assert "stablehlo.negate" in out and "stablehlo.select" in out and "stablehlo.not" in out, out


@pytest.mark.parametrize("constant", ["1.0", "-1.17549435e-38", "0x7FC00000", "0x7F800000"])
def test_compares_with_a_normal_nan_or_infinite_constant_are_left_alone(constant):
    """A subnormal stands to these as its flushed +-0 does: IREE's compare is exact."""
    count, _ = rewritten(POSITIVE.replace("dense<0.0>", f"dense<{constant}>"),
                         subnormal_compares.float_compares_by_bits)
    assert count == 0


@pytest.mark.parametrize("direction", list(DIRECTIONS))
def test_a_value_compared_with_itself_is_left_alone(direction):
    """isnan's `x != x` and the like: flushing changes both sides alike (the numeric test above runs them on IREE)."""
    text = POSITIVE.replace("%a, %z", "%a, %a").replace("GT", direction)
    count, out = rewritten(text, subnormal_compares.float_compares_by_bits)
    assert count == 0 and f"stablehlo.compare {direction}, %arg0, %arg0, FLOAT" in out, out


@pytest.mark.parametrize("element, count", [("f16", 0), ("f32", 1)])
def test_compares_of_f16_widened_to_f32_are_left_alone(element, count):
    """vmvx computes f16 in f32, where no f16 value is subnormal."""
    text = f"""func.func @main(%w: tensor<3x{element}>, %v: tensor<3x{element}>) -> tensor<3xi1> {{
  %a = stablehlo.convert %w : (tensor<3x{element}>) -> tensor<3xf32>
  %b = stablehlo.convert %v : (tensor<3x{element}>) -> tensor<3xf32>
  %0 = stablehlo.compare GT, %a, %b, FLOAT : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xi1>
  return %0 : tensor<3xi1>
}}"""
    assert rewritten(text, subnormal_compares.float_compares_by_bits)[0] == count


@pytest.mark.parametrize("target, runs", [("cpu", True), ("vmvx", True), ("cuda", False)])
def test_only_the_cpu_targets_get_it(target, runs):
    applied, text = target_rewritten(POSITIVE, target)
    assert ("float_compares_by_bits" in applied) == runs
    assert ("FLOAT" in text) != runs


WHILE = """func.func @main(%a: tensor<f32>) -> tensor<f32> {
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = stablehlo.while(%x = %a) : tensor<f32>
    cond {
      %c = stablehlo.compare GT, %x, %z, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %c : tensor<i1>
    } do {
      %h = stablehlo.multiply %x, %z : tensor<f32>
      stablehlo.return %h : tensor<f32>
    }
  %1 = stablehlo.compare GT, %0, %z, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
  %2 = stablehlo.select %1, %0, %a : tensor<i1>, tensor<f32>
  return %2 : tensor<f32>
}"""


def test_compares_inside_while_loops_are_left_to_iree():
    """IREE 3.13's compiler crashed (SIGSEGV) on llvm-cpu compiling eigh's Jacobi loops with them rewritten."""
    count, text = rewritten(WHILE, subnormal_compares.float_compares_by_bits)
    assert count == 1 and text.count("FLOAT") == 1, text


def test_a_broadcast_constant_is_not_materialised():
    """x > c for a subnormal splat c broadcast to an activation's shape: the keys are splats again, and the rewrite
    reads the one element (it built the broadcast's whole array in numpy, and a float64 copy: 48 MB here)."""
    n = 1 << 22
    text = f"""func.func @main(%a: tensor<{n}xf32>) -> tensor<{n}xi1> {{
  %c = stablehlo.constant dense<1.0e-40> : tensor<f32>
  %b = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<f32>) -> tensor<{n}xf32>
  %0 = stablehlo.compare GT, %a, %b, FLOAT : (tensor<{n}xf32>, tensor<{n}xf32>) -> tensor<{n}xi1>
  return %0 : tensor<{n}xi1>
}}"""
    tracemalloc.start()
    try:
        count, out = rewritten(text, subnormal_compares.float_compares_by_bits)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert count == 1 and "stablehlo.bitcast_convert" in out
    assert peak < 4 << 20, f"{peak / 2**20:.1f} MB traced"
