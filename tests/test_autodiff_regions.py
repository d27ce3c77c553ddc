"""Derivative regions (frontend/derivatives.py) made while a backward pass is traced, under every
transformation that traces a backward pass again: hessian and jacfwd(jacrev) (vmap of a vjp), grad of grad,
vmap of grad, jvp of grad. A region made inside vmap's scratch block from values computed there was once
copied with its output op but kept the scratch block's inputs, erased with it: the next backward pass
read them and the process died (a segfault). So the cases run in a child process, which writes its results
for the test to check against closed forms."""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from scipy.special import erfc

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CHILD = """
import sys
import numpy as np
import hlojit as hj
from hlojit import ops

@hj.custom_vjp
def half_cosh2(x):
    return ops.cosh(2 * x) / 2

# sinh is a composite with a region of its own, here made in the backward pass from 2 * x, computed there
half_cosh2.defvjp(lambda x: (ops.cosh(2 * x) / 2, x), lambda x, g: (g * ops.sinh(x * 2),))

def f(x):
    return ops.sum(half_cosh2(x))

def cases(x):
    slope = hj.grad(f)
    return [hj.hessian(f)(x), hj.jacfwd(hj.jacrev(f))(x), hj.grad(lambda x: ops.sum(slope(x)))(x),
            hj.vmap(slope)(ops.stack([x, -x])), hj.jvp(slope, (x,), (ops.ones_like(x),))[1]]

x = np.linspace(-1, 1, 4).astype(np.float32)
results = hj.jit(cases, backend=sys.argv[1])(x)
np.savez(sys.argv[2], *[np.asarray(r) for r in results])
"""


CLOSED_FORMS = """
import sys
import numpy as np
import hlojit as hj
from hlojit import nn, ops

x = np.array([-1.5, -0.25, 0.5, 2.0], np.float32)
v = np.array([0.5, -1.0, 2.0, 0.25], np.float32)
w = np.array([1.0, 2.0, -0.5, 1.5], np.float32)
FUNCTIONS = [lambda x: ops.sum(nn.gelu(x) * w), lambda x: ops.sum(nn.gelu(x, approximate=True) * w),
             lambda x: ops.sum(ops.softmax(x) * w), lambda x: ops.sum(ops.log_softmax(x) * w),
             lambda x: ops.sum(ops.top_k(x, 2)[0] * w[:2]),
             lambda x: ops.sum(ops.log_softmax(nn.gelu(x)) * w) + ops.sum(ops.softmax(nn.gelu(x, True)) * w)]

def cases(x, v):
    out = []
    for f in FUNCTIONS:
        slope = hj.grad(f)
        out += [hj.hessian(f)(x), hj.grad(lambda x: ops.sum(slope(x) * v))(x), hj.vmap(slope)(ops.stack([x, -x])),
                hj.jvp(slope, (x,), (v,))[1]]
    return out

results = hj.jit(cases, backend=sys.argv[1])(x, v)
np.savez(sys.argv[2], *[np.asarray(r) for r in results])
"""


def run_child(script: str, tmp_path, *args) -> list:
    """The arrays `script` saved (np.savez to its last argument), run in a child process: a crash fails
    the test instead of killing pytest."""
    out = tmp_path / "out.npz"
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run([sys.executable, "-c", script, *args, str(out)], capture_output=True, text=True,
                          env=env, timeout=600)
    assert done.returncode == 0, f"the child exited with {done.returncode}:\n{done.stderr[-3000:]}"
    with np.load(out) as saved:
        return [saved[f"arr_{i}"] for i in range(len(saved.files))]


