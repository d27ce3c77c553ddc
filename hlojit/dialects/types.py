"""numpy dtypes <-> MLIR element types, tensor types from shapes, and what an op's types and dimension
numbers say (shape_of, dtype_of, dot_dimensions).

One table, read both ways. StableHLO integers are signless (i32 means signed) except the explicit
unsigned `ui` types; booleans are `i1`; complex64 is `complex<f32>`.
"""
from __future__ import annotations

import collections
import functools
import re

import numpy as np
from iree.compiler import ir

# numpy dtype -> (MLIR spelling, constructor of the element type); bfloat16 is ml_dtypes' (`bfloat16`), apart
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
    np.dtype(np.float32): ("f32", lambda: ir.F32Type.get()),
    np.dtype(np.float64): ("f64", lambda: ir.F64Type.get()),
    np.dtype(np.complex64): ("complex<f32>", lambda: ir.ComplexType.get(ir.F32Type.get())),
    np.dtype(np.complex128): ("complex<f64>", lambda: ir.ComplexType.get(ir.F64Type.get())),
}
_BFLOAT16 = ("bf16", lambda: ir.BF16Type.get())
_BY_SPELLING = {spelling: dtype for dtype, (spelling, _) in _ELEMENT_TYPES.items()}


@functools.cache
def bfloat16() -> np.dtype:
    """ml_dtypes' bfloat16, imported at first use. Why not at import: ml_dtypes 0.7's import took ~0.55 CPU-s (0.6's,
    which pyproject.toml now asks for, ~20 ms), and a compile worker (pipeline/compile_worker.py), which imports this
    module and not the IREE runtime (which imports ml_dtypes itself), paid it only when it compiled a bf16 program.
    A bf16 dtype in hand means ml_dtypes is imported already: only the MLIR -> numpy direction needs this."""
    import ml_dtypes
    return np.dtype(ml_dtypes.bfloat16)


