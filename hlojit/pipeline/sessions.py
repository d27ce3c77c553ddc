"""IREE compiler sessions: one per thread and flag set, made once and reused.

Why not one per compile: an `iree.compiler.api.Session` (with its dialects loaded) is never freed by IREE
3.13, context and all: each one costs ~3.3 MB for the life of the process, and every constant parsed into
it stays. Why not one per thread: `Session.set_flags` cannot take a flag back, and list-valued flags
append (`--iree-hal-target-device=local` then `=cuda` compiles for both devices), so a session serves one
set of target flags only. Per-compile flags that take a single value (a statistics file, a dump folder) are
set on each use and override the last.

Modules are traced in plain `ir.Context`s (frontend/trace.py), which are freed with their module, and reach
a session as bytecode (`module_in`): ~0.1 ms per small module, nothing next to compiling it. A session of a
thread that ended goes back to a pool, so threads that come and go reuse sessions rather than make new ones.

A session compiles on every core already: its MLIR context has a thread pool of the machine's hardware
threads (`context.get_num_threads()`: 2 on the 2-core VM), on which IREE translates and serialises the
executables in parallel. Measured (ResNet-18 batch 8 forward, 88 executables, in-process, 2 cores, load ~18):
11.7 CPU seconds, of which the calling thread's 3.95; in a second run 13.5, spread over three threads (4.75,
4.54, 4.37 s: the caller and the pool's two). So a compile is CPU-bound on both cores, and flags cannot make
it use more: the command line's `--mlir-disable-threading` and `--iree-hal-link-executables` are no
session flags (a Session refuses them). What is left for the second core is other work beside a compile:
halves.py compiles a big program as two halves in two compile workers at once (each worker holds its own
sessions, compile_worker.py), tiered.py's optimised builds compile in a child process.

Where every core already compiles something of its own (pytest -n auto, one process per MPI rank), the pool only
adds work: `HLOJIT_COMPILE_THREADS=1` keeps each session's compiles on the calling thread. The vmfb is the same,
byte for byte. Measured in one process on the 2-vCPU VM (2026-12-06): test_ops' f16/bf16 table for vmvx 12.4-13.0
s wall and CPU single-threaded against 12.9-13.1 s wall and 14.1-14.3 CPU-s with the pool, its f64 table for
llvm-cpu 5.9 against 6.6 (CPU 6.0 against 6.9-7.0), ResNet-18 b8's forward 4.1 s either way but 3.1 s once with
the pool (CPU 4.2 against 4.3-4.5): a big program's executables do gain from the pool when a core is free.
"""
from __future__ import annotations

import os
import threading

from iree.compiler import ir
from iree.compiler.api import Session

from .program import bytecode_of

_local = threading.local()
_idle: dict[tuple, list[Session]] = {}      # flags -> sessions of threads that ended
_lock = threading.Lock()
created = 0                                 # sessions made in this process (tests check it stays small)


class _ThreadSessions(dict):
    """This thread's sessions by flags; when the thread ends (its locals are dropped), they go back to the
    pool."""

    def __del__(self):
        with _lock:
            for flags, session in self.items():
                _idle.setdefault(flags, []).append(session)


def multithreaded() -> bool:
    """Whether a new session compiles on MLIR's thread pool (the default) or on its caller's thread alone
    (HLOJIT_COMPILE_THREADS=1)."""
    setting = os.environ.get("HLOJIT_COMPILE_THREADS", "").strip().lower()
    if setting not in ("", "1", "all"):
        raise ValueError(f"HLOJIT_COMPILE_THREADS={setting!r}: 1 (each compile on its caller's thread) or all "
                         f"(the default: MLIR's pool of every hardware thread)")
    return setting != "1"


def session_for(flags: tuple[str, ...]) -> Session:
    """This thread's compiler session for `flags` (the target's), its dialects loaded."""
    mine = getattr(_local, "sessions", None)
    if mine is None:
        mine = _local.sessions = _ThreadSessions()
    session = mine.get(flags)
    if session is None:
        with _lock:
            spare = _idle.get(flags)
            session = spare.pop() if spare else None
        if session is None:
            session = new_session(flags, multithreaded())
        mine[flags] = session
    return session


# The dialects hlojit creates ops of with `ir.Operation.create` in a session's context: the dialect builders
# (stablehlo, chlo, func), the target rewrites (complex_pairs' flow.tensor.bitcast) and vm_rewrites (vm). Text
# that is parsed loads its own dialects, and IREE's passes load theirs.
CREATED_DIALECTS = ("func", "stablehlo", "chlo", "flow", "vm")


def new_session(flags: tuple[str, ...], threaded: bool) -> Session:
    """A session of its own for `flags`, on MLIR's thread pool or not (session_for makes its sessions here; each
    one stays for the life of the process, as the module docstring says).

    It loads CREATED_DIALECTS, not every dialect IREE has (`load_all_available_dialects`): an op made by name in
    a dialect not loaded is an unregistered op, which verifies and then fails in IREE or loses its properties;
    every dialect loaded makes each compile slower. Each canonicalizer, and every pass whose patterns match
    an interface, rebuilds its pattern set from all the loaded dialects' ops, once per executable (IREE runs
    codegen as a pipeline of its own per executable). Measured on a 2-vCPU Zen 3 (2026-12-07), hlojit's own
    compile path, 8 compiles each, interleaved: test_ops' i32 tables 2.19/2.53 s (min/median) with every
    dialect against 1.89/2.07 for vmvx, 2.26/2.58 against 1.96/2.41 for llvm-cpu; `perf` of the f16 table's
    vmvx compile: 13% of its samples in initializing the per-executable pipelines."""
    global created
    session = Session()
    session.context.enable_multithreading(threaded)
    for name in CREATED_DIALECTS:
        session.context.dialects[name]      # loads it
    session.set_flags(*flags)
    created += 1
    return session


def module_in(session: Session, module: ir.Module) -> ir.Module:
    """A copy of `module` in the session's context (a module of another context cannot be compiled there)."""
    return ir.Module.parse(bytecode_of(module), context=session.context)
