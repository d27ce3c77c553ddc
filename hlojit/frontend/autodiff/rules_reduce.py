"""VJP rules of the ops that combine elements: reduce, dot_general, convolution, reduce_window.

reduce and reduce_window are recognised by their body (one add / maximum / minimum / multiply of the
accumulator and the element); other bodies (argmax's variadic reduce) raise DifferentiationError for
the values they make, which are integers in every op the frontend emits (a multiplying reduce_window
has a rule for cumprod's window only). dot_general and convolution follow JAX's transpose rules
(`_dot_general_transpose_*`, `_conv_general_dilated_transpose_*`).
"""
from __future__ import annotations

import itertools

import numpy as np

from ...dialects import regions, stablehlo as hlo
from ...dialects.types import conv_labels, dot_dimensions, enum_attr
from ...errors import DifferentiationError
from .. import ops
from ..ops._core import convert, emit
from .core import register, site_of
from .rules_shape import op_result, pad, slice_


def body_op(op) -> str | None:
    """"add" when the op's region is `return(add(acc, element))` over one operand, else None."""
    block = op.regions[0].blocks[0]
    inner = list(block.operations)
    if len(op.results) != 1 or len(inner) != 2:
        return None
    if set(inner[0].operands) != set(block.arguments) or list(inner[1].operands) != [inner[0].results[0]]:
        return None
    return inner[0].operation.name.removeprefix("stablehlo.")


def _unsupported(p, what):
    raise DifferentiationError(f"reverse mode has no rule for {p.op.name} with {what} (built at {site_of(p.op)})")


def _expand(t, shape, dims):
    """t (the reduced result) broadcast back to `shape`, its dimensions at `dims`."""
    return op_result(emit(hlo.broadcast_in_dim, t.value, list(shape), dims), t.dtype)


def _nonzero(x):
    """x with its zeros replaced by ones."""
    return ops.where(x == 0, 1.0, x).astype(x.dtype)


def product_of_the_others(x, zeros, rest):
    """For each factor x of a product, the product of the other factors, from `zeros` (how many of its
    product's factors are 0) and `rest` (the product of the nonzero ones): rest / x without a zero, rest
    for the one zero, 0 beside two zeros. Exact with zeros, where dividing the product by x is not."""
    is_zero = x == 0
    return ops.where(zeros == 0, rest / _nonzero(x), ops.where(is_zero & (zeros == 1), rest, 0.0)).astype(x.dtype)


@register("reduce")
def _reduce(p, cts, active):
    kind = body_op(p.op)
    x, g, z = p.inputs[0], cts[0], p.outputs[0]
    axes = p.ints("dimensions")
    kept = [d for d in range(x.ndim) if d not in axes]
    if kind == "add":
        gx = _expand(g, x.shape, kept)
    elif kind in ("maximum", "minimum"):  # split evenly between the elements equal to the extremum
        hit = (x == _expand(z, x.shape, kept)).astype(x.dtype)
        count = ops.sum(hit, axis=tuple(axes))
        gx = hit * _expand(g / count, x.shape, kept)
    elif kind == "multiply":
        zeros = ops.sum((x == 0).astype(x.dtype), axis=tuple(axes))
        rest = ops.prod(_nonzero(x), axis=tuple(axes))
        gx = product_of_the_others(x, _expand(zeros, x.shape, kept), _expand(rest, x.shape, kept)) * \
            _expand(g, x.shape, kept)
    else:
        _unsupported(p, "a body other than add, maximum, minimum or multiply")
    return [gx, None]


@register("dot_general")
def _dot_general(p, cts, active):
    lhs, rhs = p.inputs
    g = cts[0]
    lb, rb, lc, rc = dot_dimensions(p.op)
    lf = [d for d in range(lhs.ndim) if d not in lb + lc]
    rf = [d for d in range(rhs.ndim) if d not in rb + rc]
    nb = len(lb)
    g_batch = list(range(nb))
    g_lhs_free = list(range(nb, nb + len(lf)))
    g_rhs_free = list(range(nb + len(lf), g.ndim))
    grads = [None, None]
    if active[0]:  # g . rhs over rhs's free dims
        grads[0] = _operand_cotangent(lhs, (lb, lf, lc), g, (g_batch, g_lhs_free, g_rhs_free), rhs, (rb, rf, rc))
    if active[1]:  # g . lhs over lhs's free dims
        grads[1] = _operand_cotangent(rhs, (rb, rf, rc), g, (g_batch, g_rhs_free, g_lhs_free), lhs, (lb, lf, lc))
    return grads


