"""Float compares that subnormals do not fool, for llvm-cpu and vmvx (IREE 3.13 flushes subnormal operands to zero
in every float op: 1e-40 > 0 gave false, 1e-40 == 0 true, in f32, f64 and bf16, all six directions; f16 compares
are exact: its subnormals are f32's normals, in which IREE computes them).

A FLOAT compare becomes an integer compare of keys that order the floats as IEEE does: the bits as a signed int,
the magnitude negated where the sign bit is set, so -0 and +0 are both 0 and each float is its own key; a NaN on
either side is tested on the bits (unordered: NE true, the rest false). TOTALORDER compares are integer ops in
IREE already and stay. Keys of constant operands are computed here, in numpy: IREE would evaluate their bit ops
while compiling by JIT-compiling each one (seconds of compiler CPU).

Compares that flushing cannot change are left alone, so programs pay only where a subnormal could matter:
- a value against itself (isnan is `x != x`): both sides flush alike, and a subnormal equals itself as its flushed
  zero does (on a complex128 op table's module 67 of the 207 compares rewritten were these);
- both operands are converts from f16 (vmvx computes f16 in f32: no subnormal can come out of them);
- one operand is a constant none of whose elements is zero or subnormal (a NaN, an infinity, |c| >= the
  smallest normal): a subnormal x stands to c as its flushed +-0 does.
`x > 0` is not among them (1e-40 > 0 is true): a compare with a zero constant becomes key(x) compared with 0,
the NaN test folded into the bounds of the key (see _against_zero).

Left to IREE (flushing) for now: the compares inside while loops. With them rewritten, IREE 3.13's compiler
crashed (SIGSEGV) on llvm-cpu compiling hlojit's eigh (tests/test_linalg.py, its Jacobi sweeps); which loop
pattern does it was not narrowed down.
"""
from __future__ import annotations

import numpy as np
from iree.compiler import ir

from ..dialects import stablehlo as hlo
from ..dialects.types import constant_value, dtype_of, enum_attr, finfo, shape_of
from .values import V

_FLUSHED = {"float32", "float64", "bfloat16"}
_SIGNED = {2: np.int16, 4: np.int32, 8: np.int64}


def _is_total_order(op) -> bool:
    return "compare_type" in op.attributes and enum_attr(op, "compare_type") == "TOTALORDER"


def _constant(value: ir.Value) -> np.ndarray | None:
    """The elements a constant operand holds (a stablehlo.constant, or a broadcast of a splat one: then its one
    element, not an array of the broadcast's shape, which may be an activation's millions); None otherwise. Every
    use here reads the elements only (each splat key is rebuilt at the compare's shape by _constant_tensor)."""
    owner = value.owner
    name = getattr(owner, "name", None)
    if name == "stablehlo.broadcast_in_dim":
        source = _constant(owner.operands[0])
        if source is None or not source.size or not (source == source.flat[0]).all():
            return None
        return source.reshape(-1)[:1]
    return constant_value(owner) if name == "stablehlo.constant" else None


def _from_f16(value: ir.Value) -> bool:
    owner = value.owner
    return getattr(owner, "name", None) == "stablehlo.convert" and dtype_of(owner.operands[0].type) == np.float16


def _flush_proof(c: np.ndarray) -> bool:
    """Every element a NaN, an infinity or a normal: its compares with a flushed subnormal are the exact ones."""
    wide = np.asarray(c, np.float64)
    return bool(np.all(np.isnan(wide) | (np.abs(wide) >= float(finfo(c.dtype).smallest_normal))))


