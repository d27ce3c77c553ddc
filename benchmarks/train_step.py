"""Training steps side by side: forward, backward and optimizer update as one compiled program, hlojit against
JAX in the same run, from the same parameters and batch.

    python benchmarks/train_step.py [--steps 20] [--only mlp|resnet18]

Workloads: an MLP 784-512-512-10 (relu) at batch 256 with Adam(1e-3), and samples/resnet18.py's ResNet-18
(10 classes) at batch 8 of 224x224 with SGD(0.01, momentum 0.9) on gradients clipped to global norm 1 (as
the sample does: its random weights start at a loss of ~75, and unclipped steps overflow to NaN on both
sides); softmax cross-entropy, float32. Each side feeds its own outputs (parameters, optimizer state) back
in; the figure is the median of `--steps` timed steps after two warm-up steps, the first call's time (trace
+ compile) apart. The losses both sides report for the first step and after the run are printed side by
side: the first agree to float32 rounding; the MLP's agree after the run too, while ResNet-18's, trained
on one batch at a loss of 10-75, drift apart step by step as float32 rounding differences grow (they
track each other: 16.33 against 16.15 after 12 steps).
"""
import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "samples"))

import hlojit as hj  # noqa: E402
from hlojit import nn, ops  # noqa: E402
import resnet18  # noqa: E402  (samples/)

MLP_SIZES = (784, 512, 512, 10)


def mlp_params(seed=0):
    rng = np.random.default_rng(seed)
    return [{"w": (rng.standard_normal((a, b)) * np.sqrt(2 / a)).astype(np.float32), "b": np.zeros(b, np.float32)}
            for a, b in zip(MLP_SIZES[:-1], MLP_SIZES[1:])]


def hlojit_mlp_loss(params, x, y):
    for layer in params[:-1]:
        x = ops.relu(nn.dense(x, layer["w"], layer["b"]))
    return nn.softmax_cross_entropy(nn.dense(x, params[-1]["w"], params[-1]["b"]), y)


def hlojit_resnet18_loss(params, images, labels):
    return nn.softmax_cross_entropy(resnet18.resnet18(params, images), labels)


def hlojit_step(loss_fn, opt, clip=None):
    @hj.jit
    def step(params, state, x, y):
        loss, grads = hj.value_and_grad(loss_fn)(params, x, y)
        if clip is not None:
            grads = hj.optim.clip_by_global_norm(grads, clip)
        params, state = opt.update(params, grads, state)
        return params, state, loss
    return step, opt.init


def jax_cross_entropy(logits, labels):
    import jax
    import jax.numpy as jnp
    return -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(logits), labels[:, None], axis=1))


def jax_mlp_loss(params, x, y):
    import jax
    for layer in params[:-1]:
        x = jax.nn.relu(x @ layer["w"] + layer["b"])
    return jax_cross_entropy(x @ params[-1]["w"] + params[-1]["b"], y)


def jax_adam():
    """Adam as optax computes it (bias-corrected moments): (init, update)."""
    import jax
    import jax.numpy as jnp

    def init(params):
        zeros = jax.tree.map(jnp.zeros_like, params)
        return {"m": zeros, "v": zeros, "t": jnp.zeros((), jnp.int32)}

    def update(params, grads, state):
        t = state["t"] + 1
        m = jax.tree.map(lambda m, g: 0.9 * m + 0.1 * g, state["m"], grads)
        v = jax.tree.map(lambda v, g: 0.999 * v + 0.001 * g * g, state["v"], grads)
        c1, c2 = 1 - 0.9 ** t, 1 - 0.999 ** t
        params = jax.tree.map(lambda p, m, v: p - 1e-3 * (m / c1) / (jnp.sqrt(v / c2) + 1e-8), params, m, v)
        return params, {"m": m, "v": v, "t": t}
    return init, update


def jax_momentum_sgd(lr=0.01, momentum=0.9):
    """v = momentum * v + g, p -= lr * v (hj.optim.sgd's and PyTorch's form): (init, update)."""
    import jax
    import jax.numpy as jnp

    def update(params, grads, velocity):
        velocity = jax.tree.map(lambda v, g: momentum * v + g, velocity, grads)
        return jax.tree.map(lambda p, v: p - lr * v, params, velocity), velocity
    return (lambda params: jax.tree.map(jnp.zeros_like, params)), update


