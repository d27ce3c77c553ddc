"""The `hlojit` command line, run as users run it (subprocesses)."""
import os
import subprocess
import sys

import numpy as np

import hlojit as hj
from hlojit.__main__ import main, parse_value

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


# --- user errors, --arg/--input values, --target (in-process: main() returns the exit status) ---

SCALED = """
def scaled(params, x, s):
    return params["w"] * x * s + params["b"]
"""


def one_line_error(capsys, argv) -> str:
    """main(argv) fails as a user's mistake should: exit status 2 and one line on stderr, no traceback."""
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("hlojit: error: ") and "Traceback" not in err, err
    return err


def test_user_errors_are_one_line_and_exit_2(tmp_path, capsys):
    (tmp_path / "model.py").write_text(MODEL)
    model = f"{tmp_path / 'model.py'}:layer"
    assert "no.py: no such file" in one_line_error(capsys, ["explain", str(tmp_path / "no.py") + ":layer"])
    assert "is not FILE.py:FUNCTION" in one_line_error(capsys, ["export", str(tmp_path / "model.py"), "-o", "x"])
    assert "has no function 'nope'" in one_line_error(capsys, ["explain", model[:-5] + "nope"])
    wrong = one_line_error(capsys, ["explain", model, "--arg", "f32[2,3]", "--arg", "f32[4,5]", "--arg", "f32[5]"])
    assert "matmul: contracting dimensions differ: (2, 3) @ (4, 5) at model.py:5" in wrong
    assert "no artifact at" in one_line_error(capsys, ["run", str(tmp_path / "missing.vmfb")])
    assert "missing.mlir: no such file" in one_line_error(capsys, ["run", str(tmp_path / "missing.mlir")])
    assert "@nope.npy: no such file" in one_line_error(capsys, ["explain", model, "--arg", "@nope.npy"])
    assert "3 values for shape (2, 2)" in one_line_error(capsys, ["explain", model, "--arg", "2x2xf32=1 2 3"])
    assert "unknown dtype 'f31'" in one_line_error(capsys, ["explain", model, "--arg", "2xf31"])
    assert "do not read as int32" in one_line_error(capsys, ["explain", model, "--arg", "2xi32=1 x"])
    assert "cannot read 'f32(2)'" in one_line_error(capsys, ["explain", model, "--arg", "f32(2)"])


