"""The README runs as written: every ```python block in a fresh process and folder, the shell commands of the
CLI section against the README's own model.py, and its pytest example under pytest with hlojit's plugin."""
import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
with open(os.path.join(ROOT, "README.md")) as _f:
    README = _f.read()
_BLOCK = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)
BLOCKS = [(m[1], m[2], README[:m.start()].count("\n") + 1) for m in _BLOCK.finditer(README)]
PYTHON = [(text, line) for kind, text, line in BLOCKS if kind == "python"]


def _env(**extra) -> dict:
    """PYTHONPATH at this checkout; the compile cache the suite uses (conftest's temp folder) unless moved."""
    return dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""), **extra)


def _run(command, cwd, env, shell=False) -> subprocess.CompletedProcess:
    return subprocess.run(command, cwd=cwd, env=env, shell=shell, capture_output=True, text=True, timeout=300)


def _block_named(first_line: str) -> str:
    """The python block whose first line is `first_line` (the README names its files that way)."""
    return next(text for text, _ in PYTHON if text.splitlines()[0] == first_line)


def test_the_readme_has_the_blocks_these_tests_run():
    assert len(PYTHON) >= 6 and {"# model.py", "# test_model.py"} <= {t.splitlines()[0] for t, _ in PYTHON}
    assert all(kind in ("python", "sh", "") for kind, _, _ in BLOCKS)   # nothing python-like left unfenced


@pytest.mark.parametrize("text, line", PYTHON, ids=[f"README.md:{line}" for _, line in PYTHON])
def test_python_block_runs_as_written(text, line, tmp_path):
    (tmp_path / "block.py").write_text(text)
    done = _run([sys.executable, "block.py"], tmp_path, _env())
    assert done.returncode == 0, f"README.md:{line} failed:\n{done.stderr[-3000:]}"


def test_shell_commands_of_the_cli_section_run(tmp_path):
    """The sh block after `# model.py`, line by line, in a fresh folder with an empty compile cache of its own."""
    (tmp_path / "model.py").write_text(_block_named("# model.py"))
    after_model = README[README.index("# model.py\n"):]
    commands = [line for line in _BLOCK.search(after_model, after_model.index("```sh"))[2].splitlines()
                if line.strip()]
    assert any("run out/layer.vmfb --input 8x64xf32=1" in c for c in commands)
    env = _env(HLOJIT_CACHE_DIR=str(tmp_path / "cache"))
    outputs = {}
    for command in commands:
        assert command.startswith("python "), command
        done = _run(f"{sys.executable} {command[len('python '):]}", tmp_path, env, shell=True)
        assert done.returncode == 0, f"{command}\n{done.stderr[-3000:]}"
        outputs[command] = done.stdout
    runs = [out for command, out in outputs.items() if " run " in command]
    # relu(ones(8, 64) @ full((64, 32), 0.5)) is 32 everywhere, from the vmfb and from the .mlir alike
    assert len(runs) == 2 and all(out.startswith("out0 = array([[32., 32.,") for out in runs)
    assert all("dtype=float32" in out and out.count("32.") == 8 * 32 for out in runs)


def test_the_pytest_example_passes_under_pytest(tmp_path):
    """README's test_model.py with the plugin named by -p (a checkout is not installed: no entry point)."""
    (tmp_path / "test_model.py").write_text(_block_named("# test_model.py"))
    done = _run([sys.executable, "-m", "pytest", "-p", "hlojit.pytest_plugin", "-p", "no:cacheprovider", "-v",
                 "test_model.py"], tmp_path, _env(PYTEST_DISABLE_PLUGIN_AUTOLOAD="1"))
    assert done.returncode == 0, done.stdout[-3000:]
    for test_id in ("test_model_on_every_target[iree:cpu]", "test_model_on_every_target[iree:vmvx]",
                    "test_model_on_every_target[iree:cuda]", "test_model_values[iree:cpu]",
                    "test_model_values[iree:vmvx]"):
        assert f"{test_id} PASSED" in done.stdout, done.stdout
    assert "5 passed" in done.stdout
