"""vmvx and cpu quirk: complex numbers as pairs of real tensors.

IREE 3.13's vmvx cannot load or store a complex element in any dispatch ('util.buffer.load' op result
must be index or integer or floating-point), so not even `z + w` compiles; its llvm-cpu segfaults
compiling a stablehlo.pad of complex values (fft(x, n=20) did) and does not data-tile complex matmuls.
This rewrite gives every complex value of a function two real values (its real and imaginary parts) and
every op on complex values its real counterparts: ops that move elements without computing on them
(broadcast, reshape, transpose, slice, concatenate, pad, select, gather ...) and add/subtract/negate run
once per part with their own attributes; multiply, divide, dot_general, reduce-add/multiply, convert,
compare (EQ/NE on both parts, the orders lexicographically), real, imag, complex, iota (a complex eye's) and
reduce_window-add/multiply (cumsum, cumprod) are written out. At the function's boundary `flow.tensor.bitcast`
(no dispatch, no copy) views a complex argument as real [..., 2] and a result back as complex (vmvx), or
stablehlo.real/imag/complex do (cpu), so callers still pass complex arrays.

Control flow (stablehlo.while, if, case) carries each complex value as its two parts: the op is built
again with the parts as its operands, results and block arguments, its blocks' ops moved into it and
rewritten by the same rules, and each stablehlo.return yields the parts.

The elementwise math ops (exp, log, sqrt, sine, tan, tanh, abs, power ...) are complex_math_pairs.py's.
A function with a complex op this does not know (a complex sort, scatter ...) keeps its complex values, and
only its math ops are written out, each where it stands (complex_math_by_parts, which is also cuda's whole complex
rewrite); IREE's own error says what else failed, but where IREE is known to crash the process instead (a complex
elementwise op without a rule here, a stablehlo.fft of f64 parts: SIGFPE compiling a 1-D one), a CompileError says
so first.
"""
from __future__ import annotations

import numpy as np
from iree.compiler import ir

from ..dialects import stablehlo as hlo
from ..dialects.elementwise import BINARY_OPS, UNARY_OPS
from ..dialects.regions import reduction_body
from ..dialects.types import attr_ints, constant_value, dtype_of, enum_attr, shape_of
from ..errors import CompileError
from .complex_math_pairs import RULES, mul
from .legalize import walk

# ops applied to each part alone, attributes unchanged
PER_PART = frozenset(f"stablehlo.{name}" for name in (
    "add", "subtract", "negate", "broadcast_in_dim", "reshape", "transpose", "slice", "concatenate", "reverse",
    "pad", "select", "dynamic_slice", "dynamic_update_slice", "gather", "optimization_barrier", "copy"))
WRITTEN_OUT = frozenset(f"stablehlo.{name}" for name in (
    "constant", "iota", "dot_general", "reduce", "reduce_window", "convert", "compare", "real", "imag", "complex")) | frozenset(RULES)


def _is_complex(t: ir.Type) -> bool:
    t = t.maybe_downcast() if hasattr(t, "maybe_downcast") else t
    return isinstance(t, ir.RankedTensorType) and isinstance(t.element_type.maybe_downcast(), ir.ComplexType)


def _part_type(t: ir.Type) -> ir.Type:
    t = ir.RankedTensorType(t)
    return ir.RankedTensorType.get(list(t.shape), ir.ComplexType(t.element_type).element_type)


def _touches_complex(op) -> bool:
    return any(_is_complex(v.type) for v in (*op.operands, *op.results))


def _reduce_body(op) -> str | None:
    """"add" or "multiply" for a one-input reduce whose body is that op alone, else None."""
    names = [inner.operation.name for inner in op.regions[0].blocks[0].operations]
    if len(op.operands) == 2 and len(names) == 2 and names[1] == "stablehlo.return" and \
            names[0] in ("stablehlo.add", "stablehlo.multiply"):
        return names[0].split(".")[1]
    return None


REGION_OPS = frozenset(("stablehlo.while", "stablehlo.if", "stablehlo.case"))
TERMINATORS = frozenset(("func.return", "stablehlo.return"))


def _blocks(op):
    return [block for region in op.regions for block in region.blocks]


def _nested_complex(op) -> bool:
    """Whether a block argument of op's regions or an op nested in them has a complex value."""
    return any(any(_is_complex(a.type) for a in block.arguments) or
               any(_has_complex(inner.operation) for inner in block.operations) for block in _blocks(op))


def _has_complex(op) -> bool:
    """Whether op or anything nested in it has a complex value."""
    return _touches_complex(op) or _nested_complex(op)


