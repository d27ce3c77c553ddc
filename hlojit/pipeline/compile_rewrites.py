"""Target rewrites of StableHLO patterns IREE 3.13 fails to compile, dies on or folds into something else: the
frontend used to avoid each pattern in the graphs it traced, which left `hj.from_mlir` modules without the fix
and gave every target a workaround only one needed. StableHLO -> StableHLO, listed per target in quirks.py.

- dot_general with an empty contraction (a dimension of length 0 summed over): IREE's compiler dies of SIGFPE,
  taking the Python process with it (llvm-cpu, vmvx, cuda). Every element of the result is an empty sum: zeros.
- reduce_window of i1 (a cumulative any/all): every target fails ("'arith.ori' op requires the same type for
  all operands and results"). The window runs on 0/1 in int32, the body's op on those (the spec's i1 add and
  multiply are OR and AND), and the result is `!= 0`.
- vmvx and llvm-cpu: int -> float -> narrower float (hlojit's int -> bfloat16 goes through float32, as JAX's):
  IREE folds the two converts into one int -> bf16 ('arith.sitofp' (i32) -> bf16), which vmvx cannot lower and
  llvm-cpu lowers to a call of `__truncsfbf2` on CPUs without AVX512-BF16 (Zen 3, found on a 2-core EPYC), which
  IREE's executables cannot link. A barrier keeps the converts apart. cuda compiles the pair as two roundings
  (2**24 + 2**16 + 1 gives 2**24, as JAX; its PTX: cvt.rn.f32.s32, then cvt.rn.bf16x2.f32).
- llvm-cpu: a direct f64 / int / bool -> bf16 convert (a from_mlir module's; the frontend's f64 astype):
  the same libcall for ints, and f64 -> bf16 rounds twice, through f32 (2**24 + 2**16 + 1 gave 2**24, where the
  spec and ml_dtypes round once to 2**24 + 2**17). It becomes f64 -> f32 rounded to odd (by the bits), which
  f32 -> bf16's rounding to nearest even then rounds exactly once; ints and bools go to f64 first (exact up to
  32 bits; an int64 beyond 2**53 rounds there first). vmvx keeps its own (vmvx_rewrites.py: through f32, twice
  rounded): it cannot lower the f64 -> f32 convert inside this rounding's dispatch.
- vmvx: f64 -> int converts ('arith.fptosi' (f64) -> i32 is illegal there): from the bits, in u64 integer ops
  (the mantissa with its implicit bit shifted by the exponent: truncation toward zero), negated for a negative
  x, then the int64 converted to the result's width (wrapping, as the spec's i64 -> narrower convert does).
- a scatter whose updates are a select (hlojit's `.at[]` with traced indices: out-of-range updates made the
  identity): IREE's cuda codegen cannot fuse the select's mask of an 8-bit index into the scatter, and llvm-cpu
  fused it into a scatter that looked slower (2**20 traced indices, scatter-add, medians of 120 calls: 6-8 ms
  apart against 12-15 ms fused in 5 of 6 interleaved runs; noisy, 2 loaded cores). A barrier on the updates
  keeps the select a dispatch of its own, on every target, as the frontend had it.
- a complex128 constant of more than one element (a folded complex eye, a user's table): llvm-cpu's compiler dies of
  SIGFPE packing it into the module's constants (`SizedStorageDenseElementsAttrModel::getStorageSize`, 32
  elements are enough), and cuda cannot build it ("'arith.constant' op failed to verify"). Built from two f64
  constants by stablehlo.complex, it compiles on both (complex64 constants compile as they are). A broadcast
  complex128 scalar likewise: cuda has no 128-bit fill ("'stream.async.splat' op has no builtin for bit width
  128": a loop started from complex128 zeros, zeros concatenated, hlojit's f64 eig). vmvx and
  llvm-cpu's complex pairs rewrite split complex constants anyway, but llvm-cpu leaves a function with a
  complex op it does not know (a complex sort) complex, constants and all.
- llvm-cpu with data tiling (every flag set but the bare fallback and the quick build): a slice or
  dynamic_slice of a larger value that reaches a matmul's operand, or an operand of an elementwise consumer
  the matmul's dispatch takes in, directly or through transposes, reshapes and elementwise ops, fails to compile
  on every x86 CPU IREE knows ("exceeded stack allocation limit of 32768 bytes", "large vector sizes"): IREE
  packs the slice into the matmul's tiled layout inside the matmul's dispatch, reading the whole slice as one
  vector. Found as LU's trailing update (a[k:, k:] - l[k:] @ u, a[:k, k:] @ ...) and a fused QKV projection's
  q/k/v columns, which compiled twice (22 s for solve 256², the data-tiled attempt failing after 10) and then
  ran without data tiling. A barrier after the slice materializes it (one copy) and the matmul compiles tiled.
- llvm-cpu: a reverse of a slice strided along the last dimension (JAX's x[:, 1::2][::-1] and x[:, ::-2] are
  exactly that) fails to compile ("LLVM Translation failed for operation: builtin.unrealized_conversion_cast"),
  whichever dimensions it reverses; a stride along another dimension, or a reverse before the strided slice (the
  frontend's own order), compiles. The reverse moves before the slice, whose starts along the reversed dimensions
  are mirrored: element i of the reversed slice is x[start + stride (n - 1 - i)], which is reverse(x)'s element
  (size - 1 - start - stride (n - 1)) + stride i. A chain of slices counts as the one slice it composes to (the
  symmetric tridiagonal reduction's d, a unit slice of a strided diagonal, reversed for LAPACK's upper form).
- llvm-cpu with data tiling: a dot_general of integer converts of i1 (the frontend's boolean matmul, numpy's
  or-of-ands, sums in int32): IREE folds the extension into the matmul and then fails ("failed to legalize
  unresolved target materialization" of its i1 encoding), so the module compiled twice, the second time without
  data tiling (test_ops' contraction table). A barrier after each convert keeps the matmul's operands integer.
- llvm-cpu with data tiling: an optimizer's update of a weight gradient (Adam's new parameter, first and second
  moments) fused into the matmul that made the gradient exceeds the stack ("exceeded stack allocation limit of
  32768 bytes. Got 58368 bytes"), and the whole module compiled a second time without data tiling (an Adam step
  traced by hj.optim, or exported from JAX). Raising the limit compiles it, but the fused dispatch ran slower than
  the matmul and the update apart (784x256 by 256x512: 3.6 against 2.3 ms on local-sync; a momentum update 2.5
  against 2.1; a bias and relu, one result, 1.9 against 1.9), so a matmul whose result reaches two or more of the
  function's results through elementwise ops (and reshapes, transposes) passes a barrier, placed before the
  result's first use (hj.optim once put it there in the graph itself, for every target).
- llvm-cpu with data tiling: a select on a bool that IREE reads from memory (an argument, or another dispatch's
  result) in the consumer of a matmul, an attention mask as JAX writes it (`where(mask, logits, -big)`): IREE packs
  the bool inside the matmul's dispatch and fails ("linalg.pack ... padding_value has 'i8' but got 'i1'"), and the
  whole module compiled without data tiling. The matmul's result passes a barrier before its first use (hj.nn's
  attention once turned its mask into floats behind a barrier). A mask computed from iotas (causal) is computed
  in the consumer's dispatch and needs none.
- llvm-cpu with data tiling: a matmul whose result a `stablehlo.complex` reads (through elementwise ops): the
  real DFT products of an FFT llvm-cpu cannot lower, in a module whose native FFT keeps complex_pairs.py from
  running (a 2-D f32 FFT beside a 1-D one of four points): IREE fuses the complex op into the matmul's dispatch
  and fails ("'vector.transfer_read' op requires valid padding vector elemental type" of a complex<f32>
  vector), and the whole module compiled a second time without data tiling. The matmul's result passes a barrier
  before its first use.
- llvm-cpu, every flag set: a dot_general whose operand is a splat constant spread or moved (a gather, slice,
  broadcast, reshape, transpose, reverse or convert of one), as the zero imaginary part of a complex identity
  permuted by LU's pivots in complex_pairs' real products (`inv` of a 64 x 64 complex128 matrix): IREE folds the
  operand into a `linalg.fill` inside the matmul's dispatch and fails ("One or more operations with large vector
  sizes (32768 bytes)"), with data tiling and without, so the whole compile failed. A barrier on the operand makes
  it a buffer the matmul reads (one fill dispatch; the products stay those the spec asks, NaN times zero included).
- cuda: a gather from a slice (through reshapes) of another tensor, as a column of a matrix indexed (`a[:, j][i]`,
  `take(a[:, :1], i)`; hlojit's LU solve of `solve(a, a[:, :1])` gathers its right-hand side's rows): IREE fuses
  the strided slice into the gather's dispatch and fails ("LLVM Translation failed for operation:
  builtin.unrealized_conversion_cast", f32 and f64, 8 to 64 rows). A barrier on the gather's operand makes the
  slice a copy of its own.
"""
from __future__ import annotations