def _numpy_key(c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(key, is NaN) of a constant, as _key builds them."""
    signed = np.ascontiguousarray(c).view(_SIGNED[c.dtype.itemsize])
    magnitude = signed & np.iinfo(signed.dtype).max
    return np.where(signed < 0, -magnitude, magnitude).astype(signed.dtype), np.isnan(np.asarray(c, np.float64))


def _key(x: V) -> tuple[V, V]:
    """(the order key, is NaN) of a float tensor, from its bits."""
    signed = V(hlo.bitcast_convert(x.value, np.dtype(_SIGNED[x.dtype.itemsize])))
    magnitude = signed & int(np.iinfo(signed.dtype).max)
    infinity = int(np.array(np.inf, x.dtype).view(signed.dtype))
    return V(hlo.select((signed < 0).value, (-magnitude).value, magnitude.value)), magnitude > infinity


def _constant_tensor(array: np.ndarray, like: V) -> V:
    if array.size and (array == array.flat[0]).all():
        return like.splat(array.flat[0], array.dtype)
    return V(hlo.constant(np.ascontiguousarray(array)))


def _operand_key(value: ir.Value) -> tuple[V, V | None]:
    """(key, is NaN or None where no element is) of a compare's operand, a constant's computed here."""
    c = _constant(value)
    if c is None:
        return _key(V(value))
    like = V(value)
    key, nan = _numpy_key(c)
    return _constant_tensor(key, like), (_constant_tensor(nan, like) if nan.any() else None)


def _against_zero(x: V, direction: str) -> V:
    """x compared with +-0 on its signed bits s: > 0 is 0 < s <= +inf's bits, < 0 is s between -0's bits
    (exclusive) and -inf's (as signed ints the negative floats run from -0 = INT_MIN up to -inf, NaNs beyond:
    either way), == 0 is a zero magnitude."""
    signed = V(hlo.bitcast_convert(x.value, np.dtype(_SIGNED[x.dtype.itemsize])))
    lowest = int(np.iinfo(signed.dtype).min)
    plus_inf = int(np.array(np.inf, x.dtype).view(signed.dtype))
    minus_inf = int(np.array(-np.inf, x.dtype).view(signed.dtype))
    if direction in ("EQ", "NE"):
        zero = (signed & int(np.iinfo(signed.dtype).max)) == 0
        return zero if direction == "EQ" else ~zero
    if direction in ("GT", "GE"):
        side = (signed > 0) & (signed <= plus_inf)
    else:
        side = (signed > lowest) & (signed <= minus_inf)
    return side if direction in ("GT", "LT") else side | ((signed & int(np.iinfo(signed.dtype).max)) == 0)


_SWAPPED = {"EQ": "EQ", "NE": "NE", "LT": "GT", "LE": "GE", "GT": "LT", "GE": "LE"}


def _exact_compare(lhs: ir.Value, rhs: ir.Value, direction: str) -> V:
    for x, c, d in ((lhs, _constant(rhs), direction), (rhs, _constant(lhs), _SWAPPED[direction])):
        if c is not None and np.all(np.asarray(c, np.float64) == 0):
            return _against_zero(V(x), d)
    (a, a_nan), (b, b_nan) = _operand_key(lhs), _operand_key(rhs)
    ordered = V(hlo.compare(a.value, b.value, direction))
    nans = [n for n in (a_nan, b_nan) if n is not None]
    if not nans:
        return ordered
    nan = nans[0] if len(nans) == 1 else nans[0] | nans[1]
    return ordered | nan if direction == "NE" else ordered & ~nan


def _needs_exact(op) -> bool:
    lhs, rhs = op.operands
    if dtype_of(lhs.type).name not in _FLUSHED or _is_total_order(op) or lhs == rhs:
        return False
    if _from_f16(lhs) and _from_f16(rhs):
        return False
    return not any(c is not None and _flush_proof(c) for c in (_constant(lhs), _constant(rhs)))


def _compares_outside_loops(op):
    """The compares nested in `op`, but not in a while loop's regions."""
    for region in op.regions:
        for block in region.blocks:
            for inner in list(block.operations):
                if inner.operation.name == "stablehlo.compare":
                    yield inner.operation
                elif inner.operation.name != "stablehlo.while":
                    yield from _compares_outside_loops(inner.operation)


def float_compares_by_bits(module: ir.Module) -> int:
    count = 0
    for op in list(_compares_outside_loops(module.operation)):
        if not _needs_exact(op):
            continue
        with ir.InsertionPoint(op), op.location:
            new = _exact_compare(op.operands[0], op.operands[1], enum_attr(op, "comparison_direction"))
        op.result.replace_all_uses_with(new.value)
        op.erase()
        count += 1
    return count
