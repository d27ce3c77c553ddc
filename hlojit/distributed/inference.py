"""Sharded evaluation and batch inference: a dataset split across ranks, the results gathered on one.

    predictions = hj.distributed.map_sharded(predict, x_test, batch_size=256)   # on rank 0; None elsewhere
"""
from __future__ import annotations

import numpy as np

from ..errors import ShapeError
from ..frontend import pytree
from .collectives import gather, leaf_array
from .training import shard_bounds


def map_sharded(fn, data, batch_size: int = 256, root: int = 0):
    """`fn(batch)` over every row of `data` (a tree of arrays with one leading length n), the rows split
    across ranks by `shard_bounds`; rank `root` gets the results (a tree of arrays of n rows, in the order
    of `data`), the others None.

    Each rank calls `fn` on batches of exactly `batch_size` rows, the last padded with copies of its last
    row, so `fn` compiles once; padded rows are dropped from the results. `fn` must return a tree whose
    leaves all have `batch_size` leading rows (one result per input row)."""
    if not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"hj.distributed.map_sharded: batch_size must be a positive int, not {batch_size!r}")
    paths: list = []
    leaves, treedef = pytree.flatten(data, paths=paths)
    arrays = [leaf_array("map_sharded", path, leaf) for path, leaf in zip(paths, leaves)]
    n = _common_length(paths, arrays)
    start, stop = shard_bounds(n)
    results = []
    # A rank with no rows still runs one batch (of row 0, all dropped), so it knows the results' shapes.
    for begin in range(start, max(stop, start + 1), batch_size):
        rows = min(batch_size, stop - begin)
        picked = np.arange(begin, begin + batch_size).clip(max=stop - 1) if rows > 0 else \
            np.zeros(batch_size, np.int64)
        out_leaves, out_def = pytree.flatten(fn(pytree.unflatten(treedef, [a[picked] for a in arrays])))
        results.append([_rows(fn, batch_size, np.asarray(leaf), rows) for leaf in out_leaves])
    local = [np.concatenate(parts) if len(parts) > 1 else parts[0] for parts in zip(*results)]
    return gather(pytree.unflatten(out_def, local), root=root)


def _common_length(paths, arrays) -> int:
    lengths = {a.shape[0] if a.ndim else None for a in arrays}
    if len(lengths) != 1 or None in lengths:
        described = ", ".join(f"{p or '(root)'}: {list(a.shape)}" for p, a in zip(paths, arrays))
        raise ShapeError(f"hj.distributed.map_sharded: every leaf of data needs the same leading length (its "
                         f"rows); got {described}")
    n = lengths.pop()
    if n == 0:
        raise ShapeError("hj.distributed.map_sharded: data has no rows")
    return n


def _rows(fn, batch_size: int, leaf: np.ndarray, rows: int) -> np.ndarray:
    if leaf.ndim == 0 or leaf.shape[0] != batch_size:
        raise ShapeError(f"hj.distributed.map_sharded: {getattr(fn, '__name__', 'fn')} returned a leaf of shape "
                         f"{list(leaf.shape)} for a batch of {batch_size} rows; every result leaf needs one row per "
                         "input row")
    return leaf[:rows]
