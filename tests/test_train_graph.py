"""What a training step's backward pass is made of: the closed-form derivatives of softmax, log_softmax and
gelu (`derivatives.closed_form` in ops/statistics.py, ops/math.py) against finite differences and closed
forms, and the shapes of the StableHLO a dense layer and attention differentiate into (one 2-D product per
weight gradient, no transposes after the products, no comparison masks for softmax's max)."""
from __future__ import annotations

import re

import numpy as np
import pytest

import hlojit as hj
from hlojit import nn, ops

rng = np.random.default_rng(0)


def check(fn, *args, argnum=0, rtol=1e-6, atol=1e-7, eps=1e-6):
    """hj.grad of the scalar fn on the reference backend against central differences (float64)."""
    run = hj.jit(fn, backend="reference")
    x = np.array(args[argnum], dtype=np.float64)
    numeric = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        for sign in (1, -1):
            moved = list(args)
            moved[argnum] = x.copy()
            moved[argnum][i] += sign * eps
            numeric[i] += sign * float(np.asarray(run(*moved))) / (2 * eps)
    got = np.asarray(hj.jit(hj.grad(fn, argnum), backend="reference")(*args))
    np.testing.assert_allclose(got, numeric, rtol=rtol, atol=atol)
AXES = [1, (0, 2)]


@pytest.mark.parametrize("axis", AXES, ids=["axis1", "axes02"])
def test_softmax_and_log_softmax_gradients(axis):
    x = rng.normal(size=(2, 3, 4))
    w = rng.uniform(0.5, 1.5, (2, 3, 4))
    check(lambda x: ops.sum(ops.softmax(x, axis=axis) * w), x)
    check(lambda x: ops.sum(ops.log_softmax(x, axis=axis) * w), x)
    check(lambda x: nn.softmax_cross_entropy(x.reshape(6, 4), np.array([0, 3, 1, 2, 2, 1])), x)


