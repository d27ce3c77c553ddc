"""hlojit's pytest plugin (registered as the `pytest11` entry point `hlojit`): the `hlojit_target` fixture.

    def test_model(hlojit_target):          # runs once per IREE target: iree:cpu, iree:vmvx, iree:cuda
        hlojit_target.check(model, x)       # reference vs this target (compile-only where it cannot run)

Tests that request `hlojit_target` are parametrised when collected, so a suite that never asks for it
never probes a device. Disable with `-p no:hlojit`.
"""
from __future__ import annotations

import pytest

from . import testing


def pytest_generate_tests(metafunc):
    """Parametrise every test that asks for `hlojit_target` (unless `parametrize_targets` already did)."""
    if "hlojit_target" not in metafunc.fixturenames:
        return
    for mark in metafunc.definition.iter_markers("parametrize"):
        names = mark.args[0] if mark.args else mark.kwargs.get("argnames", "")
        if "hlojit_target" in ([n.strip() for n in names.split(",")] if isinstance(names, str) else names):
            return
    metafunc.parametrize("hlojit_target", testing.targets_here(), ids=str, indirect=True)


@pytest.fixture
def hlojit_target(request) -> testing.TargetUnderTest:
    """An IREE target as `hj.testing.TargetUnderTest`: `.name`, `.runs` (iree:cuda compiles only where no GPU
    exists), `.jit(fn)`, `.check(fn, *args)`. The test runs once per target of `hj.testing.targets_here()`."""
    return request.param
