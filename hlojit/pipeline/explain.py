"""Explain a compile: every stage from StableHLO to machine code, and what fused with what.

One IREE invocation runs the pipeline phase by phase (IREE's C API can stop and restart at a phase; the
Python wrapper does not expose it, so it is reached through ctypes), timing each phase and keeping the IR
after global optimisation and after dispatch formation. Ops keep `"stablehlo.<op>"(file:line)` locations
through every pass, so each dispatch can name the StableHLO ops and the user's lines fused into it.
"""
from __future__ import annotations

import collections
import dataclasses
import glob
import io
import os
import re
import time
import zipfile

from iree.compiler.api import Output

from ..errors import CompileError
from .compiler import (BEFORE_CODEGEN, COMPILE_LOCK, new_invocation, phase_setters, resumed_after_vm_rewrites,
                       scratch_folder, verified_for_codegen, with_fallback)
from .program import Program
from .targets import Target

# IREE's phases in order (`iree-compile --compile-to=`); explain stops after each to time it.
PHASES = ("input", "abi", "preprocessing", "global-optimization", "dispatch-creation", "flow", "stream",
          "executable-sources", "executable-configurations", "executable-targets", "hal", "vm", "end")
STAGES = ("stablehlo", "optimized", "dispatches", "llvm_ir", "assembly")
_SNAPSHOTS = {"global-optimization": "optimized", "flow": "dispatches"}
_NAMED_LOCATION = re.compile(r'"stablehlo\.(\w+)"\("([^"]+)":(\d+):\d+\)')
_ENTRY_POINT = re.compile(r"::@([\w$.-]+)")     # a flow.dispatch's @executable::@entry_point


@dataclasses.dataclass
class Dispatch:
    name: str
    ops: list            # [(stablehlo op, file, line)] fused into it, in source order
    lines: list          # ["file.py:12", ...] the user's lines it came from

    def __str__(self):
        ops = ", ".join(sorted({op for op, _, _ in self.ops})) or "(no StableHLO op: a copy or fill)"
        return f"{self.name}: {ops}  <-  {', '.join(self.lines) or 'no user line'}"


@dataclasses.dataclass
class Explanation:
    """Print it for the summary; `.stage(name)` (or the attributes) for each stage's text."""
    name: str
    target: Target
    stablehlo: str
    optimized: str
    dispatches: str
    llvm_ir: dict            # dispatch function -> its LLVM IR (after LLVM's optimisation)
    assembly: dict           # dispatch function -> its x86-64 assembly (PTX for cuda)
    dispatch_report: list    # [Dispatch]
    op_counts: dict          # stage -> Counter of op names in @main
    phase_seconds: dict      # phase -> seconds
    vmfb_size: int
    rewrites: dict = dataclasses.field(default_factory=dict)   # target rewrites (quirks.py) that ran: name -> count
    tuning: list = dataclasses.field(default_factory=list)   # what autotuning chose, in lines (tuning.Choice.report)

    def stage(self, name: str) -> str:
        if name not in STAGES:
            raise ValueError(f"unknown stage {name!r}; stages: {', '.join(STAGES)}")
        value = getattr(self, name)
        if isinstance(value, dict):
            return "\n".join(f"// ---- {key} ----\n{text}" for key, text in value.items())
        return value

    @property
    def dispatch_count(self) -> int:
        return len(self.dispatch_report)

    def summary(self) -> str:
        before, after = self.op_counts["stablehlo"], self.op_counts["optimized"]
        note = f" ({self.target.note})" if self.target.note and not self.tuning else ""
        lines = [f"{self.name} on {self.target.label}{note}"] + [f"  tuning: {line}" for line in self.tuning]
        lines += ["  target rewrites: " + (", ".join(f"{name} {n}" for name, n in self.rewrites.items()) or "none"),
                 f"  StableHLO ops (constants aside): {sum(before.values())} ({_counts(before)})",
                 f"  after global optimisation: {sum(after.values())} ({_counts(after)})",
                 f"  dispatches: {self.dispatch_count}"]
        lines += [f"    {d}" for d in self.dispatch_report]
        total = sum(self.phase_seconds.values())
        slow = sorted(self.phase_seconds.items(), key=lambda kv: -kv[1])[:4]
        lines.append(f"  compile: {total:.2f} s (slowest phases: "
                     + ", ".join(f"{p} {s:.2f} s" for p, s in slow) + ")")
        lines.append(f"  artifact: {self.vmfb_size:,} bytes")
        return "\n".join(lines)

    __str__ = summary


