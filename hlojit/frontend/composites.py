"""Named ops whose meaning is a function of the op library: each call becomes one `stablehlo.composite "name"`
op whose decomposition, a private function of the module traced from the implementation, is what it means.

Why: a factorization written with StableHLO loops runs hundreds of small dispatches (a Cholesky of 256 x 256
~1.5 ms, LAPACK 0.4); as one named op, a target that has a kernel of its own for it (pipeline/kernels.py:
hand-written llvm-cpu dispatches) runs that instead, while the reference backend and every other target run
the decomposition, which is also what `explain` and an exported module show. The decomposition is traced once
per name and operand types within a trace (the same function serves every call).

Transformations see one op: its derivative is the decomposition's (a derivative region whose backward pass is
the vjp of the implementation, recomputed from the operands, so nothing of the forward loop is kept), and vmap
calls the op again with the batch dimension first (every implementation takes leading batch dimensions).
"""
from __future__ import annotations

import functools
from typing import Callable

from iree.compiler import ir
from iree.compiler.dialects import func

from ..dialects import stablehlo as hlo
from ..dialects.types import tensor_type
from . import derivatives, dtypes, trace as _trace
from .autodiff import vjp
from .ops._core import emit, wrap
from .tensor import Tensor

IMPLEMENTATIONS: dict[str, Callable] = {}   # composite name -> implementation(*Tensors) -> Tensor | tuple


def composite(name: str):
    """`@composite("hlojit.name")` on an implementation fn(*tensors, **ints) -> tensor or tuple of tensors,
    written with the op library and batch-polymorphic over leading dimensions: inside a trace, a call emits the
    named op, its int keyword arguments as the op's composite_attributes."""
    def decorate(impl):
        IMPLEMENTATIONS[name] = impl

        @functools.wraps(impl)
        def call(*inputs, **attributes):
            return emit_composite(name, list(inputs), attributes)
        return call
    return decorate


def emit_composite(name: str, inputs: list[Tensor], attributes: dict | None = None):
    """The composite op `name` of the Tensors `inputs` (and int `attributes`) at the current insertion point,
    its decomposition traced (once per operand types and attributes) into the module; its results as the
    implementation returns them."""
    trace = _trace.current()
    attributes = dict(attributes or {})
    impl = functools.partial(IMPLEMENTATIONS[name], **attributes)
    symbol, shapes = _decomposition(trace, name, impl, inputs, attributes)
    values = emit(hlo.composite, name, [x.value for x in inputs],
                  [tensor_type(shape, dtype) for shape, dtype in shapes], symbol, attributes=attributes)
    outputs = [wrap(v, shape, dtype) for v, (shape, dtype) in zip(values, shapes)]
    if any(dtypes.is_inexact(x.dtype) for x in inputs):
        derivatives.add_region(derivatives.Region(
            name, [x.value for x in inputs], [o.value for o in outputs], [x.value for x in inputs],
            functools.partial(_backward, impl, len(outputs) > 1)))
    return tuple(outputs) if len(outputs) > 1 else outputs[0]


def _backward(impl, several: bool, operands: list[Tensor], cts: list[Tensor]) -> list:
    """The operands' cotangents: the vjp of the implementation, traced again inline from the operands."""
    _, pullback = vjp(impl, *operands)
    return list(pullback(tuple(cts) if several else cts[0]))


def _decomposition(trace, name: str, impl, inputs: list[Tensor], attributes: dict) -> tuple[str, list]:
    """(symbol, [(shape, dtype) of each result]) of the private function that is `name`'s meaning for these
    operand types and attributes, traced on first use in this trace."""
    cache = trace.composites
    key = (name, tuple((x.shape, x.dtype, x.weak) for x in inputs), tuple(sorted(attributes.items())))
    if key not in cache:
        symbol = f"{name.replace('.', '_')}_{len(cache)}"
        types = [tensor_type(x.shape, x.dtype) for x in inputs]
        with ir.InsertionPoint(trace.module.body):
            fn = func.FuncOp(symbol, ir.FunctionType.get(types, []), visibility="private")
        block = fn.add_entry_block()
        with ir.InsertionPoint(block), _trace.at_location(_trace.user_location()):
            out = impl(*[wrap(a, x.shape, x.dtype, x.weak) for a, x in zip(block.arguments, inputs)])
            outs = list(out) if isinstance(out, tuple) else [out]
            func.ReturnOp([o.value for o in outs])
        fn.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(types, [o.value.type for o in outs]))
        cache[key] = symbol, [(o.shape, o.dtype) for o in outs]
    return cache[key]
