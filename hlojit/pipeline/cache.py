"""The persistent compile cache: a second process running the same function skips IREE entirely.

An entry is one file, `<key>.vmfb-entry`: a header line (its key, the program's hash, the format, the size
of the vmfb, dispatch count, how long the compile took, a checksum of all that and the vmfb together) and
the vmfb (cache_entry.py). The key is the sha256 of the StableHLO without
locations (editing a comment or moving a line still hits), the IREE compiler version, the target and its
flags, the source of what compile_program does to a module besides (its own flags, the quirks), and the
host CPU's features when the target compiles for `host` (a vmfb built for this CPU may not run on another).

Several processes may share the folder: entries are written to a temp file beside them and renamed into
place, so a reader sees a whole entry or none. A truncated, corrupted or malformed entry, or one that
holds another key, is removed and recompiled, never run. A vmfb is machine code: only a folder that this
user alone can write is used (created 0700; another user's or a group- or world-writable one is refused
with a CacheWarning, and hlojit compiles without it), and an entry is read only when it is a regular file
of this user's that nobody else may write, opened without following links or blocking (private_files.py).
The folder is capped (least recently used entries go first; a hit touches its entry). Any error of the
file system makes a miss, never a failed compile. tuning.py keeps its measurements in the same folder
(`tuning-<key>.json`): info lists them, clear removes them with the entries.

    HLOJIT_CACHE_DIR        the folder (default ~/.cache/hlojit, or $XDG_CACHE_HOME/hlojit)
    HLOJIT_CACHE=0          do not read or write it
    HLOJIT_CACHE_MAX_BYTES  the cap (default 1 GiB; suffixes K, M, G are powers of 1024)
    HLOJIT_LOG=compiles     log every compile (logger "hlojit"; to stderr when logging is not configured)
"""
from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import json
import logging
import os
import platform
import re
import sys
import tempfile
import time
import warnings
from decimal import Decimal
from typing import NamedTuple

from ..dialects.types import abbreviated, short_signature
from ..errors import ConfigError
from . import cache_entry as entry
from . import private_files, winograd
from .compiler import Compiled, compile_program
from .program import Program
from .targets import Target, attempt_of, attempts

SUFFIX = ".vmfb-entry"
TUNING_PREFIX = "tuning-"       # tuning.py's records, `tuning-<key>.json`, share the folder (listed by info)
_TEMP_PREFIX = ".tmp-"
DEFAULT_MAX_BYTES = 1 << 30
_STALE_TEMP_SECONDS = 3600      # a temp file this old was left by a process that died mid-write

logger = logging.getLogger("hlojit")
_warned: set[str] = set()       # each refusal is told once per process


class CacheWarning(UserWarning):
    """The compile cache folder, or an entry in it, is not this user's alone to write: it is not used."""


# --- settings: read from the environment on every use, so a test or a script can change them ---

def enabled() -> bool:
    return os.environ.get("HLOJIT_CACHE", "1").strip().lower() not in ("0", "false", "no", "off")


def folder() -> str:
    explicit = os.environ.get("HLOJIT_CACHE_DIR")
    if explicit:
        return os.path.abspath(os.path.expanduser(explicit))
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "hlojit")


def max_bytes() -> int:
    text = os.environ.get("HLOJIT_CACHE_MAX_BYTES", "").strip()
    if not text:
        return DEFAULT_MAX_BYTES
    size = re.fullmatch(r"(\d+(?:\.\d*)?)\s*([KMG]?)", text, re.IGNORECASE)   # no sign, no inf or nan, no 1e9
    if size is None:
        raise ConfigError(f"HLOJIT_CACHE_MAX_BYTES={text!r} is not a size in bytes (e.g. 1073741824, 500M, 2G)")
    number, unit = size.groups()
    return int(Decimal(number) * {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}[unit.upper()])


# --- the key ---

@functools.cache
def compiler_version() -> str:
    try:
        return importlib.metadata.version("iree-base-compiler")
    except importlib.metadata.PackageNotFoundError:  # a source build: its library's identity stands in
        import iree.compiler
        stat = os.stat(iree.compiler.__file__)
        return f"unknown ({iree.compiler.__file__} {stat.st_size} {stat.st_mtime_ns})"


