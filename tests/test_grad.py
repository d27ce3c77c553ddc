"""Reverse-mode autodiff: every op's gradient against central finite differences (float64, reference
backend), the same gradients on IREE targets against the reference (batched into a few modules), JAX's
gradients of a few composite models, and the errors."""
from __future__ import annotations

import numpy as np
import pytest

import hlojit as hj
from hlojit import ops
from hlojit.frontend.autodiff import RULES
from hlojit.frontend.ops.elementwise import BINARY, UNARY
from hlojit.frontend.ops.reductions import REDUCTIONS

REF = "reference"
rng = np.random.default_rng(0)


@pytest.fixture(autouse=True)
def _same_draws_in_any_order():
    """Each test draws the same inputs whichever tests ran before it in its process (xdist reorders them)."""
    global rng
    rng = np.random.default_rng(0)


def numeric_grad(fn, args, argnum=0, eps=1e-6):
    """Central differences of the scalar fn(*args) with respect to args[argnum] (float64)."""
    run = hj.jit(fn, backend=REF)
    x = np.array(args[argnum], dtype=np.float64)
    out = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        for sign in (1, -1):
            moved = x.copy()
            moved[i] += sign * eps
            call = list(args)
            call[argnum] = moved
            out[i] += sign * float(np.asarray(run(*call))) / (2 * eps)
    return out


def check(fn, *args, argnum=0, rtol=1e-6, atol=1e-7):
    got = np.asarray(hj.jit(hj.grad(fn, argnum), backend=REF)(*args))
    np.testing.assert_allclose(got, numeric_grad(fn, args, argnum), rtol=rtol, atol=atol)


def weights(shape):
    return rng.uniform(0.5, 1.5, shape)


# --- elementwise tables ----------------------------------------------------------------------------

ZERO_SLOPE = {"floor", "ceil", "round", "trunc", "sign"}
NOT_FLOAT = {"invert", "logical_not", "isfinite", "isnan", "isinf"}
POSITIVE = {"log", "sqrt", "rsqrt", "log2", "log10", "log1p", "cbrt", "reciprocal"}
UNIT = {"arcsin", "arccos", "arctanh"}


def unary_domain(name):
    if name in POSITIVE:
        return rng.uniform(0.3, 2.0, (2, 3))
    if name in UNIT:
        return rng.uniform(-0.8, 0.8, (2, 3))
    if name == "arccosh":
        return rng.uniform(1.2, 3.0, (2, 3))
    if name in ZERO_SLOPE:
        return np.arange(6).reshape(2, 3) - 2.7
    return rng.uniform(0.2, 1.5, (2, 3)) * rng.choice([-1, 1], (2, 3))   # away from the kink at 0


@pytest.mark.parametrize("name", sorted(set(UNARY) - NOT_FLOAT - {"digamma"}))
def test_unary_gradient(name):
    op = getattr(ops, name)
    w = weights((2, 3))
    check(lambda x: ops.sum(op(x) * w), unary_domain(name))


def test_lgamma_gradient_across_digammas_pieces():
    """Reflection (x < 0), the shifts, the fitted form around psi's zero on [1, 2], the asymptotic series."""
    x = np.array([-3.7, -0.3, 0.01, 0.7, 1.4616, 1.9, 7.5, 40.0])
    w = weights(x.shape)
    check(lambda x: ops.sum(ops.lgamma(x) * w), x)


BINARY_DOMAINS = {
    "power": lambda: (rng.uniform(0.5, 2, (3,)), rng.uniform(-1.5, 1.5, (2, 3))),
    "remainder": lambda: (np.array([3.3, -2.6, 5.1]), np.array([1.5, 1.1, -2.2])),
    "floor_divide": lambda: (np.array([3.3, -2.6, 5.1]), np.array([1.5, 1.1, -2.2])),
    "maximum": lambda: (np.array([1.0, -2.0, 3.0]), np.array([[0.5, -1.0, 3.5], [2.0, -3.0, 2.5]])),
    "minimum": lambda: (np.array([1.0, -2.0, 3.0]), np.array([[0.5, -1.0, 3.5], [2.0, -3.0, 2.5]])),
}
FLOAT_BINARY = sorted(name for name, row in BINARY.items() if "f" in row.kinds and name not in
                      {"logical_and", "logical_or", "logical_xor", "nextafter"})


