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
import secrets
import shlex
import shutil
import stat

import numpy as np

from iree.compiler import ir

from ..errors import ArtifactError, BackendError
from . import artifact_checks, quirks
from .compiler import Compiled, compile_program
from .program import Program
from .targets import Target

FORMAT = "hlojit-artifact/1"
ENTRY_POINT = "main"
_SUFFIXES = (".json", ".vmfb", ".mlir")
# a file location in MLIR's text: `"path":line:col` (the path as MLIR escapes it: `\22` for a quote)
_FILE_LOCATION = re.compile(r'"((?:[^"\\]|\\.)*)"(:\d+:\d+)')
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


def _write_atomic(path: str, data: bytes):
    """Write `path` whole or not at all: a temp file beside it, renamed over it. The temp file is created
    exclusively (never through a planted link) with mode 0666, so the umask gives the usual modes."""
    folder, name = os.path.split(path)
    temp = os.path.join(folder, f".tmp-{name}-{secrets.token_hex(8)}")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o666)
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


def _relative_locations(text: str) -> str:
    """The module's text with each absolute file path of a location (`loc("/home/me/model.py":3:7)`)
    made relative to the current directory, or reduced to the file's name when it lies outside it: an
    artifact should not carry the building machine's folders (the .mlir and the vmfb's debug info)."""
    here = os.getcwd()

    def relative(match):
        path = match.group(1)
        if not os.path.isabs(path):
            return match.group(0)
        shorter = os.path.relpath(path, here)
        if shorter == os.pardir or shorter.startswith(os.pardir + os.sep):
            shorter = os.path.basename(path)
        return f'"{shorter}"{match.group(2)}'
    return _FILE_LOCATION.sub(relative, text)


def _as_compiled(program: Program, target: Target, absolute_paths: bool) -> tuple[Program, str, dict]:
    """The program to compile (its locations relative unless `absolute_paths`) and its text as IREE will
    compile it: with locations (they reach the vmfb's debug info), and with the target's workarounds of IREE
    bugs (`quirks`, which `compile_program` applies to the module it consumes), counted by name, so that
    iree-compile on the .mlir compiles the same thing."""
    text = program.module.operation.get_asm(enable_debug_info=True)
    if not absolute_paths:
        text = _relative_locations(text)
        program = dataclasses.replace(program, module=ir.Module.parse(text, context=program.module.context))
    fixes = quirks.QUIRKS.get(target.name, ())
    if not fixes:
        return program, text, {}
    clone = ir.Module.parse(text, context=program.module.context)
    counts = quirks.apply(clone, target)   # the rewrites it made
    return program, clone.operation.get_asm(enable_debug_info=True), counts


def export(program: Program, target: Target, path: str, *, inputs: list[Leaf], output_names: list[str],
           arguments: list, out_tree, statics: dict | None = None, work: int | None = None,
           absolute_paths: bool = False) -> Manifest:
    """Compile `program` for `target` and write the artifact `path`.{vmfb,mlir,json}.

    The .mlir is printed before compiling (compiling consumes the module), and the vmfb is compiled from
    exactly that module, not read from the compile cache: `iree-compile` on the .mlir with the manifest's
    flags then rebuilds the same vmfb (byte for byte on llvm-cpu and cuda). Source locations are relative
    to the current directory unless `absolute_paths`."""
    paths = files(path)
    program, mlir, rewrites = _as_compiled(program, target, absolute_paths)
    compiled = compile_program(program, target)
    cpu = artifact_checks.target_cpu(compiled.target.flags)
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
    try:
        artifact_checks.check_manifest(manifest.to_json())     # what `read` will accept, e.g. pytree depth
    except artifact_checks.Malformed as e:
        raise ValueError(f"{program.name} cannot be exported: its manifest would not load: {e}") from None
    os.makedirs(os.path.dirname(paths["json"]) or ".", exist_ok=True)
    _write_atomic(paths["vmfb"], compiled.vmfb)
    _write_atomic(paths["mlir"], mlir.encode())
    _write_atomic(paths["json"], (_dumps(manifest.to_json()) + "\n").encode())  # last: it commits
    return manifest


