"""The `hlojit` command line, run as users run it (subprocesses)."""
import os
import subprocess
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODEL = """
from hlojit import ops

def layer(x, w, b):
    y = x @ w
    return ops.relu(y + b)
"""


def hlojit(*args, cwd=None):
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run([sys.executable, "-m", "hlojit", *args], capture_output=True, text=True, env=env,
                          cwd=cwd, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_explain_summary_and_a_stage(tmp_path):
    (tmp_path / "model.py").write_text(MODEL)
    target = f"{tmp_path / 'model.py'}:layer"
    summary = hlojit("explain", target, "--arg", "f32[8,64]", "--arg", "f32[64,32]", "--arg", "f32[32]")
    assert "dispatches: " in summary and "add, dot_general, maximum  <-  model.py:5, model.py:6" in summary
    assembly = hlojit("explain", target, "--arg", "f32[8,64]", "--arg", "f32[64,32]", "--arg", "f32[32]",
                      "--stage", "assembly")
    assert "main_dispatch_0" in assembly and "@function" in assembly


def test_run_a_mlir_file_with_inputs(tmp_path):
    np.save(tmp_path / "x.npy", np.array([0, 1, 2], np.float32))
    out = hlojit("run", os.path.join(ROOT, "tests", "data", "jax", "sin_affine.mlir"), "--input",
                 "@" + str(tmp_path / "x.npy"), "--backend", "reference")
    expected = np.sin(np.array([0, 1, 2], np.float32)) * 2 + 1
    assert out.startswith("out0 = array([") and f"{expected[1]:.6f}"[:6] in out


def test_targets_lists_every_backend_and_why_not():
    out = hlojit("targets")
    assert "iree:cpu   runs here" in out and "reference  runs here" in out
    assert "iree:cuda" in out


def test_export_then_run_the_vmfb(tmp_path):
    (tmp_path / "model.py").write_text(MODEL)
    hlojit("export", f"{tmp_path / 'model.py'}:layer", "--arg", "f32[2,3]", "--arg", "f32[3,2]", "--arg", "f32[2]",
           "--target", "cpu", "-o", str(tmp_path / "layer"))
    assert (tmp_path / "layer.vmfb").exists() and (tmp_path / "layer.json").exists()
    out = hlojit("run", str(tmp_path / "layer.vmfb"), "--input", "f32[2,3]=1,2,3,4,5,6",
                 "--input", "f32[3,2]=1,0,0,1,1,1", "--input", "f32[2]=-10,0")
    x, w = np.arange(1, 7, dtype=np.float32).reshape(2, 3), np.array([[1, 0], [0, 1], [1, 1]], np.float32)
    expected = np.maximum(x @ w + np.array([-10, 0], np.float32), 0)
    assert out.strip() == f"out0 = {expected!r}"
