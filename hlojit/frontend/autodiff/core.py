"""The reverse-mode engine: a rule table keyed by StableHLO op name, and the walk that applies it.

Why a transformation of the traced StableHLO rather than a tape of frontend calls: every frontend op,
composite or not, ends as a few StableHLO ops, so one rule per StableHLO op covers the whole library
(and anything written with the dialect builders) from a table of ~60 entries. `backward` walks a list of
forward ops in reverse, keeps one cotangent (a Tensor) per MLIR value, and asks each op's rule for its
operands' cotangents; the rules emit the backward pass with frontend ops into the same block, so the
forward and backward become one module that IREE fuses as a whole.

A few composites compute floats through integer bit tricks (sin's exact argument reduction, sort keys):
their ops have no useful derivative, so they record a `Region` instead (frontend/derivatives.py): the values
that went in and came out, and a function that maps output cotangents to input cotangents. The walk applies
it when it meets the region's outputs; the ops inside never receive a cotangent. `custom_vjp` and
`stop_gradient` are regions too, and so are the ops that declare a closed-form derivative where they are
defined (`derivatives.closed_form`: softmax, log_softmax, gelu, top_k).
"""
from __future__ import annotations

import os
import re
from typing import Callable

from iree.compiler import ir

from ...dialects.registry import Facet
from ...dialects.types import dtype_of, shape_of
from ...errors import DifferentiationError
from .. import dtypes, trace as _trace
from ..derivatives import Region, add_region, identity, regions  # noqa: F401  (autodiff's names for them)
from ..ops._core import wrap
from ..tensor import Tensor

RULES: dict[str, Callable] = Facet("autodiff's VJP rules")   # op name (a registry record) -> rule


def register(*names: str):
    """`@register("add", "subtract")`: the rule of these StableHLO ops. A rule is
    rule(primal, cotangents, active) -> one cotangent (Tensor or None for zero) per operand, then one per
    captured value of the op's regions; `cotangents` has one entry per result (None: zero), `active` says
    which operands need a cotangent."""
    def add(rule):
        for name in names:
            RULES[f"stablehlo.{name}"] = rule
        return rule
    return add


def no_gradient(*names: str):
    """Ops whose output does not change smoothly with their inputs (floor, sign, compare ...): zero."""
    register(*names)(lambda primal, cts, active: [None] * len(active))


class Primal:
    """What a rule sees of one forward op: its operands, results and captured values as Tensors."""
    __slots__ = ("op", "inputs", "outputs", "captures")

    def __init__(self, op, captured=()):
        self.op = op
        self.inputs = [tensor(v) for v in op.operands]
        self.outputs = [tensor(v) for v in op.results]
        self.captures = [tensor(v) for v in captured]

    def ints(self, name: str) -> list[int]:
        if name not in self.op.attributes:
            return []
        return [int(v) for v in ir.DenseI64ArrayAttr(self.op.attributes[name])]

    def int(self, name: str, default: int = 0) -> int:
        attr = self.op.attributes
        return int(ir.IntegerAttr(attr[name]).value) if name in attr else default

    def text(self, name: str) -> str:
        return str(self.op.attributes[name])


def tensor(value) -> Tensor:
    return Tensor(value, shape_of(value.type), dtype_of(value.type))


def is_float_value(value) -> bool:
    return dtypes.is_inexact(dtype_of(value.type))


# --- regions: composites with a derivative of their own (frontend/derivatives.py) ----------------------

def _apply_region(region: Region, cotangents: dict, active: set):
    cts = [cotangents.pop(v, None) for v in region.outputs]
    outs = [tensor(v) for v in region.outputs]
    cts = [c if c is not None else zeros_like(o) for c, o in zip(cts, outs)]
    grads = region.bwd([tensor(v) for v in region.residuals], cts)
    for value, g in zip(region.inputs, grads):
        if g is not None and value in active:
            accumulate(cotangents, value, g, region.name)


# --- errors and locations --------------------------------------------------------------------------

_FILE_LINE = re.compile(r'"([^"]+)":(\d+):(\d+)')


def source_of(op) -> tuple[str, int] | None:
    found = _FILE_LINE.search(str(op.location))
    return (found.group(1), int(found.group(2))) if found else None


def site_of(op) -> str:
    source = source_of(op)
    return f"{os.path.basename(source[0])}:{source[1]}" if source else "<unknown>"


def located(op):
    """Backward ops take the user's line of the forward op they differentiate (for explain)."""
    source = source_of(op)
    return _trace.at_location(ir.Location.file(source[0], source[1], 0) if source else
                              getattr(_trace._local, "location", None))


# --- the walk --------------------------------------------------------------------------------------

def zeros_like(t: Tensor) -> Tensor:
    from ..ops import zeros
    return zeros(t.shape, t.dtype)


