"""hj.vmap: every batching rule against a Python loop over the batch (results stacked), on every target.

The table's vmaps are batched into ONE module per target; the loops, the oracle, run once on the reference
backend. The batch sits at several axes (in_axes 0, 1, -1, None).
"""
import numpy as np
import pytest

import hlojit as hj
from hlojit import ops
from hlojit.frontend.autodiff import RULES as VJP_RULES
from hlojit.frontend.batching import NEVER_BATCHED, RULES
from hlojit.interpreter import supported_ops
from conftest import BACKENDS, LIBRARY_BACKENDS, line_in
from test_registry import GAPS as REGISTRY_GAPS   # the batching table's deliberate gaps, with why

rng = np.random.default_rng(0)
f32 = np.float32


def normal(*shape):
    return rng.normal(size=shape).astype(f32)


def ints(*shape, low=-4, high=9):
    return rng.integers(low, high, size=shape).astype(np.int32)


def _switch_branches():
    return [lambda v: v * 2, lambda v: v - 1, lambda v: ops.sin(v)]


_UNARY = ("ceil", "cosine", "exponential_minus_one", "logistic", "round_nearest_afz", "round_nearest_even",
          "sine")   # not cbrt, sign, tan: vmvx cannot compile them
_EVERY_OP_TEXT = "\n".join([
    "func.func @main(%x: tensor<4xf32>, %y: tensor<4xf32>, %init: tensor<f32>) -> (" +
    ", ".join(["tensor<4xf32>"] * (len(_UNARY) + 4) + ["tensor<f32>"]) + ") {",
    "  %a = stablehlo.abs %x : tensor<4xf32>",
    "  %half = stablehlo.constant dense<0.5> : tensor<4xf32>",
    "  %p = stablehlo.add %a, %half : tensor<4xf32>",
    *[f"  %u{k} = stablehlo.{name} %x : tensor<4xf32>" for k, name in enumerate(_UNARY)],
    "  %log = stablehlo.log %p : tensor<4xf32>",
    "  %rsqrt = stablehlo.rsqrt %p : tensor<4xf32>",
    "  %atan2 = stablehlo.atan2 %x, %y : tensor<4xf32>",
    "  %rem = stablehlo.remainder %x, %p : tensor<4xf32>",
    "  %sum = stablehlo.reduce(%x init: %init) applies stablehlo.add across dimensions = [0] : "
    "(tensor<4xf32>, tensor<f32>) -> tensor<f32>",
    "  return " + ", ".join([f"%u{k}" for k in range(len(_UNARY))] + ["%log", "%rsqrt", "%atan2", "%rem", "%sum"]) +
    " : " + ", ".join(["tensor<4xf32>"] * (len(_UNARY) + 4) + ["tensor<f32>"]),
    "}"])
EVERY_OP = hj.from_mlir(_EVERY_OP_TEXT, backend="reference")   # traced inline: ops the frontend never emits

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
    ("every elementwise op, a reduce with batched init (lane by lane)", EVERY_OP,
     (normal(3, 4), normal(4, 3), normal(3)), (0, 1, 0)),
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
    ("sum max", lambda x: (x.sum(0), x.max(1), ops.min(x)), (normal(4, 3, 5),), 1),
    # (argmax at in_axes 1 moves its result with a transpose, which IREE 3.13's llvm-cpu cannot compile after
    # a variadic reduce even without vmap: ops.argmax(x, 2).T fails the same way)
    ("argmax argmin", lambda x: (ops.argmax(x, 1), ops.argmin(x)), (normal(3, 4, 5),), 0),
    ("cumsum", lambda x: ops.cumsum(x, 1), (normal(3, 2, 5),), 0),
    ("max_pool", lambda x: ops.max_pool(x, (2, 2)), (normal(1, 2, 3, 4, 4),), 2),
    ("max_pool gradient (select_and_scatter)",
     lambda x, g: hj.grad(lambda x: ops.sum(ops.max_pool(x, 3, 2, padding=1) * g))(x),
     (normal(2, 1, 2, 7, 6), normal(1, 2, 4, 2, 3)), (0, 3)),
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


