"""Rewrites of a StableHLO module that work around IREE 3.13 bugs on one target.

Each quirk was found by the cross-target tests (reference vs each target). They run just before
compiling, on the module the compiler is about to consume, so traced programs and `from_mlir` programs
get them alike and the StableHLO users see stays as they wrote it.
"""
from __future__ import annotations

import numpy as np
from iree.compiler import ir

from ..dialects import stablehlo as hlo
from ..dialects.types import dot_dimensions, dtype_of, enum_attr, shape_of
from . import (accurate_math, compile_rewrites, conv_gradients, conv_patches, conv_phases, kernels, layout, legalize,
               linalg_rewrites, matmul_kernel, normalization_kernels, scatter_rewrites, sort_networks, sort_rewrites,
               vmvx_rewrites, window_scatters)
from .constant_folding import fold_constants
from .fft_rewrites import ffts_as_real_dft, ffts_beyond_iree_as_real_dft
from .legalize import walk as _walk
from .subnormal_compares import float_compares_by_bits
from .complex_pairs import complex_as_real_pairs, complex_as_real_pairs_native_ends, complex_math_by_parts
from .targets import Target, data_tiled, uses_matmul_kernels
from .winograd import requested_winograd


def _is_float(dtype) -> bool:
    return dtype.kind == "f" or dtype.name == "bfloat16"


_VIA_SIGNED = {"uint8": "int32", "uint16": "int32", "uint32": "int64"}


def truncate_before_float_to_int(module: ir.Module) -> int:
    """vmvx converts float -> int rounding to nearest (0.5 -> 1, -1.7 -> -2), not toward zero as
    StableHLO says: make the value whole first, rounding toward zero, so any rounding agrees. It cannot
    lower float -> small unsigned at all (arith.fptoui): go through a wider signed int."""
    count = 0
    for op in list(_walk(module.operation)):
        if op.name != "stablehlo.convert":
            continue
        source, target = dtype_of(op.operands[0].type), dtype_of(op.results[0].type)
        if not _is_float(source) or target.kind not in "iu":  # to bool is `!= 0`: no truncating
            continue
        x = op.operands[0]
        with ir.InsertionPoint(op), op.location:
            zero = hlo.broadcast_in_dim(hlo.constant(0, source), shape_of(x.type), [])
            whole = hlo.select(hlo.compare(x, zero, "LT"), hlo.unary("ceil", x), hlo.unary("floor", x))
            if target.name in _VIA_SIGNED:
                whole = hlo.convert(whole, _VIA_SIGNED[target.name])
        op.operands[0] = whole
        count += 1
    return count


_BITS = {"float16": "uint16", "bfloat16": "uint16", "float32": "uint32", "float64": "uint64"}


def _magnitude_vs_inf(x, direction):
    """|x|'s bits compared with inf's bits as unsigned ints: GT is NaN, EQ is +-inf."""
    dtype = dtype_of(x.type)
    uint = np.dtype(_BITS[dtype.name])
    inf = int(np.array(np.inf, dtype).view(uint))
    shape = shape_of(x.type)

    def splat(value):
        return hlo.broadcast_in_dim(hlo.constant(np.array(value, uint)), shape, [])
    magnitude = hlo.binary("and", hlo.bitcast_convert(x, uint), splat((1 << (8 * uint.itemsize - 1)) - 1))
    return hlo.compare(magnitude, splat(inf), direction)


def _isnan_by_bits(x):
    return _magnitude_vs_inf(x, "GT")


def _isinf_by_bits(x):
    return _magnitude_vs_inf(x, "EQ")


