"""Cross-target testing for users: does my function give the reference backend's answer everywhere?

    report = hj.testing.assert_targets_agree(fn, x, y, rtol=1e-5, atol=1e-6)
    print(report)

The reference backend (numpy) is the oracle. Each target that runs here is run and compared output by
output; a target that cannot run here (cuda without a GPU) is compiled, and reported as compile-only,
never silently skipped.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from . import backends
from .errors import BackendError, HlojitError
from .frontend import jit, pytree
from .pipeline import compile_program

DEFAULT_TARGETS = ("iree:cpu", "iree:vmvx", "iree:cuda")


@dataclasses.dataclass
class TargetResult:
    target: str
    status: str                       # "agrees", "disagrees", "compiled only", "failed"
    detail: str = ""
    worst: list = dataclasses.field(default_factory=list)   # per output: (max abs diff, max rel diff)

    def __str__(self):
        worst = "; ".join(f"out{i}: abs {a:.3g} rel {r:.3g}" for i, (a, r) in enumerate(self.worst))
        return f"{self.target:10s} {self.status:13s} {worst}{'  ' if worst and self.detail else ''}{self.detail}"


@dataclasses.dataclass
class Report:
    function: str
    results: list

    @property
    def ok(self) -> bool:
        return all(r.status in ("agrees", "compiled only") for r in self.results)

    def __str__(self):
        return "\n".join([f"{self.function}: reference vs each target"] + [f"  {r}" for r in self.results])


def _worst(actual, expected) -> tuple[float, float]:
    a, e = np.asarray(actual).astype(np.float64), np.asarray(expected).astype(np.float64)
    if a.size == 0:
        return 0.0, 0.0
    both_nan = np.isnan(a) & np.isnan(e)
    diff = np.where(both_nan | (a == e), 0.0, np.abs(a - e))
    scale = np.where(np.abs(e) > 0, np.abs(e), 1.0)
    return float(np.nanmax(np.where(np.isnan(diff), np.inf, diff))), float(np.nanmax(diff / scale))


def _can_run(target: str) -> tuple[bool, str]:
    backend = backends.get(target)
    driver = getattr(getattr(backend, "target", None), "driver", None)
    if driver is None:
        return True, ""
    try:
        backends.iree.device(driver)
    except BackendError as e:
        return False, str(e)
    return True, ""


def assert_targets_agree(fn, *args, targets=DEFAULT_TARGETS, rtol: float = 1e-6, atol: float = 1e-6,
                         **kwargs) -> Report:
    """Run `fn(*args, **kwargs)` on the reference backend and on each target; raise AssertionError
    (with the whole report) if a target that runs here disagrees beyond rtol/atol or fails to compile."""
    name = getattr(fn, "__name__", "function")
    fn = getattr(fn, "fn", fn)  # an hj.jit function: take the Python function it wraps
    expected = pytree.flatten(jit(fn, backend="reference")(*args, **kwargs))[0]
    results = []
    for target in targets:
        runs, why_not = _can_run(target)
        try:
            if not runs:
                program = jit(fn, backend=target).lower(*args, **kwargs).program
                compile_program(program, backends.get(target).target)
                results.append(TargetResult(target, "compiled only", f"(cannot run here: {why_not})"))
                continue
            actual = pytree.flatten(jit(fn, backend=target)(*args, **kwargs))[0]
        except HlojitError as e:
            results.append(TargetResult(target, "failed", str(e).splitlines()[0]))
            continue
        worst = [_worst(a, e) for a, e in zip(actual, expected)]
        agrees = all(np.allclose(np.asarray(a).astype(np.float64), np.asarray(e).astype(np.float64), rtol=rtol,
                                 atol=atol, equal_nan=True) and np.asarray(a).dtype == np.asarray(e).dtype
                     for a, e in zip(actual, expected))
        results.append(TargetResult(target, "agrees" if agrees else "disagrees", "", worst))
    report = Report(name, results)
    if not report.ok:
        raise AssertionError(f"targets disagree with the reference backend (rtol={rtol}, atol={atol}):\n{report}")
    return report
