"""The math rewrites of pipeline/accurate_math.py (exact-reduction trig, atan2, cbrt, f64 tanh, fmod ...): which
ops each takes, the map each becomes, and what IREE compiles of it. Their numbers against numpy: test_ops_math,
test_legalize_remainder, the conformance cases."""
from __future__ import annotations

import numpy as np
import pytest

import hlojit as hj
from hlojit import ops
from hlojit.frontend.from_mlir import parse
from hlojit.pipeline import accurate_math, compile_program, targets

from test_legalize import unary_module, rewritten


def test_f64_remainder_becomes_integer_fmod():
    """The mantissas' remainder in u64 (a while loop shifts the exponent difference in); no f64 remainder is left."""
    count, text = rewritten(unary_module("remainder %a, %a", "f64"), accurate_math.f64_by_basic_ops)
    assert count == 1 and "stablehlo.while" in text and "stablehlo.remainder" in text
    assert all("xui64>" in line for line in text.splitlines() if "stablehlo.remainder" in line), text


def test_f64_tanh_becomes_expm1_polynomial():
    count, text = rewritten(unary_module("tanh %a", "f64"), accurate_math.f64_by_basic_ops)
    assert count == 1 and "stablehlo.tanh" not in text and "stablehlo.exponential " in text


@pytest.mark.parametrize("op, dtype", [("tanh %a", "f32"), ("remainder %a, %a", "f32"), ("sine %a", "f64")])
def test_f64_only_rewrite_leaves_other_ops_alone(op, dtype):
    count, _ = rewritten(unary_module(op, dtype), accurate_math.f64_by_basic_ops)
    assert count == 0


def test_half_float_trig_computes_in_f32():
    count, text = rewritten(unary_module("sine %a", "f16"), accurate_math.trig_by_exact_reduction)
    assert count == 1 and "(tensor<f16>) -> tensor<f32>" in text and "(tensor<f32>) -> tensor<f16>" in text


@pytest.mark.parametrize("op, dtype, rewrite", [
    ("sine %a", "f64", accurate_math.trig_by_exact_reduction), ("tan %a", "f32", accurate_math.trig_by_exact_reduction),
    ("atan2 %a, %a", "f64", accurate_math.trig_by_exact_reduction), ("cbrt %a", "f64", accurate_math.cbrt_by_exp_log),
    ("tanh %a", "f64", accurate_math.f64_by_basic_ops)])
def test_each_rewritten_math_op_is_one_map_and_one_dispatch(op, dtype, rewrite):
    """The basic ops an op becomes are the body of one stablehlo.map: built on the tensors, IREE 3.13 cut the
    exact reduction's shared integer limbs into separate dispatches (f64 sine: 14, each writing its
    intermediates to memory: 2^20 points in 25.5 ms against numpy's 9.4)."""
    text = unary_module(op, dtype)
    count, after = rewritten(text, rewrite)
    assert count == 1 and after.count("stablehlo.map") == 1 and f"stablehlo.{op.split()[0]}" not in after
    assert compile_program(parse(text), targets.cpu()).dispatch_count == 1


def test_exact_reduction_reads_the_right_bits_of_two_over_pi_at_every_exponent():
    """sin and cos at x = m 2**E for every exponent E of f32 and f64 from 2**-1 to the largest (each E reads its own
    window of 2/pi's bits: accurate_math._window's shifter), against numpy within a few ulp of 1."""
    rng = np.random.default_rng(7)
    inputs = []
    for dtype in (np.float32, np.float64):
        top = np.finfo(dtype).maxexp - 1
        exponents = np.repeat(np.arange(-1, top + 1), 3)
        x = np.ldexp(1 + rng.random(exponents.size), exponents) * rng.choice([-1, 1], exponents.size)
        inputs.append(x.astype(dtype))
    outputs = hj.jit(lambda a, b: [ops.sin(a), ops.cos(a), ops.sin(b), ops.cos(b)], backend="iree:cpu")(*inputs)
    for got, fn, x in zip(outputs, [np.sin, np.cos] * 2, [inputs[0]] * 2 + [inputs[1]] * 2):
        eps = np.finfo(x.dtype).eps
        np.testing.assert_allclose(np.asarray(got, np.float64), fn(x.astype(np.float64)), rtol=0, atol=2 * eps)
