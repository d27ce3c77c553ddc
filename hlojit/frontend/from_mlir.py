"""Bring your own StableHLO: `hj.from_mlir(text_or_path)` runs a module on any backend.

Modules exported by `jax.jit(f).lower(...).as_text()` work as they are (public @main, private helper
functions called with func.call, JAX's attributes, its LAPACK custom calls: lapack_calls.py). The entry function
must have static shapes. A `jax.export.Exported` is taken as it is: its module, and for one exported for several
platforms the platform index JAX adds as @main's first argument (`jax.global_constant = "_platform_index"`),
bound to the backend's platform (iree:cuda's "cuda", every other backend's "cpu").
"""
from __future__ import annotations

import os

import numpy as np
from iree.compiler import ir

from .. import backends
from ..dialects import stablehlo as hlo
from ..dialects.types import dtype_of, shape_of
from ..errors import BackendError, SignatureError
from ..pipeline import Program
from ..backends.array import Array
from . import inline, trace
from .lapack_calls import replace_lapack_calls
from .upgrade import upgrade


def _read(text_or_path: str) -> tuple[str, str]:
    """(text, where it came from); a path is anything that names an existing file."""
    if "\n" not in text_or_path and os.path.exists(text_or_path):
        with open(text_or_path) as f:
            return f.read(), os.path.basename(text_or_path)
    return text_or_path, "<mlir text>"


def _functions(module) -> dict:
    return {str(op.attributes["sym_name"]).strip('"'): op for op in module.body.operations
            if op.operation.name == "func.func"}


def _specs(types, what: str, source: str) -> list:
    specs = []
    for i, t in enumerate(types):
        t = t.maybe_downcast()
        if not isinstance(t, ir.RankedTensorType) or not t.has_static_shape:
            raise BackendError(f"{source}: {what} {i} has type {t}; hlojit runs static-shaped tensors only")
        specs.append((shape_of(t), dtype_of(t)))
    return specs


PLATFORM_INDEX = "_platform_index"   # jax.export's name of the argument that selects a platform's lowering


def platform_index_argument(main) -> int | None:
    """The position of the entry function's argument that jax.export marks as the platform index, if any."""
    if "arg_attrs" not in main.attributes:
        return None
    for i, attrs in enumerate(ir.ArrayAttr(main.attributes["arg_attrs"])):
        attrs = ir.DictAttr(attrs)
        if "jax.global_constant" in attrs and ir.StringAttr(attrs["jax.global_constant"]).value == PLATFORM_INDEX:
            return i
    return None


def _bind_argument(main, position: int, value: int) -> None:
    """main with its argument `position` (a 0-d integer) replaced by the constant `value`, and dropped."""
    block = main.regions[0].blocks[0]
    argument = block.arguments[position]
    with ir.InsertionPoint.at_block_begin(block), ir.Location.unknown():
        argument.replace_all_uses_with(hlo.constant(np.array(value, dtype_of(argument.type))))
    block.erase_argument(position)
    function_type = ir.FunctionType(ir.TypeAttr(main.attributes["function_type"]).value)
    inputs = [t for i, t in enumerate(function_type.inputs) if i != position]
    main.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(inputs, function_type.results))
    attrs = [a for i, a in enumerate(ir.ArrayAttr(main.attributes["arg_attrs"])) if i != position]
    main.attributes["arg_attrs"] = ir.ArrayAttr.get(attrs)


