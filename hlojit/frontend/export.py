"""`hj.export` writes a function, traced for example arguments, as a vmfb + StableHLO + manifest;
`hj.load` runs it again, in any process, without the Python source that traced it.

This is the frontend's side: naming the inputs by their argument paths, the pytree structures of the
arguments and the result, and checking each call against them (a wrong shape must be a clear error
naming the argument, not an IREE crash). Files, versions and checksums are `pipeline.artifacts`'.
"""
from __future__ import annotations

import inspect
import itertools

import numpy as np

from .. import backends
from ..errors import ArtifactError, BackendError, DTypeError, ShapeError, SignatureError
from ..pipeline import Target, artifact_checks, artifacts, targets
from . import pytree
from .jit import Exec


def _target(target, portable: bool, program) -> Target:
    if isinstance(target, str):
        if portable and target.removeprefix("iree:") == "cpu":
            return targets.cpu("generic")
        return backends.target_named(target, program)   # "cpu": the flag set this machine's calls of it compile with
    if not isinstance(target, Target):
        raise TypeError(f"target must be a name ({', '.join(targets.TARGETS)}) or a hlojit.pipeline.Target, "
                        f"not {type(target).__name__}")
    if portable and artifact_checks.target_cpu(target.flags) == "host":
        raise ValueError("portable=True, but the target compiles for this machine's CPU "
                         "(--iree-llvmcpu-target-cpu=host); pass target='cpu' or hlojit.pipeline.cpu('generic')")
    return target


def export(f, *example_args, path, target="cpu", portable: bool = False, absolute_paths: bool = False,
           **example_kwargs) -> artifacts.Manifest:
    """Trace `f` (an `hj.jit` function or a plain one) for the example arguments (arrays, or anything with
    `.shape` and `.dtype`), compile it for `target` and write `path.vmfb`, `path.mlir`, `path.json`.

    `target`: "cpu" (this machine's CPU and the flag set its calls compile with, pipeline/tuning.py: fastest, runs
    only on CPUs with its features), "vmvx", "cuda"
    (sm_80; compiles without a GPU), or a `hlojit.pipeline.Target` such as `cpu("generic")`.
    `portable=True` makes "cpu" code for any CPU of this architecture. The source locations in the .mlir
    and the vmfb are relative to the current directory (file names only for files outside it);
    `absolute_paths=True` keeps them as they are on this machine. Returns the manifest. (`path`, `target`,
    `portable` and `absolute_paths` are export's own: `f` cannot take keyword arguments of those names.)"""
    from ..backends import iree as iree_backend  # the runtime loads only when artifacts are used
    exe = f if isinstance(f, Exec) else Exec(f)
    _, statics, dynamic = exe._bind(example_args, example_kwargs)
    _, paths, treedefs, specs = exe._signature_of(dynamic)
    lowered = exe.lower(*example_args, **example_kwargs)
    target = _target(target, portable, lowered.program)
    kinds = {name: p.kind.name.lower() for name, p in exe._signature.parameters.items()}
    return artifacts.export(
        lowered.program, target, path,
        inputs=[artifacts.Leaf(p, s.shape, s.dtype, s.weak) for p, s in zip(paths, specs)],
        output_names=pytree.leaf_paths(lowered.out_tree, "result"),
        arguments=[{"name": name, "kind": kinds[name], "tree": pytree.to_json(tree, name)} for name, tree in treedefs],
        out_tree=pytree.to_json(lowered.out_tree, "result"),
        statics={name: repr(value) for name, value in statics},
        work=iree_backend.work_estimate(lowered.program),  # before compiling: that consumes the module
        absolute_paths=absolute_paths)


def _type(shape, dtype) -> str:
    return f"{np.dtype(dtype).name}{list(shape)}"


def _describe_leaf(x) -> str:
    shape, dtype = getattr(x, "shape", None), getattr(x, "dtype", None)
    return _type(shape, dtype) if shape is not None and dtype is not None else type(x).__name__


