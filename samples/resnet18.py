"""ResNet-18 forward pass (random weights) on a batch of 224x224 images, on every CPU target, checked
against the reference backend; with --train-step, one training step (forward, backward, SGD with momentum)
compiled as one program.

    python samples/resnet18.py --batch 1 --backend iree:cpu --backend iree:vmvx
    python samples/resnet18.py --train-step --batch 2

The model is the torchvision one, in inference mode: batch norm folded into a scale and shift per
channel, NCHW activations, OIHW kernels.
"""
import argparse
import time

import numpy as np

import hlojit as hj
from hlojit import ops

STAGES = [(64, 1), (128, 2), (256, 2), (512, 2)]  # (channels, stride of the first block), two blocks each


def init_params(seed: int = 0, classes: int = 1000) -> dict:
    """He-initialised convolutions, batch-norm statistics near identity, a dense classifier."""
    rng = np.random.default_rng(seed)

    def conv(out_c, in_c, k):
        return (rng.standard_normal((out_c, in_c, k, k)) * np.sqrt(2 / (in_c * k * k))).astype(np.float32)

    def norm(c):
        return {"scale": (1 + 0.1 * rng.standard_normal(c)).astype(np.float32),
                "shift": (0.1 * rng.standard_normal(c)).astype(np.float32)}

    params = {"stem": {"conv": conv(64, 3, 7), "norm": norm(64)}, "blocks": []}
    in_c = 64
    for out_c, stride in STAGES:
        for block in range(2):
            s = stride if block == 0 else 1
            p = {"conv1": conv(out_c, in_c, 3), "norm1": norm(out_c), "conv2": conv(out_c, out_c, 3),
                 "norm2": norm(out_c)}
            if s != 1 or in_c != out_c:
                p["down"], p["down_norm"] = conv(out_c, in_c, 1), norm(out_c)
            params["blocks"].append(p)
            in_c = out_c
    params["fc"] = {"w": (rng.standard_normal((512, classes)) / np.sqrt(512)).astype(np.float32),
                    "b": np.zeros(classes, np.float32)}
    return params


def block_strides() -> list:
    return [stride if block == 0 else 1 for _, stride in STAGES for block in range(2)]


def batch_norm(x, p):
    return x * p["scale"].reshape(1, -1, 1, 1) + p["shift"].reshape(1, -1, 1, 1)


def resnet18(params, images):
    """images: float32[N, 3, 224, 224] -> logits float32[N, classes]."""
    x = ops.conv(images, params["stem"]["conv"], stride=2, padding=3)
    x = ops.relu(batch_norm(x, params["stem"]["norm"]))
    x = ops.max_pool(x, 3, 2, padding=1)
    for p, stride in zip(params["blocks"], block_strides()):
        y = ops.relu(batch_norm(ops.conv(x, p["conv1"], stride=stride, padding=1), p["norm1"]))
        y = batch_norm(ops.conv(y, p["conv2"], padding=1), p["norm2"])
        if "down" in p:
            x = batch_norm(ops.conv(x, p["down"], stride=stride), p["down_norm"])
        x = ops.relu(x + y)
    features = x.mean(axis=(2, 3))
    return features @ params["fc"]["w"] + params["fc"]["b"]


def make_train_step(opt, backend=None):
    """Cross-entropy of the logits, its gradient for every weight (the folded batch-norm scales and shifts
    too) and the optimizer's update: one compiled program."""
    def train_step(params, opt_state, images, labels):
        loss, grads = hj.value_and_grad(lambda p: hj.nn.softmax_cross_entropy(resnet18(p, images), labels))(params)
        # random weights give large logits and gradients: clip them so that one step cannot overshoot
        params, opt_state = opt.update(params, hj.optim.clip_by_global_norm(grads, 1.0), opt_state)
        return params, opt_state, loss, hj.optim.global_norm(grads)
    return hj.jit(train_step, backend=backend)


def run_train_step(batch: int, size: int, backend: str):
    params = init_params(classes=10)
    rng = np.random.default_rng(1)
    images = rng.standard_normal((batch, 3, size, size)).astype(np.float32)
    labels = rng.integers(0, 10, batch).astype(np.int32)
    opt = hj.optim.sgd(0.01, momentum=0.9)
    step, opt_state = make_train_step(opt, backend), opt.init(params)
    start = time.perf_counter()
    params, opt_state, loss, norm = step(params, opt_state, images, labels)
    print(f"{backend}: one ResNet-18 training step, batch {batch} of {size}x{size}: first call "
          f"{time.perf_counter() - start:.1f} s (compiles); loss {float(loss):.4f}, gradient norm {float(norm):.3f}")
    losses = [float(loss)]
    for _ in range(3):   # the same batch again: the loss must fall
        start = time.perf_counter()
        params, opt_state, loss, norm = step(params, opt_state, images, labels)
        losses.append(float(loss))
    print(f"{backend}: then {time.perf_counter() - start:.2f} s per step; loss on the same batch "
          f"{' -> '.join(f'{v:.4f}' for v in losses)}")
    assert np.isfinite(losses).all() and losses[-1] < losses[0], losses


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--backend", action="append", help="repeatable; default iree:cpu and iree:vmvx")
    parser.add_argument("--train-step", action="store_true", help="compile and run a training step instead")
    parser.add_argument("--size", type=int, default=224, help="image size for --train-step")
    args = parser.parse_args()
    if args.train_step:
        for backend in args.backend or ["iree:cpu"]:
            run_train_step(args.batch, args.size, backend)
        return
    params = init_params()
    images = np.random.default_rng(1).standard_normal((args.batch, 3, 224, 224)).astype(np.float32)
    reference = np.asarray(hj.jit(resnet18, backend="reference")(params, images))
    print(f"reference logits[0, :4] = {reference[0, :4]}")
    for backend in args.backend or ["iree:cpu", "iree:vmvx"]:
        f = hj.jit(resnet18, backend=backend)
        start = time.perf_counter()
        logits = np.asarray(f(params, images))
        first = time.perf_counter() - start
        start = time.perf_counter()
        np.asarray(f(params, images))
        again = time.perf_counter() - start
        worst = np.abs(logits - reference).max() / np.abs(reference).max()
        print(f"{backend:10s} first call {first:6.2f} s (compiles), then {again * 1e3:8.1f} ms; "
              f"worst difference from reference {worst:.2e} (relative to the largest logit)")
        np.testing.assert_allclose(logits, reference, rtol=1e-3, atol=1e-3 * np.abs(reference).max())


if __name__ == "__main__":
    main()
