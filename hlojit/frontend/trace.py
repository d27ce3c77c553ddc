"""A trace: the `ir.Module` being built while the user's function runs, and where its ops come from.

Each trace gets a fresh MLIR context of its own, which owns the module, so traces in several threads never
share MLIR state, and a trace (failed or not) frees everything it built once its module is dropped. Not an
IREE compiler `Session`'s context: IREE never frees those (~3.3 MB each); the pipeline copies a module into
a long-lived session when it compiles it (pipeline/sessions.py).
"""
from __future__ import annotations

import contextlib
import os
import sys
import threading

from iree.compiler import ir
import iree.compiler.dialects.func as func

from ..dialects.types import tensor_type

# The dialects a trace creates ops of by name (dialects/ builders: func, stablehlo, chlo). Text parsed into a trace
# (inlined modules, LAPACK callees) loads its own. Every dialect IREE has (`load_all_available_dialects`) took 8.8 ms
# of each trace, these 0.6 (2-vCPU Zen 3, 2026-12-07): eager ops and vmap trace often.
TRACE_DIALECTS = ("builtin", "func", "stablehlo", "chlo")

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_local = threading.local()


def current() -> "Trace | None":
    return getattr(_local, "trace", None)


def user_frame():
    """The innermost stack frame outside hlojit: the user's line that asked for the current op."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        frame = frame.f_back
    return frame


def user_stacklevel() -> int:
    """`warnings.warn`'s stacklevel, from its caller, that makes a warning name the user's line."""
    frame, level, user = sys._getframe(1), 1, user_frame()
    while frame is not None and frame is not user:
        frame, level = frame.f_back, level + 1
    return level


def user_site() -> str:
    """`file.py:12` of the user's line, for error messages."""
    frame = user_frame()
    if frame is None:
        return "<unknown>"
    return f"{os.path.basename(frame.f_code.co_filename)}:{frame.f_lineno}"


def user_location() -> ir.Location:
    override = getattr(_local, "location", None)   # autodiff: a backward op takes its forward op's line
    if override is not None:
        return override
    frame = user_frame()
    if frame is None:
        return ir.Location.unknown()
    return ir.Location.file(frame.f_code.co_filename, frame.f_lineno, 0)


@contextlib.contextmanager
def at_location(location):
    """Every op built inside takes `location` (None: each its own user's line). Autodiff's backward ops take their
    forward op's line; a composite's decomposition takes the user's line found once (`at_location(user_location())`):
    its library code calls no user function, so every op would find that line, walking ~30 frames of hlojit each,
    ~12 us of the ~130 each op of a factorization took to trace (40 of 450 ms for svd, qr, eigh and inv of 6 x 5)."""
    before, _local.location = getattr(_local, "location", None), location
    try:
        yield
    finally:
        _local.location = before


@contextlib.contextmanager
def set_aside():
    """No trace is current inside: a whole function traced on its own while another is being traced (a from_mlir
    module's LAPACK calls, built when the module is loaded inside a jit function); the same one again after."""
    saved, _local.trace = current(), None
    try:
        yield
    finally:
        _local.trace = saved


class Trace:
    """Builds `func.func @main(args) -> results` in a new module; use as a context manager."""

    def __init__(self, arg_types: list[tuple[tuple, object]], name: str = "main"):
        self.context = ir.Context(load_on_create_dialects=TRACE_DIALECTS)
        self._arg_types = arg_types
        self._name = name
        # autodiff: derivative regions by output ir.Value (frontend/autodiff/core.py). Ops thrown away by
        # a retrace free their values, whose addresses MLIR reuses: forget_regions drops their entries.
        self.autodiff_regions: dict = {}
        # frontend/composites.py: (name, operand types) -> (decomposition symbol, result types)
        self.composites: dict = {}

    def forget_regions(self, count: int):
        """Drop the derivative regions recorded after the first `count` (their ops were erased)."""
        for value in list(self.autodiff_regions)[count:]:
            del self.autodiff_regions[value]

    def __enter__(self):
        if current() is not None:
            raise RuntimeError("hlojit: nested tracing is not supported (a jit function called inside another "
                               "is inlined: call the Python function instead)")
        self.context.__enter__()
        self.location = ir.Location.unknown()
        self.location.__enter__()
        self.module = ir.Module.create()
        with ir.InsertionPoint(self.module.body):
            types = [tensor_type(shape, dtype) for shape, dtype in self._arg_types]
            self.func = func.FuncOp(self._name, ir.FunctionType.get(types, []))
        self.block = self.func.add_entry_block()
        self.insertion_point = ir.InsertionPoint(self.block)
        self.insertion_point.__enter__()
        _local.trace = self
        return self

    @property
    def arguments(self):
        return list(self.block.arguments)

    def finish(self, results):
        """Return `results` (ir.Values) from the function and fix its type."""
        func.ReturnOp(list(results))
        self.func.attributes["function_type"] = ir.TypeAttr.get(
            ir.FunctionType.get([a.type for a in self.block.arguments], [r.type for r in results]))

    def __exit__(self, *exc):
        _local.trace = None
        self.insertion_point.__exit__(*exc)
        self.location.__exit__(*exc)
        self.context.__exit__(*exc)
        return False
