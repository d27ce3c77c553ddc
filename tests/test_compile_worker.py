"""Compile workers (pipeline/compile_worker.py): IREE's compiler crashing is a CompileError, not the end of the
process; Ctrl-C stops a compile at once; what the worker raises arrives as it was; big workers are retired."""
import os
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import hlojit as hj
from hlojit.errors import CompileError, ConfigError
from hlojit.pipeline import compile_program, compile_worker, targets

DATA = os.path.join(os.path.dirname(__file__), "data", "crashes")
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(autouse=True)
def in_workers(monkeypatch, tmp_path):
    monkeypatch.setenv("HLOJIT_COMPILE_WORKER", "1")
    monkeypatch.setenv("HLOJIT_CACHE_DIR", str(tmp_path / "cache"))   # every compile here reaches IREE


def test_a_module_that_crashes_iree_is_a_compile_error_and_the_process_goes_on():
    """This module killed the Python process that compiled it (SIGSEGV or SIGABRT) before compiles ran in workers.
    (In some runs IREE reports its verifier error instead of crashing: either way a CompileError.)"""
    path = os.path.join(DATA, "one_trip_loop.mlir")
    with pytest.raises(CompileError, match=r"IREE's compiler crashed \(killed by SIG[A-Z]+\)|region branch point") as e:
        hj.from_mlir(path, backend="iree:vmvx")
    assert "one_trip_loop.mlir@main for vmvx" in str(e.value) and f"saved at {e.value.ir_path}" in str(e.value)
    with open(e.value.ir_path) as f:
        assert "stablehlo.while" in f.read()
    f = hj.jit(lambda x: x * 2 + 1, backend="iree:vmvx")   # a new worker compiles the next program
    np.testing.assert_array_equal(np.asarray(f(np.arange(3, dtype=np.float32))), [1, 3, 5])


def test_a_crash_tries_the_targets_fallback_in_a_new_worker(monkeypatch):
    """The cpu target's flags have a fallback: a crash under the first flags may not recur under the fallback's,
    so it is compiled there too, in a new worker. (Each worker here is killed by SIGSEGV as it starts.)"""
    started = []
    real = compile_worker._Worker.__init__

    def crashing(self):
        real(self)
        self.process.send_signal(signal.SIGSEGV)
        started.append(self)
    monkeypatch.setattr(compile_worker._Worker, "__init__", crashing)
    monkeypatch.setattr(compile_worker, "_idle", [])
    program = hj.jit(lambda x: x + 1).lower(np.ones(2, np.float32)).program
    target = targets.cpu()
    assert target.fallback is not None
    with pytest.raises(CompileError, match=r"for cpu: IREE's compiler crashed \(killed by SIGSEGV\)") as e:
        compile_program(program, target)
    assert e.value.ir_path and len(started) == 2 and all(w.process.poll() is not None for w in started)


def test_what_the_worker_raises_arrives_as_it_was_with_the_environment_of_the_call(monkeypatch):
    """HLOJIT_WINOGRAD is read by a cpu rewrite at compile time, in the worker: a value set after the worker
    started is the one it reads, and its ConfigError is raised here, with the worker's traceback as a note."""
    program = hj.jit(lambda x: x + 1).lower(np.ones(2, np.float32)).program
    compile_program(program, targets.cpu())   # a worker is running now
    monkeypatch.setenv("HLOJIT_WINOGRAD", "7")
    with pytest.raises(ConfigError, match="HLOJIT_WINOGRAD='7'") as e:
        compile_program(program, targets.cpu())
    assert any("compile worker" in note for note in e.value.__notes__)
    monkeypatch.delenv("HLOJIT_WINOGRAD")
    assert compile_program(program, targets.cpu()).vmfb


def test_a_worker_past_its_memory_bound_is_retired(monkeypatch):
    monkeypatch.setattr(compile_worker, "RETIRE_RSS_BYTES", 0)
    monkeypatch.setattr(compile_worker, "_idle", [])
    program = hj.jit(lambda x: x - 1).lower(np.ones(2, np.float32)).program
    compile_program(program, targets.vmvx())
    assert compile_worker._idle == []
    assert compile_program(program, targets.vmvx()).vmfb


def test_threads_compile_at_the_same_time_in_workers_of_their_own(monkeypatch):
    monkeypatch.setattr(compile_worker, "_idle", [])
    results = {}

    def compile_for(n):
        f = hj.jit(lambda x: x * n, backend="iree:vmvx")
        results[n] = np.asarray(f(np.ones(n, np.float32)))
    threads = [threading.Thread(target=compile_for, args=(n,)) for n in (3, 4)]
    [t.start() for t in threads], [t.join() for t in threads]
    assert {n: r.tolist() for n, r in results.items()} == {3: [3.0] * 3, 4: [4.0] * 4}
    assert 1 <= len(compile_worker._idle) <= 3   # the prestarted one and up to one each


