"""Target rewrites that give any StableHLO module (traced, `from_mlir`, loaded) the spec's meaning on IREE 3.13,
where IREE's lowering of an op disagrees with the spec. StableHLO -> StableHLO, run by `quirks.apply` just
before compiling, on the compiler's copy of the module.

- boolean add/multiply/maximum/minimum: IREE adds i1 as XOR; the spec's i1 arithmetic is OR/AND.
- float sign: llvm-cpu's copysign flushes subnormals (sign(1e-40) gave 0), vmvx cannot lower it: from the bits.
- floor/ceil of subnormals: IREE's CPU code flushes them to zero first (floor(-1e-40) gave -0, not -1): the
  sign and the "tiny" test are read from the bits, in integers.
- float power: llvm-cpu's and cuda's pow is exp(y log x), NaN for every negative base and for 1 ** inf: the power of
  |x| with the sign and C99's exact cases set around it.
- reduce_precision: IREE's gets zero mantissa bits wrong; this is XLA's algorithm in integer ops.
- gather: the spec clamps each start so the slice fits in the operand; IREE reads out of bounds: the starts
  are clamped before the gather.
- CHLO ops on llvm-cpu and vmvx: expanded into StableHLO before every other rewrite (IREE expands them after).
- chlo.square (what hj.from_mlir makes of a newer module's stablehlo.square): x * x, and on complex numbers
  ((re - im)(re + im), 2 re im) from the parts, before complex_pairs.py (IREE's own complex<f64> lowering of it
  kills the compiler with SIGFPE, and its x * x overflows where the spec's real part does not).
- float remainder: f64's lost the sign of zero results and flushed subnormal dividends: x where |x| < |y|, else
  the sign of x set on the bits.
- expm1, log1p, tan of subnormals (IREE's CPU code flushes them to zero): x itself; cbrt of subnormals from the
  integer mantissa.
- integer divide/remainder by 0, and INT_MIN by -1: the spec leaves the result to the implementation; IREE
  divides as the machine does (x86 traps on operands known at run time, the folder returns arbitrary values on
  constants). hlojit's result is 0 on every target, as on the reference backend and openxla's interpreter.
"""
from __future__ import annotations

import numpy as np
from iree.compiler import ir, passmanager

from ..dialects import stablehlo as hlo
from ..dialects.types import attr_ints, dimension_numbers, dtype_of, finfo, shape_of
from .values import V, where

_UNSIGNED = {"float16": np.uint16, "bfloat16": np.uint16, "float32": np.uint32, "float64": np.uint64}
_LAYOUT = {"float16": (5, 10), "bfloat16": (8, 7), "float32": (8, 23), "float64": (11, 52)}
_BOOL_AS = {"stablehlo.add": "or", "stablehlo.multiply": "and", "stablehlo.maximum": "or",
            "stablehlo.minimum": "and"}


# Executables (a hand-written kernel's, matmul_kernel.py and the others; IREE's own): their ops are codegen's, which no
# StableHLO rewrite reads. Walked into, they were most of a module once its kernels were in: ResNet-18's training step
# grew from ~2.7k ops to ~12k, and the rewrites after matmuls_by_kernel walked it ~20 times (0.5 of 1.4 s).
_OPAQUE = frozenset({"hal.executable.source", "hal.executable", "flow.executable"})


def walk(op):
    """Every op nested in `op`, depth first (a list per block: a rewrite may erase what it has seen); an executable
    is listed, not entered (_OPAQUE). The regions are asked for before the name: most ops have none, and `.name`
    builds a string (the quirks walk each module ~60 times: 2.7k ops of a factorization 13 -> 6 ms a walk)."""
    for region in op.regions:
        for block in region.blocks:
            for inner in list(block.operations):
                inner = inner.operation
                yield inner
                if inner.regions and inner.name not in _OPAQUE:
                    yield from walk(inner)


def producer(value: ir.Value):
    """The op that defines `value` (None for a block argument)."""
    owner = value.owner
    return None if isinstance(owner, ir.Block) else owner.operation