import numpy as np
from iree.compiler import ir

from ..dialects import registry, stablehlo as hlo
from ..dialects.build import create, scalar_type
from ..dialects.types import (attr_ints, constant_value, dot_dimensions, dtype_of, element_type, is_splat_constant,
                              shape_of)
from .legalize import barrier_before_first_use, behind_barrier, producer, walk
from .values import V, where


def _ops_named(module: ir.Module, name: str) -> list:
    """The module's ops of this name, listed first: the rewrites erase what they replace."""
    return [op for op in walk(module.operation) if op.name == name]


def _zeros(value_type) -> ir.Value:
    shape, dtype = shape_of(value_type), dtype_of(value_type)
    return hlo.broadcast_in_dim(hlo.constant(np.zeros((), dtype)), shape, [])


def empty_contractions_as_zeros(module: ir.Module) -> int:
    count = 0
    for op in _ops_named(module, "stablehlo.dot_general"):
        lhs_contract = dot_dimensions(op)[2]
        if not any(shape_of(op.operands[0].type)[d] == 0 for d in lhs_contract):
            continue
        with ir.InsertionPoint(op), op.location:
            op.result.replace_all_uses_with(_zeros(op.result.type))
        op.erase()
        count += 1
    return count


# the body's op on i1 -> the same op on 0/1 in int32 (or/and/xor/max/min stay in {0, 1})
_BOOL_BODY_IN_INT32 = {"stablehlo.or": "or", "stablehlo.and": "and", "stablehlo.xor": "xor",
                       "stablehlo.add": "or", "stablehlo.multiply": "and",
                       "stablehlo.maximum": "maximum", "stablehlo.minimum": "minimum"}


