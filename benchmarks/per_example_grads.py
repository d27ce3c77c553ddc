"""Per-example gradients: `hj.vmap(hj.grad(loss))` against `jax.vmap(jax.grad(loss))` in the same run.

    python benchmarks/per_example_grads.py [--rounds 4] [--calls 2]

The MLP 784-512-512-10 (relu) of benchmarks/train_step.py, softmax cross-entropy of one example, its
gradient with respect to the parameters for each of 256 examples (the per-example gradients DP-SGD clips):
~171M floats of output per call. Both sides are jitted; the rounds interleave them (a round times
`--calls` calls of each), and the figure is the median over every timed call, after one warm-up call.
Both sides' gradients are compared (max relative difference) before timing.
"""
import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import hlojit as hj  # noqa: E402
from hlojit import nn, ops  # noqa: E402
from train_step import MLP_SIZES, mlp_params  # noqa: E402

BATCH = 256


def hlojit_example_loss(params, x, y):
    for layer in params[:-1]:
        x = ops.relu(nn.dense(x, layer["w"], layer["b"]))
    logits = nn.dense(x, params[-1]["w"], params[-1]["b"])
    return ops.logsumexp(logits) - logits[y]


def jax_example_loss(params, x, y):
    import jax
    for layer in params[:-1]:
        x = jax.nn.relu(x @ layer["w"] + layer["b"])
    logits = x @ params[-1]["w"] + params[-1]["b"]
    return jax.nn.logsumexp(logits) - logits[y]


def contenders():
    ours = hj.jit(hj.vmap(hj.grad(hlojit_example_loss), in_axes=(None, 0, 0)))
    try:
        import jax
        jax.config.update("jax_platforms", "cpu")
    except ImportError:
        print("(jax is not installed: pip install -e '.[bench]' to compare with it)")
        return {"hlojit iree:cpu": ours}
    theirs = jax.jit(jax.vmap(jax.grad(jax_example_loss), in_axes=(None, 0, 0)))
    return {"hlojit iree:cpu": ours, "jax.jit (cpu)": lambda *a: jax.block_until_ready(theirs(*a))}


def _leaves(grads):
    return [np.asarray(g[k]) for g in grads for k in ("w", "b")]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--calls", type=int, default=2)
    args = parser.parse_args()
    rng = np.random.default_rng(1)
    params = mlp_params()
    x = rng.standard_normal((BATCH, MLP_SIZES[0])).astype(np.float32)
    y = rng.integers(0, MLP_SIZES[-1], BATCH).astype(np.int32)
    runs = contenders()
    firsts, answers = {}, {}
    for name, run in runs.items():
        start = time.perf_counter()
        answers[name] = _leaves(run(params, x, y))
        firsts[name] = time.perf_counter() - start
    if len(answers) == 2:
        ours, theirs = answers.values()
        worst = max(float(np.max(np.abs(a - b)) / (np.max(np.abs(b)) + 1e-30)) for a, b in zip(ours, theirs))
        print(f"max difference of the gradients, relative to each leaf's largest: {worst:.2e}")
    times = {name: [] for name in runs}
    for _ in range(args.rounds):
        for name, run in runs.items():
            for _ in range(args.calls):
                start = time.perf_counter()
                _leaves(run(params, x, y))   # every result, ready on the host
                times[name].append(time.perf_counter() - start)
    base = float(np.median(times["jax.jit (cpu)"])) if "jax.jit (cpu)" in times else 0.0
    print(f"per-example gradients of the MLP {'-'.join(map(str, MLP_SIZES))}, batch {BATCH}: median of "
          f"{args.rounds} interleaved rounds x {args.calls} calls")
    print("| contender | first call (s) | ms/call | vs jax.vmap(jax.grad) |")
    print("|---|---|---|---|")
    for name in runs:
        median = float(np.median(times[name]))
        ratio = f"{base / median:.2f}x" if base else "-"
        print(f"| {name} | {firsts[name]:.2f} | {median * 1e3:.1f} | {ratio} |", flush=True)


if __name__ == "__main__":
    main()
