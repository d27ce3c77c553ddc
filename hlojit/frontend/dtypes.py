"""dtypes and type promotion.

The promotion lattice is JAX's: Python scalars are *weakly typed* (`i*`, `f*`) and take the dtype of the
array they meet, so `f32 * 2` stays f32 and `i32 + 1.5` becomes f32; `bf16 + f16` is f32; unsigned meets
signed one size up. Two operands promote to their least upper bound in the lattice below. Complex is above
float: `f32 + c64` is c64, `f64 + c64` is c128, and a Python complex (`c*`) is weak: `f32 * 1j` is c64.

Strict mode (`with hj.promotion("strict"):` or `HLOJIT_PROMOTION=strict`) forbids implicit promotion
between two different concrete dtypes; weakly typed Python scalars still adapt.
"""
from __future__ import annotations

import contextlib
import contextvars
import os

import ml_dtypes
import numpy as np

from ..errors import DTypeError

bool_ = np.dtype(np.bool_)
int8, int16, int32, int64 = (np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64))
uint8, uint16, uint32, uint64 = (np.dtype(t) for t in (np.uint8, np.uint16, np.uint32, np.uint64))
float16, float32, float64 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)
bfloat16 = np.dtype(ml_dtypes.bfloat16)
complex64, complex128 = np.dtype(np.complex64), np.dtype(np.complex128)

DEFAULT_INT = int32
DEFAULT_FLOAT = float32
DEFAULT_COMPLEX = complex64

# Node names of the lattice; "i*", "f*" and "c*" are the weak Python int, float and complex.
_NODE = {bool_: "b", uint8: "u8", uint16: "u16", uint32: "u32", uint64: "u64", int8: "i8", int16: "i16",
         int32: "i32", int64: "i64", bfloat16: "bf16", float16: "f16", float32: "f32", float64: "f64",
         complex64: "c64", complex128: "c128"}
_DTYPE = {node: dtype for dtype, node in _NODE.items()} | {"i*": DEFAULT_INT, "f*": DEFAULT_FLOAT,
                                                           "c*": DEFAULT_COMPLEX}
_WEAK = ("i*", "f*", "c*")
_LATTICE = {
    "b": ["i*"], "i*": ["u8", "i8"], "u8": ["u16", "i16"], "u16": ["u32", "i32"], "u32": ["u64", "i64"],
    "u64": ["f*"], "i8": ["i16"], "i16": ["i32"], "i32": ["i64"], "i64": ["f*"], "f*": ["bf16", "f16", "c*"],
    "bf16": ["f32"], "f16": ["f32"], "f32": ["f64", "c64"], "f64": ["c128"], "c*": ["c64"], "c64": ["c128"],
    "c128": [],
}


def _upper_bounds() -> dict[str, frozenset]:
    bounds: dict[str, frozenset] = {}

    def visit(node):
        if node not in bounds:
            bounds[node] = frozenset({node}).union(*(visit(n) for n in _LATTICE[node]))
        return bounds[node]
    for node in _LATTICE:
        visit(node)
    return bounds


_UPPER = _upper_bounds()


def _join(a: str, b: str) -> str:
    common = _UPPER[a] & _UPPER[b]
    return max(common, key=lambda n: len(_UPPER[n]))  # the lowest common upper bound


_PROMOTION = contextvars.ContextVar("hlojit_promotion", default=os.environ.get("HLOJIT_PROMOTION", "standard"))
overrides_active = 0  # promotion() blocks open in any thread: jit's fast path steps aside while > 0


@contextlib.contextmanager
def promotion(mode: str):
    """`with hj.promotion("strict"):` forbids implicit promotion between different concrete dtypes."""
    global overrides_active
    if mode not in ("standard", "strict"):
        raise ValueError(f"promotion mode must be 'standard' or 'strict', not {mode!r}")
    token = _PROMOTION.set(mode)
    overrides_active += 1
    try:
        yield
    finally:
        overrides_active -= 1
        _PROMOTION.reset(token)


def promotion_mode() -> str:
    """The promotion mode in force here: part of every jit cache key, since it changes what traces."""
    return _PROMOTION.get()


def canonical(dtype) -> np.dtype:
    """A supported numpy dtype (in native byte order) from anything numpy understands, or a clear error."""
    try:
        d = np.dtype(dtype)
    except TypeError:
        raise DTypeError(f"{dtype!r} is not a dtype") from None
    if not d.isnative:  # big-endian data (`>f4`): the same values in the machine's byte order
        d = d.newbyteorder("=")
    if d not in _NODE:
        raise DTypeError(f"dtype {d} is not supported; supported: {', '.join(map(str, _NODE))}")
    return d


def is_float(dtype) -> bool:
    return dtype in (float16, bfloat16, float32, float64)


def is_complex(dtype) -> bool:
    return dtype in (complex64, complex128)


def is_inexact(dtype) -> bool:
    """float or complex: the dtypes that differentiate."""
    return is_float(dtype) or is_complex(dtype)


def real_dtype(dtype) -> np.dtype:
    """The dtype of a complex dtype's parts (c64 -> f32); a real dtype itself."""
    return {complex64: float32, complex128: float64}.get(dtype, dtype)


def complex_dtype(dtype) -> np.dtype:
    """The complex dtype whose parts have this float dtype (f64 -> c128; f32, f16, bf16 -> c64)."""
    return complex128 if dtype in (float64, complex128) else complex64


def is_int(dtype) -> bool:
    return dtype.kind in "iu"


def result_type(*operands: tuple[np.dtype, bool]) -> tuple[np.dtype, bool]:
    """Promote (dtype, weak) pairs; returns the result's (dtype, weak)."""
    nodes = [("i*" if d.kind in "iu" else "f*" if is_float(d) else "c*") if weak and d != bool_
             else _NODE[d] for d, weak in operands]
    if _PROMOTION.get() == "strict":
        concrete = {n for n in nodes if n not in _WEAK}
        if len(concrete) > 1:
            names = ", ".join(sorted(str(_DTYPE[n]) for n in concrete))
            raise DTypeError(f"implicit promotion of {names} is not allowed in strict mode; "
                             "convert with .astype() first")
    node = nodes[0]
    for other in nodes[1:]:
        node = _join(node, other)
    return _DTYPE[node], node in _WEAK


def python_scalar_dtype(value) -> tuple[np.dtype, bool]:
    """(dtype, weak) of a Python scalar: bool is a concrete bool, int, float and complex are weak."""
    if isinstance(value, bool):
        return bool_, False
    if isinstance(value, int):
        return DEFAULT_INT, True
    if isinstance(value, float):
        return DEFAULT_FLOAT, True
    if isinstance(value, complex):
        return DEFAULT_COMPLEX, True
    raise DTypeError(f"{type(value).__name__} is not an array or a Python scalar")
