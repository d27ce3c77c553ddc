"""Compile a `Program` for a `Target` into a vmfb with IREE's in-process compiler.

The module is copied, as bytecode, into this thread's compiler session for the target's flags
(sessions.py), and the target's quirks rewrite that copy: the Program's own module is left as the user's
function built it, so it can be printed, run on the reference backend or compiled again afterwards.
Diagnostics are captured; on failure the IR is saved and `CompileError` names the first diagnostic and the
file. The compile stops twice and resumes: before codegen, to verify the module once where IREE's passes before
did not after each (new_invocation says why), and at IREE's `vm` phase, for vm_rewrites.py to mend IREE's own
VM module.
`compile_program` runs all this in a worker process (compile_worker.py: a crash of IREE's compiler is then
an error, not the end of the caller's process); `compile_here` is the same in this process.
"""
from __future__ import annotations

import contextlib
import ctypes
import dataclasses
import functools
import hashlib
import json
import os
import shutil
import tempfile
import threading
import time

from iree.compiler import ir
from iree.compiler.api import Output, ctypes_dl

from ..errors import CompileError
from . import compile_worker, private_files, quirks, sessions, vm_rewrites
from .program import Program
from .targets import Target, rescue


# One IREE compile at a time per process: two sessions compiling on two threads at once gave bogus
# verifier errors ("'vm.func' op expects parent op 'vm.module'") in IREE 3.13. Tracing, the persistent
# cache and running stay concurrent; compile workers (one per compiling thread) compile in parallel.
COMPILE_LOCK = threading.Lock()


@dataclasses.dataclass
class Compiled:
    vmfb: bytes = dataclasses.field(repr=False)
    target: Target
    seconds: float                  # spent in this process getting the vmfb: compiling, or reading the cache
    dispatch_count: int | None      # from IREE's scheduling statistics
    cache_hit: bool = False         # read from the persistent compile cache (cache.py): IREE did not run


def _save_failed_ir(program: Program) -> str:
    """Save the module IREE could not compile, for the error message, where nobody else can plant a link or
    read it: a folder of this user's made 0700 under the temp folder (a fresh one when that is someone else's,
    a link, or writable by others), a file created with O_EXCL under a name nobody can guess (mkstemp)."""
    text = program.module.operation.get_asm(enable_debug_info=True)
    user = private_files.user_id()
    folder = os.path.join(tempfile.gettempdir(), f"hlojit-{user}")
    if private_files.private_folder(folder, follow_links=False):
        folder = tempfile.mkdtemp(prefix=f"hlojit-{user}-")
    name = "".join(c if c.isalnum() or c in "._-" else "_" for c in program.name)
    digest = hashlib.sha256(text.encode()).hexdigest()[:12]
    handle, path = tempfile.mkstemp(dir=folder, prefix=f"failed-{name}-{digest}-", suffix=".mlir")
    with os.fdopen(handle, "w") as f:
        f.write(text)
    return path


def with_fallback(program: Program, target: Target, run):
    """run(session, module operation, target, rewrites): the module copied into the session for the target's
    flags, with the target's quirks applied ({name: count} of those that changed it). Where IREE cannot compile
    it with those flags and the target has a fallback, run again with the fallback's (and its fallback's ...),
    each in its own session (flags cannot be taken back); a refusal targets.rescue knows first tries the same
    flags with its remedy."""
    def attempt(chosen: Target):
        session = sessions.session_for(chosen.flags)
        module = sessions.module_in(session, program.module)
        rewrites = quirks.apply(module, chosen)
        errors = verifier_errors(module.operation)   # once here: IREE's first phases do not (new_invocation)
        if errors:
            raise CompileError(f"the module after the target rewrites {sorted(rewrites)} is invalid: {errors[0]}",
                               diagnostics=errors)
        return run(session, module.operation, chosen, rewrites)
    try:
        return attempt(target)
    except CompileError as error:
        rescued = rescue(target, str(error))
        if rescued is not None:
            return with_fallback(program, rescued, run)
        if target.fallback is None:
            raise
        return with_fallback(program, target.fallback, run)   # which may fall back again


