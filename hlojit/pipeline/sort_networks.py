"""Target rewrite of long sorts for IREE 3.13's llvm-cpu and vmvx, whose `stablehlo.sort` takes time quadratic in
the length of the sort dimension: 1,024 f32 in 5.4 ms, 16,384 in 1.35 s, 32,768 in 5.3 s (numpy: 0.66 ms), so a
sort, argsort, median or unique of a million elements ran for an hour and a half. StableHLO -> StableHLO, listed
in quirks.py.

A sort whose elements times its dimension's length (IREE's work: rows x n**2) reach NETWORK_FROM becomes a
bitonic sorting network in a
`stablehlo.while`: log2(p) (log2(p) + 1) / 2 compare-exchange rounds over the dimension padded to p, a power of
two, each one pass over the operands (210 rounds for a million elements). In round (k, j) element i meets
element i ^ 2**j (read as two rotations of the operand by 2**j, which are contiguous copies, and a select by bit
j of i), and keeps the smaller of the pair where bit j of i equals bit k of i (the block of 2**k elements sorts
ascending or descending), else the larger. "Smaller" is the sort's own comparator, applied to both orders of
the pair by two `stablehlo.map`s of its body; padding elements compare after every element. A network is not
stable: stable_sort_by_position (sort_rewrites.py) runs first and makes the comparator a total order, so
equal keys keep their order. A comparator whose body holds an op with a region, or reads a value from outside
its body, is left to IREE, and so are complex sorts (complex_pairs.py splits them later).

cuda keeps IREE's sort (it fails on long sorts of two operands before any speed matters: sort_rewrites.py).
"""
from __future__ import annotations

import numpy as np
from iree.compiler import ir

from ..dialects import regions, stablehlo as hlo
from ..dialects.types import dtype_of, shape_of
from .legalize import walk
from .sort_rewrites import rebuilt_comparator
from .values import V, where

# elements x sort length from which the network replaces IREE's sort. Measured (f32, local-sync, 12-05, AVX-512
# EPYC), IREE's sort against the network: one row of 256 0.36 against 0.47 ms, of 512 1.49 against 0.60, of 1,024
# 5.3 against 0.74; 256 rows of 64 4.7 against 0.68, of 1,024 1,327 against 28.
NETWORK_FROM = 2**17


def _i32(value: int) -> ir.Value:
    return hlo.constant(np.array(value, np.int32))


def _rotated(x: ir.Value, dimension: int, by: ir.Value) -> ir.Value:
    """x rotated along `dimension` so that element i is x's element (i + by) mod size (0 <= by <= size)."""
    shape = shape_of(x.type)
    doubled = hlo.concatenate([x, x], dimension)
    starts = [by if d == dimension else _i32(0) for d in range(len(shape))]
    return hlo.dynamic_slice(doubled, starts, shape)


def _precedes(comparator: ir.Block, first: list, second: list, first_padding: V, second_padding: V) -> V:
    """Elementwise: whether `first` comes before `second` in the sort's order, padding last."""
    pairs = [v for a, b in zip(first, second) for v in (a, b)]
    by_comparator = V(regions.map(pairs, lambda *scalars: rebuilt_comparator(comparator, list(scalars))))
    return ~first_padding & (second_padding | by_comparator)


def _network(op) -> None:
    dimension = ir.IntegerAttr(op.attributes["dimension"]).value
    shape = list(shape_of(op.operands[0].type))
    size = shape[dimension]
    padded = 1 << (size - 1).bit_length()
    rounds_log = padded.bit_length() - 1
    comparator = op.regions[0].blocks[0]
    with ir.InsertionPoint(op), op.location:
        high = [padded - size if d == dimension else 0 for d in range(len(shape))]
        zeros = [0] * len(shape)
        operands = [hlo.pad(v, hlo.constant(np.zeros((), dtype_of(v.type))), zeros, high) for v in op.operands]
        padded_shape = shape_of(operands[0].type)
        padding = hlo.pad(hlo.broadcast_in_dim(hlo.constant(np.array(False)), shape, []),
                          hlo.constant(np.array(True)), zeros, high)

        def cond(*carried):
            return [hlo.compare(carried[-2], _i32(rounds_log), "LE")]

        def body(*carried):
            *values, is_padding, k, j = carried
            index = V(hlo.iota(padded_shape, dimension, np.int32))
            distance = V(_i32(1)) << V(j)
            bit_j = (index & V(hlo.broadcast_in_dim(distance.value, padded_shape, []))) == 0
            block = V(hlo.broadcast_in_dim((V(_i32(1)) << V(k)).value, padded_shape, []))
            bit_k = (index & block) == 0
            up_by, down_by = distance.value, (V(_i32(padded)) - distance).value
            partners = [where(bit_j, V(_rotated(v, dimension, up_by)), V(_rotated(v, dimension, down_by))).value
                        for v in [*values, is_padding]]
            partner_padding = V(partners[-1])
            own_padding = V(is_padding)
            partner_first = _precedes(comparator, partners[:-1], values, partner_padding, own_padding)
            own_first = _precedes(comparator, values, partners[:-1], own_padding, partner_padding)
            keeps_smaller = bit_j == bit_k
            take = where(keeps_smaller, partner_first, own_first)
            new = [where(take, V(p), V(v)).value for p, v in zip(partners, [*values, is_padding])]
            last = V(j) == 0
            next_k = where(last, V(k) + 1, V(k)).value
            next_j = where(last, V(k), V(j) - 1).value
            return [*new, next_k, next_j]

        results = regions.while_([*operands, padding, _i32(1), _i32(0)], cond, body)
        limit = list(shape)
        for result, value in zip(op.results, results):
            result.replace_all_uses_with(hlo.slice(value, [0] * len(shape), limit))
    op.erase()


def rebuildable_block(block: ir.Block) -> bool:
    """Whether a region's ops can be built again as a map's body (a sort's comparator, select_and_scatter's
    regions): none with a region of its own, none that reads a value from outside the block (a map's body sees
    nothing else)."""
    own = set(block.arguments)
    for inner in block.operations:
        if len(inner.operation.regions) or any(v not in own for v in inner.operation.operands):
            return False
        own.update(inner.operation.results)
    return True


def sorts_by_network(module: ir.Module) -> int:
    def long(op) -> bool:
        shape = shape_of(op.operands[0].type)
        length = shape[ir.IntegerAttr(op.attributes["dimension"]).value]
        return length > 1 and int(np.prod(shape, dtype=np.int64)) * length >= NETWORK_FROM and not any(
            np.dtype(dtype_of(v.type)).kind == "c" for v in op.operands) \
            and rebuildable_block(op.regions[0].blocks[0])
    sorts = [op for op in walk(module.operation) if op.name == "stablehlo.sort" and long(op)]
    for op in sorts:
        _network(op)
    return len(sorts)