@pytest.mark.parametrize("name", FLOAT_BINARY)
def test_binary_gradient(name):
    """Both operands, one of them broadcast (its cotangent is summed back)."""
    op = getattr(ops, name)
    x, y = BINARY_DOMAINS.get(name, lambda: (rng.uniform(0.5, 2, (3,)), rng.uniform(0.5, 2, (2, 3))))()
    w = weights((2, 3))
    for argnum in (0, 1):
        check(lambda a, b: ops.sum(op(a, b) * w), x, y, argnum=argnum)


@pytest.mark.parametrize("name", sorted(n for n in REDUCTIONS if n not in ("any", "all")) + ["mean"])
def test_reduction_gradient(name):
    op = getattr(ops, name)
    x = rng.permutation(24).reshape(2, 3, 4) / 7.0 + 0.5      # distinct: no ties at the max
    w = weights((2, 4))
    check(lambda x: ops.sum(op(x, axis=1) * w) + op(x), x)


def test_prod_gradient_with_zeros():
    for x in (np.array([2.0, 0.0, 3.0, 4.0]), np.array([0.0, 0.0, 3.0, 4.0])):
        check(lambda x: ops.prod(x), x)


def test_cumprod_gradient_with_zeros_and_signs():
    """Exact where x has zeros (no division): rows and columns with one and two zeros, each axis, the
    flattened array, a long axis (the log-step scan's multiplies), and its second derivative."""
    x = rng.uniform(-2, 2, (3, 5))
    x[1, 2] = x[2, 0] = x[2, 3] = 0.0
    w = weights((3, 5))
    for axis in (0, 1):
        check(lambda x: ops.sum(ops.cumprod(x, axis=axis) * w), x)
    check(lambda x: ops.sum(ops.cumprod(x) * w.reshape(-1)), x)
    long = rng.uniform(0.9, 1.1, 150) * rng.choice([-1, 1], 150)
    long[[40, 90]] = 0.0
    check(lambda x: ops.sum(ops.cumprod(x) * long), long)
    v = x[2]
    check(lambda x: ops.sum(hj.grad(lambda x: ops.sum(ops.cumprod(x) * w[0]))(x) * w[1]), v)


def test_max_ties_share_the_gradient():
    g = hj.jit(hj.grad(lambda x: ops.max(x)), backend=REF)(np.array([1.0, 3.0, 3.0]))
    np.testing.assert_allclose(np.asarray(g), [0, 0.5, 0.5])


@pytest.mark.parametrize("backend", ["reference", "iree:cpu"])
def test_relu_slope_is_zero_at_zero_as_jax_nn_relu(backend):
    """jax.nn.relu's (and torch's) convention, not maximum(x, 0)'s tie rule (which gave 0.5 at 0); its second
    derivative is 0 (a mask of constants)."""
    x = np.array([-1.0, 0.0, -0.0, 2.0, np.inf, np.nan], np.float32)
    g = hj.jit(hj.grad(lambda x: ops.sum(ops.relu(x))), backend=backend)(x)
    np.testing.assert_array_equal(np.asarray(g), [0, 0, 0, 1, 1, 0])
    h = hj.jit(hj.grad(lambda x: ops.sum(hj.grad(lambda x: ops.sum(ops.relu(x) * x))(x))), backend=backend)
    np.testing.assert_array_equal(np.asarray(h(np.array([-1.0, 0.0, 2.0], np.float32))), [0, 0, 2])


# --- contractions, nn, orderings -------------------------------------------------------------------