def test_the_workers_cpu_time_counts_as_this_processes_own_load(monkeypatch):
    """The driver race discounts this process's own load from the machine's; a compile's CPU time is spent in a
    worker, so the workers report theirs. Before, a cold compile counted as other processes' load and started
    big programs on local-sync."""
    from hlojit.backends import iree_drivers
    monkeypatch.setattr(compile_worker, "_idle", [])    # a new worker: its start is CPU time too
    before, own_before = compile_worker.cpu_seconds(), iree_drivers.own_cpu_seconds()
    f = hj.jit(lambda x: x * 3 + 1, backend="iree:vmvx")
    np.testing.assert_array_equal(np.asarray(f(np.ones(2, np.float32))), [4, 4])
    spent = compile_worker.cpu_seconds() - before
    assert spent > 0.1     # a worker's start alone takes ~0.4 CPU-s, a compile ~0.2
    assert iree_drivers.own_cpu_seconds() - own_before >= spent


def test_a_worker_imports_ml_dtypes_only_for_a_bf16_program(monkeypatch):
    """ml_dtypes 0.7's import took ~0.55 of a worker's ~0.9 CPU-s start (0.6, the version hlojit now asks for: ~20 ms;
    dialects/types.py imported it for its dtype table); a worker needs it only for a bf16 program, and then
    compiles it."""
    imports = compile_worker._MAIN.split("compile_worker.serve")[0] + "print('ml_dtypes' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", imports, "0", "0", REPO], capture_output=True, text=True,
                         check=True, env=dict(os.environ, PYTHONPATH=REPO))
    assert out.stdout.strip() == "False"
    import ml_dtypes
    monkeypatch.setattr(compile_worker, "_idle", [])    # a new worker, which has not imported it
    x = np.array([1.5, -2.25, 3.0], ml_dtypes.bfloat16)
    got = np.asarray(hj.jit(lambda v: v * 2 + 1, backend="iree:vmvx")(x))
    assert got.dtype == x.dtype and got.astype(np.float32).tolist() == [4.0, -3.5, 7.0]


def test_the_worker_runs_this_processes_hlojit_whatever_the_working_directory_holds(tmp_path):
    """`python -c` puts the working directory first on sys.path: a worker started from a folder holding another
    hlojit (a checkout, here a broken one) imported that one, while the process itself ran its own."""
    decoy = tmp_path / "hlojit" / "pipeline"
    decoy.mkdir(parents=True)
    marker = tmp_path / "imported"
    (decoy.parent / "__init__.py").write_text("raise ImportError('the other hlojit')\n")
    (decoy / "__init__.py").write_text(f"open({str(marker)!r}, 'w').close()\nraise ImportError('the other')\n")
    script = tmp_path / "elsewhere" / "run.py"
    script.parent.mkdir()
    script.write_text("import numpy as np, hlojit as hj\n"
                      "print(hj.__file__)\n"
                      "print(float(hj.jit(lambda x: x * 2 + 1, backend='iree:vmvx')(np.float32(3))))\n")
    env = dict(os.environ, PYTHONPATH=REPO, HLOJIT_COMPILE_WORKER="1", HLOJIT_CACHE_DIR=str(tmp_path / "cache"))
    out = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == [os.path.join(REPO, "hlojit", "__init__.py"), "7.0"]
    assert not marker.exists(), "a worker imported the working directory's hlojit"


LONG_COMPILE = """
import sys, numpy as np, hlojit as hj
from hlojit.pipeline import compile_worker
f = hj.jit(lambda a: hj.ops.linalg.svd(a), backend="iree:cpu")   # starts the worker
print(compile_worker._idle[0].process.pid, flush=True)
print("compiling", flush=True)
f(np.ones((96, 96), np.complex128))   # one-sided Jacobi (no kernel for complex): seconds to compile
print("finished", flush=True)
"""


def test_ctrl_c_stops_a_compile_at_once_and_ends_its_worker(tmp_path):
    env = dict(os.environ, PYTHONPATH=REPO, HLOJIT_CACHE="0", HLOJIT_COMPILE_WORKER="1")
    child = subprocess.Popen([sys.executable, "-c", LONG_COMPILE], env=env, text=True,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    worker = int(child.stdout.readline())
    assert child.stdout.readline().strip() == "compiling"
    time.sleep(1.5)
    child.send_signal(signal.SIGINT)
    start = time.monotonic()
    out, err = child.communicate(timeout=60)
    assert time.monotonic() - start < 5, "the compile was waited for"
    assert "KeyboardInterrupt" in err and "finished" not in out
    with pytest.raises(ProcessLookupError):   # killed, and reaped by the child that started it
        os.kill(worker, 0)
