"""Choosing the cpu target's flag set by measuring on the machine that runs the code.

Why measure: the fastest of targets.CPU_FLAG_SETS depends on the CPU (inner-tiled matmuls won on an Intel
AVX-512 machine and lost by 30% on an AMD Zen 3, where plain data tiling plus Winograd won), and a table
of CPU families would go stale with every CPU and IREE release it does not list. Measuring is cheap
enough to do once per machine: one module of op-class microbenchmarks (a matmul, channels-last 3x3
convolutions at 64, 32 and 256 channels) compiled per candidate and timed, a few seconds in all (7 s with four
candidates on the idle 2-vCPU Xeon, 2026-12-06).

Two levels:
- per machine (`machine_target`, what `iree:cpu` uses): the candidate whose microbenchmarks are fastest
  (the geometric mean of each one's time against the best candidate's). Measured on first use by a program with
  a product, convolution or FFT (`flag_set_matters`: the others compile alike under every set and take the default
  one, IreeBackend.target_for); the choice is remembered in the compile cache folder as `tuning-<key>.json`, keyed
  by the host CPU's features, the IREE compiler's version, the candidates' flags and the microbenchmarks.
  HLOJIT_CACHE=0 keeps it in this process only; HLOJIT_CPU_FLAGS=<name> pins a set and measures nothing.
- per program (`autotune`, on opt-in: `hj.jit(f, autotune=True)` or HLOJIT_AUTOTUNE=1): every candidate
  compiled (each vmfb stored in the compile cache under its own key), the program itself timed on
  zero-filled arguments, the fastest kept; the choice is remembered under the program's key. Before that,
  Winograd per convolution (`winograd_plan`): each distinct 3x3 stride-1 f32 convolution shape of the program
  is timed once per machine as a single-op function, plain and as hlojit's F(2x2,3x3) and F(4x4,3x3)
  (winograd.py), and each convolution is marked with its shape's fastest (one `tuning-<key>.json` per shape,
  keyed by the CPU, the compiler, hlojit's pipeline and the base flags: a second program with the same layer
  shapes measures nothing). Why per shape: on a loaded Zen 3 F(4,3) ran ResNet-18's 64-channel layers in
  0.58-0.85x the convolution's time and its 512-channel ones up to 42x slower. Where the marks chose Winograd
  anywhere, the unmarked program races with the candidates: single-op times need not add up to the program's
  (ResNet-18 b8 forward measured about even with its per-shape choices). HLOJIT_WINOGRAD=0/2/4 forces one
  choice on every convolution and measures nothing.

Records follow the compile cache's rules (private_files): a private folder, atomic writes (temp file and
rename), read only when this user's regular file; a record that is damaged or malformed is ignored and
measured again. Each names its kind and subject (what was tuned) beside what it chose, when and at what cost:
hj.cache.info() lists them, hj.cache.clear() removes them with the entries. `choose` returns what the
per-program search chose without compiling where records answer, so that explain shows what calls compile.

Measuring needs the runtime, which lives above this layer: the backend passes
`timer(compiled, function, arguments, outputs)`, which loads the function and returns a `() -> seconds` that
calls it once.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import os
import statistics
import tempfile
import threading
import time

import numpy as np
from iree.compiler import ir

from ..dialects.types import short_signature
from ..errors import ConfigError
from . import cache, private_files, winograd
from .compiler import Compiled, compile_program
from .legalize import walk
from .program import Program
from .targets import CPU_FLAG_SETS, Target, cpu, cpu_name_of

RECORD_PREFIX = cache.TUNING_PREFIX
RECORD_FORMAT = 2    # 2: each record names its kind ("machine", "program", "winograd") and subject, for cache.info

# name -> (input shapes, StableHLO body, output shape): f32, shaped like ResNet's and a transformer's work.
_CONV = ("stablehlo.convolution(%a, %b) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = "
         "[1, 1], pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64}")
# a transformer's MLP (and autodiff's im2col kernel gradients), ResNet's 64-channel stage, a narrower one, a wider
# one (where IREE's convolutions lose most: matmul_kernel.py)
MICROBENCHMARKS = {
    "matmul 1024x256x1024": (((1024, 256), (256, 1024)),
                             "stablehlo.dot_general %a, %b, contracting_dims = [1] x [0]", (1024, 1024)),
    "conv3x3 64ch 56x56 b1": (((1, 56, 56, 64), (3, 3, 64, 64)), _CONV, (1, 56, 56, 64)),
    "conv3x3 32ch 56x56 b2": (((2, 56, 56, 32), (3, 3, 32, 32)), _CONV, (2, 56, 56, 32)),
    "conv3x3 256ch 14x14 b2": (((2, 14, 14, 256), (3, 3, 256, 256)), _CONV, (2, 14, 14, 256)),
}
ROUNDS = 40     # timed calls per microbenchmark and candidate, interleaved, after one warm-up: the fastest counts
RACE_SECONDS = 3.0   # ... or fewer rounds, once timing has taken this long (a slow machine stays bounded)

_lock = threading.Lock()
_in_process: dict[str, Target] = {}   # record key -> the chosen target, for this process
_programs_in_process: dict[str, dict] = {}   # record key -> a program's record, for this process


def _tensor(shape) -> str:
    return f"tensor<{'x'.join(map(str, shape))}xf32>"


def microbenchmark_module(benchmarks: dict) -> str:
    """One StableHLO module with a public function per microbenchmark (one compile per candidate)."""
    functions = []
    for index, ((lhs, rhs), body, out) in enumerate(benchmarks.values()):
        types = f"({_tensor(lhs)}, {_tensor(rhs)}) -> {_tensor(out)}"
        functions.append(f"func.func @bench{index}(%a: {_tensor(lhs)}, %b: {_tensor(rhs)}) -> {_tensor(out)} {{\n"
                         f"  %0 = {body} : {types}\n  return %0 : {_tensor(out)}\n}}")
    return "\n".join(functions)


def _program(text: str, inputs, outputs, name: str) -> Program:
    context = ir.Context()
    context.load_all_available_dialects()
    return Program(ir.Module.parse(text, context), inputs, outputs, name)


# --- the per-machine choice ---

def pinned() -> str | None:
    """HLOJIT_CPU_FLAGS: a flag set chosen by the user (no measuring), else None."""
    name = os.environ.get("HLOJIT_CPU_FLAGS", "").strip()
    if name and name not in CPU_FLAG_SETS:
        raise ConfigError(f"HLOJIT_CPU_FLAGS={name!r} is no cpu flag set; known: {', '.join(CPU_FLAG_SETS)}")
    return name or None


def machine_key(cpu_name: str, candidates, benchmarks) -> str:
    """What a machine record depends on: the CPU, the compiler, each candidate's flags, the microbenchmarks."""
    digest = hashlib.sha256()
    flag_sets = [f"{name}={' '.join(CPU_FLAG_SETS[name])}" for name in candidates]
    for part in (f"hlojit-tuning {RECORD_FORMAT}", cpu_name, cache.host_cpu_features(), cache.compiler_version(),
                 *flag_sets, microbenchmark_module(benchmarks)):
        digest.update(part.encode() + b"\0")
    return digest.hexdigest()


