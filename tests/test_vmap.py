"""hj.vmap: every batching rule against a Python loop over the batch (results stacked), on every target.

The table's cases are batched into ONE module per target: each case returns both its vmap and its loop,
so a target compiles the table once. The batch sits at several axes (in_axes 0, 1, -1, None).
"""
import numpy as np
import pytest

import hlojit as hj
from hlojit import ops
from hlojit.frontend.autodiff import RULES as VJP_RULES
from hlojit.frontend.batching import NEVER_BATCHED, RULES
from hlojit.backends.reference.interpreter import supported_ops
from conftest import BACKENDS, line_in

rng = np.random.default_rng(0)
f32 = np.float32


def normal(*shape):
    return rng.normal(size=shape).astype(f32)


def ints(*shape, low=-4, high=9):
    return rng.integers(low, high, size=shape).astype(np.int32)


def _switch_branches():
    return [lambda v: v * 2, lambda v: v - 1, lambda v: ops.sin(v)]


CASES = [  # (id, fn, args, in_axes)
    # elementwise
    ("unary", lambda x: ops.sin(x) * ops.exp(-x) + ops.tanh(x), (normal(3, 4),), 0),
    ("unary axis 1", lambda x: ops.sqrt(ops.abs(x)) + ops.log1p(x * x), (normal(4, 3),), 1),
    ("binary with unbatched", lambda x, y: x * y + ops.maximum(x, y), (normal(4, 3), normal(4)), (1, None)),
    ("binary axes disagree", lambda x, y: x - y / 2, (normal(3, 4), normal(4, 3)), (0, 1)),
    ("negative axis", lambda x, y: ops.minimum(x, y) ** 2, (normal(2, 4, 3), normal(3, 2, 4)), (-1, 0)),
    ("select on a batched scalar", lambda s, a, b: ops.where(s > 0, a, b), (normal(3), normal(4), normal(3, 4)),
     (0, None, 0)),
    ("clip by a batched bound", lambda x, lo: ops.clip(x, lo, 0.5), (normal(3, 4), normal(3)), 0),
    ("integers", lambda i: ((i.astype(f32) * 2).astype(np.int32) + (i >> 1)) & 3 ^ ops.abs(i),
     (ints(3, 5),), 0),
    ("bitcast and isfinite", lambda x: ops.where(ops.isfinite(x), ops.bitcast(x, np.uint32) >> 3, 7),
     (np.array([[1.0, np.inf], [np.nan, -2.0], [0.5, 3.0]], f32),), 0),
    ("power and atan2", lambda x, y: ops.power(ops.abs(x) + 1, y) + ops.arctan2(x, y),
     (normal(4, 3), normal(3, 4)), (1, 0)),
    # shape
    ("reshape", lambda x: x.reshape(6, 2) * 2, (normal(4, 3, 3),), 1),
    ("transpose and broadcast", lambda x: ops.broadcast_to(x.T, (2, 3, 4)) + 1, (normal(4, 3, 5),), 2),
    ("slice pad concatenate flip", lambda x, y: ops.concatenate([ops.flip(x[1:4], 0), ops.pad(y, (1, 2)), y], 0),
     (normal(3, 5), normal(2)), (0, None)),
    ("strided slice", lambda x: x[::2, 1:], (normal(5, 3, 4),), 1),
    ("pad with a batched value", lambda x, c: ops.pad(x, 1, constant_values=c), (normal(3, 4), normal(3)), 0),
    ("dynamic_slice batched start", lambda x, i: ops.dynamic_slice(x, (i,), (2,)),
     (normal(3, 6), np.array([0, 4, 9], np.int32)), 0),
    ("dynamic_slice shared start", lambda x, i: ops.dynamic_slice(x, (i, 1), (2, 2)),
     (normal(4, 3, 5), np.int32(1)), (1, None)),
    ("dynamic_update_slice batched start", lambda x, u, i: ops.dynamic_update_slice(x, u, (i,)),
     (normal(3, 6), normal(2), np.array([-1, 2, 5], np.int32)), (0, None, 0)),
    ("dynamic_update_slice shared start", lambda x, u, i: ops.dynamic_update_slice(x, u, (i,)),
     (normal(6, 3), normal(3, 2), np.int32(3)), (1, 0, None)),
    # reductions
    ("sum max argmax", lambda x: (x.sum(0), x.max(1), ops.argmax(x, 1)), (normal(4, 3, 5),), 1),
    ("cumsum", lambda x: ops.cumsum(x, 1), (normal(3, 2, 5),), 0),
    ("max_pool", lambda x: ops.max_pool(x, (2, 2)), (normal(1, 2, 3, 4, 4),), 2),
    ("sort top_k argsort", lambda x: (ops.sort(x), ops.top_k(x, 2)[0], ops.argsort(x)), (normal(4, 3),), 1),
    # dot_general
    ("matmul both batched", lambda a, b: a @ b, (normal(3, 2, 4), normal(4, 3, 5)), (0, 1)),
    ("matmul lhs batched", lambda a, b: a @ b, (normal(2, 3, 4), normal(4, 5)), (1, None)),
    ("matmul rhs batched", lambda a, b: a @ b, (normal(2, 4), normal(4, 5, 3)), (None, 2)),
    ("batched matmul", lambda a, b: ops.matmul(a, b), (normal(2, 3, 4, 3), normal(2, 4, 5)), (3, None)),
    # convolution
    ("conv input batched", lambda x, w: ops.conv(x, w), (normal(3, 2, 2, 5, 5), normal(4, 2, 3, 3)), (0, None)),
    ("conv kernel batched", lambda x, w: ops.conv(x, w, padding="SAME"), (normal(2, 2, 5, 5), normal(4, 2, 3, 3, 3)),
     (None, 4)),
    ("conv both batched", lambda x, w: ops.conv(x, w), (normal(2, 2, 3, 5, 5), normal(3, 4, 2, 3, 3)), (2, 0)),
    ("grouped conv both batched", lambda x, w: ops.conv(x, w, groups=2, layout="NHWC"),
     (normal(3, 1, 5, 5, 4), normal(3, 3, 2, 6, 3)), (0, -1)),
    # gather and scatter
    ("gather batched indices", lambda x, i: x[i], (normal(5), ints(3, 2, low=0, high=5)), (None, 0)),
    ("gather batched operand", lambda x, i: x[i], (normal(3, 5), ints(2, low=0, high=5)), (0, None)),
    ("gather both batched", lambda x, i: ops.take_along_axis(x, i, 0), (normal(5, 3), ints(3, 3, low=0, high=5)),
     (1, 0)),
    ("scatter-add batched operand", lambda x, i, u: x.at[i].add(u),
     (normal(3, 5), np.array([0, 2, 2], np.int32), normal(3)), (0, None, None)),
    ("scatter-set batched indices", lambda x, i, u: x.at[i].set(u),
     (normal(5, 2), ints(3, 2, low=0, high=5), normal(2, 2)), (None, 0, None)),
    ("scatter-max all batched", lambda x, i, u: x.at[i].max(u),
     (normal(3, 5, 3), ints(3, 2, low=0, high=5), normal(2, 3, 3)), (0, 0, 1)),
    # control flow
    ("cond batched predicate", lambda p, x: ops.cond(p > 0, lambda v: v * 2, lambda v: v - 1, x),
     (normal(3), normal(3, 4)), 0),
    ("cond shared predicate", lambda p, x: ops.cond(p > 0, lambda v: v * 2, lambda v: ops.exp(v), x),
     (np.float32(-1), normal(3, 4)), (None, 0)),
    ("switch batched index", lambda i, x: ops.switch(i, _switch_branches(), x),
     (np.array([0, 2, 7, -3], np.int32), normal(4, 2)), 0),
    ("while_loop batched test", lambda n, x: ops.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, c[1] * 1.5),
                                                            (0, x))[1],
     (np.array([0, 3, 1], np.int32), normal(3, 2)), 0),
    ("fori_loop batched carry", lambda x, y: ops.fori_loop(0, 3, lambda i, c: c * y + i, x),
     (normal(3, 2), normal(2)), (0, None)),
    ("scan", lambda c, xs: ops.scan(lambda c, x: (c + x, c * x), c, xs), (normal(3, 2), normal(4, 3, 2)), (0, 1)),
    # random keys
    ("random normal per key", lambda k: hj.random.normal(k, (3,)), (hj.random.split(hj.random.key(0), 4),), 0),
    ("random uniform per key", lambda k: hj.random.uniform(k, (2, 2)), (hj.random.split(hj.random.key(1), 3),), 0),
    # nesting
    ("nested vmap", lambda x, y: hj.vmap(lambda a: hj.vmap(lambda b: a * b + ops.sin(a))(y))(x),
     (normal(3, 2), normal(4, 2)), (0, None)),
]


