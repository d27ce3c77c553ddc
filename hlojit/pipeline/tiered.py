"""Tiered compilation: the first call runs a build that compiles fast, while the optimised build compiles in
the background, in a child process, and replaces it when ready.

Why a child process: one IREE compile runs at a time per process (compiler.COMPILE_LOCK), so an optimised
build compiling in a thread would hold every other function's first compile behind it for its whole length;
a child compiles beside them, on the other core. And a child can be killed: at interpreter exit the
optimised build in flight is abandoned (its process killed), where a compile in a thread of this process
could neither be waited for (tens of seconds) nor left running into the C++ runtime's teardown.

The child runs `compile_program` itself (quirks, fallbacks, dispatch statistics: one way to compile), on the
module's bytecode; this process stores its vmfb in the persistent cache, which only ever holds optimised
builds (a quick build is never stored: a later process finds the optimised one, or builds quick again). The
quick build of a big training step is its two halves compiled at once (pipeline/halves.py's interim halves:
first call 12.8-14.2 s against 17.0 s for ResNet-18 b8's step, where its quick flags save nothing): each half is
an ordinary program, cached as such.

    HLOJIT_TIERED=1     tier big programs (off by default, see below); 0: compile the optimised build at once

Off by default because IREE 3.13 offers no build that compiles much faster (targets.QUICK_FLAGS has the
measurements): the quick build of ResNet-18 b8's forward costs 9.0-9.3 compiler CPU seconds against 11.7-11.9
and runs about as fast, but its training step's costs 35 against 37 (noise) and runs ~2x slower until the
swap, and every tiered program is compiled twice, which on 2 cores slows the compiles that follow. Which
flags make the quick build is targets.quick's. Programs of few ops are never tiered: their optimised build
takes well under a second, and a quick one would only add a compile.
"""
from __future__ import annotations

import atexit
import os
import pickle
import subprocess
import sys
import threading

from iree.compiler import ir

from ..errors import CompileError
from . import cache, compiler, sessions, targets
from .compiler import Compiled
from .legalize import walk
from .program import Program, bytecode_of
from .targets import Target, attempt_of

# Fewer ops than this in the module (nested regions counted): compiled optimised at once. x**4+1 has 6 and
# compiles in ~0.4 s, samples/mlp.py's forward 17; ResNet-18 b8's forward 488 (~12 CPU s), its training step 2925.
MIN_OPS = 48

_children: set = set()          # the child processes compiling now: killed at exit
_children_lock = threading.Lock()
_exiting: list = []             # [True] once the interpreter exits: no new child, no swap


def enabled() -> bool:
    return os.environ.get("HLOJIT_TIERED", "0").strip().lower() in ("1", "true", "yes", "on")


def op_count(program: Program) -> int:
    return sum(1 for _ in walk(program.module.operation))


def applies(program: Program, target: Target) -> bool:
    """Whether a quick build goes first: tiering is on, the target has a quick build, the program is big."""
    return enabled() and targets.quick(target) is not None and op_count(program) >= MIN_OPS


def first_build(program: Program, target: Target) -> tuple[Compiled, "Background | None"]:
    """The build to run first, and the Background that will compile the optimised one (None when the first
    is the optimised one: tiering does not apply, the persistent cache has it, or the quick build failed)."""
    if not applies(program, target):
        return cache.compile_cached(program, target), None
    program_sha = cache.program_hash(program)
    entry_key = cache.key_of(program_sha, target)
    if cache.enabled():
        hit, why = cache.read(entry_key, target, program_sha)
        if hit is not None:
            cache.log_compile(program, hit, f"disk cache hit ({why})")
            return hit, None
    background = Background(program, target, entry_key, program_sha)   # the bytecode, before compiling
    try:
        quick = compiler.compile_program(program, targets.quick(target))
    except CompileError as e:
        cache.log(f"quick build of {program.name} failed ({e}); compiling the optimised build now")
        return cache.compile_cached(program, target), None
    cache.log_compile(program, quick, "quick build (tiered compilation): the optimised build compiles in the "
                                      "background and replaces it")
    return quick, background


def optimised_later(program: Program, target: Target) -> "Background | None":
    """The Background that will compile `program` for `target` while something else runs first (a big training
    step's interim halves, pipeline/halves.py), or None where the persistent cache has that build already."""
    program_sha = cache.program_hash(program)
    entry_key = cache.key_of(program_sha, target)
    if cache.enabled() and cache.read(entry_key, target, program_sha)[0] is not None:
        return None
    return Background(program, target, entry_key, program_sha)


