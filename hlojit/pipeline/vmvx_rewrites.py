"""Target rewrites for IREE 3.13's vmvx: ops it cannot lower or lowers wrongly, computed from ops it gets right.
StableHLO -> StableHLO, listed for vmvx in quirks.py (llvm-cpu and cuda lower these ops themselves).

Found by the conformance cases (tests/data/stablehlo) once their constants stopped folding on the host:
- CHLO ops: expanded first (legalize.chlo_as_stablehlo, on llvm-cpu too), so the ops they expand into get
  vmvx's fixes (bessel_i1e's sign, tan, polygamma's remainder and sine).
- float sign: lowered to math.copysign, which vmvx cannot lower: legalize.float_sign_by_bits (llvm-cpu's
  flushes subnormals) builds it from the bits for both.
- popcnt: math.ctpop, which vmvx cannot lower: the bit-parallel sum of bits (shifts, masks and adds).
- count_leading_zeros below 32 bits: vmvx counts in 32 bits (ui8 1 gave 31): the count of the value widened
  with zeros to 32 bits, minus the extra bits.
- float maximum/minimum of equal operands and round_nearest_even: signed zeros lost (maximum(-0.0, +0.0) gave
  -0.0, round_nearest_even(-0.5) +0.0): from the bits.
- ui8/ui16 divide, remainder, shift_right_logical: vmvx sign-extends the operands (ui8 252 >> 7 gave 255): in i32
  on the operands widened with zeros.
- bf16 arithmetic: vmvx keeps bf16 in i32 and emits f32 instructions on it ('vm.add.f32' op operand #0 must
  be 32-bit float, but got 'i32'): the op computes in f32 and its result is rounded to bf16 once, which is
  the correctly rounded bf16 result for + - * / and sqrt (f32 holds more than twice bf16's 8 bits); so do
  reductions by one op, rounded each step, and dot_generals (f32 accumulation, as XLA's; a bf16 result's zero
  did not lower). Converts between bf16 and ints or f64 go through f32. Left:
  reduce_window and multi-op reduce bodies of bf16, f64 -> bf16 (vmvx truncates no f64).
"""
from __future__ import annotations

import numpy as np
from iree.compiler import ir

from ..dialects import registry
from ..dialects import stablehlo as hlo
from ..dialects.build import create
from ..dialects.types import attr_ints, bfloat16, constant_value, dtype_of, element_type, shape_of
from .legalize import walk
from .values import V, where


def _replace(op, new: V) -> int:
    op.result.replace_all_uses_with(new.value)
    op.erase()
    return 1


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
    """popcnt of any int width, counted in 32 or 64 bits."""
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


_UNSIGNED_IN_I32 = ("stablehlo.divide", "stablehlo.remainder", "stablehlo.shift_right_logical")


def narrow_unsigned_in_i32(module: ir.Module) -> int:
    """divide, remainder and shift_right_logical of ui8/ui16 in i32 on the operands zero-extended, the result
    truncated back: vmvx computes them on the operands sign-extended (ui8 156 / 14 gave 139, 252 >> 7 gave 255).
    A shift by the width or more is 0 (the spec's): the amount is clamped to the width first, which shifts every
    bit out of the widened value as well."""
    count = 0
    for op in list(walk(module.operation)):
        if op.name not in _UNSIGNED_IN_I32:
            continue
        dtype = dtype_of(op.results[0].type)
        if dtype.kind != "u" or dtype.itemsize > 2:
            continue
        with ir.InsertionPoint(op), op.location:
            x, y = (_zero_extended(V(v)).to(np.int32) for v in op.operands)
            if op.name == "stablehlo.shift_right_logical":
                y = y.minimum(8 * dtype.itemsize)
            wide = V(hlo.binary(op.name.removeprefix("stablehlo."), x.value, y.value))
            count += _replace(op, wide.to(dtype))
    return count


F16, F32 = np.dtype(np.float16), np.dtype(np.float32)
# the elementwise ops, select included (a select of bf16 constants puts bf16 constants in the dispatch, which vmvx
# cannot lower: in f32, the converts of the constants fold away); convert has its own rule, complex parts are real
_WIDENED = frozenset(r.name for r in registry.RECORDS.values() if r.elementwise and r.dialect == "stablehlo") - {
    "stablehlo.convert", "stablehlo.real", "stablehlo.imag", "stablehlo.complex"}


