"""A StableHLO module (an `hj.from_mlir` module) called inside a trace: its @main is copied into the
traced function, its `func.call`s and `stablehlo.composite`s inlined (a composite is a call of its decomposition),
so transformations (vmap, grad) see its ops like any others. A JAX LAPACK call's replacement (lapack_calls.py)
is inlined into a module instead, its composites kept (a target's kernel takes them).
"""
from __future__ import annotations

import numpy as np
from iree.compiler import ir

from ..errors import SignatureError, TracingError
from ..pipeline.legalize import walk
from . import trace as _trace
from .autodiff.core import rename_operands, tensor
from .ops._core import as_tensor, describe


def call(text: str, inputs, name: str, args) -> list:
    """@main of the module `text` (whose arguments are `inputs`, [(shape, dtype)]) applied to `args`
    (Tensors or arrays) at the current insertion point."""
    if len(args) != len(inputs):
        raise SignatureError(f"{name} takes {len(inputs)} arguments, got {len(args)} (at {_trace.user_site()})")
    values = []
    for i, (x, (shape, dtype)) in enumerate(zip(args, inputs)):
        t = as_tensor(x, name)
        if tuple(t.shape) != tuple(shape) or np.dtype(t.dtype) != np.dtype(dtype):
            raise SignatureError(f"{name}: argument {i} must be {np.dtype(dtype)}{list(shape)}, got "
                                 f"{describe(t)} (at {_trace.user_site()})")
        values.append(t.value)
    module = ir.Module.parse(text)  # into the trace's context
    return [tensor(v) for v in inline_function(module, values, name)]


def inline_function(module: ir.Module, values: list, where: str, into: ir.Module | None = None) -> list:
    """The ops of @main of `module` (parsed in the current context) applied to `values` at the current
    insertion point, its func.calls and composites inlined; the values it returns. With `into` (the module
    the insertion point is in), composites stay composites: the functions of `module` move into `into`,
    renamed apart from its symbols, so a target's kernel may still take them."""
    if into is not None:
        _move_functions(module, into)
    functions = {_symbol(op): op.operation for op in module.body.operations if op.operation.name == "func.func"}
    return _inline(functions, "main", values, where, into is not None)


def _symbol(op) -> str:
    return ir.StringAttr(op.attributes["sym_name"]).value


def _move_functions(module: ir.Module, into: ir.Module):
    """module's functions but @main moved into `into` under names none of its symbols has; every reference
    to them in module (composites' decompositions, calls) follows."""
    taken = {_symbol(op) for op in into.body.operations if "sym_name" in op.operation.attributes}
    moved = [op.operation for op in module.body.operations
             if op.operation.name == "func.func" and _symbol(op) != "main"]
    renamed = {}
    for op in moved:
        name = _symbol(op)
        renamed[name] = next(f"{name}_{k}" for k in range(len(taken) + 1) if f"{name}_{k}" not in taken)
        taken.add(renamed[name])
        op.attributes["sym_name"] = ir.StringAttr.get(renamed[name])
    for op in walk(module.operation):
        attribute = _CALLS.get(op.name)
        if attribute and str(op.attributes[attribute]).lstrip("@") in renamed:
            op.attributes[attribute] = ir.FlatSymbolRefAttr.get(renamed[str(op.attributes[attribute]).lstrip("@")])
    first = into.body.operations[0].operation
    for op in moved:
        op.move_before(first)


def _inline_nested_calls(op, functions: dict, where: str, keep_composites: bool):
    """The func.calls in op's regions (JAX's while bodies call helpers) replaced by their callees' ops."""
    for region in op.regions:
        for block in region.blocks:
            for inner in list(block.operations):
                inner = inner.operation
                if not _inlined(inner, keep_composites):
                    _inline_nested_calls(inner, functions, where, keep_composites)
                    continue
                with ir.InsertionPoint(inner):
                    values = _inline(functions, _callee(inner, functions, where), list(inner.operands), where,
                                     keep_composites)
                for result, value in zip(inner.results, values):
                    result.replace_all_uses_with(value)
                inner.erase()


_CALLS = {"func.call": "callee", "stablehlo.composite": "decomposition"}   # op -> the attribute naming its callee


def _inlined(op, keep_composites: bool) -> bool:
    return op.name in _CALLS and not (keep_composites and op.name == "stablehlo.composite")


def _callee(call, functions: dict, where: str) -> str:
    callee = str(call.attributes[_CALLS[call.name]]).lstrip("@")
    if callee not in functions:
        raise TracingError(f"{where}: func.call to unknown function @{callee}")
    return callee


def _inline(functions: dict, name: str, values: list, where: str, keep_composites: bool = False) -> list:
    block = functions[name].regions[0].blocks[0]
    mapping = dict(zip(block.arguments, values))
    ip = ir.InsertionPoint.current
    for op in block.operations:
        op = op.operation
        operands = [mapping.get(v, v) for v in op.operands]
        if op.name == "func.return":
            return operands
        if _inlined(op, keep_composites):
            mapping.update(zip(op.results, _inline(functions, _callee(op, functions, where), operands, where,
                                                   keep_composites)))
            continue
        copy = op.clone(ip=ip).operation
        rename_operands(copy, mapping)
        _inline_nested_calls(copy, functions, where, keep_composites)
        mapping.update(zip(op.results, copy.results))
    raise TracingError(f"{where}: @{name} has no func.return")  # pragma: no cover
