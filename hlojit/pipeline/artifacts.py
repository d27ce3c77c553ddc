"""Exported artifacts: `f.vmfb` (what runs), `f.mlir` (the StableHLO it was compiled from) and `f.json`
(the manifest: entry point, inputs and outputs, target and flags, IREE versions, sha256 of the vmfb).

The manifest is what lets another process, or `iree-run-module`, run the vmfb without the Python that
traced it, and what lets `read` refuse a vmfb that cannot run here: IREE bytecode is not portable across
IREE releases, and `--iree-llvmcpu-target-cpu=host` code dies of SIGILL on a CPU without this one's
features. The pytree structures are the frontend's business: they pass through here as JSON.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import platform
import re
import shlex
import shutil
import tempfile

import numpy as np

from iree.compiler import ir

from ..errors import ArtifactError, BackendError
from . import quirks
from .compiler import Compiled, compile_program
from .program import Program
from .targets import Target

FORMAT = "hlojit-artifact/1"
ENTRY_POINT = "main"
_SUFFIXES = (".json", ".vmfb", ".mlir")
# /proc/cpuinfo flags of x86 instruction sets that LLVM may use for `host` (the rest are OS and VM noise)
_X86_ISA = re.compile(r"^(sse|ssse|avx|fma|f16c|bmi|adx|aes|vaes|pclmul|vpclmul|gfni|sha|movbe|popcnt|abm|"
                      r"lzcnt|amx|cx16|rdrnd|rdrand|rdseed|xop|vnni)")


@dataclasses.dataclass(frozen=True)
class Leaf:
    """One flat input or output of the entry point: its name (the argument path) and type."""
    name: str
    shape: tuple
    dtype: np.dtype
    weak: bool = False          # a Python scalar at export: a Python scalar of that kind is accepted

    def to_json(self) -> dict:
        out = {"name": self.name, "shape": list(self.shape), "dtype": self.dtype.name}
        return {**out, "weak": True} if self.weak else out

    @classmethod
    def from_json(cls, obj) -> "Leaf":
        return cls(obj["name"], tuple(int(d) for d in obj["shape"]), dtype_named(obj["dtype"]),
                   bool(obj.get("weak", False)))

    def __str__(self):
        return f"{self.name}: {self.dtype.name}{list(self.shape)}"


@dataclasses.dataclass
class Manifest:
    name: str                   # the user's function
    inputs: list[Leaf]
    outputs: list[Leaf]
    arguments: list             # [{"name", "kind", "tree"}]: the frontend's pytree of each argument (JSON)
    out_tree: object            # the pytree structure of the result (JSON)
    target: dict                # {"name", "driver", "flags", "cpu", "portable"}
    iree: dict                  # compiler and runtime versions at export
    vmfb_sha256: str
    vmfb_bytes: int
    work: int | None = None     # elements the entry point touches: picks local-sync or local-task at load
    host: dict | None = None    # the exporting machine: arch, and CPU features when the code is for `host`
    statics: dict = dataclasses.field(default_factory=dict)     # static arguments baked in (their repr)
    rewrites: dict = dataclasses.field(default_factory=dict)    # the target's IREE workarounds in the .mlir
    dispatch_count: int | None = None
    compile_seconds: float | None = None
    reproduce: str = ""         # the iree-compile command line that rebuilds the vmfb from the .mlir
    entry_point: str = ENTRY_POINT
    format: str = FORMAT
    path: str = ""              # where it was read from or written to (not stored)

    def to_json(self) -> dict:
        out = dataclasses.asdict(self)
        out.pop("path")
        out["inputs"] = [x.to_json() for x in self.inputs]
        out["outputs"] = [x.to_json() for x in self.outputs]
        return {"format": out.pop("format"), **out}

    @classmethod
    def from_json(cls, obj: dict, path: str = "") -> "Manifest":
        fields = {f.name for f in dataclasses.fields(cls)} - {"path"}
        kwargs = {k: v for k, v in obj.items() if k in fields}
        kwargs["inputs"] = [Leaf.from_json(x) for x in obj["inputs"]]
        kwargs["outputs"] = [Leaf.from_json(x) for x in obj["outputs"]]
        return cls(**kwargs, path=path)

    def target_object(self) -> Target:
        return Target(self.target["name"], self.target["driver"], tuple(self.target["flags"]))


def dtype_named(name: str) -> np.dtype:
    """`np.dtype` of a dtype's `.name`, including ml_dtypes' (bfloat16)."""
    try:
        return np.dtype(name)
    except TypeError:
        import ml_dtypes
        if isinstance(getattr(ml_dtypes, name, None), type):
            return np.dtype(getattr(ml_dtypes, name))
        raise


def files(path: str) -> dict[str, str]:
    """{"json", "vmfb", "mlir"} paths of the artifact `path` (given with or without a suffix)."""
    path = os.fspath(path)
    for suffix in _SUFFIXES:
        if path.endswith(suffix):
            path = path[: -len(suffix)]
    return {s[1:]: path + s for s in _SUFFIXES}


def iree_versions() -> dict:
    """The IREE compiler and runtime installed here (the runtime must match a vmfb's compiler)."""
    import iree.compiler.version as compiler
    out = {"compiler": compiler.VERSION, "compiler_revision": compiler.REVISIONS.get("IREE", "")}
    out.update(runtime_version())
    return out


def runtime_version() -> dict:
    import iree.runtime.version as runtime
    return {"runtime": runtime.VERSION, "runtime_revision": runtime.REVISIONS.get("IREE", "")}


def host() -> dict:
    """This machine's arch, CPU model and instruction-set features (from /proc/cpuinfo where it exists)."""
    out = {"arch": platform.machine()}
    try:
        with open("/proc/cpuinfo") as f:
            fields = {}
            for line in f:
                name, _, value = line.partition(":")
                fields.setdefault(name.strip(), value.strip())
    except OSError:
        return out
    out["cpu_model"] = fields.get("model name", "")
    flags = fields.get("flags") or fields.get("Features")
    if flags is not None:
        out["cpu_features"] = sorted(f for f in flags.split() if "flags" not in fields or _X86_ISA.match(f))
    return out


def tool(name: str) -> str | None:
    """The path of an IREE command-line tool (`iree-compile`, `iree-run-module`): on PATH, or in the
    directory of the pip package that ships it."""
    found = shutil.which(name)
    if found:
        return found
    for package in ("iree._runtime_libs", "iree.compiler._mlir_libs"):
        try:
            folder = os.path.dirname(__import__(package, fromlist=["_"]).__file__)
        except ImportError:
            continue
        if os.path.exists(os.path.join(folder, name)):
            return os.path.join(folder, name)
    return None


def _target_cpu(target: Target) -> str | None:
    """The CPU llvm-cpu code is compiled for (the last flag wins; IREE's default is generic), else None."""
    if "--iree-hal-local-target-device-backends=llvm-cpu" not in target.flags:
        return None
    named = [f.split("=", 1)[1] for f in target.flags if f.startswith("--iree-llvmcpu-target-cpu=")]
    return named[-1] if named else "generic"


def _write_atomic(path: str, data: bytes):
    folder = os.path.dirname(path) or "."
    fd, temp = tempfile.mkstemp(dir=folder, prefix=".tmp-" + os.path.basename(path))
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(temp, path)
    except BaseException:
        os.unlink(temp)
        raise


def _dumps(obj, indent: str = "", width: int = 110) -> str:
    """JSON with one item per line, except that what fits in `width` stays on one line (shapes, leaves)."""
    flat = json.dumps(obj)
    if len(flat) + len(indent) <= width or not isinstance(obj, (dict, list)) or not obj:
        return flat
    inner = indent + " "
    if isinstance(obj, dict):
        items = [f"{inner}{json.dumps(k)}: {_dumps(v, inner, width)}" for k, v in obj.items()]
        return "{\n" + ",\n".join(items) + "\n" + indent + "}"
    return "[\n" + ",\n".join(inner + _dumps(v, inner, width) for v in obj) + "\n" + indent + "]"


def _as_compiled(program: Program, target: Target) -> tuple[str, dict]:
    """The module's text as IREE will compile it: with locations (they reach the vmfb's debug info), and
    with the target's workarounds of IREE bugs (`quirks`, which `compile_program` applies to the module
    it consumes), counted by name, so that iree-compile on the .mlir compiles the same thing."""
    text = program.module.operation.get_asm(enable_debug_info=True)
    fixes = quirks.QUIRKS.get(target.name, ())
    if not fixes:
        return text, {}
    clone = ir.Module.parse(text, context=program.module.context)
    with clone.context:
        counts = {fix.__name__: n for fix in fixes if (n := fix(clone))}   # the rewrites it made
    return clone.operation.get_asm(enable_debug_info=True), counts


def export(program: Program, target: Target, path: str, *, inputs: list[Leaf], output_names: list[str],
           arguments: list, out_tree, statics: dict | None = None, work: int | None = None) -> Manifest:
    """Compile `program` for `target` and write the artifact `path`.{vmfb,mlir,json}.

    The .mlir is printed before compiling (compiling consumes the module), and the vmfb is compiled from
    exactly that module, not read from the compile cache: `iree-compile` on the .mlir with the manifest's
    flags then rebuilds the same vmfb (byte for byte on llvm-cpu and cuda)."""
    paths = files(path)
    mlir, rewrites = _as_compiled(program, target)
    compiled = compile_program(program, target)
    cpu = _target_cpu(target)
    here = host()
    machine = None
    if cpu is not None:  # CPU code runs on this arch only; `host` code on CPUs with these features only
        machine = here if cpu == "host" else {"arch": here["arch"]}
    names = {k: os.path.basename(v) for k, v in paths.items()}
    manifest = Manifest(
        name=program.name,
        inputs=list(inputs),
        outputs=[Leaf(n, tuple(s), np.dtype(d)) for n, (s, d) in zip(output_names, program.outputs)],
        arguments=arguments, out_tree=out_tree,
        target={"name": target.name, "driver": target.driver, "flags": list(compiled.target.flags), "cpu": cpu,
                "portable": cpu != "host"},
        iree=iree_versions(),
        vmfb_sha256=hashlib.sha256(compiled.vmfb).hexdigest(), vmfb_bytes=len(compiled.vmfb),
        work=work, host=machine, statics=dict(statics or {}), rewrites=rewrites,
        dispatch_count=compiled.dispatch_count, compile_seconds=round(compiled.seconds, 3),
        reproduce=shlex.join(["iree-compile", names["mlir"], *compiled.target.flags, "-o", names["vmfb"]]),
        path=paths["json"])
    os.makedirs(os.path.dirname(paths["json"]) or ".", exist_ok=True)
    _write_atomic(paths["vmfb"], compiled.vmfb)
    _write_atomic(paths["mlir"], mlir.encode())
    _write_atomic(paths["json"], (_dumps(manifest.to_json()) + "\n").encode())  # last: it commits
    return manifest


def read_manifest(path: str) -> Manifest:
    """The manifest of an artifact, parsed but not checked against this machine (inspecting is fine)."""
    where = files(path)["json"]
    try:
        with open(where) as f:
            obj = json.load(f)
    except FileNotFoundError:
        raise ArtifactError(f"no artifact at {path}: {where} does not exist (hj.export writes it)") from None
    except (OSError, ValueError) as e:
        raise ArtifactError(f"{where} is not a readable manifest: {e}") from None
    if not isinstance(obj, dict) or obj.get("format") != FORMAT:
        found = obj.get("format") if isinstance(obj, dict) else type(obj).__name__
        raise ArtifactError(f"{where} is not an hlojit artifact manifest of format {FORMAT} (format: {found!r})")
    try:
        return Manifest.from_json(obj, where)
    except (KeyError, TypeError, ValueError) as e:
        raise ArtifactError(f"{where} is damaged: {type(e).__name__}: {e}") from None


def check_runs_here(manifest: Manifest):
    """Raise unless this process can run the artifact: the same IREE release, and for CPU code the same
    arch (and for `host` code every CPU feature it was compiled with). CUDA is checked when its device
    is made."""
    here = runtime_version()["runtime"]
    made_by = {k: manifest.iree.get(k) for k in ("compiler", "runtime")}
    if any(v != here for v in made_by.values()):
        raise ArtifactError(
            f"{manifest.path} was compiled by IREE compiler {made_by['compiler']} (runtime {made_by['runtime']} "
            f"at export), but this process runs IREE runtime {here}: vmfbs are not portable across IREE "
            f"releases. Re-export it here, or run it with iree-base-runtime {made_by['compiler']}")
    if manifest.host is None:
        return
    now = host()
    if manifest.host.get("arch") != now["arch"]:
        raise BackendError(f"{manifest.path} holds {manifest.host.get('arch')} code (target "
                           f"{manifest.target['name']}); this machine is {now['arch']}: export it for this "
                           "machine, or for target='vmvx'")
    missing = sorted(set(manifest.host.get("cpu_features", ())) - set(now.get("cpu_features", ())))
    if missing and "cpu_features" in now:
        raise BackendError(f"{manifest.path} was compiled for the exporting machine's CPU "
                           f"({manifest.host.get('cpu_model') or 'unknown model'}) and would crash here with "
                           f"an illegal instruction: this CPU lacks {', '.join(missing)}. Export it with "
                           "portable=True (or target=hlojit.pipeline.cpu('generic'))")


def read(path: str) -> tuple[Manifest, Compiled]:
    """The manifest and the vmfb, checked: the vmfb's sha256, the IREE release, the CPU."""
    manifest = read_manifest(path)
    where = files(path)["vmfb"]
    try:
        with open(where, "rb") as f:
            vmfb = f.read()
    except OSError as e:
        raise ArtifactError(f"the vmfb of {manifest.path} cannot be read: {e}") from None
    digest = hashlib.sha256(vmfb).hexdigest()
    if digest != manifest.vmfb_sha256:
        raise ArtifactError(f"{where} is corrupted or was replaced: its sha256 is {digest[:16]}... "
                            f"({len(vmfb)} bytes), the manifest says {manifest.vmfb_sha256[:16]}... "
                            f"({manifest.vmfb_bytes} bytes). Export it again")
    check_runs_here(manifest)
    return manifest, Compiled(vmfb, manifest.target_object(), 0.0, manifest.dispatch_count)