def nan_aware_float_compares(module: ir.Module) -> int:
    """vmvx gets float comparisons with NaN wrong: GE is true when an operand is NaN, a compare of a
    value with itself folds as if it could not be NaN (x != x is false, x == x true), and is_finite(nan)
    is true. GE becomes LE with the operands swapped (which vmvx gets right); x == x, x <= x, x >= x
    become "not NaN", x != x "NaN", and is_finite "neither NaN nor inf", all tested on the bits. Two operands
    that differ here may still become one in IREE (its CSE merges equal constants, even behind barriers: a NaN
    constant compared EQ with a copy of itself gave true), so EQ, LE and GE also require the first operand not
    NaN and NE accepts it NaN (a NaN on one side only is the other compare's business, which vmvx gets right)."""
    count = 0
    for op in list(_walk(module.operation)):
        if op.name == "stablehlo.is_finite":   # vmvx: is_finite(nan) is true
            x = op.operands[0]
            with ir.InsertionPoint(op), op.location:
                new = hlo.unary("not", hlo.binary("or", _isnan_by_bits(x), _isinf_by_bits(x)))
            op.result.replace_all_uses_with(new)
            op.erase()
            count += 1
            continue
        if op.name != "stablehlo.compare" or not _is_float(dtype_of(op.operands[0].type)):
            continue
        direction = enum_attr(op, "comparison_direction")
        lhs, rhs = op.operands[0], op.operands[1]
        total_order = "compare_type" in op.attributes and enum_attr(op, "compare_type") == "TOTALORDER"
        if direction not in ("EQ", "NE", "LE", "GE") or total_order:    # TOTALORDER orders NaNs: no guard
            continue
        with ir.InsertionPoint(op), op.location:
            nan = _isnan_by_bits(lhs)
            if lhs == rhs:
                new = nan if direction == "NE" else hlo.unary("not", nan)
            elif direction == "NE":
                new = hlo.binary("or", hlo.compare(lhs, rhs, "NE"), nan)
            else:
                ordered = hlo.compare(rhs, lhs, "LE") if direction == "GE" else hlo.compare(lhs, rhs, direction)
                new = hlo.binary("and", ordered, hlo.unary("not", nan))
        op.result.replace_all_uses_with(new)
        op.erase()
        count += 1
    return count


def narrow_int_to_f64_by_bits(module: ir.Module) -> int:
    """vmvx converts only 64-bit integers to f64 (i32 -> f64 is illegal, and i32 -> i64 -> f64 folds
    back into it): widen to i64, add the bits of 1.5 * 2**52 (the int lands in the mantissa, exactly),
    read those bits as f64 and subtract 1.5 * 2**52."""
    count = 0
    magic = 1.5 * 2.0 ** 52
    for op in list(_walk(module.operation)):
        if op.name != "stablehlo.convert":
            continue
        source, target = dtype_of(op.operands[0].type), dtype_of(op.results[0].type)
        if target != np.float64 or source.kind not in "biu" or source.itemsize > 4:
            continue
        x = op.operands[0]
        shape = shape_of(x.type)
        with ir.InsertionPoint(op), op.location:
            wide = hlo.convert(hlo.convert(x, np.int32) if source.kind == "b" else x, np.int64)
            bits = hlo.binary("add", wide, hlo.broadcast_in_dim(
                hlo.constant(np.array(magic).view(np.int64)), shape, []))
            new = hlo.binary("subtract", hlo.bitcast_convert(bits, np.float64),
                             hlo.broadcast_in_dim(hlo.constant(np.float64(magic)), shape, []))
        op.result.replace_all_uses_with(new)
        op.erase()
        count += 1
    return count


def vector_products_as_reductions(module: ir.Module) -> int:
    """llvm-cpu's inner-tiled matmuls (the cpu target's flags) cannot compile a dot_general one of whose
    operands has no free dimension longer than 1 (a vector times a matrix: "'iree_codegen.inner_tiled' op
    shape does not match iteration bounds"), which would send the whole module to the fallback flags.
    Such a product reads each matrix element once anyway: a multiply and a sum over the contracted
    dimensions, which IREE fuses into one reduction."""
    count = 0
    for op in list(_walk(module.operation)):
        if op.name != "stablehlo.dot_general":
            continue
        lhs, rhs = op.operands
        lhs_batch, rhs_batch, lhs_contract, rhs_contract = dot_dimensions(op)
        out = dtype_of(op.results[0].type)
        sides = []
        for x, batch, contract in ((lhs, lhs_batch, lhs_contract), (rhs, rhs_batch, rhs_contract)):
            shape = shape_of(x.type)
            free = [d for d in range(len(shape)) if d not in (*batch, *contract)]
            sides.append((x, batch, free, contract, shape))
        if all(int(np.prod([side[4][d] for d in side[2]])) > 1 for side in sides) or out.kind == "b":
            continue
        (x, xb, xf, xc, xs), (y, yb, yf, yc, ys) = sides
        nb, nxf, nyf = len(xb), len(xf), len(yf)
        full = [xs[d] for d in xb] + [xs[d] for d in xf] + [ys[d] for d in yf] + [xs[d] for d in xc]
        contracted = list(range(nb + nxf + nyf, len(full)))
        with ir.InsertionPoint(op), op.location:
            def spread(t, order, places):   # t's dimensions `order` moved to `places` of the full shape
                t = t if dtype_of(t.type) == out else hlo.convert(t, out)
                return hlo.broadcast_in_dim(hlo.transpose(t, order), full, places)
            a = spread(x, [*xb, *xf, *xc], [*range(nb + nxf), *contracted])
            b = spread(y, [*yb, *yf, *yc], [*range(nb), *range(nb + nxf, nb + nxf + nyf), *contracted])
            new = hlo.reduce([hlo.binary("multiply", a, b)], [hlo.constant(0, out)], contracted, "add")[0]
        op.result.replace_all_uses_with(new)
        op.erase()
        count += 1
    return count