def behind_barrier(op) -> None:
    """op's results pass an optimization barrier right after it: every use but the barrier's reads its output
    (what IREE must not fuse across, materialized once)."""
    results = list(op.results)
    with ir.InsertionPoint.after(op), op.location:
        kept = hlo.optimization_barrier(results)
    for result, value in zip(results, kept):
        result.replace_all_uses_with(value)
    barrier = kept[0].owner.operation
    for k, result in enumerate(results):     # the barrier itself still reads op
        barrier.operands[k] = result


def barrier_before_first_use(value: ir.Value) -> None:
    """Every use of value reads it through an optimization barrier placed right before the first op that uses it
    (in its block's order): a barrier right after the producer, in the middle of a backward pass, cost IREE host
    syncs (compile_rewrites.matmul_updates_apart: the MLP's Adam step 7 against 2)."""
    users = {use.owner.operation for use in value.uses}
    first = next((inner.operation for inner in value.owner.operation.block.operations if inner.operation in users),
                 None)
    if first is None:     # every use is nested in a region (a loop's body): right after the producer
        return behind_barrier(value.owner.operation)
    with ir.InsertionPoint(first), first.location:
        kept = hlo.optimization_barrier([value])[0]
    value.replace_all_uses_with(kept)
    kept.owner.operation.operands[0] = value


def _ops_named(module: ir.Module, *names: str, floats_only: bool = False):
    """The module's ops of these names (of a float result type, with floats_only), listed first: the rewrites
    erase what they replace."""
    for op in list(walk(module.operation)):
        if op.name in names and (not floats_only or _is_float(dtype_of(op.results[0].type))):
            yield op


def replace_each(module: ir.Module, wanted, build) -> int:
    """Each op of `module` that wanted(op) holds for (its only result) replaced by build(op), the value it builds at
    the op's place and location; how many."""
    ops = [op for op in walk(module.operation) if wanted(op)]
    for op in ops:
        with ir.InsertionPoint(op), op.location:
            op.results[0].replace_all_uses_with(build(op))
        op.erase()
    return len(ops)


def _replace(op, new: ir.Value) -> int:
    op.result.replace_all_uses_with(new)
    op.erase()
    return 1


def _splat(value, dtype, shape) -> ir.Value:
    return hlo.broadcast_in_dim(hlo.constant(np.array(value, dtype)), shape, [])


def _is_float(dtype) -> bool:
    return dtype.name in _UNSIGNED


def _chlo_ops(module: ir.Module) -> int:
    return sum(op.name.startswith("chlo.") for op in walk(module.operation))


def chlo_as_stablehlo(module: ir.Module) -> int:
    """Every CHLO op the pass expands (tan, bessel_i1e, zeta, polygamma, erf, broadcast_* ...) as StableHLO, by the
    pass IREE runs itself (chlo-legalize-to-stablehlo), but before the other rewrites: IREE expands them after,
    so their expansions' ops missed every fix (on llvm-cpu f64 polygamma's sin and cos did not link, f32
    polygamma(2, -1.5) was NaN; on vmvx bessel_i1e's sign, tan, polygamma's remainder and sine were wrong)."""
    before = _chlo_ops(module)
    if before:
        passmanager.PassManager.parse("builtin.module(func.func(chlo-legalize-to-stablehlo))").run(module.operation)
    return before - _chlo_ops(module)


def calls_inlined(module: ir.Module) -> int:
    """Every func.call and stablehlo.composite replaced by its callee's (decomposition's) ops, and the private
    functions left uncalled dropped (IREE inlines them itself, later): the rewrites work function by function,
    so a complex value crossing a call kept its function complex on vmvx, which cannot load a complex element
    (JAX's jnp.fft.fft(x) of real x is a private @fft function returning complex<f64>, whose caller's abs did
    not compile there). No canonicalization."""
    return composites_as_calls(module)


