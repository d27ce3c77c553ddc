"""IREE compiles in worker processes, so that IREE's compiler crashing cannot end the user's process.

Why: IREE 3.13's compiler aborts or segfaults on some valid modules (a one-trip while loop whose body
overwrites its whole carry: "LLVM ERROR: out of memory" or SIGSEGV, tests/data/crashes/). In-process, that
ended the Python process of whoever compiled, a traced function or a `from_mlir` module alike, with nothing
saved. In a worker it is a `CompileError` that names the signal and IREE's last words, with the StableHLO
saved (compiler.compile_program); the next compile starts a new worker. With it come two more things:
Ctrl-C stops a long compile at once (it kills the worker; in-process it waited for the compile to end), and
threads compile at the same time, each in a worker of its own (in-process IREE 3.13 takes one compile at a
time: compiler.COMPILE_LOCK).

The worker runs compiler.compile_here on the module's bytecode, in its own sessions (sessions.py): the
target rewrites, the fallbacks and the statistics are the same code. What it costs: starting a worker imports
hlojit.pipeline there (~0.4 CPU-s on the other core, once per process; ml_dtypes (0.02 s; 0.7's took 0.55) only
for a bf16 program: dialects/types.py's `bfloat16`; `prestart` overlaps it with what the caller does before its first
compile) and each compile sends its bytecode and its vmfb through pipes (a two-op function's compile: 0.55 s
against 0.50 in-process). A worker past
RETIRE_RSS_BYTES (an IREE session keeps every constant parsed into it) is retired after its compile, so a
long-lived process compiling many programs does not grow without bound.

    HLOJIT_COMPILE_WORKER=0     compile in this process instead (the worker itself does; so does `explain`)
"""
from __future__ import annotations

import atexit
import contextlib
import io
import os
import pickle
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback

from iree.compiler import ir

from ..errors import CompileError
from . import sessions
from .program import Program, bytecode_of

RETIRE_RSS_BYTES = 2 << 30      # a worker holding more after a compile is not given another one

_idle: list["_Worker"] = []     # started workers with no compile in hand
_lock = threading.Lock()
_exiting: list = []             # [True] once the interpreter exits: compiles from then on run in this process
_cpu_reported = [0.0]           # CPU seconds this process's workers have reported spending (cpu_seconds)


def enabled() -> bool:
    """Whether compiles go to a worker: on POSIX (the pipes are passed by descriptor), unless
    HLOJIT_COMPILE_WORKER=0, and not once the interpreter exits."""
    setting = os.environ.get("HLOJIT_COMPILE_WORKER", "1").strip().lower()
    return os.name == "posix" and setting not in ("0", "false", "no", "off") and not _exiting


class _Crashed(Exception):
    """The worker ended before it replied: IREE's compiler crashed (or something killed it)."""


