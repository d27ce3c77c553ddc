"""Collectives over pytrees of arrays, between compiled calls: all_reduce, broadcast, all_gather, gather.

Each call sends one message per dtype: the tree's leaves of one dtype are copied into one contiguous
bucket (a lone contiguous leaf is sent as it is, no copy), and results are views of the received buffer,
wrapped as host `hj.Array`s (no copy; a compiled call uploads them as it uploads numpy arguments).

Before the data, the ranks exchange a 16-byte hash of what each passes (collective, op, tree structure,
every leaf's path, dtype and shape): ranks that disagree get a SignatureError naming both descriptions,
where MPI would deadlock, or reduce mismatched buffers, or overrun one.

Same bits on every rank: integer sums and max/min are exact, so any reduction order gives the same result.
Floating sums go through MPI_Allreduce, whose algorithms in mpich (recursive doubling, reduce-scatter +
allgather, shared-memory trees) compute each element once, or by commutative pairs a+b = b+a, so every rank
holds the same bits: tests/test_distributed.py checks it on 2 and 4 ranks with mpich. An MPI library that
broke that would be caught by `check_identical` (data_parallel runs it on the parameters on request).
"""
from __future__ import annotations

import hashlib
import sys

import numpy as np

from ..backends import Array
from ..errors import DTypeError, ShapeError, SignatureError, TracingError
from ..frontend import pytree
from ..frontend.tensor import Tensor
from ..frontend.trace import user_site
from .world import World, current, guarded

OPS = ("sum", "mean", "max", "min")
_SHORT = 600    # characters of one rank's description in a mismatch message


def all_reduce(tree, op: str = "sum"):
    """The elementwise sum (mean, max, min) over all ranks of each leaf, on every rank, as hj.Arrays."""
    if op not in OPS:
        raise ValueError(f"hj.distributed.all_reduce: op must be one of {', '.join(map(repr, OPS))}, not {op!r}")
    world, paths, arrays, treedef = _prepare("all_reduce", tree, op)
    for path, array in zip(paths, arrays):
        _check_reducible(op, path, array.dtype)
    results: list = [None] * len(arrays)
    for dtype, members in _buckets(arrays).items():
        bucket, owned = _pack(arrays, members, _reduced_as(dtype))
        if world.comm is not None:
            out = bucket if owned else _POOL.take(bucket.dtype, bucket.size)
            with guarded(world, "all_reduce"):
                world.comm.Allreduce(world.MPI.IN_PLACE if owned else bucket, out, op=_mpi_op(world, op))
            bucket = out
        elif not owned:
            bucket = bucket.copy()       # a world of one: the result must not alias the caller's array
        if op == "mean" and world.size > 1:
            np.divide(bucket, world.size, out=bucket)
        for i, leaf in zip(members, _unpack(bucket, [arrays[i] for i in members])):
            results[i] = leaf.astype(dtype) if leaf.dtype != dtype else leaf
    return _result(treedef, results)


def broadcast(tree, root: int = 0):
    """Rank `root`'s tree on every rank. Every rank passes a tree of the same structure, shapes and dtypes
    (the others' values are ignored), e.g. its own freshly initialised parameters."""
    world, paths, arrays, treedef = _prepare("broadcast", tree, f"root={root}")
    _check_root("broadcast", world, root)
    results: list = [None] * len(arrays)
    for dtype, members in _buckets(arrays).items():
        bucket, owned = _pack(arrays, members, dtype)
        if not owned:                    # received into on the other ranks; never the caller's memory
            copy = _POOL.take(dtype, bucket.size)
            copy[:] = bucket
            bucket = copy
        if world.comm is not None:
            with guarded(world, "broadcast"):
                world.comm.Bcast(_bytes(bucket), root=root)
        for i, leaf in zip(members, _unpack(bucket, [arrays[i] for i in members])):
            results[i] = leaf
    return _result(treedef, results)


def all_gather(tree):
    """Every rank's tree stacked: each leaf gets a new leading axis of size size(), indexed by rank."""
    world, paths, arrays, treedef = _prepare("all_gather", tree, "")
    results: list = [None] * len(arrays)
    for dtype, members in _buckets(arrays).items():
        bucket, _ = _pack(arrays, members, dtype)
        received = _POOL.take(dtype, world.size * bucket.size).reshape(world.size, bucket.size)
        if world.comm is not None:
            with guarded(world, "all_gather"):
                world.comm.Allgather(_bytes(bucket), _bytes(received))
        else:
            received[0] = bucket
        offset = 0
        for i in members:
            shape, n = arrays[i].shape, arrays[i].size
            part = received[:, offset:offset + n].reshape(world.size, *shape)
            results[i] = part if len(members) == 1 else np.ascontiguousarray(part)
            offset += n
    return _result(treedef, results)


