"""Statistics and orderings: var, std, argmax, argmin, logsumexp, softmax, log_softmax, cumulative
sums/products/extrema, sort, argsort, top_k.

- argmax/argmin are one variadic stablehlo.reduce over (value, index) pairs whose body picks by a total
  order (NaN above everything, then the smaller index), so any reduction tree gives numpy's answer: the
  first occurrence, or the first NaN.
- Cumulative ops along an axis of up to 128 elements are one stablehlo.reduce_window whose window
  reaches back over the whole axis (O(n^2) work, one cheap dispatch); longer axes take a log-step scan
  (Hillis-Steele): log2(n) rounds of "combine with the copy shifted by 1, 2, 4 ..." (a stablehlo.pad
  that crops), O(n log n) work, each round a dispatch of its own on IREE. Float sums round in a
  different order than numpy's left-to-right loop.
- sort/argsort/top_k are stablehlo.sort with a comparator that puts NaNs last (numpy's order); argsort's and
  top_k's break ties by position themselves (a total order: the sort need not be stable, so it is not asked to
  be, and no target rewrite adds positions to it). sort's ties are equal values (-0.0 and 0.0, NaNs), in any
  order, as numpy's default sort.
- var/std, logsumexp/softmax/log_softmax and cumsum/cumprod of 16-bit floats are computed in f32 and
  rounded once (reductions.computation_dtype). softmax/log_softmax subtract the plain max, as JAX does:
  an inf in a slice makes it NaN; logsumexp takes out only a finite max (an inf gives inf).
Indices are int32, hlojit's default int (numpy gives int64).
"""
from __future__ import annotations

import math

import numpy as np

from ...dialects import stablehlo as hlo
from ...errors import DTypeError, ShapeError
from .. import dtypes
from ..derivatives import closed_form
from ..tensor import Tensor
from . import elementwise as ew
from . import reductions
from .complex_math import abs_squared
from ._core import as_tensor, constant, convert, describe, emit, fail, normalize_axes, normalize_axis, wrap
from .indexing import one_hot, take_along_axis
from .math import FORMATS, _bits, bitcast
from .shape import expand_dims, iota, reshape


def _float_input(op: str, x, complex_ok: bool = False) -> Tensor:
    """x as an inexact array: integers and bools become the default float; complex stays complex where the op
    takes it (`complex_ok`), and is refused where it does not (never silently its real part)."""
    x = as_tensor(x, op)
    if dtypes.is_complex(x.dtype):
        if not complex_ok:
            fail(DTypeError, op, f"does not take complex {describe(x)} (numbers without an order)")
        return x
    if not dtypes.is_float(x.dtype):
        x = convert(x, dtypes.DEFAULT_FLOAT, x.weak)
    return x


def _count(x: Tensor, axes) -> int:
    return math.prod(x.shape[a] for a in axes)


# --- moments ------------------------------------------------------------------------------------------

def var(x, axis=None, ddof=0, keepdims=False) -> Tensor:
    """numpy's var: mean squared deviation from the mean, divided by n - ddof (inf or nan when that is
    not positive, as numpy's division by zero gives). 16-bit floats are computed in f32 and rounded once."""
    x = _float_input("var", x, complex_ok=True)
    return _rounded(_wide_var(x, axis, ddof, keepdims), x)


def std(x, axis=None, ddof=0, keepdims=False) -> Tensor:
    x = _float_input("std", x, complex_ok=True)
    return _rounded(ew.unary("sqrt", _wide_var(x, axis, ddof, keepdims)), x)


def _wide_var(x: Tensor, axis, ddof, keepdims) -> Tensor:
    """var of x in its computation dtype (f32 for 16-bit floats), not rounded back."""
    axes = normalize_axes("var", axis, x.ndim)
    if isinstance(ddof, bool) or not isinstance(ddof, (int, float, np.integer, np.floating)):
        fail(TypeError, "var", f"ddof must be a number, not {type(ddof).__name__}")
    x = reductions.widened(x)
    n = _count(x, axes)
    mean = reductions.mean(x, axes, keepdims=True)
    deviation = x - mean
    total = reductions.sum(abs_squared(deviation), axes, keepdims)   # numpy's var of complex is real
    if n - ddof <= 0:   # numpy divides by zero: inf (nan for 0/0); vmvx rejects a division by constant 0
        return total * float("inf")
    return total / (n - ddof)


