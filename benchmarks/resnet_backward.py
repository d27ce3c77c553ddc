"""Where ResNet-18's training step loses to JAX: its value_and_grad on each IREE CPU driver (pinned, no race)
and its convolutions' kernel gradients, hlojit against jax.jit, in wall-clock and process CPU time.

    python benchmarks/resnet_backward.py [--rounds 3] [--only step|kernels]

Why both clocks: on a shared 2-vCPU VM the wall time is the work plus the waiting for a core; the CPU time
(every thread of the process) is the work, and on local-task also its workers' fork-join waste. Rows
alternate the contenders round by round; figures are medians over rounds of each round's best of 2 calls; the
difference column compares the first result (the loss, for the step's rows; the kernel gradient otherwise).
Per-dispatch times of the whole step come from IREE's own tools (docs/speed_history.md): export the step with
`hj.export`, then `iree-benchmark-module --device=local-sync --device_allocator=caching
--device_profiling_mode=host-execution --device_profiling_output=step.ireeprof` and `iree-profile statistics`.
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
import models  # noqa: E402  (benchmarks/: the JAX ResNet-18)
import resnet18  # noqa: E402  (samples/)
import train_step  # noqa: E402  (benchmarks/: the losses both sides train)
from kernels import conv_gradient, wall_and_cpu_seconds  # noqa: E402

HEADER = ["| what (batch 8) | hlojit ms | jax.jit ms | hlojit CPU ms | jax CPU ms | vs jax (wall) | vs jax (CPU) | "
          "max rel. difference |", "|---|---|---|---|---|---|---|---|"]


def _first(result):
    return result[0] if isinstance(result, tuple) else result


def compare(name, ours, theirs, args, rounds) -> str:
    import jax
    mine, ref = np.asarray(_first(ours(*args))), np.asarray(_first(theirs(*args)))  # compiles, and the check
    a, b = [], []
    for _ in range(rounds):
        a.append(wall_and_cpu_seconds(lambda: ours(*args), lambda r: np.asarray(_first(r)), 2))
        b.append(wall_and_cpu_seconds(lambda: theirs(*args), jax.block_until_ready, 2))
    (wall, cpu), (jax_wall, jax_cpu) = np.median(a, axis=0) * 1e3, np.median(b, axis=0) * 1e3
    error = float(np.max(np.abs(mine - ref)) / np.max(np.abs(ref)))
    return (f"| {name} | {wall:.0f} | {jax_wall:.0f} | {cpu:.0f} | {jax_cpu:.0f} | {jax_wall / wall:.2f}x | "
            f"{jax_cpu / cpu:.2f}x | {error:.1e} |")


def step_rows(rounds) -> list[str]:
    """The forward loss and value_and_grad of the training step's loss, hlojit pinned to each driver."""
    import jax
    params = resnet18.init_params(classes=10)
    x = np.random.default_rng(1).standard_normal((8, 3, 224, 224)).astype(np.float32)
    y = (np.arange(8) % 10).astype(np.int32)
    forward = models.jax_resnet18()

    def jax_loss(p, images, labels):
        return train_step.jax_cross_entropy(forward(p, images), labels)
    ours_params = hj.tree_util.tree_map(hj.device_put, params)
    theirs_params = jax.device_put(params)
    grad = hj.value_and_grad(train_step.hlojit_resnet18_loss)
    rows = []
    for driver in ("local-sync", "local-task"):
        for what, ours, theirs in (
                ("forward loss", hj.jit(train_step.hlojit_resnet18_loss, driver=driver), jax.jit(jax_loss)),
                ("value_and_grad", hj.jit(grad, driver=driver), jax.jit(jax.value_and_grad(jax_loss)))):
            rows.append(compare(f"ResNet-18 {what}, hlojit on {driver}", lambda o=ours: o(ours_params, x, y),
                                lambda t=theirs: t(theirs_params, x, y), (), rounds))
    return rows


def kernel_rows(rounds) -> list[str]:
    """The kernel gradient of each of ResNet-18's convolution shapes (channels first, as the sample's are)."""
    rng = np.random.default_rng(0)
    rows = []
    for shape in ((7, 2, 3, 64, 224), (3, 1, 64, 64, 56), (3, 1, 128, 128, 28), (3, 1, 256, 256, 14),
                  (3, 1, 512, 512, 7), (3, 2, 64, 128, 56)):
        k, stride, c_in, c_out, size = shape
        ours, theirs, args = conv_gradient(rng, *shape, "kernel")
        rows.append(compare(f"conv {k}x{k}/{stride} {c_in}->{c_out} at {size}², kernel gradient", ours, theirs,
                            args, rounds))
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--only", choices=("step", "kernels"))
    args = parser.parse_args()
    if models.load_jax() is None:
        sys.exit("JAX is not installed (pip install -e '.[bench]')")
    rows = list(HEADER)
    if args.only in (None, "step"):
        rows += step_rows(args.rounds)
    if args.only in (None, "kernels"):
        rows += kernel_rows(args.rounds)
    print("\n".join(rows))


if __name__ == "__main__":
    main()