class _Worker:
    """One Python process serving compiles, one at a time, over a pair of pipes: a request is pickled
    (bytecode, name, target, HLOJIT_* environment), a reply (\"compiled\" or \"raised\", its value, the worker's
    resident bytes and CPU seconds). What the worker prints (IREE's own messages) goes to a temporary file, read
    back when it crashes."""

    def __init__(self):
        request_in, request_out = os.pipe()
        reply_in, reply_out = os.pipe()
        self._log = tempfile.TemporaryFile()
        package_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        env = dict(os.environ, HLOJIT_COMPILE_WORKER="0",
                   PYTHONPATH=os.pathsep.join(filter(None, (package_root, os.environ.get("PYTHONPATH")))))
        # its numpy does small host arithmetic (constant folding): OpenBLAS's threads, which spin, would only take
        # time from the compile's (0.09 of its 0.88 CPU-s start)
        env.setdefault("OPENBLAS_NUM_THREADS", "1")
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-c", _MAIN, str(request_in), str(reply_out), package_root],
                pass_fds=(request_in, reply_out),
                stdin=subprocess.DEVNULL, stdout=self._log, stderr=self._log, env=env)
        finally:
            os.close(request_in)
            os.close(reply_out)
        self._requests = os.fdopen(request_out, "wb")
        self._replies = os.fdopen(reply_in, "rb")
        self.resident = 0
        self._cpu = 0.0     # the worker's CPU seconds at its last reply

    def compile(self, bytecode: bytes, name: str, target):
        """("compiled", Compiled) or ("raised", the exception compile_here raised there); _Crashed when the
        worker ended first."""
        try:
            pickle.dump((bytecode, name, target, _hlojit_environment()), self._requests, pickle.HIGHEST_PROTOCOL)
            self._requests.flush()
            kind, value, self.resident, cpu = pickle.load(self._replies)
        except (EOFError, OSError, pickle.UnpicklingError):
            raise _Crashed(self._how_it_ended()) from None
        with _lock:
            _cpu_reported[0] += cpu - self._cpu
        self._cpu = cpu
        return kind, value

    def _how_it_ended(self) -> str:
        try:
            status = self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:    # replied nonsense but lives on: end it
            self.process.kill()
            status = self.process.wait()
        what = (f"IREE's compiler crashed (killed by {signal.Signals(-status).name})" if status < 0
                else f"the compile worker ended (exit status {status})")
        self._log.seek(0, io.SEEK_END)
        self._log.seek(max(0, self._log.tell() - 4000))
        said = [line.strip() for line in self._log.read().decode(errors="replace").splitlines() if line.strip()]
        errors = [line for line in said if "error" in line.lower()]   # LLVM's "LLVM ERROR: ..." before its aftermath
        return what + "".join(f": {line}" for line in (errors or said)[-1:])

    def close(self):
        """End the worker: closing its requests pipe ends an idle one; a busy one (Ctrl-C, exit) is killed."""
        for pipe in (self._requests, self._replies):
            try:
                pipe.close()
            except OSError:
                pass
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        self._log.close()


def _hlojit_environment() -> dict:
    """The HLOJIT_* variables as they are now: a rewrite reads some (HLOJIT_WINOGRAD) at compile time, and the
    caller may have set them after the worker started."""
    return {k: v for k, v in os.environ.items() if k.startswith("HLOJIT_") and k != "HLOJIT_COMPILE_WORKER"}


def cpu_seconds() -> float:
    """The CPU time this process's compile workers have spent (their start and compiles, every thread), as of
    their last replies: this process's own load, which the driver race (backends/iree_drivers.py) discounts from
    the machine's. Without it a cold compile's 20 CPU-s in workers counted as other processes' load, and the
    ResNet-18 step's first calls ran on local-sync (~2 s against local-task's ~1.1)."""
    with _lock:
        return _cpu_reported[0]


def prestart(count: int = 1):
    """Start workers now until `count` wait, so that their start-up runs beside what comes before the compile
    (tracing): the first compile of a process then need not wait ~1 s for one (the halves of a big program,
    pipeline/halves.py, for two)."""
    if not enabled():
        return
    with _lock:
        while len(_idle) < count and not _exiting:
            _idle.append(_Worker())


class Group:
    """The compiles that threads run for one caller (pipeline/halves.py's two halves): `cancel()` kills the
    workers compiling for it, when the caller is interrupted (Ctrl-C reaches the caller's thread, not these)."""

    def __init__(self):
        self.cancelled = False
        self._busy: set = set()
        self._lock = threading.Lock()

    def cancel(self):
        with self._lock:
            self.cancelled = True
            busy = list(self._busy)
        for worker in busy:
            worker.process.kill()
            worker.process.wait()   # reaped now: the caller may exit before the thread that used it wakes

    def _enter(self, worker: "_Worker"):
        with self._lock:
            if self.cancelled:
                raise CompileError("the compile was cancelled")
            self._busy.add(worker)

    def _leave(self, worker: "_Worker"):
        with self._lock:
            self._busy.discard(worker)


_thread = threading.local()     # .group: the Group this thread compiles for, if any


@contextlib.contextmanager
def compiling_for(group: Group):
    """The compiles of this thread within the block belong to `group`."""
    _thread.group = group
    try:
        yield
    finally:
        _thread.group = None


def _take() -> _Worker:
    with _lock:
        if _idle:
            return _idle.pop()
    return _Worker()


def _give_back(worker: _Worker):
    with _lock:
        if not _exiting and worker.resident < RETIRE_RSS_BYTES:
            _idle.append(worker)
            return
    worker.close()


