"""Derivative regions: composites that carry a derivative of their own, and `closed_form`, with which an op
declares its backward pass where it is defined.

A `Region` records the values that went into a composite and came out of it, and a function that maps the
outputs' cotangents to the inputs' (autodiff/core.py applies it when its walk meets the outputs; the ops
inside never receive a cotangent). This module sits below both the op library and autodiff, and imports
neither: an op module (ops/statistics.py, ops/math.py) declares its closed form with `@closed_form` at the
definition, and autodiff finds the region in the trace's table, with no module patching another's.
"""
from __future__ import annotations

import functools
from typing import Callable, NamedTuple

from ..dialects import stablehlo as hlo
from . import dtypes, trace as _trace
from .tensor import Tensor


class Region(NamedTuple):
    name: str
    inputs: list          # ir.Values whose cotangents `bwd` gives
    outputs: list         # ir.Values whose cotangents `bwd` takes (defined by the region's ops)
    residuals: list       # ir.Values `bwd` reads (remapped when control-flow rules copy the ops)
    bwd: Callable         # bwd(residual Tensors, output cotangent Tensors) -> [Tensor | None per input]


def regions() -> dict:
    """The current trace's regions by output value."""
    return _trace.current().autodiff_regions


def add_region(region: Region):
    table = regions()
    for value in region.outputs:
        table[value] = region


def identity(t: Tensor) -> Tensor:
    """t as a new value (a reshape to its own shape, which IREE folds away): a handle of its own."""
    value = hlo.reshape(t.value, list(t.shape), loc=_trace.user_location())
    return Tensor(value, t.shape, t.dtype, t.weak)


class Like(NamedTuple):
    """The shape and dtype of an op's input, as its backward pass sees it: the value itself reaches the
    backward pass only as a residual, which control flow and vmap remap."""
    shape: tuple
    dtype: object


def closed_form(backward: Callable, keep="output"):
    """`@closed_form(backward, keep)` on an op `fn(x, *args, **kwargs)` whose output y (or first output, when it
    returns a tuple) has a derivative in closed form: inside a trace, the op's call records a Region mapping
    y's cotangent g to x's cotangent `backward(like, kept, g, *args, **kwargs)` (x's shape and dtype; frontend
    ops, so it differentiates again). `kept` is the one value the backward pass keeps alive: y ("output"), x
    ("input"), or the op's output number `keep` (top_k's indices). Outside a trace, for a non-float x or y,
    or where y is x itself, the op is unchanged."""
    def decorate(fn):
        @functools.wraps(fn)
        def op(x, *args, **kwargs):
            out = fn(x, *args, **kwargs)
            several = isinstance(out, tuple)
            y = out[0] if several else out
            if _trace.current() is None or not isinstance(x, Tensor) or not dtypes.is_float(x.dtype) or \
                    not dtypes.is_float(y.dtype) or y.value == x.value:
                return out
            held = identity(y)
            kept = {"output": held, "input": x}[keep] if isinstance(keep, str) else out[keep]
            like = Like(x.shape, x.dtype)
            add_region(Region(fn.__name__, [x.value], [held.value], [kept.value],
                              lambda residuals, cts: [backward(like, residuals[0], cts[0], *args, **kwargs)]))
            return (held, *out[1:]) if several else held
        return op
    return decorate
