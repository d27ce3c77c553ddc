"""Run under `mpiexec -n N` by tests/test_distributed.py: every collective on inputs that depend on the rank,
a few data-parallel training steps, sharded inference; each rank saves what it got to OUT/rank{r}.npz.

    mpiexec -n 2 python tests/distributed/collectives.py OUT [--quick]
"""
import hashlib
import os
import sys

import ml_dtypes
import numpy as np

import hlojit as hj
from inputs import global_batch, init_params, loss, rank_tree, sizes_for_bits, steps

dist = hj.distributed


def flat(prefix, tree, out):
    """Each leaf of `tree` into `out` under prefix/path (bfloat16 as float32: npz cannot hold it)."""
    paths = []
    leaves, _ = hj.frontend.pytree.flatten(tree, paths=paths)
    for path, leaf in zip(paths, leaves):
        assert isinstance(leaf, hj.Array), (prefix, path, type(leaf))
        array = np.asarray(leaf)
        out[prefix + path] = array.astype(np.float32) if array.dtype == ml_dtypes.bfloat16 else array


def main(folder, quick):
    world = dist.initialize(timeout=60)
    r, n = world.rank, world.size
    out = {}
    tree = rank_tree(r)
    for op in ("sum", "max", "min"):
        flat(f"all_reduce_{op}", dist.all_reduce({k: v for k, v in tree.items() if op != "sum" or k != "flags"},
                                                 op), out)
    flat("all_reduce_mean", dist.all_reduce({k: tree[k] for k in ("f32", "f64", "f16", "bf16")}, "mean"), out)
    flat("broadcast", dist.broadcast(tree, root=n - 1), out)
    flat("all_gather", dist.all_gather(tree), out)
    gathered = dist.gather({"rows": np.arange(r + 1, dtype=np.int32) + 10 * r,
                            "m": np.full((r + 1, 2), r, np.float32)}, root=0)
    if r == 0:
        flat("gather", gathered, out)
    squares = dist.map_sharded(lambda x: {"sq": hj.device_put(np.asarray(x) ** 2)}, np.arange(11.0), batch_size=3)
    one_row = dist.map_sharded(lambda x: hj.device_put(np.asarray(x) + 1), np.arange(1.0), batch_size=2)
    if r == 0:                                   # ranks without rows run one batch (dropped) and send none
        flat("map_sharded", squares, out)
        flat("one_row", one_row, out)
    # floats whose sums round differently in different orders: every rank must get the same bits
    rng = np.random.default_rng(r)
    for size in sizes_for_bits():
        x = (rng.standard_normal(size) * 10.0 ** rng.integers(-4, 4, size)).astype(np.float32)
        total = np.asarray(dist.all_reduce(x))
        out[f"bits_{size}"] = np.frombuffer(hashlib.sha256(total.tobytes()).digest(), np.uint8)
    if not quick:
        train(out, folder)
    np.savez(os.path.join(folder, f"rank{r}.npz"), **out)


def train(out, folder):
    params = dist.broadcast(init_params(dist.rank()))      # each rank makes different ones: rank 0's win
    opt = hj.optim.adam(1e-2)
    state = opt.init(params)
    loss_and_grads = dist.data_parallel(hj.jit(hj.value_and_grad(loss)), batch_argnums=(1, 2))
    update = hj.jit(opt.update)
    for step in range(steps()):
        x, y = global_batch(step)
        value, grads = loss_and_grads(params, x, y)
        params, state = update(params, grads, state)
        out[f"loss_{step}"] = np.asarray(value)
    dist.check_identical(params, "the parameters")
    flat("params", params, out)
    dist.save_checkpoint(os.path.join(folder, "ckpt.npz"), {"params": params})
    restored = dist.load_checkpoint(os.path.join(folder, "ckpt.npz"), {"params": params})
    flat("restored", restored, out)


if __name__ == "__main__":
    main(sys.argv[1], "--quick" in sys.argv)