def machine_target(timer, cpu_name: str = "host", candidates=tuple(CPU_FLAG_SETS),
                   benchmarks=MICROBENCHMARKS) -> Target:
    """The cpu target with this machine's fastest flag set, measured once per machine (see the module doc).
    Its `note` tells how it was chosen."""
    name = pinned()
    if name:
        return _noted(cpu(cpu_name, name), "pinned by HLOJIT_CPU_FLAGS")
    record_key = machine_key(cpu_name, candidates, benchmarks)
    with _lock:   # two threads compiling their first function measure once
        if record_key in _in_process:
            return _in_process[record_key]
        record, why = read_record(record_key)
        if record is None or record.get("chosen") not in candidates:
            record = measure_machine(timer, cpu_name, candidates, benchmarks)
            stored = write_record(record_key, record) if cache.enabled() else "kept in this process (HLOJIT_CACHE=0)"
            cache.log(f"tuned the cpu flags for this machine ({why}): {describe(record)}; {stored}")
        chosen = _noted(cpu(cpu_name, record["chosen"]), f"machine choice: {describe(record)}")
        _in_process[record_key] = chosen
        return chosen


# The ops the flag sets compile differently (data or inner tiling of products, the matmul kernels and patch products,
# Winograd; an FFT becomes products): a program with none of them, anywhere in its module, compiles alike under each
FLAG_SENSITIVE_OPS = frozenset({"stablehlo.dot_general", "stablehlo.dot", "stablehlo.convolution", "stablehlo.fft"})