def _single_op_body(op) -> str | None:
    """The int32 op of a reduce_window body that applies one binary op to its two arguments, else None."""
    block = op.regions[0].blocks[0]
    ops = [inner.operation for inner in block.operations]
    if len(ops) != 2 or ops[0].name not in _BOOL_BODY_IN_INT32 or ops[1].name != "stablehlo.return":
        return None
    if {v for v in ops[0].operands} != set(block.arguments) or ops[1].operands[0] != ops[0].result:
        return None
    return _BOOL_BODY_IN_INT32[ops[0].name]


def bool_reduce_window_in_int32(module: ir.Module) -> int:
    count = 0
    for op in _ops_named(module, "stablehlo.reduce_window"):
        if len(op.operands) != 2 or dtype_of(op.operands[0].type) != np.bool_:
            continue
        body = _single_op_body(op)
        if body is None:
            continue
        with ir.InsertionPoint(op), op.location:
            x, init = (hlo.convert(v, np.int32) for v in op.operands)
            result = ir.RankedTensorType.get(shape_of(op.result.type), element_type(np.int32))
            attributes = {name: op.attributes[name] for name in op.attributes}
            window = create("stablehlo.reduce_window", [result], [x, init], attributes, regions=1)
            block = window.regions[0].blocks.append(scalar_type(init), scalar_type(init))
            with ir.InsertionPoint(block):
                create("stablehlo.return", [], [hlo.binary(body, *block.arguments)])
            op.result.replace_all_uses_with(hlo.compare(window.result, _zeros(result), "NE"))
        op.erase()
        count += 1
    return count


