"""The input gradient of a strided convolution without lhs dilation: by stride phases.

The input gradient of a stride-s convolution is a convolution of the cotangent dilated by s (s - 1 zeros
between its elements). IREE 3.13 builds the dilated tensor and convolves it whole, so s^2 - 1 of every s^2
products it computes (2-D) are with zeros (measured at batch 8: the input gradient of ResNet-18's 3x3/2
64->128 convolution ran at 0.54x XLA's speed, its 1x1/2 one at 0.08x). Output position i = s q + r only
meets the kernel taps k with (r + k d - pad_low) divisible by s, a strided subset: phase r is a stride-1
convolution of the undilated cotangent with that sub-kernel, and the phases interleave into the output
(stacked, then one transpose and a reshape). Without feature groups every tap's products come from one
matmul of the cotangent with all the taps side by side ([rows, C] @ [C, window * O]), which each phase
sums shifted into place (col2im as pads and adds): the products computed are exactly the nonzero ones.
With groups (or a product matrix past nn.IM2COL_MAX_ELEMENTS) each phase is a convolution.
Stride-1 gradients stay one convolution: there the tap products would be window times the output's size.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from ...dialects import stablehlo as hlo
from .. import ops
from ..ops import nn
from ..ops._core import emit
from .rules_shape import op_result, pad, slice_


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


def conv_by_phases(lhs, rhs, spec, padding, lhs_dilation, rhs_dilation, groups):
    """The convolution of lhs with rhs at window strides 1, `padding`, `lhs_dilation` and `rhs_dilation`,
    built from convolutions without lhs dilation. spec: JAX's (lhs_spec, rhs_spec, out_spec) index tuples.
    The phases are computed channels last (one transpose of lhs and of the result at most)."""
    lhs_spec, rhs_spec, out_spec = spec
    n = len(lhs_spec) - 2
    x = _permuted(lhs, [lhs_spec[0], *lhs_spec[2:], lhs_spec[1]])                      # N, *spatial, C
    kernel = _permuted(rhs, [*rhs_spec[2:], rhs_spec[1], rhs_spec[0]])                  # *window, C, O
    outs = [(length - 1) * s + 1 + lo + hi - (w - 1) * d for length, s, (lo, hi), w, d in
            zip(x.shape[1:-1], lhs_dilation, padding, kernel.shape[:n], rhs_dilation)]
    per_dim = [phases(length, w, s, d, lo, out) for length, w, s, d, (lo, _), out in
               zip(x.shape[1:-1], kernel.shape[:n], lhs_dilation, rhs_dilation, padding, outs)]
    full = [-(-out // s) for out, s in zip(outs, lhs_dilation)]
    rows = x.shape[0] * int(np.prod(x.shape[1:-1], dtype=np.int64))
    products = _tap_products(x, kernel) if groups == 1 and rows * kernel.size // x.shape[-1] <= \
        nn.IM2COL_MAX_ELEMENTS else None
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


def _permuted(t, perm):
    return t if list(perm) == list(range(t.ndim)) else ops.transpose(t, perm)


def _phase(x, kernel, chosen, groups):
    """One phase's output [N, *its sizes, O]: the sub-kernel's convolution with the part of x [N, *spatial,
    C] its windows reach (kernel [*window, C / groups, O]), or zeros where no tap reaches it."""
    n = len(chosen)
    if any(ph.taps == 0 or ph.size == 0 for ph in chosen):
        return ops.zeros((x.shape[0], *[ph.size for ph in chosen], kernel.shape[-1]), x.dtype)
    start = [ph.first for ph in chosen] + [0, 0]
    limit = [ph.first + (ph.taps - 1) * ph.step + 1 for ph in chosen] + list(kernel.shape[n:])
    steps = [ph.step for ph in chosen] + [1, 1]
    whole = (start, limit, steps) == ([0] * kernel.ndim, list(kernel.shape), [1] * kernel.ndim)
    sub = kernel if whole else slice_(kernel, start, limit, steps)
    low, high, padding = [0] * x.ndim, list(x.shape), []
    for a, ph in enumerate(chosen, start=1):   # negative padding as a slice: every op takes it so
        lo = -ph.start
        hi = ph.size - x.shape[a] - lo + (ph.taps - 1) * ph.dilation
        if lo < 0:
            low[a], lo = -lo, 0
        if hi < 0:
            high[a], hi = x.shape[a] + hi, 0
        padding.append((lo, hi))
    source = x if (low, high) == ([0] * x.ndim, list(x.shape)) else slice_(x, low, high)
    dilations = [ph.dilation for ph in chosen]
    last = (0, n + 1, *range(1, n + 1))
    return convolution(source, sub, (last, (n + 1, n, *range(n)), last), [1] * n, padding, [1] * n, dilations,
                       groups, 1, x.dtype)


def _tap_products(x, kernel):
    """x [N, *spatial, C] times each kernel tap [C, O]: [N, *spatial, *window, O], one matmul with
    window * O columns. IREE 3.13's own convolutions with as many input channels as a gradient's run many
    times slower than its data-tiled matmuls (measured: ResNet-18's 3x3/2 64->128 input gradient, 936 ms
    against 150 ms as im2col + matmul at a load of 20)."""
    n = x.ndim - 2
    rows = int(np.prod(x.shape[:-1], dtype=np.int64))
    window, c, o = kernel.shape[:n], kernel.shape[n], kernel.shape[-1]
    taps = ops.reshape(_permuted(kernel, [n, *range(n), n + 1]), (c, int(np.prod(window)) * o))
    flat = ops.matmul(ops.reshape(x, (rows, c)), taps)
    return ops.reshape(flat, (*x.shape[:-1], *window, o))


def _phase_of_products(products, chosen, full):
    """One phase [N, *full, O] of the tap products [N, *spatial, *window, O]."""
    n = len(chosen)
    shape = products.shape

    def tap(ks):
        start = [0] * (n + 1) + list(ks) + [0]
        limit = list(shape[:n + 1]) + [k + 1 for k in ks] + [shape[-1]]
        return ops.reshape(slice_(products, start, limit), (shape[0], *shape[1:n + 1], shape[-1]))
    return shifted_sum(tap, chosen, (shape[0], *full, shape[-1]), list(range(1, n + 1)), products.dtype)


def shifted_sum(tap, chosen, shape, axes, dtype):
    """One phase (of `shape`, its phase dimensions at `axes`) as the sum over its taps of tap(tap indices),
    each shifted into place (a col2im by pads and adds: IREE makes a dispatch of each pad and its add);
    zeros where no tap reaches it. Phase q of dimension i takes element q + start + t * dilation of tap
    first + t * step. (One pad of all the taps' products, sliced, measured no faster: it copies them.)"""
    if any(ph.taps == 0 or ph.size == 0 for ph in chosen):
        return ops.zeros(tuple(shape), dtype)
    total = None
    for ts in itertools.product(*[range(ph.taps) for ph in chosen]):
        part = tap(tuple(ph.first + t * ph.step for ph, t in zip(chosen, ts)))
        low, high = [0] * part.ndim, [0] * part.ndim
        for a, ph, t in zip(axes, chosen, ts):
            offset = ph.start + t * ph.dilation
            low[a], high[a] = -offset, shape[a] - part.shape[a] + offset
        shifted = pad(part, 0, low, high) if any(low) or any(high) else part
        total = shifted if total is None else total + shifted
    return total


def _padded_to(t, full):
    """t [N, *spatial, O] zero-padded at the end of each spatial dimension to `full` (every phase the same
    shape)."""
    high = [0, *[size - d for size, d in zip(full, t.shape[1:-1])], 0]
    return pad(t, 0, [0] * t.ndim, high) if any(high) else t


def interleave(results, strides, outs, axes, order):
    """The phases (one shape; the phase dimensions at `axes`) interleaved: element q of phase r lands at
    s q + r, and the result has the phases' axis order[p] at position p. Stacked [*strides, *phase],
    then one transpose to [..., full_i, s_i, ...], which a reshape merges, and cut to `outs`."""
    n = len(strides)
    first = next(iter(results.values()))
    if all(s == 1 for s in strides):
        merged = _permuted(first, order)
    else:
        stacked = ops.reshape(ops.stack(list(results.values()), axis=0), (*strides, *first.shape))
        expanded = [[n + a, axes.index(a)] if a in axes else [n + a] for a in order]
        moved = _permuted(stacked, [axis for group in expanded for axis in group])
        merged = ops.reshape(moved, tuple(int(np.prod([stacked.shape[axis] for axis in group])) for group in expanded))
    limit = [outs[axes.index(a)] if a in axes else size for a, size in zip(order, merged.shape)]
    return merged if limit == list(merged.shape) else slice_(merged, [0] * merged.ndim, limit)


def spec_text(lhs_spec, rhs_spec, out_spec) -> str:
    def labels(spec, first, second):
        out = [""] * len(spec)
        out[spec[0]], out[spec[1]] = first, second
        for i, d in enumerate(spec[2:]):
            out[d] = str(i)
        return "[" + ", ".join(out) + "]"
    return f"{labels(lhs_spec, 'b', 'f')}x{labels(rhs_spec, 'o', 'i')}->{labels(out_spec, 'b', 'f')}"


def convolution(lhs, rhs, spec, strides, padding, lhs_dilation, rhs_dilation, groups, batch_groups, dtype):
    value = emit(hlo.convolution, lhs.value, rhs.value, dimension_numbers=spec_text(*spec), strides=list(strides),
                 padding=[tuple(int(v) for v in pair) for pair in padding], lhs_dilation=list(lhs_dilation),
                 rhs_dilation=list(rhs_dilation), feature_group_count=groups, batch_group_count=batch_groups)
    return op_result(value, dtype)