def fingerprinted_modules() -> tuple:
    """The modules whose source is part of every key: compile_program's, the quirks and every rewrite they list
    (tests/test_legalize.py checks that each module quirks.py imports is here), the builders they use, the
    readers of types and attributes they decide by (dialects/types.py: constant_value, is_splat_constant), and the
    interpreter's op tables constant folding computes with."""
    from ..dialects import build, regions, stablehlo, types
    from . import (accurate_math, compile_rewrites, compiler, complex_math_pairs, complex_pairs, constant_folding,
                   conv_gradients, conv_patches, conv_phases, eigh_kernel, factorization_kernels, fft_rewrites,
                   kernel_epilogues, kernel_rows, kernel_text, kernels, layout, legalize, linalg_rewrites,
                   matmul_kernel, normalization_kernels, qr_kernels, quirks, register_tiles, rotation_buffer,
                   scatter_rewrites, sessions, sort_networks, sort_rewrites, subnormal_compares, svd_kernel, values,
                   vm_rewrites, vmvx_rewrites, window_scatters, winograd)
    return (compiler, compile_rewrites, complex_math_pairs, complex_pairs, constant_folding, conv_gradients,
            conv_patches, conv_phases, eigh_kernel, factorization_kernels, fft_rewrites, kernel_epilogues, kernel_rows,
            kernel_text, kernels, matmul_kernel, qr_kernels, register_tiles, rotation_buffer, svd_kernel,
            normalization_kernels, window_scatters, layout, legalize, accurate_math, linalg_rewrites, values, quirks,
            scatter_rewrites, sessions, sort_networks, sort_rewrites, stablehlo, regions, build, types,
            subnormal_compares, vm_rewrites, vmvx_rewrites, winograd,
            *constant_folding.EVALUATOR_MODULES)


@functools.cache
def pipeline_fingerprint() -> str:
    """What a compile does beyond the module and the flags: compile_program's own flags, the quirks it
    rewrites the module with, and the builders the quirks use. An edit to them makes every key new."""
    digest = hashlib.sha256()
    for module in fingerprinted_modules():
        with open(module.__file__, "rb") as f:
            digest.update(f.read())
    return digest.hexdigest()


@functools.cache
def host_cpu_features() -> str:
    """What `--iree-llvmcpu-target-cpu=host` bakes into a vmfb: this CPU's model and feature flags."""
    try:
        with open("/proc/cpuinfo") as f:
            wanted = {}
            for line in f:
                name, _, value = line.partition(":")
                name = name.strip()
                if name in ("model name", "flags", "Features", "CPU implementer", "CPU part"):
                    wanted.setdefault(name, value.strip())
        if "flags" in wanted or "Features" in wanted:
            return json.dumps(wanted, sort_keys=True)
    except OSError:
        pass
    return f"{platform.machine()} {platform.processor()} {platform.platform()}"  # coarser elsewhere


def program_hash(program: Program) -> str:
    """The sha256 of the StableHLO without locations. Call it before compiling: that consumes the module."""
    return hashlib.sha256(program.module.operation.get_asm(enable_debug_info=False).encode()).hexdigest()


def key(program: Program, target: Target) -> str:
    """The cache key of compiling `program` for `target`. Call it before compiling: that consumes the module."""
    return key_of(program_hash(program), target)


def key_of(program_sha: str, target: Target) -> str:
    """The cache key of compiling the program whose program_hash is `program_sha` for `target`."""
    digest = hashlib.sha256()
    others = [part for attempt in list(attempts(target))[1:] for part in ("attempt", *attempt.flags)]
    for part in (f"hlojit-cache {entry.FORMAT}", compiler_version(), pipeline_fingerprint(), target.name,
                 f"flag set {target.flag_set}", *target.flags,
                 *others, f"winograd {winograd.mode()}"):
        digest.update(part.encode() + b"\0")
    if "--iree-llvmcpu-target-cpu=host" in target.flags:
        digest.update(host_cpu_features().encode() + b"\0")
    digest.update(program_sha.encode())
    return digest.hexdigest()


# --- entries ---

def _path(entry_key: str) -> str:
    return os.path.join(folder(), entry_key + SUFFIX)


def _refused(where: str, why: str) -> str:
    """Warn (once per process and reason) that the cache folder is not used; what to log."""
    _warn_once(f"not using the compile cache folder {where}: {why}; compiling without the persistent cache")
    return f"the folder is refused: {why}"


def _warn_once(message: str):
    if message not in _warned:
        _warned.add(message)
        warnings.warn(message, CacheWarning, stacklevel=4)


def read(entry_key: str, target: Target, program_sha: str | None = None) -> tuple[Compiled | None, str]:
    """The cached compile of `entry_key` (of the program whose hash is `program_sha`, when given), else None;
    and what happened (for the log). A bad entry is removed, never run: damaged, another key's or program's,
    malformed, not a regular file, or writable by someone else."""
    where = folder()
    refusal = private_files.folder_problem(where)
    if refusal:
        return None, _refused(where, refusal)
    path = _path(entry_key)
    start = time.perf_counter()
    try:
        data = private_files.read_regular(path)
    except FileNotFoundError:
        return None, "not in the cache"
    except private_files.Refused as e:
        _remove(path)
        _warn_once(f"removed the compile cache entry {path}: {e}")
        return None, f"entry removed: {e}"
    except OSError as e:
        return None, f"unreadable ({e})"
    try:
        header, vmfb = entry.decode(data, entry_key, program_sha)
    except entry.BadEntry as e:
        _remove(path)
        return None, f"bad entry removed: {e}"
    _touch(path)   # least recently used goes first: a hit makes it the most recent
    made_by = list(attempts(target))   # the flags that made this vmfb: which of those a compile tries
    if not 0 <= header["attempt"] < len(made_by):
        _remove(path)
        return None, f"bad entry removed: made by attempt {header['attempt']} of {len(made_by)}"
    target = made_by[header["attempt"]]
    compiled = Compiled(vmfb, target, time.perf_counter() - start, header["dispatch_count"], cache_hit=True)
    return compiled, f"compiled in {header['compile_seconds']:.2f} s by an earlier run"


