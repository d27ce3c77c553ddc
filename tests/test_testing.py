"""hj.testing.assert_targets_agree: the cross-target check users run on their own functions."""
import importlib
import os
import subprocess
import sys
import tomllib

import numpy as np
import pytest

import hlojit as hj
from hlojit import ops


def model(x, w):
    return {"y": ops.tanh(x @ w), "total": (x * 2).sum(axis=0)}


def test_agreeing_function_reports_every_target():
    x = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
    w = np.linspace(0, 1, 8, dtype=np.float32).reshape(4, 2)
    report = hj.testing.assert_targets_agree(model, x, w, rtol=1e-5, atol=1e-6)
    by_target = {r.target: r for r in report.results}
    assert by_target["iree:cpu"].status == "agrees" and by_target["iree:vmvx"].status == "agrees"
    assert len(by_target["iree:cpu"].worst) == 2
    # by default only what runs here: iree:cuda is checked only where a GPU exists
    gpu = hj.testing.targets_here()[2].runs
    assert list(by_target) == ["iree:cpu", "iree:vmvx"] + (["iree:cuda"] if gpu else [])


def test_cuda_asked_for_is_compiled_where_it_cannot_run():
    x = np.linspace(-1, 1, 6, dtype=np.float32)
    report = hj.testing.assert_targets_agree(model, x.reshape(2, 3), x.reshape(3, 2), targets=("iree:cuda",))
    assert report.results[0].status in ("agrees", "compiled only") and "iree:cuda" in str(report)


def test_disagreement_raises_with_the_report():
    """With zero tolerance, the last bits of IREE's exp/sin/tanh differ from numpy's somewhere in 4096 values."""
    def chain(v):
        return ops.tanh(ops.exp(ops.sin(v) * 3.7) / 1.3)
    xs = np.linspace(-3, 3, 4096, dtype=np.float32)
    with pytest.raises(AssertionError, match=r"targets disagree.*rtol=0.0, atol=0.0") as e:
        hj.testing.assert_targets_agree(chain, xs, targets=("iree:cpu",), rtol=0.0, atol=0.0)
    assert "iree:cpu   disagrees" in str(e.value) and "out0: abs" in str(e.value)


def test_compile_failure_is_reported_not_skipped():
    """IREE 3.13's vmvx cannot convert f64 to f32 (arith.truncf): a failure to compile is a failed target."""
    x = np.ones(3, np.float64)
    with pytest.raises(AssertionError, match=r"iree:vmvx\s+failed\s+IREE could not compile"):
        hj.testing.assert_targets_agree(lambda v: ops.astype(v, np.float32), x, targets=("iree:cpu", "iree:vmvx"))


def test_static_arguments_of_a_jit_function_stay_static():
    """A Python loop over a static count: tracing the count (as a re-jit of fn.fn did) cannot run it."""
    @hj.jit(static_argnums=1)
    def doubled(x, times):
        for _ in range(times):
            x = x * 2
        return x
    report = hj.testing.assert_targets_agree(doubled, np.arange(4, dtype=np.float32), 3)
    assert all(r.status == "agrees" for r in report.results)
    np.testing.assert_array_equal(np.asarray(hj.jit(doubled, backend="reference")(np.ones(2, np.float32), 3)),
                                  [8, 8])


def test_the_functions_keyword_arguments_never_collide_with_the_options():
    def loss(logits, targets, rtol=0.0):
        return ops.sum((logits - targets) ** 2) + rtol
    logits, labels = np.linspace(0, 1, 6, dtype=np.float32), np.ones(6, np.float32)
    report = hj.testing.assert_targets_agree(loss, logits, kwargs={"targets": labels, "rtol": 1.0},
                                             targets=("iree:cpu",), rtol=1e-5)
    assert [r.status for r in report.results] == ["agrees"]
    with pytest.raises(TypeError, match=r"targets= takes a tuple of target names.*kwargs="):
        hj.testing.assert_targets_agree(loss, logits, targets=labels)


def test_targets_here_says_what_runs():
    here = {t.name: t for t in hj.testing.targets_here()}
    assert list(here) == ["iree:cpu", "iree:vmvx", "iree:cuda"]
    assert here["iree:cpu"].runs and here["iree:vmvx"].runs and str(here["iree:cpu"]) == "iree:cpu"
    assert here["iree:cuda"].runs or "cuda" in here["iree:cuda"].why_not


pytest_plugins = ["pytester"]

USER_SUITE = """
import numpy as np
import pytest
import hlojit as hj
from hlojit import ops

X = np.linspace(-1, 1, 8, dtype=np.float32)

def model(x):
    return ops.tanh(x) * 2

def test_fixture(hlojit_target):
    report = hlojit_target.check(model, X, rtol=1e-5)
    assert [r.target for r in report.results] == [hlojit_target.name]
    assert report.results[0].status == ("agrees" if hlojit_target.runs else "compiled only")

@pytest.fixture
def doubled(hlojit_target):             # a fixture of the user's own, built on hlojit_target
    return hlojit_target.jit(lambda x: x * 2)

def test_through_a_fixture(doubled, hlojit_target):
    if not hlojit_target.runs:
        pytest.skip(hlojit_target.why_not)
    np.testing.assert_array_equal(doubled(X), X * 2)

@hj.testing.parametrize_targets(targets=("iree:cpu", "iree:vmvx"))
def test_decorator(hlojit_target):
    np.testing.assert_allclose(hlojit_target.jit(model)(X), np.tanh(X) * 2, rtol=1e-5)

@hj.testing.parametrize_targets(argname="target", targets=("iree:vmvx",))
def test_decorator_own_name(target):
    assert target.name == "iree:vmvx" and target.runs
"""


def test_plugin_and_decorator_in_a_users_suite(pytester, monkeypatch):
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")   # -p names it, whether installed or not
    pytester.makepyfile(test_user=USER_SUITE)
    result = pytester.runpytest("-p", "hlojit.pytest_plugin", "-p", "no:cacheprovider", "-v")
    gpu = hj.testing.targets_here()[2].runs
    result.assert_outcomes(passed=9 if gpu else 8, skipped=0 if gpu else 1)
    result.stdout.fnmatch_lines(["*test_fixture?iree:cpu? PASSED*", "*test_fixture?iree:cuda? PASSED*",
                                 "*test_decorator?iree:vmvx? PASSED*", "*test_decorator_own_name?iree:vmvx? PASSED*"])
    assert "test_decorator[iree:cuda]" not in result.stdout.str()


def test_the_plugin_is_registered_as_a_pytest11_entry_point():
    with open(os.path.join(os.path.dirname(os.path.dirname(__file__)), "pyproject.toml"), "rb") as f:
        entry_points = tomllib.load(f)["project"]["entry-points"]["pytest11"]
    assert entry_points == {"hlojit": "hlojit.pytest_plugin"}
    assert callable(importlib.import_module(entry_points["hlojit"]).hlojit_target)


def test_import_hlojit_ops_as_a_module():
    """In a fresh interpreter: `import hlojit.ops` used to fail (only `from hlojit import ops` worked)."""
    code = ("import hlojit.ops as o, hlojit, numpy as np\n"
            "from hlojit.ops import exp\n"
            "assert o is hlojit.ops and exp is o.exp\n"
            "print(float(np.asarray(hlojit.jit(o.exp)(np.float32(0)))))")
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "1.0", done.stderr