def _supported_block(block) -> bool:
    """Every complex op of the block (and of the control flow in it) is one this rewrite knows."""
    for inner in block.operations:
        op = inner.operation
        if op.name in ("stablehlo.reduce", "stablehlo.reduce_window") and _touches_complex(op):
            if _reduce_body(op) is None:
                return False
        elif op.name in REGION_OPS:
            if not all(_supported_block(b) for b in _blocks(op)):
                return False
        elif _nested_complex(op):          # sort, scatter, reduce_window ... with complex inside
            return False
        elif _touches_complex(op) and op.name not in PER_PART | WRITTEN_OUT | TERMINATORS:
            return False
    return True


def _supported(func) -> bool:
    return _supported_block(func.regions[0].blocks[0])


def _splat(value, like: ir.Value) -> ir.Value:
    return hlo.broadcast_in_dim(hlo.constant(np.array(value, dtype_of(like.type))), shape_of(like.type), [])


def _bitcast(x: ir.Value, result: ir.Type) -> ir.Value:
    return ir.Operation.create("flow.tensor.bitcast", results=[result], operands=[x],
                               attributes={"operandSegmentSizes": ir.DenseI32ArrayAttr.get([1, 0, 0])}).result


def _split(z: ir.Value, native: bool) -> tuple[ir.Value, ir.Value]:
    """A complex function argument as (re, im): by stablehlo.real/imag (native), or through a real [..., 2]
    view of its buffer."""
    if native:
        return hlo.real(z), hlo.imag(z)
    shape, part = list(shape_of(z.type)), ir.ComplexType(ir.RankedTensorType(z.type).element_type).element_type
    pairs = _bitcast(z, ir.RankedTensorType.get(shape + [2], part))
    ends = [hlo.slice(pairs, [0] * len(shape) + [k], shape + [k + 1]) for k in (0, 1)]
    return tuple(hlo.reshape(e, shape) for e in ends)


_FUSED_AFTER_A_DOT = frozenset(f"stablehlo.{name}" for name in (
    "select", "compare", "convert", "bitcast_convert", "broadcast_in_dim", "reshape", "clamp"))


def _fed_by_dot(value: ir.Value) -> bool:
    """Whether a dot_general computes `value`, directly or through elementwise ops however many (what IREE fuses
    into the dispatch that unpacks the dot's data-tiled result: a complex division written out on the parts is
    ~100 of them, and a search four ops deep missed the dot of np.cov's complex z @ z^H / (n - 1))."""
    pending, seen, fused = [value], {value}, _ELEMENTWISE | _FUSED_AFTER_A_DOT
    while pending:
        owner = pending.pop().owner
        if not isinstance(owner, ir.Operation) and hasattr(owner, "operation"):
            owner = owner.operation
        if not isinstance(owner, ir.Operation):
            continue   # a block argument
        if owner.name == "stablehlo.dot_general":
            return True
        if owner.name in fused:
            fresh = [v for v in owner.operands if v not in seen]   # values hash by what they are
            seen.update(fresh)
            pending += fresh
    return False


def _native_complex(re: ir.Value, im: ir.Value) -> ir.Value:
    """stablehlo.complex(re, im) for llvm-cpu: behind an optimization barrier where a dot computes the parts.
    With data tiling, IREE fuses the join into the dispatch that unpacks the dot's result, and that dispatch
    does not compile ('vector.transfer_read' op requires valid padding vector elemental type: a complex padding
    value); the barrier leaves the join a dispatch of its own."""
    if _fed_by_dot(re) or _fed_by_dot(im):
        re, im = hlo.optimization_barrier([re, im])
    return hlo.complex(re, im)


def _join(re: ir.Value, im: ir.Value, complex_type: ir.Type, native: bool) -> ir.Value:
    if native:
        return _native_complex(re, im)
    shape = list(shape_of(re.type))
    pairs = hlo.concatenate([hlo.reshape(re, shape + [1]), hlo.reshape(im, shape + [1])], len(shape))
    return _bitcast(pairs, complex_type)


def _clone(op, operands, results) -> ir.Operation:
    attributes = {name: op.attributes[name] for name in op.attributes}
    return ir.Operation.create(op.name, results=results, operands=operands, attributes=attributes)


def _dot(op, a, b):
    result = _part_type(op.results[0].type)
    d = lambda x, y: _clone(op, [x, y], [result]).result  # noqa: E731
    (ar, ai), (br, bi) = a, b
    return hlo.binary("subtract", d(ar, br), d(ai, bi)), hlo.binary("add", d(ar, bi), d(ai, br))


