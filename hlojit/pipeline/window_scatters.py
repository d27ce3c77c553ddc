"""Target rewrite of `stablehlo.select_and_scatter`, which IREE 3.13 marks illegal on every target ("failed to
legalize operation 'stablehlo.select_and_scatter' that was explicitly marked illegal"): the gradient of a max or
min pool in JAX's exports (`jax.grad` of `lax.reduce_window(x, -inf, lax.max, ...)`), so a JAX-exported CNN
training step did not compile through `hj.from_mlir`; hlojit's own max and min pools differentiate into it too
(autodiff's reduce_window rule). StableHLO -> StableHLO, listed in quirks.py for every target (on llvm-cpu after
the layout pass, which moves the op channels last with the network).

The spec's meaning, as the reference interpreter runs it: in each window of the padded operand the element the
`select` region prefers (the first in the window's row-major order, unless a later one is preferred: select(best,
candidate) false), never a padding element; into it the window's source element, combined by the `scatter`
region starting from the init value. Built of ops IREE lowers, without loops: the window's offsets in order, each
a strided slice of the padded operand (one element of every window), the best so far and its offset kept per
window (the select region as a `stablehlo.map`); then, per phase of the strides (the positions one offset class
lands on), the windows that chose each offset give their source elements back where the scatter region combines
them, and the phases are interleaved.
A region holding an op with a region of its own, or reading a value from outside, is left to IREE (it refuses).
"""
from __future__ import annotations

import itertools

import numpy as np
from iree.compiler import ir

from ..dialects import regions, stablehlo as hlo
from ..dialects.types import attr_ints, dtype_of, shape_of
from .layout import padding_pairs
from .legalize import walk
from .sort_networks import rebuildable_block
from .sort_rewrites import rebuilt_comparator
from .values import V, where


def _applied(block: ir.Block, operands: list[V]) -> V:
    """The region `block` applied elementwise to `operands` (one 0-d argument each)."""
    return V(regions.map([v.value for v in operands], lambda *scalars: rebuilt_comparator(block, list(scalars))))


def _splat(value: np.ndarray, shape) -> V:
    return V(hlo.broadcast_in_dim(hlo.constant(value), list(shape), []))


def _rewrite(op) -> None:
    operand, source, init = op.operands
    shape, windows = list(shape_of(operand.type)), list(shape_of(source.type))
    rank = len(shape)
    window = attr_ints(op, "window_dimensions")
    strides = attr_ints(op, "window_strides") if "window_strides" in op.attributes else [1] * rank
    pads = padding_pairs(op) if "padding" in op.attributes else [(0, 0)] * rank
    select, scatter = op.regions[0].blocks[0], op.regions[1].blocks[0]
    padded = [n + lo + hi for n, (lo, hi) in zip(shape, pads)]
    lows, highs = [lo for lo, _ in pads], [hi for _, hi in pads]
    any_padding = any(lo or hi for lo, hi in pads)
    with ir.InsertionPoint(op), op.location:
        x = operand
        if any_padding:
            x = hlo.pad(operand, hlo.constant(np.zeros((), dtype_of(operand.type))), lows, highs)
        offsets = list(itertools.product(*[range(w) for w in window]))
        best = chosen = have = None      # have: whether the window has met an element of the operand (None: all)
        for k, offset in enumerate(offsets):
            limit = [o + (g - 1) * s + 1 for o, g, s in zip(offset, windows, strides)]
            candidate = V(hlo.slice(x, list(offset), limit, strides))
            valid = _inside(offset, windows, strides, pads, shape)
            if best is None:
                best, chosen, have = candidate, _splat(np.int32(0), windows), valid
                continue
            take = ~_applied(select, [best, candidate])
            if have is not None:
                take = take | ~have
            if valid is not None:
                take = take & valid
            have = None if have is None or valid is None else have | valid
            best = where(take, candidate, best)
            chosen = where(take, _splat(np.int32(k), windows), chosen)
        value = _scattered(scatter, init, source, chosen, have, offsets, padded, strides)
        if list(shape_of(value.type)) != shape:      # the padding, and what the phases' interleave adds
            value = hlo.slice(value, lows, [p - hi for p, hi in zip(padded, highs)])
    op.result.replace_all_uses_with(value)
    op.erase()


def _inside(offset, windows, strides, pads, shape) -> V | None:
    """Which windows' element at `offset` lies in the operand, not its padding (None: every window's does):
    bounds on iotas, which IREE computes inside the dispatch that reads the elements (a padded mask of the
    operand's size, read back by strided slices, ran the 3x3/2 max pool's gradient 2.4x slower)."""
    valid = None
    for d, (o, g, s, (lo, _), n) in enumerate(zip(offset, windows, strides, pads, shape)):
        first, last = o - lo, (g - 1) * s + o - lo          # the operand positions of the first and last window
        if first >= 0 and last < n:
            continue
        position = V(hlo.iota(windows, d, np.int32)) * s + (o - lo)
        bound = (position >= 0) & (position < n)
        valid = bound if valid is None else valid & bound
    return valid


def _scattered(scatter: ir.Block, init, source, chosen: V, have, offsets, padded, strides) -> ir.Value:
    """The padded result (or one longer by up to a stride less one in each dimension): by phase, the positions p
    with p = r (mod stride) in each dimension, where only the offsets o = r (mod stride) land, the window i's at
    phase index i + (o - r) / stride; each phase a plain pad of the windows' source elements (one pass over the
    windows, not over the operand, for each offset), then the phases interleaved."""
    windows = list(shape_of(source.type))
    rank = len(windows)
    lengths = [-(-p // s) for p, s in zip(padded, strides)]          # every phase padded to phase 0's length
    no_source = hlo.constant(np.zeros((), dtype_of(source.type)))
    phases = {}
    for phase in itertools.product(*[range(s) for s in strides]):
        result = V(hlo.broadcast_in_dim(init, lengths, []))
        for k, offset in enumerate(offsets):
            if any(o % s != r for o, s, r in zip(offset, strides, phase)):
                continue
            shifts = [(o - r) // s for o, s, r in zip(offset, strides, phase)]
            spread = dict(low=shifts, high=[n - g - t for n, g, t in zip(lengths, windows, shifts)])
            mine = chosen == k
            if have is not None:
                mine = mine & have
            lands = V(hlo.pad(mine.value, hlo.constant(np.array(False)), **spread))
            given = V(hlo.pad(source, no_source, **spread))
            result = where(lands, _applied(scatter, [result, given]), result)
        phases[phase] = result.value
    for d in range(rank):      # interleave dimension d's phases: [.., n, ..] x stride -> [.., n * stride, ..]
        if strides[d] == 1:
            continue
        merged = {}
        for phase, value in phases.items():
            merged.setdefault(phase[:d] + phase[d + 1:], []).append(value)
        phases = {}
        for rest, values in merged.items():
            shape = list(shape_of(values[0].type))
            unit = shape[:d + 1] + [1] + shape[d + 1:]
            stacked = hlo.concatenate([hlo.reshape(v, unit) for v in values], d + 1)
            phases[rest[:d] + (0,) + rest[d:]] = hlo.reshape(stacked, shape[:d] + [shape[d] * strides[d]]
                                                              + shape[d + 1:])
    (value,) = phases.values()
    return value


def select_and_scatters_by_offset(module: ir.Module) -> int:
    ops = [op for op in walk(module.operation) if op.name == "stablehlo.select_and_scatter"
           and all(rebuildable_block(region.blocks[0]) for region in op.regions)]
    for op in ops:
        _rewrite(op)
    return len(ops)


ALL_TARGETS = [select_and_scatters_by_offset]