def _rounded(result: Tensor, x: Tensor) -> Tensor:
    """A result computed in x's computation dtype, rounded to x's dtype (its real dtype for a real result of
    complex x: var, std)."""
    dtype = dtypes.real_dtype(x.dtype) if dtypes.is_complex(x.dtype) and not dtypes.is_complex(result.dtype) \
        else x.dtype
    return convert(result, dtype, x.weak)


# --- argmax / argmin ---------------------------------------------------------------------------------

def _scalar(value, dtype) -> Tensor:
    return wrap(value, (), dtype)


def _arg_reduce(op: str, x, axis, keepdims: bool) -> Tensor:
    x = as_tensor(x, op)
    original = x.shape
    kept = tuple(1 for _ in original)           # keepdims shape for axis=None
    if axis is None:
        x, axis = reshape(x, (-1,)), 0
    else:
        axis = normalize_axis(op, axis, x.ndim)
        kept = tuple(1 if i == axis else d for i, d in enumerate(original))
    if x.ndim == 0:
        x, axis = reshape(x, (1,)), 0
    if x.shape[axis] == 0:
        fail(ShapeError, op, f"attempt to get {op} of an empty sequence ({describe(x)}, axis {axis})")
    index_dtype = dtypes.DEFAULT_INT
    indices = iota(index_dtype, x.shape, axis)
    lowest = reductions.lowest(x.dtype) if op == "argmax" else reductions.highest(x.dtype)
    is_float = dtypes.is_float(x.dtype)

    def body(best, best_index, value, index):
        a, ia = _scalar(best, x.dtype), _scalar(best_index, index_dtype)
        b, ib = _scalar(value, x.dtype), _scalar(index, index_dtype)
        beats = (b > a) if op == "argmax" else (b < a)
        if x.dtype == dtypes.bool_:
            beats = (b & ~a) if op == "argmax" else (a & ~b)
        ties = a == b
        if is_float:   # NaN beats every number; two NaNs tie
            a_nan, b_nan = ew.unary("isnan", a), ew.unary("isnan", b)
            beats = (beats & ~a_nan) | (b_nan & ~a_nan)
            ties = ties | (a_nan & b_nan)
        take = beats | (ties & (ib < ia))
        return [ew.where(take, b, a).value, ew.where(take, ib, ia).value]

    inits = [constant(lowest, x.dtype).value, constant(np.iinfo(np.int32).max, index_dtype).value]
    _, result = emit(hlo.reduce, [x.value, indices.value], inits, [axis], body)
    shape = tuple(d for i, d in enumerate(x.shape) if i != axis)
    out = wrap(result, shape, index_dtype)
    return reshape(out, kept) if keepdims else out


def argmax(x, axis=None, keepdims=False) -> Tensor:
    """Index of the largest element (the first one; the first NaN if any), as int32."""
    return _arg_reduce("argmax", x, axis, keepdims)


def argmin(x, axis=None, keepdims=False) -> Tensor:
    """Index of the smallest element (the first one; the first NaN if any), as int32."""
    return _arg_reduce("argmin", x, axis, keepdims)


# --- log-sum-exp and softmax ------------------------------------------------------------------------

def logsumexp(x, axis=None, keepdims=False) -> Tensor:
    """log(sum(exp(x))) without overflow: the max over axes is taken out where it is finite (an inf
    stays inf, all -inf stays -inf); -inf over nothing. 16-bit floats in f32, rounded once."""
    x = _float_input("logsumexp", x)
    wide = reductions.widened(x)
    axes = normalize_axes("logsumexp", axis, x.ndim)
    if _count(x, axes) == 0:
        return _rounded(ew.unary("log", reductions.sum(wide, axes, keepdims)), x)
    m = reductions.max(wide, axes, keepdims=True)
    m = ew.where(ew.unary("isfinite", m), m, 0.0)
    total = reductions.sum(ew.unary("exp", wide - m), axes, keepdims=True)
    out = ew.unary("log", total) + m
    if not keepdims:
        out = reshape(out, tuple(d for i, d in enumerate(x.shape) if i not in axes))
    return _rounded(out, x)


def _shifted(op: str, x, axis):
    """(x, x widened minus its max over axes, axes), JAX's form: exp of it cannot overflow, and an inf
    in x makes the whole slice NaN (inf - inf), as jax.nn.softmax gives; None over nothing."""
    x = _float_input(op, x)
    axes = normalize_axes(op, axis, x.ndim)
    if _count(x, axes) == 0:
        return x, None, axes
    wide = reductions.widened(x)
    return x, wide - reductions.max(wide, axes, keepdims=True), axes