def _scalar_fits(value, dtype: np.dtype) -> bool:
    """A Python scalar passed for a 0-d input: bool for bool, int for ints and floats, float for floats."""
    if isinstance(value, bool):
        return dtype == np.bool_
    if isinstance(value, int):
        return dtype.kind in "iuf" or dtype.name == "bfloat16"
    return dtype.kind == "f" or dtype.name == "bfloat16"


def _structure(tree_json, field: str):
    """A pytree structure of the manifest, read back, or an ArtifactError naming its field."""
    try:
        return pytree.from_json(tree_json)
    except (TypeError, ValueError) as e:
        raise ArtifactError(f"{field}: {e}") from None


def _leaf_count(trees) -> int:
    return sum(len(pytree.leaf_paths(tree)) for tree in trees)


def _structures(m: artifacts.Manifest) -> tuple[list, inspect.Signature, object]:
    """([(name, treedef)] of the arguments, their signature, the result's treedef) that the manifest `m`
    describes, checked against its flat inputs and outputs (read_manifest checked each field's type)."""
    try:
        arguments = [(a["name"], _structure(a["tree"], f"arguments[{i}].tree")) for i, a in enumerate(m.arguments)]
        out_tree = _structure(m.out_tree, "out_tree")
        if _leaf_count(t for _, t in arguments) != len(m.inputs):
            raise ArtifactError(f"arguments: their structures hold {_leaf_count(t for _, t in arguments)} "
                                f"leaves, for {len(m.inputs)} inputs")
        if _leaf_count([out_tree]) != len(m.outputs):
            raise ArtifactError(f"out_tree: {_leaf_count([out_tree])} leaves, for {len(m.outputs)} outputs")
        try:
            signature = inspect.Signature(
                [inspect.Parameter(a["name"], getattr(inspect.Parameter, a["kind"].upper())) for a in m.arguments])
        except ValueError as e:
            raise ArtifactError(f"arguments: they make no Python signature: {e}") from None
    except ArtifactError as e:
        raise ArtifactError(f"{m.path} is damaged or was edited: {e}") from None
    return arguments, signature, out_tree


