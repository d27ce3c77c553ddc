"""Convolution and windowed reductions, as StableHLO defines them, with numpy's sliding windows and BLAS.

A convolution becomes, per feature group: pad (negative padding crops), dilate, take every window with
`sliding_window_view`, keep every stride-th, and contract channels and window with `tensordot`.
"""
from __future__ import annotations

import numpy as np
from iree.compiler import ir
from numpy.lib.stride_tricks import sliding_window_view

from ..dialects.types import conv_labels, dtype_of, shape_of
from ..errors import BackendError
from .interpreter import OPS, compile_block
from .structural import _REDUCERS, ufunc_reduce


def _ints(op, name, default, n):
    if name not in op.attributes:
        return [default] * n
    return [int(v) for v in ir.DenseI64ArrayAttr(op.attributes[name])]


def _padding(op, n):
    if "padding" not in op.attributes:
        return [(0, 0)] * n
    return [tuple(int(v) for v in row) for row in np.array(op.attributes["padding"]).reshape(n, 2)]


def _int_attr(op, name, default=1):
    return int(ir.IntegerAttr(op.attributes[name]).value) if name in op.attributes else default


def _pad(x, pads, value):
    """Pad the trailing len(pads) axes by (lo, hi); negative amounts crop, as StableHLO pads do."""
    lead = x.ndim - len(pads)
    x = np.pad(x, [(0, 0)] * lead + [(max(lo, 0), max(hi, 0)) for lo, hi in pads], constant_values=value)
    crop = tuple([slice(None)] * lead + [slice(max(-lo, 0), x.shape[lead + i] - max(-hi, 0))
                                          for i, (lo, hi) in enumerate(pads)])
    return x[crop]


def _dilate(x, factors, axes, fill=0):
    """Holes of `factor - 1` elements (`fill`) between neighbours along `axes`."""
    if all(f == 1 for f in factors):
        return x
    shape = list(x.shape)
    for f, a in zip(factors, axes):
        shape[a] = (shape[a] - 1) * f + 1 if shape[a] else 0
    out = np.full(shape, fill, x.dtype)
    out[tuple(slice(None, None, factors[axes.index(a)]) if a in axes else slice(None) for a in range(x.ndim))] = x
    return out


def convolution_with_padding(op):
    """run(lhs, rhs, pads) of a (dynamic_)convolution, its padding [(lo, hi) per spatial dimension] given at run
    time: stablehlo.convolution's from its attribute, dynamic_conv's from its third operand."""
    lhs_spec, rhs_spec, out_spec = conv_labels(str(op.attributes["dimension_numbers"]))
    spatial = sorted((t for t in lhs_spec if t.isdigit()), key=int)
    n = len(spatial)
    strides, lhs_dil, rhs_dil = (_ints(op, name, 1, n) for name in ("window_strides", "lhs_dilation", "rhs_dilation"))
    groups, batch_groups = _int_attr(op, "feature_group_count"), _int_attr(op, "batch_group_count")
    lhs_perm = [lhs_spec.index("b"), lhs_spec.index("f")] + [lhs_spec.index(s) for s in spatial]
    rhs_perm = [rhs_spec.index("o"), rhs_spec.index("i")] + [rhs_spec.index(s) for s in spatial]
    canonical_out = ["b", "f"] + spatial
    out_perm = [canonical_out.index(t) for t in out_spec]
    dtype, out_shape = dtype_of(op.result.type), shape_of(op.result.type)
    space = list(range(2, 2 + n))

    def conv(x, w):  # x: (N, C, *S) padded and dilated; w: (O, I, *K) dilated
        windows = sliding_window_view(x, w.shape[2:], axis=space)
        windows = windows[(slice(None), slice(None)) + tuple(slice(None, None, s) for s in strides)]
        cg, og = x.shape[1] // groups, w.shape[0] // groups
        parts = [np.tensordot(windows[:, g * cg:(g + 1) * cg], w[g * og:(g + 1) * og],
                              axes=([1] + list(range(2 + n, 2 + 2 * n)), [1] + space)) for g in range(groups)]
        return np.moveaxis(np.concatenate(parts, axis=-1), -1, 1)

    def run(lhs, rhs, pads):
        x, w = np.transpose(lhs, lhs_perm), np.transpose(rhs, rhs_perm)
        if x.dtype.name in ("float16", "bfloat16"):  # accumulate in f32, as IREE does
            x, w = x.astype(np.float32), w.astype(np.float32)
        elif x.dtype.kind in "iu" and dtype != x.dtype:  # i8 x i8 -> i32: products in the result type (the spec)
            x, w = x.astype(dtype), w.astype(dtype)
        x = _pad(_dilate(x, lhs_dil, space), pads, 0)
        w = _dilate(w, rhs_dil, space)
        if batch_groups == 1:
            out = conv(x, w)
        else:  # batch groups pair batch chunks with output-feature chunks (weight gradients)
            nb, ob = x.shape[0] // batch_groups, w.shape[0] // batch_groups
            out = np.concatenate([conv(x[g * nb:(g + 1) * nb], w[g * ob:(g + 1) * ob]) for g in range(batch_groups)],
                                 axis=1)
        return np.ascontiguousarray(np.transpose(out, out_perm)).astype(dtype).reshape(out_shape)
    return run


