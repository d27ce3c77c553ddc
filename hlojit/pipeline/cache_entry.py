"""One entry of the persistent compile cache, as bytes: what is written, and what a reader accepts.

    HLOJIT-CACHE <sha256> <header: one line of JSON>\\n<the vmfb>

The sha256 covers the header line and the vmfb together, and the header holds the entry's key and the
program's hash: an entry copied under another key's name, or damaged anywhere, is refused. The checksum
catches accidents, not attacks (whoever can write an entry can recompute it): that only this user can
write the folder is what keeps others' code out (private_files). Every field is checked for its type, so
a malformed entry is refused like a damaged one rather than failing later, on every call.
"""
from __future__ import annotations

import hashlib
import json

from .compiler import Compiled

FORMAT = 3                      # bump when the layout changes: old entries then never match (the key has it)
_MAGIC = b"HLOJIT-CACHE "
# Each field of the header and the types it may hold, exactly (a bool is no byte count).
_FIELDS = {"format": (int,), "key": (str,), "program": (str,), "bytes": (int,), "dispatch_count": (int, type(None)),
           "compile_seconds": (int, float), "target": (str,), "iree": (str,), "attempt": (int,)}


class BadEntry(ValueError):
    """An entry that must not be run: the message says why."""


def header(entry_key: str, program_sha: str, compiled: Compiled, iree_version: str, attempt: int) -> dict:
    return {"format": FORMAT, "key": entry_key, "program": program_sha, "bytes": len(compiled.vmfb),
            "dispatch_count": compiled.dispatch_count, "compile_seconds": round(compiled.seconds, 4),
            "target": compiled.target.name, "iree": iree_version, "attempt": attempt}


def encode(fields: dict, vmfb: bytes) -> bytes:
    line = json.dumps(fields, sort_keys=True).encode()
    return _MAGIC + _checksum(line, vmfb).encode() + b" " + line + b"\n" + vmfb


def _checksum(line: bytes, vmfb: bytes) -> str:
    return hashlib.sha256(line + b"\n" + vmfb).hexdigest()


def decode(data: bytes, entry_key: str, program_sha: str | None = None) -> tuple[dict, bytes]:
    """The header and the vmfb of the entry `data`, read for `entry_key` (and the program `program_sha`, when
    given). Raises BadEntry when it is not a sound entry of that key."""
    newline = data.find(b"\n")
    if not data.startswith(_MAGIC) or newline < 0:
        raise BadEntry("no header")
    checksum, _, line = data[len(_MAGIC):newline].partition(b" ")
    vmfb = data[newline + 1:]
    fields = _parse(line)
    if fields["format"] != FORMAT:
        raise BadEntry(f"format {fields['format']}, not {FORMAT}")
    if len(vmfb) != fields["bytes"]:
        raise BadEntry(f"truncated: {len(vmfb)} of {fields['bytes']} bytes")
    if checksum != _checksum(line, vmfb).encode():
        raise BadEntry("checksum mismatch")
    if fields["key"] != entry_key:
        raise BadEntry(f"it is the entry of key {fields['key'][:16]}..., not of {entry_key[:16]}...")
    if program_sha is not None and fields["program"] != program_sha:
        raise BadEntry(f"it holds program {fields['program'][:16]}..., not {program_sha[:16]}...")
    return fields, vmfb


def _parse(line: bytes) -> dict:
    try:
        fields = json.loads(line)
    except (ValueError, RecursionError) as e:   # RecursionError: a header of many nested brackets
        raise BadEntry(f"bad header ({type(e).__name__}: {e})") from None
    if not isinstance(fields, dict):
        raise BadEntry(f"bad header (a JSON {type(fields).__name__}, not an object)")
    for name, types in _FIELDS.items():
        if name not in fields:
            raise BadEntry(f"bad header (no {name!r})")
        if type(fields[name]) not in types:
            raise BadEntry(f"bad header ({name!r} is {fields[name]!r:.60})")
    return fields
