"""The spec's dynamic-shape ops, in modules whose result types are static (what hlojit runs): each computes
what its static counterpart does, reading sizes and paddings from its operands at run time where they
matter, and checking them against the result type. Everything read from the op is read when it is built:
the closures outlive the module.
"""
from __future__ import annotations

import numpy as np
from iree.compiler import ir

from ..dialects.types import dtype_of, shape_of
from ..errors import BackendError
from .indexing import gather_with, static_slice_sizes
from .interpreter import OPS
from .nn import convolution_with_padding
from .shape import pad_with
from .structural import _broadcast_in_dim, _iota


def _shape_checker(op):
    """check(shape, what): raise unless `shape` (an operand's values or a computed shape) is the result type's."""
    expected, name, where = tuple(shape_of(op.result.type)), op.name, str(op.location)

    def check(shape, what: str):
        if tuple(int(d) for d in np.asarray(shape).ravel()) != expected:
            raise BackendError(f"{name}: {what} {list(np.asarray(shape).ravel())} differs from the result type's "
                               f"shape {list(expected)} (at {where})")
    return check


def _dynamic_reshape(op):
    shape, check = shape_of(op.result.type), _shape_checker(op)

    def run(x, output_shape):
        check(output_shape, "output_shape")
        return np.reshape(x, shape)
    return run


def _dynamic_broadcast_in_dim(op):
    broadcast, check = _broadcast_in_dim(op), _shape_checker(op)

    def run(x, output_dimensions):
        check(output_dimensions, "output_dimensions")
        return broadcast(x)
    return run


def _dynamic_iota(op):
    iota, check = _iota(op), _shape_checker(op)

    def run(output_shape):
        check(output_shape, "output_shape")
        return iota()
    return run


def _dynamic_pad(op):
    dtype = dtype_of(op.result.type)
    shape, check = shape_of(op.operands[0].type), _shape_checker(op)

    def run(x, value, low, high, interior):
        out = pad_with(shape, *(np.asarray(v, np.int64).ravel().tolist() for v in (low, high, interior)))(x, value)
        check(out.shape, "the padded shape")
        return out.astype(dtype)
    return run


def _real_dynamic_slice(op):
    check = _shape_checker(op)

    def run(x, start, limit, strides):
        index = tuple(slice(int(a), int(b), int(c)) for a, b, c in zip(start, limit, strides))
        out = x[index]
        check(out.shape, "the slice's shape")
        return out
    return run


def _dynamic_gather(op):
    sizes = static_slice_sizes(op)
    gather, where = gather_with(op, sizes), str(op.location)

    def run(operand, indices, slice_sizes):
        if list(np.asarray(slice_sizes).ravel()) != sizes:
            raise BackendError(f"stablehlo.dynamic_gather: slice_sizes {list(np.asarray(slice_sizes))} disagree with "
                               f"the result type's {sizes} (at {where})")
        return gather(operand, indices)
    return run


def _dynamic_conv(op):
    """A convolution whose padding is its third operand (one (lo, hi) row per spatial dimension)."""
    run, check = convolution_with_padding(op), _shape_checker(op)

    def conv(lhs, rhs, padding):
        out = run(lhs, rhs, [tuple(int(v) for v in row) for row in np.asarray(padding).reshape(-1, 2)])
        check(out.shape, "the convolution's shape")
        return out
    return conv


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
    "stablehlo.dynamic_conv": _dynamic_conv,
})
