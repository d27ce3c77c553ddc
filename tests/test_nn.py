"""hj.nn: every layer in one traced program per backend against numpy formulas, initialiser statistics and
fans (and JAX's numbers when JAX is installed), dropout, and trace-time errors that name op and line."""
import ml_dtypes
import numpy as np
import pytest

import hlojit as hj
from hlojit import nn, ops

RNG = np.random.default_rng(0)
X = RNG.standard_normal((2, 3, 8, 8)).astype(np.float32)
W = RNG.standard_normal((4, 3, 3, 3)).astype(np.float32)
B = RNG.standard_normal(4).astype(np.float32)
D_X, D_W, D_B = (RNG.standard_normal(s).astype(np.float32) for s in ((5, 6), (6, 3), (3,)))
BN = [RNG.standard_normal(4).astype(np.float32), RNG.standard_normal(4).astype(np.float32),
      RNG.standard_normal(4).astype(np.float32), RNG.random(4).astype(np.float32) + 0.5]
SEQ = RNG.standard_normal((2, 5, 8)).astype(np.float32)
CTX = RNG.standard_normal((2, 7, 8)).astype(np.float32)
ATT = {n: (RNG.standard_normal((8, 8)) / 3).astype(np.float32) for n in ("wq", "wk", "wv", "wo")}
ATT["bq"] = RNG.standard_normal(8).astype(np.float32)
CAUSAL = np.tril(np.ones((5, 5), bool))
LOGITS = RNG.standard_normal((6, 4)).astype(np.float32)
LABELS = np.array([0, 3, 1, 2, 2, 0], np.int32)
IDS = np.array([[0, 3], [2, 2]], np.int32)
TABLE = RNG.standard_normal((4, 5)).astype(np.float32)
DATA_NAMES = ("D_X", "D_W", "D_B", "BN", "SEQ", "CTX", "ATT", "CAUSAL", "LOGITS", "LABELS", "IDS", "TABLE")
DATA = {name: globals()[name] for name in DATA_NAMES}


def layers(x, w, b, data):
    """Inputs come in as arguments, not constants: IREE would evaluate constant layers while compiling."""
    D_X, D_W, D_B, BN, SEQ, CTX, ATT, CAUSAL, LOGITS, LABELS, IDS, TABLE = (data[k] for k in DATA_NAMES)
    y = nn.conv2d(x, w, b, stride=1, padding="SAME")
    return {
        "dense": nn.dense(D_X, D_W, D_B),
        "conv2d": y,
        "conv2d_nhwc": nn.conv2d(x.transpose(0, 2, 3, 1), w.transpose(2, 3, 1, 0), padding=1, layout="NHWC"),
        "conv2d_stride": nn.conv2d(x, w, stride=2),
        "bn_train": nn.batch_norm(y, *BN, training=True, momentum=0.8),
        "bn_eval": nn.batch_norm(y, *BN, training=False),
        "layer_norm": nn.layer_norm(SEQ, ops.broadcast_to(BN[0][:1], (8,)), ops.broadcast_to(BN[1][:1], (8,))),
        "layer_norm_2d": nn.layer_norm(y, axis=(2, 3)),
        "max_pool": nn.max_pool(y, 2),
        "avg_pool": nn.avg_pool(y, 3, stride=1, padding="SAME"),
        "embedding": nn.embedding(IDS, TABLE),
        "self_attention": nn.attention(SEQ, ATT, num_heads=2, mask=CAUSAL),
        "cross_attention": nn.attention(SEQ, ATT, num_heads=4, context=CTX),
        "xent_int": nn.softmax_cross_entropy(LOGITS, LABELS),
        "xent_onehot_sum": nn.softmax_cross_entropy(LOGITS, ops.one_hot(LABELS, 4), reduction="sum"),
        "xent_none": nn.softmax_cross_entropy(LOGITS, LABELS, reduction="none"),
        "mse": nn.mse(LOGITS, LOGITS * 0.5),
        "dropout_eval": nn.dropout(x, 0.5, training=False),
    }


def numpy_conv_same(x, w):
    xp = np.pad(x, [(0, 0), (0, 0), (1, 1), (1, 1)])
    out = np.zeros((x.shape[0], w.shape[0], x.shape[2], x.shape[3]))
    for i in range(x.shape[2]):
        for j in range(x.shape[3]):
            out[:, :, i, j] = np.tensordot(xp[:, :, i:i + 3, j:j + 3], w, axes=([1, 2, 3], [1, 2, 3]))
    return out


