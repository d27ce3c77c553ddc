"""Contractions: matmul (numpy semantics: 1-D operands, broadcast batch dimensions), dot, dot_general.

16-bit float operands are contracted into a float32 result that is rounded once (JAX's
preferred_element_type=float32 form, which XLA uses for them): a float16 accumulator stops counting at
2048. On IREE's llvm-cpu the mixed form is also the fast one (512x512x512, measured: f16 158 ms with a
float16 result, 7.6 ms with a float32 one; bf16 65 against 1.4 ms).
"""
from __future__ import annotations

from ...dialects import stablehlo as hlo
from ...errors import ShapeError
from .. import dtypes
from ..tensor import Tensor
from . import _core
from ._core import emit, fail, promote, wrap
from .reductions import computation_dtype


def dot_general(x, y, contracting, batch=((), ()), dtype=None) -> Tensor:
    """lax.dot_general: contract `contracting = (x_dims, y_dims)`, batch over `batch = (x_dims, y_dims)`."""
    (x, y), common, weak = promote("dot_general", x, y)
    (xc, yc), (xb, yb) = contracting, batch
    for a, b in zip((*xc, *xb), (*yc, *yb)):
        if x.shape[a] != y.shape[b]:
            fail(ShapeError, "dot_general", f"dimension {a} of {_core.describe(x)} and dimension {b} of "
                                            f"{_core.describe(y)} differ")
    if common == dtypes.bool_:  # numpy: logical or of ands
        x, y = (_core.convert(t, dtypes.int32) for t in (x, y))
        return dot_general(x, y, contracting, batch) != 0
    out = dtypes.canonical(dtype) if dtype is not None else common
    free_x = [d for i, d in enumerate(x.shape) if i not in (*xc, *xb)]
    free_y = [d for i, d in enumerate(y.shape) if i not in (*yc, *yb)]
    shape = tuple([x.shape[i] for i in xb] + free_x + free_y)
    accumulator = computation_dtype(out)
    value = emit(hlo.dot_general, x.value, y.value, lhs_batch=xb, rhs_batch=yb, lhs_contract=xc,
                 rhs_contract=yc, dtype=accumulator)
    return _core.convert(wrap(value, shape, accumulator, weak), out, weak)


def matmul(x, y) -> Tensor:
    """numpy matmul (`@`): 1-D operands gain and lose a dimension; batch dimensions broadcast."""
    from .shape import reshape
    (x, y), _, _ = promote("matmul", x, y)
    if x.ndim == 0 or y.ndim == 0:
        fail(ShapeError, "matmul", f"operands must not be scalars: {x.shape} @ {y.shape}")
    x2 = reshape(x, (1, x.shape[0])) if x.ndim == 1 else x
    y2 = reshape(y, (y.shape[0], 1)) if y.ndim == 1 else y
    if x2.shape[-1] != y2.shape[-2]:
        fail(ShapeError, "matmul", f"contracting dimensions differ: {x.shape} @ {y.shape}")
    if x.ndim > 2 and y.ndim == 2:
        # [..., M, K] @ [K, N] as one [rows, K] x [K, N] product (as nn.dense): broadcasting y over x's batch
        # made y's gradient a batched product with a [..., K, N] result and a sum over it
        rows = reshape(x, (-1, x.shape[-1]))
        return reshape(dot_general(rows, y, ((1,), (0,))), x.shape[:-1] + y.shape[1:])
    batch = _core.broadcast_shapes("matmul", x2.shape[:-2], y2.shape[:-2])
    x2 = _core.broadcast_to(x2, batch + x2.shape[-2:], "matmul")
    y2 = _core.broadcast_to(y2, batch + y2.shape[-2:], "matmul")
    nb = len(batch)
    out = dot_general(x2, y2, ((nb + 1,), (nb,)), (tuple(range(nb)), tuple(range(nb))))
    shape = batch + x.shape[-2:-1] * (x.ndim > 1) + y.shape[-1:] * (y.ndim > 1)
    return reshape(out, shape)


def dot(x, y) -> Tensor:
    """numpy dot: a product for scalars; else contract x's last axis with y's second-to-last (or only) axis."""
    (x, y), _, _ = promote("dot", x, y)
    if x.ndim == 0 or y.ndim == 0:
        return x * y
    y_axis = 0 if y.ndim == 1 else y.ndim - 2
    if x.shape[-1] != y.shape[y_axis]:
        fail(ShapeError, "dot", f"contracting dimensions differ: {x.shape} . {y.shape}")
    return dot_general(x, y, ((x.ndim - 1,), (y_axis,)))