def parse(text_or_path: str, entry: str = "main", platform_index: int | None = None) -> Program:
    """Parse a module into a `Program` whose entry function is `@main`, first in the module. Forms of a newer
    StableHLO than the bundled parser's are first rewritten into older ops of the same meaning (upgrade.py).
    With `platform_index`, a jax.export platform-index argument becomes that constant."""
    text, source = _read(text_or_path)
    text = upgrade(text)
    context = ir.Context()        # freed with the module (an IREE Session's context never is: pipeline/sessions.py)
    context.load_all_available_dialects()
    with context:
        try:
            module = ir.Module.parse(text)
        except ir.MLIRError as e:
            raise ValueError(f"{source} is not valid MLIR: {e}") from None
        functions = _functions(module)
        if entry not in functions:
            raise ValueError(f"{source} has no function @{entry}; it has: {', '.join('@' + f for f in functions)}")
        main = functions[entry]
        if entry != "main":
            if "main" in functions:
                raise ValueError(f"{source}: entry @{entry} cannot become @main, which exists already")
            main.attributes["sym_name"] = ir.StringAttr.get("main")
        main.attributes["sym_visibility"] = ir.StringAttr.get("public")
        position = platform_index_argument(main)
        if position is not None and platform_index is not None:
            _bind_argument(main, position, platform_index)
        first = module.body.operations[0]
        if first != main:
            main.operation.move_before(first)
        function_type = ir.FunctionType(ir.TypeAttr(main.attributes["function_type"]).value)
        inputs = _specs(function_type.inputs, "argument", source)
        outputs = _specs(function_type.results, "result", source)
        replace_lapack_calls(module, source)
    return Program(module, inputs, outputs, name=f"{source}@{entry}")


class Module:
    """A StableHLO module loaded on a backend: call it with arrays, get `hj.Array` results (a tuple
    when the entry function has several). Called inside a trace (hj.jit, hj.vmap, hj.grad) its ops are
    traced inline, so transformations apply to it."""

    def __init__(self, program: Program, backend):
        self.inputs, self.outputs, self.name = list(program.inputs), list(program.outputs), program.name
        self.backend = backend
        self.platform_index_argument = platform_index_argument(program.module.body.operations[0])
        self.text = program.module.operation.get_asm(enable_debug_info=True)  # before a compiler lowers it
        self.executable = backend.load(program)

    def __call__(self, *args):
        if trace.current() is not None:
            outs = inline.call(self.text, self.inputs, self.name, args)
            return outs[0] if len(outs) == 1 else tuple(outs)
        if len(args) != len(self.inputs):
            why = ""
            if self.platform_index_argument is not None and len(args) == len(self.inputs) - 1:
                why = (f": its argument {self.platform_index_argument} is the platform index of a module that "
                       "jax.export lowered for several platforms (jax.global_constant \"_platform_index\"); give "
                       "hj.from_mlir the Exported itself or platforms=exported.platforms, or pass the index")
            raise SignatureError(f"{self.name} takes {len(self.inputs)} arguments, got {len(args)}{why}")
        leaves = []
        for i, (x, (shape, dtype)) in enumerate(zip(args, self.inputs)):
            if not isinstance(x, Array):
                x = np.asarray(x)
            if tuple(x.shape) != tuple(shape) or np.dtype(x.dtype) != dtype:
                raise SignatureError(f"{self.name}: argument {i} must be {dtype}{list(shape)}, "
                                     f"got {np.dtype(x.dtype)}{list(x.shape)}")
            leaves.append(x)
        outs = self.executable.call(leaves)
        return outs[0] if len(outs) == 1 else tuple(outs)

    def __repr__(self):
        return f"<hj.from_mlir {self.name} on {self.backend.name}>"


def from_mlir(source, entry: str = "main", backend: str | None = None, platforms=None) -> Module:
    """Load StableHLO text, a .mlir file or a `jax.export.Exported` for `backend` (chosen as for hj.jit): the
    reference interpreter runs it directly, IREE compiles it. Ops a backend cannot run are named in the error.
    `platforms` (an Exported's own by default) are the platforms a multi-platform jax.export was lowered for,
    in its order: the module's platform index is then bound to the backend's."""
    if not isinstance(source, str) and callable(getattr(source, "mlir_module", None)):
        platforms = getattr(source, "platforms", None) if platforms is None else platforms
        source = source.mlir_module()
    target = backends.get(backend)
    index = None
    if platforms is not None:
        platforms = tuple(str(p).lower() for p in platforms)
        platform = "cuda" if target.name == "iree:cuda" else "cpu"
        if platform not in platforms:
            raise BackendError(f"the module was exported for {', '.join(platforms)}, not for {platform} "
                               f"({target.name} runs {platform} lowerings)")
        index = platforms.index(platform)
    return Module(parse(source, entry, index), target)