def compile_program(program: Program, target: Target) -> Compiled:
    """Compile to a vmfb (`program.module` is left as it is), in a compile worker unless
    HLOJIT_COMPILE_WORKER=0. `Compiled.target` is the target whose flags made the vmfb (the fallback's where
    those were needed). Where no flags compile it, the StableHLO is saved and the CompileError names the file."""
    try:
        if compile_worker.enabled():
            return compile_worker.compile(program, target, compile_here)
        return compile_here(program, target)
    except CompileError as e:
        path = _save_failed_ir(program)
        raise CompileError(f"IREE could not compile {program.name} for {target.name}: {e}\n"
                           f"the StableHLO is saved at {path}", diagnostics=e.diagnostics, ir_path=path) from None


def compile_here(program: Program, target: Target) -> Compiled:
    """`compile_program` in this process; a failure's CompileError holds IREE's first error alone."""
    return with_fallback(program, target, lambda session, operation, chosen, _: _compile(session, operation,
                                                                                         chosen))


@functools.cache
def phase_setters():
    """(set compile-from phase, set compile-to phase) of an invocation: IREE's C API can stop and resume a compile
    at a phase (`iree-compile --compile-to=`); the Python wrapper does not expose it, so it is reached through
    ctypes. Each takes (invocation._inv_p, phase name as bytes)."""
    setters = []
    for name in ("ireeCompilerInvocationSetCompileFromPhase", "ireeCompilerInvocationSetCompileToPhase"):
        fn = getattr(ctypes_dl._dylib, name)
        fn.restype, fn.argtypes = None, [ctypes.c_void_p, ctypes.c_char_p]
        setters.append(fn)
    return setters


@functools.cache
def _verify_ir_setter():
    """IREE's C API call that turns the verifier after each pass on or off (ireeCompilerInvocationSetVerifyIR),
    which the Python wrapper does not expose. Takes (invocation._inv_p, bool)."""
    fn = ctypes_dl._dylib.ireeCompilerInvocationSetVerifyIR
    fn.restype, fn.argtypes = None, [ctypes.c_void_p, ctypes.c_bool]
    return fn


# IREE's phases up to and including this one transform the whole program; the later ones configure and compile
# each executable (codegen), then schedule and serialise
BEFORE_CODEGEN = "executable-sources"


def new_invocation(session, *, verify: bool):
    """An invocation of `session`, verifying the IR after each of IREE's passes or not.

    Why not always: MLIR's pass manager verifies the whole module after every pass by default (`iree-compile
    --verify`), and IREE runs hundreds of passes. Measured on a 2-vCPU Zen 3 (2026-12-07, one thread,
    iree-compile on the complex128 linalg table's module of 1,105 dispatches): the phases up to BEFORE_CODEGEN
    take 16.1 CPU-s verifying and 11.5 not, codegen and the rest 10.4 and 8.0. Why not never: the verifier is
    also IREE 3.13's net for its own bugs. Its passes make invalid IR of some valid modules (a scatter whose
    inserted dims have a window between them becomes an invalid iree_linalg_ext.scatter; a bool vector-matrix
    product on vmvx an invalid linalg.vecmat; inner-tiled flags an invalid iree_codegen.inner_tiled), and with
    no verifier the rest of the pipeline compiled them, the scatter and the inner-tiled product into programs
    that computed wrong numbers (tests/test_ops_indexing_forms.py, tests/test_jit.py). So
    `_compile` runs the whole-program phases unverified and verifies their result once (`verified_for_codegen`:
    an invalid op made there is still in the module), and codegen, where a pass's invalid IR would be lowered
    within the same phase, verifying after each pass as before."""
    invocation = session.invocation()
    _verify_ir_setter()(invocation._inv_p, verify)
    return invocation


