"""A transformer encoder block, hlojit iree:cpu against jax.jit and PyTorch from the same parameters, one process.

    python benchmarks/transformer.py [--rounds 15] [--quick] [--autotune]

The block (pre-norm, as GPT-2's): x + attention(layer_norm(x)), then x + MLP(layer_norm(x)) with a tanh-GELU
MLP of width 1024; sequence 128, model width 256, 4 heads, batch 8, float32; hlojit's is built from
hj.nn.attention / layer_norm / dense, JAX's is the same arithmetic in jax.numpy, PyTorch's the same with
torch.nn.functional (layer_norm, scaled_dot_product_attention, tanh-GELU; eager, and torch.compile unless
--quick). Two workloads: the forward
pass, and a training step (the gradient of the mean squared distance to a target, and an SGD update, as one
compiled program; PyTorch's step is its autograd and an in-place update). Outputs are checked against
hlojit's before timing (forward within 1e-3 of the largest value; the step's loss and parameters within 1e-3,
plus 1e-7 for rounding noise about zero). The rounds interleave the contenders (benchmarks/harness.py);
figures are medians, the first call apart.
hlojit compiles with this machine's flag set (pipeline/tuning.py), or with `--autotune` the fastest for
each program (its first call then compiles and times every candidate).
"""
import argparse
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import hlojit as hj  # noqa: E402
from hlojit import nn, ops  # noqa: E402
import harness  # noqa: E402  (benchmarks/)
import models  # noqa: E402  (benchmarks/: load_jax, torch_tree)

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


def torch_block(torch):
    """The block with torch.nn.functional: the same function as hlojit_block."""
    F = torch.nn.functional

    def heads(t):
        b, length, _ = t.shape
        return t.reshape(b, length, HEADS, WIDTH // HEADS).transpose(1, 2)

    def attention(x, a):
        q, k, v = (heads(x @ a[f"w{n}"] + a[f"b{n}"]) for n in "qkv")
        out = F.scaled_dot_product_attention(q, k, v)
        b, _, length, _ = out.shape
        return out.transpose(1, 2).reshape(b, length, WIDTH) @ a["wo"] + a["bo"]

    def block(p, x):
        x = x + attention(F.layer_norm(x, (WIDTH,), p["ln1"]["scale"], p["ln1"]["offset"]), p["attention"])
        h = F.gelu(F.layer_norm(x, (WIDTH,), p["ln2"]["scale"], p["ln2"]["offset"]) @ p["w1"] + p["b1"],
                   approximate="tanh")
        return x + h @ p["w2"] + p["b2"]
    return block


def torch_step(torch, block):
    """One SGD step on the mean squared distance, as hlojit_step: returns (loss, leaves after the update)."""
    def step(params, leaves, x, target):
        loss = ((block(params, x) - target) ** 2).mean()
        grads = torch.autograd.grad(loss, leaves)
        with torch.no_grad():
            for leaf, grad in zip(leaves, grads):
                leaf.sub_(LEARNING_RATE * grad)
        return loss
    return step


def torch_contenders(torch, params, x, target, quick):
    """who -> Contender for the forward pass and for the training step (eager; torch.compile unless quick)."""
    forward = models.torch_contenders(torch, torch_block(torch), params, (x,), quick)
    tx, ttarget = torch.from_numpy(x), torch.from_numpy(target)
    steps = {}
    for who, block in ((harness.TORCH, torch_block(torch)),
                       (harness.TORCH_COMPILE, harness.torch_compiled(torch, torch_block(torch), quick))):
        if block is None:
            continue
        tparams = models.torch_tree(torch, params, requires_grad=True)
        leaves = _torch_leaves(tparams)
        step = torch_step(torch, block)

        def call(step=step, tparams=tparams, leaves=leaves):
            loss = step(tparams, leaves, tx, ttarget)
            return [leaf.detach().numpy() for leaf in leaves] + [loss.detach().numpy()]
        steps[who] = harness.Contender(call)
    return forward, steps


def _torch_leaves(tree):
    """Leaves in hj.tree's order (dict keys sorted), so they line up with hlojit's for the check."""
    if isinstance(tree, dict):
        return [leaf for key in sorted(tree) for leaf in _torch_leaves(tree[key])]
    return [tree]


def contenders(autotune: bool, quick: bool):
    """(forward contenders, step contenders, notes): each side from the same parameters and inputs."""
    rng = np.random.default_rng(1)
    params = init_params()
    x = rng.standard_normal((BATCH, SEQ, WIDTH)).astype(np.float32)
    target = rng.standard_normal((BATCH, SEQ, WIDTH)).astype(np.float32)

    def host(tree):
        return [np.asarray(leaf) for leaf in hj.tree.leaves(tree)]
    resident = hj.tree_util.tree_map(hj.device_put, params)   # as jnp.asarray's are for JAX's forward
    forward = {harness.HLOJIT: harness.hlojit_contender(hj.jit(hlojit_block, autotune=autotune), (resident, x), host)}
    step = {harness.HLOJIT: _stepping(hlojit_step(autotune), params, x, target, host)}
    notes = []
    jax, torch = models.load_jax(), harness.load_torch()
    if jax is None:
        notes.append("JAX not installed (pip install -e '.[bench]'): skipped")
    else:
        def jax_host(tree):
            return [np.asarray(leaf) for leaf in jax.tree_util.tree_leaves(jax.block_until_ready(tree))]
        jparams, jforward = jax.tree_util.tree_map(jax.numpy.asarray, params), jax.jit(jax_block())
        forward[harness.JAX] = harness.Contender(lambda: jax_host(jforward(jparams, x)))
        step[harness.JAX] = _stepping(jax_step(), jparams, x, target, jax_host)
    if torch is None:
        notes.append("PyTorch not installed (pip install -e '.[bench-torch]'): skipped")
    else:
        torch_forward, torch_steps = torch_contenders(torch, params, x, target, quick)
        forward.update(torch_forward)
        step.update(torch_steps)
    return forward, step, notes


def _stepping(step, params, x, target, host):
    """A contender that feeds its own updated parameters back in: returns (parameter leaves..., loss)."""
    state = {"params": params}

    def call():
        state["params"], loss = step(state["params"], x, target)
        return host(state["params"]) + host(loss)
    return harness.Contender(call, getattr(step, "wait_for_optimised", None))


def rows(rounds: int, quick: bool = False, autotune: bool = False) -> list:
    """The forward-pass and training-step comparisons (harness.Row each)."""
    forward, step, notes = contenders(autotune, quick)
    where = f"seq {SEQ}, d {WIDTH}, {HEADS} heads, MLP {HIDDEN}, batch {BATCH}"
    return [harness.compare(f"transformer block forward ({where})", forward, notes, harness.check_close(1e-3),
                            rounds),
            harness.compare(f"transformer block training step, SGD ({where})", step, notes,
                            harness.check_close(1e-3, atol=1e-7), rounds)]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--quick", action="store_true", help="one round, no torch.compile")
    parser.add_argument("--autotune", action="store_true", help="hj.jit(..., autotune=True)")
    args = parser.parse_args()
    print(harness.markdown(rows(1 if args.quick else args.rounds, args.quick, args.autotune)))


if __name__ == "__main__":
    main()
