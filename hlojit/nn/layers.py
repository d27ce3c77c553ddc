"""Functional layers: each takes its input and its parameters as arrays and returns arrays, so a model is a
plain function of a parameter pytree (and differentiable, and jittable as one program).

    params = {"w": hj.nn.glorot_uniform()(key, (784, 10)), "b": np.zeros(10, np.float32)}
    logits = hj.nn.dense(x, params["w"], params["b"])

`init_*` helpers build the parameter dicts the layers take, from a `hj.random` key.
"""
from __future__ import annotations

import numpy as np

from .. import random
from ..errors import DTypeError, ShapeError
from ..frontend import dtypes, ops
from ..frontend.ops import _core
from ..frontend.ops._core import as_tensor, describe, fail
from . import initializers as init


def _float(op: str, x):
    x = as_tensor(x, op)
    if not dtypes.is_float(x.dtype):
        fail(DTypeError, op, f"takes floats, not {describe(x)}")
    return x


def _check_shape(op: str, name: str, t, shape: tuple, why: str = ""):
    if tuple(t.shape) != tuple(shape):
        fail(ShapeError, op, f"{name} must have shape {tuple(shape)}{why}, not {describe(t)}")


def dense(x, w, b=None):
    """x @ w + b: x [..., in], w [in, out], b [out] -> [..., out]."""
    x, w = as_tensor(x, "nn.dense"), as_tensor(w, "nn.dense")
    if w.ndim != 2 or x.ndim < 1 or x.shape[-1] != w.shape[0]:
        fail(ShapeError, "nn.dense", f"needs x [..., in] and w [in, out], got x {describe(x)} and w {describe(w)}")
    # as one [rows, in] x [in, out] product: `x @ w` of an [B, L, in] x broadcasts w to [B, in, out] and
    # contracts per batch, so the gradient of w became B products and a sum over them (a batched matmul with
    # an [B, in, out] result); contracting [B, L, in] in place, IREE 3.13's data tiling fails on the
    # backward pass ("operations with large vector sizes"). Rows flattened, every gradient is one matmul.
    rows = x.reshape((-1, x.shape[-1])) if x.ndim > 2 else x
    y = ops.dot_general(rows, w, ((rows.ndim - 1,), (0,)))
    y = y.reshape(x.shape[:-1] + (w.shape[1],)) if x.ndim > 2 else y
    if b is not None:
        b = as_tensor(b, "nn.dense")
        _check_shape("nn.dense", "b", b, (w.shape[1],), f" (w is {describe(w)})")
        y = y + b
    return y


def conv2d(x, w, b=None, stride=1, padding="VALID", dilation=1, groups: int = 1, layout: str = "NCHW"):
    """2-D convolution (cross-correlation) plus an optional bias per output channel: x [N, C, H, W] and
    w [O, C/groups, kh, kw] (OIHW) by default, as lax.conv; layout="NHWC" takes x [N, H, W, C] and HWIO
    w. padding: "VALID", "SAME", an int, or a (low, high) pair per spatial dimension."""
    x, w = as_tensor(x, "nn.conv2d"), as_tensor(w, "nn.conv2d")
    if layout not in ("NCHW", "NHWC"):
        fail(ValueError, "nn.conv2d", f"layout must be 'NCHW' or 'NHWC', not {layout!r}")
    if x.ndim != 4 or w.ndim != 4:
        kernel = "OIHW" if layout == "NCHW" else "HWIO"
        fail(ShapeError, "nn.conv2d", f"needs a rank-4 input ({layout}) and a rank-4 kernel ({kernel}), "
                                      f"got x {describe(x)} and w {describe(w)}")
    y = ops.conv(x, w, stride=stride, padding=padding, dilation=dilation, groups=groups, layout=layout)
    if b is not None:
        b = as_tensor(b, "nn.conv2d")
        out = w.shape[0] if layout == "NCHW" else w.shape[-1]
        _check_shape("nn.conv2d", "b", b, (out,), " (one per output channel)")
        y = y + (b.reshape(1, out, 1, 1) if layout == "NCHW" else b)
    return y


