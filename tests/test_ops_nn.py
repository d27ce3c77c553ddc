"""Convolutions and pooling on every backend, against JAX's lax (when installed) and closed forms."""
import numpy as np
import pytest

import hlojit as hj
from hlojit import ops

from conftest import assert_close

RNG = np.random.default_rng(0)
X = RNG.standard_normal((2, 6, 9, 9)).astype(np.float32)
W = RNG.standard_normal((4, 3, 3, 3)).astype(np.float32)
X1 = RNG.standard_normal((2, 3, 10)).astype(np.float32)
W1 = RNG.standard_normal((5, 3, 4)).astype(np.float32)
X3 = RNG.standard_normal((1, 2, 5, 6, 7)).astype(np.float32)
W3 = RNG.standard_normal((3, 2, 2, 3, 2)).astype(np.float32)


def numpy_conv(x, w, stride, pads, dilation=1, groups=1):
    """Direct loops over output positions: slow and obviously right (NC... input, OI... kernel)."""
    n = x.ndim - 2
    x = np.pad(x, [(0, 0), (0, 0)] + list(pads))
    k = w.shape[2:]
    span = [(kk - 1) * dilation + 1 for kk in k]
    out_sp = [(x.shape[2 + i] - span[i]) // stride + 1 for i in range(n)]
    out = np.zeros((x.shape[0], w.shape[0], *out_sp), np.float64)
    cg, og = x.shape[1] // groups, w.shape[0] // groups
    for pos in np.ndindex(*out_sp):
        window = tuple(slice(p * stride, p * stride + span[i], dilation) for i, p in enumerate(pos))
        patch = x[(slice(None), slice(None)) + window]
        for g in range(groups):
            out[(slice(None), slice(g * og, (g + 1) * og)) + pos] = np.tensordot(
                patch[:, g * cg:(g + 1) * cg], w[g * og:(g + 1) * og], axes=(list(range(1, 2 + n)), list(range(1, 2 + n))))
    return out


def cases(x, w, x1, w1, x3, w3):
    return {
        "same-stride2-groups2": ops.conv(x, w, stride=2, padding="SAME", groups=2),
        "explicit-dilated": ops.conv(x, w, padding=[(1, 2), (0, 1)], dilation=2, groups=2),
        "nhwc": ops.conv(x.transpose(0, 2, 3, 1), w.transpose(2, 3, 1, 0), padding="SAME", groups=2, layout="NHWC"),
        "conv1d": ops.conv(x1, w1, stride=2, padding=1),
        "conv3d": ops.conv(x3, w3, padding="VALID"),
        "depthwise": ops.conv(x, ops.ones((6, 1, 3, 3)), padding="SAME", groups=6),
        "max_pool": ops.max_pool(x, 3, 2, padding="SAME"),
        "avg_pool": ops.avg_pool(x, 2),
        "max_pool_nhwc": ops.max_pool(x.transpose(0, 2, 3, 1), (2, 3), (1, 2), layout="NHWC"),
    }


def expected():
    e = {
        "same-stride2-groups2": numpy_conv(X, W, 2, [(1, 1), (1, 1)], groups=2),
        "explicit-dilated": numpy_conv(X, W, 1, [(1, 2), (0, 1)], dilation=2, groups=2),
        "conv1d": numpy_conv(X1, W1, 2, [(1, 1)]),
        "conv3d": numpy_conv(X3, W3, 1, [(0, 0)] * 3),
        "depthwise": numpy_conv(X, np.ones((6, 1, 3, 3)), 1, [(1, 1), (1, 1)], groups=6),
    }
    e["nhwc"] = numpy_conv(X, W, 1, [(1, 1), (1, 1)], groups=2).transpose(0, 2, 3, 1)
    padded = np.pad(X, [(0, 0), (0, 0), (1, 1), (1, 1)], constant_values=-np.inf)
    e["max_pool"] = np.lib.stride_tricks.sliding_window_view(padded, (3, 3), axis=(2, 3))[:, :, ::2, ::2].max(axis=(4, 5))
    e["avg_pool"] = X[:, :, :8, :8].reshape(2, 6, 4, 2, 4, 2).mean(axis=(3, 5))
    nhwc = X.transpose(0, 2, 3, 1)
    e["max_pool_nhwc"] = np.lib.stride_tricks.sliding_window_view(nhwc, (2, 3), axis=(1, 2))[:, :, ::2].max(axis=(4, 5))
    return e


def test_convolutions_and_pools_match_numpy(backend):
    got = hj.jit(cases, backend=backend)(X, W, X1, W1, X3, W3)
    for name, want in expected().items():
        assert_close(got[name], want.astype(np.float32), np.float32, scale=20)


def test_conv_transpose_is_the_input_gradient_shape_and_values(backend):
    # conv_transpose of a one-hot input paints the kernel at stride offsets
    x = np.zeros((1, 1, 3, 3), np.float32)
    x[0, 0, 1, 1] = 1
    w = np.arange(1, 10, dtype=np.float32).reshape(1, 1, 3, 3)   # (in, out, kh, kw)
    out = hj.jit(lambda x, w: ops.conv_transpose(x, w, stride=2), backend=backend)(x, w)
    assert out.shape == (1, 1, 7, 7)
    want = np.zeros((7, 7), np.float32)
    want[2:5, 2:5] = w[0, 0]
    np.testing.assert_array_equal(np.asarray(out)[0, 0], want)
    same = hj.jit(lambda x, w: ops.conv_transpose(x, w, stride=2, padding="SAME"), backend=backend)(x, w)
    assert same.shape == (1, 1, 6, 6)


def test_against_jax_lax():
    jax = pytest.importorskip("jax")
    lax = jax.lax
    want = lax.conv_general_dilated(X, W, (2, 2), "SAME", feature_group_count=2,
                                    dimension_numbers=("NCHW", "OIHW", "NCHW"))
    got = hj.jit(lambda x, w: ops.conv(x, w, stride=2, padding="SAME", groups=2))(X, W)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5, atol=1e-5)
    # conv_transpose(x, w) is the gradient, with respect to its input, of the conv whose OIHW kernel is w
    w_t = RNG.standard_normal((6, 4, 3, 3)).astype(np.float32)   # (in 6, out 4, kh, kw)
    forward = lambda y: lax.conv_general_dilated(y, w_t, (2, 2), "VALID",  # noqa: E731
                                                 dimension_numbers=("NCHW", "OIHW", "NCHW"))
    _, vjp = jax.vjp(forward, np.zeros((2, 4, 19, 19), np.float32))
    (want_t,) = vjp(X)
    got_t = hj.jit(lambda x, w: ops.conv_transpose(x, w, stride=2))(X, w_t)
    np.testing.assert_allclose(np.asarray(got_t), np.asarray(want_t), rtol=1e-4, atol=1e-4)


def test_conv_errors_name_the_shapes():
    with pytest.raises(hj.ShapeError, match=r"conv: input has 6 channels but the kernel takes 3 per group x 1 groups"):
        hj.jit(lambda x, w: ops.conv(x, w))(X, W)
    with pytest.raises(hj.ShapeError, match=r"conv: NCHW input must have rank 4"):
        hj.jit(lambda x, w: ops.conv(x, w, layout="NCHW"))(X1, W)
    with pytest.raises(hj.ShapeError, match=r"conv: kernel rank 4 differs from input rank 3"):
        hj.jit(lambda x, w: ops.conv(x, w))(X1, W)
    with pytest.raises(ValueError, match="padding must be 'VALID', 'SAME'"):
        hj.jit(lambda x, w: ops.conv(x, w, padding="FULL", groups=2))(X, W)
    with pytest.raises(hj.ShapeError, match="window .* is larger than the padded input"):
        hj.jit(lambda x: ops.max_pool(x, 12))(X)
