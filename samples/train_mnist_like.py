"""Train an MLP and a small CNN on scikit-learn's 8x8 handwritten digits (1,797 images, 10 classes): each
training step (forward, backward, optimizer update, batch-norm statistics, dropout keys) is ONE hj.jit
program.

    pip install -e ".[samples]"
    python samples/train_mnist_like.py --plot loss.png

The CNN is channels last (NHWC, HWIO kernels): IREE 3.13's CPU code runs channels-first convolutions
~15x slower than the same convolution channels last.
"""
import argparse
import sys
import time

import numpy as np

import hlojit as hj
from hlojit import nn, ops


# --- the models: plain functions of parameter pytrees --------------------------------------------------

def init_mlp(key):
    keys = hj.random.split(key, 3)
    return [nn.init_dense(keys[0], 64, 256, nn.he_normal()), nn.init_dense(keys[1], 256, 128, nn.he_normal()),
            nn.init_dense(keys[2], 128, 10)]


def mlp(params, state, images, training: bool, key):
    """images [N, 8, 8] -> logits [N, 10]; `state` is unused (the MLP has no batch norm)."""
    x = images.reshape(images.shape[0], 64)
    keys = hj.random.split(key, 2)
    for i, layer in enumerate(params[:-1]):
        x = nn.dropout(ops.relu(nn.dense(x, layer["w"], layer["b"])), 0.1, keys[i], training)
    return nn.dense(x, params[-1]["w"], params[-1]["b"]), state


def init_cnn(key):
    keys = hj.random.split(key, 4)
    hwio = nn.he_normal()   # fans of an HWIO kernel are JAX's defaults (in_axis=-2, out_axis=-1)
    params = {"conv1": {"w": hwio(keys[0], (3, 3, 1, 16)), "b": np.zeros(16, np.float32)},
              "conv2": {"w": hwio(keys[1], (3, 3, 16, 32)), "b": np.zeros(32, np.float32)},
              "dense1": nn.init_dense(keys[2], 4 * 4 * 32, 64, nn.he_normal()),
              "dense2": nn.init_dense(keys[3], 64, 10)}
    params["norm"], state = nn.init_batch_norm(16)
    return params, state


def cnn(params, state, images, training: bool, key):
    """images [N, 8, 8] -> logits [N, 10]; conv-bn-relu, conv-relu, 2x2 max pool, dense-dropout, dense."""
    x = images.reshape(*images.shape, 1)                                                   # NHWC
    x = nn.conv2d(x, params["conv1"]["w"], params["conv1"]["b"], padding="SAME", layout="NHWC")
    norm = params["norm"]
    x, mean, var = nn.batch_norm(x, norm["scale"], norm["offset"], state["mean"], state["var"], training, axis=-1)
    x = ops.relu(x)
    x = ops.relu(nn.conv2d(x, params["conv2"]["w"], params["conv2"]["b"], padding="SAME", layout="NHWC"))
    x = nn.max_pool(x, 2, layout="NHWC").reshape(x.shape[0], -1)                           # [N, 4*4*32]
    x = nn.dropout(ops.relu(nn.dense(x, params["dense1"]["w"], params["dense1"]["b"])), 0.3, key, training)
    return nn.dense(x, params["dense2"]["w"], params["dense2"]["b"]), {"mean": mean, "var": var}


# --- training ------------------------------------------------------------------------------------------

def make_step(model, opt, seed: int):
    """The whole training step as one compiled program; the dropout key comes from the step count."""
    @hj.jit
    def step(params, state, opt_state, images, labels):
        key = hj.random.fold_in(hj.random.key(seed), opt_state["step"])

        def loss_fn(params):
            logits, new_state = model(params, state, images, True, key)
            return nn.softmax_cross_entropy(logits, labels), new_state
        (loss, state), grads = hj.value_and_grad(loss_fn, has_aux=True)(params)
        params, opt_state = opt.update(params, grads, opt_state)
        return params, state, opt_state, loss
    return step


def progress(name: str, epoch: int, epochs: int, loss: float, seconds: float, width: int = 30):
    done = int(width * epoch / epochs)
    sys.stdout.write(f"\r{name:4s} [{'#' * done}{'.' * (width - done)}] epoch {epoch:3d}/{epochs} "
                     f"loss {loss:.4f}  {seconds:5.1f} s")
    sys.stdout.flush()