def composites_as_calls(module: ir.Module, keep=lambda op: False) -> int:
    """calls_inlined, but the composites `keep(op)` holds stay (kernels.py's, on llvm-cpu): each other
    composite becomes a call of its decomposition first (the spec's meaning), then every call is inlined."""
    for op in [op for op in walk(module.operation) if op.name == "stablehlo.composite" and not keep(op)]:
        call_instead(op, op.attributes["decomposition"])
    calls = sum(op.name == "func.call" for op in walk(module.operation))
    if calls:
        inline_calls(module)
    return calls


def call_instead(op, callee: ir.Attribute, operands=None, location=None):
    """Replace `op` by a func.call of the function `callee` (a symbol reference) on `operands` (default: its own),
    at `location` (default: op's; a call standing for several ops names them all, which explain reads)."""
    with ir.InsertionPoint(op), location or op.location:
        call = ir.Operation.create("func.call", results=[r.type for r in op.results],
                                   operands=list(op.operands if operands is None else operands),
                                   attributes={"callee": callee})
    for old, new in zip(op.results, call.results):
        old.replace_all_uses_with(new)
    op.erase()


def call_of_source(module: ir.Module, op, symbol: str, source, operands=None, location=None) -> None:
    """Replace `op` by a call of the function `symbol` (on `operands`, default: op's own), parsing `source(symbol)`
    (a module text holding that function and what it dispatches) into `module`, before its first op, the first time
    `module` lacks it: a hand-written kernel's function, once per shape however many ops call it. What the source
    holds under a symbol the module has already (an executable two kernels dispatch: a packing of B) is not added
    again: a symbol names one text."""
    def name(o):
        return ir.StringAttr(o.attributes["sym_name"]).value if "sym_name" in o.attributes else None
    present = {name(o) for o in module.body.operations} - {None}
    if symbol not in present:
        parsed = ir.Module.parse(source(symbol), context=module.context)
        for inner in list(parsed.body.operations):
            if name(inner) not in present:
                inner.operation.move_before(module.body.operations[0].operation)
    call_instead(op, ir.FlatSymbolRefAttr.get(symbol), operands, location)


def erase_unused(value: ir.Value, names: frozenset) -> None:
    """Erase the op defining `value` where it is one of `names` (pure ops) and none of its results is used any more,
    then so the ops defining its operands: what only a replaced op read. The ops are found first and erased after,
    users before producers: one op reached twice (a mean read by two broadcasts) is never touched once erased."""
    def dead(op, erased) -> bool:
        return op.name in names and all(any(use.owner.operation == e for e in erased)
                                        for result in op.results for use in result.uses)
    root = producer(value)
    if root is None or not dead(root, []):
        return
    erased, pending = [root], list(root.operands)
    while pending:
        op = producer(pending.pop())
        if op is not None and not any(op == e for e in erased) and dead(op, erased):
            erased.append(op)
            pending.extend(op.operands)
    for op in erased:
        op.erase()


def inline_calls(module: ir.Module):
    """Every func.call inlined, and the private functions left uncalled dropped. No canonicalization."""
    passmanager.PassManager.parse("builtin.module(inline{default-pipeline=''}, symbol-dce)",
                                  context=module.context).run(module.operation)


def bool_arithmetic_as_logic(module: ir.Module) -> int:
    count = 0
    for op in _ops_named(module, *_BOOL_AS):
        if dtype_of(op.results[0].type) == np.bool_:
            with ir.InsertionPoint(op), op.location:
                count += _replace(op, hlo.binary(_BOOL_AS[op.name], op.operands[0], op.operands[1]))
    return count


def _bits(x: ir.Value):
    """(unsigned bits of x, its dtype, shape, (exponent bits, mantissa bits), unsigned dtype)."""
    dtype = dtype_of(x.type)
    unsigned = np.dtype(_UNSIGNED[dtype.name])
    return hlo.bitcast_convert(x, unsigned), dtype, shape_of(x.type), _LAYOUT[dtype.name], unsigned


