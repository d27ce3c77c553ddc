"""The persistent compile cache: a second process running the same function skips IREE entirely.

An entry is one file, `<key>.vmfb-entry`: a header line (format, sha256 and size of the vmfb, dispatch
count, how long the compile took) and the vmfb. The key is the sha256 of the StableHLO without
locations (editing a comment or moving a line still hits), the IREE compiler version, the target and its
flags, the source of what compile_program does to a module besides (its own flags, the quirks), and the
host CPU's features when the target compiles for `host` (a vmfb built for this CPU may not run on another).

Several processes may share the folder: entries are written to a temp file beside them and renamed into
place, so a reader sees a whole entry or none. A truncated or corrupted entry fails its checksum and is
removed and recompiled, never run. The folder is capped (least recently used entries go first; a hit
touches its entry). Any error of the file system makes a miss, never a failed compile.

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
import sys
import tempfile
import time
from typing import NamedTuple

from ..dialects.types import short_signature
from ..errors import ConfigError
from .compiler import Compiled, compile_program
from .program import Program
from .targets import Target

FORMAT = 1                      # bump when the entry layout changes: old entries then never match
SUFFIX = ".vmfb-entry"
_TEMP_PREFIX = ".tmp-"
_MAGIC = b"HLOJIT-CACHE "
DEFAULT_MAX_BYTES = 1 << 30
_STALE_TEMP_SECONDS = 3600      # a temp file this old was left by a process that died mid-write

logger = logging.getLogger("hlojit")


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
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    number, unit = (text[:-1], units[text[-1].upper()]) if text[-1].upper() in units else (text, 1)
    try:
        value = int(float(number) * unit)
    except ValueError:
        value = -1
    if value < 0:
        raise ConfigError(f"HLOJIT_CACHE_MAX_BYTES={text!r} is not a size in bytes (e.g. 1073741824, 500M, 2G)")
    return value


# --- the key ---

@functools.cache
def compiler_version() -> str:
    try:
        return importlib.metadata.version("iree-base-compiler")
    except importlib.metadata.PackageNotFoundError:  # a source build: its library's identity stands in
        import iree.compiler
        stat = os.stat(iree.compiler.__file__)
        return f"unknown ({iree.compiler.__file__} {stat.st_size} {stat.st_mtime_ns})"


@functools.cache
def pipeline_fingerprint() -> str:
    """What a compile does beyond the module and the flags: compile_program's own flags, the quirks it
    rewrites the module with, and the builders the quirks use. An edit to them makes every key new."""
    from ..dialects import stablehlo
    from . import compiler, quirks
    digest = hashlib.sha256()
    for module in (compiler, quirks, stablehlo):
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


def key(program: Program, target: Target) -> str:
    """The cache key of compiling `program` for `target`. Call it before compiling: that consumes the module."""
    digest = hashlib.sha256()
    fallback = ("fallback", *target.fallback.flags) if target.fallback else ()
    for part in (f"hlojit-cache {FORMAT}", compiler_version(), pipeline_fingerprint(), target.name, *target.flags,
                 *fallback):
        digest.update(part.encode() + b"\0")
    if "--iree-llvmcpu-target-cpu=host" in target.flags:
        digest.update(host_cpu_features().encode() + b"\0")
    digest.update(program.module.operation.get_asm(enable_debug_info=False).encode())
    return digest.hexdigest()


# --- entries ---

def _path(entry_key: str) -> str:
    return os.path.join(folder(), entry_key + SUFFIX)


def read(entry_key: str, target: Target) -> tuple[Compiled | None, str]:
    """The cached compile of `entry_key`, else None; and what happened (for the log)."""
    path = _path(entry_key)
    start = time.perf_counter()
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        return None, "not in the cache"
    except OSError as e:
        return None, f"unreadable ({e})"
    problem = None
    try:
        newline = data.index(b"\n")
        if not data.startswith(_MAGIC):
            raise ValueError("no header")
        header = json.loads(data[len(_MAGIC):newline])
        vmfb = data[newline + 1:]
        if header.get("format") != FORMAT:
            problem = f"format {header.get('format')}, not {FORMAT}"
        elif len(vmfb) != header["bytes"]:
            problem = f"truncated: {len(vmfb)} of {header['bytes']} bytes"
        elif hashlib.sha256(vmfb).hexdigest() != header["sha256"]:
            problem = "checksum mismatch"
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        problem = f"bad header ({e})"
    if problem:
        _remove(path)
        return None, f"corrupt entry removed: {problem}"
    try:
        os.utime(path)  # least recently used goes first: a hit makes it the most recent
    except OSError:
        pass
    if header.get("fell_back") and target.fallback is not None:
        target = target.fallback   # the flags that made this vmfb
    compiled = Compiled(vmfb, target, time.perf_counter() - start, header.get("dispatch_count"), cache_hit=True)
    return compiled, f"compiled in {header.get('compile_seconds', 0):.2f} s by an earlier run"


def write(entry_key: str, compiled: Compiled, cap: int | None = None, fell_back: bool = False) -> str:
    """Store a compile (atomically), then evict down to the cap. Returns what happened. `fell_back`: the
    vmfb was made with the target's fallback flags."""
    cap = max_bytes() if cap is None else cap
    header = {"format": FORMAT, "bytes": len(compiled.vmfb), "sha256": hashlib.sha256(compiled.vmfb).hexdigest(),
              "dispatch_count": compiled.dispatch_count, "compile_seconds": round(compiled.seconds, 4),
              "target": compiled.target.name, "iree": compiler_version(), "fell_back": fell_back}
    data = _MAGIC + json.dumps(header, sort_keys=True).encode() + b"\n" + compiled.vmfb
    if len(data) > cap:
        return f"not stored: {len(data)} bytes is over the cap of {cap}"
    where = folder()
    temp = None
    try:
        os.makedirs(where, exist_ok=True)
        handle, temp = tempfile.mkstemp(dir=where, prefix=_TEMP_PREFIX, suffix=SUFFIX)
        with os.fdopen(handle, "wb") as f:
            f.write(data)
        os.replace(temp, _path(entry_key))
    except OSError as e:
        if temp:
            _remove(temp)
        return f"not stored ({e})"
    evict(cap, keep=entry_key + SUFFIX)
    return "stored"


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
                        if now - e.stat().st_mtime > _STALE_TEMP_SECONDS:
                            stale.append(e.name)
                    elif e.name.endswith(SUFFIX):
                        st = e.stat()
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
    entry_key = key(program, target)
    compiled, why = read(entry_key, target)
    if compiled is not None:
        log_compile(program, compiled, f"disk cache hit ({why})")
        return compiled
    compiled = compile_program(program, target)
    stored = write(entry_key, compiled, cap, fell_back=compiled.target != target)
    log_compile(program, compiled, f"disk cache miss ({why}; {stored})")
    return compiled


