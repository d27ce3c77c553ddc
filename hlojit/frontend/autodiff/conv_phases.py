"""A convolution with lhs dilation (the input gradient of a strided convolution, a transposed convolution)
as one ordinary convolution per stride phase, interleaved.

The input gradient of a stride-s convolution is a convolution of the cotangent dilated by s (s - 1 zeros
between its elements). IREE 3.13 builds the dilated tensor and convolves it whole, so s^2 - 1 of every s^2
products it computes (2-D) are with zeros (measured: the input gradient of ResNet-18's 3x3/2 64->128
convolution at batch 8, 2.5x slower than XLA's; its 1x1/2 one 12x). Output position i = s q + r only
meets the kernel taps k with (r + k d - pad_low) divisible by s, a strided subset of them: each phase r is
a stride-1 convolution of the undilated cotangent with that sub-kernel, and the phases interleave into
the output (a concatenation along a new axis after each spatial one, merged into it by a reshape). The
products computed are exactly the nonzero ones, each output element the same sum in the same order.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass

from .. import ops
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


def conv_by_phases(lhs, rhs, spec, padding, lhs_dilation, rhs_dilation, conv):
    """The convolution of lhs with rhs at window strides 1, `padding`, `lhs_dilation` and `rhs_dilation`,
    built from convolutions without lhs dilation: `conv(lhs, rhs, padding, rhs_dilation)` builds one (its
    spec, groups and dtype bound). spec: JAX's (lhs_spec, rhs_spec, out_spec) index tuples."""
    lhs_spec, rhs_spec, out_spec = spec
    lengths = [lhs.shape[a] for a in lhs_spec[2:]]
    windows = [rhs.shape[a] for a in rhs_spec[2:]]
    outs = [(length - 1) * s + 1 + lo + hi - (w - 1) * d for length, s, (lo, hi), w, d in
            zip(lengths, lhs_dilation, padding, windows, rhs_dilation)]
    per_dim = [phases(length, w, s, d, lo, out) for length, w, s, d, (lo, _), out in
               zip(lengths, windows, lhs_dilation, rhs_dilation, padding, outs)]
    full = [-(-out // s) for out, s in zip(outs, lhs_dilation)]
    out_shape = list(lhs.shape)
    out_shape[out_spec[0]] = lhs.shape[lhs_spec[0]]
    out_shape[out_spec[1]] = rhs.shape[rhs_spec[0]]
    for a, size in zip(out_spec[2:], outs):
        out_shape[a] = size
    results = {}
    for index in itertools.product(*[range(s) for s in lhs_dilation]):
        chosen = [per_dim[i][r] for i, r in enumerate(index)]
        results[index] = _padded_to(_phase(lhs, rhs, spec, chosen, conv, out_shape), out_spec, full)
    return _interleave(results, out_spec, lhs_dilation, outs, ())


def _phase(lhs, rhs, spec, chosen, conv, out_shape):
    """One phase's output (its own size in each spatial dimension): the sub-kernel's convolution with the
    part of lhs its windows reach, or zeros where no tap reaches it."""
    lhs_spec, rhs_spec, out_spec = spec
    shape = list(out_shape)
    for a, ph in zip(out_spec[2:], chosen):
        shape[a] = ph.size
    if any(ph.taps == 0 or ph.size == 0 for ph in chosen):
        return ops.zeros(tuple(shape), lhs.dtype)
    start, limit, strides = [0] * rhs.ndim, list(rhs.shape), [1] * rhs.ndim
    for a, ph in zip(rhs_spec[2:], chosen):
        start[a], limit[a], strides[a] = ph.first, ph.first + (ph.taps - 1) * ph.step + 1, ph.step
    whole = (start, limit, strides) == ([0] * rhs.ndim, list(rhs.shape), [1] * rhs.ndim)
    kernel = rhs if whole else slice_(rhs, start, limit, strides)
    low, high, cut = [0] * lhs.ndim, list(lhs.shape), False
    padding = []
    for a, ph in zip(lhs_spec[2:], chosen):   # negative padding as a slice: every op takes it so
        lo = -ph.start
        hi = ph.size - lhs.shape[a] - lo + (ph.taps - 1) * ph.dilation
        if lo < 0:
            low[a], lo, cut = -lo, 0, True
        if hi < 0:
            high[a], hi, cut = lhs.shape[a] + hi, 0, True
        padding.append((lo, hi))
    source = slice_(lhs, low, high) if cut else lhs
    return conv(source, kernel, padding, [ph.dilation for ph in chosen])


def _padded_to(t, out_spec, full):
    """t zero-padded at the end of each spatial dimension to `full` (every phase the same shape)."""
    high = [0] * t.ndim
    for a, size in zip(out_spec[2:], full):
        high[a] = size - t.shape[a]
    return pad(t, 0, [0] * t.ndim, high) if any(high) else t


def _interleave(results, out_spec, strides, outs, prefix):
    """The phases whose index starts with `prefix`, interleaved along the spatial dimensions from
    len(prefix) on: element q of phase r lands at s q + r."""
    i = len(prefix)
    if i == len(strides):
        return results[prefix]
    parts = [_interleave(results, out_spec, strides, outs, prefix + (r,)) for r in range(strides[i])]
    if strides[i] == 1:
        return parts[0]
    axis = out_spec[2 + i]
    shape = list(parts[0].shape)
    split = shape[:axis + 1] + [1] + shape[axis + 1:]
    stacked = ops.concatenate([ops.reshape(p, tuple(split)) for p in parts], axis=axis + 1)
    shape[axis] *= strides[i]
    merged = ops.reshape(stacked, tuple(shape))
    if shape[axis] == outs[i]:
        return merged
    limit = list(shape)
    limit[axis] = outs[i]
    return slice_(merged, [0] * len(shape), limit)