def _window(op, operands, results, body) -> list[ir.Value]:
    """The reduce_window `op` again (its windows, strides, padding and dilations) on these operands, with these
    results and `body` (regions.reduction_body's)."""
    new = ir.Operation.create(op.name, results=results, operands=operands, regions=1,
                              attributes={name: op.attributes[name] for name in op.attributes})
    reduction_body(new, [ir.RankedTensorType.get([], ir.RankedTensorType(r).element_type) for r in results], body,
                   loc=op.location)
    return list(new.results)


def _rewrite_op(op, pairs: dict):
    """Build the real ops of one complex op before it; returns {result index: (re, im) or real value}."""
    name = op.name
    get = lambda v: pairs[v] if _is_complex(v.type) else None  # noqa: E731
    if name in PER_PART:
        out = {}
        clones = [_clone(op, [pairs[v][k] if _is_complex(v.type) else v for v in op.operands],
                         [_part_type(r.type) if _is_complex(r.type) else r.type for r in op.results]) for k in (0, 1)]
        for i, r in enumerate(op.results):
            out[i] = (clones[0].results[i], clones[1].results[i]) if _is_complex(r.type) else clones[0].results[i]
        return out
    if name == "stablehlo.constant":
        value = constant_value(op)
        return {0: (hlo.constant(np.array(value.real, order="C")), hlo.constant(np.array(value.imag, order="C")))}
    if name == "stablehlo.iota":            # eye() of a complex dtype: a real iota and zeros
        part = _part_type(op.results[0].type)
        re = hlo.iota(shape_of(part), ir.IntegerAttr(op.attributes["iota_dimension"]).value, dtype_of(part))
        return {0: (re, _splat(0, re))}
    if name in RULES:
        return {0: RULES[name](*(get(v) for v in op.operands))}
    if name == "stablehlo.dot_general":
        return {0: _dot(op, get(op.operands[0]), get(op.operands[1]))}
    if name == "stablehlo.real":
        return {0: get(op.operands[0])[0]}
    if name == "stablehlo.imag":
        return {0: get(op.operands[0])[1]}
    if name == "stablehlo.complex":
        return {0: (op.operands[0], op.operands[1])}
    if name == "stablehlo.reduce":
        dims = attr_ints(op, "dimensions")
        (xr, xi), (ir_, ii) = get(op.operands[0]), get(op.operands[1])
        if _reduce_body(op) == "add":
            return {0: (hlo.reduce([xr], [ir_], dims, "add")[0], hlo.reduce([xi], [ii], dims, "add")[0])}
        # a product: one reduce of both parts, whose body multiplies (acc_re, acc_im) by (x_re, x_im)
        return {0: tuple(hlo.reduce([xr, xi], [ir_, ii], dims, lambda ar, ai, br, bi: list(mul((ar, ai), (br, bi)))))}
    if name == "stablehlo.reduce_window":   # cumsum / cumprod: the same windows, of each part or of both
        (xr, xi), (ir_, ii) = get(op.operands[0]), get(op.operands[1])
        part = _part_type(op.results[0].type)
        if _reduce_body(op) == "add":
            return {0: (_window(op, [xr, ir_], [part], "add")[0], _window(op, [xi, ii], [part], "add")[0])}
        return {0: tuple(_window(op, [xr, xi, ir_, ii], [part, part],
                                 lambda ar, ai, br, bi: list(mul((ar, ai), (br, bi)))))}
    if name == "stablehlo.compare":
        return {0: _compare(enum_attr(op, "comparison_direction"), get(op.operands[0]), get(op.operands[1]))}
    if name == "stablehlo.convert":
        return {0: _convert(op, get(op.operands[0]))}
    raise AssertionError(f"complex_pairs: {name} passed _supported but has no rule")


def _compare(direction, a, b):
    """EQ: both parts equal, NE: either differs; the orders are lexicographic on (re, im), as the spec orders
    complex numbers: the real parts decide unless they are equal (IREE's own complex GE looked at them alone)."""
    (ar, ai), (br, bi) = a, b
    if direction in ("EQ", "NE"):
        both = "and" if direction == "EQ" else "or"
        return hlo.binary(both, hlo.compare(ar, br, direction), hlo.compare(ai, bi, direction))
    strict = direction.replace("E", "T")
    tie = hlo.binary("and", hlo.compare(ar, br, "EQ"), hlo.compare(ai, bi, direction))
    return hlo.binary("or", hlo.compare(ar, br, strict), tie)


