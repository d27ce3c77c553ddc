"""CHLO's ops that are not elementwise functions: mulhi (the high half of a product), scan (a loop over one
dimension with carries), ragged_dot (grouped matrix products) and chlo.constant, as numpy, exactly.
"""
from __future__ import annotations

import re

import numpy as np
from iree.compiler import ir

from ..dialects.types import constant_value, dtype_of, shape_of
from ..errors import BackendError
from .interpreter import OPS, compile_block


def _mulhi(op):
    """The high half of the double-width product: through int64/uint64 below 64 bits, Python ints at 64."""
    dtype = dtype_of(op.result.type)
    bits = dtype.itemsize * 8
    wide = np.int64 if dtype.kind == "i" else np.uint64

    def run(a, b):
        if bits < 64:
            return ((a.astype(wide) * b.astype(wide)) >> bits).astype(dtype)
        high = [(int(x) * int(y)) >> 64 for x, y in zip(np.ravel(a), np.ravel(b))]
        return np.array(high, dtype=object).astype(dtype).reshape(np.shape(a))
    return run


def _scan(op, functions):
    """chlo.scan(inputs) inits(carries): body(input slices..., carries...) -> (output slices..., carries...),
    step by step along `dimension` (from its end with is_reverse); results are the stacked outputs, then the
    final carries. (Its body is isolated from above: it captures nothing.)"""
    dimension = int(ir.IntegerAttr(op.attributes["dimension"]).value)
    reverse = "is_reverse" in op.attributes and bool(ir.BoolAttr(op.attributes["is_reverse"]).value)
    body = compile_block(op.regions[0].blocks[0], "scan_body", functions)
    n_inputs = [int(v) for v in ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"])][0]
    n_outputs = len(op.results) - (len(op.operands) - n_inputs)
    out_types = [(shape_of(r.type), dtype_of(r.type)) for r in op.results[:n_outputs]]
    carry_dtypes = [dtype_of(r.type) for r in op.results[n_outputs:]]

    def run(*args):
        inputs, carries = args[:n_inputs], list(args[n_inputs:])
        length = inputs[0].shape[dimension]
        outputs = [np.empty(shape, dtype) for shape, dtype in out_types]
        for i in (range(length - 1, -1, -1) if reverse else range(length)):
            step = body(*(np.take(x, i, axis=dimension) for x in inputs), *carries)
            for out, value in zip(outputs, step[:n_outputs]):
                out[(slice(None),) * dimension + (i,)] = value
            carries = list(step[n_outputs:])
        results = tuple(outputs) + tuple(np.asarray(c, dtype=d) for c, d in zip(carries, carry_dtypes))
        return results if len(results) > 1 else results[0]
    return run


_scan.takes_functions = True


_RAGGED_FIELD = re.compile(r"(\w+)\s*=\s*\[([^\]]*)\]")


def _ragged_dimensions(op) -> dict:
    text = str(op.attributes["ragged_dot_dimension_numbers"])
    return {name: [int(v) for v in values.split(",") if v.strip()] for name, values in _RAGGED_FIELD.findall(text)}


def _ragged_dot(op):
    """chlo.ragged_dot(lhs, rhs, group_sizes): consecutive runs of the lhs ragged dimension, group_sizes[g]
    long, each in its own product. A ragged non-contracting dimension picks rhs group g for its rows (rows past
    the groups give 0); a ragged contracting dimension gives one product per group (a new leading result
    dimension); a ragged batch dimension is an ordinary dot_general."""
    d = _ragged_dimensions(op)
    lb, rb = d.get("lhs_batching_dimensions", []), d.get("rhs_batching_dimensions", [])
    lc, rc = d.get("lhs_contracting_dimensions", []), d.get("rhs_contracting_dimensions", [])
    (ragged,), groups = d["lhs_ragged_dimensions"], d.get("rhs_group_dimensions", [])
    lhs_rank, rhs_rank = len(shape_of(op.operands[0].type)), len(shape_of(op.operands[1].type))
    lf = [i for i in range(lhs_rank) if i not in lb + lc]
    rf = [i for i in range(rhs_rank) if i not in rb + rc + groups]
    letters = iter("abcdefghijklmnopqrstuvwxyz")
    lhs_sub = [next(letters) for _ in range(lhs_rank)]
    rhs_sub = [""] * rhs_rank
    for li, ri in zip(lb + lc, rb + rc):
        rhs_sub[ri] = lhs_sub[li]
    for i in rf + groups:
        rhs_sub[i] = next(letters)
    out_sub = "".join([lhs_sub[i] for i in lb + lf] + [rhs_sub[i] for i in rf])
    per_group_rhs = "".join(s for i, s in enumerate(rhs_sub) if i not in groups)   # rhs with its group taken
    lhs_sub, rhs_sub = "".join(lhs_sub), "".join(rhs_sub)
    dtype, where = dtype_of(op.result.type), str(op.location)

    def run(lhs, rhs, group_sizes):
        sizes = np.asarray(group_sizes, np.int64)
        if sizes.ndim != 1:
            raise BackendError(f"chlo.ragged_dot: group_sizes of rank {sizes.ndim} (only rank 1 here) (at {where})")
        if lhs.dtype.kind == "f" and lhs.dtype.itemsize < 4 or lhs.dtype.name == "bfloat16":
            lhs, rhs = lhs.astype(np.float32), rhs.astype(np.float32)   # accumulate in f32, as dot_general
        group_of = np.full(lhs.shape[ragged], -1)
        bounds = np.concatenate([[0], np.cumsum(np.maximum(sizes, 0))])
        for g in range(len(sizes)):
            group_of[bounds[g]:bounds[g + 1]] = g
        masked = lambda g: np.where(_along(group_of == g, ragged, lhs.ndim), lhs, 0)  # noqa: E731
        if ragged in lf:      # rows of group g times rhs group g; rows past the groups stay 0
            (group_axis,) = groups
            out = sum(np.einsum(f"{lhs_sub},{per_group_rhs}->{out_sub}", masked(g), np.take(rhs, g, axis=group_axis))
                      for g in range(len(sizes)))
        elif ragged in lc:    # one product per group of the contracted dimension
            out = np.stack([np.einsum(f"{lhs_sub},{rhs_sub}->{out_sub}", masked(g), rhs) for g in range(len(sizes))])
        else:
            out = np.einsum(f"{lhs_sub},{rhs_sub}->{out_sub}", lhs, rhs)
        return np.asarray(out, dtype=dtype)
    return run


def _along(mask, axis: int, rank: int):
    shape = [1] * rank
    shape[axis] = -1
    return mask.reshape(shape)


def _chlo_constant(op):
    value = constant_value(op)
    return lambda: value


OPS.update({
    "chlo.mulhi": _mulhi,
    "chlo.scan": _scan,
    "chlo.ragged_dot": _ragged_dot,
    "chlo.constant": _chlo_constant,
})
