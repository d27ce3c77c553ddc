"""The elementwise chain after a hand-written product (matmul_kernel.py), applied to each tile of the result in
registers before the tile is written: a dense layer's bias and activation, a residual connection.

A chain is what follows the kernel's result [..., n] (through reshapes that keep n last), each op the only user of
the one before: add, multiply (either order) or subtract (the chain's value first) of a vector [n] broadcast along
the last axis (COLUMN), of a tensor of the result's shape computed before the product (FULL), or of a splat
constant (SCALAR); and maximum with a splat 0.0 (RELU). Why: IREE fuses such a chain into its own matmul's
dispatch, but a hand-written dispatch is closed to it, so each chain was a dispatch of its own that read and wrote
the whole result again: after the transformer block's attention and MLP products (bias and residual) 0.18 ms each
for 1024 x 256 on one core. Measured (2026-12-06, 2-vCPU Xeon, exported, interleaved): the block's forward 16.8 ->
16.1 ms on one core, 9.7 -> 9.2 on both; the MLP's forward and Adam step even. Not after convolutions: a batch
norm's scale, shift and ReLU there made ResNet-18 b8's forward 289 -> 272 ms on one core but even on both (163.5
against 164.4), and its compile 6.0 -> 7.4 s (a kernel per chain where one per shape served every layer). The
arithmetic is the chain's, in its order, in f32 (an add after a multiply may be contracted into an fma, as
llvm-cpu does in IREE's own dispatches). In a kernel whose k goes in blocks, the chain runs in the last block only.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
from iree.compiler import ir

from ..dialects.types import attr_ints, constant_value, dtype_of, shape_of
from .legalize import producer

COLUMN, FULL, SCALAR, RELU = "column", "full", "scalar", "relu"
_ARITH = {"stablehlo.add": "addf", "stablehlo.multiply": "mulf", "stablehlo.subtract": "subf",
          "stablehlo.maximum": "maximumf"}
_COMMUTES = {"stablehlo.add", "stablehlo.multiply", "stablehlo.maximum"}
_OPS = frozenset({"stablehlo.reshape", *_ARITH})    # what a chain's ops are (matmul_kernel erases them)


class Step(NamedTuple):
    arith: str            # arith.<arith> of the chain's value and the other operand
    kind: str             # COLUMN, FULL, SCALAR or RELU
    operand: int | None   # COLUMN and FULL: which of the Epilogue's operands; else None
    value: float | None   # SCALAR: the constant


class Epilogue(NamedTuple):
    steps: list           # Steps, in order
    operands: list        # ir.Values: [n] vectors and tensors of `last`'s result shape
    ops: list             # the chain's ops (reshapes among them), in order: the last one's result the call replaces

    @property
    def last(self):
        return self.ops[-1]

    def signature(self) -> str:
        """A name for the chain (part of the kernel's symbol): e.g. `addf_column.maximumf_relu`."""
        names = []
        for step in self.steps:
            names.append(f"{step.arith}_{step.kind}" +
                         (f"{np.float32(step.value).view(np.uint32):08x}" if step.kind == SCALAR else ""))
        return ".".join(names)

    def types(self, m: int, n: int) -> list[tuple]:
        """The shapes the kernel binds its operands as: a COLUMN's [n], a FULL one's [m, n]."""
        kinds = {step.operand: step.kind for step in self.steps if step.operand is not None}
        return [(n,) if kinds[i] == COLUMN else (m, n) for i in range(len(self.operands))]


def only_user(value: ir.Value):
    """The op that is `value`'s only user, or None (none, or several)."""
    users = [use.owner for use in value.uses]
    return users[0] if len(users) == 1 else None


def splat_value(value: ir.Value) -> float | None:
    """The float a splat constant (or a broadcast scalar constant) holds; else None."""
    op = producer(value)
    if op is not None and op.name == "stablehlo.broadcast_in_dim" and not shape_of(op.operands[0].type):
        op = producer(op.operands[0])
    if op is None or op.name != "stablehlo.constant":
        return None
    values = np.unique(constant_value(op))
    return float(values[0]) if values.size == 1 else None


def column_vector(value: ir.Value, shape: tuple):
    """The f32 vector of n that `value` broadcasts along the last axis of `shape`: [n] broadcast along it, or [1,
    ..., 1, n] broadcast as it stands (the layout pass's per-channel scales); else None."""
    op = producer(value)
    if op is None or op.name != "stablehlo.broadcast_in_dim":
        return None
    vector, dims = op.operands[0], attr_ints(op, "broadcast_dimensions")
    along = shape_of(vector.type) == shape[-1:] and dims == [len(shape) - 1]
    as_it_stands = shape_of(vector.type) == (*[1] * (len(shape) - 1), shape[-1]) and dims == list(range(len(shape)))
    return vector if (along or as_it_stands) and dtype_of(vector.type) == np.float32 else None


def find(kernel_op, n: int) -> Epilogue | None:
    """The chain after `kernel_op`'s result (its last dimension n), or None where there is none."""
    value, steps, operands, ops, taken = kernel_op.results[0], [], [], [], 0
    while True:
        user = only_user(value)
        if user is None or len(user.results) != 1 or dtype_of(user.results[0].type) != np.float32:
            break
        shape = shape_of(user.results[0].type)
        if user.name == "stablehlo.reshape":
            if shape[-1:] != (n,):
                break
            ops.append(user)
            value = user.results[0]
            continue
        if user.name not in _ARITH or shape[-1:] != (n,):
            break
        first, second = user.operands
        if first == value and second == value:
            break
        if second == value:
            if user.name not in _COMMUTES:
                break
            first, second = second, first
        step = _step(user.name, second, shape, kernel_op, operands)
        if step is None:
            break
        steps.append(step)
        ops.append(user)
        taken, value = len(ops), user.results[0]
    return Epilogue(steps, operands, ops[:taken]) if steps else None


def _step(name: str, other: ir.Value, shape: tuple, kernel_op, operands: list) -> Step | None:
    arith = _ARITH[name]
    constant = splat_value(other)
    if name == "stablehlo.maximum":
        return Step(arith, RELU, None, None) if constant == 0.0 else None
    if constant is not None:
        return Step(arith, SCALAR, None, constant)
    column = column_vector(other, shape)
    if column is not None:
        operands.append(column)
        return Step(arith, COLUMN, len(operands) - 1, None)
    source = producer(other)
    computed_before = source is None or (source.operation.parent == kernel_op.operation.parent
                                         and source.operation.is_before_in_block(kernel_op.operation))
    if shape_of(other.type) == shape and dtype_of(other.type) == np.float32 and computed_before:
        operands.append(other)
        return Step(arith, FULL, len(operands) - 1, None)
    return None


def tile_lines(epilogue: Epilogue, value: str, r: int, w: int, lanes: int, whole_panels: bool, m: int, n: int,
               name: str) -> tuple[list[str], str]:
    """(lines, the result's name) applying the chain to `value`, the tile's vector of row r, column vector w (the
    kernel's %row{r}, %column{w}, %mask{w}); the operands bound as %e0, %e1 ... (Epilogue.types)."""
    v = f"vector<{lanes}xf32>"
    lines, types = [], epilogue.types(m, n)
    for i, step in enumerate(epilogue.steps):
        out = f"{name}_{i}"
        if step.kind == RELU:
            other = "%zv"
        elif step.kind == SCALAR:
            lines.append(f"{out}_c = arith.constant dense<{float(np.float32(step.value))!r}> : {v}"
                         if np.isfinite(step.value) else
                         f"{out}_c = arith.constant dense<0x{np.float32(step.value).view(np.uint32):08X}> : {v}")
            other = f"{out}_c"
        else:
            shape = types[step.operand]
            memref = f"memref<{'x'.join(map(str, shape))}xf32>"
            at = f"%e{step.operand}[{'%row' + str(r) + ', ' if len(shape) == 2 else ''}%column{w}]"
            lines.append(f"{out}_x = vector.transfer_read {at}, %zero {{in_bounds = [true]}} : {memref}, {v}"
                         if whole_panels else
                         f"{out}_x = vector.maskedload {at}, %mask{w}, %zv : {memref}, vector<{lanes}xi1>, {v} "
                         f"into {v}")
            other = f"{out}_x"
        lines.append(f"{out} = arith.{step.arith} {value}, {other} : {v}")
        value = out
    return lines, value
