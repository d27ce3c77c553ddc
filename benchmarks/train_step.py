"""One training step (forward, backward, Adam update) of an MLP, hlojit against JAX in the same run.

    python benchmarks/train_step.py [--batch 256] [--steps 30]

The MLP is 784-512-512-10 (relu), softmax cross-entropy, Adam(1e-3), float32. Each side compiles the whole
step into one program and feeds its own outputs (parameters, optimizer state) back in; the figure is the
median of `--steps` timed steps after two warm-up steps, with the first call's time (trace + compile)
reported apart. Both sides start from the same parameters and batch, and the losses they report after
the same number of steps are printed side by side (they agree to float32 rounding).
"""
import argparse
import time

import numpy as np

import hlojit as hj
from hlojit import nn, ops

SIZES = (784, 512, 512, 10)


def init(seed=0):
    rng = np.random.default_rng(seed)
    return [{"w": (rng.standard_normal((a, b)) * np.sqrt(2 / a)).astype(np.float32), "b": np.zeros(b, np.float32)}
            for a, b in zip(SIZES[:-1], SIZES[1:])]


def hlojit_step():
    opt = hj.optim.adam(1e-3)

    def loss_fn(params, x, y):
        for layer in params[:-1]:
            x = ops.relu(nn.dense(x, layer["w"], layer["b"]))
        return nn.softmax_cross_entropy(nn.dense(x, params[-1]["w"], params[-1]["b"]), y)

    @hj.jit
    def step(params, state, x, y):
        loss, grads = hj.value_and_grad(loss_fn)(params, x, y)
        params, state = opt.update(params, grads, state)
        return params, state, loss
    return step, opt.init


def jax_step():
    import jax
    import jax.numpy as jnp

    def loss_fn(params, x, y):
        for layer in params[:-1]:
            x = jax.nn.relu(x @ layer["w"] + layer["b"])
        logits = x @ params[-1]["w"] + params[-1]["b"]
        return -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(logits), y[:, None], axis=1))

    def init_state(params):
        zeros = jax.tree.map(jnp.zeros_like, params)
        return {"m": zeros, "v": zeros, "t": jnp.zeros((), jnp.int32)}

    @jax.jit
    def step(params, state, x, y):   # Adam as optax computes it (bias-corrected moments)
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        t = state["t"] + 1
        m = jax.tree.map(lambda m, g: 0.9 * m + 0.1 * g, state["m"], grads)
        v = jax.tree.map(lambda v, g: 0.999 * v + 0.001 * g * g, state["v"], grads)
        c1, c2 = 1 - 0.9 ** t, 1 - 0.999 ** t
        params = jax.tree.map(lambda p, m, v: p - 1e-3 * (m / c1) / (jnp.sqrt(v / c2) + 1e-8), params, m, v)
        return params, {"m": m, "v": v, "t": t}, loss
    return step, init_state


def measure(step, init_state, params, x, y, steps):
    state = init_state(params)
    start = time.perf_counter()
    params, state, loss = step(params, state, x, y)
    float(np.asarray(loss))
    first = time.perf_counter() - start
    for _ in range(2):
        params, state, loss = step(params, state, x, y)
    times, losses = [], [float(np.asarray(loss))]
    for _ in range(steps):
        start = time.perf_counter()
        params, state, loss = step(params, state, x, y)
        losses.append(float(np.asarray(loss)))   # waits for the step (JAX dispatches asynchronously)
        times.append(time.perf_counter() - start)
    return first, float(np.median(times)), losses[-1]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--steps", type=int, default=30)
    args = parser.parse_args()
    rng = np.random.default_rng(1)
    x = rng.standard_normal((args.batch, SIZES[0])).astype(np.float32)
    y = rng.integers(0, SIZES[-1], args.batch).astype(np.int32)
    step, init_state = hlojit_step()
    rows = {"hlojit iree:cpu": measure(step, init_state, init(), x, y, args.steps)}
    if step.compile(init(), init_state(init()), x, y).compiled.cache_hit:
        print("(hlojit's first call read its compiled step from the persistent compile cache: "
              "HLOJIT_CACHE=0 to time a cold compile)")
    try:
        import jax
        jax.config.update("jax_platforms", "cpu")
        rows["jax.jit (cpu)"] = measure(*jax_step(), init(), x, y, args.steps)
    except ImportError:
        print("(jax is not installed: pip install -e '.[bench]' to compare with it)")
    base = rows.get("jax.jit (cpu)", (0, 0, 0))[1]
    print(f"MLP {'-'.join(map(str, SIZES))} training step (Adam), batch {args.batch}, median of {args.steps}")
    print("| contender | first call (s) | ms/step | vs jax.jit | loss after the run |")
    print("|---|---|---|---|---|")
    for name, (first, median, loss) in rows.items():
        ratio = f"{base / median:.2f}x" if base else "-"
        print(f"| {name} | {first:.2f} | {median * 1e3:.2f} | {ratio} | {loss:.6f} |")


if __name__ == "__main__":
    main()