def flag_set_matters(program: Program) -> bool:
    """Whether `program` has an op whose compiling the cpu flag sets differ in (FLAG_SENSITIVE_OPS). Why ask: a
    program without one runs the same on the default set, and measuring the machine (16 s on the 2-vCPU Zen 3,
    2026-12-08) made a fresh install's first x.sin() + 1 take 17 s."""
    return any(op.name in FLAG_SENSITIVE_OPS for op in walk(program.module.operation))


def measure_machine(timer, cpu_name, candidates, benchmarks, rounds: int = ROUNDS) -> dict:
    """Compile the microbenchmarks with each candidate and time them: the record of what was measured."""
    start = time.perf_counter()
    text = microbenchmark_module(benchmarks)
    rng = np.random.default_rng(0)
    timers, failed = {}, {}
    for name in candidates:
        target = cpu(cpu_name, name)
        compiled = compile_program(_program(text, [], [], "tuning microbenchmarks"), target)
        if compiled.target != target:   # fell back: the candidate cannot compile these, it is not a choice
            failed[name] = "does not compile the microbenchmarks"
            continue
        timers[name] = [timer(compiled, f"bench{index}", [rng.standard_normal(s).astype(np.float32) for s in shapes],
                              [(out, np.float32)])
                        for index, (shapes, _, out) in enumerate(benchmarks.values())]
    if not timers:
        raise ConfigError("no cpu flag set compiled the tuning microbenchmarks")
    subject = f"{cpu_name} ({_cpu_model()}), IREE {cache.compiler_version()}, {len(candidates)} flag sets"
    return _record(race(timers, rounds), failed, list(benchmarks), start, "machine", subject)


def _cpu_model() -> str:
    """The host CPU's model name, for a record's subject (the key has all its features)."""
    features = cache.host_cpu_features()
    try:
        return json.loads(features).get("model name") or "this CPU"
    except (ValueError, AttributeError):   # not /proc/cpuinfo's fields: the coarser description itself
        return features


def race(timers: dict, rounds: int) -> dict:
    """{candidate: [timer per benchmark]} -> {candidate: [fastest seconds per benchmark]}: rounds interleaved
    over every candidate, so that a slow moment of a loaded machine does not land on one of them, and the
    fastest call counts (other processes only ever add time). At least 3 rounds, at most `rounds` or
    RACE_SECONDS."""
    seconds = {name: [math.inf] * len(calls) for name, calls in timers.items()}
    deadline = time.perf_counter() + RACE_SECONDS
    for round_ in range(rounds):
        if round_ >= 3 and time.perf_counter() > deadline:
            break
        for name, calls in timers.items():
            seconds[name] = [min(best, call()) for best, call in zip(seconds[name], calls)]
    return seconds