def fold_constants_of_pairs(module: ir.Module) -> int:
    """fold_constants again after complex values became real pairs: a complex constant's parts are constants, and
    what the pair rules build on them (Smith's division by (2+0j): |re| >= |im|, the quotients) would go to
    IREE's const-eval (4.4 s of the complex128 op table's 19 s compile). The pairs' ends stay complex."""
    return fold_constants(module, complex_results=False)


# Calls and composites are inlined first (legalize.py: the rewrites work function by function); on llvm-cpu the
# composites a hand-written kernel claims become its dispatches instead, before any other rewrite (kernels.py).
# Constant-only expressions are folded next (constant_folding.py: by the reference's meaning of each op, before
# IREE's const-eval JIT-compiles them for seconds each), so no rewrite after sees them; again once complex values are
# real pairs (fold_constants_of_pairs).
# The patterns IREE fails to compile come next (compile_rewrites.py: empty contractions, i1 windows, selected
# scatter updates, the double rounding of int -> f32 -> bf16 kept on vmvx and llvm-cpu, vmvx's f64 -> int, llvm-cpu's
# bf16 converts rounded once); FFTs IREE cannot lower become real matrix products next (fft_rewrites.py: f64 ones,
# on llvm-cpu and cuda f32 ones but 1-D ones of power-of-two lengths, on vmvx every one) and
# chlo.square basic ops (legalize.py); on the CPUs CHLO is expanded then, and stable sorts sort by position after it
# (sort_rewrites.py: chlo.top_k's sort among them; their comparators get every later fix), sorts kept apart from their
# slices on every target (on cuda also their slice operands and dead results), and on the CPUs long sorts become
# sorting networks (sort_networks.py: IREE's sort is quadratic in the length); then complex values real pairs
# (complex_pairs.py; on cuda its complex math ops, pads and slice updates alone), then the spec's meaning
# (legalize.py: the compares it builds get vmvx's NaN fix after), then each target's own;
# llvm-cpu's speed rewrites last (a strided convolution's input gradient by stride phases, conv_phases.py, a
# kernel's as a product of patches, conv_gradients.py, and transposed products as products of swapped operands,
# layout.py, which vmvx and cuda get first; the input dilations left as padding; layout.py: one channels-last layout for the whole module; then winograd.py's, where HLOJIT_WINOGRAD asks
# for it; then the convolutions of many input channels as products of patches on the flag sets without the matmul
# kernels (conv_patches.py); then
# select_and_scatter's rewrite (window_scatters.py: after the layout, which moves the op channels last; vmvx and cuda
# get it after the spec's meaning); then the hand-written products and convolutions of the matmul-kernels flag sets, softmaxes and layer norms on every flag set:
# matmul_kernel.py, normalization_kernels.py), and after it the matmul operands IREE's llvm-cpu codegen cannot take as they are (compile_rewrites.py: spread splats on every
# flag set, then the data-tiled builds' slices, bools and updates); cuda's gathers of slices read copies last
# (compile_rewrites.py).
# accurate_math.py's and linalg_rewrites.py's basic ops come before legalize's (their floors get its subnormal
# fix) and vmvx's own (their compares get its NaN fix). llvm-cpu and vmvx expand CHLO first (legalize.py), so the ops of
# its expansions get every rewrite after; bf16 goes to f32 after the rewrites that build bf16 ops, before the NaN fix.
# Float compares by bits (subnormal_compares.py) come after every rewrite that builds compares, bf16's and f16's
# widening included (so vmvx's NaN fix finds no float compare it would still have to mend), and on llvm-cpu after
# the layout too: its bitcasts would stop the layout at every compare (a relu's gradient mask, ResNet's stem).
_SPEC_OPS = scatter_rewrites.ALL_TARGETS
_CPU_SPEC = _SPEC_OPS + legalize.CPU_FIRST + accurate_math.CPU + legalize.ALL_TARGETS + legalize.CPU
_FIRST = [legalize.calls_inlined, fold_constants] + compile_rewrites.ALL_TARGETS
_CPU_FIRST = [kernels.calls_inlined_but_kernels, kernels.kernel_dispatches, fold_constants] + \
    compile_rewrites.ALL_TARGETS