def _is_float(dtype) -> bool:
    return dtype.kind == "f" or dtype.name == "bfloat16"


def double_rounding_kept(module: ir.Module) -> int:
    count = 0
    for op in _ops_named(module, "stablehlo.convert"):
        middle = op.operands[0]
        source = producer(middle)
        if source is None or source.name != "stablehlo.convert":
            continue
        start, via, end = (dtype_of(v.type) for v in (source.operands[0], middle, op.result))
        if start.kind not in "iub" or not (_is_float(via) and _is_float(end)) or end.itemsize >= via.itemsize:
            continue
        with ir.InsertionPoint(op), op.location:
            op.operands[0] = hlo.optimization_barrier([middle])[0]
        count += 1
    return count


def _f64_to_f32_rounded_to_odd(x: V) -> V:
    """x (f64) as the f32 next to it whose last mantissa bit is odd where x is not exact in f32 (round to odd):
    rounding that to any float of at most 22 mantissa bits is the single rounding of x (overflow goes to f32's
    largest, underflow to its smallest subnormal, which still round to inf and 0). NaN and exact values pass."""
    y = x.to(np.float32)
    back = y.to(np.float64)
    bits = y.bits()
    inexact = (back != x) & (x == x)
    even = (bits & 1) == 0
    odd = where(back.abs() > x.abs(), bits - 1, bits + 1)
    return V(hlo.bitcast_convert(where(inexact & even, odd, bits).value, np.dtype(np.float32)))


def bf16_converts_rounded_once(module: ir.Module) -> int:
    count = 0
    for op in _ops_named(module, "stablehlo.convert"):
        source, target = dtype_of(op.operands[0].type), dtype_of(op.result.type)
        if target.name != "bfloat16" or not (source == np.float64 or source.kind in "iub"):
            continue
        with ir.InsertionPoint(op), op.location:
            narrow = _f64_to_f32_rounded_to_odd(V(op.operands[0]).to(np.float64))
            kept = hlo.optimization_barrier([narrow.value])[0]
            op.result.replace_all_uses_with(hlo.convert(kept, target))
        op.erase()
        count += 1
    return count


def _truncated_by_bits(x: V) -> V:
    """A finite f64 x truncated toward zero, as int64 (|x| < 2**63)."""
    bits = x.bits()
    exponent = ((bits >> 52) & 0x7FF).to(np.int64) - 1075        # x = mantissa * 2**exponent
    mantissa = (bits & ((1 << 52) - 1)) | (1 << 52)               # zeros and subnormals: shifted out below
    left = mantissa << exponent.maximum(0).minimum(63).to(np.uint64)
    right = mantissa >> (-exponent).maximum(0).minimum(63).to(np.uint64)
    magnitude = where(exponent >= 0, left, right).to(np.int64)
    return where(x.signbit(), -magnitude, magnitude)


def f64_to_int_by_bits(module: ir.Module) -> int:
    count = 0
    for op in _ops_named(module, "stablehlo.convert"):
        target = dtype_of(op.result.type)
        if dtype_of(op.operands[0].type) != np.float64 or target.kind not in "iu":
            continue
        with ir.InsertionPoint(op), op.location:
            op.result.replace_all_uses_with(_truncated_by_bits(V(op.operands[0])).to(target).value)
        op.erase()
        count += 1
    return count