def max_pool(x, window, stride=None, padding="VALID", layout: str | None = None):
    """Maximum over each window of the spatial dimensions: x [N, C, *spatial] (or channels last with
    layout="NHWC"); stride defaults to the window."""
    return ops.max_pool(x, window, stride, padding, layout)


def avg_pool(x, window, stride=None, padding="VALID", layout: str | None = None):
    """Mean over each window (padding counts as zeros); shapes as `max_pool`."""
    return ops.avg_pool(x, window, stride, padding, layout)


def _stats_dtype(x):
    """Statistics of 16-bit floats are accumulated in float32 (a bf16 mean of 10^4 values is noise)."""
    return dtypes.float32 if x.dtype.itemsize == 2 else x.dtype


def batch_norm(x, scale, offset, mean, var, training: bool = False, momentum: float = 0.9, eps: float = 1e-5,
               axis: int = 1):
    """Batch normalisation over every axis but the feature `axis` (1: NCHW or [N, C]; -1: channels last).

    x [N, C, ...]; scale, offset, mean, var [C]. Returns (y, new_mean, new_var). Training normalises by the
    batch's mean and (biased) variance and returns the running statistics moved towards them,
    new = momentum * running + (1 - momentum) * batch (flax's convention); inference normalises by the
    running statistics and returns them unchanged."""
    op = "nn.batch_norm"
    x = _float(op, x)
    axis = _core.normalize_axis(op, axis, x.ndim)
    if x.ndim < 2:
        fail(ShapeError, op, f"needs a batch axis and a feature axis, got {describe(x)}")
    c = x.shape[axis]
    params = [as_tensor(p, op) for p in (scale, offset, mean, var)]
    for name, p in zip(("scale", "offset", "mean", "var"), params):
        _check_shape(op, name, p, (c,), f" (x {describe(x)} has {c} features on axis {axis})")
    if not 0 <= momentum <= 1:
        fail(ValueError, op, f"momentum must be in [0, 1], not {momentum!r}")
    scale, offset, mean, var = params
    features = [1] * x.ndim
    features[axis] = c
    reduce_axes = tuple(a for a in range(x.ndim) if a != axis)
    compute = _stats_dtype(x)
    xc = ops.astype(x, compute)
    if training:
        batch_mean = xc.mean(axis=reduce_axes)
        centred = xc - batch_mean.reshape(features)
        batch_var = (centred * centred).mean(axis=reduce_axes)
        new_mean = ops.astype(momentum * ops.astype(mean, compute) + (1 - momentum) * batch_mean, mean.dtype)
        new_var = ops.astype(momentum * ops.astype(var, compute) + (1 - momentum) * batch_var, var.dtype)
        use_mean, use_var = batch_mean, batch_var
    else:
        new_mean, new_var = mean, var
        use_mean, use_var = ops.astype(mean, compute), ops.astype(var, compute)
        centred = xc - use_mean.reshape(features)
    factor = ops.astype(scale, compute) * ops.rsqrt(use_var + eps)
    y = centred * factor.reshape(features) + ops.astype(offset, compute).reshape(features)
    return ops.astype(y, x.dtype), new_mean, new_var


def layer_norm(x, scale=None, offset=None, axis=-1, eps: float = 1e-5):
    """Normalise each example over `axis` (an int or a tuple; the last axis by default) to zero mean and
    unit variance, then y * scale + offset (both broadcast against x: shape [features] for the last axis)."""
    op = "nn.layer_norm"
    x = _float(op, x)
    axes = _core.normalize_axes(op, axis, x.ndim)
    compute = _stats_dtype(x)
    xc = ops.astype(x, compute)
    mu = xc.mean(axis=axes, keepdims=True)
    centred = xc - mu
    y = centred * ops.rsqrt((centred * centred).mean(axis=axes, keepdims=True) + eps)
    for name, p in (("scale", scale), ("offset", offset)):
        if p is None:
            continue
        p = as_tensor(p, op)
        if _core.broadcast_shapes(op, x.shape, p.shape) != x.shape:
            fail(ShapeError, op, f"{name} {describe(p)} does not broadcast to x {describe(x)}")
        y = y * ops.astype(p, compute) if name == "scale" else y + ops.astype(p, compute)
    return ops.astype(y, x.dtype)


