"""CHLO ops expanded into StableHLO before the other target rewrites, on llvm-cpu as on vmvx (IREE expands them after
hlojit's rewrites, so the ops of their expansions missed every fix): f64 polygamma did not link on llvm-cpu (its
digamma reflection's f64 sin and cos) and f32 polygamma(2, -1.5) was NaN there. Checked against scipy.special."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.special as sp

import hlojit as hj
from test_legalize import target_rewritten

_T = "tensor<8x{t}>"
ZETA_POLYGAMMA = """func.func @main(%x: {T}, %q: {T}, %n: {T}, %y: {T}) -> ({T}, {T}) {{
  %0 = chlo.zeta %x, %q : {T}, {T} -> {T}
  %1 = chlo.polygamma %n, %y : {T}, {T} -> {T}
  return %0, %1 : {T}, {T}
}}"""
X = [5.0, 1.5, 2.0, 3.0, 4.5, 2.0, 10.0, 3.0]
Q = [0.75, 10.0, 1.0, 0.5, 2.5, 100.0, 1.0, 0.1]
N = [1.0, 2.0, 0.0, 3.0, 1.0, 4.0, 0.0, 2.0]
Y = [0.25, 7.0, 5.0, 3.0, 0.1, 20.0, -2.5, -1.5]      # negative y: the reflection (sin, cos of pi y)
# CHLO's own expansion (the same on the reference backend as on IREE): f64 zeta within 4 ulps, polygamma 6; f32
# polygamma within 25 ulps
TOLERANCE = {"f32": 5e-6, "f64": 2e-14}


@pytest.mark.parametrize("t", ["f32", "f64"])
def test_zeta_and_polygamma_match_scipy(backend, t):
    dtype = np.float32 if t == "f32" else np.float64
    text = ZETA_POLYGAMMA.format(T=_T.format(t=t))
    zeta, polygamma = (np.asarray(r) for r in hj.from_mlir(text, backend=backend)(
        *(np.array(v, dtype) for v in (X, Q, N, Y))))
    np.testing.assert_allclose(zeta, sp.zeta(X, Q), rtol=TOLERANCE[t], atol=0)
    np.testing.assert_allclose(polygamma, sp.polygamma(np.int64(N), Y), rtol=TOLERANCE[t], atol=0)


@pytest.mark.parametrize("target, expanded", [("cpu", True), ("vmvx", True), ("cuda", False)])
def test_chlo_is_expanded_first_on_the_cpu_targets(target, expanded):
    applied, text = target_rewritten(ZETA_POLYGAMMA.format(T=_T.format(t="f64")), target)
    assert ("chlo_as_stablehlo" in applied) == expanded and ("chlo.polygamma" in text) != expanded
    if target == "cpu":   # the expansion's f64 sine and cosine got the exact reduction (llvm-cpu links none)
        assert "trig_by_exact_reduction" in applied and "stablehlo.sine" not in text