def _record(seconds: dict, failed: dict, benchmarks: list, start: float, kind: str, subject: str) -> dict:
    """The record of a measurement: each candidate's score is the geometric mean of its time against the best
    candidate's over the benchmarks, given relative to the chosen (the lowest). `kind` ("machine", "program",
    "winograd") and `subject` (what was tuned, in words) are for cache.info."""
    best = [min(times[i] for times in seconds.values()) for i in range(len(benchmarks))]
    score = {name: math.exp(statistics.fmean(math.log(t / b) for t, b in zip(times, best)))
             for name, times in seconds.items()}
    chosen = min(score, key=score.get)
    return {"format": RECORD_FORMAT, "kind": kind, "subject": subject, "chosen": chosen, "benchmarks": benchmarks,
            "seconds": seconds, "relative": {name: value / score[chosen] for name, value in score.items()},
            "failed": failed,
            "cost_seconds": time.perf_counter() - start, "measured": time.strftime("%Y-%m-%d %H:%M", time.gmtime())}


def describe(record: dict) -> str:
    """`data-tiling (fastest; inner-tiled 1.21x its time; data-tiling+winograd: fell back to data-tiling),
    measured ... in 6.2 s`."""
    ranked = sorted(record["relative"].items(), key=lambda kv: kv[1])
    others = ", ".join(f"{name} {score:.2f}x" for name, score in ranked[1:])
    failed = "".join(f"; {name}: {why}" for name, why in record.get("failed", {}).items())
    return (f"{record['chosen']} (fastest; {others + ' its time' if others else 'no other candidate'}{failed}), "
            f"measured {record['measured']} UTC in {record['cost_seconds']:.1f} s")


def _noted(target: Target, note: str) -> Target:
    return dataclasses.replace(target, note=note)


def default_set(target: Target) -> Target:
    """The default cpu `target`, noted as what a program the flag sets compile alike takes (flag_set_matters)."""
    return _noted(target, "the default flag set: the program has no product, convolution or FFT, which the sets "
                          "differ in")


# --- the per-program search ---

def program_record_key(program_sha: str, base: Target, candidates) -> str:
    """What a program's record depends on: its compile cache key for `base` (program, compiler, pipeline, host
    CPU) and the candidates."""
    return hashlib.sha256("\0".join(("hlojit-autotune", str(RECORD_FORMAT), cache.key_of(program_sha, base),
                                     *candidates)).encode()).hexdigest()


@dataclasses.dataclass
class Choice:
    """What the per-program search chose: the program that compiles (its convolutions marked where Winograd won
    for their shape) and the target, noted with what was measured and chosen; `report`, the same in lines for
    explain (each choice, measured now or read from a record, and what measuring cost); `compiled`, the chosen
    compile where measuring made it just now (else None: compile `source` for `target` through the cache)."""
    source: Program
    target: Target
    report: list
    compiled: Compiled | None = None


def autotune(program: Program, base: Target, timer) -> Compiled:
    """The compile of `choose`'s choice: measured where no record has it, else read from the compile cache."""
    choice = choose(program, base, timer)
    compiled = choice.compiled or cache.compile_cached(choice.source, choice.target)
    compiled.target = _noted(compiled.target, choice.target.note)
    return compiled


def choose(program: Program, base: Target, timer, candidates=tuple(CPU_FLAG_SETS), rounds: int = 5) -> Choice:
    """Each convolution marked with its shape's Winograd choice (winograd_plan), then every candidate compiled
    (through the compile cache) and the program timed on zero-filled arguments; the fastest candidate, its
    target noting what was measured and chosen. Remembered per (marked) program: with a record (on disk, or in
    this process) nothing is measured or compiled.

    Where the marks chose Winograd anywhere, the unmarked program with the base flag set races too (`<flag
    set> without Winograd`): single-op timings need not add up to the program's (on ResNet-18 b8 they chose
    Winograd for three layer shapes and the program measured about even); this search keeps what runs fastest."""
    cpu_name = cpu_name_of(base)
    marked, layers = winograd_plan(program, base, timer)
    variants = {name: (marked, cpu(cpu_name, name)) for name in candidates}
    if marked is not program:
        variants[f"{base.flag_set} without Winograd"] = (program, cpu(cpu_name, base.flag_set))
    record_key = program_record_key(cache.program_hash(marked), cpu(cpu_name), tuple(variants))
    record, why = _program_record(record_key)
    if record is not None and record.get("chosen") in variants:
        return _choice(variants[record["chosen"]], record, "read from a record", base, layers)
    record, results = measure_program(program, variants, timer, rounds)
    _programs_in_process[record_key] = record
    stored = write_record(record_key, record) if cache.enabled() else "kept in this process (HLOJIT_CACHE=0)"
    cache.log(f"autotuned {program.name} ({why}): {describe(record)}; {stored}")
    choice = _choice(variants[record["chosen"]], record, "tuned now", base, layers)
    choice.compiled = results[record["chosen"]]
    return choice