def read_manifest(path: str) -> Manifest:
    """The manifest of an artifact, parsed but not checked against this machine (inspecting is fine)."""
    where = files(path)["json"]
    try:
        obj = json.loads(_read_regular(where))
    except FileNotFoundError:
        raise ArtifactError(f"no artifact at {path}: {where} does not exist (hj.export writes it)") from None
    except (OSError, ValueError) as e:
        raise ArtifactError(f"{where} is not a readable manifest: {e}") from None
    except RecursionError:
        raise ArtifactError(f"{where} is not a readable manifest: its JSON is nested too deeply to read") from None
    if not isinstance(obj, dict) or obj.get("format") != FORMAT:
        found = obj.get("format") if isinstance(obj, dict) else type(obj).__name__
        raise ArtifactError(f"{where} is not an hlojit artifact manifest of format {FORMAT} (format: {found!r})")
    try:
        artifact_checks.check_manifest(obj)
    except artifact_checks.Malformed as e:
        raise ArtifactError(f"{where} is damaged or was edited: {e}") from None
    return Manifest.from_json(obj, where)


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


def _declared(vmfb: bytes, entry_point: str, where: str) -> tuple[list, list]:
    """The (shape, dtype) of each input and output of the vmfb's entry point, as the vmfb itself declares
    them (IREE's `iree.abi.declaration` reflection attribute), read without running anything."""
    import iree.runtime as rt   # the runtime loads only when an artifact is read, not with hlojit
    instance = rt.VmInstance()
    try:
        module = rt.VmModule.copy_buffer(instance, vmfb)
    except RuntimeError as e:
        raise ArtifactError(f"{where} is not a vmfb this IREE runtime can load: {e}") from None
    function = module.lookup_function(entry_point)
    if function is None:
        raise artifact_checks.Malformed("entry_point", f"the vmfb has no function {entry_point!r}")
    declaration = function.reflection.get("iree.abi.declaration")   # while `module` lives: it owns the text
    try:
        return artifact_checks.declared_types(declaration or "")
    except (TypeError, ValueError) as e:
        raise ArtifactError(f"{where}: hlojit cannot read the signature the vmfb declares for {entry_point} "
                            f"({declaration!r}): {e}") from None


def _read_regular(path: str) -> bytes:
    """A regular file's bytes; never blocks on a FIFO or a device planted under the artifact's name."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{path} is not a regular file")
        return f.read()


def read(path: str) -> tuple[Manifest, Compiled]:
    """The manifest and the vmfb, checked: the vmfb's sha256, the IREE release, the CPU, and that the
    manifest's inputs and outputs are exactly the types the vmfb declares (the runtime trusts them)."""
    manifest = read_manifest(path)
    where = files(path)["vmfb"]
    try:
        vmfb = _read_regular(where)
    except OSError as e:
        raise ArtifactError(f"the vmfb of {manifest.path} cannot be read: {e}") from None
    digest = hashlib.sha256(vmfb).hexdigest()
    if digest != manifest.vmfb_sha256 or len(vmfb) != manifest.vmfb_bytes:
        raise ArtifactError(f"{where} is corrupted or was replaced: its sha256 is {digest[:16]}... "
                            f"({len(vmfb)} bytes), the manifest says {manifest.vmfb_sha256[:16]}... "
                            f"({manifest.vmfb_bytes} bytes). Export it again")
    check_runs_here(manifest)
    try:
        inputs, outputs = _declared(vmfb, manifest.entry_point, where)
        artifact_checks.check_types(manifest.inputs, inputs, "inputs", manifest.entry_point)
        artifact_checks.check_types(manifest.outputs, outputs, "outputs", manifest.entry_point)
    except artifact_checks.Malformed as e:
        raise ArtifactError(f"{manifest.path} is damaged or was edited: {e}") from None
    return manifest, Compiled(vmfb, manifest.target_object(), 0.0, manifest.dispatch_count)