def _dtype_or_none(t: ir.Type):
    """A tensor's element dtype; None for tuples, tokens and the like."""
    try:
        return dtype_of(t)
    except TypeError:
        return None


def _widened(value: ir.Value, narrow: np.dtype) -> ir.Value:
    return hlo.convert(value, F32) if dtype_of(value.type) == narrow else value


def _f32_type(t: ir.Type, narrow: np.dtype) -> ir.Type:
    return ir.RankedTensorType.get(shape_of(t), element_type(F32)) if dtype_of(t) == narrow else t


def _bf16_convert_through_f32(x: V, target: np.dtype) -> V:
    """A convert between bf16 and an int, a bool or f64 through f32, the bf16 <-> f32 step by the bits: IREE folds
    two converts into one, which vmvx cannot lower (arith.sitofp i32 -> bf16, arith.extf bf16 -> f64). f32 -> bf16
    rounds to nearest even."""
    if x.dtype.name != "bfloat16":
        bits = x.to(F32).bits()
        rounded = (bits + (0x7FFF + ((bits >> 16) & 1))) >> 16
        quiet_nan = (bits >> 16) | 0x40
        narrow = where((bits & 0x7FFFFFFF) > 0x7F800000, quiet_nan, rounded).to(np.uint16)
        return V(hlo.bitcast_convert(narrow.value, bfloat16()))
    wide = V(hlo.bitcast_convert(((x.bits().to(np.uint32) & 0xFFFF) << 16).value, F32))
    return wide.to(target)


def _is_narrow_reduce(op, narrow: np.dtype) -> bool:
    """A reduce of one bf16 (f16) input by one binary op (add, maximum ...): its init (0, -inf ...) is a bf16
    constant in the dispatch, which vmvx cannot lower."""
    if op.name != "stablehlo.reduce" or len(op.operands) != 2 or _dtype_or_none(op.operands[0].type) != narrow:
        return False
    block = op.regions[0].blocks[0]
    body = [inner.operation for inner in block.operations]
    return (len(body) == 2 and body[0].name.removeprefix("stablehlo.") in hlo.BINARY_OPS
            and set(body[0].operands) == set(block.arguments))


def _reduce_in_f32(op, narrow: np.dtype) -> V:
    """The reduce of f32 inputs whose body rounds each step to bf16, as the spec's bf16 reduce does (f32 holds the
    operands exactly and rounds + and * correctly, so each step is the bf16 op's result); the result rounded back
    is exact."""
    block = op.regions[0].blocks[0]
    body = block.operations[0].operation
    name = body.name.removeprefix("stablehlo.")
    swapped = body.operands[0] == block.arguments[1]          # the body's operands as the block has them

    def step(accumulator, element):
        a, b = (element, accumulator) if swapped else (accumulator, element)
        return [hlo.convert(hlo.convert(hlo.binary(name, a, b), narrow), F32)]
    dimensions = attr_ints(op, "dimensions")
    wide = hlo.reduce([_widened(op.operands[0], narrow)], [_widened(op.operands[1], narrow)], dimensions, step)[0]
    return V(hlo.convert(wide, narrow))


def _narrow_arithmetic_in_f32(module: ir.Module, narrow: np.dtype) -> int:
    count = 0
    for op in [op for op in walk(module.operation) if _is_narrow_reduce(op, narrow)]:   # first: bodies go along
        with ir.InsertionPoint(op), op.location:
            count += _replace(op, _reduce_in_f32(op, narrow))
    for op in list(walk(module.operation)):
        types = [_dtype_or_none(v.type) for v in (*op.operands, *op.results)]
        if narrow not in types:
            continue
        with ir.InsertionPoint(op), op.location:
            if op.name == "stablehlo.convert":   # f16's: f16_converts_by_bits, after
                if narrow.name == "bfloat16" and types[0] != types[1] and F32 not in types:
                    count += _replace(op, _bf16_convert_through_f32(V(op.operands[0]), types[1]))
                continue
            # dots too: vmvx's f16 products extend their operands in the dispatch (arith.extf f16 illegal), and a
            # bf16 result puts a bf16 zero in it ('arith.constant' bf16 illegal: JAX's bf16 matmul). In f32 with one
            # rounding of the result, as XLA accumulates 16-bit products
            if op.name not in _WIDENED and op.name != "stablehlo.dot_general":
                continue
            attributes = {name: op.attributes[name] for name in op.attributes}
            wide = create(op.name, [_f32_type(r.type, narrow) for r in op.results],
                          [_widened(v, narrow) for v in op.operands], attributes)
            for old, new in zip(op.results, wide.results):
                old.replace_all_uses_with(hlo.convert(new, narrow) if dtype_of(old.type) == narrow else new)
        op.erase()
        count += 1
    return count