def write(entry_key: str, compiled: Compiled, *, program_sha: str, cap: int | None = None,
          attempt: int = 0) -> str:
    """Store a compile (atomically, mode 0600, in a folder made 0700), then evict down to the cap. Returns what
    happened. `attempt`: which of targets.attempts(the target asked for) made the vmfb (0: its own flags)."""
    cap = max_bytes() if cap is None else cap
    data = entry.encode(entry.header(entry_key, program_sha, compiled, compiler_version(), attempt), compiled.vmfb)
    if len(data) > cap:
        return f"not stored: {len(data)} bytes is over the cap of {cap}"
    where = folder()
    refusal = private_files.private_folder(where)
    if refusal:
        return "not stored: " + _refused(where, refusal)
    temp = None
    try:
        handle, temp = tempfile.mkstemp(dir=where, prefix=_TEMP_PREFIX, suffix=SUFFIX)
        with os.fdopen(handle, "wb") as f:
            f.write(data)
        _touch(temp)
        os.replace(temp, _path(entry_key))
    except OSError as e:
        if temp:
            _remove(temp)
        return f"not stored ({e})"
    evict(cap, keep=entry_key + SUFFIX)
    return "stored"


def _touch(path: str):
    """An entry's time of last use, from the clock `time.time_ns` reads, for writes and hits alike. A time the
    kernel stamps itself (`os.utime(path)`, a write) may come from a coarser clock, a tick behind: a hit ~2 ms after
    another entry's write then counted as older than it, and its entry was evicted first (tests/test_cache.py's
    size-cap test failed 3 runs in 4 once a trace took 0.6 ms instead of 9)."""
    now = time.time_ns()
    try:
        os.utime(path, ns=(now, now))
    except OSError:
        pass


def _remove(path: str):
    try:
        os.remove(path)
    except OSError:  # gone already (another process), or not ours to remove: either way not an error
        pass


def _scan(where: str):
    """(name, size, mtime) of every entry, and the names of temp files left by dead writers."""
    entries, stale = [], []
    now = time.time()
    try:
        with os.scandir(where) as it:
            for e in it:
                try:
                    if e.name.endswith(SUFFIX) and e.name.startswith(_TEMP_PREFIX):
                        if now - e.stat(follow_symlinks=False).st_mtime > _STALE_TEMP_SECONDS:
                            stale.append(e.name)
                    elif e.name.endswith(SUFFIX):
                        st = e.stat(follow_symlinks=False)
                        entries.append((e.name, st.st_size, st.st_mtime_ns))
                except OSError:
                    continue
    except OSError:
        pass
    return entries, stale


def evict(cap: int | None = None, keep: str | None = None):
    """Remove least recently used entries until the folder holds at most `cap` bytes."""
    cap = max_bytes() if cap is None else cap
    where = folder()
    entries, stale = _scan(where)
    for name in stale:
        _remove(os.path.join(where, name))
    total = sum(size for _, size, _ in entries)
    for name, size, _ in sorted(entries, key=lambda e: e[2]):
        if total <= cap:
            break
        if name != keep:
            _remove(os.path.join(where, name))
            total -= size


# --- compiling through the cache ---

def compile_cached(program: Program, target: Target) -> Compiled:
    """`compile_program`, but read from the persistent cache when this exact compile was done before."""
    if not enabled():
        compiled = compile_program(program, target)
        log_compile(program, compiled, "cache off (HLOJIT_CACHE=0)")
        return compiled
    cap = max_bytes()  # a bad HLOJIT_CACHE_MAX_BYTES raises now, not after compiling
    program_sha = program_hash(program)
    entry_key = key_of(program_sha, target)
    compiled, why = read(entry_key, target, program_sha)
    if compiled is not None:
        log_compile(program, compiled, f"disk cache hit ({why})")
        return compiled
    compiled = compile_program(program, target)
    stored = write(entry_key, compiled, program_sha=program_sha, cap=cap,
                   attempt=attempt_of(target, compiled.target))
    log_compile(program, compiled, f"disk cache miss ({why}; {stored})")
    return compiled


