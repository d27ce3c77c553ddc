"""Tiered compilation (pipeline/tiered.py): a quick build first, the optimised one compiled in a child process
and swapped in; invisible to the caller (same values, output types, donations), the persistent cache holding
only optimised builds, HLOJIT_TIERED=0 turning it off, and an exit that never waits for nor crashes on a
background build. The suite turns tiering off (conftest.py); these tests turn it on for their own functions,
with MIN_OPS at 0 so small functions are tiered too."""
import logging
import os
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import hlojit as hj
from hlojit.errors import BackendError
from hlojit.pipeline import cache, targets, tiered
from conftest import assert_close

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WAIT = 300   # seconds a background build may take on a loaded 2-core machine


@pytest.fixture
def tiering(tmp_path, monkeypatch):
    """Tiering on (it is off by default) for every program, with a compile cache of this test's own."""
    monkeypatch.setenv("HLOJIT_TIERED", "1")
    monkeypatch.setenv("HLOJIT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(tiered, "MIN_OPS", 0)


@pytest.fixture
def held(monkeypatch):
    """Background builds that start only when the test says: [(background, on_ready)], run by `release`."""
    started = []
    monkeypatch.setattr(tiered.Background, "start", lambda self, on_ready: started.append((self, on_ready)))
    return started


def release(started):
    for background, on_ready in started:
        background._run(on_ready)   # in this thread: the test decides when the swap happens
    started.clear()


def step(p, g):
    return p - 0.5 * g, ((p * g) ** 2).sum()


def test_the_quick_build_runs_first_and_the_optimised_one_replaces_it(tiering, held, monkeypatch, caplog):
    monkeypatch.setenv("HLOJIT_LOG", "compiles")
    f = hj.jit(step, donate_argnums=0)
    p, g = np.linspace(-1, 1, 64, dtype=np.float32), np.full(64, 0.25, np.float32)
    expected = step(p, g)
    with caplog.at_level(logging.INFO, logger="hlojit"):
        quick = f(hj.device_put(p), g)
        assert f.compile(p, g).tier == "quick"
        assert "[quick build; the optimised one compiling]" in f.cache_info().entries[0]
        release(held)
    assert f.compile(p, g).tier == "optimised" and f.compile(p, g).pending is None
    assert f.cache_info().entries == ["p: f32[64], g: f32[64]"] and f.cache_info().misses == 1
    (entry,) = f._entries.values()   # every fast-path key now runs the optimised build
    assert f._fast and all(run is entry.run for run in f._fast.values()) and entry.executable.tier == "optimised"
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert "for cpu[quick]" in logged and "optimised build, in the background (stored)" in logged
    donated = hj.device_put(p)
    optimised = f(donated, g)    # the fast path runs the optimised build now, with the same donation
    for result in (quick, optimised):
        assert [type(r) for r in result] == [hj.Array, hj.Array]
        assert_close(result[0], expected[0])
        assert_close(result[1], expected[1], scale=10)
    with pytest.raises(BackendError, match="donated"):
        np.asarray(donated)


def test_the_persistent_cache_holds_only_the_optimised_build(tiering, held):
    x = np.arange(6, dtype=np.float32)
    f = hj.jit(lambda x: x**4 + 1)
    f(x)
    assert cache.info().entries == 0     # the quick build is never stored
    release(held)
    assert cache.info().entries == 1
    again = hj.jit(lambda x: x**4 + 1)   # a fresh Exec (as a new process would): the optimised build, at once
    assert_close(again(x), x**4 + 1)
    assert again.compile(x).tier == "optimised" and again.compile(x).compiled.cache_hit and not held


def test_an_optimised_build_in_a_child_process(tiering):
    f = hj.jit(step)
    p, g = np.ones(8, np.float32), np.arange(8, dtype=np.float32)
    first = f(p, g)
    assert f.wait_for_optimised(WAIT)
    assert f.compile(p, g).tier == "optimised"
    assert f.compile(p, g).compiled.target.flag_set == targets.cpu().flag_set
    for before, after in zip(first, f(p, g)):
        assert_close(after, np.asarray(before))


def test_a_failed_optimised_build_keeps_the_quick_one(tiering, held):
    f = hj.jit(lambda x: x * 3)
    x = np.ones(3, np.float32)
    f(x)
    background, _ = held[0]
    background.target = background.target.with_flags("--iree-no-such-flag")   # the child cannot compile it
    release(held)
    assert background.error and f.compile(x).tier == "quick"
    assert "its optimised build failed" in f.cache_info().entries[0]
    assert_close(f(x), x * 3)


def test_off_by_default_and_small_programs_compile_optimised_at_once(tmp_path, monkeypatch, held):
    monkeypatch.setenv("HLOJIT_CACHE_DIR", str(tmp_path))
    x = np.ones(2, np.float32)
    monkeypatch.setattr(tiered, "MIN_OPS", 0)
    monkeypatch.delenv("HLOJIT_TIERED")
    assert hj.jit(lambda x: x + 1).compile(x).tier == "optimised"      # unset: off
    monkeypatch.setenv("HLOJIT_TIERED", "0")
    assert hj.jit(lambda x: x + 4).compile(x).tier == "optimised"
    monkeypatch.setenv("HLOJIT_TIERED", "1")
    assert hj.jit(lambda x: x + 3, backend="iree:vmvx").compile(x).tier == "optimised"   # vmvx has no quick build
    monkeypatch.setattr(tiered, "MIN_OPS", 48)   # x + 2 is far below it
    small = hj.jit(lambda x: x + 2).compile(x)
    assert small.tier == "optimised" and small.pending is None and not held


# The main thread exits with an optimised build compiling: no wait for it, no crash, the child process killed.
EXIT_WITH_A_BACKGROUND_BUILD = """
import os, sys, time
import numpy as np
import hlojit as hj
from hlojit.pipeline import tiered
tiered.MIN_OPS = 0
f = hj.jit(lambda x: x * 2 + 1)
f(np.ones(4, np.float32))
while not tiered._children:
    time.sleep(0.01)
print(*[child.pid for child in tiered._children], flush=True)
sys.exit(3)
"""


def test_exit_with_a_background_build_in_flight(tmp_path):
    env = dict(os.environ, PYTHONPATH=REPO, HLOJIT_TIERED="1", HLOJIT_CACHE_DIR=str(tmp_path))
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(EXIT_WITH_A_BACKGROUND_BUILD)], capture_output=True,
                         text=True, env=env, timeout=300)
    assert (out.returncode, out.stderr) == (3, "")
    for pid in map(int, out.stdout.split()):
        assert gone(pid), f"the compiler process {pid} outlived the program"


def gone(pid: int, seconds: float = 10) -> bool:
    """Whether process `pid` ends (or is a zombie waiting to be reaped) within `seconds`."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                    return True
        except FileNotFoundError:
            return True
        time.sleep(0.05)
    return False
