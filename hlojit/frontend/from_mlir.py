"""Bring your own StableHLO: `hj.from_mlir(text_or_path)` runs a module on any backend.

Modules exported by `jax.jit(f).lower(...).as_text()` work as they are (public @main, private helper
functions called with func.call, JAX's attributes, its LAPACK custom calls: lapack_calls.py). The entry function
must have static shapes.
"""
from __future__ import annotations

import os

import numpy as np
from iree.compiler import ir

from .. import backends
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


def parse(text_or_path: str, entry: str = "main") -> Program:
    """Parse a module into a `Program` whose entry function is `@main`, first in the module. Forms of a newer
    StableHLO than the bundled parser's are first rewritten into older ops of the same meaning (upgrade.py)."""
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
        self.text = program.module.operation.get_asm(enable_debug_info=True)  # before a compiler lowers it
        self.executable = backend.load(program)

    def __call__(self, *args):
        if trace.current() is not None:
            outs = inline.call(self.text, self.inputs, self.name, args)
            return outs[0] if len(outs) == 1 else tuple(outs)
        if len(args) != len(self.inputs):
            raise SignatureError(f"{self.name} takes {len(self.inputs)} arguments, got {len(args)}")
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


def from_mlir(text_or_path: str, entry: str = "main", backend: str | None = None) -> Module:
    """Load StableHLO text (or a .mlir file) for `backend` (chosen as for hj.jit): the reference
    interpreter runs it directly, IREE compiles it. Ops a backend cannot run are named in the error."""
    return Module(parse(text_or_path, entry), backends.get(backend))