def astype(array, dtype) -> np.ndarray:
    """`array` converted to `dtype` as numpy converts it, except that a real number becomes bfloat16 rounded once
    to the nearest (ties to even), as StableHLO's convert says. Why not numpy's astype alone: ml_dtypes before 0.7
    converts f64 and integers wider than 16 bits through f32, rounding twice (2**24 + 2**16 + 1 became 2**24; once:
    2**24 + 2**17), and hlojit keeps ml_dtypes below 0.7 because 0.7's import takes ~0.7 s of every process
    (pyproject.toml). f64 goes to f32 rounded to odd (toward zero, its last bit set where inexact), which f32 ->
    bf16's nearest-even rounding then rounds exactly once (f32 keeps 16 bits more than bf16); 64-bit integers go to
    f64 rounded to odd first (beyond 2**53), 32-bit ones exactly."""
    dtype = np.dtype(dtype)
    if dtype.name != "bfloat16":      # an array's copy as astype makes it; a Python int that does not fit refused
        return array.astype(dtype) if isinstance(array, np.ndarray) else np.asarray(array, dtype)
    array = np.asarray(array)
    if array.dtype.kind not in "fiu" or array.dtype.itemsize < 4 or array.dtype == np.float32:
        return array.astype(dtype)
    wide = _f64_rounded_to_odd(array) if array.dtype.itemsize == 8 and array.dtype.kind in "iu" else \
        array.astype(np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        narrow = wide.astype(np.float32)
        finite = np.isfinite(wide)
        bits = narrow.view(np.uint32)
        away = finite & (np.abs(narrow.astype(np.float64)) > np.abs(wide))   # rounded up in magnitude, or to inf
        bits = bits - away.astype(np.uint32)      # one step toward zero (the sign bit is apart; never below 0 there)
        inexact = finite & (bits.view(np.float32).astype(np.float64) != wide)
        bits = bits | inexact.astype(np.uint32)
    return np.asarray(bits, np.uint32).view(np.float32).astype(dtype)


def _f64_rounded_to_odd(integers: np.ndarray) -> np.ndarray:
    """64-bit integers as f64, rounded to odd: the high and low 32 bits are exact in f64, their sum rounds once,
    and the sum's exact error (Knuth's two-sum) says which way it rounded."""
    high = (integers >> 32).astype(np.float64) * 2.0**32      # (an arithmetic shift for int64)
    low = (integers & 0xFFFFFFFF).astype(np.float64)
    total = high + low
    low_part = total - high
    error = (high - (total - low_part)) + (low - low_part)
    bits = total.view(np.uint64) - ((error != 0) & ((error < 0) == (total > 0))).astype(np.uint64)   # toward zero
    bits = bits | (error != 0).astype(np.uint64)
    return np.asarray(bits, np.uint64).view(np.float64)


def finfo(dtype):
    """np.finfo of a float dtype, bfloat16's from ml_dtypes (numpy does not know it)."""
    dtype = np.dtype(dtype)
    if dtype.name == "bfloat16":
        import ml_dtypes     # imported already by whoever made the dtype: no cost (see `bfloat16`)
        return ml_dtypes.finfo(dtype)
    return np.finfo(dtype)


def _entry(dtype) -> tuple:
    dtype = np.dtype(dtype)
    entry = _ELEMENT_TYPES.get(dtype)
    if entry is None and dtype.name == "bfloat16":
        return _BFLOAT16
    if entry is None:
        raise TypeError(f"dtype {dtype} is not supported; supported: "
                        f"{', '.join(str(d) for d in supported_dtypes())}")
    return entry


def supported_dtypes() -> tuple:
    """Every dtype hlojit has, bfloat16 after float16 (importing ml_dtypes: `bfloat16`)."""
    dtypes = list(_ELEMENT_TYPES)
    after_f16 = dtypes.index(np.dtype(np.float16)) + 1
    return (*dtypes[:after_f16], bfloat16(), *dtypes[after_f16:])


def __getattr__(name: str):
    if name == "SUPPORTED_DTYPES":      # a module attribute computed on use: it holds bfloat16 (`bfloat16`)
        return supported_dtypes()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def element_type(dtype) -> ir.Type:
    """The MLIR element type of a numpy dtype (in the current context)."""
    return _entry(dtype)[1]()


def tensor_type(shape, dtype) -> ir.RankedTensorType:
    return ir.RankedTensorType.get(list(shape), element_type(dtype))


def dtype_of(t: ir.Type) -> np.dtype:
    """The numpy dtype of an MLIR element type or tensor type."""
    t = t.maybe_downcast()
    if isinstance(t, ir.RankedTensorType):
        t = t.element_type
    spelled = str(t)
    if spelled == "bf16":
        return bfloat16()
    try:
        return _BY_SPELLING[spelled]
    except KeyError:
        raise TypeError(f"MLIR element type {t} has no numpy dtype here") from None


def shape_of(t: ir.Type) -> tuple:
    return tuple(ir.RankedTensorType(t).shape)


def spelling(dtype) -> str:
    """The short MLIR name of a dtype: f32, i1, ui8, complex<f32> ..."""
    return _entry(dtype)[0]


def short_signature(shape, dtype) -> str:
    """`f32[2,3]` style, used in messages and cache reports."""
    return f"{spelling(dtype)}[{','.join(str(d) for d in shape)}]"


def abbreviated(parts, limit: int = 8, sep: str = ", ") -> str:
    """parts joined by commas, the first `limit` of them and a count of the rest: a model's 127 parameters made
    a 10 KB line of HLOJIT_LOG=compiles and of a first call's miss reason."""
    parts = list(parts)
    shown = sep.join(parts[:limit])
    return shown if len(parts) <= limit else f"{shown}{sep}... ({len(parts) - limit} more, {len(parts)} in all)"


def attr_ints(op, name: str) -> list[int]:
    """An op's array-of-i64 attribute (dimensions, strides, fft_length ...) as Python ints."""
    return [int(v) for v in ir.DenseI64ArrayAttr(op.attributes[name])]


def enum_attr(op, name: str) -> str:
    """An op's enum attribute by its value: `#stablehlo<comparison_direction LT>` -> "LT"."""
    return str(op.attributes[name]).rstrip(">").split()[-1]


def dot_dimensions(op) -> tuple[list[int], list[int], list[int], list[int]]:
    """(lhs_batch, rhs_batch, lhs_contract, rhs_contract) of a stablehlo.dot_general, read back from the
    attribute stablehlo.dot_general writes."""
    text = str(op.attributes["dot_dimension_numbers"])

    def dims(name):
        found = re.search(name + r" = \[([\d, ]*)\]", text)
        return [int(v) for v in found.group(1).split(",") if v.strip()] if found else []
    return tuple(dims(f"{side}_{kind}_dimensions") for kind in ("batching", "contracting") for side in ("lhs", "rhs"))


_CONV_LABELS = re.compile(r"\[([^\]]*)\]x\[([^\]]*)\]->\[([^\]]*)\]")


def conv_labels(text: str) -> tuple[list[str], list[str], list[str]]:
    """A convolution's dimension labels, lhs, rhs and result (["b", "0", "1", "f"], ["0", "1", "i", "o"] ...),
    from its attribute's text (`#stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>`, or the bare spec).
    The one reader of convolution dimension numbers, for every stage; a ValueError for MLIR's raw form."""
    found = _CONV_LABELS.search(text)
    if found is None:
        raise ValueError(f"convolution dimension numbers in a form hlojit does not read: {text}")
    return tuple([t.strip() for t in part.split(",")] for part in found.groups())


def dimension_numbers(text: str) -> dict:
    """A gather's or scatter's dimension numbers, from the attribute's text (`#stablehlo.gather<offset_dims =
    [1], ..., index_vector_dim = 1>`), as {field: [ints] or int}; what MLIR leaves out (empty lists,
    index_vector_dim = 0) reads as [] and 0. The one reader of these attributes, for every stage."""
    fields = collections.defaultdict(list)
    fields.update({name: [int(v) for v in values.split(",") if v.strip()]
                   for name, values in re.findall(r"(\w+) = \[([-\d, ]*)\]", text)})
    found = re.search(r"index_vector_dim = (\d+)", text)
    fields["index_vector_dim"] = int(found.group(1)) if found else 0
    return fields


def _dense_from_text(text: str, dtype) -> np.ndarray:
    """Elements of a printed dense attribute whose type the MLIR bindings cannot hand to numpy (bf16):
    `dense<[1.5, 0x7FC0]> : ...` (decimal values, or bit patterns for nan/inf) or `dense<"0x...">`; complex
    elements print as `(re,im)`."""
    if dtype.kind == "c":  # `(re,im)` pairs, or the raw bytes: parsed as the parts' floats, then viewed
        return _dense_from_text(text.replace("(", " ").replace(")", " "), np.dtype(f"f{dtype.itemsize // 2}")
                                ).view(dtype)
    body = text[text.index("<") + 1:text.rindex("> :")].strip()
    bits = np.dtype(f"u{dtype.itemsize}")
    if body.startswith('"0x'):
        return np.frombuffer(bytes.fromhex(body[3:-1]), dtype=bits).view(dtype)
    tokens = [t for t in body.replace("[", " ").replace("]", " ").replace(",", " ").split() if t]
    return np.array([np.array(int(t, 16), bits).view(dtype) if t.startswith("0x") else np.array(float(t), dtype)
                     for t in tokens], dtype=dtype)


def _balanced(text: str, start: int) -> int:
    """The index just past the `>` closing the first `<` at or after start."""
    depth, i = 0, text.index("<", start)
    while True:
        depth += {"<": 1, ">": -1}.get(text[i], 0)
        i += 1
        if depth == 0:
            return i


def _dense_text(op_text: str) -> str:
    """`dense<...> : tensor<...>` out of an op's text, custom (`%c = stablehlo.constant dense<..> : ..`) or
    generic (`"stablehlo.constant"() <{value = dense<..> : tensor<..>}> : ...`)."""
    start = op_text.index("dense<")
    end = _balanced(op_text, start)
    return op_text[start:_balanced(op_text, end)]


def constant_value(op) -> np.ndarray:
    """The array a `stablehlo.constant` holds, splats expanded, C-contiguous."""
    dtype, shape = dtype_of(op.result.type), shape_of(op.result.type)
    if dtype.kind == "c":  # the bindings cannot hand out a complex attribute (`.attr` of it even aborts the
        # process): read its text from the NamedAttribute, whose printing is the attribute's alone. The op's own
        # text costs time in proportion to its function (str(op) verifies and numbers the function: 11 ms an op
        # in a complex svd's loops; get_asm's local scope still ~0.6 ms an op in test_linalg_complex's module,
        # 2.8 s of its 6 s of rewrites; the NamedAttribute 0.01 ms)
        names = list(op.operation.attributes)
        text = str(op.operation.attributes[names.index("value")])
        value = _dense_from_text(_dense_text(text), dtype)
    else:
        attr = op.attributes["value"]
        try:
            value = np.array(attr)
        except (TypeError, ValueError):  # bf16: the bindings reject it, its printed form does not
            value = _dense_from_text(str(attr), dtype)
    value = value.astype(dtype)
    if value.size == 1 and value.shape != shape:  # a splat
        value = np.broadcast_to(value.reshape(()), shape)
    return np.array(value.reshape(shape), order="C")  # (np.ascontiguousarray makes 0-d arrays 1-d)


def all_alike(array: np.ndarray) -> bool:
    """Whether every element of array has the same bits (NaNs and signed zeros too); an empty one counts."""
    if array.size <= 1:     # a scalar, or nothing at all (an empty array has no rows to compare)
        return True
    rows = np.ascontiguousarray(array).reshape(array.size, -1).view(np.uint8)
    return bool((rows == rows[:1]).all())


def is_splat_constant(op) -> bool:
    """Whether op is a `stablehlo.constant` of one value repeated. A complex one is read through constant_value:
    the bindings cannot hand out its attribute (`op.attributes["value"]` raises TypeError)."""
    if op is None or op.name != "stablehlo.constant":
        return False
    if dtype_of(op.result.type).kind == "c":
        return all_alike(constant_value(op))
    return ir.DenseElementsAttr(op.attributes["value"]).is_splat


def composite_attributes(op) -> dict:
    """The int composite_attributes of a composite op (stablehlo.composite's builder makes them i64; a printed
    module leaves an empty dictionary out)."""
    if "composite_attributes" not in op.attributes:
        return {}
    return {a.name: ir.IntegerAttr(a.attr).value for a in ir.DictAttr(op.attributes["composite_attributes"])}