def floor_ceil_of_subnormals(module: ir.Module) -> int:
    """floor(s) of a subnormal s is -1 below zero and +0 above; ceil(s) is -0 below and 1 above. Everything
    else (zeros included) keeps IREE's floor and ceil."""
    count = 0
    for op in _ops_named(module, "stablehlo.floor", "stablehlo.ceil", floats_only=True):
        x = op.operands[0]
        with ir.InsertionPoint(op), op.location:
            bits, dtype, shape, (_, mantissa), unsigned = _bits(x)
            width = 8 * unsigned.itemsize
            magnitude = hlo.binary("and", bits, _splat((1 << (width - 1)) - 1, unsigned, shape))
            subnormal = hlo.binary("and",
                                   hlo.compare(magnitude, _splat(1 << mantissa, unsigned, shape), "LT"),
                                   hlo.compare(magnitude, _splat(0, unsigned, shape), "NE"))
            negative = hlo.compare(hlo.bitcast_convert(bits, np.dtype(f"i{unsigned.itemsize}")),
                                   _splat(0, np.dtype(f"i{unsigned.itemsize}"), shape), "LT")
            if op.name == "stablehlo.floor":
                tiny = hlo.select(negative, _splat(-1.0, dtype, shape), _splat(0.0, dtype, shape))
            else:
                # -0.0 as x's sign bit, from the run-time bits: vmvx made the select of constant -0.0 and 1.0 +0.0
                sign_only = hlo.binary("and", bits, _splat(1 << (width - 1), unsigned, shape))
                one = _splat(int(np.array(1, dtype).view(unsigned)), unsigned, shape)
                tiny = hlo.bitcast_convert(hlo.select(negative, sign_only, one), dtype)
            rounded = hlo.unary(op.name.removeprefix("stablehlo."), x)
            count += _replace(op, hlo.select(subnormal, tiny, rounded))
    return count


def _is_inf(x: ir.Value, dtype, shape) -> ir.Value:
    return hlo.compare(hlo.unary("abs", x), _splat(np.inf, dtype, shape), "EQ")


def power_by_magnitude(module: ir.Module) -> int:
    """x ** y (C99's pow, numpy's) as |x| ** y, negated for a negative x (or -0) and odd integer y, NaN for a
    finite x < 0 and a non-integer y; x ** 0, 1 ** y and (-1) ** +-inf are 1, whatever the other operand."""
    count = 0
    for op in _ops_named(module, "stablehlo.power", floats_only=True):
        x, y = op.operands
        with ir.InsertionPoint(op), op.location:
            dtype, shape = dtype_of(x.type), shape_of(x.type)
            one, zero = _splat(1.0, dtype, shape), _splat(0.0, dtype, shape)
            p = hlo.binary("power", hlo.unary("abs", x), y)
            whole = hlo.compare(hlo.unary("floor", y), y, "EQ")          # inf counts: (-2) ** inf is inf
            half = hlo.binary("multiply", y, _splat(0.5, dtype, shape))
            odd = hlo.binary("and", whole, hlo.compare(hlo.unary("floor", half), half, "NE"))
            bits, _, _, _, unsigned = _bits(x)
            signed = np.dtype(f"i{unsigned.itemsize}")
            negative = hlo.compare(hlo.bitcast_convert(bits, signed), _splat(0, signed, shape), "LT")
            sign_applies = hlo.binary("and", hlo.binary("and", negative, hlo.compare(x, x, "EQ")), odd)
            p = hlo.select(sign_applies, hlo.unary("negate", p), p)
            finite_below_zero = hlo.binary("and", hlo.compare(x, zero, "LT"),
                                           hlo.unary("not", _is_inf(x, dtype, shape)))
            p = hlo.select(hlo.binary("and", finite_below_zero, hlo.unary("not", whole)),
                           _splat(np.nan, dtype, shape), p)
            minus_one_to_inf = hlo.binary("and", hlo.compare(x, _splat(-1.0, dtype, shape), "EQ"),
                                          _is_inf(y, dtype, shape))
            exact_one = hlo.binary("or", hlo.binary("or", hlo.compare(y, zero, "EQ"), hlo.compare(x, one, "EQ")),
                                   minus_one_to_inf)
            count += _replace(op, hlo.select(exact_one, one, p))
    return count