def compile(program: Program, target, compile_here):
    """compile_here(program, target) run in a worker: its Compiled, or what it raised. Where the worker
    crashes and the target has a fallback (other flags), the fallback is compiled in a new worker; a crash
    with no fallback left is a CompileError naming it (compile_program adds the saved StableHLO)."""
    bytecode = bytecode_of(program.module)
    chosen = target
    group = getattr(_thread, "group", None) or Group()
    while True:
        worker = _take()
        try:
            group._enter(worker)
            kind, value = worker.compile(bytecode, program.name, chosen)
        except _Crashed as crash:
            worker.close()
            if _exiting and threading.current_thread().daemon:
                threading.Event().wait()    # killed at exit under a daemon thread: it is abandoned anyway
            if group.cancelled:
                raise CompileError("the compile was cancelled") from None
            if chosen.fallback is None:
                raise CompileError(str(crash), diagnostics=[f"error: {crash}"]) from None
            chosen = chosen.fallback
            continue
        except BaseException:   # Ctrl-C (or another exception) while the worker compiles: stop it
            worker.close()
            raise
        finally:
            group._leave(worker)
        _give_back(worker)
        if kind == "compiled":
            return value
        raise value


@atexit.register
def _end_workers():
    """At exit the idle workers end (their pipes close); compiles after this run in this process."""
    with _lock:
        _exiting.append(True)
        workers = list(_idle)
        _idle.clear()
    for worker in workers:
        worker.close()


# The worker imports hlojit.pipeline alone: hlojit/__init__.py would import the frontend, the backends and the
# IREE runtime, which a worker never uses (0.3 s of the 1.0 s a worker took to start). So `hlojit` is made a
# bare package (its folder as __path__, its __init__ not run) before the import.
# sys.path[0] of `python -c` is the working directory, which may hold another hlojit (a checkout): the worker
# imports the parent's package, whose folder comes as its third argument
_MAIN = ("import importlib.util, sys, types; "
         "sys.path.insert(0, sys.argv[3]); "
         "package = types.ModuleType('hlojit'); "
         "package.__path__ = list(importlib.util.find_spec('hlojit').submodule_search_locations); "
         "sys.modules['hlojit'] = package; "
         "from hlojit.pipeline import compile_worker, compiler; "
         "compile_worker.serve(compiler.compile_here, *map(int, sys.argv[1:3]))")


def serve(compile_here, requests_fd: int, replies_fd: int):
    """The worker's loop: compile each request with compile_here (compiler.py's, which imports this module)
    until the requests pipe closes."""
    requests, replies = os.fdopen(requests_fd, "rb"), os.fdopen(replies_fd, "wb")
    # the Python classes of hal's ops, which the rewrites' walks meet once kernels are in (hal.executable.source):
    # imported on first sight they cost the first compile ~0.08 s; here, before a request, while the caller traces
    import iree.compiler.dialects.hal  # noqa: F401
    while True:
        try:
            bytecode, name, target, environment = pickle.load(requests)
        except EOFError:
            return
        for key in [k for k in os.environ if k.startswith("HLOJIT_") and k != "HLOJIT_COMPILE_WORKER"]:
            del os.environ[key]
        os.environ.update(environment)
        try:
            # parsed in the context of the session that compiles it (a fresh context with its dialects loaded
            # costs ~13 ms a request): its constants are uniqued there once, shared with the copy it compiles
            context = sessions.session_for(target.flags).context
            program = Program(ir.Module.parse(bytecode, context=context), [], [], name)
            reply = ("compiled", compile_here(program, target))
        except Exception as e:    # noqa: BLE001 - sent to the caller, who raises it
            reply = ("raised", _sendable(e))
        pickle.dump((*reply, _resident_bytes(), time.process_time()), replies, pickle.HIGHEST_PROTOCOL)
        replies.flush()


def _sendable(error: Exception) -> Exception:
    """`error` as the caller can unpickle it; one that is no CompileError carries the worker's traceback."""
    if not isinstance(error, CompileError):
        error.add_note("(raised in hlojit's compile worker:)\n" + "".join(traceback.format_exception(error)))
    try:
        return pickle.loads(pickle.dumps(error))
    except Exception:   # noqa: BLE001 - an exception type pickle cannot rebuild
        return RuntimeError(f"{type(error).__name__}: {error}\n" + "\n".join(getattr(error, "__notes__", ())))


def _resident_bytes() -> int:
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:     # no /proc: never retired for its size
        return 0