@pytest.mark.parametrize("backend", ["reference", "iree:cpu"])
def test_second_order_through_a_region_made_in_the_backward_pass(backend, tmp_path):
    hessian, fwd_rev, grad_grad, vmap_grad, jvp_grad = run_child(CHILD, tmp_path, backend)
    x = np.linspace(-1, 1, 4).astype(np.float32)
    second = 2 * np.cosh(2 * x.astype(np.float64))      # d^2/dx^2 cosh(2x)/2
    np.testing.assert_allclose(hessian, np.diag(second), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(fwd_rev, np.diag(second), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(grad_grad, second, rtol=1e-5)
    np.testing.assert_allclose(jvp_grad, second, rtol=1e-5)
    np.testing.assert_allclose(vmap_grad, np.sinh(2 * np.stack([x, -x]).astype(np.float64)), rtol=1e-5, atol=1e-6)


def _gelu_slope(x, approximate):
    if approximate:
        c = np.sqrt(2 / np.pi)
        t = np.tanh(c * (x + 0.044715 * x ** 3))
        return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * c * (1 + 3 * 0.044715 * x * x)
    return 0.5 * erfc(-x / np.sqrt(2)) + x * np.exp(-x * x / 2) / np.sqrt(2 * np.pi)


def _gelu(x, approximate):
    if approximate:
        return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))
    return 0.5 * x * erfc(-x / np.sqrt(2))


def _softmax(x):
    e = np.exp(x - x.max())
    return e / e.sum()


def _closed_forms(w):
    """(gradient, hessian) of each FUNCTIONS entry of CLOSED_FORMS, in float64."""
    eps = 1e-5

    def gelu(approximate):
        return (lambda x: w * _gelu_slope(x, approximate),
                lambda x: np.diag(w * (_gelu_slope(x + eps, approximate) - _gelu_slope(x - eps, approximate))
                                  / (2 * eps)))

    def softmax_hessian(x):
        y = _softmax(x)
        s = w @ y
        return (np.diag(y) - np.outer(y, y)) * (w - s)[:, None] - np.outer(y, y * (w - s))

    def top_k_gradient(x):
        g = np.zeros_like(x)
        g[np.argsort(-x)[:2]] = w[:2]
        return g
    def log_softmax_hessian(x):
        y = _softmax(x)
        return -w.sum() * (np.diag(y) - np.outer(y, y))
    def composition_gradient(x):     # log_softmax(gelu(x)) . w + softmax(gelu~(x)) . w, by the chain rule
        y, z = _softmax(_gelu(x, False)), _softmax(_gelu(x, True))
        return _gelu_slope(x, False) * (w - y * w.sum()) + _gelu_slope(x, True) * z * (w - w @ z)

    def central_differences(x):
        return np.stack([(composition_gradient(x + e) - composition_gradient(x - e)) / (2 * eps)
                         for e in np.eye(len(x)) * eps], axis=1)
    return [gelu(False), gelu(True),
            (lambda x: _softmax(x) * (w - w @ _softmax(x)), softmax_hessian),
            (lambda x: w - _softmax(x) * w.sum(), log_softmax_hessian),
            (top_k_gradient, lambda x: np.zeros((4, 4))), (composition_gradient, central_differences)]


@pytest.mark.parametrize("backend", ["reference", "iree:cpu"])
def test_closed_forms_under_every_transformation(backend, tmp_path):
    """softmax, log_softmax, gelu (both forms: the exact one's slope goes through erfc, a region made in the
    backward pass), top_k and a composition of them: hessian, grad of grad, vmap of grad and jvp of grad
    against closed forms (the composition's hessian: central differences of its closed-form gradient)."""
    results = run_child(CLOSED_FORMS, tmp_path, backend)
    x = np.array([-1.5, -0.25, 0.5, 2.0])
    v = np.array([0.5, -1.0, 2.0, 0.25])
    w = np.array([1.0, 2.0, -0.5, 1.5])
    for i, (gradient, hessian) in enumerate(_closed_forms(w)):
        got_hessian, got_hv, got_vmap, got_jvp = results[4 * i:4 * i + 4]
        h = hessian(x)
        np.testing.assert_allclose(got_hessian, h, rtol=2e-5, atol=2e-6, err_msg=f"hessian of case {i}")
        np.testing.assert_allclose(got_hv, h @ v, rtol=2e-5, atol=2e-6, err_msg=f"grad of grad of case {i}")
        np.testing.assert_allclose(got_jvp, h @ v, rtol=2e-5, atol=2e-6, err_msg=f"jvp of grad of case {i}")
        np.testing.assert_allclose(got_vmap, np.stack([gradient(x), gradient(-x)]), rtol=2e-5, atol=2e-6,
                                   err_msg=f"vmap of grad of case {i}")
