"""hj.testing.assert_targets_agree: the cross-target check users run on their own functions."""
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
    # no GPU here: cuda is compiled and said to be compile-only, not skipped
    assert by_target["iree:cuda"].status in ("agrees", "compiled only")
    assert "iree:cuda" in str(report)


def test_disagreement_raises_with_the_report():
    """With zero tolerance, the last bits of IREE's exp/sin/tanh differ from numpy's somewhere in 4096 values."""
    def chain(v):
        return ops.tanh(ops.exp(ops.sin(v) * 3.7) / 1.3)
    xs = np.linspace(-3, 3, 4096, dtype=np.float32)
    with pytest.raises(AssertionError, match=r"targets disagree.*rtol=0.0, atol=0.0") as e:
        hj.testing.assert_targets_agree(chain, xs, targets=("iree:cpu",), rtol=0.0, atol=0.0)
    assert "iree:cpu   disagrees" in str(e.value) and "out0: abs" in str(e.value)


def test_compile_failure_is_reported_not_skipped():
    """IREE 3.13's vmvx cannot lower f16 arithmetic: a failure to compile is a failed target."""
    x = np.ones(3, np.float16)
    with pytest.raises(AssertionError, match=r"iree:vmvx\s+failed\s+IREE could not compile"):
        hj.testing.assert_targets_agree(lambda v: v * 3, x, targets=("iree:cpu", "iree:vmvx"))
