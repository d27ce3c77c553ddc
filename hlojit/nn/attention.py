"""Attention: scaled dot-product attention and the multi-head layer built on it (Vaswani et al., 2017)."""
from __future__ import annotations

import numpy as np

from ..dialects.types import finfo
from ..errors import DTypeError, ShapeError
from ..frontend import dtypes, ops
from ..frontend.ops._core import as_tensor, describe, fail
from . import initializers as init
from .layers import dense


def _mask_logits(op: str, logits, mask):
    mask = as_tensor(mask, op)
    if mask.dtype != dtypes.bool_:
        fail(DTypeError, op, f"mask must be bool (True where a query may attend), not {describe(mask)}")
    try:
        fits = np.broadcast_shapes(logits.shape, mask.shape) == logits.shape
    except ValueError:
        fits = False
    if not fits:
        fail(ShapeError, op, f"mask {describe(mask)} does not broadcast to the attention logits "
                             f"{describe(logits)} ([..., queries, keys])")
    # the lowest finite value rather than -inf: a fully masked row gives equal weights, not NaN (IREE's data-tiled
    # cpu build keeps the select out of the logits' matmul: compile_rewrites.traced_bools_apart_from_matmuls)
    return ops.where(mask, logits, float(finfo(logits.dtype).min))


def dot_product_attention(q, k, v, mask=None):
    """softmax(q kᵀ / sqrt(d) where mask, else -big) v over the key axis.

    q [..., Lq, d], k [..., Lk, d], v [..., Lk, dv] -> [..., Lq, dv]; the leading axes (batch, heads)
    broadcast. mask: bool, broadcastable to [..., Lq, Lk], True where a query may attend to a key."""
    op = "nn.dot_product_attention"
    q, k, v = (as_tensor(t, op) for t in (q, k, v))
    if q.ndim < 2 or k.ndim < 2 or v.ndim < 2 or q.shape[-1] != k.shape[-1] or k.shape[-2] != v.shape[-2]:
        fail(ShapeError, op, f"needs q [..., Lq, d], k [..., Lk, d], v [..., Lk, dv]; got q {describe(q)}, "
                             f"k {describe(k)}, v {describe(v)}")
    logits = (q @ ops.swapaxes(k, -1, -2)) * float(1 / np.sqrt(q.shape[-1]))
    if mask is not None:
        logits = _mask_logits(op, logits, mask)
    return ops.softmax(logits, axis=-1) @ v


def _heads(x, num_heads: int):
    """[B, L, D] -> [B, H, L, D/H]."""
    b, length, d = x.shape
    return ops.transpose(x.reshape(b, length, num_heads, d // num_heads), (0, 2, 1, 3))


def attention(x, params: dict, num_heads: int, mask=None, context=None):
    """Multi-head attention: queries from x [B, Lq, D], keys and values from `context` [B, Lk, D] (x itself
    when None: self-attention) -> [B, Lq, D].

    params: {"wq", "wk", "wv", "wo": [D, D], "bq", "bk", "bv", "bo": [D]} (biases optional), as
    `init_attention` makes them. mask: bool, broadcastable to [B, H, Lq, Lk]; one of shape [B, Lq, Lk] or
    [Lq, Lk] applies to every head. True where a query may attend."""
    op = "nn.attention"
    x = as_tensor(x, op)
    context = x if context is None else as_tensor(context, op)
    if x.ndim != 3 or context.ndim != 3 or x.shape[0] != context.shape[0] or x.shape[2] != context.shape[2]:
        fail(ShapeError, op, f"needs x [B, Lq, D] and context [B, Lk, D], got x {describe(x)} and context "
                             f"{describe(context)}")
    d = x.shape[-1]
    if not isinstance(num_heads, (int, np.integer)) or num_heads < 1 or d % num_heads:
        fail(ValueError, op, f"num_heads ({num_heads!r}) must be a positive int dividing the model width {d}")
    missing = [name for name in ("wq", "wk", "wv", "wo") if name not in params]
    if missing:
        fail(ValueError, op, f"params lacks {', '.join(missing)} (has {', '.join(sorted(params))})")
    for name in ("wq", "wk", "wv", "wo"):
        w = as_tensor(params[name], op)
        if w.shape != (d, d):
            fail(ShapeError, op, f"params[{name!r}] must be [{d}, {d}] for width {d}, not {describe(w)}")
    q, k, v = (_heads(dense(t, params[f"w{n}"], params.get(f"b{n}")), num_heads)
               for t, n in ((x, "q"), (context, "k"), (context, "v")))
    if mask is not None:
        mask = as_tensor(mask, op)
        if mask.ndim == 3:
            mask = ops.expand_dims(mask, 1)
    out = dot_product_attention(q, k, v, mask)                       # [B, H, Lq, D/H]
    b, _, lq, _ = out.shape
    out = ops.transpose(out, (0, 2, 1, 3)).reshape(b, lq, d)
    return dense(out, params["wo"], params.get("bo"))


def init_attention(key, dim: int, bias: bool = True, dtype=dtypes.float32) -> dict:
    """Parameters for `attention`: four glorot_uniform [dim, dim] projections (and zero biases)."""
    from .. import random
    keys = random.split(key, 4)
    w_init = init.glorot_uniform()
    params = {f"w{n}": w_init(keys[i], (dim, dim), dtype) for i, n in enumerate("qkvo")}
    if bias:
        params.update({f"b{n}": init.zeros(key, (dim,), dtype) for n in "qkvo"})
    return params
