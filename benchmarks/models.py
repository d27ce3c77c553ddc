"""Model forward passes side by side: the MLP (784-512-512-10, batch 256) and ResNet-18 (224x224, batch 1 and 8),
hlojit iree:cpu against jax.jit and PyTorch (where installed) in the same run, from the same parameters.

    python benchmarks/models.py [--rounds 7] [--quick] [--only mlp|resnet18]

ResNet-18 is `samples/resnet18.py`'s (channels first, as torchvision's); the JAX one below computes the same
function with `lax.conv_general_dilated`, PyTorch's with `torch.nn.functional` on channels-last tensors
(oneDNN's fast layout) in eager mode, and with torch.compile where it builds. Parameters are on each
side's device before timing (hj.device_put, jnp.asarray, torch tensors); the input batch is numpy each call.
Every output is checked against hlojit's before timing; the rounds interleave the contenders
(benchmarks/harness.py), figures are medians, the first call (trace + compile) apart. A contender that is
not installed is skipped with a note.
"""
import argparse
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "samples"))
sys.path.insert(0, HERE)

import hlojit as hj  # noqa: E402
from hlojit import ops  # noqa: E402
import harness  # noqa: E402  (benchmarks/)
import resnet18  # noqa: E402  (samples/)

MLP_SIZES = (784, 512, 512, 10)


def mlp(xp, relu):
    def forward(params, x):
        for w, b in params[:-1]:
            x = relu(x @ w + b)
        return x @ params[-1][0] + params[-1][1]
    return forward


def jax_resnet18():
    """samples/resnet18.py's forward in JAX (not jitted: train_step.py differentiates it)."""
    import jax
    from jax import lax

    def conv(x, w, stride=1, padding=0):
        return lax.conv_general_dilated(x, w, (stride, stride), [(padding, padding)] * 2,
                                        dimension_numbers=("NCHW", "OIHW", "NCHW"))

    def norm(x, p):
        return x * p["scale"].reshape(1, -1, 1, 1) + p["shift"].reshape(1, -1, 1, 1)

    def forward(params, images):
        x = jax.nn.relu(norm(conv(images, params["stem"]["conv"], 2, 3), params["stem"]["norm"]))
        x = lax.reduce_window(x, -np.inf, lax.max, (1, 1, 3, 3), (1, 1, 2, 2), [(0, 0), (0, 0), (1, 1), (1, 1)])
        for p, stride in zip(params["blocks"], resnet18.block_strides()):
            y = jax.nn.relu(norm(conv(x, p["conv1"], stride, 1), p["norm1"]))
            y = norm(conv(y, p["conv2"], 1, 1), p["norm2"])
            if "down" in p:
                x = norm(conv(x, p["down"], stride), p["down_norm"])
            x = jax.nn.relu(x + y)
        return x.mean(axis=(2, 3)) @ params["fc"]["w"] + params["fc"]["b"]
    return forward


def jax_mlp():
    import jax
    return mlp(jax.numpy, jax.nn.relu)


def torch_mlp(torch):
    return mlp(torch, torch.relu)


def torch_tree(torch, tree, channels_last=False, requires_grad=False):
    """numpy parameters -> torch tensors (4-d ones channels-last on request), same nesting."""
    if isinstance(tree, dict):
        return {k: torch_tree(torch, v, channels_last, requires_grad) for k, v in tree.items()}
    if isinstance(tree, (list, tuple)):
        return type(tree)(torch_tree(torch, v, channels_last, requires_grad) for v in tree)
    t = torch.from_numpy(np.array(tree))
    if channels_last and t.ndim == 4:
        t = t.contiguous(memory_format=torch.channels_last)
    return t.requires_grad_(requires_grad)