# Their backward passes in closed form (derivatives.closed_form), from y alone: differentiated op by op, the
# max subtracted for range gets a cotangent that cancels exactly but is still computed (a comparison mask,
# a count of the maxima and a division per row: 22 dispatches of benchmarks/train_step.py's MLP step, 18
# with these). JAX's custom-JVP forms, in the computation dtype.
def _softmax_backward(like, y, g, axis=-1) -> Tensor:
    axes = normalize_axes("softmax", axis, len(like.shape))
    y, g = reductions.widened(y), reductions.widened(g)
    return convert(y * (g - reductions.sum(g * y, axes, keepdims=True)), like.dtype)


def _log_softmax_backward(like, y, g, axis=-1) -> Tensor:
    axes = normalize_axes("log_softmax", axis, len(like.shape))
    y, g = reductions.widened(y), reductions.widened(g)
    return convert(g - ew.unary("exp", y) * reductions.sum(g, axes, keepdims=True), like.dtype)


@closed_form(_softmax_backward)
def softmax(x, axis=-1) -> Tensor:
    """exp(x) / sum(exp(x)) over axis, computed from x - max (16-bit floats in f32, rounded once)."""
    x, shifted, axes = _shifted("softmax", x, axis)
    if shifted is None:
        return x
    e = ew.unary("exp", shifted)
    return _rounded(e / reductions.sum(e, axes, keepdims=True), x)


@closed_form(_log_softmax_backward)
def log_softmax(x, axis=-1) -> Tensor:
    x, shifted, axes = _shifted("log_softmax", x, axis)
    if shifted is None:
        return x
    return _rounded(shifted - ew.unary("log", reductions.sum(ew.unary("exp", shifted), axes, keepdims=True)), x)


# --- cumulative ops --------------------------------------------------------------------------------

_WINDOW_SCAN_MAX = 128    # longer axes scan in log2(n) steps: a window the axis long costs O(n^2)


def _scan(op: str, combine: str, x, axis, identity) -> Tensor:
    """Inclusive scan of `combine` along axis (None: the flattened array), by log-step doubling."""
    if axis is None:
        x, axis = reshape(x, (-1,)), 0
    axis = normalize_axis(op, axis, x.ndim)
    if x.ndim == 0:
        x, axis = reshape(x, (1,)), 0
    n = x.shape[axis]
    pad_value = constant(identity(x.dtype), x.dtype)
    if 1 < n <= _WINDOW_SCAN_MAX:   # one reduce_window over everything up to each element: cheap to compile
        body = combine
        (value,) = emit(hlo.reduce_window, [x.value], [pad_value.value],
                        window=[n if i == axis else 1 for i in range(x.ndim)], strides=[1] * x.ndim,
                        padding=[(n - 1, 0) if i == axis else (0, 0) for i in range(x.ndim)], body=body)
        return wrap(value, x.shape, x.dtype, x.weak)
    step = 1
    while step < n:
        low = [step if i == axis else 0 for i in range(x.ndim)]
        high = [-step if i == axis else 0 for i in range(x.ndim)]
        shifted = wrap(emit(hlo.pad, x.value, pad_value.value, low, high), x.shape, x.dtype, x.weak)
        x = ew.binary(combine, x, shifted)
        step *= 2
    return x


def _cumulative(op: str, combine: str, reduction: str):
    def run(x, axis=None, dtype=None) -> Tensor:
        x = as_tensor(x, op)
        target = reductions._accumulator_dtype(reduction, x.dtype) if dtype is None else dtypes.canonical(dtype)
        wide = reductions.computation_dtype(target) if reduction in ("sum", "prod") else target
        _, _, init, _ = reductions.REDUCTIONS[reduction]
        if reduction == "sum" and dtypes.is_inexact(wide):   # -0.0 + x is x for every x: cumsum([-0.0]) is -0.0
            init = lambda d: -0.0                              # noqa: E731 (numpy's; 0.0 + -0.0 would be +0.0)
        return convert(_scan(op, combine, convert(x, wide, x.weak), axis, init), target, x.weak)
    run.__name__ = run.__qualname__ = op
    run.__doc__ = (f"numpy's {op} along axis (None: the flattened array); small ints accumulate as in "
                   f"`{reduction}`" + (", 16-bit floats in f32 (rounded once), `dtype=` overrides"
                                       if reduction in ("sum", "prod") else ""))
    return run