@pytest.mark.parametrize("approximate", [True, False])
def test_gelu_gradient_and_second_derivative(approximate):
    x = np.linspace(-4, 4, 17)
    check(lambda x: ops.sum(nn.gelu(x, approximate=approximate) * np.arange(17)), x)
    # the second derivative through the region's backward pass (grad of grad), against finite differences
    slope = hj.grad(lambda x: ops.sum(nn.gelu(x, approximate=approximate)))
    check(lambda x: ops.sum(slope(x) * np.arange(17)), x, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("approximate", [True, False])
def test_gelu_and_softmax_hessians(approximate):
    """hessian (jacfwd of jacrev: vmap around the vjp) through the regions: a region made inside the
    backward pass (the exact gelu's slope through erfc) once made this a segfault."""
    x = np.linspace(-2, 2, 4)
    h = np.asarray(hj.jit(hj.hessian(lambda x: ops.sum(nn.gelu(x, approximate=approximate))),
                          backend="reference")(x))
    slope = hj.jit(hj.grad(lambda x: ops.sum(nn.gelu(x, approximate=approximate))), backend="reference")
    eps = 1e-6
    np.testing.assert_allclose(np.diag(h), (np.asarray(slope(x + eps)) - np.asarray(slope(x - eps))) / (2 * eps),
                               rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(h - np.diag(np.diag(h)), 0, atol=1e-12)
    w = np.arange(4.0)
    hs = np.asarray(hj.jit(hj.hessian(lambda x: ops.sum(ops.softmax(x) * w)), backend="reference")(x))
    grad = hj.jit(hj.grad(lambda x: ops.sum(ops.softmax(x) * w)), backend="reference")
    for i in range(4):
        step = np.eye(4)[i] * eps
        column = (np.asarray(grad(x + step)) - np.asarray(grad(x - step))) / (2 * eps)
        np.testing.assert_allclose(hs[:, i], column, rtol=1e-5, atol=1e-7)


def test_softmax_second_order_and_jvp():
    x, v = rng.normal(size=(3, 5)), rng.normal(size=(3, 5))
    w = rng.uniform(0.5, 1.5, (3, 5))

    def f(x):
        return ops.sum(ops.softmax(x, axis=-1) * w) + ops.sum(ops.log_softmax(x * x, axis=0) * w)
    check(lambda x: ops.sum(hj.grad(f)(x) * v), x, rtol=1e-5, atol=1e-6)
    _, tangent = hj.jit(lambda x, v: hj.jvp(f, (x,), (v,)), backend="reference")(x, v)
    expected = hj.jit(hj.grad(f), backend="reference")(x)
    np.testing.assert_allclose(float(np.asarray(tangent)), float(np.sum(np.asarray(expected) * v)), rtol=1e-10)


def test_masked_softmax_gradient_is_finite_and_closed_form():
    """-inf logits (masked out): zero weight and zero gradient there, y * (g - sum(g y)) elsewhere."""
    x = np.array([[0.5, -np.inf, 1.0, -0.25]])
    g = np.array([[1.0, 2.0, -1.0, 0.5]])
    got = np.asarray(hj.jit(hj.grad(lambda x: ops.sum(ops.softmax(x) * g)), backend="reference")(x))
    e = np.exp(x - 1.0)
    y = e / e.sum()
    np.testing.assert_allclose(got, y * (g - (g * y).sum()), rtol=1e-12)


def test_sixteen_bit_softmax_gradient_computes_in_float32():
    x = rng.normal(size=(4, 8)).astype(np.float16)
    w = rng.uniform(0.5, 1.5, (4, 8)).astype(np.float16)
    got = hj.jit(hj.grad(lambda x: ops.sum(ops.softmax(x) * w)), backend="reference")(x)
    assert np.asarray(got).dtype == np.float16
    y = np.exp(x.astype(np.float64)) / np.exp(x.astype(np.float64)).sum(-1, keepdims=True)
    wide = w.astype(np.float64)
    np.testing.assert_allclose(np.asarray(got, np.float64), y * (wide - (wide * y).sum(-1, keepdims=True)),
                               rtol=1e-2, atol=2e-3)


# --- the StableHLO of a training step ---------------------------------------------------------------

SEQ, WIDTH, HEADS, HIDDEN, BATCH = 16, 32, 4, 64, 2


def _block_params():
    r = np.random.default_rng(1)

    def weight(a, b):
        return (r.standard_normal((a, b)) / np.sqrt(a)).astype(np.float32)
    attention = {f"w{n}": weight(WIDTH, WIDTH) for n in "qkvo"}
    attention.update({f"b{n}": (r.standard_normal(WIDTH) * 0.1).astype(np.float32) for n in "qkvo"})
    return {"attention": attention, "ln": {"scale": np.ones(WIDTH, np.float32), "offset": np.zeros(WIDTH, np.float32)},
            "w1": weight(WIDTH, HIDDEN), "b1": np.zeros(HIDDEN, np.float32), "w2": weight(HIDDEN, WIDTH)}


def _block_loss(p, x, target):
    x = x + nn.attention(nn.layer_norm(x, p["ln"]["scale"], p["ln"]["offset"]), p["attention"], HEADS)
    h = nn.gelu(nn.dense(x, p["w1"], p["b1"]), approximate=True)
    return ops.mean((x + nn.dense(h, p["w2"]) - target) ** 2)


def _block_step(p, x, target):
    value, grads = hj.value_and_grad(_block_loss)(p, x, target)
    return hj.tree.map(lambda w, g: w - 1e-2 * g, p, grads), value


def _block_args():
    r = np.random.default_rng(2)
    return (_block_params(), r.standard_normal((BATCH, SEQ, WIDTH)).astype(np.float32),
            r.standard_normal((BATCH, SEQ, WIDTH)).astype(np.float32))


def _ops(mlir: str, name: str) -> list[str]:
    return [line for line in mlir.splitlines() if f"stablehlo.{name}" in line]


@pytest.mark.parametrize("product", [nn.dense, lambda x, w: x @ w], ids=["dense", "matmul"])
def test_dense_weight_gradient_is_one_product_without_transposes(product):
    """x [B, L, in]: each gradient one dot_general without batch dimensions (matmul's broadcast form made w's
    gradient B products summed), and on every target none followed by a transpose: the VJP writes JAX's
    (gᵀ x)ᵀ, which layout.transposed_products_swapped makes xᵀ g (a transposed copy otherwise)."""
    from test_legalize import target_rewritten
    x, w = rng.normal(size=(2, 3, 4)).astype(np.float32), rng.normal(size=(4, 5)).astype(np.float32)
    fn = hj.grad(lambda x, w: ops.sum(ops.tanh(product(x, w))), argnums=(0, 1))
    mlir = hj.jit(fn).lower(x, w).mlir
    dots = _ops(mlir, "dot_general")
    assert len(dots) == 3 and not any("batching_dims" in d for d in dots), dots
    assert len(_ops(mlir, "transpose")) == 1 and not re.search(r"broadcast_in_dim.*tensor<4x5xf32>.*->", mlir)
    for target in ("cpu", "vmvx", "cuda"):
        rewrites, text = target_rewritten(mlir, target)
        assert rewrites["transposed_products_swapped"] == 1 and not _ops(text, "transpose"), (target, text)
    got = hj.jit(fn, backend="reference")(x, w)
    slope = 1 - np.tanh(x @ w) ** 2
    np.testing.assert_allclose(np.asarray(got[0]), slope @ w.T, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(got[1]), np.einsum("bli,blo->io", x, slope), rtol=1e-5, atol=1e-6)


def test_dot_general_gradient_layouts():
    """Both product orders of the VJP, checked by value: a contraction whose gradient comes out in the
    operand's layout either way, and one (contracting and batch dims out of order) that needs a transpose."""
    x, y = rng.normal(size=(4, 2, 3)), rng.normal(size=(3, 5, 2))
    w = rng.uniform(0.5, 1.5, (2, 4, 5))
    for argnum in (0, 1):
        check(lambda x, y: ops.sum(ops.dot_general(x, y, ((2,), (0,)), ((1,), (2,))) * w), x, y, argnum=argnum)
    a, b = rng.normal(size=(6, 3)), rng.normal(size=(6, 4))       # aᵀ b: a's gradient is b gᵀ, in place
    w2 = rng.uniform(0.5, 1.5, (3, 4))
    for argnum in (0, 1):
        check(lambda a, b: ops.sum(ops.dot_general(a, b, ((0,), (0,))) * w2), a, b, argnum=argnum)


def test_block_step_has_no_softmax_max_mask_and_agrees_across_targets():
    args = _block_args()
    mlir = hj.jit(_block_step).lower(*args).mlir
    assert not _ops(mlir, "compare"), "softmax's max differentiated (a comparison mask)"
    assert not any("batching_dims" in d and "tensor<2x32x" in d for d in _ops(mlir, "dot_general"))
    expected = hj.jit(_block_step, backend="reference")(*args)
    got = hj.jit(_block_step, backend="iree:cpu")(*args)
    for e, g in zip(hj.tree.leaves(expected), hj.tree.leaves(got)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=2e-4, atol=2e-5)


jax = pytest.importorskip("jax")


def test_block_gradients_match_jax():
    import jax.numpy as jnp
    p, x, target = _block_args()

    def layer_norm(x, s):
        mean = x.mean(-1, keepdims=True)
        return (x - mean) / jnp.sqrt(((x - mean) ** 2).mean(-1, keepdims=True) + 1e-5) * s["scale"] + s["offset"]

    def heads(t):
        return t.reshape(BATCH, SEQ, HEADS, WIDTH // HEADS).transpose(0, 2, 1, 3)

    def loss(p, x, target):
        a, y = p["attention"], layer_norm(x, p["ln"])
        q, k, v = (heads(y @ a[f"w{n}"] + a[f"b{n}"]) for n in "qkv")
        att = jax.nn.softmax(q @ k.transpose(0, 1, 3, 2) / np.sqrt(WIDTH // HEADS), axis=-1) @ v
        x = x + att.transpose(0, 2, 1, 3).reshape(BATCH, SEQ, WIDTH) @ a["wo"] + a["bo"]
        h = jax.nn.gelu(x @ p["w1"] + p["b1"], approximate=True)
        return ((x + h @ p["w2"] - target) ** 2).mean()
    ours = hj.jit(hj.grad(_block_loss), backend="reference")(p, x, target)
    theirs = jax.grad(loss)(p, x, target)
    for a, b in zip(hj.tree.leaves(ours), jax.tree_util.tree_leaves(theirs)):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-4, atol=1e-6)
