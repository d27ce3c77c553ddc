"""Cross-target testing for users: does my function give the reference backend's answer everywhere?

    report = hj.testing.assert_targets_agree(fn, x, y, rtol=1e-5, atol=1e-6)
    print(report)

The reference backend (numpy) is the oracle. Each target that runs here is run and compared output by
output. A target named in `targets=` that cannot run here (iree:cuda without a GPU) is compiled and
reported as compile-only, never silently skipped; by default only the targets that run here are checked.

In a pytest suite: the `hlojit_target` fixture (hlojit's pytest plugin, `hlojit.pytest_plugin`) or the
`parametrize_targets` decorator run a test once per target of `targets_here()`.
"""
from __future__ import annotations

import dataclasses
import functools

import numpy as np

from . import backends
from .errors import BackendError, HlojitError
from .frontend import Exec, jit, pytree
from .pipeline import compile_program

IREE_TARGETS = ("iree:cpu", "iree:vmvx", "iree:cuda")


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


@functools.lru_cache(maxsize=None)
def _can_run(target: str) -> tuple[bool, str]:
    """(runs here, why not). Asked once per process: whether a driver has a device does not change."""
    backend = backends.get(target)
    driver = getattr(getattr(backend, "target", None), "driver", None)
    if driver is None:
        return True, ""
    try:
        backends.iree.device(driver)
    except BackendError as e:
        return False, str(e)
    return True, ""


@dataclasses.dataclass(frozen=True)
class TargetUnderTest:
    """One IREE target a test runs on (the value of the `hlojit_target` fixture): `name` ("iree:cpu" ...),
    whether it `runs` here (iree:cuda without a GPU only compiles) and `why_not`."""
    name: str
    runs: bool
    why_not: str = ""

    def __str__(self):
        return self.name

    def jit(self, fn, **options) -> Exec:
        """`hj.jit(fn, backend=this target, **options)`; calling it where the target does not run raises."""
        return jit(fn, backend=self.name, **options)

    def check(self, fn, *args, rtol: float = 1e-6, atol: float = 1e-6, kwargs=None) -> Report:
        """`assert_targets_agree` on this target alone: run and compared where it runs, compiled elsewhere."""
        return assert_targets_agree(fn, *args, targets=(self.name,), rtol=rtol, atol=atol, kwargs=kwargs)


def targets_here() -> tuple[TargetUnderTest, ...]:
    """Every IREE target, each saying whether it runs on this machine (the reference backend is the oracle)."""
    return tuple(TargetUnderTest(name, *_can_run(name)) for name in IREE_TARGETS)


def parametrize_targets(test=None, *, argname: str = "hlojit_target", targets=None):
    """A pytest decorator: run `test` once per target, passing a `TargetUnderTest` as `argname`.

        @hj.testing.parametrize_targets
        def test_model(hlojit_target):
            hlojit_target.check(model, x)

    `targets`: names to keep (default: all of `targets_here()`). pytest is imported here, not at the top:
    it is a test-time dependency, and `import hlojit` must work without it."""
    import pytest
    chosen = [t for t in targets_here() if targets is None or t.name in targets]
    mark = pytest.mark.parametrize(argname, chosen, ids=str)
    return mark if test is None else mark(test)


def _default_targets() -> tuple[str, ...]:
    return tuple(name for name in IREE_TARGETS if _can_run(name)[0])


def _as_jit(fn, target: str):
    """`fn` jitted for `target`. An hj.jit function keeps its static arguments (its other options are about
    running, not about what is computed; donation would consume the arguments before the next target)."""
    if isinstance(fn, Exec):
        return jit(fn.fn, backend=target, static_argnames=tuple(fn._static - {"self"}))
    return jit(fn, backend=target)


def assert_targets_agree(fn, *args, targets=None, rtol: float = 1e-6, atol: float = 1e-6,
                         kwargs: dict | None = None) -> Report:
    """Run `fn(*args, **kwargs)` on the reference backend and on each target; raise AssertionError
    (with the whole report) if a target disagrees beyond rtol/atol or fails to compile.

    `fn`'s keyword arguments go in `kwargs={...}`, so none of its names can collide with `targets`, `rtol`
    or `atol`. `targets` (default: the IREE targets that run here) may name one that cannot run here:
    that one is compiled and reported as compile-only."""
    name = getattr(fn, "__name__", "function")
    if targets is not None and (isinstance(targets, str) or not all(isinstance(t, str) for t in targets)):
        raise TypeError(f"assert_targets_agree: targets= takes a tuple of target names ({', '.join(IREE_TARGETS)}),"
                        f" not {type(targets).__name__}; {name}'s own arguments go in args or kwargs={{...}}")
    kwargs = kwargs or {}
    expected = pytree.flatten(_as_jit(fn, "reference")(*args, **kwargs))[0]
    results = []
    for target in _default_targets() if targets is None else targets:
        runs, why_not = _can_run(target)
        try:
            if not runs:
                program = _as_jit(fn, target).lower(*args, **kwargs).program
                compile_program(program, backends.get(target).target)
                results.append(TargetResult(target, "compiled only", f"(cannot run here: {why_not})"))
                continue
            actual = pytree.flatten(_as_jit(fn, target)(*args, **kwargs))[0]
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
