"""f.explain(): every stage from StableHLO to machine code, and what fused with what."""
import dataclasses
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


def kernel_layer(x, w):
    y = x @ w  # line-kernel-product
    return ops.relu(y)  # line-kernel-relu


def test_hand_written_kernels_are_dispatches_with_their_ops_lines_and_code():
    """A product the matmul-kernels flag set makes a dispatch of hlojit's own (pipeline/matmul_kernel.py: the
    packing of its right operand, then the product with the relu after it) is in the report with the ops it stands
    for and the user's lines, its code in the llvm_ir and assembly stages. explain listed IREE's own dispatches
    only: this layer read "dispatches: 0", and a training step's products were missing from its list."""
    x = np.zeros((256, 256), np.float32)
    e = hj.jit(kernel_layer).explain(x, x, target=hj.pipeline.cpu(flag_set="data-tiling+matmul-kernels"))
    assert e.dispatch_count == len(e.dispatch_report) == 2
    pack, product = e.dispatch_report
    assert pack.name.endswith("_pack") and product.name.startswith("hlojit_matmul_kernel_256x256_256x256_c10_then")
    for kernel in (pack, product):
        assert {op for op, _, _ in kernel.ops} == {"dot_general", "maximum"}
        assert kernel.lines == [f"{HERE}:{line('line-kernel-product')}", f"{HERE}:{line('line-kernel-relu')}"]
    assert f"{product.name}: dot_general, maximum" in str(e)
    assert "define " in e.llvm_ir[product.name] and "vfmadd" in e.assembly[product.name]
    assert set(e.assembly) == {pack.name, product.name}


def test_a_target_name_explains_what_calls_compile(monkeypatch):
    """explain(target="cpu") compiled with the plain data-tiling flags while this machine's calls compile with the
    set its tuning measured fastest (pipeline/tuning.py): it explained a program the calls never ran."""
    backend = hj.backends.get("iree:cpu")
    assert backend.target.flag_set == "data-tiling"       # the suite's pin (conftest)
    chosen = dataclasses.replace(hj.pipeline.cpu(flag_set="data-tiling+matmul-kernels"), note="a test's choice")
    monkeypatch.setattr(backend, "_target", chosen)
    x = np.zeros((256, 256), np.float32)
    for name in ("cpu", "iree:cpu"):
        e = hj.jit(kernel_layer).explain(x, x, target=name)
        assert e.target == chosen and e.rewrites.get("matmuls_by_kernel") == 1
        assert str(e).splitlines()[0] == "kernel_layer on cpu[data-tiling+matmul-kernels] (a test's choice)"
    assert hj.jit(kernel_layer).explain(x, x, target="vmvx").target.name == "vmvx"
    with pytest.raises(ValueError, match="unknown target 'tpu'"):
        hj.jit(kernel_layer).explain(x, x, target="tpu")