class Loaded:
    """An exported artifact, callable like the function it was exported from: the same arguments (static
    ones are baked in), checked against the manifest; results as `hj.Array` in the original structure."""

    def __init__(self, path, *, driver: str | None = None):
        from ..backends import iree as iree_backend
        self.manifest, compiled = artifacts.read(path)
        m = self.manifest
        self.name, self.path = m.name, m.path
        self._arguments, self._signature, self._out_tree = _structures(m)
        target = compiled.target
        work = m.work if m.work is not None else iree_backend.SMALL_WORK
        try:
            self.executable = iree_backend.Executable(
                compiled, [(x.shape, x.dtype) for x in m.inputs], [(x.shape, x.dtype) for x in m.outputs],
                driver or iree_backend.choose_driver(target, work), m.entry_point)
        except BackendError as e:
            needs = "an NVIDIA GPU and its driver (libcuda)" if target.name == "cuda" else \
                f"the {target.driver} driver"
            flags = " ".join(f for f in target.flags if "target" in f)
            raise BackendError(f"{self.path} is compiled for {target.name} ({flags}) and needs {needs}, which "
                               f"this machine lacks: {e}") from None
        self.driver = self.executable.driver
        # all arguments plain arrays, passed positionally: a call checks (shape, dtype) and goes
        self._fast = tuple((x.shape, x.dtype) for x in m.inputs) \
            if all(pytree.is_leaf(t) for _, t in self._arguments) and \
            all(a["kind"] in ("positional_only", "positional_or_keyword") for a in m.arguments) else None
        single = pytree.is_leaf(self._out_tree)
        self._run = self.executable.call_single if single else \
            (lambda leaves, call=self.executable.call, tree=self._out_tree: pytree.unflatten(tree, call(leaves)))

    def __call__(self, *args, **kwargs):
        fast = self._fast
        if fast is not None and not kwargs and len(args) == len(fast):
            try:
                if all(a.shape == s and a.dtype == d for a, (s, d) in zip(args, fast)):
                    return self._run(args)
            except (AttributeError, TypeError):  # a Python scalar, a container: the checking path says what is wrong
                pass
        return self._run(self._leaves(args, kwargs))

    def _leaves(self, args, kwargs) -> list:
        """The flat inputs of a call, or a clear error naming the argument that does not fit."""
        try:
            bound = self._signature.bind(*args, **kwargs)
        except TypeError as e:
            baked = "".join(f"; {n} was static at export ({n}={v}) and is part of the artifact"
                            for n, v in self.manifest.statics.items() if n in kwargs)
            raise SignatureError(f"{self.name}(): {e}{baked} (the artifact {self.path} takes {self.signature})") \
                from None
        leaves, specs = [], iter(self.manifest.inputs)
        for name, expected in self._arguments:
            start = len(leaves)
            _, tree = pytree.flatten(bound.arguments[name], leaves)
            wanted = [_type(s.shape, s.dtype) for s in itertools.islice(specs, len(pytree.leaf_paths(expected)))]
            if tree != expected:
                got = [_describe_leaf(x) for x in leaves[start:]]
                raise SignatureError(f"{self.name}(): argument {name} has the structure {pytree.describe(tree, got)}"
                                     f", the artifact {self.path} takes {pytree.describe(expected, wanted)}"
                                     + (" (pass an array, e.g. np.asarray(...), not a list)"
                                        if pytree.is_leaf(expected) and tree[0] in ("list", "tuple") else ""))
        return [self._check(x, spec) for x, spec in zip(leaves, self.manifest.inputs)]

    def _check(self, x, spec: artifacts.Leaf):
        where = f"{self.name}(): argument {spec.name}"
        if isinstance(x, (bool, int, float)) and not isinstance(x, np.generic):
            if spec.shape != () or not _scalar_fits(x, spec.dtype):
                raise DTypeError(f"{where}: expected {_type(spec.shape, spec.dtype)}, got a Python "
                                 f"{type(x).__name__} ({x!r})")
            try:
                return np.asarray(x, spec.dtype)
            except OverflowError:
                raise ValueError(f"{where}: {x!r} does not fit in {spec.dtype.name}") from None
        shape, dtype = getattr(x, "shape", None), getattr(x, "dtype", None)
        if shape is None or dtype is None:
            raise SignatureError(f"{where}: expected an array {_type(spec.shape, spec.dtype)}, got a "
                                 f"{type(x).__name__}")
        if tuple(shape) != spec.shape:
            raise ShapeError(f"{where}: expected shape {spec.shape} ({_type(spec.shape, spec.dtype)}), got "
                             f"shape {tuple(shape)} ({_type(shape, dtype)}); the artifact {self.path} is "
                             "compiled for exactly these shapes")
        if np.dtype(dtype) != spec.dtype:
            raise DTypeError(f"{where}: expected dtype {spec.dtype.name} ({_type(spec.shape, spec.dtype)}), got "
                             f"{np.dtype(dtype).name} ({_type(shape, dtype)}); convert with .astype()")
        return x

    @property
    def signature(self) -> str:
        """`f(x: float32[2, 3], params['w']: ...) -> result: float32[2]`."""
        ins = ", ".join(f"{x.name}: {_type(x.shape, x.dtype)}" for x in self.manifest.inputs)
        outs = ", ".join(f"{x.name}: {_type(x.shape, x.dtype)}" for x in self.manifest.outputs)
        return f"{self.name}({ins}) -> {outs}"

    def __repr__(self):
        return f"<hj.load {self.path}: {self.signature} on {self.manifest.target['name']} ({self.driver})>"


def load(path, *, driver: str | None = None) -> Loaded:
    """The artifact `hj.export` wrote at `path` (with or without a suffix), checked and ready to call:
    its vmfb's sha256, the IREE release, that its target runs here. `driver` overrides the IREE driver
    chosen for it (CPU code: local-sync for small work, local-task above)."""
    return Loaded(path, driver=driver)
