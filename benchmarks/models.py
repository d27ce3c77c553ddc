"""Model forward passes side by side: the MLP (784-512-512-10, batch 256) and ResNet-18 (224x224, batch 1 and 8),
hlojit iree:cpu against jax.jit in the same run, from the same parameters.

    python benchmarks/models.py [--repeats 5]

ResNet-18 is `samples/resnet18.py`'s (channels first, as torchvision's), and the JAX one below computes the
same function with `lax.conv_general_dilated`; the outputs are compared before timing. Each figure is the
best of `--repeats` calls after a warm-up (results waited for), the first call (trace + compile) apart.
"""
import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "samples"))

import hlojit as hj  # noqa: E402
from hlojit import ops  # noqa: E402
import resnet18  # noqa: E402  (samples/)


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


def timed(fn, args, wait, repeats):
    start = time.perf_counter()
    first_out = wait(fn(*args))
    first = time.perf_counter() - start
    if hasattr(fn, "wait_for_optimised"):   # tiered compilation: time the optimised build, not the quick one
        fn.wait_for_optimised()
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        wait(fn(*args))
        best = min(best, time.perf_counter() - start)
    return first, best, np.asarray(first_out)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    try:
        import jax
        import jax.numpy as jnp
        jax.config.update("jax_platforms", "cpu")
    except ImportError:
        sys.exit("jax is not installed: pip install -e '.[bench]'")
    rng = np.random.default_rng(0)
    sizes = (784, 512, 512, 10)
    mlp_params = [((rng.standard_normal((a, b)) / np.sqrt(a)).astype(np.float32), np.zeros(b, np.float32))
                  for a, b in zip(sizes[:-1], sizes[1:])]
    workloads = [("MLP 784-512-512-10, batch 256", hj.jit(mlp(ops, ops.relu)), jax.jit(mlp(jnp, jax.nn.relu)),
                  (mlp_params, rng.standard_normal((256, 784)).astype(np.float32)))]
    params = resnet18.init_params()
    for batch in (1, 8):
        images = rng.standard_normal((batch, 3, 224, 224)).astype(np.float32)
        workloads.append((f"ResNet-18, batch {batch}", hj.jit(resnet18.resnet18), jax.jit(jax_resnet18()),
                          (params, images)))
    print("| model | hlojit first call (s) | hlojit ms | jax first call (s) | jax ms | hlojit vs jax |")
    print("|---|---|---|---|---|---|")
    for name, ours, theirs, inputs in workloads:
        first, best, out = timed(ours, inputs, np.asarray, args.repeats)
        jfirst, jbest, jout = timed(theirs, inputs, lambda r: r.block_until_ready(), args.repeats)
        scale = float(np.abs(jout).max()) or 1.0
        assert np.abs(out - jout).max() <= 1e-3 * scale, f"{name}: hlojit and JAX disagree"
        print(f"| {name} | {first:.2f} | {best * 1e3:.2f} | {jfirst:.2f} | {jbest * 1e3:.2f} | {jbest / best:.2f}x |",
              flush=True)


if __name__ == "__main__":
    main()