def log_compile(program: Program, compiled: Compiled, what: str):
    """HLOJIT_LOG=compiles: one line per compile, to the "hlojit" logger, or stderr when no handler is set."""
    signature = abbreviated(short_signature(shape, dtype) for shape, dtype in program.inputs)
    log(f"compile {program.name}({signature}) for {compiled.target.label}: "
        f"{compiled.seconds:.3f} s, {what}" + (f"; traced because {program.why}" if program.why else ""))


def log(message: str):
    """HLOJIT_LOG=compiles: one line to the "hlojit" logger, or stderr when no handler is set."""
    if "compiles" not in os.environ.get("HLOJIT_LOG", "").replace(" ", "").split(","):
        return
    if logger.level == logging.NOTSET:
        logger.setLevel(logging.INFO)  # asked for by HLOJIT_LOG: do not let the root's WARNING drop it
    if logger.hasHandlers():  # (importing iree.compiler calls logging.basicConfig: the root has a handler)
        logger.info(message)
    else:
        print("hlojit: " + message, file=sys.stderr, flush=True)


# --- the public face: hj.cache.info(), hj.cache.clear() ---

class TuningRecord(NamedTuple):
    """One of tuning.py's records, as info lists it: what was tuned (`kind`: machine, program or winograd, and
    `subject`, e.g. the convolution's shape), what it chose, when (UTC) and what measuring it cost."""
    kind: str
    subject: str
    chosen: str
    measured: str
    cost_seconds: float

    def __str__(self):
        if self.kind == "unreadable":
            return f"unreadable record {self.subject} ({self.chosen})"
        return f"{self.kind} {self.subject}: {self.chosen} (measured {self.measured} UTC in {self.cost_seconds:.1f} s)"


class CacheInfo(NamedTuple):
    folder: str
    entries: int
    bytes: int
    cap: int
    enabled: bool
    tuning: tuple = ()      # TuningRecord of each tuning record in the folder, oldest first

    def __str__(self):
        state = "" if self.enabled else " (off: HLOJIT_CACHE=0)"
        count = len(self.tuning)
        lines = [f"hlojit compile cache {self.folder}{state}: {self.entries} "
                 f"entr{'y' if self.entries == 1 else 'ies'}, {_size(self.bytes)} of {_size(self.cap)}; "
                 f"{count} tuning record{'' if count == 1 else 's'}"]
        return "\n".join(lines + [f"  tuned {record}" for record in self.tuning])


def _size(n: int) -> str:
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{n} bytes"


def info() -> CacheInfo:
    entries, _ = _scan(folder())
    return CacheInfo(folder(), len(entries), sum(size for _, size, _ in entries), max_bytes(), enabled(),
                     tuning_records())


def _is_tuning_record(name: str) -> bool:
    return name.endswith(".json") and name.startswith((TUNING_PREFIX, _TEMP_PREFIX + TUNING_PREFIX))


def tuning_records() -> tuple:
    """A TuningRecord per tuning record in the folder, oldest first; one it cannot read (damaged, of an older
    format, not this user's alone) is listed as unreadable (tuning.py measures again where it is needed)."""
    where = folder()
    try:
        names = [name for name in os.listdir(where) if name.startswith(TUNING_PREFIX) and name.endswith(".json")]
    except OSError:
        return ()
    listed = []
    for name in names:
        path = os.path.join(where, name)
        try:
            listed.append((os.stat(path, follow_symlinks=False).st_mtime_ns, _tuning_record(path)))
        except OSError:   # removed meanwhile (another process's clear)
            continue
    return tuple(record for _, record in sorted(listed))


def _tuning_record(path: str) -> TuningRecord:
    name = os.path.basename(path)
    try:
        record = json.loads(private_files.read_regular(path))
    except private_files.Refused as e:
        return TuningRecord("unreadable", name, str(e), "", 0.0)
    except (ValueError, RecursionError):
        return TuningRecord("unreadable", name, "damaged", "", 0.0)
    fields = {"kind": str, "subject": str, "chosen": str, "measured": str, "cost_seconds": (int, float)}
    if not isinstance(record, dict) or not all(isinstance(record.get(f), kind) for f, kind in fields.items()):
        return TuningRecord("unreadable", name, "malformed or of an older format", "", 0.0)
    return TuningRecord(*(record[f] for f in fields))


def clear():
    """Remove every entry and tuning record (and leftover temp file) from the cache folder; other files there
    are left alone. A new process measures and compiles anew; this one keeps what it has loaded (its functions'
    executables, the choices tuning.py made or read)."""
    where = folder()
    try:
        names = os.listdir(where)
    except OSError:
        return
    for name in names:
        if name.endswith(SUFFIX) or _is_tuning_record(name):
            _remove(os.path.join(where, name))