def scatter_selected_updates_apart(module: ir.Module) -> int:
    count = 0
    for op in _ops_named(module, "stablehlo.scatter"):
        inputs = (len(op.operands) - 1) // 2
        for k in range(inputs + 1, len(op.operands)):
            updates = op.operands[k]
            source = producer(updates)
            if source is not None and source.name == "stablehlo.select":
                with ir.InsertionPoint(op), op.location:
                    op.operands[k] = hlo.optimization_barrier([updates])[0]
                count += 1
    return count


# every IREE target, before the rewrites that read dot_generals, reduce_windows or scatters
def complex128_constants_from_parts(module: ir.Module) -> int:
    count = 0
    for op in _ops_named(module, "stablehlo.constant"):
        if dtype_of(op.result.type) != np.complex128:
            continue
        value = constant_value(op)
        if value.size <= 1:      # a scalar: its broadcasts, each from the two f64 scalars
            count += _complex128_broadcasts_from_parts(op, value)
            continue
        with ir.InsertionPoint(op), op.location:
            op.result.replace_all_uses_with(hlo.complex(hlo.constant(np.ascontiguousarray(value.real)),
                                                        hlo.constant(np.ascontiguousarray(value.imag))))
        op.erase()
        count += 1
    return count


def _complex128_broadcasts_from_parts(scalar, value: np.ndarray) -> int:
    """Each broadcast of a complex128 scalar constant as stablehlo.complex of the broadcasts of its parts."""
    count = 0
    for use in list(scalar.result.uses):
        user = use.owner.operation
        if user.name != "stablehlo.broadcast_in_dim":
            continue
        shape, dims = shape_of(user.results[0].type), attr_ints(user, "broadcast_dimensions")
        with ir.InsertionPoint(user), user.location:
            parts = [hlo.broadcast_in_dim(hlo.constant(np.array(part)), shape, dims)
                     for part in (value.real, value.imag)]
            user.results[0].replace_all_uses_with(hlo.complex(*parts))
        user.erase()
        count += 1
    if next(iter(scalar.result.uses), None) is None:
        scalar.erase()
    return count


def _slice_chain(sliced):
    """(x, start, strides, slices) of a stablehlo.slice of slices of x, composed as one slice of x (the slices
    from the last, whose result the caller has, back to the first)."""
    x, slices = sliced.operands[0], [sliced]
    start, strides = attr_ints(sliced, "start_indices"), attr_ints(sliced, "strides")
    inner = producer(x)
    while inner is not None and inner.name == "stablehlo.slice":
        inner_start, inner_strides = attr_ints(inner, "start_indices"), attr_ints(inner, "strides")
        start = [a + stride * b for a, stride, b in zip(inner_start, inner_strides, start)]
        strides = [a * b for a, b in zip(inner_strides, strides)]
        x, slices, inner = inner.operands[0], slices + [inner], producer(inner.operands[0])
    return x, start, strides, slices


def reverses_before_strided_slices(module: ir.Module) -> int:
    count = 0
    for op in _ops_named(module, "stablehlo.reverse"):
        sliced = producer(op.operands[0])
        if sliced is None or sliced.name != "stablehlo.slice":
            continue
        x, start, strides, slices = _slice_chain(sliced)     # a unit slice of a strided one (tridiagonal's d[:n])
        if strides[-1:] in ([], [1]):
            continue
        sizes, out = shape_of(x.type), shape_of(op.result.type)
        dimensions = attr_ints(op, "dimensions")
        for d in dimensions:
            start[d] = sizes[d] - 1 - start[d] - strides[d] * (out[d] - 1) if out[d] else 0
        limit = [lo + st * (n - 1) + 1 if n else lo for lo, st, n in zip(start, strides, out)]
        with ir.InsertionPoint(op), op.location:
            op.result.replace_all_uses_with(hlo.slice(hlo.reverse(x, dimensions), start, limit, strides))
        op.erase()
        for dead in slices:        # the last first: each one's use was the one before
            if list(dead.results[0].uses):
                break
            dead.erase()
        count += 1
    return count