def _loop(fn, args, in_axes):
    """fn over the batch in a Python loop, each output leaf stacked along a new axis 0."""
    axes = in_axes if isinstance(in_axes, tuple) else (in_axes,) * len(args)
    sizes = {np.shape(a)[ax] for a, ax in zip(args, axes) if ax is not None}
    (size,) = sizes
    outs = []
    for i in range(size):
        example = [a if ax is None else ops.moveaxis(a, ax, 0)[i] for a, ax in zip(args, axes)]
        outs.append(fn(*example))
    if isinstance(outs[0], tuple):
        return tuple(ops.stack([o[k] for o in outs]) for k in range(len(outs[0])))
    return ops.stack(outs)


def _table(inputs):
    return [(hj.vmap(fn, in_axes)(*args), _loop(fn, args, in_axes)) for (_, fn, _, in_axes), args in
            zip(CASES, inputs)]


_RESULTS: dict = {}


def _results(backend):
    if backend not in _RESULTS:
        _RESULTS[backend] = hj.jit(_table, backend=backend)([case[2] for case in CASES])
    return _RESULTS[backend]


def _tolerance(case_id, dtype):
    if dtype.kind != "f":
        return 0, 0
    return 2e-5, 2e-5


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("index", range(len(CASES)), ids=[c[0] for c in CASES])
def test_rule_against_a_loop(backend, index):
    batched, looped = _results(backend)[index]
    batched = batched if isinstance(batched, tuple) else (batched,)
    looped = looped if isinstance(looped, tuple) else (looped,)
    for b, expected in zip(batched, looped):
        b, expected = np.asarray(b), np.asarray(expected)
        assert b.shape == expected.shape and b.dtype == expected.dtype
        rtol, atol = _tolerance(CASES[index][0], expected.dtype)
        np.testing.assert_allclose(b, expected, rtol=rtol, atol=atol, equal_nan=True)