def _convert(op, parts):
    source, result = op.operands[0], op.results[0]
    target = dtype_of(result.type)
    if parts is None:                       # real -> complex: the real part converted, a zero imaginary part
        re = hlo.convert(source, dtype_of(_part_type(result.type)))
        return re, _splat(0, re)
    if _is_complex(result.type):            # complex -> complex: each part
        part = dtype_of(_part_type(result.type))
        return tuple(p if dtype_of(p.type) == part else hlo.convert(p, part) for p in parts)
    if target == np.bool_:                  # complex -> i1: any nonzero number is true, 1j too (the spec's rule)
        zero = _splat(0, parts[0])
        return hlo.binary("or", hlo.compare(parts[0], zero, "NE"), hlo.compare(parts[1], zero, "NE"))
    return parts[0] if dtype_of(parts[0].type) == target else hlo.convert(parts[0], target)


def _part_types(types) -> list[ir.Type]:
    return [t for ty in types for t in ((_part_type(ty),) * 2 if _is_complex(ty) else (ty,))]


def _parts_of(values, pairs: dict) -> list[ir.Value]:
    return [p for v in values for p in (pairs[v] if _is_complex(v.type) else (v,))]


def _bind(old_values, new_values, pairs: dict):
    """Each old value stands for the next new one, or a complex one for the next two (its parts)."""
    new_values = iter(new_values)
    for old in old_values:
        if _is_complex(old.type):
            pairs[old] = (next(new_values), next(new_values))
        else:
            old.replace_all_uses_with(next(new_values))


def _rewrite_control(op, pairs: dict, native: bool) -> int:
    """while / if / case again, over the parts: its blocks' ops moved into the new op and rewritten."""
    new = ir.Operation.create(op.name, results=_part_types([r.type for r in op.results]),
                              operands=_parts_of(op.operands, pairs), regions=len(op.regions),
                              attributes={name: op.attributes[name] for name in op.attributes})
    count = 0
    for old_region, new_region in zip(op.regions, new.regions):
        old_block = old_region.blocks[0]
        block = new_region.blocks.append(*_part_types([a.type for a in old_block.arguments]))
        _bind(old_block.arguments, block.arguments, pairs)
        for inner in list(old_block.operations):
            block.append(inner.operation)
        count += _rewrite_ops(list(block.operations), pairs, native)
    _bind(op.results, new.results, pairs)
    return count


def _rewrite_ops(operations: list, pairs: dict, native: bool) -> int:
    """Each of these ops (of one block) that has complex values rewritten onto their parts."""
    done, count = [], 0
    for inner in operations:
        op = inner.operation
        if not (_has_complex(op) if op.name in REGION_OPS else _touches_complex(op)):
            continue
        with ir.InsertionPoint(op), op.location:
            if op.name in REGION_OPS:
                count += _rewrite_control(op, pairs, native)
            elif op.name == "func.return":
                for i, v in enumerate(op.operands):
                    if _is_complex(v.type):
                        op.operands[i] = _join(*pairs[v], v.type, native)
                continue
            elif op.name == "stablehlo.return":
                ir.Operation.create(op.name, results=[], operands=_parts_of(op.operands, pairs))
            else:
                for i, new in _rewrite_op(op, pairs).items():
                    result = op.results[i]
                    if isinstance(new, tuple):
                        pairs[result] = new
                    else:
                        result.replace_all_uses_with(new)
        done.append(op)
    for op in reversed(done):
        op.erase()
    return count + len(done)


def _rewrite_function(func, native: bool) -> int:
    block = func.regions[0].blocks[0]
    pairs, original = {}, list(block.operations)
    with ir.InsertionPoint.at_block_begin(block), func.location:
        for arg in block.arguments:
            if _is_complex(arg.type):
                pairs[arg] = _split(arg, native)
    return _rewrite_ops(original, pairs, native)


_ELEMENTWISE = frozenset(f"stablehlo.{name}" for name in (*UNARY_OPS, *BINARY_OPS))
# what _math_by_parts writes out: the math ops IREE cannot be trusted with on complex operands (its own lowering
# crashes, does not link or is inaccurate), and compare (IREE's complex GE looked at the real parts alone)
_BY_PARTS = frozenset(RULES) - {"stablehlo.multiply", "stablehlo.divide"} | {"stablehlo.compare"}
# and the moves IREE crashes compiling on complex values (SIGSEGV on llvm-cpu and cuda: a pad, an update of a
# slice of zeros), each part moved alone
_MOVED_BY_PARTS = frozenset(("stablehlo.pad", "stablehlo.dynamic_update_slice"))