def dropout(x, rate: float, key=None, training: bool = True):
    """Inverted dropout: each element is zeroed with probability `rate` and the survivors scaled by
    1 / (1 - rate), so the expected value is unchanged and inference needs no rescaling. The identity
    when not training (or rate is 0); `key` (a hj.random key) is required otherwise. Shapes: any."""
    op = "nn.dropout"
    x = _float(op, x)
    if isinstance(rate, bool) or not isinstance(rate, (int, float, np.floating)) or not 0 <= rate <= 1:
        fail(ValueError, op, f"rate must be a Python float in [0, 1], not {rate!r}")
    if not training or rate == 0:
        return x
    if rate == 1:
        return ops.zeros_like(x)
    if key is None:
        fail(ValueError, op, "training with rate > 0 needs a key (hj.random.key / split)")
    keep = random.bernoulli(key, 1.0 - float(rate), x.shape)
    return ops.where(keep, x * (1.0 / (1.0 - float(rate))), ops.zeros_like(x))


def embedding(ids, table):
    """Rows of `table` [vocab, dim] picked by integer `ids` of any shape -> [*ids.shape, dim]."""
    op = "nn.embedding"
    ids, table = as_tensor(ids, op), as_tensor(table, op)
    if ids.dtype.kind not in "iu" or ids.dtype == dtypes.bool_:
        fail(DTypeError, op, f"ids must be integers, not {describe(ids)}")
    if table.ndim != 2:
        fail(ShapeError, op, f"table must be [vocab, dim], not {describe(table)}")
    return ops.take(table, ids, axis=0)


# --- parameter dicts -----------------------------------------------------------------------------------

def init_dense(key, n_in: int, n_out: int, w_init=None, dtype=dtypes.float32) -> dict:
    """{"w": [n_in, n_out] (glorot_uniform unless `w_init`), "b": zeros [n_out]} for `dense`."""
    w_init = w_init or init.glorot_uniform()
    return {"w": w_init(key, (n_in, n_out), dtype), "b": init.zeros(key, (n_out,), dtype)}


def init_conv2d(key, in_channels: int, out_channels: int, kernel, groups: int = 1, w_init=None,
                dtype=dtypes.float32) -> dict:
    """{"w": OIHW [out, in/groups, kh, kw] (he_normal with OIHW fans unless `w_init`), "b": zeros [out]}."""
    kh, kw = (kernel, kernel) if isinstance(kernel, int) else kernel
    w_init = w_init or init.he_normal(in_axis=1, out_axis=0)
    w = w_init(key, (out_channels, in_channels // groups, kh, kw), dtype)
    return {"w": w, "b": init.zeros(key, (out_channels,), dtype)}


def init_batch_norm(channels: int, dtype=np.float32) -> tuple[dict, dict]:
    """(params {"scale": ones, "offset": zeros}, state {"mean": zeros, "var": ones}) as numpy arrays:
    the params are trained, the state is carried through the training step."""
    return ({"scale": np.ones(channels, dtype), "offset": np.zeros(channels, dtype)},
            {"mean": np.zeros(channels, dtype), "var": np.ones(channels, dtype)})


def init_embedding(key, vocab: int, dim: int, dtype=dtypes.float32):
    """A [vocab, dim] table of normal(1/sqrt(dim)) draws."""
    return init.normal(1.0 / np.sqrt(dim))(key, (vocab, dim), dtype)
