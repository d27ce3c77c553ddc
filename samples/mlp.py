"""A multi-layer perceptron (784-512-512-10, random weights) on a batch of flattened 28x28 images, on
every CPU target, checked against the reference backend.

    python samples/mlp.py --batch 256 --backend iree:cpu
"""
import argparse
import time

import numpy as np

import hlojit as hj
from hlojit import ops

SIZES = (784, 512, 512, 10)


def init_params(seed: int = 0, sizes=SIZES) -> list:
    rng = np.random.default_rng(seed)
    return [{"w": (rng.standard_normal((n_in, n_out)) * np.sqrt(2 / n_in)).astype(np.float32),
             "b": np.zeros(n_out, np.float32)} for n_in, n_out in zip(sizes[:-1], sizes[1:])]


def mlp(params, x):
    """x: float32[batch, 784] -> logits float32[batch, 10]."""
    for layer in params[:-1]:
        x = ops.relu(x @ layer["w"] + layer["b"])
    return x @ params[-1]["w"] + params[-1]["b"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--backend", action="append", help="repeatable; default iree:cpu and iree:vmvx")
    args = parser.parse_args()
    params = init_params()
    x = np.random.default_rng(1).random((args.batch, SIZES[0]), dtype=np.float32)
    reference = np.asarray(hj.jit(mlp, backend="reference")(params, x))
    for backend in args.backend or ["iree:cpu", "iree:vmvx"]:
        f = hj.jit(mlp, backend=backend)
        logits = np.asarray(f(params, x))
        start = time.perf_counter()
        for _ in range(10):
            np.asarray(f(params, x))
        per_call = (time.perf_counter() - start) / 10
        worst = np.abs(logits - reference).max()
        print(f"{backend:10s} {per_call * 1e3:7.2f} ms per batch of {args.batch}; worst difference from the "
              f"reference backend {worst:.2e}")
        np.testing.assert_allclose(logits, reference, rtol=1e-4, atol=1e-4)


if __name__ == "__main__":
    main()