def reduce_precision_by_bits(module: ir.Module) -> int:
    count = 0
    for op in _ops_named(module, "stablehlo.reduce_precision"):
        x = op.operands[0]
        exponent_bits = ir.IntegerAttr(op.attributes["exponent_bits"]).value
        mantissa_bits = ir.IntegerAttr(op.attributes["mantissa_bits"]).value
        with ir.InsertionPoint(op), op.location:
            bits, dtype, shape, (source_exponent, source_mantissa), u = _bits(x)
            width = 8 * u.itemsize

            def k(value):
                return _splat(value, u, shape)
            if mantissa_bits < source_mantissa:
                drop = source_mantissa - mantissa_bits
                last = hlo.binary("shift_right_logical", hlo.binary("and", bits, k(1 << drop)), k(drop))
                bias = hlo.binary("add", last, k((1 << (drop - 1)) - 1))
                keep = ((1 << width) - 1) ^ ((1 << drop) - 1)
                bits = hlo.binary("and", hlo.binary("add", bits, bias), k(keep))
            if exponent_bits < source_exponent:
                sign = hlo.binary("and", bits, k(1 << (width - 1)))
                exponent_mask = ((1 << source_exponent) - 1) << source_mantissa
                source_bias, reduced_bias = (1 << (source_exponent - 1)) - 1, (1 << (exponent_bits - 1)) - 1
                exponent = hlo.binary("and", bits, k(exponent_mask))
                overflow = hlo.compare(exponent, k((source_bias + reduced_bias) << source_mantissa), "GT")
                underflow = hlo.compare(exponent, k((source_bias - reduced_bias) << source_mantissa), "LE")
                bits = hlo.select(overflow, hlo.binary("or", sign, k(exponent_mask)),
                                  hlo.select(underflow, sign, bits))
            rounded = hlo.bitcast_convert(bits, dtype)
            count += _replace(op, hlo.select(hlo.compare(x, x, "NE"), x, rounded))
    return count


def gather_clamped_starts(module: ir.Module) -> int:
    count = 0
    for op in _ops_named(module, "stablehlo.gather"):
        dn = dimension_numbers(str(op.attributes["dimension_numbers"]))
        sizes = attr_ints(op, "slice_sizes")
        operand, indices = op.operands
        operand_shape, index_shape, dtype = shape_of(operand.type), shape_of(indices.type), dtype_of(indices.type)
        highs = [operand_shape[d] - sizes[d] for d in dn["start_index_map"]]
        with ir.InsertionPoint(op), op.location:
            if dn["index_vector_dim"] == len(index_shape):      # one implicit component
                high = _splat(highs[0], dtype, index_shape)
            else:
                high = hlo.broadcast_in_dim(hlo.constant(np.array(highs, dtype)), index_shape, [dn["index_vector_dim"]])
            clamped = hlo.binary("minimum", hlo.binary("maximum", indices, _splat(0, dtype, index_shape)), high)
        op.operands[1] = clamped
        count += 1
    return count


