"""A strided convolution's input gradient by stride phases: the target rewrite of an input-dilated convolution (JAX's
rule, and hlojit's autodiff's since 2026-12-07), on every target.

The input gradient of a stride-s convolution is a convolution of the cotangent dilated by s (`lhs_dilation`: s - 1
zeros between its elements). IREE 3.13 builds the dilated tensor and convolves it whole, so s^2 - 1 of every s^2
products it computes (2-D) are with zeros (measured at batch 8: the input gradient of ResNet-18's 3x3/2 64->128
convolution ran at 0.54x XLA's speed, its 1x1/2 one at 0.08x; in JAX's own ResNet-18 step through hj.from_mlir
layer 4's took 508 ms of 1.9 s). Output position i = s q + r only meets the kernel taps k with (r + k d - pad_low)
divisible by s, a strided subset: phase r is a stride-1 convolution of the undilated cotangent with that sub-kernel,
and the phases interleave into the output (stacked, then one transpose and a reshape). Without feature groups every
tap's products come from one matmul of the cotangent with all the taps side by side ([rows, C] @ [C, window * O]),
which each phase sums shifted into place (col2im as pads and adds): the products computed are exactly the nonzero
ones. With groups (or a product matrix past MAX_PRODUCT_ELEMENTS) each phase is a convolution. Convolutions with
an input dilation and a window stride, or batch groups, are left (conv_gradients.lhs_dilation_as_padding takes
them on llvm-cpu). This was autodiff/conv_phases.py, built with the op library; here it is the same ops, so
hlojit's own gradients compile to the same program (ResNet-18's step bit for bit)."""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

from iree.compiler import ir

from ..dialects import stablehlo as hlo
from ..dialects.types import dtype_of, shape_of
from .legalize import replace_each
from .winograd import conv_attribute_int, conv_attribute_ints, conv_dimensions, transposed

MAX_PRODUCT_ELEMENTS = 1 << 25   # the tap products' matrix at most (as hlojit's im2col bound, ops.nn)


@dataclass(frozen=True)
class Phase:
    """One output phase r of one spatial dimension: output elements r, r + s, r + 2s ... (`size` of them),
    each a window of `taps` kernel taps from `first` every `step`, over the cotangent from `start` every
    `dilation`."""
    size: int
    first: int = 0
    taps: int = 0
    step: int = 1
    start: int = 0
    dilation: int = 1