cumsum = _cumulative("cumsum", "add", "sum")
cumprod = _cumulative("cumprod", "multiply", "prod")
cummax = _cumulative("cummax", "maximum", "max")
cummin = _cumulative("cummin", "minimum", "min")


def _array_api_cumulative(op: str, numpy_op, identity: int):
    def run(x, /, *, axis=None, dtype=None, include_initial: bool = False) -> Tensor:
        x = as_tensor(x, op)
        if axis is None:
            if x.ndim > 1:
                fail(ValueError, op, f"axis is required for {describe(x)} (more than one dimension)")
            axis = 0
        if x.ndim == 0:
            fail(ValueError, op, "needs at least one dimension")
        out = numpy_op(x, axis=axis, dtype=dtype)
        if not include_initial:
            return out
        axis = normalize_axis(op, axis, x.ndim)
        low = [1 if i == axis else 0 for i in range(out.ndim)]
        start = constant(identity, out.dtype)
        return wrap(emit(hlo.pad, out.value, start.value, low, [0] * out.ndim),
                    tuple(n + lo for n, lo in zip(out.shape, low)), out.dtype, out.weak)
    run.__name__ = run.__qualname__ = op
    run.__doc__ = (f"The array API's {op}: {numpy_op.__name__} along axis (required above one dimension), "
                   f"with include_initial the {identity} before the first element.")
    return run


cumulative_sum = _array_api_cumulative("cumulative_sum", cumsum, 0)
cumulative_prod = _array_api_cumulative("cumulative_prod", cumprod, 1)


# --- sorting ---------------------------------------------------------------------------------------

def _before(dtype, descending: bool):
    """a goes before b: numpy's ascending order with NaNs last (descending: NaNs first)."""
    def before(a: Tensor, b: Tensor) -> Tensor:
        if dtype == dtypes.bool_:
            return (a & ~b) if descending else (~a & b)
        less = (a > b) if descending else (a < b)
        if not dtypes.is_float(dtype):
            return less
        a_nan, b_nan = ew.unary("isnan", a), ew.unary("isnan", b)
        return (less | (a_nan if descending else b_nan)) & ~(b_nan if descending else a_nan)
    return before


def _sort(op: str, x: Tensor, axis: int, descending: bool, with_indices: bool):
    """(values, int32 indices or None) of x sorted along axis; with indices, equal keys in their order."""
    before = _before(x.dtype, descending)
    index_dtype = dtypes.DEFAULT_INT
    operands = [x.value]
    if with_indices:
        operands.append(iota(index_dtype, x.shape, axis).value)

    def comparator(*args):
        a, b = _scalar(args[0], x.dtype), _scalar(args[1], x.dtype)
        first = before(a, b)
        if with_indices:  # equal keys keep their order: the index decides
            ia, ib = _scalar(args[2], index_dtype), _scalar(args[3], index_dtype)
            first = first | (~before(b, a) & (ia < ib))
        return first.value

    results = emit(hlo.sort, operands, axis, comparator, is_stable=False)   # ties: by index, or equal values
    values = wrap(results[0], x.shape, x.dtype, x.weak)
    return values, (wrap(results[1], x.shape, index_dtype) if with_indices else None)


# argsort and top_k of dtypes up to 32 bits sort ONE u64 operand: an order-preserving key of the value
# in the high half, the position in the low half (ties by position: stable). A comparison of two integers
# is cheaper than the comparator of value, NaN and position: on iree:cpu (2-vCPU Zen 3, 2026-12-07) argsort
# of 1,000 / 64 x 1,000 / 10^6 f32 took 0.90 / 14.0 / 1045 ms against 1.13 / 20.4 / 1266, top_k of
# 256 x 1,000 60.7 against 86.8. 64-bit values leave no room for the position: they sort beside it.