def _batched(inputs):
    return [hj.vmap(fn, in_axes)(*args) for (_, fn, _, in_axes), args in zip(CASES, inputs)]


def _looped(inputs):
    return [_loop(fn, args, in_axes) for (_, fn, _, in_axes), args in zip(CASES, inputs)]


_RESULTS: dict = {}


def _compiled(fn, backend):
    """fn's results over the table's inputs on `backend` from one compiled module (or the error compiling it
    raised), memoised."""
    if (fn, backend) not in _RESULTS:
        try:
            _RESULTS[fn, backend] = hj.jit(fn, backend=backend)([case[2] for case in CASES])
        except Exception as e:  # every case reports it
            _RESULTS[fn, backend] = e
    if isinstance(_RESULTS[fn, backend], Exception):
        raise _RESULTS[fn, backend].with_traceback(None)   # shared: not the traceback the last case grew
    return _RESULTS[fn, backend]


def _results(backend):
    """(vmap on `backend`, the loop on the reference backend) per case. The loop, the oracle, is not compiled
    for IREE: it unrolls every example, and doubled the IREE compile of the table (~40 s a target)."""
    return list(zip(_compiled(_batched, backend), _compiled(_looped, "reference")))


def _tolerance(case_id, dtype):
    if dtype.kind != "f":
        return 0, 0
    return 2e-5, 2e-5


# The batched programs are the spec's ops in other shapes: vmvx's lowering of each is the op tables' to check
# (conftest.LIBRARY_BACKENDS); the table's module took ~11 s of the suite there (2026-12-06)
@pytest.mark.shares_compiles
@pytest.mark.parametrize("backend", LIBRARY_BACKENDS)
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


# --- the rule table covers every op -----------------------------------------------------------------

def test_every_op_autodiff_or_the_interpreter_knows_has_a_batching_rule():
    """Every StableHLO op autodiff differentiates or the reference interpreter runs is batched by a rule,
    named in NEVER_BATCHED with the reason, or listed among the registry's batching gaps (test_registry)."""
    ops_known = (set(VJP_RULES) | set(supported_ops())) - {"func.call"} - set(REGISTRY_GAPS["batching"])
    missing = sorted(name for name in ops_known if name not in RULES and name not in NEVER_BATCHED)
    assert not missing, f"no batching rule for {missing}"
    assert all(NEVER_BATCHED.values())


# --- composition with jit, grad and friends -----------------------------------------------------------

def _loss(w, x, y):
    return ((ops.tanh(x @ w) - y) ** 2).sum()


def _per_example_grads_numpy(w, xs, ys):
    out = []
    for x, y in zip(xs, ys):
        t = np.tanh(x @ w)
        out.append(np.outer(x, 2 * (t - y) * (1 - t * t)))
    return np.stack(out)