def phases(length: int, window: int, stride: int, dilation: int, low: int, out: int) -> list[Phase]:
    """The `stride` phases of one spatial dimension of a convolution over a cotangent of `length`
    elements dilated by `stride` and padded by `low` before, with a `window`-tap kernel dilated by
    `dilation`, giving `out` elements (stride 1: one phase, the convolution itself)."""
    found = []
    for r in range(stride):
        size = max(0, -(-(out - r) // stride))
        taps = [k for k in range(window) if (r + k * dilation - low) % stride == 0]
        if not taps or size == 0:
            found.append(Phase(size))
            continue
        step = taps[1] - taps[0] if len(taps) > 1 else 1
        found.append(Phase(size, taps[0], len(taps), step, (r + taps[0] * dilation - low) // stride,
                           step * dilation // stride if len(taps) > 1 else 1))
    return found


# --- the few array operations the phases need, on ir.Values --------------------------------------

def _zeros(shape, dtype) -> ir.Value:
    return hlo.broadcast_in_dim(hlo.constant(0, dtype), list(shape), [])


def _pad(t: ir.Value, low, high) -> ir.Value:
    return hlo.pad(t, hlo.constant(0, dtype_of(t.type)), low, high)


# --- the rewrite ---------------------------------------------------------------------------------

def _by_phases(op) -> bool:
    if op.name != "stablehlo.convolution":
        return False
    spatial = len(shape_of(op.operands[0].type)) - 2
    return (any(d != 1 for d in conv_attribute_ints(op, "lhs_dilation", [1] * spatial))
            and conv_attribute_ints(op, "window_strides", [1] * spatial) == [1] * spatial
            and conv_attribute_int(op, "batch_group_count") == 1
            and 0 not in shape_of(op.operands[0].type) + shape_of(op.results[0].type))


def lhs_dilations_by_phases(module: ir.Module) -> int:
    """Each input-dilated convolution of window stride 1 and no batch groups as its stride phases."""
    return replace_each(module, _by_phases, _phased)


def _phased(op) -> ir.Value:
    lhs, rhs = op.operands
    dims = conv_dimensions(op)
    n = len(shape_of(lhs.type)) - 2
    spec = tuple((d[first], d[second], *(d[s] for s in range(n)))
                 for d, (first, second) in zip((dims["lhs"], dims["rhs"], dims["out"]), (("b", "f"), ("o", "i"),
                                                                                        ("b", "f"))))
    padding = conv_attribute_ints(op, "padding", [0] * (2 * n))
    return conv_by_phases(lhs, rhs, spec, list(zip(padding[0::2], padding[1::2])),
                          conv_attribute_ints(op, "lhs_dilation", [1] * n),
                          conv_attribute_ints(op, "rhs_dilation", [1] * n), conv_attribute_int(op, "feature_group_count"))


def conv_by_phases(lhs, rhs, spec, padding, lhs_dilation, rhs_dilation, groups) -> ir.Value:
    """The convolution of lhs with rhs at window strides 1, `padding`, `lhs_dilation` and `rhs_dilation`,
    built from convolutions without lhs dilation. spec: JAX's (lhs_spec, rhs_spec, out_spec) index tuples.
    The phases are computed channels last (one transpose of lhs and of the result at most)."""
    lhs_spec, rhs_spec, out_spec = spec
    n = len(lhs_spec) - 2
    x = transposed(lhs, [lhs_spec[0], *lhs_spec[2:], lhs_spec[1]])                      # N, *spatial, C
    kernel = transposed(rhs, [*rhs_spec[2:], rhs_spec[1], rhs_spec[0]])                  # *window, C, O
    x_shape, k_shape = shape_of(x.type), shape_of(kernel.type)
    outs = [(length - 1) * s + 1 + lo + hi - (w - 1) * d for length, s, (lo, hi), w, d in
            zip(x_shape[1:-1], lhs_dilation, padding, k_shape[:n], rhs_dilation)]
    per_dim = [phases(length, w, s, d, lo, out) for length, w, s, d, (lo, _), out in
               zip(x_shape[1:-1], k_shape[:n], lhs_dilation, rhs_dilation, padding, outs)]
    full = [-(-out // s) for out, s in zip(outs, lhs_dilation)]
    rows = x_shape[0] * math.prod(x_shape[1:-1])
    products = _tap_products(x, kernel) if groups == 1 and rows * math.prod(k_shape) // x_shape[-1] <= \
        MAX_PRODUCT_ELEMENTS else None
    results = {}
    for index in itertools.product(*[range(s) for s in lhs_dilation]):
        chosen = [per_dim[i][r] for i, r in enumerate(index)]
        if products is not None:
            results[index] = _phase_of_products(products, chosen, full)
        else:
            results[index] = _padded_to(_phase(x, kernel, chosen, groups), full)
    order = [0] * (n + 2)
    order[out_spec[0]], order[out_spec[1]] = 0, n + 1
    for i, a in enumerate(out_spec[2:]):
        order[a] = 1 + i
    return interleave(results, lhs_dilation, outs, list(range(1, n + 1)), order)


def _phase(x, kernel, chosen, groups) -> ir.Value:
    """One phase's output [N, *its sizes, O]: the sub-kernel's convolution with the part of x [N, *spatial,
    C] its windows reach (kernel [*window, C / groups, O]), or zeros where no tap reaches it."""
    n = len(chosen)
    x_shape, k_shape = shape_of(x.type), shape_of(kernel.type)
    if any(ph.taps == 0 or ph.size == 0 for ph in chosen):
        return _zeros((x_shape[0], *[ph.size for ph in chosen], k_shape[-1]), dtype_of(x.type))
    start = [ph.first for ph in chosen] + [0, 0]
    limit = [ph.first + (ph.taps - 1) * ph.step + 1 for ph in chosen] + list(k_shape[n:])
    steps = [ph.step for ph in chosen] + [1, 1]
    whole = (start, limit, steps) == ([0] * len(k_shape), list(k_shape), [1] * len(k_shape))
    sub = kernel if whole else hlo.slice(kernel, start, limit, steps)
    low, high, padding = [0] * len(x_shape), list(x_shape), []
    for a, ph in enumerate(chosen, start=1):   # negative padding as a slice: every op takes it so
        lo = -ph.start
        hi = ph.size - x_shape[a] - lo + (ph.taps - 1) * ph.dilation
        if lo < 0:
            low[a], lo = -lo, 0
        if hi < 0:
            high[a], hi = x_shape[a] + hi, 0
        padding.append((lo, hi))
    source = x if (low, high) == ([0] * len(x_shape), list(x_shape)) else hlo.slice(x, low, high)
    last = (0, n + 1, *range(1, n + 1))
    return hlo.convolution(source, sub, dimension_numbers=hlo.conv_spec_text(last, (n + 1, n, *range(n)), last),
                           strides=[1] * n, padding=padding, lhs_dilation=[1] * n,
                           rhs_dilation=[ph.dilation for ph in chosen], feature_group_count=groups)


def _tap_products(x, kernel) -> ir.Value:
    """x [N, *spatial, C] times each kernel tap [C, O]: [N, *spatial, *window, O], one matmul with
    window * O columns. IREE 3.13's own convolutions with as many input channels as a gradient's run many
    times slower than its data-tiled matmuls (measured: ResNet-18's 3x3/2 64->128 input gradient, 936 ms
    against 150 ms as im2col + matmul at a load of 20)."""
    x_shape, k_shape = shape_of(x.type), shape_of(kernel.type)
    n = len(x_shape) - 2
    rows = math.prod(x_shape[:-1])
    window, c, o = k_shape[:n], k_shape[n], k_shape[-1]
    taps = hlo.reshape(transposed(kernel, [n, *range(n), n + 1]), [c, math.prod(window) * o])
    flat = hlo.dot_general(hlo.reshape(x, [rows, c]), taps, lhs_contract=[1], rhs_contract=[0])
    return hlo.reshape(flat, [*x_shape[:-1], *window, o])


def _phase_of_products(products, chosen, full) -> ir.Value:
    """One phase [N, *full, O] of the tap products [N, *spatial, *window, O]."""
    n = len(chosen)
    shape = shape_of(products.type)

    def tap(ks):
        start = [0] * (n + 1) + list(ks) + [0]
        limit = list(shape[:n + 1]) + [k + 1 for k in ks] + [shape[-1]]
        return hlo.reshape(hlo.slice(products, start, limit), [shape[0], *shape[1:n + 1], shape[-1]])
    return shifted_sum(tap, chosen, (shape[0], *full, shape[-1]), list(range(1, n + 1)), dtype_of(products.type))


def shifted_sum(tap, chosen, shape, axes, dtype) -> ir.Value:
    """One phase (of `shape`, its phase dimensions at `axes`) as the sum over its taps of tap(tap indices),
    each shifted into place (a col2im by pads and adds: IREE makes a dispatch of each pad and its add);
    zeros where no tap reaches it. Phase q of dimension i takes element q + start + t * dilation of tap
    first + t * step. (One pad of all the taps' products, sliced, measured no faster: it copies them.)"""
    if any(ph.taps == 0 or ph.size == 0 for ph in chosen):
        return _zeros(shape, dtype)
    total = None
    for ts in itertools.product(*[range(ph.taps) for ph in chosen]):
        part = tap(tuple(ph.first + t * ph.step for ph, t in zip(chosen, ts)))
        part_shape = shape_of(part.type)
        low, high = [0] * len(part_shape), [0] * len(part_shape)
        for a, ph, t in zip(axes, chosen, ts):
            offset = ph.start + t * ph.dilation
            low[a], high[a] = -offset, shape[a] - part_shape[a] + offset
        shifted = _pad(part, low, high) if any(low) or any(high) else part
        total = shifted if total is None else hlo.binary("add", total, shifted)
    return total


def _padded_to(t, full) -> ir.Value:
    """t [N, *spatial, O] zero-padded at the end of each spatial dimension to `full` (every phase the same
    shape)."""
    shape = shape_of(t.type)
    high = [0, *[size - d for size, d in zip(full, shape[1:-1])], 0]
    return _pad(t, [0] * len(shape), high) if any(high) else t


def interleave(results, strides, outs, axes, order) -> ir.Value:
    """The phases (one shape; the phase dimensions at `axes`) interleaved: element q of phase r lands at
    s q + r, and the result has the phases' axis order[p] at position p. Stacked [*strides, *phase],
    then one transpose to [..., full_i, s_i, ...], which a reshape merges, and cut to `outs`."""
    n = len(strides)
    first = next(iter(results.values()))
    first_shape = shape_of(first.type)
    if all(s == 1 for s in strides):
        merged = transposed(first, order)
    else:
        stacked = hlo.concatenate([hlo.reshape(r, [1, *first_shape]) for r in results.values()], 0)
        stacked = hlo.reshape(stacked, [*strides, *first_shape])
        stacked_shape = shape_of(stacked.type)
        expanded = [[n + a, axes.index(a)] if a in axes else [n + a] for a in order]
        moved = transposed(stacked, [axis for group in expanded for axis in group])
        merged = hlo.reshape(moved, [math.prod(stacked_shape[axis] for axis in group) for group in expanded])
    merged_shape = shape_of(merged.type)
    limit = [outs[axes.index(a)] if a in axes else size for a, size in zip(order, merged_shape)]
    return merged if limit == list(merged_shape) else hlo.slice(merged, [0] * len(merged_shape), limit)
