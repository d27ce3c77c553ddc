"""Derivative regions (frontend/autodiff/core.py) made while a backward pass is traced, under every
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