class Background:
    """The optimised build of one program, compiled in a child process by a daemon thread. `start(on_ready)`:
    `on_ready(compiled)` runs in that thread once the build is there (and stored in the persistent cache).
    `wait(timeout)`: whether it has finished (built, failed, or abandoned at exit); `error`: why it failed."""

    def __init__(self, program: Program, target: Target, entry_key: str, program_sha: str):
        self.name, self.target = program.name, target
        self._key, self._sha = entry_key, program_sha
        self._program = program     # for the log line only: this thread touches no MLIR
        self._bytecode = bytecode_of(program.module)
        self._done = threading.Event()
        self.error: str | None = None
        self.seconds: float | None = None     # the optimised build's compile, in the child

    def start(self, on_ready):
        threading.Thread(target=self._run, args=(on_ready,), name=f"hlojit optimise {self.name}",
                         daemon=True).start()   # daemon: exit does not wait for it (see the module doc)

    def wait(self, timeout: float | None = None) -> bool:
        return self._done.wait(timeout)

    @property
    def done(self) -> bool:
        return self._done.is_set()

    def _run(self, on_ready):
        try:
            compiled = self._compile()
            if compiled is not None and not _exiting:
                self._store(compiled)
                on_ready(compiled)
        except Exception as e:   # a daemon thread has no caller to raise to: the quick build stays
            self.error = f"{type(e).__name__}: {e}"
            cache.log(f"optimised build of {self.name} failed in the background ({self.error}); the quick "
                      "build stays")
        finally:
            self._done.set()

    def _compile(self) -> Compiled | None:
        """The optimised build from the child; None when exit killed it."""
        with compiler.scratch_folder("hlojit-tiered-") as scratch:
            request, reply = os.path.join(scratch, "request"), os.path.join(scratch, "reply")
            with open(request, "wb") as f:
                pickle.dump((self._bytecode, self.name, self.target), f)
            child = _start_child(request, reply)
            if child is None:
                return None
            try:
                _, stderr = child.communicate()
            finally:
                with _children_lock:
                    _children.discard(child)
            if _exiting:
                return None
            if child.returncode != 0 or not os.path.exists(reply):
                raise CompileError(f"the compiler process ended with status {child.returncode}: "
                                   f"{stderr.decode(errors='replace')[-2000:]}")
            with open(reply, "rb") as f:   # written by our own child, in our own private folder
                outcome = pickle.load(f)
        if isinstance(outcome, Compiled):
            return outcome
        message, diagnostics, ir_path = outcome
        raise CompileError(message, diagnostics=diagnostics, ir_path=ir_path)

    def _store(self, compiled: Compiled):
        self.seconds = compiled.seconds
        stored = "cache off (HLOJIT_CACHE=0)"
        if cache.enabled():
            stored = cache.write(self._key, compiled, program_sha=self._sha,
                                 attempt=attempt_of(self.target, compiled.target))
        cache.log_compile(self._program, compiled, f"optimised build, in the background ({stored}); replaces the "
                                             "first build")


def _start_child(request: str, reply: str):
    """A Python that runs _child_main(request, reply), with this hlojit first on its path; None at exit."""
    package_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, (package_root, os.environ.get("PYTHONPATH")))),
               HLOJIT_COMPILE_WORKER="0")     # the child is a process of its own already (compile_worker.py)
    with _children_lock:
        if _exiting:
            return None
        child = subprocess.Popen([sys.executable, "-c", _CHILD, request, reply], env=env,
                                 stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        _children.add(child)
    return child


# niced: the calls running the quick build meanwhile come first (the first of them is the user's first result)
_CHILD = "import os, sys; os.nice(10); from hlojit.pipeline import tiered; tiered._child_main(*sys.argv[1:3])"


@atexit.register
def _abandon_background_builds():
    """At exit the optimised builds in flight are not waited for: their processes are killed."""
    with _children_lock:
        _exiting.append(True)
        children = list(_children)
    for child in children:
        child.kill()


def _child_main(request: str, reply: str):
    """In the child: compile the request's module for its target and write the Compiled (or the error)."""
    with open(request, "rb") as f:
        bytecode, name, target = pickle.load(f)
    module = ir.Module.parse(bytecode, context=sessions.session_for(target.flags).context)
    try:
        outcome = compiler.compile_program(Program(module, [], [], name), target)
    except CompileError as e:
        outcome = (str(e), e.diagnostics, e.ir_path)
    with open(reply + ".tmp", "wb") as f:
        pickle.dump(outcome, f)
    os.replace(reply + ".tmp", reply)