def _convolution(op):
    run, pads = convolution_with_padding(op), _padding(op, len(shape_of(op.operands[0].type)) - 2)
    return lambda lhs, rhs: run(lhs, rhs, pads)


def _reduce_window(op):
    n_inputs = len(op.results)
    rank = len(shape_of(op.operands[0].type))
    window, strides = _ints(op, "window_dimensions", 1, rank), _ints(op, "window_strides", 1, rank)
    base, spacing = _ints(op, "base_dilations", 1, rank), _ints(op, "window_dilations", 1, rank)
    pads = _padding(op, rank)
    body = op.regions[0].blocks[0]
    body_ops = list(body.operations)
    dtypes = [dtype_of(r.type) for r in op.results]
    take = tuple(slice(None, None, s) for s in strides) + tuple(slice(None, None, d) for d in spacing)
    extent = [(w - 1) * d + 1 for w, d in zip(window, spacing)]   # a dilated window's reach
    no_windows = tuple(shape_of(op.results[0].type)) + tuple(window)

    def windows(x, init):
        """Every window: base dilation and padding filled with the init value (the spec's), then windows of
        `extent` every stride, of which every window-dilation-th element."""
        x = _pad(_dilate(x, base, list(range(rank)), init), pads, init)
        if any(n < e for n, e in zip(x.shape, extent)):   # no window fits (an empty axis): an empty result
            return np.empty(no_windows, x.dtype)
        return sliding_window_view(x, extent)[take]

    name = body_ops[0].operation.name.removeprefix("stablehlo.") if len(body_ops) == 2 else None
    if n_inputs == 1 and name in _REDUCERS:
        axes = tuple(range(rank, 2 * rank))
        return lambda x, init: np.asarray(ufunc_reduce(name, windows(x, init), axes, init), dtype=dtypes[0])
    combine = compile_block(body, "reduce_window_body")

    def run(*operands):  # any body: fold it over the window elements, vectorised over the outputs
        inputs, acc = operands[:n_inputs], list(operands[n_inputs:])
        views = [windows(x, init) for x, init in zip(inputs, acc)]
        flat = [v.reshape(v.shape[:rank] + (-1,)) for v in views]
        acc = [np.broadcast_to(a, flat[0].shape[:rank]) for a in acc]
        for k in range(flat[0].shape[-1]):
            acc = list(combine(*acc, *(f[..., k] for f in flat)))
        results = tuple(np.asarray(a, dtype=d) for a, d in zip(acc, dtypes))
        return results if n_inputs > 1 else results[0]
    return run


