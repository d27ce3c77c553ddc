"""Data-parallel training: every rank holds the same parameters, computes gradients on its shard of the
global batch, and the gradients are averaged with one all_reduce per step, so every rank applies the same
update to the same parameters and they stay bitwise identical.

    params = hj.distributed.broadcast(params)                   # rank 0's initialisation everywhere
    grads_fn = hj.distributed.data_parallel(hj.jit(hj.value_and_grad(loss)), batch_argnums=(1, 2))
    for x, y in global_batches:                                 # the same global batches on every rank
        loss, grads = grads_fn(params, x, y)                    # this rank's shard; averaged over ranks
        params, opt_state = update(params, grads, opt_state)    # one compiled update, identical everywhere
    hj.distributed.save_checkpoint("run/ckpt.npz", params)      # rank 0 writes, the others wait
"""
from __future__ import annotations

import functools
import hashlib

import numpy as np

from .. import checkpoint
from ..errors import HlojitError, ShapeError
from ..frontend import pytree
from .collectives import all_reduce, broadcast, leaf_array
from .world import barrier, current, guarded


class DivergenceError(HlojitError, RuntimeError):
    """Ranks that should hold identical values (replicated parameters) do not."""


def shard_bounds(n: int) -> tuple[int, int]:
    """This rank's rows [start, stop) of n, split as numpy.array_split does: contiguous, the first n % size
    ranks one row longer."""
    world = current()
    base, extra = divmod(n, world.size)
    start = world.rank * base + min(world.rank, extra)
    return start, start + base + (world.rank < extra)


def shard(tree):
    """This rank's equal share of each leaf's leading axis (numpy views, no copies). A global batch that does
    not split evenly is an error: unequal shards would weigh their examples unequally in the mean."""
    world = current()
    paths: list = []
    leaves, treedef = pytree.flatten(tree, paths=paths)
    out = []
    for path, leaf in zip(paths, leaves):
        array = leaf_array("shard", path, leaf)
        if array.ndim == 0 or array.shape[0] % world.size:
            raise ShapeError(f"hj.distributed.shard: leaf {path or '(root)'} has shape {list(array.shape)}; its "
                             f"leading axis must split evenly over {world.size} ranks (make the global batch a "
                             f"multiple of {world.size})")
        rows = array.shape[0] // world.size
        out.append(array[world.rank * rows:(world.rank + 1) * rows])
    return pytree.unflatten(treedef, out)


def data_parallel(fn, batch_argnums=(1,)):
    """`fn` run on this rank's shard of the arguments at `batch_argnums` (see `shard`), its whole result
    (e.g. `(loss, grads)` from `hj.value_and_grad`) averaged over the ranks by one all_reduce: one message
    per dtype per step. The result is the global batch's mean loss and gradient when `fn` returns means over
    its batch. Every result leaf must be floating point. Randomness inside `fn` (dropout) should fold
    `rank()` into its key, or every shard draws the same masks."""
    batch_argnums = (batch_argnums,) if isinstance(batch_argnums, int) else tuple(batch_argnums)

    @functools.wraps(fn)
    def step(*args):
        args = list(args)
        for i in batch_argnums:
            args[i] = shard(args[i])
        return all_reduce(fn(*args), op="mean")
    return step


def check_identical(tree, what: str = "the tree"):
    """Raise DivergenceError naming the first leaf and the ranks that hold different bits (one Allgather of
    a 16-byte hash per leaf): the cheap proof that replicated parameters are still replicated."""
    world = current()
    paths: list = []
    leaves, _ = pytree.flatten(tree, paths=paths)
    arrays = [np.ascontiguousarray(leaf_array("check_identical", path, leaf)) for path, leaf in zip(paths, leaves)]
    digests = np.array([np.frombuffer(hashlib.blake2b(a.view(np.uint8).reshape(-1), digest_size=16,
                                                      person=a.dtype.str.encode()).digest(), np.uint8)
                        for a in arrays], np.uint8).reshape(len(arrays), 16)
    if world.comm is None:
        return
    every = np.empty((world.size, *digests.shape), np.uint8)
    with guarded(world, "check_identical"):
        world.comm.Allgather(digests, every)
    differ = (every != every[0]).any(axis=2)          # [ranks, leaves]
    if differ.any():
        rank, leaf = (int(v[0]) for v in np.nonzero(differ))
        raise DivergenceError(f"hj.distributed.check_identical: {what} differs between ranks: leaf "
                              f"{paths[leaf] or '(root)'} on rank {rank} is not rank 0's ({differ.any(0).sum()} of "
                              f"{len(arrays)} leaves differ somewhere)")


def save_checkpoint(path, tree):
    """Rank 0 writes `tree` (hlojit.checkpoint: atomic, so a crash mid-write leaves the previous file whole);
    the others wait at a barrier, so after this returns the file is there for every rank."""
    if current().rank == 0:
        checkpoint.save(path, tree)
    barrier()


def load_checkpoint(path, like):
    """Rank 0 reads the checkpoint (checked against `like`) and broadcasts it: the other ranks need not see
    the file (no shared file system needed) and all start from the same bits."""
    tree = checkpoint.load(path, like) if current().rank == 0 else like
    return broadcast(tree, root=0)