_BEFORE_CHLO = legalize.BEFORE_COMPLEX_PAIRS + linalg_rewrites.ALL_TARGETS
_GRADIENT_LAYOUTS = [conv_phases.lhs_dilations_by_phases, conv_gradients.kernel_gradients_as_products,
                     layout.transposed_products_swapped]
QUIRKS = {"vmvx": _FIRST + _GRADIENT_LAYOUTS + [ffts_as_real_dft] + _BEFORE_CHLO
                  + compile_rewrites.VMVX + legalize.CHLO_FIRST
                  + sort_rewrites.CPU + [sort_networks.sorts_by_network, complex_as_real_pairs, fold_constants_of_pairs]
                  + _CPU_SPEC
                  + window_scatters.ALL_TARGETS + vmvx_rewrites.AFTER_SPEC + accurate_math.VMVX + [
                  truncate_before_float_to_int, vmvx_rewrites.bf16_arithmetic_in_f32,
                  vmvx_rewrites.f16_arithmetic_in_f32, vmvx_rewrites.f16_converts_by_bits, float_compares_by_bits,
                  nan_aware_float_compares,
                  narrow_int_to_f64_by_bits],
          "cpu": _CPU_FIRST + [ffts_beyond_iree_as_real_dft] + _BEFORE_CHLO + compile_rewrites.CPU
                 + legalize.CHLO_FIRST + sort_rewrites.CPU
                 + [sort_networks.sorts_by_network, complex_as_real_pairs_native_ends, fold_constants_of_pairs]
                 + _CPU_SPEC + [
              vector_products_as_reductions, *_GRADIENT_LAYOUTS, conv_gradients.lhs_dilation_as_padding,
              layout.channels_last, requested_winograd, conv_patches.convolutions_as_patch_products,
              *window_scatters.ALL_TARGETS, float_compares_by_bits, matmul_kernel.matmuls_by_kernel, normalization_kernels.softmaxes_by_kernel,
              normalization_kernels.layer_norms_by_kernel] + compile_rewrites.CPU_AFTER_PAIRS + compile_rewrites.CPU_DATA_TILING,
          "cuda": _FIRST + _GRADIENT_LAYOUTS + sort_rewrites.CUDA + [ffts_beyond_iree_as_real_dft] + _BEFORE_CHLO
                  + [complex_math_by_parts, fold_constants_of_pairs]
                  + _SPEC_OPS + window_scatters.ALL_TARGETS + accurate_math.CUDA + legalize.ALL_TARGETS + legalize.CUDA
                  + compile_rewrites.CUDA}


# The cpu rewrites only some flag sets take, each with the test of a target that says whether it does (every
# other rewrite of a target runs on all its flag sets)
_FLAG_SET_RULES = {
    **{rewrite: data_tiled for rewrite in compile_rewrites.CPU_DATA_TILING},
    matmul_kernel.matmuls_by_kernel: uses_matmul_kernels,
    conv_patches.convolutions_as_patch_products: lambda t: not uses_matmul_kernels(t),
}


def apply(module: ir.Module, target: Target) -> dict:
    """Rewrite `module` for `target`; {rewrite name: ops rewritten} of those that changed something, in the
    order they ran (what `explain` lists and an artifact's manifest counts)."""
    with module.context:
        return {quirk.__name__: n for quirk in QUIRKS.get(target.name, ())
                if _FLAG_SET_RULES.get(quirk, _always)(target) and (n := quirk(module))}


def _always(target: Target) -> bool:
    return True