def bf16_arithmetic_in_f32(module: ir.Module) -> int:
    """Each elementwise op with a bf16 operand, and each reduce of bf16 by one op, computes in f32 and rounds its
    bf16 results once (a reduce: each step); a convert between bf16 and an int, a bool or f64 goes through f32
    (as ml_dtypes converts)."""
    return _narrow_arithmetic_in_f32(module, bfloat16())


def f16_arithmetic_in_f32(module: ir.Module) -> int:
    """As bf16_arithmetic_in_f32 for f16 (vmvx lowers no f16 arithmetic; f32's 24 bits round + - * / sqrt of f16's
    11 correctly too); the f16 <-> f32 converts this makes are f16_converts_by_bits's, which runs after."""
    return _narrow_arithmetic_in_f32(module, F16)


def _f16_to_f32_by_bits(x: V) -> V:
    """Exact: the exponent rebiased (inf and NaN kept), subnormals m 2**-24 as (2**-14 (1 + m / 1024)) - 2**-14."""
    h = x.bits().to(np.uint32)
    sign, exponent, mantissa = (h & 0x8000) << 16, (h >> 10) & 0x1F, h & 0x3FF
    normal = ((exponent + 112) << 23) | (mantissa << 13)
    special = (mantissa << 13) | 0x7F800000
    tiny = V(hlo.bitcast_convert(((mantissa << 13) | (113 << 23)).value, F32)) - 2.0 ** -14
    magnitude = where(exponent == 31, special, where(exponent == 0, tiny.bits(), normal))
    return V(hlo.bitcast_convert((magnitude | sign).value, F32))


def _f32_to_f16_by_bits(x: V) -> V:
    """Rounded to nearest even (F. Giesen's float_to_half_fast3_rtne): overflow to inf, NaN quiet with its top
    payload bits, results below 2**-14 by a float add of 0.5 that rounds the value into the mantissa."""
    f = x.bits()
    sign = (f >> 16) & 0x8000
    a = f & 0x7FFFFFFF
    nan = ((a >> 13) & 0x3FF) | 0x7E00
    huge = where(a > 0x7F800000, nan, a.splat(0x7C00))
    tiny = V(hlo.bitcast_convert(a.value, F32)) + 0.5
    subnormal = tiny.bits() - 0x3F000000
    normal = (a + ((((15 - 127) << 23) + 0xFFF) & 0xFFFFFFFF) + ((a >> 13) & 1)) >> 13   # rebias mod 2**32
    magnitude = where(a >= 0x47800000, huge, where(a < 0x38800000, subnormal, normal))
    return V(hlo.bitcast_convert((magnitude | sign).to(np.uint16).value, F16))


def _f16_constant_as_f32(value: ir.Value) -> V | None:
    """An f16 constant (a select's 0, relu6's 6, floor_divide's 1 ...), or a broadcast of one, as the f32 constant
    it converts to exactly (broadcast the same way); None for any other value. Its bit ops would be a constant
    expression, which IREE evaluates while compiling by JIT-compiling it: 1-3 s of compiler CPU for each (vmvx's
    f16 floor_divide took 6 s to compile, bf16's 0.1 s)."""
    owner = value.owner
    name = getattr(owner, "name", None)
    if name == "stablehlo.broadcast_in_dim":
        source = _f16_constant_as_f32(owner.operands[0])
        if source is None:
            return None
        dims = list(ir.DenseI64ArrayAttr(owner.attributes["broadcast_dimensions"]))
        return V(hlo.broadcast_in_dim(source.value, shape_of(value.type), dims))
    if name != "stablehlo.constant":
        return None
    wide = constant_value(owner).astype(F32)
    bits = wide.view(np.uint32)
    if wide.ndim and (bits == bits.flat[0]).all():   # a splat stays one: the first value, broadcast
        return V(hlo.broadcast_in_dim(hlo.constant(wide.flat[0]), wide.shape, []))
    return V(hlo.constant(wide))