def _program_record(record_key: str) -> tuple[dict | None, str]:
    if record_key in _programs_in_process:
        return _programs_in_process[record_key], "measured before"
    return read_record(record_key)


def _choice(variant: tuple, record: dict, how: str, base: Target, layers: str) -> Choice:
    source, target = variant
    report = [f"flag set: {describe(record)} ({how})"] + ([layers] if layers else [])
    if base.note:
        report.insert(0, f"base target {base.label} ({base.note})")
    note = f"autotuned: {describe(record)}" + (f"; {layers}" if layers else "")
    return Choice(source, _noted(target, note), report)


def measure_program(program: Program, variants: dict, timer, rounds: int) -> tuple[dict, dict]:
    """Compile every variant {name: (program, target)} (through the compile cache) and race them on zero-filled
    arguments: the record, and {name: Compiled} of those timed."""
    start = time.perf_counter()
    arguments = [np.zeros(shape, dtype) for shape, dtype in program.inputs]
    timers, results, failed = {}, {}, {}
    for name, (source, target) in variants.items():
        compiled = cache.compile_cached(source, target)
        if compiled.target.flag_set != target.flag_set:
            failed[name] = f"fell back to {compiled.target.flag_set}"
            continue
        twin = next((other for other, done in results.items() if done.vmfb == compiled.vmfb), None)
        if twin:   # e.g. Winograd's flags on a program without a 3x3 convolution: timing it again measures noise
            failed[name] = f"the same code as {twin}"
            continue
        timers[name], results[name] = [timer(compiled, "main", arguments, program.outputs)], compiled
    signature = ", ".join(short_signature(shape, dtype) for shape, dtype in program.inputs)
    record = _record(race(timers, rounds), failed, [program.name], start, "program", f"{program.name}({signature})")
    return record, results


# --- Winograd per convolution shape ---

WINOGRAD_CHOICES = {"none": 0, "F(2,3)": 2, "F(4,3)": 4}   # record name -> winograd.py's tile size
_shapes_in_process: dict[str, dict] = {}   # record key -> a Winograd shape record, for this process


def winograd_plan(program: Program, base: Target, timer) -> tuple[Program, str]:
    """`program` with each eligible convolution marked with its shape's measured choice (a copy; the original
    is left as it is, and returned itself where no shape chose Winograd), and a note of what was chosen at what
    cost ("" with nothing to choose, or where HLOJIT_WINOGRAD forces the choice)."""
    if winograd.forced() is not None:
        return program, ""
    marked = dataclasses.replace(program, module=ir.Module.parse(
        program.module.operation.get_asm(enable_debug_info=True), program.module.context))
    with marked.module.context:
        shapes = winograd.signatures(marked.module)
        if not shapes:
            return program, ""
        records, measured = _shape_records(shapes, base, timer, program.name)
        choices = {shape: WINOGRAD_CHOICES[records[shape]["chosen"]] for shape in shapes}
        winograd.mark(marked.module, choices)
    note = f"Winograd per convolution ({_spent(records, measured)}): {describe_winograd(records)}"
    return (marked if any(choices.values()) else program), note