def _select_and_scatter(op, functions):
    """For each window of the padded operand, the element the `select` region prefers (the first in the window's
    row-major order, unless select(best, later) says false), never a padding element; into it the matching
    source element, combined by `scatter` starting from the init value; then the padding is cut off. Vectorized
    over the windows: one pass per offset inside the window (a strided view holds that element of every
    window), the regions applied to whole arrays as reduce_window's are."""
    rank = len(shape_of(op.operands[0].type))
    window, strides = _ints(op, "window_dimensions", 1, rank), _ints(op, "window_strides", 1, rank)
    pads = _padding(op, rank)
    select = compile_block(op.regions[0].blocks[0], "select", functions)
    scatter = compile_block(op.regions[1].blocks[0], "scatter", functions)
    dtype = dtype_of(op.result.type)

    def run(operand, source, init):
        padded, inside = _pad(operand, pads, 0), _pad(np.ones(operand.shape, bool), pads, False)
        views = [tuple(slice(o, o + (n - 1) * s + 1, s) for o, n, s in zip(offset, source.shape, strides))
                 for offset in np.ndindex(*window)]
        best = chosen = have = None
        for k, view in enumerate(views):
            candidate, valid = padded[view], inside[view]
            if best is None:
                best, chosen, have = candidate, np.zeros(source.shape, np.int64), valid
                continue
            take = valid & (~have | ~np.asarray(select(best, candidate)[0], bool))
            best, chosen, have = np.where(take, candidate, best), np.where(take, k, chosen), have | take
        result = np.full(padded.shape, init, dtype)
        for k, view in enumerate(views):
            current = result[view]
            combined = np.asarray(scatter(current, source)[0], dtype)
            result[view] = np.where(have & (chosen == k), combined, current)
        crop = tuple(slice(max(lo, 0), n - max(hi, 0)) for (lo, hi), n in zip(pads, padded.shape))
        return np.ascontiguousarray(result[crop])
    return run


_select_and_scatter.takes_functions = True


def _feature(op) -> int:
    return _int_attr(op, "feature_index", 0)


def _stats_shape(x, axis):
    return [1 if d != axis else x.shape[d] for d in range(x.ndim)]


def _batch_norm_inference(op):
    epsilon, axis = float(ir.FloatAttr(op.attributes["epsilon"]).value), _feature(op)
    dtype = dtype_of(op.result.type)

    def run(x, scale, offset, mean, variance):
        shape = _stats_shape(x, axis)
        normal = (x - mean.reshape(shape)) / np.sqrt(variance.reshape(shape) + epsilon)
        return (normal * scale.reshape(shape) + offset.reshape(shape)).astype(dtype)
    return run


def _batch_norm_training(op):
    epsilon, axis = float(ir.FloatAttr(op.attributes["epsilon"]).value), _feature(op)
    dtype = dtype_of(op.results[0].type)

    def run(x, scale, offset):
        axes = tuple(d for d in range(x.ndim) if d != axis)
        mean, variance = np.mean(x, axis=axes), np.var(x, axis=axes)
        shape = _stats_shape(x, axis)
        normal = (x - mean.reshape(shape)) / np.sqrt(variance.reshape(shape) + epsilon)
        out = normal * scale.reshape(shape) + offset.reshape(shape)
        return out.astype(dtype), mean.astype(dtype), variance.astype(dtype)
    return run


def _batch_norm_grad(op):
    """The spec's gradients of batch_norm_training's output by x, scale and offset."""
    epsilon, axis = float(ir.FloatAttr(op.attributes["epsilon"]).value), _feature(op)
    dtype = dtype_of(op.results[0].type)

    def run(x, scale, mean, variance, grad_output):
        axes = tuple(d for d in range(x.ndim) if d != axis)
        shape = _stats_shape(x, axis)
        n = x.size // x.shape[axis]
        inv = 1 / np.sqrt(variance.reshape(shape) + epsilon)
        centred = x - mean.reshape(shape)
        grad_offset = np.sum(grad_output, axis=axes)
        grad_scale = np.sum(grad_output * centred * inv, axis=axes)
        grad_x = scale.reshape(shape) * inv / n * (
            n * grad_output - grad_offset.reshape(shape) - centred * inv * inv * np.sum(
                grad_output * centred, axis=axes).reshape(shape))
        return grad_x.astype(dtype), grad_scale.astype(dtype), grad_offset.astype(dtype)
    return run


OPS.update({
    "stablehlo.convolution": _convolution,
    "stablehlo.reduce_window": _reduce_window,
    "stablehlo.select_and_scatter": _select_and_scatter,
    "stablehlo.batch_norm_inference": _batch_norm_inference,
    "stablehlo.batch_norm_training": _batch_norm_training,
    "stablehlo.batch_norm_grad": _batch_norm_grad,
})
