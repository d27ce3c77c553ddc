"""Tracing and compiling many times keeps memory flat (each trace leaked ~3.3 MB of IREE compiler session)."""
import gc
import threading

import numpy as np
import pytest

import hlojit as hj
from hlojit.pipeline import sessions

GROWTH_LIMIT_MB = 60
# the leak these tests guard against was ~3.3 MB a trace: 100 traces of it grow 330 MB, far past the limit,
# so 100 repetitions find it (each failing trace costs ~40 ms: 500 of them made this the suite's slowest file)
REPEATS = 100


def rss_mb() -> float:
    gc.collect()
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096 / 1e6


# these tests compile a function for many shapes on purpose: hlojit's warning of that (hj.RecompileWarning) is
# expected, not news for the suite's summary (test_jit checks the warning's text; the LRU test that it comes)
pytestmark = [pytest.mark.skipif(not hasattr(__import__("os"), "sysconf"), reason="needs /proc"),
              pytest.mark.filterwarnings("ignore::hlojit.frontend.jit.RecompileWarning")]


def test_traces_of_new_shapes_keep_memory_flat():
    f = hj.jit(lambda x: x * 2 + 1)
    f.lower(np.ones(1, np.float32))
    before = rss_mb()
    for n in range(2, 2 + REPEATS):
        f.lower(np.ones(n, np.float32))
    assert rss_mb() - before < GROWTH_LIMIT_MB


def test_failing_calls_keep_memory_flat():
    f = hj.jit(lambda x: x @ x, backend="iree:cpu")
    x = np.ones((3, 4), np.float32)
    with pytest.raises(hj.ShapeError):
        f(x)
    before = rss_mb()
    for _ in range(REPEATS):
        with pytest.raises(hj.ShapeError):
            f(x)
    assert rss_mb() - before < GROWTH_LIMIT_MB


def test_many_signatures_stay_within_the_lru():
    f = hj.jit(lambda x: ops_sum(x * 3.0), backend="reference", cache_size=8)
    for n in range(1, 21):
        f(np.ones(n, np.float32))
    before = rss_mb()
    with pytest.warns(hj.RecompileWarning):
        for n in range(21, 21 + REPEATS):
            np.testing.assert_allclose(float(f(np.ones(n, np.float32))), 3.0 * n)
    assert f.cache_info().currsize == 8
    assert rss_mb() - before < GROWTH_LIMIT_MB


def ops_sum(x):
    return hj.ops.sum(x)


def test_compiles_reuse_one_session_per_target(monkeypatch):
    """Compiling for new shapes makes no new compiler session (a new one per compile was the leak), and a
    thread that ends hands its sessions to the next thread. (In this process: a compile worker serves its
    compiles the same way.)"""
    monkeypatch.setenv("HLOJIT_COMPILE_WORKER", "0")
    f = hj.jit(lambda x: x - 1, backend="iree:cpu", cache_size=2)
    f(np.ones(1, np.float32))
    made = sessions.created
    before = rss_mb()
    for n in range(2, 22):
        np.testing.assert_array_equal(np.asarray(f(np.ones(n, np.float32))), np.zeros(n, np.float32))
    assert sessions.created == made
    assert rss_mb() - before < GROWTH_LIMIT_MB

    def in_a_thread(n):
        np.testing.assert_array_equal(np.asarray(f(np.ones(n, np.float32))), np.zeros(n, np.float32))
    first = threading.Thread(target=in_a_thread, args=(100,))
    first.start(), first.join()
    made = sessions.created
    second = threading.Thread(target=in_a_thread, args=(101,))
    second.start(), second.join()
    assert sessions.created == made


def test_compiling_leaves_the_traced_module_as_it_was():
    """The pipeline compiles a copy (with the target's quirks): the Program's module can be printed, run on the
    reference backend and compiled again afterwards."""
    f = hj.jit(lambda x: x.astype(np.uint8), backend="iree:vmvx")   # a vmvx quirk rewrites this convert
    lowered = f.lower(np.ones(3, np.float32))
    text = lowered.mlir
    compiled = hj.pipeline.compile_program(lowered.program, hj.pipeline.vmvx())
    assert compiled.vmfb and lowered.mlir == text
    assert hj.pipeline.compile_program(lowered.program, hj.pipeline.vmvx()).vmfb == compiled.vmfb


def test_one_thread_a_compile_when_asked_and_the_same_vmfb(monkeypatch):
    """HLOJIT_COMPILE_THREADS=1 (the suite runs with it: conftest.py) makes a session's compiles run on its
    caller's thread; a session on MLIR's pool (the default) compiles the same vmfb, byte for byte."""
    from hlojit.pipeline import compiler, quirks, targets
    monkeypatch.delenv("HLOJIT_COMPILE_THREADS", raising=False)
    assert sessions.multithreaded()
    for setting, expected in (("1", False), ("all", True), (" ALL ", True)):
        monkeypatch.setenv("HLOJIT_COMPILE_THREADS", setting)
        assert sessions.multithreaded() is expected
    monkeypatch.setenv("HLOJIT_COMPILE_THREADS", "4")
    with pytest.raises(ValueError, match="HLOJIT_COMPILE_THREADS='4': 1 .* or all"):
        sessions.multithreaded()

    program = hj.jit(lambda x, y: (x @ y, hj.ops.tanh(x) + 1)).lower(np.ones((8, 8), np.float32),
                                                                      np.ones((8, 8), np.float32)).program
    target = targets.cpu()
    vmfbs = []
    for threads in (True, False):
        session = sessions.new_session(target.flags, threads)   # not session_for's: its pool keeps its setting
        if not threads:
            assert session.context.get_num_threads() == 1
        module = sessions.module_in(session, program.module)
        quirks.apply(module, target)
        vmfbs.append(compiler._compile(session, module.operation, target).vmfb)
    assert vmfbs[0] == vmfbs[1]