def test_matmul_and_dot_general_gradients():
    a, b = rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 4, 5))
    w = weights((2, 3, 5))
    for argnum in (0, 1):
        check(lambda a, b: ops.sum((a @ b) * w), a, b, argnum=argnum)
    x, y = rng.normal(size=(4, 2, 3)), rng.normal(size=(3, 5, 2))      # contracting and batch dims not in order
    w2 = weights((2, 4, 5))
    for argnum in (0, 1):
        check(lambda x, y: ops.sum(ops.dot_general(x, y, ((2,), (0,)), ((1,), (2,))) * w2), x, y, argnum=argnum)


CONVS = [
    dict(stride=1, padding="VALID"),
    dict(stride=2, padding="SAME", dilation=1),
    dict(stride=1, padding=[(1, 2), (0, 1)], dilation=2),
    dict(stride=(2, 1), padding="SAME", groups=2),
]


@pytest.mark.parametrize("kw", CONVS, ids=[str(i) for i in range(len(CONVS))])
def test_conv_gradients(kw):
    x, k = rng.normal(size=(2, 4, 7, 6)), rng.normal(size=(4, 4 // kw.get("groups", 1), 3, 2))
    out_shape = np.asarray(hj.jit(lambda x, k: ops.conv(x, k, **kw), backend=REF)(x, k)).shape
    w = weights(out_shape)
    for argnum in (0, 1):
        check(lambda x, k: ops.sum(ops.conv(x, k, **kw) * w), x, k, argnum=argnum)


@pytest.mark.parametrize("x_shape, k_shape, layout", [((2, 3, 9), (4, 3, 3), None),
                                                      ((1, 2, 4, 5, 4), (3, 2, 2, 3, 2), None),
                                                      ((2, 6, 3), (3, 3, 2), "NWC")], ids=["1d", "3d", "1d-nwc"])
def test_conv_gradients_in_other_ranks(x_shape, k_shape, layout):
    """The kernel's cotangent is built as patches^T @ cotangent for any rank and layout."""
    x, k = rng.normal(size=x_shape), rng.normal(size=k_shape)
    for argnum in (0, 1):
        check(lambda x, k: ops.sum(ops.conv(x, k, stride=2, padding="SAME", layout=layout) ** 2), x, k, argnum=argnum)


def test_conv_nhwc_and_transpose_gradients():
    x, k = rng.normal(size=(1, 5, 5, 2)), rng.normal(size=(3, 3, 2, 3))
    check(lambda x, k: ops.sum(ops.conv(x, k, padding="SAME", layout="NHWC") ** 2), x, k, argnum=1)
    x, k = rng.normal(size=(1, 2, 4, 4)), rng.normal(size=(2, 3, 3, 3))
    for argnum in (0, 1):
        check(lambda x, k: ops.sum(ops.conv_transpose(x, k, stride=2, padding="SAME") ** 2), x, k, argnum=argnum)


def test_pool_gradients():
    # distinct (no ties in a window), small (sums of squares ~1e3: central differences keep 1e-8), and the
    # same whatever ran before (a generator of its own)
    x = np.random.default_rng(147).permutation(2 * 3 * 7 * 6).reshape(2, 3, 7, 6) / 100.0
    w = weights((2, 3, 3, 3))
    check(lambda x: ops.sum(ops.max_pool(x, (3, 2), strides=(2, 2)) * w), x)
    check(lambda x: ops.sum(ops.max_pool(x, 2, padding="SAME") ** 2), x)
    check(lambda x: ops.sum(ops.avg_pool(x, (3, 2), strides=(2, 2), padding="SAME") ** 2), x)


def test_ordering_and_statistics_gradients():
    x = rng.permutation(12).reshape(3, 4) / 5.0 - 1
    w = weights((3, 4))
    for fn in (ops.cumsum, ops.cummax, ops.softmax, ops.log_softmax, ops.sort):
        check(lambda x: ops.sum(fn(x, axis=1) * w), x)
    check(lambda x: ops.sum(ops.logsumexp(x, axis=0) * w[0, :]) + ops.var(x) + ops.std(x, axis=1).sum(), x)
    check(lambda x: ops.sum(ops.top_k(x, 2)[0] * w[:, :2]), x)
    long = rng.permutation(300) / 100.0                         # cumsum by log-step doubling (pads)
    g = hj.jit(hj.grad(lambda x: ops.sum(ops.cumsum(x) * long)), backend=REF)(long)
    np.testing.assert_allclose(np.asarray(g), np.cumsum(long[::-1])[::-1], rtol=1e-12)


# --- shape and indexing ----------------------------------------------------------------------------

def test_shape_op_gradients():
    x = rng.normal(size=(2, 3, 4))

    def f(x):
        parts = [ops.reshape(x, (6, 4)).T, ops.transpose(x, (2, 0, 1)).reshape(4, 6), ops.flip(x, 1).reshape(4, 6),
                 ops.broadcast_to(x[:, :1, :], (2, 3, 4)).reshape(4, 6)]
        y = ops.concatenate(parts, axis=0)                                  # (16, 6)
        y = ops.pad(y, ((1, 2), (0, 3))) + ops.roll(ops.tile(x[0], (1, 1)), 1, axis=0).sum()
        z = ops.stack([x, x * 2], axis=1)[:, :, ::2, 1::2]
        s = ops.split(x, [1], axis=2)[1]
        return ops.sum(ops.sin(y)) + ops.sum(z ** 2) + ops.sum(ops.repeat(s, 2, axis=0) ** 3) + \
            ops.sum(ops.squeeze(ops.expand_dims(x, 0), 0)[..., ::-2] ** 2)
    check(f, x)


def test_indexing_gradients():
    x = rng.normal(size=(5, 4))
    idx, w = np.array([3, 0, 3, 1]), weights((4, 4))

    def f(x):
        a = x[idx] * w                                  # gather with a repeated row
        b = x[1:4, 2] ** 2 + x[-1, ::-1].sum()
        c = ops.take_along_axis(x, np.array([[0], [2], [3], [1], [0]]), axis=1) ** 2
        d = ops.take(x, np.array([19, 0, 7])) ** 3
        e = ops.dynamic_slice(x, (ops.argmax(x[:, 0]), 1), (2, 2)) ** 2
        return a.sum() + b.sum() + c.sum() + d.sum() + e.sum()
    check(f, x)


def test_update_gradients():
    x, v = rng.normal(size=(5, 4)), rng.normal(size=(2, 4))

    def f(x, v):
        y = x.at[np.array([1, 3])].set(v * 2)                            # scatter, replacing
        y = y.at[np.array([0, 0, 2])].add(v[:1] ** 2)                    # scatter-add with a repeat
        y = y.at[1:3, 1].set(v[0, :2])                                   # a block: dynamic_update_slice
        y = ops.dynamic_update_slice(y, v ** 2, (3, 0))
        return ops.sum(ops.exp(y))
    for argnum in (0, 1):
        check(f, x, v, argnum=argnum)
    dup = np.array([1, 1])   # both updates land on row 1: only the one that won gets a gradient
    g = hj.jit(hj.grad(lambda v: ops.sum(ops.zeros((3, 4)).at[dup].set(v) * 3)), backend=REF)(v)
    assert np.asarray(g).sum() == pytest.approx(12.0)


@pytest.mark.parametrize("mode", ["multiply", "min", "max"])
def test_combining_update_gradients(mode):
    """x.at[index].multiply/min/max, each a scatter: a row indexed twice (every update combines), an element
    with two zero updates and one with one (multiply: the product of the others, no division), a zero in x,
    two index arrays, a column index."""
    x, v = rng.normal(size=(5, 4)), rng.normal(size=(3, 4))
    x[3, 0] = v[0, 1] = v[2, 1] = v[1, 2] = 0.0
    w = weights((5, 4))

    def f(x, v):
        y = getattr(x.at[np.array([1, 3, 1])], mode)(v)
        y = getattr(y.at[np.array([0, 4, 0]), np.array([1, 2, 1])], mode)(v[0, :3] * 2)
        y = getattr(y.at[:, np.array([3, 0, 3])], mode)(ops.concatenate([v, v[:2] * 0.5 + 1], axis=0)[:, :3])
        return ops.sum(y * w)
    for argnum in (0, 1):
        check(f, x, v, argnum=argnum)


def test_scatter_max_ties_share_the_gradient():
    gx, gv = hj.jit(hj.grad(lambda x, v: ops.sum(x.at[np.array([0, 0])].max(v)), argnums=(0, 1)),
                    backend=REF)(np.array([2.0, 1.0]), np.array([2.0, 2.0]))
    np.testing.assert_allclose(np.asarray(gx), [1 / 3, 1])
    np.testing.assert_allclose(np.asarray(gv), [1 / 3, 1 / 3])


def test_where_clip_select_gradients():
    x = rng.uniform(-2, 2, (3, 4))
    check(lambda x: ops.sum(ops.where(x > 0, x ** 2, ops.exp(x)) + ops.clip(x, -1.0, 1.0) * 3), x)
    check(lambda x: ops.sum(ops.relu(x) * ops.sigmoid(x) + ops.silu(x) + ops.gelu(x) + ops.elu(x)), x)


# --- control flow ----------------------------------------------------------------------------------

def test_cond_and_switch_gradients():
    x, y = rng.normal(size=(3,)), rng.normal(size=(3,))

    def f(x, y):
        a = ops.cond(ops.sum(x) > 100, lambda x: ops.exp(x) * y, lambda x: x ** 2 * y, x)
        b = ops.switch(1, [lambda v: v * y, lambda v: ops.exp(v) + y, lambda v: v], x)
        c = ops.cond(ops.sum(y) < 100, lambda: ops.tanh(y) * 3, lambda: y)      # captures only
        return ops.sum(a + b + c)
    for argnum in (0, 1):
        check(f, x, y, argnum=argnum)


def test_loop_gradients():
    x, w = rng.normal(size=(3,)), rng.normal(size=(3, 3)) * 0.5

    def f(x, w):
        h = ops.fori_loop(0, 4, lambda i, h: ops.tanh(w @ h + i), x)
        carry, ys = ops.scan(lambda c, xi: (c * xi + ops.exp(-c * c), c ** 2), x, ops.exp(w))
        _, back = ops.scan(lambda c, xi: (c + xi, c * xi), 0.0, x, reverse=True)
        return ops.sum(h) + ops.sum(carry) + ops.sum(ys) + ops.sum(back ** 2)
    for argnum in (0, 1):
        check(f, x, w, argnum=argnum)


def test_grad_of_grad_and_jvp():
    x, v = rng.uniform(0.5, 1.5, (3,)), rng.normal(size=(3,))

    def f(x):
        return ops.sum(ops.tanh(x) * ops.exp(x) + ops.log(x) * x[0])

    hvp = hj.jit(lambda x, v: hj.grad(lambda x: ops.sum(hj.grad(f)(x) * v))(x), backend=REF)(x, v)
    fd = numeric_grad(lambda x, v: ops.sum(hj.grad(f)(x) * v), (x, v))
    np.testing.assert_allclose(np.asarray(hvp), fd, rtol=1e-6, atol=1e-7)
    out, tangent = hj.jit(lambda x, v: hj.jvp(f, (x,), (v,)), backend=REF)(x, v)
    np.testing.assert_allclose(float(np.asarray(tangent)), numeric_grad(f, (x,)) @ v, rtol=1e-6)


# --- the API ---------------------------------------------------------------------------------------

def test_pytrees_argnums_aux_and_integer_inputs():
    params = {"w": rng.normal(size=(3, 2)), "b": [rng.normal(size=(2,)), np.int32(3)]}
    x = rng.normal(size=(4, 3))

    def loss(p, x, scale):
        y = ops.tanh(x @ p["w"] + p["b"][0]) * p["b"][1]
        return ops.sum(y ** 2) * scale, {"y": y}

    (value, aux), (gp, gx, gs) = hj.jit(hj.value_and_grad(loss, argnums=(0, 1, 2), has_aux=True),
                                        backend=REF)(params, x, 2)
    assert aux["y"].shape == (4, 2) and value.shape == ()
    assert np.asarray(gp["b"][1]).dtype == np.int32 and int(np.asarray(gp["b"][1])) == 0
    assert np.asarray(gs).dtype == np.int32 and int(np.asarray(gs)) == 0
    fd_w = numeric_grad(lambda w, b, x: loss({"w": w, "b": [b, np.int32(3)]}, x, 2)[0],
                        (params["w"], params["b"][0], x))
    np.testing.assert_allclose(np.asarray(gp["w"]), fd_w, rtol=1e-6)
    fd_x = numeric_grad(lambda x: loss(params, x, 2)[0], (x,))
    np.testing.assert_allclose(np.asarray(gx), fd_x, rtol=1e-6)
    g, aux = hj.grad(loss, has_aux=True)(params, x, 2)          # eager: jits itself
    np.testing.assert_allclose(np.asarray(g["w"]), fd_w, rtol=1e-5)


def test_vjp_stop_gradient_and_custom_vjp():
    x = rng.uniform(0.5, 1.5, (3,))
    out, vjp_fn = hj.vjp(lambda x: (ops.exp(x), x * 2), x)
    (g,) = vjp_fn((np.ones(3), np.full(3, 0.5)))
    np.testing.assert_allclose(np.asarray(g), np.exp(x) + 1, rtol=1e-12)

    g = hj.grad(lambda x: ops.sum(x * hj.stop_gradient(x ** 2)))(x)
    np.testing.assert_allclose(np.asarray(g), x ** 2, rtol=1e-12)

    @hj.custom_vjp
    def clipped_sqrt(x):
        return ops.sqrt(x)

    def fwd(x):
        y = ops.sqrt(x)
        return y, (y,)

    def bwd(res, g):
        (y,) = res
        return (ops.clip(g / (2 * y), -1.0, 1.0),)
    clipped_sqrt.defvjp(fwd, bwd)
    z = np.array([1e-4, 1.0, 4.0])
    g = hj.grad(lambda x: ops.sum(clipped_sqrt(x)))(z)
    np.testing.assert_allclose(np.asarray(g), [1.0, 0.5, 0.25])
    np.testing.assert_allclose(np.asarray(clipped_sqrt(z)), np.sqrt(z))


# --- errors ----------------------------------------------------------------------------------------

def test_errors():
    x = np.ones(3)
    with pytest.raises(hj.DifferentiationError, match=r"stablehlo.while built at test_grad.py:\d+.*while_loop"):
        hj.grad(lambda x: ops.sum(ops.while_loop(lambda c: ops.sum(c) < 10, lambda c: c * 2, x)))(x)
    with pytest.raises(hj.ShapeError, match="must return one scalar"):
        hj.grad(lambda x: x * 2)(x)
    with pytest.raises(hj.DifferentiationError, match=r"through digamma \(at test_grad.py:\d+\).*trigamma"):
        hj.grad(lambda x: ops.sum(ops.digamma(x)))(x)
    with pytest.raises(hj.DifferentiationError, match="through digamma"):      # lgamma's second derivative
        hj.grad(lambda x: ops.sum(hj.grad(lambda x: ops.sum(ops.lgamma(x)))(x)))(x)
    rule = RULES.pop("stablehlo.exponential")
    try:
        with pytest.raises(hj.DifferentiationError, match=r"no rule for stablehlo.exponential \(built at "
                                                          r"test_grad.py:\d+\)"):
            hj.grad(lambda x: ops.sum(ops.exp(x)))(x)
    finally:
        RULES["stablehlo.exponential"] = rule
    assert isinstance(hj.DifferentiationError("x"), TypeError)


# --- IREE targets against the reference ------------------------------------------------------------

def _gaps_closed(x, w):
    """lgamma (digamma), cumprod (a multiplying reduce_window), scatters that multiply and take the max."""
    total = ops.sum(ops.lgamma(x * x + 0.5)) + ops.sum(ops.cumprod(x, axis=0) ** 2)
    return total + ops.sum(x.at[np.array([2, 0, 2])].multiply(w[:, :3]) ** 2) + \
        ops.sum(x.at[np.array([1, 1])].max(w[1:, :3]) ** 2)


def _everything(x, w, k, img):
    """One scalar through many op families, so one compile checks all their backward passes."""
    pos = ops.abs(x) + 0.5
    total = sum(ops.sum(getattr(ops, n)(pos) * (i + 1)) for i, n in enumerate(
        ("exp", "log", "sqrt", "rsqrt", "tanh", "sigmoid", "softplus", "log1p")))
    h = ops.tanh(x @ w)
    total = total + ops.sum(ops.log_softmax(h, axis=1) ** 2) + ops.sum(ops.maximum(x, 0.3) ** 2)
    y = ops.conv(img, k, stride=2, padding="SAME")
    total = total + ops.sum(ops.max_pool(y, 2) ** 2) + ops.sum(ops.avg_pool(img, 2) * 3) + ops.sum(y[:, 1, ::2] ** 2)
    total = total + ops.sum(x[np.array([2, 0, 2])] ** 2) + ops.sum(x.at[np.array([1])].add(w[:1, :3]) ** 3)
    total = total + ops.sum(ops.cumsum(x, axis=1) ** 2) + ops.sum(ops.sort(x, axis=0) * x[::-1])
    total = total + _gaps_closed(x, w)
    total = total + ops.sum(ops.fori_loop(0, 3, lambda i, c: ops.tanh(c @ w[:, :3]), x))
    total = total + ops.cond(total > 0, lambda: ops.sum(x ** 3), lambda: ops.sum(x))
    return total + ops.sum(ops.scan(lambda c, r: (c * r + 1, c), x[0], x)[1])


def _everything_args(dtype):
    r = np.random.default_rng(1)
    return (r.normal(size=(4, 3)).astype(dtype), (r.normal(size=(3, 5)) * 0.5).astype(dtype),
            r.normal(size=(4, 2, 3, 3)).astype(dtype), r.normal(size=(2, 2, 8, 8)).astype(dtype))


@pytest.mark.parametrize("target", ["iree:cpu"])
def test_iree_gradients_agree_with_reference(target):
    args = _everything_args(np.float32)
    grad = hj.grad(_everything, argnums=(0, 1, 2, 3))
    expected = hj.jit(grad, backend=REF)(*args)
    got = hj.jit(grad, backend=target)(*args)
    for e, g in zip(expected, got):
        np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=2e-4, atol=2e-4)


def test_vmvx_gradients_agree_with_reference():
    x, w, k, img = _everything_args(np.float32)

    def small(x, w, img):
        y = ops.tanh(x @ w)
        pooled = ops.max_pool(img, 2)
        return ops.sum(y ** 2) + ops.sum(pooled * 2) + ops.sum(ops.scan(lambda c, r: (c * r, c), x[0], x)[1]) + \
            _gaps_closed(x, w)
    grad = hj.grad(small, argnums=(0, 1, 2))
    for e, g in zip(hj.jit(grad, backend=REF)(x, w, img), hj.jit(grad, backend="iree:vmvx")(x, w, img)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=2e-4, atol=2e-5)


# --- against JAX -----------------------------------------------------------------------------------

jax = pytest.importorskip("jax")
jnp = jax.numpy


def _assert_trees_close(ours, theirs, rtol=2e-5, atol=1e-6):
    ours_leaves = jax.tree_util.tree_leaves(jax.tree_util.tree_map(np.asarray, ours))
    for a, b in zip(ours_leaves, jax.tree_util.tree_leaves(theirs)):
        np.testing.assert_allclose(a, np.asarray(b), rtol=rtol, atol=atol)


def test_mlp_softmax_cross_entropy_matches_jax():
    r = np.random.default_rng(2)
    params = {"w1": r.normal(size=(8, 16)).astype(np.float32) * 0.3, "b1": np.zeros(16, np.float32),
              "w2": r.normal(size=(16, 4)).astype(np.float32) * 0.3, "b2": np.zeros(4, np.float32)}
    x, labels = r.normal(size=(5, 8)).astype(np.float32), np.array([0, 3, 1, 2, 3])

    def loss(lib, log_softmax, one_hot):
        def f(p, x):
            h = lib.tanh(x @ p["w1"] + p["b1"])
            logits = h @ p["w2"] + p["b2"]
            return -lib.mean(lib.sum(log_softmax(logits, axis=-1) * one_hot(labels, 4), axis=-1))
        return f
    ours = hj.jit(hj.grad(loss(ops, ops.log_softmax, ops.one_hot)), backend=REF)(params, x)
    theirs = jax.grad(loss(jnp, jax.nn.log_softmax, jax.nn.one_hot))(params, x)
    _assert_trees_close(ours, theirs)


def test_conv_net_matches_jax():
    r = np.random.default_rng(3)
    k1, k2 = r.normal(size=(4, 3, 3, 3)).astype(np.float32) * 0.3, r.normal(size=(6, 4, 3, 3)).astype(np.float32) * 0.3
    img = r.normal(size=(2, 3, 9, 9)).astype(np.float32)

    def ours_fn(k1, k2, img):
        y = ops.relu(ops.conv(img, k1, stride=1, padding="SAME"))
        y = ops.max_pool(y, 2, strides=2)
        y = ops.conv(y, k2, stride=2, padding="VALID")
        return ops.sum(ops.tanh(y) ** 2)

    def jax_fn(k1, k2, img):
        dn = ("NCHW", "OIHW", "NCHW")
        y = jax.nn.relu(jax.lax.conv_general_dilated(img, k1, (1, 1), "SAME", dimension_numbers=dn))
        y = jax.lax.reduce_window(y, -jnp.inf, jax.lax.max, (1, 1, 2, 2), (1, 1, 2, 2), "VALID")
        y = jax.lax.conv_general_dilated(y, k2, (2, 2), "VALID", dimension_numbers=dn)
        return jnp.sum(jnp.tanh(y) ** 2)
    ours = hj.jit(hj.grad(ours_fn, argnums=(0, 1, 2)), backend=REF)(k1, k2, img)
    _assert_trees_close(ours, jax.grad(jax_fn, argnums=(0, 1, 2))(k1, k2, img), rtol=1e-4, atol=1e-5)


def test_scan_rnn_matches_jax():
    r = np.random.default_rng(4)
    w, xs = (r.normal(size=(3, 3)) * 0.5).astype(np.float32), r.normal(size=(6, 3)).astype(np.float32)

    def rnn(lib, scan):
        def f(w, xs):
            h, ys = scan(lambda h, x: (lib.tanh(h @ w + x), lib.sum(h * x)), lib.zeros(3, np.float32), xs)
            return lib.sum(ys) + lib.sum(h ** 2)
        return f
    ours = hj.jit(hj.grad(rnn(ops, ops.scan), argnums=(0, 1)), backend=REF)(w, xs)
    _assert_trees_close(ours, jax.grad(rnn(jnp, jax.lax.scan), argnums=(0, 1))(w, xs))