def _math_by_parts(root, dots: bool = False) -> int:
    """Each complex math op and complex compare (_BY_PARTS) nested in `root` rewritten where it stands: its operands'
    parts by stablehlo.real/imag, complex_math_pairs' rule, the result joined by stablehlo.complex; each complex
    pad and dynamic_update_slice (_MOVED_BY_PARTS) once per part; with `dots`, each dot_general of two complex
    operands too (four real ones). Complex values and the rest of the arithmetic (add, multiply, divide ...) stay
    IREE's own."""
    count = 0
    for op in list(walk(root)):
        written_out = op.name in _BY_PARTS | _MOVED_BY_PARTS or (dots and op.name == "stablehlo.dot_general")
        complex_operands = [_is_complex(v.type) for v in op.operands]
        if not written_out or not any(complex_operands):
            continue
        if op.name == "stablehlo.dot_general" and not all(complex_operands):
            continue
        with ir.InsertionPoint(op), op.location:
            parts = [(hlo.real(v), hlo.imag(v)) if c else (v, v) for v, c in zip(op.operands, complex_operands)]
            if op.name in _MOVED_BY_PARTS:
                part_type = _part_type(op.results[0].type)
                new = hlo.complex(*(_clone(op, [p[k] for p in parts], [part_type]).results[0] for k in (0, 1)))
            elif op.name == "stablehlo.compare":
                new = _compare(enum_attr(op, "comparison_direction"), *parts)
            elif op.name == "stablehlo.dot_general":
                new = _native_complex(*_dot(op, *parts))
            else:
                out = RULES[op.name](*parts)
                new = hlo.complex(*out) if isinstance(out, tuple) else out
        op.results[0].replace_all_uses_with(new)
        op.erase()
        count += 1
    return count


def complex_math_by_parts(module: ir.Module) -> int:
    """cuda: the complex math ops (exp, sine, tan, power ...) and compares written out on their operands' parts,
    and complex pads and slice updates moved per part (IREE 3.13's cuda compiler died of SIGSEGV on each, complex64
    and complex128: fft(x, n=20) pads), one op at a time (IREE's own complex lowering of the math ops is MLIR's,
    which the llvm-cpu and vmvx tests found crashing and inaccurate; cuda cannot run here to show otherwise); its
    complex arithmetic stays native. The
    frontend built these from real ops before it emitted the complex ops themselves, so cuda's programs are
    what they were."""
    return _math_by_parts(module.operation)


def _known_crasher(op) -> str | None:
    """Why IREE 3.13 would fail on op, or kill the process compiling it (None where it is not known to)."""
    if op.name in _ELEMENTWISE and _touches_complex(op) and op.name not in PER_PART | WRITTEN_OUT:
        return "has no real-pair rule (hlojit/pipeline/complex_math_pairs.py), and IREE's own complex lowering " \
               "crashes or does not link"
    if op.name == "stablehlo.fft" and any(
            np.dtype(dtype_of(v.type)).name in ("float64", "complex128") for v in (*op.operands, *op.results)):
        return "of f64 parts is not lowered by IREE 3.13 (a 1-D one kills the compiler with SIGFPE); " \
               "hj.numpy.fft builds transforms from real ops"
    return None


def refuse_known_crashers(module: ir.Module) -> None:
    """A CompileError naming the first op of the module IREE is known to crash on, before IREE sees it."""
    for op in walk(module.operation):
        reason = _known_crasher(op)
        if reason is not None:
            types = ", ".join(str(v.type) for v in (*op.operands, *op.results))
            raise CompileError(f"{op.name} ({types}) at {op.location} {reason}")


def complex_as_real_pairs(module: ir.Module, native_ends: bool = False) -> int:
    """Every function of the module whose complex ops this knows, rewritten onto real pairs; in the others (a
    complex sort, scatter ...) the math ops alone, one at a time (complex_math_by_parts); the count of complex ops
    replaced. The ends are flow.tensor.bitcast views (vmvx), or with native_ends
    stablehlo.real/imag/complex (llvm-cpu: it cannot compile a bitcast result of a dispatch that also
    feeds another result, 'LLVM Translation failed for operation: builtin.unrealized_conversion_cast').
    What is left that IREE is known to crash on is a CompileError (refuse_known_crashers)."""
    count = 0
    for inner in module.body.operations:
        op = inner.operation
        if op.name == "func.func" and _has_complex(op):
            # llvm-cpu does not data-tile a complex matmul ('vector.transfer_read' op requires valid padding
            # vector elemental type): where the function stays complex, its dots are written out on the parts
            count += _rewrite_function(op, native_ends) if _supported(op) else _math_by_parts(op, dots=native_ends)
    refuse_known_crashers(module)
    return count


def complex_as_real_pairs_native_ends(module: ir.Module) -> int:
    """complex_as_real_pairs with real/imag/complex at the function's boundary (llvm-cpu)."""
    return complex_as_real_pairs(module, native_ends=True)