def numpy_attention(x, ctx, p, heads, mask=None):
    def split(t):
        b, n, d = t.shape
        return t.reshape(b, n, heads, d // heads).transpose(0, 2, 1, 3)
    q = split(x @ p["wq"] + p.get("bq", 0))
    k, v = split(ctx @ p["wk"]), split(ctx @ p["wv"])
    logits = q @ k.transpose(0, 1, 3, 2) / np.sqrt(q.shape[-1])
    if mask is not None:
        logits = np.where(mask, logits, -np.inf)
    e = np.exp(logits - logits.max(-1, keepdims=True))
    out = (e / e.sum(-1, keepdims=True)) @ v
    return out.transpose(0, 2, 1, 3).reshape(x.shape) @ p["wo"]


def expected():
    y = numpy_conv_same(X.astype(np.float64), W) + B.reshape(1, 4, 1, 1)
    scale, offset, mean, var = (p.reshape(1, 4, 1, 1).astype(np.float64) for p in BN)
    bm, bv = y.mean((0, 2, 3)), y.var((0, 2, 3))
    logp = LOGITS - np.log(np.exp(LOGITS).sum(-1, keepdims=True))
    xent = -logp[np.arange(6), LABELS]
    ln = (SEQ - SEQ.mean(-1, keepdims=True)) / np.sqrt(SEQ.var(-1, keepdims=True) + 1e-5)
    windows = y.reshape(2, 4, 4, 2, 4, 2)
    padded = np.pad(y, [(0, 0), (0, 0), (1, 1), (1, 1)])
    avg = sum(padded[:, :, i:i + 8, j:j + 8] for i in range(3) for j in range(3)) / 9
    return {
        "dense": D_X @ D_W + D_B,
        "conv2d": y,
        "conv2d_nhwc": numpy_conv_same(X, W).transpose(0, 2, 3, 1),
        "conv2d_stride": numpy_conv_same(X, W)[:, :, 1:-1:2, 1:-1:2],
        "bn_train": ((y - bm.reshape(1, 4, 1, 1)) / np.sqrt(bv.reshape(1, 4, 1, 1) + 1e-5) * scale + offset,
                     0.8 * BN[2] + 0.2 * bm, 0.8 * BN[3] + 0.2 * bv),
        "bn_eval": ((y - mean) / np.sqrt(var + 1e-5) * scale + offset, BN[2], BN[3]),
        "layer_norm": ln * BN[0][0] + BN[1][0],
        "layer_norm_2d": (y - y.mean((2, 3), keepdims=True)) / np.sqrt(y.var((2, 3), keepdims=True) + 1e-5),
        "max_pool": windows.max((3, 5)),
        "avg_pool": avg,
        "embedding": TABLE[IDS],
        "self_attention": numpy_attention(SEQ, SEQ, ATT, 2, CAUSAL),
        "cross_attention": numpy_attention(SEQ, CTX, ATT, 4),
        "xent_int": xent.mean(),
        "xent_onehot_sum": xent.sum(),
        "xent_none": xent,
        "mse": ((LOGITS * 0.5) ** 2).mean(),
        "dropout_eval": X,
    }


@pytest.mark.parametrize("backend", ["reference", "iree:cpu"])
def test_layers_match_numpy(backend):
    got = hj.jit(layers, backend=backend)(X, W, B, DATA)
    want = expected()
    for name, value in want.items():
        for g, w in zip(*(v if isinstance(v, tuple) else (v,) for v in (got[name], value))):
            np.testing.assert_allclose(np.asarray(g), w, rtol=2e-5, atol=2e-5, err_msg=name)
            assert np.asarray(g).dtype == np.float32, name


def test_initializers_shapes_fans_and_statistics():
    assert nn.compute_fans((784, 128)) == (784, 128)
    assert nn.compute_fans((16, 3, 5, 5), in_axis=1, out_axis=0) == (75, 400)
    assert nn.compute_fans((3, 3, 8, 16)) == (72, 144)    # HWIO
    assert nn.compute_fans((7,)) == (7, 7)
    inits = {"glorot_uniform": (nn.glorot_uniform(), (400, 600), np.sqrt(2 / 1000), np.sqrt(6 / 1000)),
             "glorot_normal": (nn.glorot_normal(), (400, 600), np.sqrt(2 / 1000), 2 * np.sqrt(2 / 1000) / .8796),
             "he_uniform": (nn.he_uniform(), (500, 300), np.sqrt(2 / 500), np.sqrt(6 / 500)),
             "he_normal_oihw": (nn.he_normal(in_axis=1, out_axis=0), (64, 32, 3, 3), np.sqrt(2 / 288),
                                2 * np.sqrt(2 / 288) / .8796),
             "lecun_normal": (nn.lecun_normal(), (300, 400), np.sqrt(1 / 300), 2 * np.sqrt(1 / 300) / .8796),
             "normal": (nn.normal(0.5), (200, 300), 0.5, np.inf),
             "uniform": (nn.uniform(0.3), (200, 300), 0.3 / np.sqrt(12), 0.3)}

    def draw(key):
        keys = hj.random.split(key, len(inits))
        out = {name: init(keys[i], shape) for i, (name, (init, shape, _, _)) in enumerate(inits.items())}
        out["zeros"], out["ones_bf16"] = nn.zeros(key, (3, 2)), nn.ones(key, (4,), hj.bfloat16)
        return out
    got = hj.jit(draw, backend="reference")(hj.random.key(0))   # the same bits as every target
    for name, (_, shape, std, bound) in inits.items():
        w = np.asarray(got[name])
        assert w.shape == shape and w.dtype == np.float32, name
        assert abs(w.std() / std - 1) < 0.02, (name, w.std(), std)
        assert abs(w.mean() - (0.15 if name == "uniform" else 0)) < 0.02 * std * 10, name
        assert np.abs(w).max() <= bound * (1 + 1e-6), name
    assert (np.asarray(got["zeros"]) == 0).all() and np.asarray(got["ones_bf16"]).dtype == hj.bfloat16
    eager = nn.glorot_uniform()(hj.random.key(0), (3, 5))     # outside hj.jit: its own small program
    assert isinstance(eager, hj.Array) and eager.shape == (3, 5)


def test_initializers_give_jax_numbers():
    jax = pytest.importorskip("jax")
    key = hj.random.key(7)
    names = ["glorot_uniform", "glorot_normal", "he_uniform", "he_normal", "lecun_normal", "normal", "uniform"]
    got = hj.jit(lambda k: [getattr(nn, n)()(k, (40, 30, 3)) for n in names], backend="reference")(key)
    for name, g in zip(names, got):
        want = np.asarray(getattr(jax.nn.initializers, name)()(jax.random.PRNGKey(7), (40, 30, 3)))
        np.testing.assert_allclose(np.asarray(g), want, rtol=1e-5, atol=1e-6, err_msg=name)


def test_dropout_drops_at_rate_and_keeps_expectation():
    x = np.ones((200, 100), np.float32)
    out = hj.jit(lambda x, k: (nn.dropout(x, 0.3, k), nn.dropout(x, 0.0, k), nn.dropout(x, 1.0, k)),
                 backend="reference")(x, hj.random.key(3))
    dropped = np.asarray(out[0])
    assert set(np.unique(dropped)) <= {0.0, np.float32(1 / 0.7)}
    assert abs((dropped == 0).mean() - 0.3) < 0.01 and abs(dropped.mean() - 1) < 0.02
    np.testing.assert_array_equal(np.asarray(out[1]), x)
    assert (np.asarray(out[2]) == 0).all()


@pytest.mark.parametrize("fn, message", [
    (lambda x: nn.dense(x, np.zeros((4, 5), np.float32)), r"nn.dense: needs x \[..., in\] and w \[in, out\], "
                                                          r"got x float32\[2, 3\] and w float32\[4, 5\]"),
    (lambda x: nn.conv2d(x, np.zeros((2, 3, 3), np.float32)), "nn.conv2d: needs a rank-4 input"),
    (lambda x: nn.dense(x, np.zeros((3, 5), np.float32), np.zeros(4, np.float32)), "nn.dense: b must have shape"),
    (lambda x: nn.batch_norm(x, *[np.ones(2, np.float32)] * 4), r"nn.batch_norm: scale must have shape \(3,\)"),
    (lambda x: nn.softmax_cross_entropy(x, np.zeros(3, np.int32)), "integer labels must have the logits' shape"),
    (lambda x: nn.attention(x.reshape(1, 2, 3), {n: np.eye(3, dtype=np.float32) for n in ("wq", "wk", "wv", "wo")},
                            num_heads=2), r"num_heads \(2\) must be a positive int dividing the model width 3"),
    (lambda x: nn.dot_product_attention(x, x, x, mask=np.ones((3, 3), bool)),
     r"mask bool\[3, 3\] does not broadcast to the attention logits float32\[2, 2\]"),
    (lambda x: nn.dropout(x, 0.5), "needs a key"),
    (lambda x: nn.mse(x, x[0]), "nn.mse: predictions float32"),
    (lambda x: nn.embedding(x, x), "ids must be integers"),
])
def test_errors_name_op_shapes_and_line(fn, message):
    with pytest.raises(ValueError if "integers" not in message else TypeError, match=message) as info:
        hj.jit(fn, backend="reference")(np.zeros((2, 3), np.float32))
    assert "test_nn.py:" in str(info.value)


def test_layers_differentiate_like_finite_differences():
    """hj.grad through every layer (float64, reference backend) against a central difference along a random
    direction: the layers are built only from ops that reverse mode knows."""
    rng = np.random.default_rng(5)
    params = {"conv": rng.standard_normal((4, 3, 3, 3)), "dense": rng.standard_normal((16, 5)),
              "scale": rng.random(4) + 0.5, "offset": rng.standard_normal(4), "table": rng.standard_normal((4, 8)),
              "att": {n: rng.standard_normal((8, 8)) / 3 for n in ("wq", "wk", "wv", "wo")}}
    x = rng.standard_normal((2, 3, 6, 6))
    labels = np.array([1, 4], np.int32)

    def loss(p):
        y = nn.conv2d(x, p["conv"], padding="SAME")
        y, _, _ = nn.batch_norm(y, p["scale"], p["offset"], np.zeros(4), np.ones(4), training=True)
        y = nn.avg_pool(ops.relu(nn.max_pool(y, 2, stride=1)), 2).reshape(2, 16)
        first = nn.softmax_cross_entropy(nn.dense(nn.layer_norm(y), p["dense"]), labels)
        seq = nn.embedding(np.array([[0, 1, 2, 3, 1], [3, 2, 2, 0, 1]], np.int32), p["table"])
        second = nn.mse(nn.attention(seq, p["att"], num_heads=2, mask=np.tril(np.ones((5, 5), bool))), seq * 0.5)
        return first + second

    value_and_grad = hj.jit(hj.value_and_grad(loss), backend="reference")
    f = hj.jit(loss, backend="reference")
    _, grads = value_and_grad(params)
    leaves, treedef = hj.frontend.pytree.flatten(params)
    direction = [rng.standard_normal(np.shape(leaf)) for leaf in leaves]
    shifted = [hj.frontend.pytree.unflatten(treedef, [leaf + s * 1e-6 * d for leaf, d in zip(leaves, direction)])
               for s in (1, -1)]
    numeric = (float(f(shifted[0])) - float(f(shifted[1]))) / 2e-6
    analytic = sum(float((np.asarray(g) * d).sum()) for g, d in zip(hj.frontend.pytree.flatten(grads)[0], direction))
    assert analytic == pytest.approx(numeric, rel=1e-6)


def test_masked_attention_in_bfloat16_matches_float32():
    """bf16 logits' mask value is bf16's lowest finite number (np.finfo refuses bf16 with ml_dtypes 0.6; the mask
    raised ValueError before dialects.types.finfo took it)."""
    rng = np.random.default_rng(3)
    q, k, v = (rng.standard_normal((2, 4, 8)).astype(np.float32) for _ in range(3))
    mask = np.tril(np.ones((4, 4), bool))
    f = hj.jit(lambda q, k, v: nn.dot_product_attention(q, k, v, mask=mask), backend="reference")
    want = np.asarray(f(q, k, v))
    got = np.asarray(f(*(t.astype(ml_dtypes.bfloat16) for t in (q, k, v))))
    assert got.dtype == ml_dtypes.bfloat16
    np.testing.assert_allclose(got.astype(np.float32), want, rtol=0.05, atol=0.05)