def _operand_cotangent(x, x_dims, g, g_dims, other, other_dims):
    """x's cotangent: g contracted with `other` over other's free dims, then laid out as x (JAX's transpose
    rule: a dense layer's weight gradient is (gᵀ x)ᵀ; pipeline/layout.transposed_products_swapped makes it xᵀ g,
    whose layout needs no transpose)."""
    (xb, xf, xc), (g_batch, _, g_other_free), (ob, of, oc) = x_dims, g_dims, other_dims
    nb, oc_sorted = len(xb), sorted(oc)
    contracted = {d: oc_sorted.index(oc[k]) for k, d in enumerate(xc)}   # x's contracting dim -> its place
    batch = {d: i for i, d in enumerate(xb)}
    g_first = batch | {d: nb + i for i, d in enumerate(xf)} | {d: nb + len(xf) + j for d, j in contracted.items()}
    other = convert(other, g.dtype)
    out = op_result(emit(hlo.dot_general, g.value, other.value, lhs_batch=g_batch, rhs_batch=ob,
                         lhs_contract=g_other_free, rhs_contract=of), g.dtype)
    return convert(_permuted(out, [g_first[d] for d in range(x.ndim)]), x.dtype)


def _permuted(t, perm):
    return t if list(perm) == list(range(t.ndim)) else ops.transpose(t, perm)


# --- convolution -----------------------------------------------------------------------------------

def _parse_spec(text: str):
    """"[b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1]" -> JAX's (lhs_spec, rhs_spec, out_spec) index tuples."""
    lhs, rhs, out = conv_labels(text)

    def indices(labels, first, second):
        n = len(labels) - 2
        return (labels.index(first), labels.index(second)) + tuple(labels.index(str(i)) for i in range(n))
    return indices(lhs, "b", "f"), indices(rhs, "o", "i"), indices(out, "b", "f")


def _swap(spec):
    return (spec[1], spec[0]) + tuple(spec[2:])


def _dilate(shape, factors):
    return [0 if d == 0 else 1 + f * (d - 1) for d, f in zip(shape, factors)]