def float_remainder_sign_and_small_dividends(module: ir.Module) -> int:
    """fmod(x, y) is x where |x| < |y| (y not NaN), else r with x's sign: IREE's f64 fmod (a - trunc(a / b) b, and
    llvm-cpu's own) lost the sign of zero results (-4 rem 2 gave +0) and flushed subnormal dividends (5e-324 rem 1
    gave 0). Wraps the remainder, whatever later rewrites make of it; magnitudes compared as bits (vmvx's float
    compares flush subnormals)."""
    count = 0
    for op in _ops_named(module, "stablehlo.remainder", floats_only=True):
        with ir.InsertionPoint(op), op.location:
            x, y = (V(v) for v in op.operands)
            r = V(hlo.binary("remainder", x.value, y.value))
            width = 8 * x.dtype.itemsize
            sign, infinity = 1 << (width - 1), int(np.array(np.inf, x.dtype).view(_UNSIGNED[x.dtype.name]))
            xb, yb, rb = x.bits(), y.bits(), r.bits()
            small = ((xb & (sign - 1)) < (yb & (sign - 1))) & ((yb & (sign - 1)) <= infinity)
            signed = V(hlo.bitcast_convert(((rb & (sign - 1)) | (xb & sign)).value, x.dtype))
            count += _replace(op, where(small, x, signed).value)
    return count


_IDENTITY_NEAR_ZERO = ("stablehlo.exponential_minus_one", "stablehlo.log_plus_one", "stablehlo.tan", "chlo.tan")


def subnormal_arguments_pass_through(module: ir.Module) -> int:
    """expm1, log1p and tan of a subnormal x are x (correctly rounded: the next term is below half its ulp), and of
    +-0.0 the zero itself; IREE's CPU code flushes subnormals first (expm1(5e-324) and chlo.tan(1e-40) gave 0).
    The op's result where x's magnitude bits are below the smallest normal's, x there."""
    count = 0
    for op in _ops_named(module, *_IDENTITY_NEAR_ZERO, floats_only=True):
        with ir.InsertionPoint.after(op), op.location:
            x = V(op.operands[0])
            smallest_normal = int(np.array(finfo(x.dtype).tiny, x.dtype).view(_UNSIGNED[x.dtype.name]))
            tiny = (x.bits() & ((1 << (8 * x.dtype.itemsize - 1)) - 1)) < smallest_normal
            new = where(tiny, x, V(op.result))
        op.result.replace_all_uses_except(new.value, new.value.owner.operation)
        count += 1
    return count


