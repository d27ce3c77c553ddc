"""The input gradients of strided convolutions (built by stride phases, pipeline/conv_phases.py) and the
max-pool backward (by input phases), against closed forms in numpy (the scatter of every output's
cotangent through every kernel tap; the first maximum of each window taking its cotangent, as JAX does)
on every target, and against central differences on the reference backend. Each target compiles all of
its cases as one module."""
from __future__ import annotations

import re

import numpy as np
import pytest

import hlojit as hj
from conftest import LIBRARY_BACKENDS, assert_close
from hlojit import ops
from hlojit.frontend.ops import nn

# (input shape, kernel shape, conv keywords); kernels OI... for channels first, ...IO for channels last
CONVS = [
    ((2, 3, 11), (4, 3, 3), dict(stride=2, padding=1)),
    ((2, 10, 3), (3, 3, 4), dict(stride=3, padding="SAME", layout="NWC")),
    ((2, 4, 9, 8), (6, 4, 3, 3), dict(stride=2, padding=1)),
    ((2, 4, 9, 8), (6, 4, 1, 1), dict(stride=2)),
    ((1, 4, 10, 9), (6, 2, 3, 2), dict(stride=(2, 3), padding="SAME", groups=2)),
    ((1, 3, 12, 7), (2, 3, 3, 2), dict(stride=3, padding=[(2, 0), (1, 3)], dilation=2)),
    ((1, 2, 11, 6), (3, 2, 2, 3), dict(stride=(2, 1), padding=[(4, 4), (0, 0)], dilation=(3, 1))),
    ((1, 2, 13, 9), (3, 2, 3, 3), dict(stride=4, padding=[(-1, 2), (1, -1)])),
    ((2, 9, 8, 4), (3, 3, 4, 5), dict(stride=2, padding="SAME", layout="NHWC")),
    ((2, 7, 6, 4), (2, 3, 2, 6), dict(stride=(2, 3), padding="VALID", groups=2, layout="NHWC")),
    ((1, 2, 5, 6, 7), (3, 2, 3, 2, 3), dict(stride=2, padding=1)),
    ((1, 6, 5, 7, 2), (2, 3, 3, 2, 4), dict(stride=(3, 2, 2), padding="SAME", dilation=(1, 2, 1), layout="NDHWC")),
]

# (input shape, max_pool arguments)
POOLS = [
    ((2, 3, 11, 10), dict(window=3, strides=2, padding=1)),
    ((2, 3, 8, 8), dict(window=2)),
    ((1, 2, 9, 8), dict(window=(3, 2), strides=(1, 2), padding=[(0, 2), (1, 0)])),
    ((1, 2, 10, 9), dict(window=(2, 3), strides=(3, 2), padding="SAME")),
    ((1, 2, 7, 6), dict(window=1, strides=(2, 1))),
    ((2, 9, 10, 3), dict(window=3, strides=2, padding="SAME", layout="NHWC")),
    ((2, 2, 13), dict(window=4, strides=3, padding=[(2, 1)])),
    ((1, 2, 5, 6, 7), dict(window=(2, 3, 2), strides=(2, 2, 3), padding=1)),
]


def _first(kw):
    return kw.get("layout", "NC")[1] == "C"


def _channels_first(a, first):
    return a if first else np.moveaxis(a, -1, 1)


def _per_dim(value, n):
    return (value,) * n if isinstance(value, int) else tuple(value)


