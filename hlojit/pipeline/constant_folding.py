"""Fold constant-only expressions into `stablehlo.constant`s before IREE sees them.

IREE 3.13's const-eval (`--iree-opt-const-eval`, on by default) JIT-compiles every constant-only expression of
a module for the host and runs it: seconds of compiling each (a complex128 tan of a 2-element constant: 35.8 s of
compiler CPU on iree:cpu, 13.8 s with const-eval off, 0.5 s folded). hlojit's StableHLO interpreter
(hlojit/interpreter/: the reference backend's engine, the oracle of StableHLO's meaning) evaluates such an
expression in microseconds, exactly in its dtype.

An op is folded when every operand (and every value its regions capture) is a `stablehlo.constant` or an
op folded before it, it is free of side effects and nondeterminism, and every value it reads or makes is
small (MAX_ELEMENTS): a splat broadcast to a big shape is never materialised, nor read, and stays for IREE.
Block arguments (loop-carried values, a reduction's accumulators) are never constants, so a loop body keeps
every op that depends on them; `stablehlo.while` itself is never folded (its trip count is unbounded). The
values something unfolded still uses become constants, except a splat that a broadcast or reshape only spreads
(`x + 1`'s 1, relu's 0) and an iota: IREE makes those itself, for free, inside the dispatch that reads them, so
they stay as they were and are not counted.
"""
from __future__ import annotations

import importlib
import math
import pkgutil

import numpy as np
from iree.compiler import ir

from .. import interpreter
from ..interpreter import OPS, free_values
from ..dialects import stablehlo as hlo
from ..dialects.types import all_alike, constant_value, dtype_of, shape_of
from ..errors import BackendError

# The modules that compute a fold's values (the interpreter's op tables): part of every compile cache key.
EVALUATOR_MODULES = tuple(importlib.import_module(f"{interpreter.__name__}.{info.name}")
                          for info in pkgutil.iter_modules(interpreter.__path__))

MAX_ELEMENTS = 65536        # of every value a fold reads or makes: what numpy evaluates in about a millisecond
MAX_REGION_ELEMENTS = 4096  # of ops with regions (map, sort, scatter ...): the reference runs those per element
MAX_WORK = 1 << 26          # result elements times the biggest input's, of contractions, windows and FFTs
# Side effects, communication, nondeterminism, calls into other functions, compiler hints, unbounded loops
NEVER = frozenset(f"stablehlo.{name}" for name in (
    "after_all", "all_gather", "all_reduce", "all_to_all", "collective_broadcast", "collective_permute",
    "composite", "create_token", "custom_call", "infeed", "outfeed", "optimization_barrier", "partition_id",
    "recv", "reduce_scatter", "replica_id", "rng", "rng_bit_generator", "send", "while", "tuple",
    "get_tuple_element", "constant"))
# Ops that only spread their operand's elements: left in place where their result is a splat that stays read
SPREADS = frozenset(("stablehlo.broadcast_in_dim", "stablehlo.broadcast", "stablehlo.reshape"))
# Their work grows with the product of their sizes, not the sum
CONTRACTIONS = frozenset(("stablehlo.dot", "stablehlo.dot_general", "stablehlo.convolution", "stablehlo.dynamic_conv",
                          "stablehlo.einsum", "stablehlo.unary_einsum", "stablehlo.triangular_solve",
                          "stablehlo.cholesky", "stablehlo.reduce_window", "stablehlo.select_and_scatter",
                          "stablehlo.fft", "chlo.ragged_dot", "chlo.scan", "chlo.top_k"))


def _elements(value: ir.Value, limit: int) -> int | None:
    """The element count of a statically shaped tensor of a numpy dtype of at most `limit` elements, else None."""
    kind = value.type.maybe_downcast()
    if not isinstance(kind, ir.RankedTensorType) or not kind.has_static_shape:
        return None
    try:
        dtype_of(kind)
    except TypeError:   # f8, quantized ... : no numpy dtype to compute in
        return None
    count = math.prod(kind.shape)
    return count if count <= limit else None


def _inner_ops(op):
    for region in op.regions:
        for block in region.blocks:
            for inner in block.operations:
                yield inner.operation
                yield from _inner_ops(inner.operation)


def _evaluable(op, limit: int) -> bool:
    """No side effect or call in it or its regions, every value they make within `limit`: the reference can
    evaluate it alone."""
    return _evaluable_alone(op, limit) and all(inner.name in ("stablehlo.return", "stablehlo.constant")
                                               or _evaluable_alone(inner, limit) for inner in _inner_ops(op))


def _evaluable_alone(op, limit: int) -> bool:
    return op.name not in NEVER and op.name in OPS and len(op.results) > 0 and \
        all(_elements(v, limit) is not None for v in op.results)


