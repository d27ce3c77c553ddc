"""The interpreter core: compile a block of StableHLO into a Python function over numpy arrays.

`OPS` maps an op name to its builder: builder(op) -> a closure over numpy arrays. The op families
(elementwise.py, structural.py ...) fill it when the package is imported; its names are records of
dialects/registry.py (a name without one raises).
"""
from __future__ import annotations

import functools
import re

import numpy as np
from iree.compiler import ir

from ..dialects.registry import Facet
from ..errors import BackendError

OPS = Facet("the reference backend's OPS")  # op name (a registry record) -> builder
RETURNS = ("func.return", "stablehlo.return")


def _quiet_hooks():
    """(enter, exit) that silence numpy's floating-point warnings: IEEE results (inf, nan) come as IREE
    gives them. np.errstate costs ~2 us per use, so set numpy's error-state context variable directly
    when this numpy has it."""
    try:
        from numpy._core._ufunc_config import _extobj_contextvar as var
    except ImportError:  # pragma: no cover  (other numpy versions)
        def enter():
            state = np.errstate(all="ignore")
            state.__enter__()
            return state
        return enter, lambda state: state.__exit__(None, None, None)
    with np.errstate(all="ignore"):
        quiet = var.get()
    return (lambda: var.set(quiet)), var.reset


_QUIET_ENTER, _QUIET_EXIT = _quiet_hooks()


def supported_ops() -> list[str]:
    return sorted(OPS)


def _call_builder(functions):
    """`func.call @f`: JAX puts helpers like @relu and @_where in private functions."""
    def build(op):
        callee = str(op.attributes["callee"]).lstrip("@")
        run = functions.get(callee)
        if run is None:
            raise BackendError(f"func.call to unknown function @{callee} (at {op.location})")
        if len(op.results) == 1:
            return lambda *args: run(*args)[0]
        return run
    return build


def free_values(regions) -> list:
    """Values the ops inside `regions` use but do not define (StableHLO regions may capture values of the
    enclosing block), in order of first use: a region op's closure takes them as extra operands."""
    defined, free, seen = set(), [], set()

    def walk(region):
        for block in region.blocks:
            defined.update(block.arguments)
            for op in block.operations:
                for value in op.operands:
                    if value not in defined and value not in seen:
                        seen.add(value)
                        free.append(value)
                for inner in op.regions:
                    walk(inner)
                defined.update(op.results)
    for region in regions:
        walk(region)
    return [v for v in free if v not in defined]


def compile_block(block, name="block", functions=None, captures=()):
    """Generate `def block(args..., captures...): ...; return (results...)` calling one numpy closure per
    op. `functions` resolves `func.call` callees by name; `captures` are values of enclosing blocks the
    block uses. A builder that compiles regions is called as builder(op, functions) when it has
    `takes_functions`; a closure with a `captures` list of values gets them after its operands."""
    functions = {} if functions is None else functions
    names, namespace, lines = {}, {"_enter": _QUIET_ENTER, "_exit": _QUIET_EXIT}, []
    for i, arg in enumerate(block.arguments):
        names[arg] = f"a{i}"
    for i, value in enumerate(captures):
        names[value] = f"c{i}"
    returned = None
    for index, op in enumerate(block.operations):
        op_name = op.operation.name
        if op_name in RETURNS:
            returned = [names[v] for v in op.operands]
            break
        builder = OPS.get(op_name) or (_call_builder(functions) if op_name == "func.call" else None)
        if builder is None:
            raise BackendError(f"the reference backend does not implement {op_name} (at {op.location}); "
                               f"it implements: {', '.join(supported_ops())}")
        closure = builder(op.operation, functions) if getattr(builder, "takes_functions", False) \
            else builder(op.operation)
        namespace[f"op{index}"] = closure
        outs = [f"v{index}_{j}" for j in range(len(op.results))]
        for value, out in zip(op.results, outs):
            names[value] = out
        operands = [*op.operands, *getattr(closure, "captures", ())]
        call = f"op{index}({', '.join(names[v] for v in operands)})"
        lines.append(f"{', '.join(outs)} = {call}" if outs else call)
    params = ", ".join([names[a] for a in block.arguments] + [f"c{i}" for i in range(len(captures))])
    body = "\n".join("        " + line for line in lines) or "        pass"
    source = (f"def {name}({params}):\n    _token = _enter()\n    try:\n{body}\n"
              f"        return ({''.join(r + ', ' for r in returned or [])})\n    finally:\n        _exit(_token)\n")
    exec(_code(source, name), namespace)
    return namespace[name]


@functools.lru_cache(maxsize=512)
def _code(source: str, name: str):
    """The code object of a generated block: the same source comes again and again (a decomposition's loop body in
    every program that calls it, gradients' central differences tracing one program per step), and Python compiles
    ~20 us a line (1.3 of the 1.6 s test_linalg_complex_grad's reference runs spent compiling were repeats)."""
    return compile(source, f"<hlojit reference {name}>", "exec")


class Functions(dict):
    """The module's func.func ops by name, each compiled on first use (callees before callers' calls)."""

    def __init__(self, module):
        super().__init__()
        self._ops = {}
        for op in module.body.operations:
            if op.operation.name == "func.func":
                self._ops[str(op.attributes["sym_name"]).strip('"')] = op

    def get(self, name, default=None):
        if name not in self and name in self._ops:
            self[name] = compile_block(self._ops[name].regions[0].blocks[0], _python_name(name), self)
        return super().get(name, default)

    def __missing__(self, name):
        found = self.get(name)
        if found is None:
            raise BackendError(f"the module has no function @{name}")
        return found


def _python_name(symbol: str) -> str:
    return "f_" + re.sub(r"\W", "_", symbol)