def _counts(counter) -> str:
    return ", ".join(f"{name} {n}" for name, n in counter.most_common())


def _main_op_counts(module_op) -> collections.Counter:
    """Op names in the body of the public entry function (`@main`), constants and returns left out."""
    counts = collections.Counter()
    for op in module_op.regions[0].blocks[0].operations:
        if "sym_name" in op.attributes and str(op.attributes["sym_name"]).strip('"') == "main":
            for inner in op.regions[0].blocks[0].operations:
                name = inner.operation.name
                if not name.endswith(("constant", "return")):
                    counts[name] += 1
    return counts


def _walk(op):
    yield op
    for region in op.regions:
        for block in region.blocks:
            for inner in block.operations:
                yield from _walk(inner.operation)


def _dispatch_report(module_op) -> list[Dispatch]:
    """A Dispatch per executable IREE formed (`flow.executable`: its ops' locations name what fused into it) and
    per entry point of a hand-written one (`hal.executable.source`: a kernel a target rewrite made, matmul_kernel.py
    and the others; named by the locations of the `flow.dispatch`es that run it), in the module's order."""
    callers = collections.defaultdict(list)   # a hand-written entry point -> the locations of its dispatches
    for op in _walk(module_op):
        if op.name == "flow.dispatch":
            for entry in _ENTRY_POINT.findall(str(op.attributes["entry_points"])):
                callers[entry].append(str(op.location))
    report = []
    for op in _walk(module_op):
        if op.name == "flow.executable":
            report.append(_dispatch(str(op.attributes["sym_name"]).strip('"'),
                                    [str(inner.location) for inner in _walk(op)]))
        elif op.name == "hal.executable.source":
            for inner in _walk(op):
                if inner.name == "hal.executable.export":
                    name = str(inner.attributes["sym_name"]).strip('"')
                    report.append(_dispatch(name, callers.get(name, [])))
    return report


def _dispatch(name: str, locations: list) -> Dispatch:
    found = {}
    for location in locations:
        for hlo_op, path, line in _NAMED_LOCATION.findall(location):
            found[(hlo_op, path, int(line))] = None
    ops = sorted(found, key=lambda t: (t[1], t[2], t[0]))
    lines = list(dict.fromkeys(f"{os.path.basename(p)}:{n}" for _, p, n in ops))
    return Dispatch(name, ops, lines)


# Where a dispatch function starts in each kind of dump: LLVM IR, x86-64 assembly, PTX.
_FUNCTION_START = {"ll": re.compile(r"^define [^@]*@(\w+)\(", re.M),
                   "s": re.compile(r"^\s*\.type\s+(\w+),@function", re.M),
                   "ptx": re.compile(r"^\.visible \.entry (\w+)\(", re.M)}


def _split_functions(text: str, kind: str, kernels=frozenset()) -> dict:
    """{dispatch function name: its text}: IREE links dispatches into one file, users read them apart. A
    dispatch function is one of IREE's (`..._dispatch_N_...`) or a hand-written kernel's entry point (`kernels`)."""
    starts = [(m.start(), m.group(1)) for m in _FUNCTION_START[kind].finditer(text)]
    starts = [(pos, name) for pos, name in starts if "_dispatch_" in name or name in kernels]
    return {name: text[pos:(starts[i + 1][0] if i + 1 < len(starts) else len(text))].rstrip() + "\n"
            for i, (pos, name) in enumerate(starts)}


def _ptx_from_vmfb(vmfb: bytes) -> str:
    """CUDA executables are PTX text inside the vmfb (a ZIP of flatbuffers); IREE dumps no .ptx file."""
    texts = []
    with zipfile.ZipFile(io.BytesIO(vmfb)) as archive:
        for name in archive.namelist():
            data = archive.read(name)
            start = data.find(b"//\n// Generated by LLVM NVPTX")
            if start >= 0:
                end = data.find(b"\0", start)
                texts.append(data[start:end if end >= 0 else len(data)].decode(errors="replace"))
    return "\n".join(texts)