def gather(tree, root: int = 0):
    """Every rank's leaves concatenated along their leading axis, in rank order, on rank `root` (None on the
    others). Leading lengths may differ between ranks (a dataset split unevenly); the rest must agree."""
    world, paths, arrays, treedef = _prepare("gather", tree, f"root={root}", leading_free=True)
    _check_root("gather", world, root)
    for path, array in zip(paths, arrays):
        if array.ndim == 0:
            raise ShapeError(f"hj.distributed.gather: leaf {path or '(root)'} is a scalar; gather concatenates "
                             "along a leading axis (reshape it to [1])")
    lengths = _leading_lengths(world, arrays)                   # [ranks, leaves]
    results: list = [None] * len(arrays)
    for dtype, members in _buckets(arrays).items():
        bucket, _ = _pack(arrays, members, dtype)
        rows = [int(np.prod(arrays[i].shape[1:], dtype=np.int64)) for i in members]
        counts = [sum(int(lengths[r, i]) * row for i, row in zip(members, rows)) for r in range(world.size)]
        received = np.empty(sum(counts), dtype) if world.rank == root else None
        if world.comm is not None:
            itemsize = np.dtype(dtype).itemsize
            target = None if received is None else [_bytes(received), [c * itemsize for c in counts]]
            with guarded(world, "gather"):
                world.comm.Gatherv(_bytes(bucket), target, root=root)
        else:
            received[:] = bucket
        if received is not None:
            for i, leaf in zip(members, _split_by_rank(received, counts, [arrays[i] for i in members],
                                                       lengths[:, members])):
                results[i] = leaf
    return _result(treedef, results) if world.rank == root else None


# --- the steps every collective shares -------------------------------------------------------------------

def _prepare(what: str, tree, detail: str, leading_free: bool = False):
    """The world, each leaf's path, the leaves as numpy arrays (views, no copies), the treedef; after the
    ranks have agreed they pass the same thing."""
    world = current()
    paths: list = []
    leaves, treedef = pytree.flatten(tree, paths=paths)
    arrays = [leaf_array(what, path, leaf) for path, leaf in zip(paths, leaves)]
    if world.comm is not None:
        _agree(world, what, detail, treedef, paths, arrays, leading_free)
    return world, paths, arrays, treedef


def leaf_array(what: str, path: str, leaf) -> np.ndarray:
    """A leaf as a numpy array (a view of an hj.Array's buffer, no copy), or the error naming it."""
    if isinstance(leaf, Tensor):
        raise TracingError(f"hj.distributed.{what}: leaf {path or '(root)'} is a traced Tensor "
                           f"{leaf.dtype}{list(leaf.shape)}; collectives run between compiled calls: return it "
                           "from the jitted function and pass the result")
    if isinstance(leaf, Array):
        return leaf.numpy()
    if isinstance(leaf, (np.ndarray, np.generic, bool, int, float)):
        array = np.asarray(leaf)
        if array.dtype.kind not in "biufc" and array.dtype.name != "bfloat16":
            raise DTypeError(f"hj.distributed.{what}: leaf {path or '(root)'} is {array.dtype}; collectives move "
                             "numbers (bool, int, uint, float, complex, bfloat16), not their references or text")
        return array if array.dtype.isnative else array.astype(array.dtype.newbyteorder("="))
    raise TypeError(f"hj.distributed.{what}: leaf {path or '(root)'} is a {type(leaf).__name__}; collectives "
                    "take hj.Arrays, numpy arrays and numbers")


def _describe(what: str, detail: str, paths, arrays, leading_free: bool) -> str:
    def shape(a):
        dims = [str(d) for d in a.shape]
        return dims[:1] and ["*"] + dims[1:] if leading_free else dims
    leaves = ", ".join(f"{p or '(root)'}: {a.dtype}[{', '.join(shape(a))}]" for p, a in zip(paths, arrays))
    return f"{what}({detail}) of {len(arrays)} leaves {{{leaves}}}"


def _agree(world: World, what: str, detail: str, treedef, paths, arrays, leading_free: bool):
    """One 16-byte Allgather; on a mismatch the full descriptions, and a SignatureError on every rank."""
    description = _describe(what, detail, paths, arrays, leading_free)
    structure = repr(treedef)
    digest = np.frombuffer(hashlib.blake2b(f"{description}|{structure}".encode(), digest_size=16).digest(), np.uint8)
    every = np.empty((world.size, digest.size), np.uint8)
    with guarded(world, what):
        world.comm.Allgather(digest, every)
    if (every == every[0]).all():
        return
    with guarded(world, what):
        described = world.comm.allgather((description, structure, user_site()))
    other = next(r for r in range(world.size) if (every[r] != every[0]).any())
    same_leaves = described[0][0] == described[other][0]
    mine, theirs = ([f"{_clip(d[0])}{f' in the structure {_clip(d[1])}' if same_leaves else ''} (at {d[2]})"
                     for d in (described[0], described[other])])
    raise SignatureError(f"hj.distributed.{what}: the ranks pass different trees to the same collective: rank 0 "
                         f"passes {mine}; rank {other} passes {theirs}. Every rank must make the same collective "
                         "calls in the same order, with the same tree structure, dtypes and shapes")


def _clip(text: str) -> str:
    return text if len(text) <= _SHORT else text[:_SHORT] + " ..."


