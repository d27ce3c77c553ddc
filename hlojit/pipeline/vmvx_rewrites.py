"""Target rewrites for IREE 3.13's vmvx: ops it cannot lower or lowers wrongly, computed from ops it gets right.
StableHLO -> StableHLO, listed for vmvx in quirks.py (llvm-cpu and cuda lower these ops themselves).

Found by the conformance cases (tests/data/stablehlo) once their constants stopped folding on the host:
- CHLO ops: IREE expands them into StableHLO after hlojit's rewrites ran, so the ops they expand into never
  got vmvx's fixes (bessel_i1e's sign, tan, polygamma's remainder and sine). They are expanded here first, by
  the same pass IREE runs (chlo-legalize-to-stablehlo), and every later rewrite sees their StableHLO.
- float sign: lowered to math.copysign, which vmvx cannot lower: selects, which keep -0.0, +0.0 and NaN.
- popcnt: math.ctpop, which vmvx cannot lower: the bit-parallel sum of bits (shifts, masks and adds).
- count_leading_zeros below 32 bits: vmvx counts in 32 bits (ui8 1 gave 31): the count of the value widened
  with zeros to 32 bits, minus the extra bits.
- bf16 arithmetic: vmvx keeps bf16 in i32 and emits f32 instructions on it ('vm.add.f32' op operand #0 must
  be 32-bit float, but got 'i32'): the op computes in f32 and its result is rounded to bf16 once, which is
  the correctly rounded bf16 result for + - * / and sqrt (f32 holds more than twice bf16's 8 bits).
"""
from __future__ import annotations

import numpy as np
from iree.compiler import ir, passmanager

from ..dialects import stablehlo as hlo
from ..dialects.types import dtype_of
from .legalize import walk
from .values import V, where


def _replace(op, new: V) -> int:
    op.result.replace_all_uses_with(new.value)
    op.erase()
    return 1


def _chlo_ops(module: ir.Module) -> int:
    return sum(op.name.startswith("chlo.") for op in walk(module.operation))


def chlo_as_stablehlo(module: ir.Module) -> int:
    """Every CHLO op the pass expands (tan, bessel_i1e, zeta, polygamma, erf, broadcast_* ...) as StableHLO."""
    before = _chlo_ops(module)
    if before:
        passmanager.PassManager.parse("builtin.module(func.func(chlo-legalize-to-stablehlo))").run(module.operation)
    return before - _chlo_ops(module)



def _float_ops(module: ir.Module, name: str):
    for op in list(walk(module.operation)):
        if op.name == name and dtype_of(op.results[0].type).name in _FLOATS:
            yield op


_FLOATS = ("bfloat16", "float16", "float32", "float64")


def float_sign_by_selects(module: ir.Module) -> int:
    """sign(x) = 1 for x > 0, -1 for x < 0, else x itself (-0.0, +0.0 and NaN)."""
    count = 0
    for op in _float_ops(module, "stablehlo.sign"):
        with ir.InsertionPoint(op), op.location:
            x = V(op.operands[0])
            count += _replace(op, where(x > 0, 1.0, where(x < 0, -1.0, x)))
    return count


_UNSIGNED = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def _zero_extended(x: V) -> V:
    """An integer's bits as an unsigned int of at least 32 bits (vmvx shifts narrower ones sign-extended: ui8
    252 >> 7 gave 255); the mask drops any sign extension the widening itself does."""
    width = x.dtype.itemsize
    bits = x if x.dtype.kind == "u" else V(hlo.bitcast_convert(x.value, np.dtype(_UNSIGNED[width])))
    if width >= 4:
        return bits
    return bits.to(np.uint32) & ((1 << (8 * width)) - 1)


def _ones(x: V) -> V:
    """The number of set bits of an unsigned x (32 or 64 bits): summed in pairs, nibbles, then bytes, in place."""
    width = 8 * x.dtype.itemsize

    def every_byte(byte: int) -> int:
        return int.from_bytes(bytes([byte]) * (width // 8), "little")
    u = x - ((x >> 1) & every_byte(0x55))
    u = (u & every_byte(0x33)) + ((u >> 2) & every_byte(0x33))
    u = (u + (u >> 4)) & every_byte(0x0F)
    for shift in (8, 16, 32):          # each byte's count into the lowest byte
        if shift < width:
            u = u + (u >> shift)
    return u & 0x7F


def popcnt_by_bits(module: ir.Module) -> int:
    count = 0
    for op in list(walk(module.operation)):
        if op.name != "stablehlo.popcnt":
            continue
        with ir.InsertionPoint(op), op.location:
            x = V(op.operands[0])
            count += _replace(op, _ones(_zero_extended(x)).to(x.dtype))
    return count


def narrow_count_leading_zeros_in_i32(module: ir.Module) -> int:
    """clz of an 8- or 16-bit x: clz of its bits zero-extended to 32, less the 24 or 16 bits added."""
    count = 0
    for op in list(walk(module.operation)):
        if op.name != "stablehlo.count_leading_zeros" or dtype_of(op.results[0].type).itemsize >= 4:
            continue
        with ir.InsertionPoint(op), op.location:
            x = V(op.operands[0])
            wide = _zero_extended(x).to(np.int32)
            zeros = V(hlo.unary("count_leading_zeros", wide.value)) - (32 - 8 * x.dtype.itemsize)
            count += _replace(op, zeros.to(x.dtype))
    return count


# quirks.py runs FIRST after chlo.square's own rewrite (whose complex form IREE's expansion would overflow) and
# before complex numbers become pairs (the CHLO expansions of complex ops are complex ops); AFTER_SPEC after the
# rewrites of every cpu-like target (accurate_math's, legalize's) and before vmvx's NaN-aware compares
FIRST = [chlo_as_stablehlo]
AFTER_SPEC = [float_sign_by_selects, popcnt_by_bits, narrow_count_leading_zeros_in_i32]