def _spent(records: dict, measured: dict) -> str:
    """`tuned now in 1.0 s`, `read from records, measured in 1.0 s`, or both (with the count read)."""
    now = sum(record["cost_seconds"] for record in measured.values())
    read = [record for shape, record in records.items() if shape not in measured]
    before = f"read from records, measured in {sum(record['cost_seconds'] for record in read):.1f} s"
    if not measured:
        return before
    return f"tuned now in {now:.1f} s" + (f"; {len(read)} {before}" if read else "")


def _shape_records(shapes, base: Target, timer, program_name: str) -> tuple[dict, dict]:
    """({shape: record} of every shape, {shape: record} of those measured now): remembered records where this
    process or the cache folder has them, the others measured together, logged and kept."""
    keys = {shape: winograd_key(shape, base) for shape in shapes}
    records, why = {}, {}
    for shape, record_key in keys.items():
        records[shape], why[shape] = _shape_record(record_key)
    missing = [shape for shape in shapes if records[shape] is None]
    if not missing:
        return records, {}
    measured = measure_winograd(timer, base, missing)
    stored = set(_keep(keys[shape], record) for shape, record in measured.items())
    cache.log(f"tuned Winograd for {program_name}: {len(missing)} convolution shape(s) "
              f"({', '.join(sorted(set(why[shape] for shape in missing)))}): "
              f"{describe_winograd(measured)}; {', '.join(sorted(stored))}")
    return {**records, **measured}, measured


def winograd_key(shape: tuple, base: Target) -> str:
    """What a shape's record depends on: the CPU, the compiler, hlojit's pipeline (the rewrite), the flags the
    program compiles with, and the shape."""
    digest = hashlib.sha256()
    for part in (f"hlojit-winograd {RECORD_FORMAT}", cache.host_cpu_features(), cache.compiler_version(),
                 cache.pipeline_fingerprint(), *base.flags, repr(shape)):
        digest.update(part.encode() + b"\0")
    return digest.hexdigest()


def _shape_record(record_key: str) -> tuple[dict | None, str]:
    if record_key in _shapes_in_process:
        return _shapes_in_process[record_key], "measured before"
    record, why = read_record(record_key)
    if record is not None and record["chosen"] not in WINOGRAD_CHOICES:
        return None, "malformed record ignored"
    if record is not None:
        _shapes_in_process[record_key] = record
    return record, why


def _keep(record_key: str, record: dict) -> str:
    _shapes_in_process[record_key] = record
    return write_record(record_key, record) if cache.enabled() else "kept in this process (HLOJIT_CACHE=0)"


def winograd_benchmark_module(shapes) -> str:
    """One function per shape and choice, `conv<k>_m<tile>`: an NHWC 3x3 convolution marked with the choice."""
    functions = []
    for k, shape in enumerate(shapes):
        n, h, w, cin, cout, top, bottom, left, right = shape
        x, kernel = _tensor((n, h, w, cin)), _tensor((3, 3, cin, cout))
        out = _tensor(_winograd_output(shape))
        for m in WINOGRAD_CHOICES.values():
            functions.append(
                f"func.func @conv{k}_m{m}(%a: {x}, %b: {kernel}) -> {out} {{\n  %0 = stablehlo.convolution(%a, %b) "
                f"dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {{stride = [1, 1], pad = "
                f"[[{top}, {bottom}], [{left}, {right}]]}} {{batch_group_count = 1 : i64, feature_group_count = 1 : "
                f"i64, {winograd.CHOICE_ATTRIBUTE} = {m} : i64}} : ({x}, {kernel}) -> {out}\n  return %0 : {out}\n}}")
    return "\n".join(functions)


def _winograd_output(shape: tuple) -> tuple:
    n, h, w, _, cout, top, bottom, left, right = shape
    return n, h + top + bottom - 2, w + left + right - 2, cout


