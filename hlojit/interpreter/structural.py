"""Constants, iota, shape ops, contractions and reductions."""
from __future__ import annotations

import numpy as np
from iree.compiler import ir

from ..dialects.types import attr_ints, constant_value, dot_dimensions, dtype_of, shape_of
from .interpreter import OPS, compile_block

_REDUCERS = {"add": np.add, "multiply": np.multiply, "maximum": np.maximum, "minimum": np.minimum,
             "and": np.logical_and, "or": np.logical_or, "xor": np.logical_xor}


def ufunc_reduce(name: str, x: np.ndarray, axes: tuple, init) -> np.ndarray:
    """init combined with the reduce of x over axes by the body's ufunc (the fast path of reduce and
    reduce_window). A real float sum of nothing but -0.0 (init included) is -0.0, as the spec's adds give:
    numpy's add.reduce starts its pairwise sums from +0.0 (cumsum([-0.0]) came out +0.0)."""
    ufunc = _REDUCERS[name]
    if x.size == 0:   # the spec's init alone (numpy's maximum.reduce of nothing raises: it has no identity)
        return np.full([d for i, d in enumerate(x.shape) if i not in axes], init, x.dtype)
    result = ufunc(ufunc.reduce(x, axis=axes), init)
    if name == "add" and x.dtype.kind == "f":
        negative_zeros = np.all((x == 0) & np.signbit(x), axis=axes) & (init == 0) & np.signbit(init)
        result = np.where(negative_zeros, -0.0, result).astype(result.dtype)
    return result


def _constant(op):
    value = constant_value(op)
    return lambda: value


def _broadcast_in_dim(op):
    """x's axes moved to their broadcast_dimensions, then broadcast. The view shape is the operand type's, known
    here: a run is a reshape and a broadcast (a reshape alone where nothing grows). Factorization loops run
    thousands: the reference's svd and eigh of a 16 x 12 matrix took ~15% less time than with the view computed
    per run."""
    dims, shape = attr_ints(op, "broadcast_dimensions"), tuple(shape_of(op.result.type))
    order = sorted(range(len(dims)), key=lambda i: dims[i])
    sizes = shape_of(op.operands[0].type)
    view = [1] * len(shape)
    for i in order:
        view[dims[i]] = sizes[i]
    view = tuple(view)
    if order != list(range(len(dims))):
        return lambda x: np.broadcast_to(np.transpose(x, order).reshape(view), shape)
    if view == shape:
        return lambda x: x.reshape(shape)
    return lambda x: np.broadcast_to(x.reshape(view), shape)


def _iota(op):
    shape, dim, dtype = shape_of(op.result.type), int(ir.IntegerAttr(op.attributes["iota_dimension"]).value), \
        dtype_of(op.result.type)
    view = [1] * len(shape)
    view[dim] = shape[dim]
    value = np.ascontiguousarray(np.broadcast_to(np.arange(shape[dim]).astype(dtype).reshape(view), shape))
    return lambda: value


def _dot_general(op):
    lb, rb, lc, rc = dot_dimensions(op)
    lhs_shape, rhs_shape = shape_of(op.operands[0].type), shape_of(op.operands[1].type)
    lf = [i for i in range(len(lhs_shape)) if i not in lb + lc]
    rf = [i for i in range(len(rhs_shape)) if i not in rb + rc]
    size = lambda shape, axes: int(np.prod([shape[a] for a in axes], dtype=np.int64))  # noqa: E731
    b, m, k, n = size(lhs_shape, lb), size(lhs_shape, lf), size(lhs_shape, lc), size(rhs_shape, rf)
    out_shape, dtype = shape_of(op.result.type), dtype_of(op.result.type)

    def run(x, y):
        if x.dtype.kind == "f" and x.dtype.itemsize < 4 or x.dtype.name == "bfloat16":
            x, y = x.astype(np.float32), y.astype(np.float32)   # accumulate in f32, as IREE does
        elif x.dtype.kind in "iu" and dtype.kind in "iu" and dtype != x.dtype:
            x, y = x.astype(dtype), y.astype(dtype)    # i8 x i8 -> i32: products in the result type (the spec)
        x = np.transpose(x, lb + lf + lc).reshape(b, m, k)
        y = np.transpose(y, rb + rc + rf).reshape(b, k, n)
        return np.matmul(x, y).astype(dtype).reshape(out_shape)
    return run


