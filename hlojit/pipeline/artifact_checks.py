"""What `artifacts.read` checks before it trusts an exported artifact: every manifest field's type, the
fields' agreement with each other, and the manifest's inputs and outputs against the vmfb's own
declaration of its entry point.

A manifest is a JSON file anyone can edit, and the runtime believes whatever shapes it is given: an output
shape edited larger reads memory past IREE's buffer, an edited dtype reinterprets it, a deleted `host`
skips the CPU check. So every field is checked here (an error names it), and the types that reach the
runtime are the vmfb's own (IREE's `iree.abi.declaration` reflection attribute), which the manifest must
repeat exactly.
"""
from __future__ import annotations

import re

import numpy as np

from iree.compiler import ir

from ..dialects.types import SUPPORTED_DTYPES, dtype_of, shape_of
from .targets import TARGETS, Target

MAX_TREE_DEPTH = 200      # JSON nesting of a pytree structure in a manifest: deeper is refused at export and load
_DTYPE_NAMES = frozenset(d.name for d in SUPPORTED_DTYPES)
_KINDS = ("positional_only", "positional_or_keyword", "var_positional", "keyword_only", "var_keyword")
_SHA256 = re.compile(r"[0-9a-f]{64}")
# one argument or result of IREE's declaration: `%input0: tensor<2xi8> {iree.abi.encoding = tensor<2xui8>}`
_TENSOR = r"tensor<(?:[^<>]|<[^<>]*>)*>"   # one level of nesting: tensor<4xcomplex<f32>>
_DECLARED = re.compile(rf"%(input|output)(\d+): ({_TENSOR})(?: \{{iree\.abi\.encoding = ({_TENSOR})\}})?")


class Malformed(Exception):
    """A manifest field that is missing, of the wrong type, or disagrees: `field` is its JSON path."""

    def __init__(self, field: str, problem: str):
        super().__init__(f"{field}: {problem}")
        self.field = field


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _string(v, field):
    if not isinstance(v, str):
        raise Malformed(field, f"expected a string, found {_shown(v)}")


def _count(v, field, optional=False):
    if optional and v is None:
        return
    if not _is_int(v) or v < 0:
        raise Malformed(field, f"expected an integer >= 0{' or null' if optional else ''}, found {_shown(v)}")


def _seconds(v, field):
    if v is not None and (not isinstance(v, (int, float)) or isinstance(v, bool) or not v >= 0):
        raise Malformed(field, f"expected a number of seconds >= 0 or null, found {_shown(v)}")


def _shown(v) -> str:
    text = repr(v)
    return f"{type(v).__name__} {text if len(text) <= 60 else text[:57] + '...'}"


def _object(v, field, required: tuple, optional: tuple = ()) -> dict:
    if not isinstance(v, dict):
        raise Malformed(field, f"expected an object, found {_shown(v)}")
    missing = [k for k in required if k not in v]
    if missing:
        raise Malformed(f"{field}.{missing[0]}" if field else missing[0], "missing")
    unknown = [k for k in v if k not in required and k not in optional]
    if unknown:
        raise Malformed(f"{field}.{unknown[0]}" if field else str(unknown[0]), "not a field of this format")
    return v


def _list(v, field) -> list:
    if not isinstance(v, list):
        raise Malformed(field, f"expected a list, found {_shown(v)}")
    return v


def _depth(obj) -> int:
    """How deeply JSON lists and objects nest in `obj` (counted without recursion: it may be very deep)."""
    deepest, stack = 0, [(obj, 1)]
    while stack:
        v, depth = stack.pop()
        if isinstance(v, (list, dict)):
            deepest = max(deepest, depth)
            stack.extend((c, depth + 1) for c in (v.values() if isinstance(v, dict) else v))
    return deepest