@pytest.mark.parametrize("backend", BACKENDS)
def test_vmap_of_grad_and_grad_of_vmap(backend):
    w, xs, ys = normal(3, 2), normal(4, 3), normal(4, 2)

    def both(w, xs, ys):
        per_example = hj.vmap(hj.grad(_loss), in_axes=(None, 0, 0))(w, xs, ys)
        total = hj.grad(lambda w: hj.vmap(_loss, in_axes=(None, 0, 0))(w, xs, ys).sum())(w)
        value, through = hj.value_and_grad(lambda w: hj.vmap(lambda x: ops.sin(x @ w))(xs).sum())(w)
        return per_example, total, value, through
    per_example, total, value, through = hj.jit(both, backend=backend)(w, xs, ys)
    expected = _per_example_grads_numpy(w, xs, ys)
    np.testing.assert_allclose(np.asarray(per_example), expected, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.asarray(total), expected.sum(0), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.asarray(value), np.sin(xs @ w).sum(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.asarray(through), xs.T @ np.cos(xs @ w), rtol=1e-5, atol=1e-5)


def test_vmap_outside_jit_runs_on_the_default_backend():
    xs = normal(4, 3)
    got = hj.vmap(lambda x: ops.exp(x).sum())(xs)
    assert isinstance(got, hj.Array)
    np.testing.assert_allclose(np.asarray(got), np.exp(xs).sum(1), rtol=1e-6)
    per_example = hj.vmap(hj.grad(lambda x: (x * x).sum()))(xs)
    np.testing.assert_allclose(np.asarray(per_example), 2 * xs, rtol=1e-6)


def test_vjp_jvp_and_custom_vjp_under_vmap_both_ways():
    @hj.custom_vjp
    def square(x):
        return x * x

    square.defvjp(lambda x: (x * x, x), lambda x, g: (3.0 * g * x,))   # a deliberately "wrong" derivative
    xs, ts = normal(3, 4), normal(3, 4)

    def program(xs, ts):
        tangent = hj.vmap(lambda x, t: hj.jvp(ops.sin, (x,), (t,))[1])(xs, ts)
        cotangent = hj.vmap(lambda x, g: hj.vjp(ops.exp, x)[1](g)[0])(xs, ts)
        custom_inside = hj.vmap(hj.grad(lambda x: square(x).sum()))(xs)
        custom_outside = hj.grad(lambda x: hj.vmap(square)(x).sum())(xs)
        through_a_loop = hj.grad(lambda x: hj.vmap(lambda v: ops.fori_loop(0, 2, lambda i, c: c * v, v))(x).sum())(xs)
        return tangent, cotangent, custom_inside, custom_outside, through_a_loop
    tangent, cotangent, inside, outside, loop = hj.jit(program, backend="reference")(xs, ts)
    np.testing.assert_allclose(np.asarray(loop), 3 * xs * xs, rtol=1e-6)     # d(v**3)/dv
    np.testing.assert_allclose(np.asarray(tangent), np.cos(xs) * ts, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(cotangent), np.exp(xs) * ts, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(inside), 3 * xs, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(outside), 3 * xs, rtol=1e-6)


def test_pytrees_in_axes_out_axes_and_axis_size():
    params = {"w": normal(3, 2), "b": normal(2)}
    xs = normal(3, 5)                                 # batch along axis 1

    def layer(p, x):
        return {"y": x @ p["w"] + p["b"], "n": (x * x).sum()}
    f = hj.jit(hj.vmap(layer, in_axes=({"w": None, "b": None}, 1), out_axes={"y": 1, "n": 0}), backend="reference")
    out = f(params, xs)
    np.testing.assert_allclose(np.asarray(out["y"]), (xs.T @ params["w"] + params["b"]).T, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(out["n"]), (xs * xs).sum(0), rtol=1e-5)
    ones = hj.jit(hj.vmap(lambda: ops.ones(2), in_axes=(), axis_size=3), backend="reference")()
    np.testing.assert_array_equal(np.asarray(ones), np.ones((3, 2), f32))
    shared = hj.jit(hj.vmap(lambda x, c: c * 2, in_axes=(0, None), out_axes=(None)), backend="reference")
    np.testing.assert_array_equal(np.asarray(shared(xs, np.float32(2))), np.float32(4))


# --- errors --------------------------------------------------------------------------------------------

def test_inconsistent_sizes_name_the_arguments_and_the_line():
    def f(x, y):
        return x + y
    sizes = r"x has size 5 at axis 0, y has size 3 at axis 0 \(at test_vmap.py:\d+"
    with pytest.raises(hj.ShapeError, match=sizes) as e:
        hj.jit(lambda x, y: hj.vmap(f)(x, y), backend="reference")(normal(5, 2), normal(3, 2))  # sizes line
    assert f"test_vmap.py:{line_in(__file__, '# sizes line')}" in str(e.value)


def test_out_of_range_axes_and_bad_structures():
    run = lambda fn, *args: hj.jit(fn, backend="reference")(*args)  # noqa: E731
    with pytest.raises(hj.ShapeError, match="in_axes 2 is out of range for x of shape"):
        run(lambda x: hj.vmap(lambda x: x, in_axes=2)(x), normal(3, 2))
    with pytest.raises(hj.ShapeError, match="out_axes 3 is out of range"):
        run(lambda x: hj.vmap(lambda x: x, out_axes=3)(x), normal(3, 2))
    with pytest.raises(hj.TracingError, match="in_axes"):
        run(lambda x: hj.vmap(lambda x: x, in_axes=(0, 0))(x), normal(3, 2))
    with pytest.raises(hj.ShapeError, match="out_axes None"):
        run(lambda x: hj.vmap(lambda x: x, out_axes=None)(x), normal(3, 2))
    with pytest.raises(hj.TracingError, match="axis_size"):
        run(lambda x: hj.vmap(lambda x: x, in_axes=None)(x), normal(3, 2))


def test_an_op_without_a_rule_names_the_op_and_the_line(monkeypatch):
    import hlojit.frontend.batching.core as core
    monkeypatch.delitem(core.RULES, "stablehlo.exponential")
    message = r"no batching rule for stablehlo.exponential \(built at test_vmap.py:\d+"
    with pytest.raises(hj.TracingError, match=message):
        hj.jit(lambda x: hj.vmap(lambda v: ops.exp(v) + 0)(x), backend="reference")(normal(3))


def test_vmap_of_a_module_from_another_tool(backend):
    """A JAX export (with a private helper called by func.call) batched like a traced function, and
    differentiated through."""
    import os
    module = hj.from_mlir(os.path.join(os.path.dirname(__file__), "data", "jax", "mlp.mlir"), backend=backend)
    xs, w, b = normal(3, 4, 8), normal(8, 2), normal(2)

    def program(xs, w, b):
        batched = hj.vmap(module, in_axes=(0, None, None))(xs, w, b)
        slope = hj.grad(lambda w: hj.vmap(module, in_axes=(0, None, None))(xs, w, b).sum())(w)
        return batched, slope
    batched, slope = hj.jit(program, backend=backend)(xs, w, b)
    pre = np.einsum("nij,jk->nik", xs, w) + b
    np.testing.assert_allclose(np.asarray(batched), np.maximum(pre, 0), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.asarray(slope), np.einsum("nij,nik->jk", xs, (pre > 0).astype(f32)),
                               rtol=1e-5, atol=1e-5)


_IREE_ONLY_TEXT = """
func.func @main(%lo: tensor<f32>, %x: tensor<4xf32>, %state: tensor<2xui64>)
    -> (tensor<4xf32>, tensor<2xui64>, tensor<4xui32>) {
  %hi = stablehlo.constant dense<0.5> : tensor<f32>
  %c = stablehlo.clamp %lo, %x, %hi : (tensor<f32>, tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %s, %bits = stablehlo.rng_bit_generator %state, algorithm = THREE_FRY
      : (tensor<2xui64>) -> (tensor<2xui64>, tensor<4xui32>)
  return %c, %s, %bits : tensor<4xf32>, tensor<2xui64>, tensor<4xui32>
}"""


@pytest.mark.parametrize("backend", ["iree:cpu", "iree:vmvx"])
def test_clamp_and_rng_bit_generator_against_a_loop(backend):
    """clamp with a batched 0-d bound, and rng_bit_generator from a batched state (lane by lane): the
    reference interpreter runs neither, so they are checked on the IREE targets only."""
    module = hj.from_mlir(_IREE_ONLY_TEXT, backend=backend)
    states = np.arange(6, dtype=np.uint64).reshape(3, 2)
    args, in_axes = (normal(3), normal(4, 3), states), (0, 1, 0)
    batched, looped = hj.jit(lambda *a: (hj.vmap(module, in_axes)(*a), _loop(module, a, in_axes)),
                             backend=backend)(*args)
    for b, expected in zip(batched, looped):
        np.testing.assert_array_equal(np.asarray(b), np.asarray(expected))
    np.testing.assert_array_equal(np.asarray(batched[0]), np.clip(args[1].T, args[0][:, None], 0.5))
    assert len({tuple(row) for row in np.asarray(batched[2])}) == 3     # each state its own bits