def _order_key(x: Tensor) -> Tensor:
    """u32 keys whose unsigned order is numpy's sort order: NaN last, -0.0 equal to 0.0."""
    if x.dtype == dtypes.bool_:
        return convert(x, dtypes.uint32)
    if dtypes.is_float(x.dtype):
        fmt = FORMATS[x.dtype]
        bits = convert(_bits(x), dtypes.uint32)
        nan = int(np.array(np.nan, x.dtype).view(fmt.uint))
        bits = ew.where(ew.unary("isnan", x), np.uint32(nan), ew.where(x == 0, np.uint32(0), bits))
        sign, full = 1 << (fmt.bits - 1), (1 << fmt.bits) - 1
        return ew.where((bits >> (fmt.bits - 1)) == 1, bits ^ full, bits ^ sign)   # negatives reversed
    if x.dtype.kind == "i":
        return bitcast(convert(x, dtypes.int32), dtypes.uint32) ^ (1 << 31)
    return convert(x, dtypes.uint32)


def _packed_order(x: Tensor, axis: int, descending: bool) -> Tensor:
    """int32 positions that sort x (<= 32-bit dtype) along axis, stable, by one u64 operand."""
    key = _order_key(x)
    if descending:
        key = key ^ 0xFFFFFFFF
    position = convert(iota(dtypes.int32, x.shape, axis), dtypes.uint64)
    packed = (convert(key, dtypes.uint64) << 32) | position
    (result,) = emit(hlo.sort, [packed.value], axis, lambda a, b: hlo.compare(a, b, "LT"))   # keys all differ
    return convert(wrap(result, x.shape, dtypes.uint64) & 0xFFFFFFFF, dtypes.int32)


def _order(op: str, x: Tensor, axis: int, descending: bool) -> Tensor:
    if x.dtype.itemsize <= 4:
        return _packed_order(x, axis, descending)
    return _sort(op, x, axis, descending, True)[1]   # 64-bit values leave no room for the position


def _sort_input(op: str, x, axis):
    x = as_tensor(x, op)
    if axis is None:
        x, axis = reshape(x, (-1,)), 0
    elif x.ndim == 0:
        fail(ShapeError, op, f"cannot sort a 0-d array along axis {axis}; pass axis=None")
    return x, normalize_axis(op, axis, x.ndim)


_SORT_KINDS = (None, "quicksort", "mergesort", "heapsort", "stable")


def _check_kind(op: str, kind) -> None:
    """numpy's kind= and stable=: every kind sorts stably here (a stable order is a right answer for each)."""
    if kind not in _SORT_KINDS:
        fail(ValueError, op, f"kind must be one of {', '.join(map(str, _SORT_KINDS[1:]))}, not {kind!r}")


def sort(x, axis=-1, kind=None, *, stable=None) -> Tensor:
    """numpy's sort: ascending along axis (None: flattened), NaNs last; stable whatever `kind` and `stable`."""
    _check_kind("sort", kind)
    x, axis = _sort_input("sort", x, axis)
    return _sort("sort", x, axis, False, False)[0]


def argsort(x, axis=-1, kind=None, *, stable=None) -> Tensor:
    """numpy's argsort(kind="stable"): int32 indices that sort x along axis, equal elements in order (whatever
    `kind` and `stable` say)."""
    _check_kind("argsort", kind)
    x, axis = _sort_input("argsort", x, axis)
    return _order("argsort", x, axis, False)


def _top_k_backward(like, indices, g, k) -> Tensor:
    """The sort has no derivative of its own: the values' cotangents go back to the positions the indices name."""
    picks = one_hot(indices, like.shape[-1], dtype=like.dtype)             # (..., k, n)
    return reductions.sum(picks * expand_dims(g, -1), (g.ndim - 1,))


@closed_form(_top_k_backward, keep=1)
def top_k(x, k: int) -> tuple[Tensor, Tensor]:
    """(values, int32 indices) of the k largest elements along the last axis, largest first; equal
    values by position; NaN counts as the largest (as argmax does). The values are x's own (-0.0
    and NaN payloads kept)."""
    x = as_tensor(x, "top_k")
    if x.ndim == 0:
        fail(ShapeError, "top_k", f"needs an array with at least one dimension, not {describe(x)}")
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
        fail(TypeError, "top_k", f"k must be a Python int, not {type(k).__name__}")
    n = x.shape[-1]
    if not 0 <= k <= n:
        fail(ShapeError, "top_k", f"k={k} is out of range for the last axis of {describe(x)} (size {n})")
    start, limit = [0] * x.ndim, list(x.shape)
    limit[-1] = int(k)
    shape = tuple(limit)
    indices = wrap(emit(hlo.slice, _order("top_k", x, x.ndim - 1, True).value, start, limit), shape, dtypes.int32)
    return take_along_axis(x, indices, -1), indices