def _tree(v, field):
    """The pytree structure's format is the frontend's; here only its depth, which its reader recurses on
    (each pytree level is two or three JSON levels: {"tuple": [...]}, {"dict": [[key, child]]})."""
    if _depth(v) > MAX_TREE_DEPTH:
        raise Malformed(field, f"nested more than {MAX_TREE_DEPTH} JSON levels deep")


def _leaves(v, field):
    for i, leaf in enumerate(_list(v, field)):
        where = f"{field}[{i}]"
        _object(leaf, where, ("name", "shape", "dtype"), ("weak",))
        _string(leaf["name"], where + ".name")
        shape = _list(leaf["shape"], where + ".shape")
        for j, d in enumerate(shape):
            _count(d, f"{where}.shape[{j}]")
        if leaf["dtype"] not in _DTYPE_NAMES:
            raise Malformed(where + ".dtype", f"{_shown(leaf['dtype'])} is not a dtype hlojit supports")
        if not isinstance(leaf.get("weak", False), bool):
            raise Malformed(where + ".weak", f"expected true or false, found {_shown(leaf['weak'])}")


def _arguments(v, field):
    for i, argument in enumerate(_list(v, field)):
        where = f"{field}[{i}]"
        _object(argument, where, ("name", "kind", "tree"))
        if not isinstance(argument["name"], str) or not argument["name"].isidentifier():
            raise Malformed(where + ".name", f"expected a Python identifier, found {_shown(argument['name'])}")
        if argument["kind"] not in _KINDS:
            raise Malformed(where + ".kind", f"expected one of {', '.join(_KINDS)}, found {_shown(argument['kind'])}")
        _tree(argument["tree"], where + ".tree")


def target_cpu(flags) -> str | None:
    """The CPU llvm-cpu code is compiled for (the last flag wins; IREE's default is generic), else None."""
    if "--iree-hal-local-target-device-backends=llvm-cpu" not in flags:
        return None
    named = [f.split("=", 1)[1] for f in flags if f.startswith("--iree-llvmcpu-target-cpu=")]
    return named[-1] if named else "generic"


def _target(v, field):
    _object(v, field, ("name", "driver", "flags", "cpu", "portable"))
    if v["name"] not in TARGETS:
        raise Malformed(field + ".name", f"unknown target {_shown(v['name'])}; known: {', '.join(TARGETS)}")
    made: Target = TARGETS[v["name"]]()
    if v["driver"] != made.driver:
        raise Malformed(field + ".driver", f"{_shown(v['driver'])}, but {v['name']} code runs on {made.driver!r}")
    flags = _list(v["flags"], field + ".flags")
    for i, flag in enumerate(flags):
        if not isinstance(flag, str) or not flag.startswith("--"):
            raise Malformed(f"{field}.flags[{i}]", f"expected an iree-compile flag (--...), found {_shown(flag)}")
    device = [f for f in made.flags if "target-device" in f or "device-backends" in f]
    if not set(device) <= set(flags):
        raise Malformed(field + ".flags", f"they do not compile for {v['name']} (no {' '.join(device)})")
    cpu = target_cpu(flags)
    if v["cpu"] != cpu:
        raise Malformed(field + ".cpu", f"{_shown(v['cpu'])}, but the flags compile for {cpu!r}")
    if v["portable"] is not (cpu != "host"):
        raise Malformed(field + ".portable", f"{_shown(v['portable'])}, but the code is for CPU {cpu!r}")


def _host(v, field, cpu):
    """The exporting machine: recorded for CPU code (its arch), with its CPU features for `host` code."""
    if cpu is None:
        if v is not None:
            raise Malformed(field, f"expected null for code that is not for a CPU, found {_shown(v)}")
        return
    _object(v, field, ("arch",), ("cpu_model", "cpu_features") if cpu == "host" else ())
    _string(v["arch"], field + ".arch")
    _string(v.get("cpu_model", ""), field + ".cpu_model")
    for i, feature in enumerate(_list(v.get("cpu_features", []), field + ".cpu_features")):
        _string(feature, f"{field}.cpu_features[{i}]")


