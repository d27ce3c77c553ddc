"""A transformer encoder block, hlojit iree:cpu against jax.jit from the same parameters, in one process.

    python benchmarks/transformer.py [--rounds 15] [--autotune]

The block (pre-norm, as GPT-2's): x + attention(layer_norm(x)), then x + MLP(layer_norm(x)) with a tanh-GELU
MLP of width 1024; sequence 128, model width 256, 4 heads, batch 8, float32; hlojit's is built from
hj.nn.attention / layer_norm / dense, JAX's is the same arithmetic in jax.numpy. Two workloads: the forward
pass, and a training step (the gradient of the mean squared distance to a target, and an SGD update, as one
compiled program). Outputs are compared before timing (forward within 1e-3 of the largest value; the loss of
the step within 1e-4 relative). The rounds interleave hlojit and JAX (one call each per round), so a busy
moment of the machine lands on both; the figures are the medians, the first call (trace + compile) apart.
hlojit compiles with this machine's flag set (pipeline/tuning.py), or with `--autotune` the fastest for
each program (its first call then compiles and times every candidate).
"""
import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import hlojit as hj  # noqa: E402
from hlojit import nn, ops  # noqa: E402

SEQ, WIDTH, HEADS, HIDDEN, BATCH = 128, 256, 4, 1024, 8
LEARNING_RATE = 1e-3


def init_params(seed=0) -> dict:
    rng = np.random.default_rng(seed)

    def weight(a, b):
        return (rng.standard_normal((a, b)) / np.sqrt(a)).astype(np.float32)
    attention = {f"w{n}": weight(WIDTH, WIDTH) for n in "qkvo"}
    attention.update({f"b{n}": np.zeros(WIDTH, np.float32) for n in "qkvo"})
    ones, zeros = np.ones(WIDTH, np.float32), np.zeros(WIDTH, np.float32)
    return {"attention": attention, "ln1": {"scale": ones, "offset": zeros}, "ln2": {"scale": ones, "offset": zeros},
            "w1": weight(WIDTH, HIDDEN), "b1": np.zeros(HIDDEN, np.float32),
            "w2": weight(HIDDEN, WIDTH), "b2": np.zeros(WIDTH, np.float32)}


def hlojit_block(p, x):
    x = x + nn.attention(nn.layer_norm(x, p["ln1"]["scale"], p["ln1"]["offset"]), p["attention"], HEADS)
    h = nn.gelu(nn.dense(nn.layer_norm(x, p["ln2"]["scale"], p["ln2"]["offset"]), p["w1"], p["b1"]),
                approximate=True)
    return x + nn.dense(h, p["w2"], p["b2"])