def _read_dumps(folder: str, kernels: frozenset) -> tuple[dict, dict]:
    def read(pattern, kind):
        out = {}
        for path in sorted(glob.glob(os.path.join(folder, pattern))):
            with open(path, errors="replace") as f:
                out.update(_split_functions(f.read(), kind, kernels))
        return out
    return read("*.optimized.ll", "ll") or read("*.ll", "ll"), read("*.s", "s")


def explain(program: Program, target: Target, tuning: list = ()) -> Explanation:
    """Compile `program` phase by phase for `target`, keeping every stage. Where the
    target's flags fail and it has a fallback, the stages are those of the fallback's flags (what runs).
    `tuning`: what autotuning chose, in lines, when `program` and `target` are its choice (tuning.choose)."""
    stablehlo = program.module.operation.get_asm(enable_debug_info=True)
    op_counts = {"stablehlo": _main_op_counts(program.module.operation)}
    explanation = with_fallback(program, target, lambda session, operation, chosen, rewrites: _explain(
        program, session, operation, chosen, stablehlo, dict(op_counts), rewrites))
    explanation.tuning = list(tuning)
    return explanation


def _explain(program: Program, session, operation, target: Target, stablehlo: str, op_counts: dict,
             rewrites: dict) -> Explanation:
    set_from, set_to = phase_setters()
    snapshots, seconds = {}, {}
    with scratch_folder("hlojit-explain-") as dump:
        # the session is the one compile_program uses for these flags: the dump folder is taken back after
        session.set_flags(f"--iree-hal-dump-executable-intermediates-to={dump}")
        diagnostics = []
        handler = session.context.attach_diagnostic_handler(
            lambda d: diagnostics.append(f"{d.severity.name.lower()}: {d.message} ({d.location})") or True)
        try:
            with COMPILE_LOCK:  # one IREE compile at a time (compiler.py says why)
                invocation = new_invocation(session, verify=False)   # as compile_program's (compiler.py)
                invocation.import_module(operation)
                previous = "start"
                for phase in PHASES:
                    set_from(invocation._inv_p, previous.encode())
                    set_to(invocation._inv_p, phase.encode())
                    start = time.perf_counter()
                    if not invocation.execute():
                        raise CompileError(f"IREE could not compile {program.name} for {target.name} in phase {phase}: "
                                           f"{(diagnostics or ['no diagnostic'])[0]}", diagnostics=diagnostics)
                    seconds[phase] = time.perf_counter() - start
                    if phase in _SNAPSHOTS:  # take the module out to print it with locations, then put it back
                        module_op = invocation.export_module()
                        snapshots[_SNAPSHOTS[phase]] = module_op.get_asm(enable_debug_info=True)
                        if phase == "global-optimization":
                            op_counts["optimized"] = _main_op_counts(module_op)
                        else:
                            report = _dispatch_report(module_op)
                        invocation = new_invocation(session, verify=False)
                        invocation.import_module(module_op)
                    if phase == BEFORE_CODEGEN:
                        invocation = verified_for_codegen(session, invocation)
                    if phase == "vm":     # what compile_program does there (compiler.py)
                        invocation, copies = resumed_after_vm_rewrites(session, invocation)
                        if copies:
                            rewrites = {**rewrites, "distinct_branch_refs": copies}
                    previous = phase
                output = Output.open_membuffer()
                invocation.output_vm_bytecode(output)
                vmfb = bytes(output.map_memory())
        finally:
            handler.detach()
            session.set_flags("--iree-hal-dump-executable-intermediates-to=")
        kernels = frozenset(d.name for d in report)
        llvm_ir, assembly = _read_dumps(dump, kernels)
        if target.name == "cuda":
            assembly = _split_functions(_ptx_from_vmfb(vmfb), "ptx", kernels)
    return Explanation(program.name, target, stablehlo, snapshots["optimized"], snapshots["dispatches"], llvm_ir,
                       assembly, report, op_counts, seconds, len(vmfb), rewrites)