def _axis_out_of(src, size, t):
    shape = list(t.shape)
    shape[src:src + 1] = [size, shape[src] // size]
    return ops.reshape(t, tuple(shape))


def _axis_into(src, dst, t):
    perm = [i for i in range(t.ndim) if i != src]
    perm.insert(dst, src)
    shape = [d for i, d in enumerate(t.shape) if i != src]
    shape[dst] *= t.shape[src]
    return ops.reshape(_permuted(t, perm), tuple(shape))


@register("convolution")
def _convolution(p, cts, active):
    lhs, rhs = p.inputs
    g = cts[0]
    lhs_spec, rhs_spec, out_spec = _parse_spec(p.text("dimension_numbers"))
    n = len(lhs_spec) - 2
    strides = p.ints("window_strides") or [1] * n
    lhs_dil, rhs_dil = p.ints("lhs_dilation") or [1] * n, p.ints("rhs_dilation") or [1] * n
    padding = np.array(p.op.attributes["padding"]).reshape(n, 2).tolist() if "padding" in p.op.attributes \
        else [[0, 0]] * n
    groups, batch_groups = p.int("feature_group_count", 1), p.int("batch_group_count", 1)
    in_sizes = [lhs.shape[d] for d in lhs_spec[2:]]
    k_sizes = [rhs.shape[d] for d in rhs_spec[2:]]
    out_sizes = [g.shape[d] for d in out_spec[2:]]
    lhs_d, rhs_d, out_d = _dilate(in_sizes, lhs_dil), _dilate(k_sizes, rhs_dil), _dilate(out_sizes, strides)
    grads = [None, None]
    if active[0]:
        kernel, fg = convert(rhs, g.dtype), groups
        if groups > 1:
            kernel = _axis_into(rhs_spec[0], rhs_spec[1], _axis_out_of(rhs_spec[0], groups, kernel))
        elif batch_groups > 1:
            kernel = _axis_into(rhs_spec[0], rhs_spec[1], _axis_out_of(rhs_spec[0], batch_groups, kernel))
            fg = batch_groups
        before = [k - lo - 1 for k, (lo, _) in zip(rhs_d, padding)]
        pads = [(b, i + k - 1 - o - b) for b, i, k, o in zip(before, lhs_d, rhs_d, out_d)]
        flipped = op_result(emit(hlo.reverse, kernel.value, list(rhs_spec[2:])), kernel.dtype)
        spec = (out_spec, _swap(rhs_spec), lhs_spec)
        # JAX's rule: the cotangent dilated by the strides (pipeline/conv_phases.py computes it by stride phases)
        out = _conv(g, flipped, spec, lhs_dil, pads, strides, rhs_dil, fg, 1, g.dtype)
        if batch_groups > 1:
            out = _axis_into(lhs_spec[1], lhs_spec[0], _axis_out_of(lhs_spec[1], batch_groups, out))
        grads[0] = convert(out, lhs.dtype)
    if active[1]:   # JAX's rule; pipeline/conv_gradients.py makes it a product of patches where that is fast
        fg, bg = groups, batch_groups
        if bg > 1:
            fg, bg = bg, 1
        elif fg > 1:
            fg, bg = 1, fg
        pads = [(lo, (o - i) + (k - lo - 1)) for (lo, _), i, k, o in zip(padding, lhs_d, rhs_d, out_d)]
        spec = (_swap(lhs_spec), _swap(out_spec), _swap(rhs_spec))
        out = _conv(convert(lhs, g.dtype), g, spec, rhs_dil, pads, lhs_dil, strides, fg, bg, g.dtype)
        grads[1] = convert(out, rhs.dtype)
    return grads


def _conv(lhs, rhs, spec, strides, padding, lhs_dilation, rhs_dilation, groups, batch_groups, dtype):
    """A convolution of Tensors; spec: JAX's (lhs_spec, rhs_spec, out_spec) index tuples."""
    value = emit(hlo.convolution, lhs.value, rhs.value, dimension_numbers=hlo.conv_spec_text(*spec),
                 strides=list(strides), padding=[tuple(int(v) for v in pair) for pair in padding],
                 lhs_dilation=list(lhs_dilation), rhs_dilation=list(rhs_dilation), feature_group_count=groups,
                 batch_group_count=batch_groups)
    return op_result(value, dtype)


# --- reduce_window: pools and short cumulative sums and products -----------------------------------

def _window(p, x):
    """(window, strides, padding) of a reduce_window without dilations, or of a select_and_scatter."""
    if any(d != 1 for d in p.ints("base_dilations") + p.ints("window_dilations")):
        _unsupported(p, "dilations")
    window, strides = p.ints("window_dimensions"), p.ints("window_strides") or [1] * x.ndim
    padding = np.array(p.op.attributes["padding"]).reshape(x.ndim, 2).tolist() if "padding" in p.op.attributes \
        else [[0, 0]] * x.ndim
    return window, strides, padding


def _shifted(t, axis: int, step: int, fill=None):
    """t moved `step` places along axis (towards the end for step > 0); zeros (or the 0-d `fill`) come in."""
    low = [step if d == axis else 0 for d in range(t.ndim)]
    fill = ops.zeros((), t.dtype) if fill is None else fill
    return op_result(emit(hlo.pad, t.value, fill.value, low, [-v for v in low]), t.dtype)


def _cumulative_product(p, x, init, y, g):
    """y = cumprod(x) along one axis (a window over the whole axis, padded before it; y_-1 = init):
    dx_i = y_{i-1} r_i, r_i = sum_{j >= i} g_j x_{i+1} ... x_j. r solves r_i = g_i + x_{i+1} r_{i+1}, which
    log-step doubling over (coefficient, value) pairs computes in log2(n) rounds of multiplies and adds: no
    division, so exact where x has zeros, and differentiable again."""
    window, strides, padding = _window(p, x)
    axes = [d for d in range(x.ndim) if window[d] != 1 or padding[d] != [0, 0]]
    n = x.shape[axes[0]] if len(axes) == 1 else 0
    if len(axes) != 1 or window[axes[0]] != n or padding[axes[0]] != [n - 1, 0] or any(s != 1 for s in strides):
        _unsupported(p, "a multiply body other than a cumulative product (a window over the whole axis)")
    axis = axes[0]
    r, coefficient = g, _shifted(x, axis, -1)
    step = 1
    while step < n:
        r = r + coefficient * _shifted(r, axis, -step)
        if 2 * step < n:
            coefficient = coefficient * _shifted(coefficient, axis, -step)
        step *= 2
    return _shifted(y, axis, 1, init) * r


@register("reduce_window")
def _reduce_window(p, cts, active):
    """add: JAX's transpose (a window sum of the strided-out cotangent). maximum/minimum: the first
    extremum of each window takes its cotangent (select_and_scatter). multiply: cumulative products only
    (cumprod's window)."""
    kind = body_op(p.op)
    x, init = p.inputs
    g, z = cts[0], p.outputs[0]
    if kind == "multiply":
        return [_cumulative_product(p, x, init, z, g), None]
    if kind not in ("add", "maximum", "minimum"):
        _unsupported(p, "a body other than add, maximum, minimum or multiply")
    window, strides, padding = _window(p, x)
    if kind == "add":  # JAX's transpose: a window sum over the cotangent spread out by the strides
        before = [w - lo - 1 for w, (lo, _) in zip(window, padding)]
        after = [d + w - 1 - od - b for d, w, od, b in zip(x.shape, window, _dilate(g.shape, strides), before)]
        spread = pad(g, 0, before, after, [s - 1 for s in strides])
        zero = ops.zeros((), g.dtype)
        (value,) = emit(hlo.reduce_window, [spread.value], [zero.value], window=window, strides=[1] * x.ndim,
                        padding=[(0, 0)] * x.ndim, body="add")
        return [op_result(value, g.dtype), None]
    # the first extremum of each window (row-major, never padding) takes the window's cotangent: the spec's
    # select_and_scatter, JAX's own gradient op (targets without it get pipeline/window_scatters.py's rewrite)
    zero = ops.zeros((), g.dtype)
    value = emit(regions.select_and_scatter, x.value, g.value, zero.value, window=window, strides=strides,
                 padding=padding, select="GE" if kind == "maximum" else "LE", scatter="add")
    return [op_result(value, g.dtype), None]


_PREFERS = {"GE": lambda a, b: a >= b, "GT": lambda a, b: a > b, "LE": lambda a, b: a <= b, "LT": lambda a, b: a < b}


def _region_kind(block) -> tuple[str, object] | None:
    """(name, op) of the one op a region applies to its two block arguments and returns, else None."""
    inner = list(block.operations)
    if len(inner) != 2 or list(inner[0].operands) != list(block.arguments) \
            or list(inner[1].operands) != [inner[0].results[0]]:
        return None
    return inner[0].operation.name.removeprefix("stablehlo."), inner[0].operation


def _window_choice(x, windows, window, strides, padding, prefers):
    """Per window (`windows`: the source's shape), the row-major offset of the element select_and_scatter picks
    (`prefers(best, candidate)`: its select region; a later element wins where that is false), and whether the
    window holds any element of x at all (None: every window does)."""
    lows, highs = [lo for lo, _ in padding], [hi for _, hi in padding]
    padded = any(lo or hi for lo, hi in padding)
    xp = pad(x, 0, lows, highs) if padded else x
    inside = pad(ops.ones(x.shape, "bool"), False, lows, highs) if padded else None
    best = chosen = have = None
    for k, offset in enumerate(itertools.product(*[range(w) for w in window])):
        limit = [o + (n - 1) * s + 1 for o, n, s in zip(offset, windows, strides)]
        candidate = slice_(xp, list(offset), limit, strides)
        valid = slice_(inside, list(offset), limit, strides) if padded else None
        if best is None:
            best, chosen, have = candidate, ops.zeros(windows, "int32"), valid
            continue
        take = ops.logical_not(prefers(best, candidate))
        if valid is not None:
            take = valid & (ops.logical_not(have) | take)
            have = have | take
        best, chosen = ops.where(take, candidate, best), ops.where(take, k, chosen)
    return chosen, have


@register("select_and_scatter")
def _select_and_scatter(p, cts, active):
    """Linear in the source and the init value: the source's cotangent is each window's chosen element of the
    result's cotangent (its transpose), the init value's the sum of it; the operand only chooses (zero)."""
    x, source, _ = p.inputs
    g = cts[0]
    select, scatter = (_region_kind(p.op.regions[i].blocks[0]) for i in (0, 1))
    if scatter is None or scatter[0] != "add":
        _unsupported(p, "a scatter region other than add")
    if select is None or select[0] != "compare":
        _unsupported(p, "a select region other than one compare of its arguments")
    direction = enum_attr(select[1], "comparison_direction")
    window, strides, padding = _window(p, x)
    source_ct = init_ct = None
    if active[1]:
        chosen, have = _window_choice(x, source.shape, window, strides, padding, _PREFERS[direction])
        gp = pad(g, 0, [lo for lo, _ in padding], [hi for _, hi in padding])
        for k, offset in enumerate(itertools.product(*[range(w) for w in window])):
            limit = [o + (n - 1) * s + 1 for o, n, s in zip(offset, source.shape, strides)]
            mine = chosen == k if have is None else (chosen == k) & have
            share = ops.where(mine, slice_(gp, list(offset), limit, strides), 0.0).astype(g.dtype)
            source_ct = share if source_ct is None else source_ct + share
    if active[2]:
        init_ct = ops.sum(g).astype(g.dtype)
    return [None, source_ct, init_ct]