class _Folder:
    """The values known so far (constants read, ops evaluated), the ops evaluated in program order, and the
    constants read (erased once nothing uses them)."""

    def __init__(self, complex_results: bool = True):
        self.values: dict = {}
        self.folded: list = []
        self.constants_read: list = []
        self.complex_results = complex_results

    def value_of(self, value: ir.Value, limit: int):
        """The array `value` holds when it is known and within `limit` elements, else None."""
        known = self.values.get(value)
        if known is None:
            owner = value.owner
            if isinstance(owner, ir.Block) or owner.operation.name != "stablehlo.constant" \
                    or _elements(value, limit) is None:
                return None
            known = self.values[value] = constant_value(owner.operation)
            self.constants_read.append(owner.operation)
        return known if known.size <= limit else None

    def try_fold(self, op) -> bool:
        """Evaluate `op` when it can be folded: its results become known."""
        name = op.name
        if name in NEVER or name not in OPS:
            return False
        limit = MAX_REGION_ELEMENTS if len(op.regions) else MAX_ELEMENTS
        operands = [self.value_of(v, limit) for v in op.operands]   # first: most ops have a non-constant one
        if any(x is None for x in operands) or not _evaluable(op, limit):
            return False
        if not self.complex_results and any(dtype_of(v.type).kind == "c" for v in op.results):
            return False
        builder = OPS[name]
        try:
            closure = builder(op, {}) if getattr(builder, "takes_functions", False) else builder(op)
        except BackendError:    # an attribute or form the reference does not evaluate: IREE's business
            return False
        captures = list(getattr(closure, "captures", ()))
        if op.regions and set(free_values(op.regions)) - set(captures):
            return False        # a region using an outer value its closure does not take: not evaluable alone
        inputs = operands + [self.value_of(v, limit) for v in captures]
        if any(x is None for x in inputs) or not _affordable(op, inputs):
            return False
        with np.errstate(all="ignore"):     # IEEE results (inf, nan), as the reference gives them
            outs = closure(*inputs)
        outs = [outs] if len(op.results) == 1 else list(outs)
        arrays = [np.asarray(x, dtype=dtype_of(v.type)) for x, v in zip(outs, op.results)]
        if any(a.shape != shape_of(v.type) for a, v in zip(arrays, op.results)):
            raise BackendError(f"the reference evaluated {op.name} to shapes {[a.shape for a in arrays]}, not "
                               f"{[shape_of(v.type) for v in op.results]} (at {op.location})")
        self.values.update(zip(op.results, arrays))
        self.folded.append(op)
        return True

    def visit(self, op):
        """Fold what can be folded under `op`, in program order; the regions of an op folded whole are not
        visited (the reference evaluated them with it)."""
        for region in op.regions:
            for block in region.blocks:
                for inner in block.operations:
                    if not self.try_fold(inner.operation):
                        self.visit(inner.operation)


def _affordable(op, inputs) -> bool:
    if op.name not in CONTRACTIONS:
        return True
    biggest = max((x.size for x in inputs), default=1)
    return sum(math.prod(shape_of(v.type)) for v in op.results) * biggest <= MAX_WORK


def _members(folder: _Folder) -> list:
    """The folded ops to take out: all but the roots IREE makes for free inside the dispatch that reads them (a
    broadcast or reshape that only spreads a splat, as `x + 1`'s and relu's do; an iota), left as they are."""
    members = set(folder.folded)
    for op in reversed(folder.folded):      # users before what they use: a root left makes its operands roots
        if _left_in_place(op, folder.values, members) and _is_root(op, members):
            members.discard(op)
    return [op for op in folder.folded if op in members]


def _left_in_place(op, values: dict, members) -> bool:
    """An iota, a spread of a splat (the operand's elements all alike: a scalar, mostly), or an op making a bool
    mask that is not a splat (a compare of iotas: tril's, LU's row masks) which an op that stays computes with.
    IREE computes those in the dispatch that reads them; a bool constant is read from memory instead, and with data
    tiling IREE 3.13 packs it where the mask selects a matmul's operand and fails ("unresolved target
    materialization" of tensor<9xi1>: the LU gradient compiled a second time without data tiling). A mask the
    function only returns is a constant like any other."""
    if op.name == "stablehlo.iota" or op.name in SPREADS and all_alike(values[op.operands[0]]):
        return True
    return len(op.results) == 1 and values[op.results[0]].dtype == np.bool_ and \
        not all_alike(values[op.results[0]]) and any(use.owner.operation.name != "func.return" and
                                                     _stays(use.owner.operation, members) for use in op.results[0].uses)


def _is_root(op, members) -> bool:
    """Whether something that stays reads a result of `op` (a use inside a region of a member goes with it)."""
    return any(_stays(use.owner.operation, members) for value in op.results for use in value.uses)


def _stays(user, members) -> bool:
    while user.name not in ("func.func", "builtin.module"):
        if user in members:
            return False
        user = user.parent.operation
    return True


def fold_constants(module: ir.Module, complex_results: bool = True) -> int:
    """Replace constant-only expressions by the constants they compute; the number of ops folded away. Without
    `complex_results`, ops that make complex values stay (after complex_pairs.py: the pairs' `stablehlo.complex`
    at a function's ends; a complex<f64> constant can crash IREE's compiler, test_complex_pairs.py)."""
    folder = _Folder(complex_results)
    folder.visit(module.operation)
    members = _members(folder)
    chosen = set(members)   # (all decided before any edit: an edit may give the ops new Python objects)
    roots = [(op, value) for op in members for value in op.results
             if any(_stays(use.owner.operation, chosen) for use in value.uses)]
    for op, value in roots:
        with ir.InsertionPoint(op), op.location:
            value.replace_all_uses_with(hlo.constant(folder.values[value]))
    for op in reversed(members):   # users first
        op.erase()
    for op in folder.constants_read:
        if not list(op.result.uses):
            op.erase()
    return len(members)
