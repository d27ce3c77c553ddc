"""Data-parallel training of the digits MLP on several processes with hj.distributed (MPI through mpi4py).

    pip install -e ".[samples,test]"          # scikit-learn's digits; mpi4py and mpich
    mpiexec -n 2 python samples/train_data_parallel.py
    python samples/train_data_parallel.py     # one process: the same global batches, the same accuracy

Every rank starts from rank 0's parameters (broadcast), takes the same global batches in the same order,
computes the gradient of its shard (global batch / ranks) in one compiled program, and the gradients and
loss are averaged with one all_reduce per step; every rank then runs the same compiled update on the same
bits, so the parameters stay bitwise identical (checked at the end). Rank 0 writes the checkpoint while the
others wait; the test set is split across ranks for evaluation and the predictions gathered on rank 0.
"""
import argparse
import os
import sys
import time

import numpy as np

import hlojit as hj
from hlojit import nn, ops

dist = hj.distributed


def init_mlp(key):
    """64-256-128-10, as samples/train_mnist_like.py (without dropout: the gradient is then a function of
    the global batch alone, whatever the number of ranks it is split over)."""
    keys = hj.random.split(key, 3)
    return [nn.init_dense(keys[0], 64, 256, nn.he_normal()), nn.init_dense(keys[1], 256, 128, nn.he_normal()),
            nn.init_dense(keys[2], 128, 10)]


def mlp(params, images):
    x = images.reshape(images.shape[0], 64)
    for layer in params[:-1]:
        x = ops.relu(nn.dense(x, layer["w"], layer["b"]))
    return nn.dense(x, params[-1]["w"], params[-1]["b"])


def load_data(seed: int = 0):
    """scikit-learn's 8x8 digits, 80/20; without scikit-learn a synthetic stand-in (said so)."""
    try:
        from sklearn.datasets import load_digits
        digits = load_digits()
        images, labels = (digits.images / 16.0).astype(np.float32), digits.target.astype(np.int32)
    except ImportError:
        if dist.rank() == 0:
            print("scikit-learn is not installed (pip install -e '.[samples]'): training on SYNTHETIC digits "
                  "(10 noisy prototypes), so the accuracy says nothing about the real data set")
        rng = np.random.default_rng(seed)
        prototypes = rng.uniform(0, 1, (10, 8, 8)).astype(np.float32)
        labels = rng.integers(0, 10, 1797).astype(np.int32)
        images = (prototypes[labels] + rng.normal(0, 0.7, (1797, 8, 8))).astype(np.float32)
    order = np.random.default_rng(seed).permutation(len(images))
    n_test = len(images) // 5
    test, train = order[:n_test], order[n_test:]
    return images[train], labels[train], images[test], labels[test]


def train(epochs: int, batch: int, peak_lr: float, checkpoint: str | None, seed: int = 0):
    x_train, y_train, x_test, y_test = load_data(seed)
    steps_per_epoch = len(x_train) // batch
    total = epochs * steps_per_epoch
    opt = hj.optim.adamw(hj.optim.warmup_cosine_decay(0.0, peak_lr, total // 20, total), weight_decay=1e-4)

    init = hj.jit(init_mlp, backend="reference")
    params = dist.broadcast(init(hj.random.key(seed)))          # rank 0's initialisation on every rank
    opt_state = opt.init(params)
    loss_and_grads = dist.data_parallel(
        hj.jit(hj.value_and_grad(lambda p, x, y: nn.softmax_cross_entropy(mlp(p, x), y))), batch_argnums=(1, 2))
    update = hj.jit(opt.update)
    predict = hj.jit(lambda p, x: ops.argmax(mlp(p, x), axis=-1))

    rng = np.random.default_rng(seed)                            # the same global order on every rank
    start = time.perf_counter()
    for epoch in range(1, epochs + 1):
        order = rng.permutation(len(x_train))
        losses = []
        for i in range(steps_per_epoch):
            take = order[i * batch:(i + 1) * batch]
            loss, grads = loss_and_grads(params, x_train[take], y_train[take])
            params, opt_state = update(params, grads, opt_state)
            losses.append(loss)
        if dist.rank() == 0 and (epoch % 10 == 0 or epoch == epochs):
            print(f"epoch {epoch:3d}/{epochs}: loss {np.mean([float(v) for v in losses]):.4f} "
                  f"({time.perf_counter() - start:.1f} s)", flush=True)
        if checkpoint:
            dist.save_checkpoint(checkpoint, {"params": params, "opt": opt_state, "epoch": epoch})
    dist.check_identical(params, "the parameters")
    predictions = dist.map_sharded(lambda x: predict(params, x), x_test, batch_size=128)
    if dist.rank() == 0:
        accuracy = float((np.asarray(predictions) == y_test).mean())
        print(f"{dist.size()} process(es), global batch {batch} ({batch // dist.size()} per rank), {total} steps: "
              f"test accuracy {accuracy:.2%} in {time.perf_counter() - start:.1f} s; parameters bitwise identical "
              f"on every rank", flush=True)
        return accuracy
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--batch", type=int, default=64, help="the global batch, split over the ranks")
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--checkpoint", help="write a checkpoint here after every epoch (rank 0)")
    args = parser.parse_args()
    dist.initialize()
    if args.batch % dist.size():
        sys.exit(f"--batch {args.batch} does not split over {dist.size()} processes: use a multiple of it")
    train(args.epochs, args.batch, args.lr, args.checkpoint and os.path.abspath(args.checkpoint))


if __name__ == "__main__":
    main()