def cbrt_of_subnormals(module: ir.Module) -> int:
    """cbrt of a subnormal x = m 2**e (m its mantissa bits, e the smallest subnormal's exponent) from the integer m:
    cbrt(m 2**s) 2**((e - s) / 3), s = e mod 3, with x's sign; IREE's CPU code flushes x first (llvm-cpu gave NaN
    for cbrt(1e-40) and cbrt(5e-324), vmvx x itself)."""
    count = 0
    for op in _ops_named(module, "stablehlo.cbrt", floats_only=True):
        with ir.InsertionPoint.after(op), op.location:
            x = V(op.operands[0])
            width, unsigned = 8 * x.dtype.itemsize, np.dtype(_UNSIGNED[x.dtype.name])
            smallest_normal = int(np.array(finfo(x.dtype).tiny, x.dtype).view(unsigned))
            magnitude = x.bits() & ((1 << (width - 1)) - 1)
            e = int(np.log2(float(finfo(x.dtype).smallest_subnormal)))
            s = e % 3
            scaled = magnitude.to(x.dtype) * float(2 ** s)
            root = V(hlo.unary("cbrt", scaled.value)) * float(2.0 ** ((e - s) // 3))
            signed = V(hlo.bitcast_convert((root.bits() | (x.bits() & (1 << (width - 1)))).value, x.dtype))
            new = where((magnitude < smallest_normal) & (magnitude != 0), signed, V(op.result))
        op.result.replace_all_uses_except(new.value, new.value.owner.operation)
        count += 1
    return count


def integer_division_by_zero_and_overflow(module: ir.Module) -> int:
    """a / b and a % b of integers with the divisor 1 where it is 0 (or -1 under INT_MIN), the result 0 there."""
    count = 0
    for op in _ops_named(module, "stablehlo.divide", "stablehlo.remainder"):
        dtype = dtype_of(op.results[0].type)
        if dtype.kind not in "iu":
            continue
        a, b = op.operands
        shape = shape_of(b.type)
        with ir.InsertionPoint(op), op.location:
            bad = hlo.compare(b, _splat(0, dtype, shape), "EQ")
            if dtype.kind == "i":
                overflow = hlo.binary("and", hlo.compare(a, _splat(np.iinfo(dtype).min, dtype, shape), "EQ"),
                                      hlo.compare(b, _splat(-1, dtype, shape), "EQ"))
                bad = hlo.binary("or", bad, overflow)
            quotient = hlo.binary(op.name.removeprefix("stablehlo."), a, hlo.select(bad, _splat(1, dtype, shape), b))
            count += _replace(op, hlo.select(bad, _splat(0, dtype, shape), quotient))
    return count


def chlo_square_by_parts(module: ir.Module) -> int:
    """chlo.square as multiply; of complex x, real part 0 where |re| = |im| is finite, else (re - im)(re + im)."""
    count = 0
    for op in _ops_named(module, "chlo.square"):
        x = op.operands[0]
        with ir.InsertionPoint(op), op.location:
            if dtype_of(x.type).kind != "c":
                count += _replace(op, hlo.binary("multiply", x, x))
                continue
            re, im = hlo.real(x), hlo.imag(x)
            dtype, shape = dtype_of(re.type), shape_of(re.type)
            balanced = hlo.binary("and", hlo.is_finite(re),
                                  hlo.compare(hlo.unary("abs", re), hlo.unary("abs", im), "EQ"))
            product = hlo.binary("multiply", hlo.binary("subtract", re, im), hlo.binary("add", re, im))
            real = hlo.select(balanced, _splat(0.0, dtype, shape), product)
            imag = hlo.binary("multiply", _splat(2.0, dtype, shape), hlo.binary("multiply", re, im))
            count += _replace(op, hlo.complex(real, imag))
    return count


def float_sign_by_bits(module: ir.Module) -> int:
    """sign(x) = +-1 with x's sign bit, or x itself where x is +-0.0 or NaN, tested and built on the bits: vmvx
    cannot lower math.copysign, llvm-cpu's copysign and vmvx's float compares flush subnormals (sign(1e-40) gave
    0 in f32, sign(5e-324) 0 in f64)."""
    count = 0
    for op in _ops_named(module, "stablehlo.sign", floats_only=True):
        with ir.InsertionPoint(op), op.location:
            x = V(op.operands[0])
            bits, width = x.bits(), 8 * x.dtype.itemsize
            magnitude = bits & ((1 << (width - 1)) - 1)
            one = int(np.array(1, x.dtype).view(bits.dtype))
            infinity = int(np.array(np.inf, x.dtype).view(bits.dtype))
            signed_one = V(hlo.bitcast_convert(((bits & (1 << (width - 1))) | one).value, x.dtype))
            count += _replace(op, where((magnitude == 0) | (magnitude > infinity), x, signed_one).value)
    return count


# every IREE target needs these (vmvx and cuda lower the same ops the same way)
ALL_TARGETS = [bool_arithmetic_as_logic, reduce_precision_by_bits, gather_clamped_starts,
               integer_division_by_zero_and_overflow]
# llvm-cpu, and vmvx (whose constants llvm-cpu folds)
CPU = [floor_ceil_of_subnormals, power_by_magnitude, float_sign_by_bits]
CUDA = [power_by_magnitude]     # cuda's pow is exp(y log x) in f32 and f64 alike (no __nv_pow)
BEFORE_COMPLEX_PAIRS = [chlo_square_by_parts]
# llvm-cpu and vmvx, after chlo.square's own rewrite (whose complex form IREE's expansion would overflow) and before
# complex numbers become pairs (the CHLO expansions of complex ops are complex ops)
CHLO_FIRST = [chlo_as_stablehlo]
# llvm-cpu and vmvx, before the rewrites that build their remainders (accurate_math's f64 fmod, vmvx's fmod)
# (their complex parts are then carried by complex_pairs.py)
CPU_FIRST = [float_remainder_sign_and_small_dividends, subnormal_arguments_pass_through, cbrt_of_subnormals]
