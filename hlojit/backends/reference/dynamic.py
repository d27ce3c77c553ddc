"""The spec's dynamic-shape ops, in modules whose result types are static (what hlojit runs): each computes
what its static counterpart does, reading sizes and paddings from its operands at run time where they
matter, and checking them against the result type.
"""
from __future__ import annotations

import numpy as np
from iree.compiler import ir

from ...dialects.types import dtype_of, shape_of
from ...errors import BackendError
from .indexing import gather_with, static_slice_sizes
from .interpreter import OPS
from .shape import pad_with
from .structural import _broadcast_in_dim, _iota


def _check_shape(op, shape, what: str):
    expected = shape_of(op.result.type)
    if tuple(int(d) for d in np.asarray(shape).ravel()) != tuple(expected):
        raise BackendError(f"{op.name}: {what} {list(np.asarray(shape).ravel())} differs from the result type's "
                           f"shape {list(expected)} (at {op.location})")


def _dynamic_reshape(op):
    shape = shape_of(op.result.type)

    def run(x, output_shape):
        _check_shape(op, output_shape, "output_shape")
        return np.reshape(x, shape)
    return run


def _dynamic_broadcast_in_dim(op):
    broadcast = _broadcast_in_dim(op)

    def run(x, output_dimensions):
        _check_shape(op, output_dimensions, "output_dimensions")
        return broadcast(x)
    return run


def _dynamic_iota(op):
    iota = _iota(op)

    def run(output_shape):
        _check_shape(op, output_shape, "output_shape")
        return iota()
    return run


def _dynamic_pad(op):
    dtype = dtype_of(op.result.type)
    shape = shape_of(op.operands[0].type)

    def run(x, value, low, high, interior):
        out = pad_with(shape, *(np.asarray(v, np.int64).ravel().tolist() for v in (low, high, interior)))(x, value)
        _check_shape(op, out.shape, "the padded shape")
        return out.astype(dtype)
    return run


def _real_dynamic_slice(op):
    def run(x, start, limit, strides):
        index = tuple(slice(int(a), int(b), int(c)) for a, b, c in zip(start, limit, strides))
        out = x[index]
        _check_shape(op, out.shape, "the slice's shape")
        return out
    return run


def _dynamic_gather(op):
    gather = gather_with(op, static_slice_sizes(op))

    def run(operand, indices, slice_sizes):
        if list(np.asarray(slice_sizes).ravel()) != static_slice_sizes(op):
            raise BackendError(f"{op.name}: slice_sizes {list(np.asarray(slice_sizes))} disagree with the result "
                               f"type (at {op.location})")
        return gather(operand, indices)
    return run


def _get_dimension_size(op):
    size = shape_of(op.operands[0].type)[int(ir.IntegerAttr(op.attributes["dimension"]).value)]
    value = np.array(size, dtype=dtype_of(op.result.type))
    return lambda x: value


OPS.update({
    "stablehlo.dynamic_reshape": _dynamic_reshape,
    "stablehlo.dynamic_broadcast_in_dim": _dynamic_broadcast_in_dim,
    "stablehlo.dynamic_iota": _dynamic_iota,
    "stablehlo.dynamic_pad": _dynamic_pad,
    "stablehlo.real_dynamic_slice": _real_dynamic_slice,
    "stablehlo.dynamic_gather": _dynamic_gather,
    "stablehlo.get_dimension_size": _get_dimension_size,
})