def _pads(padding, sizes, windows, strides):
    if isinstance(padding, str):
        if padding == "VALID":
            return [(0, 0)] * len(sizes)
        totals = [max((-(-i // s) - 1) * s + w - i, 0) for i, w, s in zip(sizes, windows, strides)]
        return [(t // 2, t - t // 2) for t in totals]
    if isinstance(padding, int):
        return [(padding, padding)] * len(sizes)
    if isinstance(padding[0], int):
        return [tuple(padding)] * len(sizes)
    return [tuple(p) for p in padding]


def conv_input_gradient(g, w, x_shape, strides, pads, dilations, groups):
    """dx [N, C, *in] of conv(x, w) under cotangent g [N, O, *out] (w [O, C / groups, *window]): every
    output's cotangent times every tap, scattered to the input element the tap read."""
    dx = np.zeros(x_shape)
    per_group_out, per_group_in = w.shape[0] // groups, w.shape[1]
    for tap in np.ndindex(*w.shape[2:]):
        sources, targets = [], []
        for j_size, size, k, s, d, (lo, _) in zip(g.shape[2:], x_shape[2:], tap, strides, dilations, pads):
            i = np.arange(j_size) * s + k * d - lo
            keep = (i >= 0) & (i < size)
            sources.append(np.nonzero(keep)[0])
            targets.append(i[keep])
        for group in range(groups):
            outs = slice(group * per_group_out, (group + 1) * per_group_out)
            ins = slice(group * per_group_in, (group + 1) * per_group_in)
            part = g[:, outs][(slice(None), slice(None), *np.ix_(*sources))]
            dx[:, ins][(slice(None), slice(None), *np.ix_(*targets))] += \
                np.einsum("no...,oc->nc...", part, w[(outs, slice(None), *tap)])
    return dx


def conv_case(x_shape, k_shape, kw, seed):
    """(x, kernel, cotangent, the closed-form input gradient), in the case's layout, float64."""
    rng = np.random.default_rng(seed)
    x, k = rng.normal(size=x_shape), rng.normal(size=k_shape)
    first = _first(kw)
    n = len(x_shape) - 2
    kernel = k if first else np.moveaxis(np.moveaxis(k, -1, 0), -1, 1)          # OI...
    strides, dilations = _per_dim(kw.get("stride", 1), n), _per_dim(kw.get("dilation", 1), n)
    sizes = _channels_first(x, first).shape[2:]
    windows = [(w - 1) * d + 1 for w, d in zip(kernel.shape[2:], dilations)]
    pads = _pads(kw.get("padding", "VALID"), sizes, windows, strides)
    out = [(i + lo + hi - w) // s + 1 for i, (lo, hi), w, s in zip(sizes, pads, windows, strides)]
    g = rng.normal(size=(x_shape[0], kernel.shape[0], *out))
    dx = conv_input_gradient(g, kernel, _channels_first(x, first).shape, strides, pads, dilations,
                             kw.get("groups", 1))
    back = (lambda a: a) if first else (lambda a: np.moveaxis(a, 1, -1))
    return x, k, back(g), back(dx)


def pool_gradient(x, g, window, strides, pads):
    """dx of sum(max_pool(x) * g) for channels-first x: each window's first maximum (in row-major order of
    the window) takes the window's cotangent."""
    n = x.ndim - 2
    padded = np.pad(x, [(0, 0), (0, 0), *pads], constant_values=-np.inf)
    dx = np.zeros(padded.shape)
    for out in np.ndindex(*g.shape[2:]):
        corner = [o * s for o, s in zip(out, strides)]
        block = padded[(slice(None), slice(None), *[slice(c, c + w) for c, w in zip(corner, window)])]
        flat = block.reshape(*block.shape[:2], -1).argmax(axis=-1)
        where = np.unravel_index(flat, window)
        for b, c in np.ndindex(*x.shape[:2]):
            dx[(b, c, *[corner[i] + where[i][b, c] for i in range(n)])] += g[(b, c, *out)]
    return dx[(slice(None), slice(None), *[slice(lo, lo + d) for (lo, _), d in zip(pads, x.shape[2:])])]


def pool_case(x_shape, kw, seed):
    """(x with many ties, cotangent, the closed-form gradient), in the case's layout."""
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 4, size=x_shape).astype(np.float64)
    first = _first(kw)
    n = len(x_shape) - 2
    window = _per_dim(kw["window"], n)
    strides = _per_dim(kw.get("strides") or kw["window"], n)
    xc = _channels_first(x, first)
    pads = _pads(kw.get("padding", "VALID"), xc.shape[2:], window, strides)
    out = [(i + lo + hi - w) // s + 1 for i, (lo, hi), w, s in zip(xc.shape[2:], pads, window, strides)]
    g = rng.normal(size=(*xc.shape[:2], *out))
    dx = pool_gradient(xc, g, window, strides, pads)
    back = (lambda a: a) if first else (lambda a: np.moveaxis(a, 1, -1))
    return x, back(g), back(dx)


def _conv_grad(kw):
    return hj.grad(lambda x, k, g: ops.sum(ops.conv(x, k, **kw) * g))


def _pool_grad(kw):
    return hj.grad(lambda x, g: ops.sum(ops.max_pool(x, **kw) * g))


# The gradients are convolutions, pads and select_and_scatter composed: the library's functions, checked where
# conftest.LIBRARY_BACKENDS says (vmvx's select_and_scatter rewrite: test_window_scatters; its convolutions: the op
# tables). vmvx ran these two modules in ~16 s of the suite (2026-12-06).
@pytest.fixture(params=LIBRARY_BACKENDS)
def backend(request):
    return request.param


def test_strided_conv_input_gradients_match_the_closed_form(backend):
    cases = [conv_case(*case, seed=i) for i, case in enumerate(CONVS)]
    grads = [_conv_grad(kw) for _, _, kw in CONVS]
    run = hj.jit(lambda args: [grad(*a) for grad, a in zip(grads, args)], backend=backend)
    results = run([tuple(a.astype(np.float32) for a in case[:3]) for case in cases])
    for got, (_, _, _, want) in zip(results, cases):
        assert_close(got, want.astype(np.float32), scale=20)


def test_max_pool_gradients_match_the_closed_form_with_ties(backend):
    cases = [pool_case(*case, seed=i) for i, case in enumerate(POOLS)]
    grads = [_pool_grad(kw) for _, kw in POOLS]
    run = hj.jit(lambda args: [grad(*a) for grad, a in zip(grads, args)], backend=backend)
    results = run([tuple(a.astype(np.float32) for a in case[:2]) for case in cases])
    for got, (_, _, want) in zip(results, cases):
        assert_close(got, want.astype(np.float32), scale=4)


def test_phase_convolutions_where_the_tap_products_would_not_fit(monkeypatch):
    """Past nn.IM2COL_MAX_ELEMENTS (and with feature groups) each phase is a convolution of its own."""
    monkeypatch.setattr(nn, "IM2COL_MAX_ELEMENTS", 0)
    cases = [conv_case(*case, seed=i) for i, case in enumerate(CONVS)]
    grads = [_conv_grad(kw) for _, _, kw in CONVS]
    results = hj.jit(lambda args: [grad(*a) for grad, a in zip(grads, args)], backend="reference")(
        [case[:3] for case in cases])
    for got, (_, _, _, want) in zip(results, cases):
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12, atol=1e-12)


def central_differences(fn, x, eps=1e-6):
    run = hj.jit(fn, backend="reference")
    out = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        for sign in (1, -1):
            moved = x.copy()
            moved[i] += sign * eps
            out[i] += sign * float(np.asarray(run(moved))) / (2 * eps)
    return out


@pytest.mark.parametrize("index", [0, 5, 10])
def test_conv_input_gradients_match_central_differences(index):
    x_shape, k_shape, kw = CONVS[index]
    x, k, g, _ = conv_case(x_shape, k_shape, kw, seed=index)
    loss = lambda x: ops.sum(ops.conv(x, k, **kw) * g)   # noqa: E731
    got = np.asarray(hj.jit(hj.grad(loss), backend="reference")(x))
    np.testing.assert_allclose(got, central_differences(loss, x), rtol=1e-6, atol=1e-7)


def test_max_pool_gradient_matches_central_differences():
    """Distinct values (a tie has no derivative), small enough for central differences to keep 1e-7."""
    x = np.random.default_rng(3).permutation(2 * 9 * 8).reshape(1, 2, 9, 8) / 100.0
    g = np.random.default_rng(4).uniform(0.5, 1.5, (1, 2, 5, 4))
    loss = lambda x: ops.sum(ops.max_pool(x, 3, 2, padding=1) * g)   # noqa: E731
    got = np.asarray(hj.jit(hj.grad(loss), backend="reference")(x))
    np.testing.assert_allclose(got, central_differences(loss, x), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("target", ["cpu", "vmvx", "cuda"])
def test_the_gradients_have_no_lhs_dilated_convolution_nor_interior_pad(target):
    """What makes them fast on IREE: autodiff writes JAX's rule (the cotangent dilated by the strides), and every
    target's rewrites leave no convolution of a zero-dilated cotangent and no interior padding
    (pipeline/conv_phases.py)."""
    from test_legalize import target_rewritten
    x, k, g = np.zeros((1, 4, 9, 8), np.float32), np.zeros((6, 4, 3, 3), np.float32), np.zeros((1, 6, 5, 4), np.float32)
    conv, pool = _conv_grad(dict(stride=2, padding=1)), _pool_grad(dict(window=3, strides=2, padding=1))
    traced = hj.jit(lambda x, k, g: (conv(x, k, g), pool(x, g[:, :4]))).lower(x, k, g).mlir
    assert re.search(r"lhs_dilate = \[2, 2\]", traced), traced
    rewrites, text = target_rewritten(traced, target)
    assert rewrites["lhs_dilations_by_phases"] == 1, rewrites
    dilations = re.findall(r"lhs_dilate = \[([\d, ]+)\]", text)
    interiors = re.findall(r"interior = \[([\d, ]+)\]", text)
    assert all(set(d.replace(" ", "").split(",")) == {"1"} for d in dilations)
    assert all(set(i.replace(" ", "").split(",")) == {"0"} for i in interiors)