_SLICES = registry.op_set({"stablehlo.slice", "stablehlo.dynamic_slice"}, "slices a matmul's dispatch packs")
_ELEMENTWISE = frozenset(registry.names(elementwise=True))
_SEE_THROUGH = registry.op_set({"stablehlo.transpose", "stablehlo.reshape"}, "ops between a slice and a matmul") \
    | _ELEMENTWISE


def _slices_behind(value: ir.Value, found: dict, seen: set) -> None:
    """The slice ops `value` comes from through _SEE_THROUGH ops, into `found` (keyed by identity, in order)."""
    op = producer(value)
    if op is None or op in seen:
        return
    seen.add(op)
    if op.name in _SLICES:
        found.setdefault(op, None)
    elif op.name in _SEE_THROUGH:
        for operand in op.operands:
            _slices_behind(operand, found, seen)


def _fused_consumer_operands(result: ir.Value, seen: set):
    """The other operands of the elementwise ops that consume a matmul's result (and theirs, onwards): what
    IREE fuses into the matmul's dispatch and packs there."""
    for use in result.uses:
        consumer = use.owner.operation
        if consumer.name in _ELEMENTWISE and consumer not in seen:
            seen.add(consumer)
            yield from (v for v in consumer.operands if v != result)
            yield from _fused_consumer_operands(consumer.results[0], seen)


def sliced_matmul_inputs_materialized(module: ir.Module) -> int:
    found: dict = {}
    for op in _ops_named(module, "stablehlo.dot_general"):
        inputs = list(op.operands) + list(_fused_consumer_operands(op.result, set()))
        seen: set = set()
        for value in inputs:
            _slices_behind(value, found, seen)
    for op in found:
        behind_barrier(op)
    return len(found)


def _converted_bool(value: ir.Value) -> bool:
    """Whether value is an integer convert of an i1 (the frontend's boolean matmul sums in int32)."""
    op = producer(value)
    return op is not None and op.name == "stablehlo.convert" and dtype_of(op.operands[0].type) == np.bool_ \
        and np.dtype(dtype_of(value.type)).kind in "iu"


def bool_dots_behind_barriers(module: ir.Module) -> int:
    count = 0
    for op in _ops_named(module, "stablehlo.dot_general"):
        if not any(_converted_bool(v) for v in op.operands):
            continue
        with ir.InsertionPoint(op), op.location:
            for k, v in enumerate(list(op.operands)):
                if _converted_bool(v):
                    op.operands[k] = hlo.optimization_barrier([v])[0]
        count += 1
    return count


def _uses_reached(value: ir.Value, seen: set):
    """Every use of `value`, and of what consumes it through elementwise ops, reshapes and transposes (what IREE
    fuses into the dispatch that makes value)."""
    for use in value.uses:
        yield use
        consumer = use.owner.operation
        if consumer.name in _SEE_THROUGH and consumer not in seen:
            seen.add(consumer)
            for result in consumer.results:
                yield from _uses_reached(result, seen)


def _results_reached(value: ir.Value) -> set:
    """The positions of the function results that `value` reaches through what IREE fuses with it."""
    return {use.operand_number for use in _uses_reached(value, set()) if use.owner.operation.name == "func.return"}


def _matmuls_apart(module: ir.Module, needs_barrier) -> int:
    """Each matmul whose result `needs_barrier(result)` reaches its uses through a barrier (before the first)."""
    matmuls = [op for op in _ops_named(module, "stablehlo.dot_general") if needs_barrier(op.result)]
    for op in matmuls:
        barrier_before_first_use(op.result)
    return len(matmuls)


def matmul_updates_apart(module: ir.Module) -> int:
    return _matmuls_apart(module, lambda result: len(_results_reached(result)) >= 2)


_BOOL_SOURCES_SEEN_THROUGH = _SEE_THROUGH | registry.op_set({"stablehlo.broadcast_in_dim"},
                                                              "ops between a traced bool and a matmul's consumer")