def measure_winograd(timer, base: Target, shapes, rounds: int = ROUNDS) -> dict:
    """Each shape timed plain and as F(2,3) and F(4,3), all in one compiled module, interleaved: {shape: record};
    each record's cost is its share of the whole measurement."""
    start = time.perf_counter()
    compiled = compile_program(_program(winograd_benchmark_module(shapes), [], [], "Winograd tuning"), base)
    rng = np.random.default_rng(0)
    timers = {name: [] for name in WINOGRAD_CHOICES}
    for k, shape in enumerate(shapes):
        n, h, w, cin, cout = shape[:5]
        arguments = [rng.standard_normal((n, h, w, cin)).astype(np.float32),
                     (rng.standard_normal((3, 3, cin, cout)) / np.sqrt(9 * cin)).astype(np.float32)]
        for name, m in WINOGRAD_CHOICES.items():
            timers[name].append(timer(compiled, f"conv{k}_m{m}", arguments, [(_winograd_output(shape), np.float32)]))
    seconds = race(timers, rounds)
    share = (time.perf_counter() - start) / len(shapes)
    records = {}
    for k, shape in enumerate(shapes):
        record = _record({name: [times[k]] for name, times in seconds.items()}, {}, [winograd.describe(shape)], start,
                         "winograd", winograd.describe(shape))
        records[shape] = {**record, "cost_seconds": share}
    return records


def describe_winograd(records: dict) -> str:
    """`64->64ch 56x56 b8 F(4,3) 0.71x, 512->512ch 7x7 b8 none (F(2,3) 1.52x)`: each shape's choice and its time
    against the plain convolution's (or the best Winograd's against the plain one, where none won)."""
    parts = []
    for shape, record in records.items():
        relative, chosen = record["relative"], record["chosen"]
        if chosen == "none":
            rival = min((name for name in relative if name != "none"), key=relative.get, default=None)
            detail = f" ({rival} {relative[rival]:.2f}x)" if rival else ""
        else:
            detail = f" {1 / relative['none']:.2f}x" if "none" in relative else ""
        parts.append(f"{winograd.describe(shape)} {chosen}{detail}")
    return ", ".join(parts)


# --- records on disk ---

def _record_path(record_key: str) -> str:
    return os.path.join(cache.folder(), f"{RECORD_PREFIX}{record_key}.json")


def read_record(record_key: str) -> tuple[dict | None, str]:
    """The record of `record_key`, else None; and why (for the log). A damaged record is ignored."""
    if not cache.enabled():
        return None, "cache off"
    if private_files.folder_problem(cache.folder()):
        return None, "the cache folder is refused"
    try:
        data = private_files.read_regular(_record_path(record_key))
    except FileNotFoundError:
        return None, "not measured before"
    except OSError as e:
        return None, f"record unreadable ({e})"
    try:
        record = json.loads(data)
    except (ValueError, RecursionError):
        return None, "damaged record ignored"
    if not _sound(record, record_key):
        return None, "malformed record ignored"
    return record, "measured before"


def _sound(record, record_key: str) -> bool:
    """Whether a record has every field, of the right type (a malformed one is measured again)."""
    if not isinstance(record, dict) or record.get("key") != record_key or record.get("format") != RECORD_FORMAT:
        return False
    kinds = {"kind": str, "subject": str, "chosen": str, "relative": dict, "seconds": dict, "failed": dict,
             "cost_seconds": (int, float), "measured": str}
    return (all(isinstance(record.get(name), kind) for name, kind in kinds.items())
            and all(isinstance(v, (int, float)) for v in record["relative"].values())
            and record["chosen"] in record["relative"])


def write_record(record_key: str, record: dict) -> str:
    """Store a record atomically (temp file, rename) in the private cache folder; what happened."""
    where = cache.folder()
    refusal = private_files.private_folder(where)
    if refusal:
        return f"not stored: {refusal}"
    temp = None
    try:
        handle, temp = tempfile.mkstemp(dir=where, prefix=".tmp-" + RECORD_PREFIX, suffix=".json")
        with os.fdopen(handle, "w") as f:
            json.dump({**record, "key": record_key}, f, sort_keys=True)
        os.replace(temp, _record_path(record_key))
    except OSError as e:
        if temp and os.path.exists(temp):
            os.remove(temp)
        return f"not stored ({e})"
    return "stored"
