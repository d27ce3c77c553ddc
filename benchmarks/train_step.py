"""Training steps side by side: forward, backward and optimizer update as one compiled program, hlojit against
JAX and PyTorch (eager autograd and torch.optim, where installed) in the same run, from the same parameters and
batch.

    python benchmarks/train_step.py [--rounds 10] [--quick] [--only mlp|resnet18]

Workloads: an MLP 784-512-512-10 (relu) at batch 256 with Adam(1e-3), and samples/resnet18.py's ResNet-18
(10 classes) at batch 8 of 224x224 with SGD(0.01, momentum 0.9) on gradients clipped to global norm 1 (as
the sample does: its random weights start at a loss of ~75, and unclipped steps overflow to NaN on both
sides); softmax cross-entropy, float32; PyTorch's ResNet-18 on channels-last tensors. Each side feeds its
own outputs (parameters, optimizer state) back in; the first step's losses are checked against hlojit's
(1e-3 relative: ResNet-18's, trained on one batch at a loss of 10-75, drift apart step by step after it as
float32 rounding differences grow). The rounds interleave the contenders, one step each
(benchmarks/harness.py); figures are medians, the first call (trace + compile) apart.
"""
import argparse
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "samples"))
sys.path.insert(0, HERE)

import hlojit as hj  # noqa: E402
from hlojit import nn, ops  # noqa: E402
import harness  # noqa: E402  (benchmarks/)
import models  # noqa: E402  (benchmarks/: the JAX and PyTorch ResNet-18, load_jax, torch_tree)
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


def torch_mlp_loss(torch):
    def loss(params, x, y):
        for layer in params[:-1]:
            x = torch.relu(x @ layer["w"] + layer["b"])
        return torch.nn.functional.cross_entropy(x @ params[-1]["w"] + params[-1]["b"], y)
    return loss


def torch_resnet18_loss(torch):
    forward = models.torch_resnet18(torch)

    def loss(params, images, labels):
        return torch.nn.functional.cross_entropy(forward(params, images), labels)
    return loss


def torch_stepper(torch, loss_fn, make_optimizer, params, x, y, clip=None, channels_last=False):
    """A contender: one eager autograd step with a torch.optim optimizer; returns the step's loss."""
    tparams = models.torch_tree(torch, params, channels_last, requires_grad=True)
    leaves = _leaves(tparams)
    optimizer = make_optimizer(leaves)
    tx, ty = models.torch_tree(torch, x, channels_last), torch.from_numpy(y.astype(np.int64))

    def call():
        optimizer.zero_grad(set_to_none=True)
        loss = loss_fn(tparams, tx, ty)
        loss.backward()
        if clip is not None:
            torch.nn.utils.clip_grad_norm_(leaves, clip)
        optimizer.step()
        return [loss.detach().numpy()]
    return harness.Contender(call)


def _leaves(tree):
    if isinstance(tree, dict):
        return [leaf for key in sorted(tree) for leaf in _leaves(tree[key])]
    if isinstance(tree, (list, tuple)):
        return [leaf for item in tree for leaf in _leaves(item)]
    return [tree]


def stepper(step_and_init, params, x, y):
    """A contender that feeds its own parameters and optimizer state back in; returns the step's loss."""
    step, init_state = step_and_init
    state = {"params": params, "opt": init_state(params)}

    def call():
        state["params"], state["opt"], loss = step(state["params"], state["opt"], x, y)
        return [np.asarray(loss)]   # waits for the step (JAX dispatches asynchronously)
    return harness.Contender(call, getattr(step, "wait_for_optimised", None))


def workloads(only):
    """name -> (hlojit (step, init) thunk, jax (step, init) thunk, torch contender thunk, params thunk, x, y)."""
    rng = np.random.default_rng(1)
    found = {}
    if only in (None, "mlp"):
        found["MLP 784-512-512-10 training step, Adam, batch 256"] = (
            lambda: hlojit_step(hlojit_mlp_loss, hj.optim.adam(1e-3)), lambda: jax_step(jax_mlp_loss, jax_adam()),
            lambda torch, p, x, y: torch_stepper(torch, torch_mlp_loss(torch), lambda v: torch.optim.Adam(v, 1e-3),
                                                 p, x, y),
            mlp_params, rng.standard_normal((256, MLP_SIZES[0])).astype(np.float32),
            rng.integers(0, MLP_SIZES[-1], 256).astype(np.int32))
    if only in (None, "resnet18"):
        def jax_resnet18_loss(params, images, labels):
            return jax_cross_entropy(forward(params, images), labels)
        forward = models.jax_resnet18()
        found["ResNet-18 training step, clipped SGD momentum, batch 8 of 224x224"] = (
            lambda: hlojit_step(hlojit_resnet18_loss, hj.optim.sgd(0.01, momentum=0.9), clip=1.0),
            lambda: jax_step(jax_resnet18_loss, jax_momentum_sgd(), clip=1.0),
            lambda torch, p, x, y: torch_stepper(torch, torch_resnet18_loss(torch),
                                                 lambda v: torch.optim.SGD(v, 0.01, momentum=0.9), p, x, y,
                                                 clip=1.0, channels_last=True),
            lambda: resnet18.init_params(classes=10), rng.standard_normal((8, 3, 224, 224)).astype(np.float32),
            rng.integers(0, 10, 8).astype(np.int32))
    return found


def rows(rounds: int, quick: bool = False, only=None) -> list:
    """The training-step comparisons (harness.Row each); PyTorch eager only (torch.compile of a step takes minutes)."""
    jax, torch = models.load_jax(), harness.load_torch()
    found = []
    for name, (ours, theirs, torch_contender, params, x, y) in workloads(only).items():
        contenders, notes = {harness.HLOJIT: stepper(ours(), params(), x, y)}, []
        if jax is None:
            notes.append("JAX not installed (pip install -e '.[bench]'): skipped")
        else:
            contenders[harness.JAX] = stepper(theirs(), params(), x, y)
        if torch is None:
            notes.append("PyTorch not installed (pip install -e '.[bench-torch]'): skipped")
        else:
            contenders[harness.TORCH] = torch_contender(torch, params(), x, y)
        found.append(harness.compare(name, contenders, notes, check_loss, rounds))
    return found


def check_loss(ours, theirs, who):
    """The first step's losses agree within 1e-3 relative."""
    if not abs(float(ours[0]) - float(theirs[0])) <= 1e-3 * abs(float(ours[0])):
        raise AssertionError(f"{who}'s first loss {float(theirs[0])} against hlojit's {float(ours[0])}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--quick", action="store_true", help="one round")
    parser.add_argument("--only", choices=("mlp", "resnet18"))
    args = parser.parse_args()
    print(harness.markdown(rows(1 if args.quick else args.rounds, args.quick, args.only)))


if __name__ == "__main__":
    main()
