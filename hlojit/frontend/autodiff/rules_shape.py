"""VJP rules of the ops that move elements without changing them: broadcast_in_dim, reshape, transpose,
slice, pad, concatenate, reverse, dynamic_slice, dynamic_update_slice. Each one's transpose is another op
of the family (slice <-> pad, dynamic_slice <-> dynamic_update_slice)."""
from __future__ import annotations

from ...dialects import stablehlo as hlo
from ...dialects.types import shape_of
from .. import ops
from ..ops._core import constant, emit, wrap
from .core import register


def op_result(value, dtype):
    """A Tensor of a value a dialect builder returned."""
    return wrap(value, shape_of(value.type), dtype)


def pad(g, value, low, high, interior=None):
    pad_value = constant(value, g.dtype)
    return op_result(emit(hlo.pad, g.value, pad_value.value, low, high, interior), g.dtype)


def slice_(g, start, limit, strides=None):
    return op_result(emit(hlo.slice, g.value, start, limit, strides), g.dtype)


@register("broadcast_in_dim")
def _broadcast_in_dim(p, cts, active):
    """Sum over the new dimensions and the stretched size-1 ones, then back to the operand's shape."""
    (x,), g = p.inputs, cts[0]
    dims = p.ints("broadcast_dimensions")
    summed = [d for d in range(g.ndim) if d not in dims] + \
        [d for i, d in enumerate(dims) if x.shape[i] == 1 and g.shape[d] != 1]
    total = ops.sum(g, axis=tuple(sorted(summed))) if summed else g
    kept = [d for d in range(g.ndim) if d not in summed]       # in result order: the operand's, permuted
    order = sorted(range(len(dims)), key=lambda i: dims[i])
    kept_operand_dims = [i for i in order if dims[i] in kept]
    if kept_operand_dims != sorted(kept_operand_dims):
        total = ops.transpose(total, [kept_operand_dims.index(i) for i in sorted(kept_operand_dims)])
    return [ops.reshape(total, x.shape)]


@register("reshape")
def _reshape(p, cts, active):
    return [ops.reshape(cts[0], p.inputs[0].shape)]


@register("transpose")
def _transpose(p, cts, active):
    perm = p.ints("permutation")
    return [ops.transpose(cts[0], [perm.index(i) for i in range(len(perm))])]


@register("reverse")
def _reverse(p, cts, active):
    return [op_result(emit(hlo.reverse, cts[0].value, p.ints("dimensions")), cts[0].dtype)]


@register("slice")
def _slice(p, cts, active):
    """Zeros around (and between, for strides) the slice's elements: one pad."""
    (x,), g = p.inputs, cts[0]
    start, strides = p.ints("start_indices"), p.ints("strides")
    high = [d - (s + (n - 1) * st + 1) if n else d - s for d, s, st, n in zip(x.shape, start, strides, g.shape)]
    interior = [st - 1 if n > 1 else 0 for st, n in zip(strides, g.shape)]
    return [pad(g, 0, start, high, interior)]


@register("pad")
def _pad(p, cts, active):
    """The operand's elements back out of the padded result (a pad by the negated edges crops, a strided
    slice skips the interior); the padding value gets the sum of the rest."""
    g = cts[0]
    low, high, interior = p.ints("edge_padding_low"), p.ints("edge_padding_high"), p.ints("interior_padding")
    cropped = pad(g, 0, [-v for v in low], [-v for v in high])
    gx = slice_(cropped, [0] * g.ndim, list(cropped.shape), [i + 1 for i in interior])
    gv = (ops.sum(g) - ops.sum(gx)) if active[1] else None
    return [gx, gv]


@register("concatenate")
def _concatenate(p, cts, active):
    axis, g = p.int("dimension"), cts[0]
    grads, offset = [], 0
    for x, needed in zip(p.inputs, active):
        n = x.shape[axis]
        if needed:
            start = [offset if d == axis else 0 for d in range(g.ndim)]
            limit = [offset + n if d == axis else g.shape[d] for d in range(g.ndim)]
            grads.append(slice_(g, start, limit))
        else:
            grads.append(None)
        offset += n
    return grads


@register("dynamic_slice")
def _dynamic_slice(p, cts, active):
    """The slice's cotangent written into zeros at the same (equally clamped) starts."""
    x, starts, g = p.inputs[0], p.inputs[1:], cts[0]
    zeros = ops.zeros(x.shape, x.dtype)
    value = emit(hlo.dynamic_update_slice, zeros.value, g.value, [s.value for s in starts])
    return [op_result(value, g.dtype)] + [None] * len(starts)


@register("dynamic_update_slice")
def _dynamic_update_slice(p, cts, active):
    update, starts, g = p.inputs[1], p.inputs[2:], cts[0]
    indices = [s.value for s in starts]
    gx = gu = None
    if active[0]:
        hole = ops.zeros(update.shape, update.dtype)
        gx = op_result(emit(hlo.dynamic_update_slice, g.value, hole.value, indices), g.dtype)
    if active[1]:
        gu = op_result(emit(hlo.dynamic_slice, g.value, indices, list(update.shape)), g.dtype)
    return [gx, gu] + [None] * len(starts)