def _strings(v, field, values=_string):
    if not isinstance(v, dict):
        raise Malformed(field, f"expected an object, found {_shown(v)}")
    for k, value in v.items():
        values(value, f"{field}.{k}")


def _iree(v, field):
    for name in _object(v, field, ("compiler", "compiler_revision", "runtime", "runtime_revision")):
        _string(v[name], f"{field}.{name}")


def _count_or_null(v, field):
    _count(v, field, optional=True)


def _rewrites(v, field):
    _strings(v, field, _count)


_FIELDS = {   # every field export writes but `host` (checked against `target`), and its check
    "format": _string, "name": _string, "inputs": _leaves, "outputs": _leaves, "arguments": _arguments,
    "out_tree": _tree, "target": _target, "iree": _iree, "vmfb_sha256": _string, "vmfb_bytes": _count,
    "work": _count_or_null, "statics": _strings, "rewrites": _rewrites, "dispatch_count": _count_or_null,
    "compile_seconds": _seconds, "reproduce": _string, "entry_point": _string,
}


def check_manifest(obj: dict):
    """Raise `Malformed` naming the first field of the manifest JSON `obj` that is missing, unknown,
    mistyped or inconsistent with the others."""
    _object(obj, "", tuple(_FIELDS) + ("host",))
    for name, check in _FIELDS.items():
        check(obj[name], name)
    _host(obj["host"], "host", obj["target"]["cpu"])
    if not _SHA256.fullmatch(obj["vmfb_sha256"]):
        raise Malformed("vmfb_sha256", f"expected 64 lowercase hex digits, found {_shown(obj['vmfb_sha256'])}")
    if not obj["entry_point"].isidentifier():
        raise Malformed("entry_point", f"expected a function name, found {_shown(obj['entry_point'])}")


def declared_types(declaration: str) -> tuple[list, list]:
    """([(shape, dtype)] of the inputs, [...] of the outputs) that IREE's `iree.abi.declaration` of a
    function states, e.g. `sync func @main(%input0: tensor<2x3xf32>) -> (%output0: tensor<2xi32>)`.
    Unsigned tensors are declared as signless with the original type as `iree.abi.encoding`."""
    found = _DECLARED.findall(declaration)
    if len(found) != declaration.count("%input") + declaration.count("%output"):
        raise ValueError(f"IREE declares an argument or result that is not a static tensor: {declaration}")
    sides = {"input": [], "output": []}
    with ir.Context():
        for side, index, storage, encoding in found:
            if int(index) != len(sides[side]):
                raise ValueError(f"IREE's declaration lists {side}{index} out of order: {declaration}")
            try:
                t = ir.Type.parse(encoding or storage)
            except ir.MLIRError as e:
                raise ValueError(f"{encoding or storage} is not a tensor type: {e}") from None
            sides[side].append((shape_of(t), dtype_of(t)))
    return sides["input"], sides["output"]


def check_types(manifest_leaves: list, declared: list, field: str, function: str):
    """Raise `Malformed` where the manifest's `inputs` or `outputs` are not exactly what the vmfb declares."""
    if len(manifest_leaves) != len(declared):
        raise Malformed(field, f"the manifest lists {len(manifest_leaves)}, the vmfb's {function} has "
                               f"{len(declared)}")
    for i, (leaf, (shape, dtype)) in enumerate(zip(manifest_leaves, declared)):
        if tuple(leaf.shape) != tuple(shape):
            raise Malformed(f"{field}[{i}].shape", f"the manifest says {list(leaf.shape)} ({leaf.name}), the "
                                                   f"vmfb's {function} declares {list(shape)}")
        if np.dtype(leaf.dtype) != np.dtype(dtype):
            raise Malformed(f"{field}[{i}].dtype", f"the manifest says {leaf.dtype.name} ({leaf.name}), the "
                                                   f"vmfb's {function} declares {np.dtype(dtype).name}")