def jax_block():
    import jax
    import jax.numpy as jnp

    def layer_norm(x, p):
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        return (x - mean) / jnp.sqrt(var + 1e-5) * p["scale"] + p["offset"]

    def heads(t):
        b, length, _ = t.shape
        return t.reshape(b, length, HEADS, WIDTH // HEADS).transpose(0, 2, 1, 3)

    def attention(x, a):
        q, k, v = (heads(x @ a[f"w{n}"] + a[f"b{n}"]) for n in "qkv")
        logits = q @ k.transpose(0, 1, 3, 2) / np.sqrt(WIDTH // HEADS)
        out = jax.nn.softmax(logits, axis=-1) @ v
        b, _, length, _ = out.shape
        return out.transpose(0, 2, 1, 3).reshape(b, length, WIDTH) @ a["wo"] + a["bo"]

    def block(p, x):
        x = x + attention(layer_norm(x, p["ln1"]), p["attention"])
        h = jax.nn.gelu(layer_norm(x, p["ln2"]) @ p["w1"] + p["b1"], approximate=True)
        return x + h @ p["w2"] + p["b2"]
    return block


def hlojit_step(autotune: bool):
    def loss(p, x, target):
        return ops.mean((hlojit_block(p, x) - target) ** 2)

    @hj.jit(autotune=autotune)
    def step(p, x, target):
        value, grads = hj.value_and_grad(loss)(p, x, target)
        return hj.tree.map(lambda w, g: w - LEARNING_RATE * g, p, grads), value
    return step


def jax_step():
    import jax
    block = jax_block()

    def loss(p, x, target):
        return ((block(p, x) - target) ** 2).mean()

    @jax.jit
    def step(p, x, target):
        value, grads = jax.value_and_grad(loss)(p, x, target)
        return jax.tree_util.tree_map(lambda w, g: w - LEARNING_RATE * g, p, grads), value
    return step


def first_call(fn, args, wait):
    start = time.perf_counter()
    out = wait(fn(*args))
    first = time.perf_counter() - start
    if hasattr(fn, "wait_for_optimised"):   # tiered compilation: time the optimised build, not the quick one
        fn.wait_for_optimised()
    return first, out


def interleaved(ours, theirs, args, ours_wait, theirs_wait, rounds):
    mine, jax_times = [], []
    for _ in range(rounds):
        for fn, wait, times in ((ours, ours_wait, mine), (theirs, theirs_wait, jax_times)):
            start = time.perf_counter()
            wait(fn(*args))
            times.append(time.perf_counter() - start)
    return statistics.median(mine), statistics.median(jax_times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--autotune", action="store_true", help="hj.jit(..., autotune=True)")
    args = parser.parse_args()
    try:
        import jax
        jax.config.update("jax_platforms", "cpu")
    except ImportError:
        sys.exit("jax is not installed: pip install -e '.[bench]'")
    rng = np.random.default_rng(1)
    params = init_params()
    x = rng.standard_normal((BATCH, SEQ, WIDTH)).astype(np.float32)
    target = rng.standard_normal((BATCH, SEQ, WIDTH)).astype(np.float32)
    jax_params = jax.tree_util.tree_map(jax.numpy.asarray, params)

    def ready(tree):
        return jax.block_until_ready(tree)

    def host(tree):
        return [np.asarray(leaf) for leaf in hj.tree.leaves(tree)]
    workloads = [("forward", hj.jit(hlojit_block, autotune=args.autotune), jax.jit(jax_block()), (params, x),
                  (jax_params, x)),
                 ("training step", hlojit_step(args.autotune), jax_step(), (params, x, target),
                  (jax_params, x, target))]
    print(f"transformer encoder block: seq {SEQ}, width {WIDTH}, {HEADS} heads, MLP {HIDDEN}, batch {BATCH}, f32; "
          f"medians of {args.rounds} interleaved rounds")
    print("| workload | hlojit first call (s) | hlojit ms | jax first call (s) | jax ms | hlojit vs jax |")
    print("|---|---|---|---|---|---|")
    for name, ours, theirs, our_args, their_args in workloads:
        first, out = first_call(ours, our_args, host)
        jfirst, jout = first_call(theirs, their_args, ready)
        jout = [np.asarray(leaf) for leaf in jax.tree_util.tree_leaves(jout)]
        if name == "forward":
            assert np.abs(out[0] - jout[0]).max() <= 1e-3 * np.abs(jout[0]).max(), "forward: hlojit and JAX disagree"
        else:
            assert abs(out[-1] - jout[-1]) <= 1e-4 * abs(jout[-1]), f"loss: hlojit {out[-1]}, JAX {jout[-1]}"
        best, jbest = interleaved(ours, theirs, our_args, lambda out: out, ready, args.rounds)  # hlojit: synchronous
        chosen = ours.compile(*our_args).compiled.target
        print(f"| {name} ({chosen.label}) | {first:.2f} | {best * 1e3:.1f} | {jfirst:.2f} | {jbest * 1e3:.1f} | "
              f"{jbest / best:.2f}x |",
              flush=True)


if __name__ == "__main__":
    main()