def accumulate(cotangents: dict, value, ct: Tensor, who: str):
    if ct.shape != tuple(shape_of(value.type)) or ct.dtype != dtype_of(value.type):  # pragma: no cover
        raise RuntimeError(f"hlojit autodiff: the rule of {who} gave a cotangent {ct.dtype}{list(ct.shape)} for "
                           f"a value of type {value.type}")
    ct = wrap(ct.value, ct.shape, ct.dtype)
    old = cotangents.get(value)
    cotangents[value] = ct if old is None else old + ct


def captures(op) -> list:
    """Values the op's regions use but do not define, in order of first use."""
    inside, seen, used = set(), set(), []

    def walk(o):
        for region in o.regions:
            for block in region.blocks:
                inside.update(block.arguments)
                for inner in block.operations:
                    for v in inner.operands:
                        if v not in seen:
                            seen.add(v)
                            used.append(v)
                    walk(inner)
                    inside.update(inner.results)
    walk(op)
    return [v for v in used if v not in inside]


def operands_of(op) -> tuple[list, list]:
    captured = captures(op) if len(op.regions) else []
    return list(op.operands) + captured, captured


def activity(ops, active) -> set:
    """The float values that depend on `active` ones (only they need cotangents). A region's outputs
    depend on its inputs even where its ops go through integers."""
    active, table = set(active), regions()
    for op in ops:
        if any(v in active for v in operands_of(op)[0]) or \
                any(r in table and any(v in active for v in table[r].inputs) for r in op.results):
            active.update(r for r in op.results if is_float_value(r))
    return active


def backward(ops, cotangents: dict, active) -> dict:
    """Walk `ops` (forward order, one block) in reverse, turning the cotangents of their results into
    cotangents of their operands. `cotangents` maps ir.Value -> Tensor and is updated in place; only values
    that depend on `active` ones receive cotangents."""
    active = activity(ops, active)
    table = regions()
    for op in reversed(ops):
        results = list(op.results)
        if not any(r in cotangents for r in results):
            continue
        region = next((table[r] for r in results if r in table), None)
        if region is not None:
            _apply_region(region, cotangents, active)
            continue
        cts = [cotangents.pop(r, None) for r in results]
        operands, captured = operands_of(op)
        mask = [v in active for v in operands]
        if not any(mask):
            continue
        rule = RULES.get(op.name)
        if rule is None:
            raise DifferentiationError(
                f"reverse mode has no rule for {op.name} (built at {site_of(op)}); hlojit differentiates "
                f"{', '.join(sorted(n.removeprefix('stablehlo.') for n in RULES))}")
        with located(op):
            grads = rule(Primal(op, captured), cts, mask)
            for value, g, needed in zip(operands, grads, mask):
                if needed and g is not None:
                    accumulate(cotangents, value, g, op.name)
    return cotangents


def block_ops(block, start: int) -> list:
    """The ops of `block` from index `start` on (what a function appended while it was traced)."""
    return [o.operation for o in list(block.operations)[start:]]


def current_block():
    ip = ir.InsertionPoint.current
    if ip.ref_operation is not None:  # pragma: no cover  (traces always append)
        raise RuntimeError("hlojit autodiff: the trace does not append at the end of a block")
    return ip.block


# --- copying ops (control-flow rules recompute a region's body where its values are visible) ---------

def rename_operands(op, mapping: dict):
    """op's operands, and those of the ops nested in its regions, replaced by `mapping` where it has them
    (copies of traced ops, here and in frontend/inline.py)."""
    for i, v in enumerate(op.operands):
        if v in mapping:
            op.operands[i] = mapping[v]
    for region in op.regions:
        for block in region.blocks:
            for inner in block.operations:
                rename_operands(inner.operation, mapping)


def copy_ops(ops, mapping: dict) -> list:
    """Copies of `ops` at the current insertion point, with their operands (and those of ops nested in
    their regions) renamed by `mapping`, which gains the copies' results. Their derivative regions are
    not copied (vmap carries those over itself, once it has walked all of their values)."""
    ip = ir.InsertionPoint.current
    copies = []
    for op in ops:
        copy = op.clone(ip=ip).operation
        rename_operands(copy, mapping)
        mapping.update(zip(op.results, copy.results))
        copies.append(copy)
    return copies


def clone_into(ops, mapping: dict) -> list:
    """`copy_ops`, and the regions whose outputs the ops define copied as well, so the copies differentiate
    like the originals. Every value of those regions must be in `mapping` or visible at the insertion point
    (the control-flow rules copy a whole body, whose regions' values are the body's or outside it)."""
    copies = copy_ops(ops, mapping)
    table = regions()
    for op in ops:
        for value in op.results:
            region = table.get(value)
            if region is not None and mapping.get(value) not in table:
                rename = lambda values: [mapping.get(v, v) for v in values]  # noqa: E731
                add_region(region._replace(inputs=rename(region.inputs), outputs=rename(region.outputs),
                                           residuals=rename(region.residuals)))
    return copies