def torch_resnet18(torch):
    """samples/resnet18.py's forward with torch.nn.functional (the layout follows the inputs')."""
    F = torch.nn.functional

    def norm(x, p):
        return x * p["scale"].reshape(1, -1, 1, 1) + p["shift"].reshape(1, -1, 1, 1)

    def forward(params, images):
        x = F.relu(norm(F.conv2d(images, params["stem"]["conv"], stride=2, padding=3), params["stem"]["norm"]))
        x = F.max_pool2d(x, 3, 2, padding=1)
        for p, stride in zip(params["blocks"], resnet18.block_strides()):
            y = F.relu(norm(F.conv2d(x, p["conv1"], stride=stride, padding=1), p["norm1"]))
            y = norm(F.conv2d(y, p["conv2"], padding=1), p["norm2"])
            if "down" in p:
                x = norm(F.conv2d(x, p["down"], stride=stride), p["down_norm"])
            x = F.relu(x + y)
        return x.mean(dim=(2, 3)) @ params["fc"]["w"] + params["fc"]["b"]
    return forward


def torch_contenders(torch, forward, params, inputs, quick, channels_last=False):
    """PyTorch eager (and torch.compile unless --quick) as contenders, under no_grad, outputs to numpy."""
    tparams = torch_tree(torch, params, channels_last)
    tinputs = torch_tree(torch, inputs, channels_last)

    def contender(fn):
        def call():
            with torch.no_grad():
                return fn(tparams, *tinputs).numpy()
        return harness.Contender(call)
    found = {harness.TORCH: contender(forward)}
    compiled = harness.torch_compiled(torch, forward, quick)
    if compiled is not None:
        found[harness.TORCH_COMPILE] = contender(compiled)
    return found


def contenders(hlojit_fn, jax_fn, torch_fn, params, inputs, quick, channels_last=False):
    """who -> Contender for one forward pass, and notes on the contenders that are absent."""
    jax, torch = load_jax(), harness.load_torch()
    # parameters device-resident on both sides (hj.device_put, as jnp.asarray is for JAX); inputs numpy
    resident = hj.tree_util.tree_map(hj.device_put, params)
    found = {harness.HLOJIT: harness.hlojit_contender(hj.jit(hlojit_fn), (resident, *inputs), np.asarray)}
    notes = []
    if jax is None:
        notes.append("JAX not installed (pip install -e '.[bench]'): skipped")
    else:
        jitted, jparams = jax.jit(jax_fn()), jax.tree_util.tree_map(jax.numpy.asarray, params)
        found[harness.JAX] = harness.Contender(lambda: np.asarray(jitted(jparams, *inputs).block_until_ready()))
    if torch is None:
        notes.append("PyTorch not installed (pip install -e '.[bench-torch]'): skipped")
    else:
        found.update(torch_contenders(torch, torch_fn(torch), params, inputs, quick, channels_last))
    return found, notes


def load_jax():
    try:
        import jax
    except ImportError:
        return None
    jax.config.update("jax_platforms", "cpu")
    return jax


def mlp_params(rng):
    return [((rng.standard_normal((a, b)) / np.sqrt(a)).astype(np.float32), np.zeros(b, np.float32))
            for a, b in zip(MLP_SIZES[:-1], MLP_SIZES[1:])]


def rows(rounds: int, quick: bool = False, only=None) -> list:
    """The forward-pass comparisons (harness.Row each); `only`: 'mlp' or 'resnet18'."""
    rng = np.random.default_rng(0)
    found = []
    if only in (None, "mlp"):
        params, x = mlp_params(rng), rng.standard_normal((256, MLP_SIZES[0])).astype(np.float32)
        found.append(harness.compare("MLP 784-512-512-10 forward, batch 256",
                                     *contenders(mlp(ops, ops.relu), jax_mlp, torch_mlp, params, (x,), quick),
                                     rounds=rounds, check=harness.check_close(1e-3)))
    if only in (None, "resnet18"):
        params = resnet18.init_params()
        for batch in (1, 8):
            images = rng.standard_normal((batch, 3, 224, 224)).astype(np.float32)
            found.append(harness.compare(f"ResNet-18 forward, batch {batch}",
                                         *contenders(resnet18.resnet18, jax_resnet18, torch_resnet18, params,
                                                     (images,), quick, channels_last=True),
                                         rounds=rounds, check=harness.check_close(1e-3)))
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--quick", action="store_true", help="one round, no torch.compile")
    parser.add_argument("--only", choices=("mlp", "resnet18"))
    args = parser.parse_args()
    print(harness.markdown(rows(1 if args.quick else args.rounds, args.quick, args.only)))


if __name__ == "__main__":
    main()
