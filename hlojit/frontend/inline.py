"""A StableHLO module (an `hj.from_mlir` module) called inside a trace: its @main is copied into the
traced function, its `func.call`s and `stablehlo.composite`s inlined (a composite is a call of its decomposition),
so transformations (vmap, grad) see its ops like any others.
"""
from __future__ import annotations

import numpy as np
from iree.compiler import ir

from ..errors import SignatureError, TracingError
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


def inline_function(module: ir.Module, values: list, where: str) -> list:
    """The ops of @main of `module` (parsed in the current context) applied to `values` at the current
    insertion point, its func.calls inlined; the values it returns."""
    functions = {str(op.attributes["sym_name"]).strip('"'): op.operation for op in module.body.operations
                 if op.operation.name == "func.func"}
    return _inline(functions, "main", values, where)


def _inline_nested_calls(op, functions: dict, where: str):
    """The func.calls in op's regions (JAX's while bodies call helpers) replaced by their callees' ops."""
    for region in op.regions:
        for block in region.blocks:
            for inner in list(block.operations):
                inner = inner.operation
                if inner.name not in _CALLS:
                    _inline_nested_calls(inner, functions, where)
                    continue
                with ir.InsertionPoint(inner):
                    values = _inline(functions, _callee(inner, functions, where), list(inner.operands), where)
                for result, value in zip(inner.results, values):
                    result.replace_all_uses_with(value)
                inner.erase()


_CALLS = {"func.call": "callee", "stablehlo.composite": "decomposition"}   # op -> the attribute naming its callee


def _callee(call, functions: dict, where: str) -> str:
    callee = str(call.attributes[_CALLS[call.name]]).lstrip("@")
    if callee not in functions:
        raise TracingError(f"{where}: func.call to unknown function @{callee}")
    return callee


def _inline(functions: dict, name: str, values: list, where: str) -> list:
    block = functions[name].regions[0].blocks[0]
    mapping = dict(zip(block.arguments, values))
    ip = ir.InsertionPoint.current
    for op in block.operations:
        op = op.operation
        operands = [mapping.get(v, v) for v in op.operands]
        if op.name == "func.return":
            return operands
        if op.name in _CALLS:
            mapping.update(zip(op.results, _inline(functions, _callee(op, functions, where), operands, where)))
            continue
        copy = op.clone(ip=ip).operation
        rename_operands(copy, mapping)
        _inline_nested_calls(copy, functions, where)
        mapping.update(zip(op.results, copy.results))
    raise TracingError(f"{where}: @{name} has no func.return")  # pragma: no cover
