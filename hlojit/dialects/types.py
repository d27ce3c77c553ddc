"""numpy dtypes <-> MLIR element types, tensor types from shapes, and what an op's types and dimension
numbers say (shape_of, dtype_of, dot_dimensions).

One table, read both ways. StableHLO integers are signless (i32 means signed) except the explicit
unsigned `ui` types; booleans are `i1`; complex64 is `complex<f32>`.
"""
from __future__ import annotations

import re

import ml_dtypes
import numpy as np
from iree.compiler import ir

# numpy dtype -> (MLIR spelling, constructor of the element type)
_ELEMENT_TYPES = {
    np.dtype(np.bool_): ("i1", lambda: ir.IntegerType.get_signless(1)),
    np.dtype(np.int8): ("i8", lambda: ir.IntegerType.get_signless(8)),
    np.dtype(np.int16): ("i16", lambda: ir.IntegerType.get_signless(16)),
    np.dtype(np.int32): ("i32", lambda: ir.IntegerType.get_signless(32)),
    np.dtype(np.int64): ("i64", lambda: ir.IntegerType.get_signless(64)),
    np.dtype(np.uint8): ("ui8", lambda: ir.IntegerType.get_unsigned(8)),
    np.dtype(np.uint16): ("ui16", lambda: ir.IntegerType.get_unsigned(16)),
    np.dtype(np.uint32): ("ui32", lambda: ir.IntegerType.get_unsigned(32)),
    np.dtype(np.uint64): ("ui64", lambda: ir.IntegerType.get_unsigned(64)),
    np.dtype(np.float16): ("f16", lambda: ir.F16Type.get()),
    np.dtype(ml_dtypes.bfloat16): ("bf16", lambda: ir.BF16Type.get()),
    np.dtype(np.float32): ("f32", lambda: ir.F32Type.get()),
    np.dtype(np.float64): ("f64", lambda: ir.F64Type.get()),
    np.dtype(np.complex64): ("complex<f32>", lambda: ir.ComplexType.get(ir.F32Type.get())),
    np.dtype(np.complex128): ("complex<f64>", lambda: ir.ComplexType.get(ir.F64Type.get())),
}
_BY_SPELLING = {spelling: dtype for dtype, (spelling, _) in _ELEMENT_TYPES.items()}

SUPPORTED_DTYPES = tuple(_ELEMENT_TYPES)


def element_type(dtype) -> ir.Type:
    """The MLIR element type of a numpy dtype (in the current context)."""
    try:
        return _ELEMENT_TYPES[np.dtype(dtype)][1]()
    except KeyError:
        raise TypeError(f"dtype {np.dtype(dtype)} is not supported; supported: "
                        f"{', '.join(str(d) for d in SUPPORTED_DTYPES)}") from None


def tensor_type(shape, dtype) -> ir.RankedTensorType:
    return ir.RankedTensorType.get(list(shape), element_type(dtype))


def dtype_of(t: ir.Type) -> np.dtype:
    """The numpy dtype of an MLIR element type or tensor type."""
    t = t.maybe_downcast()
    if isinstance(t, ir.RankedTensorType):
        t = t.element_type
    try:
        return _BY_SPELLING[str(t)]
    except KeyError:
        raise TypeError(f"MLIR element type {t} has no numpy dtype here") from None


def shape_of(t: ir.Type) -> tuple:
    return tuple(ir.RankedTensorType(t).shape)


def spelling(dtype) -> str:
    """The short MLIR name of a dtype: f32, i1, ui8, complex<f32> ..."""
    return _ELEMENT_TYPES[np.dtype(dtype)][0]


def short_signature(shape, dtype) -> str:
    """`f32[2,3]` style, used in messages and cache reports."""
    return f"{spelling(dtype)}[{','.join(str(d) for d in shape)}]"


def dot_dimensions(op) -> tuple[list[int], list[int], list[int], list[int]]:
    """(lhs_batch, rhs_batch, lhs_contract, rhs_contract) of a stablehlo.dot_general, read back from the
    attribute stablehlo.dot_general writes."""
    text = str(op.attributes["dot_dimension_numbers"])

    def dims(name):
        found = re.search(name + r" = \[([\d, ]*)\]", text)
        return [int(v) for v in found.group(1).split(",") if v.strip()] if found else []
    return tuple(dims(f"{side}_{kind}_dimensions") for kind in ("batching", "contracting") for side in ("lhs", "rhs"))