def _leading_lengths(world: World, arrays) -> np.ndarray:
    mine = np.array([a.shape[0] for a in arrays], np.int64)
    every = np.empty((world.size, mine.size), np.int64)
    if world.comm is None:
        every[0] = mine
    else:
        with guarded(world, "gather"):
            world.comm.Allgather(mine, every)
    return every


def _check_root(what: str, world: World, root: int):
    if not isinstance(root, (int, np.integer)) or not 0 <= root < world.size:
        raise ValueError(f"hj.distributed.{what}: root must be a rank, 0 .. {world.size - 1}, not {root!r}")


def _check_reducible(op: str, path: str, dtype: np.dtype):
    where = f"hj.distributed.all_reduce(op={op!r}): leaf {path or '(root)'} is {dtype}"
    if dtype.kind == "b" and op in ("sum", "mean"):
        raise DTypeError(f"{where}; bools reduce with op='max' (any) or 'min' (all)")
    if op == "mean" and dtype.kind in "iu":
        raise DTypeError(f"{where}; the mean of integers is not an integer: use op='sum' and divide, or cast")
    if dtype.kind not in "biuf" and dtype.name != "bfloat16":
        raise DTypeError(f"{where}, not a dtype hlojit computes with")


def _reduced_as(dtype: np.dtype) -> np.dtype:
    """MPI has no 16-bit float reductions: float16 and bfloat16 buckets are reduced in float32; bools as
    uint8 (max is any, min is all)."""
    if dtype.kind == "b":
        return np.dtype(np.uint8)
    if dtype.itemsize == 2 and (dtype.kind == "f" or dtype.name == "bfloat16"):
        return np.dtype(np.float32)
    return dtype


def _mpi_op(world: World, op: str):
    return {"sum": world.MPI.SUM, "mean": world.MPI.SUM, "max": world.MPI.MAX, "min": world.MPI.MIN}[op]


def _buckets(arrays) -> dict:
    """dtype -> indices of the leaves of that dtype, in flatten order (the same on every rank)."""
    buckets: dict = {}
    for i, array in enumerate(arrays):
        buckets.setdefault(array.dtype, []).append(i)
    return buckets


def _pack(arrays, members, as_dtype: np.dtype) -> tuple[np.ndarray, bool]:
    """One flat buffer holding the members' values; `owned` is False when it is a lone leaf's own memory."""
    if len(members) == 1:
        array = arrays[members[0]]
        if array.dtype == as_dtype and array.flags.c_contiguous:
            return array.reshape(-1), False
    bucket = _POOL.take(as_dtype, sum(arrays[i].size for i in members))
    offset = 0
    for i in members:
        n = arrays[i].size
        np.copyto(bucket[offset:offset + n].reshape(arrays[i].shape), arrays[i], casting="unsafe")
        offset += n
    return bucket, True


class _BufferPool:
    """Buckets and receive buffers, reused by later calls once no result looks at them any more (a view's
    base is the buffer, so its reference count says so). A fresh buffer costs its page faults on first touch:
    a 200 KB Allreduce into a new buffer took 1.2-1.4 ms here against 0.36 ms into a reused one."""
    PER_SIZE, SIZES = 2, 16

    def __init__(self):
        self._buffers: dict = {}          # (dtype, n) -> [buffers], least recently used size first

    def take(self, dtype, n: int) -> np.ndarray:
        key = (np.dtype(dtype), int(n))
        buffers = self._buffers.pop(key, [])
        self._buffers[key] = buffers      # now the most recently used size
        for buffer in buffers:
            if sys.getrefcount(buffer) == 3:   # the list, `buffer`, getrefcount's argument: nobody else
                return buffer
        buffer = np.empty(key[1], key[0])
        buffers.append(buffer)
        del buffers[:-self.PER_SIZE]
        while len(self._buffers) > self.SIZES:
            del self._buffers[next(iter(self._buffers))]
        return buffer


_POOL = _BufferPool()


def _unpack(bucket: np.ndarray, like) -> list:
    out, offset = [], 0
    for array in like:
        out.append(bucket[offset:offset + array.size].reshape(array.shape))
        offset += array.size
    return out


def _split_by_rank(received: np.ndarray, counts, like, lengths) -> list:
    """Gatherv's buffer (rank 0's bucket, rank 1's, ...) back into one array per leaf, ranks concatenated."""
    pieces: list = [[] for _ in like]
    start = 0
    for r, count in enumerate(counts):
        offset = start
        for j, array in enumerate(like):
            shape = (int(lengths[r, j]), *array.shape[1:])
            n = int(np.prod(shape, dtype=np.int64))
            pieces[j].append(received[offset:offset + n].reshape(shape))
            offset += n
        start += count
    return [np.concatenate(p) if len(p) > 1 else p[0] for p in pieces]


def _bytes(array: np.ndarray):
    """The buffer as MPI bytes: copies (broadcast, gathers) need no MPI type, so every dtype travels."""
    return array.reshape(-1).view(np.uint8)


def _result(treedef, arrays):
    leaves = []
    for array in arrays:
        array.flags.writeable = False   # results are read-only, as hj.Array.numpy() always is
        leaves.append(Array.from_numpy(array))
    return pytree.unflatten(treedef, leaves)
