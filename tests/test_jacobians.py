"""hj.jacfwd, hj.jacrev, hj.hessian against central differences (float64 numpy), with JAX's layouts."""
import numpy as np
import pytest

import hlojit as hj
from hlojit import ops
from conftest import BACKENDS

rng = np.random.default_rng(1)
W = rng.normal(size=(3, 2))


def f_matrix(x):                      # R^{5x3} -> R^{5x2}
    return ops.tanh(x @ W.astype(np.float32))


def f_matrix_np(x):
    return np.tanh(x @ W)


def central(fn, x, eps=1e-4):
    """d fn / d x by central differences in float64: shape fn(x).shape + x.shape."""
    x = np.asarray(x, np.float64)
    out = np.asarray(fn(x))
    jac = np.zeros(out.shape + x.shape)
    for index in np.ndindex(*x.shape):
        step = np.zeros_like(x)
        step[index] = eps
        jac[(...,) + index] = (np.asarray(fn(x + step)) - np.asarray(fn(x - step))) / (2 * eps)
    return jac


def _program(x, y, s):
    pair = lambda a, b: (ops.sin(a) * b.sum(), {"p": a.sum() * b})  # noqa: E731
    return {
        "rev": hj.jacrev(f_matrix)(x),
        "fwd": hj.jacfwd(f_matrix)(x),
        "rev pair": hj.jacrev(pair, argnums=(0, 1))(s, y),
        "fwd pair": hj.jacfwd(pair, argnums=(0, 1))(s, y),
        "hessian": hj.hessian(lambda v: (ops.sin(v) ** 2).sum() * v[0])(y),
        "aux": hj.jacrev(lambda v: (ops.exp(v), v.sum()), has_aux=True)(y),
    }


@pytest.mark.parametrize("backend", BACKENDS)
def test_jacobians_against_central_differences(backend):
    x = rng.normal(size=(5, 3)).astype(np.float32)
    y = rng.normal(size=(3,)).astype(np.float32)
    s = rng.normal(size=(2,)).astype(np.float32)
    out = hj.jit(_program, backend=backend)(x, y, s)
    tol = dict(rtol=1e-4, atol=1e-5)
    assert np.asarray(out["rev"]).shape == (5, 2, 5, 3)
    np.testing.assert_allclose(np.asarray(out["rev"]), central(f_matrix_np, x), **tol)
    np.testing.assert_allclose(np.asarray(out["fwd"]), central(f_matrix_np, x), **tol)
    for key in ("rev pair", "fwd pair"):
        (ds, dy), dp = out[key]
        np.testing.assert_allclose(np.asarray(ds), central(lambda a: np.sin(a) * y.sum(), s), **tol)
        np.testing.assert_allclose(np.asarray(dy), central(lambda b: np.sin(s) * b.sum(), y), **tol)
        np.testing.assert_allclose(np.asarray(dp["p"][0]), central(lambda a: a.sum() * y, s), **tol)
        np.testing.assert_allclose(np.asarray(dp["p"][1]), central(lambda b: s.sum() * b, y), **tol)
    hess = central(lambda v: central(lambda u: (np.sin(u) ** 2).sum() * u[0], v, 1e-4), y, 1e-3)
    np.testing.assert_allclose(np.asarray(out["hessian"]), hess, rtol=1e-3, atol=1e-3)
    jac, aux = out["aux"]
    np.testing.assert_allclose(np.asarray(jac), np.diag(np.exp(y)), **tol)
    np.testing.assert_allclose(np.asarray(aux), y.sum(), rtol=1e-6)


def test_jacobians_outside_jit_and_errors():
    x = rng.normal(size=(4,)).astype(np.float32)
    jac = hj.jacrev(ops.sin)(x)
    assert isinstance(jac, hj.Array)
    np.testing.assert_allclose(np.asarray(jac), np.diag(np.cos(x)), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(np.asarray(hj.jacfwd(ops.sin)(x)), np.diag(np.cos(x)), rtol=1e-6, atol=1e-7)
    scaled = hj.jacrev(lambda v, scale=1.0: v * scale)(x, scale=np.float32(2))   # keywords pass through
    np.testing.assert_array_equal(np.asarray(scaled), 2 * np.eye(4, dtype=np.float32))
    with pytest.raises(hj.DTypeError, match="jacrev: the differentiated arguments must be floats"):
        hj.jacrev(lambda i: i * 2)(np.arange(3, dtype=np.int32))
    with pytest.raises(hj.TracingError, match="argnums"):
        hj.jacfwd(ops.sin, argnums=2)(x)
