"""Derivative regions: composites that carry a derivative of their own, declared where each is defined:
`closed_form` (an op's whole backward pass), `derivative` and `no_derivative` (an elementwise composite's
slopes, or why it has none).

A `Region` records the values that went into a composite and came out of it, and a function that maps the
outputs' cotangents to the inputs' (autodiff/core.py applies it when its walk meets the outputs; the ops
inside never receive a cotangent). This module sits below both the op library and autodiff, and imports
neither: an op module (ops/statistics.py, ops/math.py, ops/elementwise.py ...) decorates its op or composite
at the definition, and autodiff finds the region in the trace's table, with no module patching another's.
"""
from __future__ import annotations

import functools
from typing import Callable, NamedTuple

from ..dialects import stablehlo as hlo
from ..errors import DifferentiationError
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


def derivative(slopes: Callable):
    """`@derivative(slopes)` on an elementwise composite fn(*xs) -> y (operands of y's shape and dtype) whose own
    ops have no derivative worth having (exact argument reductions run in integers, fitted polynomials, bit
    tricks, Annex G's selects): inside a trace, a float or complex call records a Region whose residuals are xs
    and y, and whose backward pass gives each x the cotangent g * slope, `slopes(*xs, y)` being the one slope of a
    unary composite or the tuple of partials of a binary one (frontend ops, so it differentiates again; a complex
    slope is f'(z) of a holomorphic f, JAX's convention). The region is named after fn, its leading underscore
    dropped; where y is an operand itself (trunc of an int), there is none."""
    def decorate(fn):
        name = fn.__name__.lstrip("_")

        def backward(residuals, cts):
            *xs, y = residuals
            partials = slopes(*xs, y)
            partials = partials if isinstance(partials, tuple) else (partials,)
            return [(cts[0] * s).astype(x.dtype) for s, x in zip(partials, xs)]

        @functools.wraps(fn)
        def composite(*xs):
            y = fn(*xs)
            if _trace.current() is None or not dtypes.is_inexact(y.dtype) or any(y.value == x.value for x in xs):
                return y
            add_region(Region(name, [x.value for x in xs], [y.value], [x.value for x in xs] + [y.value], backward))
            return y
        return composite
    return decorate


def no_derivative(why: str):
    """`@no_derivative(why)` on an elementwise composite fn(*xs) -> y whose ops would differentiate into a wrong
    slope and whose true one is not written: reverse mode through a float call raises DifferentiationError
    naming the composite, the user's line and `why`."""
    def decorate(fn):
        name = fn.__name__.lstrip("_")

        @functools.wraps(fn)
        def composite(*xs):
            y = fn(*xs)
            if _trace.current() is None or not dtypes.is_float(y.dtype):
                return y
            site = _trace.user_site()

            def backward(residuals, cts):
                raise DifferentiationError(f"reverse mode through {name} (at {site}): {why}")
            add_region(Region(name, [x.value for x in xs], [y.value], [], backward))
            return y
        return composite
    return decorate
