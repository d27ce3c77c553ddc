"""f.explain(): every stage from StableHLO to machine code, and what fused with what."""
import os

import numpy as np
import pytest

import hlojit as hj
from hlojit import ops

HERE = os.path.basename(__file__)


def relu_2x_plus_1(x):
    y = 2 * x  # line-multiply
    y = y + 1  # line-add
    return ops.relu(y)  # line-relu


def line(marker):
    with open(__file__) as f:
        return next(i for i, text in enumerate(f, 1) if f"# {marker}" in text and "line(" not in text)


@pytest.fixture(scope="module")
def relu_explained():
    return hj.jit(relu_2x_plus_1).explain(np.zeros(4096, np.float32))


def test_relu_is_one_dispatch_with_three_ops_and_their_lines(relu_explained):
    e = relu_explained
    assert e.dispatch_count == 1
    (dispatch,) = e.dispatch_report
    assert {op for op, _, _ in dispatch.ops} == {"multiply", "add", "maximum"}
    assert dispatch.lines == [f"{HERE}:{line('line-multiply')}", f"{HERE}:{line('line-add')}",
                              f"{HERE}:{line('line-relu')}"]
    summary = str(e)
    assert "dispatches: 1" in summary and "main_dispatch_0: add, maximum, multiply" in summary
    assert "compile:" in summary and "artifact:" in summary and e.vmfb_size > 0


def test_every_stage_is_text(relu_explained):
    e = relu_explained
    assert "stablehlo.multiply" in e.stage("stablehlo") and f'{HERE}":{line("line-add")}' in e.stage("stablehlo")
    assert "linalg.generic" in e.stage("optimized")
    assert "flow.executable" in e.stage("dispatches")
    assert "define " in e.stage("llvm_ir") and "main_dispatch_0" in e.stage("llvm_ir")
    asm = e.stage("assembly")
    assert "main_dispatch_0" in asm and ("vmaxps" in asm or "maxps" in asm)   # the fused maximum, in x86 SIMD
    assert set(e.phase_seconds) >= {"input", "global-optimization", "dispatch-creation", "hal", "end"}
    assert e.op_counts["stablehlo"]["stablehlo.multiply"] == 1
    with pytest.raises(ValueError, match="unknown stage"):
        e.stage("bytecode")


def test_matmul_bias_relu_fuse_into_a_matmul_dispatch():
    """The bias and relu run in a dispatch of the matmul's (data tiling: the one that unpacks its result)."""
    def layer(x, w, b):
        y = x @ w  # line-matmul
        return ops.relu(y + b)  # line-bias-relu
    e = hj.jit(layer).explain(np.zeros((8, 64), np.float32), np.zeros((64, 32), np.float32),
                              np.zeros(32, np.float32))
    matmul_dispatch = next(d for d in e.dispatch_report if {op for op, _, _ in d.ops} >= {"add", "maximum"})
    assert "dot_general" in {op for op, _, _ in matmul_dispatch.ops}
    assert f"{HERE}:{line('line-matmul')}" in matmul_dispatch.lines and f"{HERE}:{line('line-bias-relu')}" in \
        matmul_dispatch.lines


def test_cuda_explain_gives_ptx_without_a_gpu():
    e = hj.jit(lambda x: ops.exp(x).sum(axis=1)).explain(np.zeros((64, 64), np.float32), target="cuda")
    assert e.target.name == "cuda" and e.dispatch_count >= 1
    assert ".entry" in e.stage("assembly") or ".visible" in e.stage("assembly")


def test_explain_after_a_compile_prints_nothing(capfd):
    """A compile's statistics dump named its scratch folder in the shared session, so a later explain in that
    session tried to write the removed file and printed IREE's error and the statistics to stderr."""
    x = np.arange(3, dtype=np.float32)
    hj.jit(lambda v: v * 7 - 2)(x)
    capfd.readouterr()
    hj.jit(lambda v: v * 5 + 3).explain(x)
    err = capfd.readouterr().err
    assert "Error opening" not in err and "stream-aggregate" not in err