def log_compile(program: Program, compiled: Compiled, what: str):
    """HLOJIT_LOG=compiles: one line per compile, to the "hlojit" logger, or stderr when no handler is set."""
    if "compiles" not in os.environ.get("HLOJIT_LOG", "").replace(" ", "").split(","):
        return
    signature = ", ".join(short_signature(shape, dtype) for shape, dtype in program.inputs)
    message = (f"compile {program.name}({signature}) for {compiled.target.name}: "
               f"{compiled.seconds:.3f} s, {what}" + (f"; traced because {program.why}" if program.why else ""))
    if logger.level == logging.NOTSET:
        logger.setLevel(logging.INFO)  # asked for by HLOJIT_LOG: do not let the root's WARNING drop it
    if logger.hasHandlers():  # (importing iree.compiler calls logging.basicConfig: the root has a handler)
        logger.info(message)
    else:
        print("hlojit: " + message, file=sys.stderr, flush=True)


# --- the public face: hj.cache.info(), hj.cache.clear() ---

class CacheInfo(NamedTuple):
    folder: str
    entries: int
    bytes: int
    cap: int
    enabled: bool

    def __str__(self):
        state = "" if self.enabled else " (off: HLOJIT_CACHE=0)"
        return (f"hlojit compile cache {self.folder}{state}: {self.entries} "
                f"entr{'y' if self.entries == 1 else 'ies'}, {_size(self.bytes)} of {_size(self.cap)}")


def _size(n: int) -> str:
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{n} bytes"


def info() -> CacheInfo:
    entries, _ = _scan(folder())
    return CacheInfo(folder(), len(entries), sum(size for _, size, _ in entries), max_bytes(), enabled())


def clear():
    """Remove every entry (and leftover temp file) from the cache folder; other files there are left alone."""
    where = folder()
    try:
        names = os.listdir(where)
    except OSError:
        return
    for name in names:
        if name.endswith(SUFFIX):
            _remove(os.path.join(where, name))