def jax_step(loss_fn, optimizer, clip=None):
    import jax
    import jax.numpy as jnp
    init, update = optimizer

    @jax.jit
    def step(params, state, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        if clip is not None:   # optax.clip_by_global_norm
            norm = jnp.sqrt(sum(jnp.sum(g * g) for g in jax.tree.leaves(grads)))
            grads = jax.tree.map(lambda g: g * jnp.minimum(1.0, clip / jnp.maximum(norm, 1e-30)), grads)
        params, state = update(params, grads, state)
        return params, state, loss
    return step, init


def workloads(only):
    """name -> (hlojit (step, init), jax (step, init) thunk, params thunk, x, y)."""
    rng = np.random.default_rng(1)
    found = {}
    if only in (None, "mlp"):
        found["MLP 784-512-512-10, Adam, batch 256"] = (
            lambda: hlojit_step(hlojit_mlp_loss, hj.optim.adam(1e-3)), lambda: jax_step(jax_mlp_loss, jax_adam()),
            mlp_params, rng.standard_normal((256, MLP_SIZES[0])).astype(np.float32),
            rng.integers(0, MLP_SIZES[-1], 256).astype(np.int32))
    if only in (None, "resnet18"):
        import models   # benchmarks/: the JAX ResNet-18

        def jax_resnet18_loss(params, images, labels):
            return jax_cross_entropy(forward(params, images), labels)
        forward = models.jax_resnet18()
        found["ResNet-18, clipped SGD momentum, batch 8 of 224x224"] = (
            lambda: hlojit_step(hlojit_resnet18_loss, hj.optim.sgd(0.01, momentum=0.9), clip=1.0),
            lambda: jax_step(jax_resnet18_loss, jax_momentum_sgd(), clip=1.0),
            lambda: resnet18.init_params(classes=10), rng.standard_normal((8, 3, 224, 224)).astype(np.float32),
            rng.integers(0, 10, 8).astype(np.int32))
    return found


def measure(step, init_state, params, x, y, steps):
    state = init_state(params)
    start = time.perf_counter()
    params, state, loss = step(params, state, x, y)
    first_loss = float(np.asarray(loss))
    first = time.perf_counter() - start
    if hasattr(step, "wait_for_optimised"):   # tiered compilation: time the optimised build, not the quick one
        step.wait_for_optimised()
    for _ in range(2):
        params, state, loss = step(params, state, x, y)
    times, losses = [], [float(np.asarray(loss))]
    for _ in range(steps):
        start = time.perf_counter()
        params, state, loss = step(params, state, x, y)
        losses.append(float(np.asarray(loss)))   # waits for the step (JAX dispatches asynchronously)
        times.append(time.perf_counter() - start)
    return first, float(np.median(times)), first_loss, losses[-1]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--only", choices=("mlp", "resnet18"))
    args = parser.parse_args()
    try:
        import jax
        jax.config.update("jax_platforms", "cpu")
    except ImportError:
        jax = None
        print("(jax is not installed: pip install -e '.[bench]' to compare with it)")
    print(f"median of {args.steps} steps after two warm-up steps; first call = trace + compile (or a cache read)")
    print("| training step | contender | first call (s) | ms/step | vs jax.jit | loss of step 1 | after the run |")
    print("|---|---|---|---|---|---|---|")
    for name, (ours, theirs, params, x, y) in workloads(args.only).items():
        rows = {"hlojit iree:cpu": measure(*ours(), params(), x, y, args.steps)}
        if jax is not None:
            rows["jax.jit (cpu)"] = measure(*theirs(), params(), x, y, args.steps)
        base = rows.get("jax.jit (cpu)", (0, 0, 0, 0))[1]
        for who, (first, median, first_loss, loss) in rows.items():
            ratio = f"{base / median:.2f}x" if base else "-"
            print(f"| {name} | {who} | {first:.2f} | {median * 1e3:.2f} | {ratio} | {first_loss:.6f} | {loss:.6f} |",
                  flush=True)


if __name__ == "__main__":
    main()