def verifier_errors(operation) -> list[str]:
    """MLIR's verifier's errors of `operation`, written as IREE's diagnostics are here; [] when it is valid."""
    try:
        operation.verify()
    except ir.MLIRError as e:
        return [f"error: {d.message} ({d.location})" for d in e.error_diagnostics] or [str(e)]
    return []


def verified_for_codegen(session, invocation):
    """The invocation, having run to BEFORE_CODEGEN unverified, with its module verified and imported into a
    fresh invocation that resumes from there verifying after each pass; CompileError with the verifier's
    diagnostics where IREE's passes made invalid IR."""
    module_op = invocation.export_module()
    errors = verifier_errors(module_op)
    if errors:
        raise CompileError(errors[0], diagnostics=errors)
    return _resumed_from(session, module_op, BEFORE_CODEGEN)


def _resumed_from(session, module_op, phase: str):
    """A fresh invocation holding `module_op` (exported from one that ran to `phase`), which resumes from there
    verifying after each pass."""
    resumed = new_invocation(session, verify=True)
    resumed.import_module(module_op)
    phase_setters()[0](resumed._inv_p, phase.encode())
    return resumed


def resumed_after_vm_rewrites(session, invocation):
    """The invocation, having run to the `vm` phase, with its module rewritten by vm_rewrites.py and imported
    into a fresh invocation that resumes from there; (that invocation, refs given distinct values)."""
    module_op = invocation.export_module()
    copies = vm_rewrites.distinct_branch_refs(module_op)
    return _resumed_from(session, module_op, "vm"), copies


@contextlib.contextmanager
def scratch_folder(prefix: str):
    """A temporary folder removed when the block ends, and only then: tempfile.TemporaryDirectory's finalizer
    also removes it at interpreter exit, under a compile still running in a daemon thread (IREE then printed
    "Error opening iree-stream-dump-statistics output file" on stderr)."""
    folder = tempfile.mkdtemp(prefix=prefix)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _compile(session, operation, target: Target) -> Compiled:
    with scratch_folder("hlojit-") as scratch:
        stats_path = os.path.join(scratch, "stats.json")
        session.set_flags("--iree-scheduling-dump-statistics-format=json",   # single-valued: set per compile
                          f"--iree-scheduling-dump-statistics-file={stats_path}")
        diagnostics = []

        def on_diagnostic(d):
            diagnostics.append(f"{d.severity.name.lower()}: {d.message} ({d.location})")
            return True  # handled: do not also print to stderr
        handler = session.context.attach_diagnostic_handler(on_diagnostic)
        start = time.perf_counter()
        try:
            with COMPILE_LOCK:
                invocation = new_invocation(session, verify=False)
                invocation.import_module(operation)
                phase_setters()[1](invocation._inv_p, BEFORE_CODEGEN.encode())
                ok = invocation.execute()
                if ok:
                    invocation = verified_for_codegen(session, invocation)
                    phase_setters()[1](invocation._inv_p, b"vm")
                    ok = invocation.execute()
                if ok:
                    invocation, _ = resumed_after_vm_rewrites(session, invocation)
                    ok = invocation.execute()
                if ok:
                    output = Output.open_membuffer()
                    invocation.output_vm_bytecode(output)
                    vmfb = bytes(output.map_memory())
        finally:
            handler.detach()
            # the session outlives this compile (explain reuses it): stop the dump that names this scratch folder
            # (IREE's format flag has no "off" value: the statistics go to the null device until the next compile)
            session.set_flags(f"--iree-scheduling-dump-statistics-file={os.devnull}")
        seconds = time.perf_counter() - start
        if not ok:   # with_fallback compiles it again where it can; compile_program saves the IR where not
            errors = [d for d in diagnostics if d.startswith("error")] or diagnostics or ["no diagnostic"]
            raise CompileError(errors[0], diagnostics=diagnostics)
        dispatches = None
        if os.path.exists(stats_path):
            with open(stats_path) as f:
                stats = json.load(f)
            dispatches = stats.get("stream-aggregate", {}).get("execution", {}).get("dispatch-count")
    return Compiled(vmfb, target, seconds, dispatches)