def test_a_user_error_in_a_real_process_is_one_line(tmp_path):
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run([sys.executable, "-m", "hlojit", "run", str(tmp_path / "missing.vmfb")],
                          capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and done.stderr.startswith("hlojit: error: ")


def test_values_in_iree_and_hlojit_syntax(tmp_path):
    np.testing.assert_array_equal(parse_value("8x64xf32=1"), np.ones((8, 64), np.float32))
    np.testing.assert_array_equal(parse_value("2x3xi32=1 2 3 4 5 6"), np.arange(1, 7, dtype=np.int32).reshape(2, 3))
    np.testing.assert_array_equal(parse_value("2x3xi32=1,2,3,4,5,6"), np.arange(1, 7, dtype=np.int32).reshape(2, 3))
    np.testing.assert_array_equal(parse_value("f32[8,64]=1"), np.ones((8, 64), np.float32))
    np.testing.assert_array_equal(parse_value("i64[2]=9007199254740993,-1"), np.array([2**53 + 1, -1]))
    for spec, expected in [("f32=2.5", np.float32(2.5)), ("f32[]=2.5", np.float32(2.5)),
                           ("4xf32", np.zeros(4, np.float32)), ("f32[2,3]", np.zeros((2, 3), np.float32)),
                           ("3xi1=true 0 1", np.array([True, False, True])), ("bf16[2]=1.5", None),
                           ("2xui8=255", np.array([255, 255], np.uint8))]:
        value = parse_value(spec)
        if expected is None:
            assert value.dtype == hj.bfloat16 and value.tolist() == [1.5, 1.5]
            continue
        assert value.dtype == expected.dtype and value.shape == np.shape(expected), spec
        np.testing.assert_array_equal(value, expected)
    for spec, expected in [("3", 3), ("2.5", 2.5), ("true", True), ("-1e3", -1000.0)]:
        assert parse_value(spec) == expected and type(parse_value(spec)) is type(expected)
    np.arange(6, dtype=np.float32).tofile(tmp_path / "raw.bin")
    np.testing.assert_array_equal(parse_value(f"2x3xf32=@{tmp_path / 'raw.bin'}"),
                                  np.arange(6, dtype=np.float32).reshape(2, 3))
    np.save(tmp_path / "x.npy", np.eye(2, dtype=np.float64))
    np.testing.assert_array_equal(parse_value(f"@{tmp_path / 'x.npy'}"), np.eye(2))


def test_pytrees_from_npz(tmp_path):
    np.savez(tmp_path / "plain.npz", w=np.ones(3, np.float32), b=np.zeros(3, np.float32))
    plain = parse_value(f"@{tmp_path / 'plain.npz'}")
    assert sorted(plain) == ["b", "w"] and plain["w"].tolist() == [1, 1, 1]
    tree = {"layers": [{"w": np.ones((2, 2), np.float32)}, {"w": np.full(2, 3, np.int32)}], "step": 7}
    hj.save_checkpoint(tmp_path / "ckpt.npz", tree)
    loaded = parse_value(f"@{tmp_path / 'ckpt.npz'}")
    assert loaded["step"] == 7 and loaded["layers"][1]["w"].tolist() == [3, 3]


def test_scalar_and_pytree_arguments_through_export_and_run(tmp_path, capsys):
    (tmp_path / "scaled.py").write_text(SCALED)
    np.savez(tmp_path / "params.npz", w=np.array([1, 2, 3, 4], np.float32), b=np.full(4, 0.5, np.float32))
    params, out = "@" + str(tmp_path / "params.npz"), str(tmp_path / "scaled")
    assert main(["export", f"{tmp_path / 'scaled.py'}:scaled", "--arg", params, "--arg", "4xf32", "--arg", "2.5",
                 "--target", "iree:cpu", "-o", out]) == 0
    capsys.readouterr()
    assert main(["run", out + ".vmfb", "--input", params, "--input", "4xf32=2", "--input", "2.5"]) == 0
    expected = np.array([1, 2, 3, 4], np.float32) * 2 * np.float32(2.5) + np.float32(0.5)
    assert capsys.readouterr().out.strip() == f"out0 = {expected!r}"


def test_run_explain_and_export_spell_targets_alike(tmp_path, capsys):
    """`--target vmvx` and `--target iree:vmvx` everywhere; run's old --backend is the same option."""
    mlir = os.path.join(ROOT, "tests", "data", "jax", "sin_affine.mlir")
    expected = np.sin(np.array([0, 1, 2], np.float32)) * 2 + 1
    for target in (["--target", "vmvx"], ["--target", "iree:vmvx"], ["--backend", "iree:vmvx"],
                   ["--target", "reference"]):
        assert main(["run", mlir, "--input", "3xf32=0 1 2", *target]) == 0
        out = capsys.readouterr().out.strip()
        assert out.startswith("out0 = array([") and out.endswith("dtype=float32)"), out
        values = [float(v) for v in out[len("out0 = array(["):out.index("]")].split(",")]
        np.testing.assert_allclose(values, expected, rtol=1e-6)
    (tmp_path / "model.py").write_text(MODEL)
    model, args = f"{tmp_path / 'model.py'}:layer", ["--arg", "2x3xf32", "--arg", "3x2xf32", "--arg", "2xf32"]
    assert main(["explain", model, *args, "--target", "iree:vmvx", "--stage", "stablehlo"]) == 0
    assert "stablehlo.dot_general" in capsys.readouterr().out
    assert main(["export", model, *args, "--target", "vmvx", "-o", str(tmp_path / "v")]) == 0
    assert main(["run", str(tmp_path / "v.vmfb"), "--input", "2x3xf32=1", "--input", "3x2xf32=1",
                 "--input", "2xf32=-1", "--target", "iree:vmvx"]) == 0
    assert capsys.readouterr().out.strip().endswith("out0 = array([[2., 2.],\n       [2., 2.]], dtype=float32)")
    assert "compiled for vmvx, not cpu" in one_line_error(capsys, ["run", str(tmp_path / "v.vmfb"), "--target", "cpu"])