def _traced_bool_behind(value: ir.Value, seen: set) -> bool:
    """Whether value comes (through elementwise ops, reshapes, transposes, broadcasts) from a bool tensor IREE
    reads from memory: an argument, or the result of an op that makes its own dispatch (not a constant, iota or
    compare of such, which the consumer's dispatch computes in place, nor a 0-d bool, read as a scalar)."""
    op = producer(value)
    if op is None or op.name not in _BOOL_SOURCES_SEEN_THROUGH:     # a 0-d bool (eig's flags) is a scalar load
        return dtype_of(value.type) == np.bool_ and int(np.prod(shape_of(value.type))) > 1 and \
            (op is None or op.name not in ("stablehlo.constant", "stablehlo.iota"))
    if op in seen:
        return False
    seen.add(op)
    return any(_traced_bool_behind(operand, seen) for operand in op.operands)


def _reads_a_traced_bool(result: ir.Value) -> bool:
    seen: set = set()
    return any(_traced_bool_behind(v, seen) for v in _fused_consumer_operands(result, set()))


def traced_bools_apart_from_matmuls(module: ir.Module) -> int:
    return _matmuls_apart(module, _reads_a_traced_bool)


def complex_results_apart_from_matmuls(module: ir.Module) -> int:
    return _matmuls_apart(module, lambda result: any(use.owner.operation.name == "stablehlo.complex"
                                                     for use in _uses_reached(result, set())))


_SPLAT_KEEPING = registry.op_set({"stablehlo.broadcast_in_dim", "stablehlo.reshape", "stablehlo.transpose",
                                 "stablehlo.slice", "stablehlo.dynamic_slice", "stablehlo.gather", "stablehlo.reverse",
                                 "stablehlo.convert"}, "ops whose result is a splat when their first operand is")


def _spread_splat(value: ir.Value) -> bool:
    """Whether value is a splat constant, or one moved or spread by _SPLAT_KEEPING ops (their first operand)."""
    op = producer(value)
    while op is not None and op.name in _SPLAT_KEEPING:
        op = producer(op.operands[0])
    return is_splat_constant(op)


def splat_matmul_operands_materialized(module: ir.Module) -> int:
    count = 0
    for op in _ops_named(module, "stablehlo.dot_general"):
        for k, value in enumerate(list(op.operands)):
            if _spread_splat(value) and int(np.prod(shape_of(value.type))) > 1:
                with ir.InsertionPoint(op), op.location:
                    op.operands[k] = hlo.optimization_barrier([value])[0]
                count += 1
    return count


def sliced_gather_operands_materialized(module: ir.Module) -> int:
    count = 0
    for op in _ops_named(module, "stablehlo.gather"):
        source = producer(op.operands[0])
        while source is not None and source.name == "stablehlo.reshape":
            source = producer(source.operands[0])
        if source is not None and source.name == "stablehlo.slice":
            with ir.InsertionPoint(op), op.location:
                op.operands[0] = hlo.optimization_barrier([op.operands[0]])[0]
            count += 1
    return count


ALL_TARGETS = [empty_contractions_as_zeros, bool_reduce_window_in_int32, scatter_selected_updates_apart,
               complex128_constants_from_parts]
# before vmvx's bf16 and float -> int rewrites, which read converts
VMVX = [double_rounding_kept, f64_to_int_by_bits]
CPU = [double_rounding_kept, bf16_converts_rounded_once, reverses_before_strided_slices]
CUDA = [sliced_gather_operands_materialized]     # after legalize's, which rebuild gathers
# llvm-cpu, every flag set, after complex_pairs (whose real products of a complex matmul make such operands)
CPU_AFTER_PAIRS = [splat_matmul_operands_materialized]
# llvm-cpu's data-tiled flag sets only (quirks.apply asks targets.data_tiled), after every rewrite that builds matmuls
CPU_DATA_TILING = [sliced_matmul_inputs_materialized, bool_dots_behind_barriers, matmul_updates_apart,
                   traced_bools_apart_from_matmuls, complex_results_apart_from_matmuls]