def _reduce(op):
    dims = tuple(attr_ints(op, "dimensions"))
    n = len(op.results)
    body = op.regions[0].blocks[0]
    body_ops = list(body.operations)
    args = list(body.arguments)
    if n == 1 and len(body_ops) == 2:  # one binary op on (accumulator, element): a numpy ufunc reduce
        name = body_ops[0].operation.name.removeprefix("stablehlo.")
        if name in _REDUCERS and {body_ops[0].operands[0], body_ops[0].operands[1]} == {args[0], args[1]}:
            dtype = dtype_of(op.results[0].type)
            if dtype == np.bool_ or name not in ("and", "or", "xor"):
                return lambda x, init: np.asarray(ufunc_reduce(name, x, dims, init), dtype=dtype)
    combine = compile_block(body, "reduce_body")
    result_dtypes = [dtype_of(r.type) for r in op.results]  # not at run time: the module may be gone

    def run(*operands):  # the general case: fold the body over the reduced elements, vectorised
        inputs, acc = operands[:n], list(operands[n:])
        kept = [i for i in range(inputs[0].ndim) if i not in dims]
        reduced = int(np.prod([inputs[0].shape[d] for d in dims]))   # not -1: a kept axis may be empty
        moved = [np.moveaxis(x, dims, range(len(kept), x.ndim)).reshape(
            [x.shape[i] for i in kept] + [reduced]) for x in inputs]
        acc = [np.broadcast_to(a, moved[0].shape[:-1]) for a in acc]
        for k in range(moved[0].shape[-1]):
            acc = list(combine(*acc, *(x[..., k] for x in moved)))
        results = tuple(np.asarray(a, dtype=d) for a, d in zip(acc, result_dtypes))
        return results if n > 1 else results[0]  # one result: the value itself, as the interpreter expects
    return run


def _dot(op):
    """The deprecated stablehlo.dot: vector/matrix products of rank-1 and rank-2 operands."""
    dtype = dtype_of(op.result.type)
    return lambda x, y: np.asarray(np.dot(x, y), dtype=dtype)


def _broadcast(op):
    """The deprecated stablehlo.broadcast: `broadcast_sizes` new leading dimensions."""
    shape = shape_of(op.result.type)
    return lambda x: np.broadcast_to(x, shape)


def _einsum(op):
    """The deprecated stablehlo.einsum / unary_einsum: numpy's einsum of `einsum_config`."""
    config = str(ir.StringAttr(op.attributes["einsum_config"]).value).replace(" ", "")
    dtype = dtype_of(op.result.type)
    if config.startswith("->") or config.startswith(","):    # unary_einsum's configs read ",ab->a" in old exports
        config = config.lstrip(",")
    return lambda *xs: np.asarray(np.einsum(config, *xs), dtype=dtype)


def _torch_index_select(op):
    """The deprecated stablehlo.torch_index_select: np.take along `dim`, per element of the `batch_dims` leading
    dimensions that operand and index share."""
    dim, batch = (int(ir.IntegerAttr(op.attributes[name]).value) for name in ("dim", "batch_dims"))
    shape, dtype = shape_of(op.result.type), dtype_of(op.result.type)

    def run(x, index):
        if batch == 0:
            return np.take(x, index, axis=dim)
        flat_x = x.reshape((-1,) + x.shape[batch:])
        flat_index = index.reshape((-1,) + index.shape[batch:])
        parts = [np.take(a, i, axis=dim - batch) for a, i in zip(flat_x, flat_index)]
        return np.asarray(parts, dtype=dtype).reshape(shape)
    return run


OPS.update({
    "stablehlo.torch_index_select": _torch_index_select,
    "stablehlo.dot": _dot,
    "stablehlo.broadcast": _broadcast,
    "stablehlo.einsum": _einsum,
    "stablehlo.unary_einsum": _einsum,
    "stablehlo.constant": _constant,
    "stablehlo.iota": _iota,
    "stablehlo.broadcast_in_dim": _broadcast_in_dim,
    "stablehlo.reshape": lambda op: (lambda shape: lambda x: np.reshape(x, shape))(shape_of(op.result.type)),
    "stablehlo.transpose": lambda op: (lambda perm: lambda x: np.transpose(x, perm))(attr_ints(op, "permutation")),
    "stablehlo.dot_general": _dot_general,
    "stablehlo.reduce": _reduce,
})