def f16_converts_by_bits(module: ir.Module) -> int:
    """vmvx lowers no f16 <-> f32 convert (arith.extf f16 -> f32 'explicitly marked illegal'): the rewrites that
    compute half floats in f32 (trig_below_f64_by_exact_reduction's tan) made them. Each becomes integer ops on
    the bits (an f16 constant: the f32 constant); f16 to or from another type goes through f32."""
    count = 0
    for op in list(walk(module.operation)):
        if op.name != "stablehlo.convert":
            continue
        source, target = dtype_of(op.operands[0].type), dtype_of(op.results[0].type)
        if (source == F16) == (target == F16):
            continue
        with ir.InsertionPoint(op), op.location:
            x = V(op.operands[0])
            if source == F16:
                wide = _f16_constant_as_f32(op.operands[0])
                wide = _f16_to_f32_by_bits(x) if wide is None else wide
                new = wide if target == F32 else wide.to(target)
            else:
                new = _f32_to_f16_by_bits(x if source == F32 else x.to(F32))
        count += _replace(op, new)
    return count


_FLOATS = {"float16", "bfloat16", "float32", "float64"}
_REDUCING = {"stablehlo.reduce", "stablehlo.reduce_window", "stablehlo.scatter", "stablehlo.select_and_scatter"}


def _float_ops(module: ir.Module, *names):
    """The float ops named, but those that are a reduction's body (which bf16_arithmetic_in_f32 reads as one op)."""
    return [op for op in list(walk(module.operation))
            if op.name in names and dtype_of(op.results[0].type).name in _FLOATS and op.parent.name not in _REDUCING]


def signed_zeros_of_maximum_minimum(module: ir.Module) -> int:
    """vmvx's float maximum and minimum give the first operand when the two compare equal, so maximum(-0.0, +0.0)
    was -0.0 (IEEE's is +0.0): where they compare equal, the AND of their bits (maximum: +0 if either is) or the OR
    (minimum: -0), which is the value itself for any other pair of equal floats; NaN is the op's own business.
    Reduction bodies are left as they are."""
    count = 0
    for op in _float_ops(module, "stablehlo.maximum", "stablehlo.minimum"):
        with ir.InsertionPoint(op), op.location:
            a, b = V(op.operands[0]), V(op.operands[1])
            tied = (a.bits() & b.bits()) if op.name == "stablehlo.maximum" else (a.bits() | b.bits())
            own = V(hlo.binary(op.name.removeprefix("stablehlo."), a.value, b.value))
            count += _replace(op, where(a == b, V(hlo.bitcast_convert(tied.value, a.dtype)), own))
    return count


def signed_round_nearest_even(module: ir.Module) -> int:
    """vmvx's round_nearest_even(-0.5) was +0.0: an integral rounding keeps its operand's sign (IEEE
    roundToIntegral), so the result takes x's sign bit."""
    count = 0
    for op in _float_ops(module, "stablehlo.round_nearest_even"):
        with ir.InsertionPoint(op), op.location:
            x = V(op.operands[0])
            sign = 1 << (8 * x.dtype.itemsize - 1)
            rounded = V(hlo.unary("round_nearest_even", x.value))
            bits = (rounded.bits() & (sign - 1)) | (x.bits() & sign)
            count += _replace(op, V(hlo.bitcast_convert(bits.value, x.dtype)))
    return count


# quirks.py runs AFTER_SPEC after the rewrites of every cpu-like target (accurate_math's, legalize's) and before
# vmvx's NaN-aware compares (the signed-zero rewrites' equal compares get them)
AFTER_SPEC = [popcnt_by_bits, narrow_count_leading_zeros_in_i32, narrow_unsigned_in_i32,
              signed_zeros_of_maximum_minimum, signed_round_nearest_even]
