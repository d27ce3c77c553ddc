"""Closed-form derivatives of softmax, log_softmax and the tanh form of gelu, recorded as `Region`s (core.py) around the
frontend's composites.

Why: differentiated op by op, these composites cost a training step more than their math. softmax's and
log_softmax's max (subtracted for range) gets a cotangent that cancels exactly but is still computed: a
comparison mask, a count of the maxima and a division per row (the MLP step of benchmarks/train_step.py:
22 dispatches before, 18 after; ~2 ms of the transformer block step's 67 ms of one thread). gelu's chain
(x*x*x, tanh, 1 + t, 0.5 * x * ...) keeps each intermediate alive for the backward pass, so IREE
materialises every one of them (five 4 MB dispatches in the transformer block's MLP) instead of fusing the
forward into one. The regions keep only the output
(softmax, log_softmax: JAX's custom-JVP forms y * (g - sum(g * y)) and g - exp(y) * sum(g)) or only the
input (gelu, whose slope is recomputed from x where the backward pass needs it, fused into its consumer).
The backward passes are frontend ops, so they differentiate again (hessians, jvp).
"""
from __future__ import annotations

import numpy as np

from .. import dtypes, eager, ops, trace as _trace
from ..ops import math as math_ops, statistics
from ..ops._core import as_tensor, barrier, normalize_axes
from ..ops.reductions import computation_dtype
from .core import Region, add_region, identity

_softmax, _log_softmax, _gelu = statistics.softmax, statistics.log_softmax, math_ops.gelu


def _wide(t):
    """t in its computation dtype (16-bit floats as float32), as the forward computed it."""
    return ops.astype(t, computation_dtype(t.dtype))


def _with_region(name: str, x, y, residual, bwd):
    """y, as a handle whose cotangent `bwd(residual, g)` maps to x's; y itself where nothing is traced or
    nothing is differentiable."""
    if _trace.current() is None or not dtypes.is_float(x.dtype) or not dtypes.is_float(y.dtype) or \
            y.value == x.value:
        return y
    held = identity(y)
    kept = held if residual is y else residual
    add_region(Region(name, [x.value], [held.value], [kept.value],
                      lambda residuals, cts: [ops.astype(bwd(residuals[0], cts[0]), x.dtype)]))
    return held


def softmax(x, axis=-1):
    x = as_tensor(x, "softmax")
    y = _softmax(x, axis)
    axes = normalize_axes("softmax", axis, x.ndim)

    def bwd(y, g):
        y, g = _wide(y), _wide(g)
        return y * (g - ops.sum(g * y, axis=axes, keepdims=True))
    return _with_region("softmax", x, y, y, bwd)


def log_softmax(x, axis=-1):
    x = as_tensor(x, "log_softmax")
    y = _log_softmax(x, axis)
    axes = normalize_axes("log_softmax", axis, x.ndim)

    def bwd(y, g):
        y, g = _wide(y), _wide(g)
        return g - ops.exp(y) * ops.sum(g, axis=axes, keepdims=True)
    return _with_region("log_softmax", x, y, y, bwd)


_SQRT_2_OVER_PI = float(np.sqrt(2 / np.pi))


def _tanh_gelu_slope(x):
    """d gelu / dx of the tanh form y = x/2 (1 + tanh(u)), u = sqrt(2/pi) (x + 0.044715 x^3)."""
    t = ops.tanh(_SQRT_2_OVER_PI * (x + 0.044715 * (x * x * x)))
    return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * (_SQRT_2_OVER_PI * (1 + 3 * 0.044715 * (x * x)))


def gelu(x, approximate: bool = False):
    # the tanh form only: the exact one's slope needs erfc, a composite with a region of its own, and a
    # region made while a backward pass is traced broke hessian (jacfwd's vmap of the vjp read a value that
    # no longer existed: a segfault), so the exact form is differentiated op by op as before
    x = as_tensor(x, "gelu")
    y = _gelu(x, approximate)
    if not approximate:
        return y
    # the slope from x behind a barrier: IREE would otherwise merge its x*x and tanh with the forward's
    # (common subexpressions), and the forward's matmul dispatch then wrote each of them out for the backward
    return _with_region("gelu", x, y, x, lambda x, g: g * _tanh_gelu_slope(barrier(x)))


for _fn, _original, _module in ((softmax, _softmax, statistics), (log_softmax, _log_softmax, statistics),
                                (gelu, _gelu, math_ops)):
    _fn.__doc__ = _original.__doc__
    setattr(_module, _fn.__name__, _fn)
    setattr(ops, _fn.__name__, eager.dispatching(_fn))   # outside a trace it runs at once (frontend/eager.py)