def train(name, model, params, state, data, epochs: int, batch: int, peak_lr: float, seed: int = 0):
    x_train, y_train, x_test, y_test = data
    steps_per_epoch = len(x_train) // batch        # whole batches only: one shape, one compile
    total = epochs * steps_per_epoch
    opt = hj.optim.adamw(hj.optim.warmup_cosine_decay(0.0, peak_lr, total // 20, total), weight_decay=1e-4)
    step = make_step(model, opt, seed)
    predict = hj.jit(lambda params, state, images: ops.argmax(model(params, state, images, False,
                                                                    hj.random.key(0))[0], axis=-1))
    opt_state = opt.init(params)
    rng = np.random.default_rng(seed)
    losses, start = [], time.perf_counter()
    for epoch in range(1, epochs + 1):
        order = rng.permutation(len(x_train))
        epoch_losses = []
        for i in range(steps_per_epoch):
            take = order[i * batch:(i + 1) * batch]
            params, state, opt_state, loss = step(params, state, opt_state, x_train[take], y_train[take])
            epoch_losses.append(loss)
        losses += [float(v) for v in epoch_losses]    # reading the losses once per epoch keeps steps queued
        progress(name, epoch, epochs, float(np.mean(losses[-steps_per_epoch:])), time.perf_counter() - start)
    accuracy = float((np.asarray(predict(params, state, x_test)) == y_test).mean())
    seconds = time.perf_counter() - start
    print(f"\n{name}: test accuracy {accuracy:.2%} after {epochs} epochs ({total} steps) in {seconds:.1f} s "
          f"(compiles included)")
    return accuracy, seconds, losses, steps_per_epoch


def load_data(seed: int = 0):
    from sklearn.datasets import load_digits
    digits = load_digits()
    images = (digits.images / 16.0).astype(np.float32)
    labels = digits.target.astype(np.int32)
    order = np.random.default_rng(seed).permutation(len(images))
    n_test = len(images) // 5
    test, train_ = order[:n_test], order[n_test:]
    return images[train_], labels[train_], images[test], labels[test]


def plot(path: str, curves: dict):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(7, 4))
    for name, (losses, per_epoch) in curves.items():
        epochs = np.arange(1, len(losses) + 1) / per_epoch
        ax.plot(epochs, losses, alpha=0.3)
        smooth = np.convolve(losses, np.ones(per_epoch) / per_epoch, mode="valid")
        ax.plot(epochs[per_epoch - 1:], smooth, label=f"{name} (mean over an epoch)", color=ax.lines[-1].get_color())
    ax.set(xlabel="epoch", ylabel="training loss (cross-entropy)", yscale="log",
           title="hlojit: digits 8x8, one hj.jit program per training step")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print(f"loss curve saved to {path}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, help="for both models (default: 30 for the MLP, 20 for the CNN)")
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--plot", help="save the loss curves as a PNG here")
    parser.add_argument("--model", choices=["mlp", "cnn", "both"], default="both")
    args = parser.parse_args()
    start = time.perf_counter()
    data = load_data()
    print(f"digits: {len(data[0])} training and {len(data[2])} test images of 8x8")
    init = hj.jit(lambda key: (init_mlp(key), init_cnn(key)), backend="reference")   # numpy: nothing to compile
    (mlp_params, (cnn_params, cnn_state)) = init(hj.random.key(0))
    curves, results = {}, {}
    if args.model in ("mlp", "both"):
        acc, secs, losses, per_epoch = train("mlp", mlp, mlp_params, {}, data, args.epochs or 30, args.batch, 3e-3)
        curves["mlp"], results["mlp"] = (losses, per_epoch), (acc, secs)
    if args.model in ("cnn", "both"):
        acc, secs, losses, per_epoch = train("cnn", cnn, cnn_params, cnn_state, data, args.epochs or 20, args.batch,
                                             3e-3)
        curves["cnn"], results["cnn"] = (losses, per_epoch), (acc, secs)
    print(f"total {time.perf_counter() - start:.1f} s: " +
          ", ".join(f"{name} {acc:.2%} in {secs:.1f} s" for name, (acc, secs) in results.items()))
    if args.plot:
        plot(args.plot, curves)


if __name__ == "__main__":
    main()
