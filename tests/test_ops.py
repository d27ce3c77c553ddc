"""Op-table driven numeric tests: every row of the UNARY, BINARY, COMPARISONS and REDUCTIONS tables, plus
matmul/dot, where, astype, the shape ops and array creation, on every backend in `conftest.BACKENDS`,
compared with numpy (each elementwise row's own `numpy` reference) within `conftest.TOLERANCES`.

How it is organised
- A `Case` is one op applied to one set of inputs: a traced function, the numpy inputs, numpy's answer and
  hlojit's result dtype. Cases are built once, at collection, into *groups* (e.g. "unary-f32": every unary
  row that takes f32, on every test shape, plus the nan/inf specials).
- Compiling costs ~0.4 s per IREE module, so a group is ONE jitted function that takes the inputs of all
  its cases and returns all their results: the whole file compiles a few dozen modules per IREE backend.
  The group runs once per backend (lazily, cached in `_RESULTS`); each case is still its own pytest item,
  so a failure names the op, dtype, shapes and backend, and a known problem can be xfailed case by case.
- numpy's answer is computed on the inputs cast to hlojit's result dtype (hlojit, like JAX, promotes
  int -> float32 where numpy would give float64), in float64 for the narrower float types, then rounded to
  the result dtype. The result dtype itself is derived here from the op's rules, independently of hlojit.
"""
from __future__ import annotations

import dataclasses
import math
import warnings
import zlib
from typing import Callable

import ml_dtypes
import numpy as np
import pytest

import hlojit as hj
from hlojit import ops
from hlojit.frontend.ops.elementwise import BINARY, COMPARISONS, UNARY
from hlojit.frontend.ops.reductions import REDUCTIONS

from conftest import BACKENDS, assert_close

F16, BF16, F32, F64 = np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16), np.dtype(np.float32), np.dtype(np.float64)
I8, I16, I32, U8, U32, BOOL = (np.dtype(t) for t in (np.int8, np.int16, np.int32, np.uint8, np.uint32, np.bool_))
SHORT = {F16: "f16", BF16: "bf16", F32: "f32", F64: "f64", I8: "i8", I16: "i16", I32: "i32", U8: "u8",
         U32: "u32", BOOL: "bool"}
MAIN_DTYPES = (F32, F64, I32, BOOL)        # every op, every shape
EXTRA_DTYPES = (F16, BF16, I8, U8)         # every op that takes them, on fewer shapes
FLOATS = (F16, BF16, F32, F64)

IREE = tuple(b for b in BACKENDS if b.startswith("iree:"))


def kind(dtype) -> str:
    """The row `kinds` letter of a dtype: b(ool) i(nt) u(nsigned) f(loat)."""
    return "f" if dtype in FLOATS else dtype.kind


def shape_str(shape) -> str:
    return "x".join(map(str, shape)) if shape else "scalar"


# --- cases ---------------------------------------------------------------------------------------

@dataclasses.dataclass
class Case:
    id: str                          # names op, dtype and shapes: "exp-f32-2x3"
    fn: Callable                     # traced: fn(*inputs) -> Tensor
    args: tuple                      # numpy inputs
    expected: np.ndarray             # numpy's answer, already in `dtype`
    dtype: np.dtype                  # hlojit's result dtype
    scale: dict = dataclasses.field(default_factory=dict)   # backend -> tolerance multiplier
    exact: bool = False              # bit-exact comparison (data movement, conversions, creation)


def rng_for(name: str) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(name.encode()))


def values(dtype, shape, domain: str, rng) -> np.ndarray:
    """Random inputs of `dtype` from an input domain (see the table in the code)."""
    dtype = np.dtype(dtype)
    if dtype == BOOL:
        return rng.random(shape) < 0.5
    if kind(dtype) == "f":
        lo, hi = {"any": (-5, 5), "pos": (0.1, 10), "gt-1": (-0.9, 10), "small": (-2, 2), "exp": (-2, 2),
                  "base": (0.2, 3), "unit": (0.6, 1.4), "nonzero": (0.5, 5)}[domain]
        x = rng.uniform(lo, hi, shape)
        if domain == "nonzero":
            x *= rng.choice([-1, 1], shape)
        if domain in ("any", "small") and x.size:   # some exact halves: rounding ties, floor/ceil of .5
            flat = x.reshape(-1)
            flat[::3] = np.round(flat[::3] * 2) / 2
        return x.astype(dtype)
    info = np.iinfo(dtype)
    signed = dtype.kind == "i"
    wide = (-50, 50) if dtype.itemsize > 1 else (info.min, info.max)
    lo, hi = {"any": wide, "pos": (1, 10), "gt-1": (0, 10), "small": (-3, 3), "exp": (0, 4), "base": (-3, 3),
              "unit": (-2, 2), "nonzero": (1, 20), "shift": (0, 8 * dtype.itemsize - 1)}[domain]
    if not signed:
        lo = max(lo, 0)
    x = rng.integers(lo, hi, shape, endpoint=True)
    if domain == "nonzero" and signed:
        x *= rng.choice([-1, 1], shape)
    return x.astype(dtype)


def compute(ref, dtype, *args):
    """numpy's answer for hlojit's result `dtype`: narrow floats are computed in float64 and rounded once."""
    wide = [a.astype(F64) if a.dtype in FLOATS else a for a in args]
    with np.errstate(all="ignore"):
        return np.asarray(ref(*wide)).astype(dtype)


# Elementwise rows whose inputs need a domain; everything else takes "any".
UNARY_DOMAIN = {"log": "pos", "sqrt": "pos", "rsqrt": "pos", "log1p": "gt-1", "reciprocal": "nonzero"}
BINARY_DOMAIN = {  # name -> (domain of x, domain of y)
    "divide": ("any", "nonzero"), "floor_divide": ("any", "nonzero"), "remainder": ("any", "nonzero"),
    "power": ("base", "exp"), "left_shift": ("any", "shift"), "right_shift": ("any", "shift"),
}
BOOL_RESULT = {"logical_not", "isfinite", "isnan", "isinf", "logical_and", "logical_or", "logical_xor",
               *COMPARISONS}
# ops whose IREE implementations are polynomial approximations rather than correctly rounded
TRANSCENDENTAL = {"exp", "expm1", "log", "log1p", "tanh", "sigmoid", "sin", "cos", "softplus", "power", "rsqrt"}


def takes(row, dtype) -> bool:
    return row.to_float or kind(dtype) in row.kinds


def result_dtype(name, row, dtype):
    if name in BOOL_RESULT:
        return BOOL
    if row is not None and row.to_float and dtype not in FLOATS:
        return F32
    return dtype


# Shapes of unary inputs (ranks 0-4, a 0-size array) and binary pairs (broadcasting; ranks 0-4).
UNARY_SHAPES = [(), (0, 3), (7,), (2, 3), (2, 3, 4), (2, 1, 3, 2)]
UNARY_SHAPES_EXTRA = [(), (2, 3)]
BINARY_SHAPES = [((), ()), ((5,), ()), ((), (5,)), ((2, 3), (2, 3)), ((2, 1, 3), (4, 3)), ((0, 3), (3,)),
                 ((2, 1, 3, 1), (3, 2))]
BINARY_SHAPES_EXTRA = [((2, 3), (2, 3)), ((2, 1, 3), (4, 3))]

# Specials for float ops: nan/inf propagation, signed zeros, ties, large and tiny values.
SPECIALS = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 2.5, -2.5, 0.5, 3.0, -7.25, 1e30, -1e-30]


def unary_fn(name):
    return lambda x: getattr(ops, name)(x)


def binary_fn(name):
    return lambda x, y: getattr(ops, name)(x, y)


def elementwise_case(name, row, ref, args, cid, in_dtype):
    out = result_dtype(name, row, in_dtype)
    inputs = [a.astype(out) if row is not None and row.to_float else a for a in args]
    fn = unary_fn(name) if len(args) == 1 else binary_fn(name)
    scale = {b: 8.0 for b in IREE} if name in TRANSCENDENTAL else {}
    return Case(cid, fn, tuple(args), compute(ref, out, *inputs), out, scale)


def unary_cases(dtype):
    shapes = UNARY_SHAPES if dtype in MAIN_DTYPES else UNARY_SHAPES_EXTRA
    cases = []
    for name, row in UNARY.items():
        if not takes(row, dtype):
            continue
        for shape in shapes:
            cid = f"{name}-{SHORT[dtype]}-{shape_str(shape)}"
            x = values(dtype, shape, UNARY_DOMAIN.get(name, "any"), rng_for(cid))
            cases.append(elementwise_case(name, row, row.numpy, (x,), cid, dtype))
        if dtype in (F32, F64):  # nan, inf, signed zeros, ties, out-of-domain inputs (log(-1) is nan)
            x = np.array(SPECIALS, dtype)
            cases.append(elementwise_case(name, row, row.numpy, (x,), f"{name}-{SHORT[dtype]}-specials", dtype))
    return cases


def binary_rows():
    """(name, row or None, numpy reference) for the binary and comparison tables."""
    for name, row in BINARY.items():
        yield name, row, row.numpy
    for name in COMPARISONS:
        yield name, None, getattr(np, name)


def binary_cases(dtype):
    pairs = BINARY_SHAPES if dtype in MAIN_DTYPES else BINARY_SHAPES_EXTRA
    cases = []
    for name, row, ref in binary_rows():
        if row is not None and not takes(row, dtype):
            continue
        dx, dy = BINARY_DOMAIN.get(name, ("any", "any"))
        if dtype == BOOL:
            dx = dy = "any"
        for sx, sy in pairs:
            cid = f"{name}-{SHORT[dtype]}-{shape_str(sx)},{shape_str(sy)}"
            rng = rng_for(cid)
            args = (values(dtype, sx, dx, rng), values(dtype, sy, dy, rng))
            cases.append(elementwise_case(name, row, ref, args, cid, dtype))
        if dtype != BOOL and name in ("divide", "floor_divide", "remainder"):
            # division by zero, all sign combinations: numpy gives x // 0 == x % 0 == 0 for integers
            # (inf/nan for floats); remainder takes the divisor's sign, floor_divide rounds toward -inf
            signs = [-7, -6, -1, 0, 1, 5, 7] if dtype.kind != "u" else [0, 1, 5, 7, 200]
            x = np.array(signs, dtype)[:, None]
            y = np.array([-3, -2, -1, 0, 1, 2, 3] if dtype.kind != "u" else [0, 1, 2, 3, 7], dtype)[None, :]
            cases.append(elementwise_case(name, row, ref, (x, y), f"{name}-{SHORT[dtype]}-signs-and-zero", dtype))
            if dtype.kind == "i":  # INT_MIN // -1 overflows (and traps in hardware); numpy wraps it
                lo = np.iinfo(dtype).min
                x = np.array([lo, lo, lo, lo + 1, -1], dtype)
                y = np.array([-1, 1, 0, -1, lo], dtype)
                cases.append(elementwise_case(name, row, ref, (x, y), f"{name}-{SHORT[dtype]}-int-min", dtype))
        if dtype.kind in "iu" and name in ("left_shift", "right_shift"):
            bits = 8 * dtype.itemsize  # shifts by >= the bit width: numpy gives 0 (or -1 for negatives >>)
            x = np.array([1, 3, 100, 7] + ([-8, -1] if dtype.kind == "i" else [200, 255]), dtype)[:, None]
            y = np.array([bits - 1, bits, bits + 1, 2 * bits], dtype)[None, :]
            cases.append(elementwise_case(name, row, ref, (x, y), f"{name}-{SHORT[dtype]}-wide-shift", dtype))
        if dtype in (F32, F64):
            s = np.array(SPECIALS, dtype)
            if name == "power":  # negative bases are a case of their own below
                x, y = np.abs(s)[:, None], s[None, :]
            else:
                x, y = s[:, None], s[None, :]
            cases.append(elementwise_case(name, row, ref, (x, y), f"{name}-{SHORT[dtype]}-specials", dtype))
            if name == "power":  # negative base, integer exponent: (-2)**3 == -8
                x = np.array([-2, -2, -1.5, -3, -0.5, -1], dtype)
                y = np.array([3, 2, 2, -1, 3, 0.5], dtype)
                cases.append(elementwise_case(name, row, ref, (x, y), f"power-{SHORT[dtype]}-negative-base", dtype))
        if dtype not in (BOOL, BF16, F16) and dtype in MAIN_DTYPES + (I8, U8):
            # a weakly typed Python scalar keeps the array's dtype, on either side
            scalar = {"power": 2, "left_shift": 3, "right_shift": 1}.get(name, 3 if kind(dtype) != "f" else 0.75)
            cid = f"{name}-{SHORT[dtype]}-python-scalar"
            x = values(dtype, (2, 3), dx, rng_for(cid))
            s_arr = np.array(scalar).astype(result_dtype(name, row, dtype) if row is not None and row.to_float
                                            else dtype)
            for side, fn, a in (("right", lambda x, n=name, s=scalar: getattr(ops, n)(x, s), (x, s_arr)),
                                ("left", lambda x, n=name, s=scalar: getattr(ops, n)(s, x), (s_arr, x))):
                if side == "left" and name in ("power", "left_shift", "right_shift", "divide", "floor_divide",
                                               "remainder"):
                    continue   # scalar ** x etc.: x is not in the divisor/exponent domain
                c = elementwise_case(name, row, ref, a, f"{cid}-{side}", dtype)
                c.fn, c.args = fn, (x,)
                cases.append(c)
    return cases


# --- reductions ----------------------------------------------------------------------------------

def accumulator(name, dtype):
    """hlojit's (and JAX's) result dtype of a reduction: small ints and bools sum in 32 bits."""
    if name in ("sum", "prod") and dtype in (BOOL, I8, I16):
        return I32
    if name in ("sum", "prod") and dtype == U8:
        return U32
    if name in ("any", "all"):
        return BOOL
    if name == "mean":
        return dtype if dtype in FLOATS else F32
    return dtype


REDUCTION_AXES = [  # (shape, axis, keepdims)
    ((), None, False), ((7,), 0, False), ((2, 3, 4), None, False), ((2, 3, 4), 0, False),
    ((2, 3, 4), -1, False), ((2, 3, 4), (0, 2), False), ((2, 3, 4), 1, True), ((2, 3, 4), None, True),
    ((2, 1, 3, 2), (1, 3), False), ((0, 3), 0, False), ((0, 3), 1, False), ((48, 64), None, False),
    ((48, 64), 1, False),
]
REDUCTION_AXES_EXTRA = [((2, 3, 4), None, False), ((2, 3, 4), 1, True), ((48, 64), 0, False)]


def reduction_refs():
    for name, (_, _, _, ref) in REDUCTIONS.items():
        yield name, getattr(ops, name), ref
    yield "mean", ops.mean, np.mean


def reduction_cases(dtype):
    cases = []
    layouts = REDUCTION_AXES if dtype in MAIN_DTYPES else REDUCTION_AXES_EXTRA
    for name, op, ref in reduction_refs():
        for shape, axis, keepdims in layouts:
            if name in ("max", "min") and 0 in shape:
                continue  # no identity: a ShapeError, tested in test_reduction_of_nothing_has_no_identity
            cid = f"{name}-{SHORT[dtype]}-{shape_str(shape)}-axis={axis}" + ("-keepdims" if keepdims else "")
            x = values(dtype, shape, "unit" if name == "prod" else "any", rng_for(cid))
            out = accumulator(name, dtype)
            inp = x.astype(out) if name != "any" and name != "all" else x
            with np.errstate(all="ignore"):
                wide = inp.astype(F64) if out in FLOATS else inp
                expected = np.asarray(ref(wide, axis=axis, keepdims=keepdims)).astype(out)
            fn = lambda x, op=op, axis=axis, keepdims=keepdims: op(x, axis=axis, keepdims=keepdims)
            # a float sum of n terms may differ from numpy's (pairwise) order by ~log2(n) roundings
            n = x.size // max(1, expected.size)
            scale = {b: max(1.0, math.log2(max(n, 1))) for b in BACKENDS} if out in FLOATS else {}
            cases.append(Case(cid, fn, (x,), expected, out, scale))
        if dtype in (F32, F64):  # nan and inf propagate through every reduction
            for which, row in (("nan", [1.0, np.nan, -2.0, 3.0]), ("inf", [1.0, np.inf, -2.0, 3.0]),
                               ("inf-inf", [np.inf, 1.0, -np.inf, 0.0])):
                x = np.array([row, [0.5, 2.0, -1.0, 4.0]], dtype)
                cid = f"{name}-{SHORT[dtype]}-{which}"
                out = accumulator(name, dtype)
                expected = compute(lambda a, ref=ref: ref(a, axis=1), out, x)
                cases.append(Case(cid, lambda x, op=op: op(x, axis=1), (x,), expected, out))
    return cases


# --- contractions --------------------------------------------------------------------------------

MATMUL_SHAPES = [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)), ((5, 2, 3), (5, 3, 4)),
                 ((5, 2, 3), (3, 4)), ((3,), (5, 3, 4)), ((2, 1, 2, 3), (3, 3, 4)), ((0, 3), (3, 4)),
                 ((2, 0), (0, 3)), ((16, 32), (32, 8))]
DOT_SHAPES = [((), (2, 3)), ((3,), (3,)), ((2, 3), (3,)), ((2, 3), (3, 4)), ((2, 3, 4), (4,)),
              ((2, 3, 4), (5, 4, 2)), ((0, 3), (3, 2))]


def contraction_cases(dtype):
    cases = []
    main = dtype in MAIN_DTYPES
    for name, op, ref, shapes in (("matmul", ops.matmul, np.matmul, MATMUL_SHAPES), ("dot", ops.dot, np.dot, DOT_SHAPES)):
        for sx, sy in (shapes if main else shapes[3:6]):
            cid = f"{name}-{SHORT[dtype]}-{shape_str(sx)},{shape_str(sy)}"
            rng = rng_for(cid)
            x, y = values(dtype, sx, "small", rng), values(dtype, sy, "small", rng)
            if dtype in FLOATS:
                expected = compute(ref, dtype, x, y)
            elif dtype == BOOL:
                expected = np.asarray(ref(x, y))
            else:  # integer products wrap like numpy's in the same width
                expected = np.asarray(ref(x.astype(np.int64), y.astype(np.int64))).astype(dtype)
            k = sx[-1] if sx else 1
            scale = {b: max(1.0, float(k)) for b in BACKENDS} if dtype in FLOATS else {}
            cases.append(Case(cid, lambda x, y, op=op: op(x, y), (x, y), expected, dtype, scale))
    return cases


# --- where, astype, promotion ----------------------------------------------------------------------

ASTYPE_DTYPES = (BOOL, I8, U8, I32, F16, BF16, F32, F64)


def astype_source(src, dst):
    """Inputs of `src` whose conversion to `dst` is defined (in range; truncation toward zero)."""
    if src == BOOL:
        return np.array([True, False, True])
    if kind(src) == "f":
        v = [0.0, -0.0, 1.0, 1.5, 2.7, 100.25, 126.9]
        if dst.kind == "i":
            v += [-1.5, -2.7, -100.9]
        if kind(dst) in "fb":
            v += [np.nan, np.inf, -np.inf, -3.25, 1e-3, 0.1]
        if kind(dst) == "f" and src.itemsize > dst.itemsize:
            v += [65519.0, 70000.0, 1.00390625, 1.005859375, 3e38 if src == F64 else 1.0]  # rounding, overflow
        if src == F64 and dst == F32:
            v += [1e300, 1 + 2.0 ** -30]
        return np.array(v).astype(src)
    v = [0, 1, 2, 100, 127]
    if src.kind == "i":
        v += [-1, -128]
    if src == I32:
        v += [300, -300, 65536 + 7, 16777217, 2 ** 31 - 1]  # wrap to narrow ints; round to float
    if dst.kind == "u" and src.kind == "i" and dst.itemsize >= src.itemsize:
        pass  # negative -> wider/equal unsigned wraps, numpy does the same
    if kind(dst) == "f" and dst.itemsize == 2 and src == I32:
        v = [x for x in v if abs(x) < 65504]
    return np.array(v).astype(src)


def astype_cases():
    cases = []
    for src in ASTYPE_DTYPES:
        for dst in ASTYPE_DTYPES:
            x = astype_source(src, dst)
            with np.errstate(all="ignore"):
                expected = x.astype(dst)
            cases.append(Case(f"astype-{SHORT[src]}-to-{SHORT[dst]}", lambda x, d=dst: ops.astype(x, d), (x,),
                              expected, dst, exact=True))
    return cases


# (x dtype, y dtype, result dtype): JAX's promotion lattice (int meets float in the float; unsigned meets
# signed one size up; bf16 + f16 is f32)
PROMOTIONS = [(I32, F32, F32), (U8, I8, I16), (I32, F16, F16), (BF16, F16, F32), (BOOL, I8, I8), (F32, F64, F64),
              (U8, I32, I32), (BOOL, F32, F32), (I8, U32, np.dtype(np.int64))]


def promotion_cases():
    cases = []
    for dx, dy, out in PROMOTIONS:
        cid = f"add-promote-{SHORT.get(dx, dx.name)}+{SHORT.get(dy, dy.name)}"
        rng = rng_for(cid)
        x, y = values(dx, (2, 3), "small", rng), values(dy, (3,), "small", rng)
        expected = compute(np.add, out, x.astype(out), y.astype(out))
        cases.append(Case(cid, lambda x, y: ops.add(x, y), (x, y), expected, out))
    return cases


def where_cases():
    cases = []
    rng = rng_for("where")
    cond = rng.random((2, 3)) < 0.5
    for dtype in (F32, F64, I32, BOOL, F16, I8):
        x, y = values(dtype, (2, 3), "any", rng), values(dtype, (2, 3), "any", rng)
        cases.append(Case(f"where-{SHORT[dtype]}-2x3", lambda c, x, y: ops.where(c, x, y), (cond, x, y),
                          np.where(cond, x, y), dtype, exact=True))
    c3, x21, y23 = rng.random(3) < 0.5, values(F32, (2, 1), "any", rng), values(F32, (2, 3), "any", rng)
    ci = np.array([[0, 3, -1], [2, 0, 0]], np.int32)
    x_nan = np.array([np.nan, np.inf, -0.0], np.float32)
    extra = [
        ("where-broadcast-3,2x1,2x3", lambda c, x, y: ops.where(c, x, y), (c3, x21, y23), np.where(c3, x21, y23), F32),
        ("where-int-condition", lambda c, x, y: ops.where(c, x, y), (ci, y23, x21), np.where(ci, y23, x21), F32),
        ("where-promote-i32,f32", lambda c, x, y: ops.where(c, x, y), (cond, ci, y23),
         np.where(cond, ci.astype(F32), y23), F32),
        ("where-python-scalars", lambda c, y: ops.where(c, y, 0.0), (cond, y23), np.where(cond, y23, F32.type(0)), F32),
        ("where-scalar-condition", lambda c, x, y: ops.where(c, x, y), (np.bool_(True), x21, y23),
         np.where(True, x21, y23), F32),
        ("where-0-size", lambda c, x, y: ops.where(c, x, y), (np.zeros((0, 3), bool), y23[:1], np.float32(2)),
         np.where(np.zeros((0, 3), bool), y23[:1], np.float32(2)), F32),
        ("where-nan-inf", lambda c, x, y: ops.where(c, x, y), (c3, x_nan, np.float32(1)),
         np.where(c3, x_nan, np.float32(1)), F32),
    ]
    cases += [Case(cid, fn, args, np.asarray(exp).astype(dt), dt, exact=True) for cid, fn, args, exp, dt in extra]
    return cases


# --- shape ops and creation ----------------------------------------------------------------------

def shape_cases():
    cases = []
    layouts = [  # (id, hlojit fn, numpy fn, input shape)
        ("reshape-2x3x4-to-6x4", lambda x: ops.reshape(x, (6, 4)), lambda x: x.reshape(6, 4), (2, 3, 4)),
        ("reshape-minus-one", lambda x: ops.reshape(x, (-1, 2)), lambda x: x.reshape(-1, 2), (2, 3, 4)),
        ("reshape-to-scalar", lambda x: ops.reshape(x, ()), lambda x: x.reshape(()), (1, 1)),
        ("reshape-scalar-to-1x1x1", lambda x: ops.reshape(x, (1, 1, 1)), lambda x: x.reshape(1, 1, 1), ()),
        ("reshape-0-size", lambda x: ops.reshape(x, (3, 0)), lambda x: x.reshape(3, 0), (0, 3)),
        ("transpose-reverse", lambda x: ops.transpose(x), lambda x: x.T, (2, 3, 4)),
        ("transpose-rank4", lambda x: ops.transpose(x, (2, 0, 3, 1)), lambda x: x.transpose(2, 0, 3, 1), (2, 3, 4, 5)),
        ("transpose-negative-axes", lambda x: ops.transpose(x, (-1, 0, 1)), lambda x: x.transpose(-1, 0, 1),
         (2, 3, 4)),
        ("transpose-0-size", lambda x: ops.transpose(x), lambda x: x.T, (0, 3)),
        ("expand_dims-0", lambda x: ops.expand_dims(x, 0), lambda x: np.expand_dims(x, 0), (2, 3)),
        ("expand_dims-minus-one", lambda x: ops.expand_dims(x, -1), lambda x: np.expand_dims(x, -1), (2, 3)),
        ("expand_dims-tuple", lambda x: ops.expand_dims(x, (0, 3)), lambda x: np.expand_dims(x, (0, 3)), (2, 3)),
        ("expand_dims-scalar", lambda x: ops.expand_dims(x, 0), lambda x: np.expand_dims(x, 0), ()),
        ("squeeze-all", lambda x: ops.squeeze(x), lambda x: np.squeeze(x), (1, 3, 1, 2)),
        ("squeeze-axis", lambda x: ops.squeeze(x, 2), lambda x: np.squeeze(x, 2), (1, 3, 1, 2)),
        ("squeeze-to-scalar", lambda x: ops.squeeze(x), lambda x: np.squeeze(x), (1, 1)),
        ("broadcast_to-new-dims", lambda x: ops.broadcast_to(x, (2, 4, 3)), lambda x: np.broadcast_to(x, (2, 4, 3)),
         (3,)),
        ("broadcast_to-stretch", lambda x: ops.broadcast_to(x, (2, 5, 3)), lambda x: np.broadcast_to(x, (2, 5, 3)),
         (2, 1, 3)),
        ("broadcast_to-scalar", lambda x: ops.broadcast_to(x, (2, 3)), lambda x: np.broadcast_to(x, (2, 3)), ()),
        ("broadcast_to-0-size", lambda x: ops.broadcast_to(x, (2, 0, 3)), lambda x: np.broadcast_to(x, (2, 0, 3)),
         (0, 3)),
        ("method-reshape-T", lambda x: x.reshape(4, 6).T, lambda x: x.reshape(4, 6).T, (2, 3, 4)),
    ]
    for dtype in (F32, I32, BOOL, F64, I8):
        for cid, fn, ref, shape in layouts:
            if dtype not in (F32, I32) and not cid.startswith(("reshape-2x3x4", "transpose-rank4", "broadcast_to-stretch")):
                continue
            x = values(dtype, shape, "any", rng_for(cid))
            cases.append(Case(f"{cid}-{SHORT[dtype]}", fn, (x,), np.ascontiguousarray(ref(x)), dtype, exact=True))
    return cases


def creation_cases():
    specs = [  # (id, hlojit fn, numpy answer)
        ("arange-5", lambda: ops.arange(5), np.arange(5, dtype=np.int32)),
        ("arange-start-stop-step", lambda: ops.arange(2, 11, 3), np.arange(2, 11, 3, dtype=np.int32)),
        ("arange-negative-step", lambda: ops.arange(5, 0, -1), np.arange(5, 0, -1, dtype=np.int32)),
        ("arange-float", lambda: ops.arange(0.0, 1.0, 0.25), np.arange(0.0, 1.0, 0.25, dtype=np.float32)),
        ("arange-f64", lambda: ops.arange(-3, 3, dtype=np.float64), np.arange(-3, 3, dtype=np.float64)),
        ("arange-u8", lambda: ops.arange(250, 256, dtype=np.uint8), np.arange(250, 256, dtype=np.uint8)),
        ("arange-empty", lambda: ops.arange(3, 3), np.arange(3, 3, dtype=np.int32)),
        ("zeros-2x3", lambda: ops.zeros((2, 3)), np.zeros((2, 3), np.float32)),
        ("zeros-scalar-i32", lambda: ops.zeros((), np.int32), np.zeros((), np.int32)),
        ("zeros-0-size", lambda: ops.zeros((0, 3)), np.zeros((0, 3), np.float32)),
        ("zeros-int-shape-f64", lambda: ops.zeros(4, np.float64), np.zeros(4, np.float64)),
        ("ones-2x3x4", lambda: ops.ones((2, 3, 4)), np.ones((2, 3, 4), np.float32)),
        ("ones-bool", lambda: ops.ones((2, 2), bool), np.ones((2, 2), bool)),
        ("ones-bf16", lambda: ops.ones((3,), ml_dtypes.bfloat16), np.ones((3,), ml_dtypes.bfloat16)),
        ("full-int", lambda: ops.full((2, 2), 7), np.full((2, 2), 7, np.int32)),
        ("full-float", lambda: ops.full((3,), 2.5), np.full((3,), 2.5, np.float32)),
        ("full-bool", lambda: ops.full((2,), True), np.full((2,), True)),
        ("full-f64", lambda: ops.full((2, 1, 3), 0.1, np.float64), np.full((2, 1, 3), 0.1, np.float64)),
        ("full-i8-scalar", lambda: ops.full((), -128, np.int8), np.full((), -128, np.int8)),
        ("full-nan", lambda: ops.full((2,), float("nan")), np.full((2,), np.nan, np.float32)),
        ("full-rank4", lambda: ops.full((1, 2, 1, 2), -3.5, np.float16), np.full((1, 2, 1, 2), -3.5, np.float16)),
    ]
    return [Case(cid, fn, (), expected, expected.dtype, exact=True) for cid, fn, expected in specs]


# --- groups: one compiled module per (backend, group) -----------------------------------------------

def _build_groups():
    with warnings.catch_warnings(), np.errstate(all="ignore"):  # numpy's answers for 0-size means, x/0 ...
        warnings.simplefilter("ignore")
        return _groups()


def _groups():
    groups = {}
    for dtype in MAIN_DTYPES + EXTRA_DTYPES:
        groups[f"unary-{SHORT[dtype]}"] = unary_cases(dtype)
        groups[f"binary-{SHORT[dtype]}"] = binary_cases(dtype)
        groups[f"reduce-{SHORT[dtype]}"] = reduction_cases(dtype)
    for dtype in (F32, F64, I32, BOOL, F16, BF16, I8):
        groups[f"contract-{SHORT[dtype]}"] = contraction_cases(dtype)
    groups["astype"] = astype_cases()
    groups["where-promote"] = where_cases() + promotion_cases()
    groups["shape-create"] = shape_cases() + creation_cases()
    for name, cases in groups.items():
        ids = [c.id for c in cases]
        assert len(ids) == len(set(ids)), f"duplicate case ids in {name}"
    return groups


GROUPS = _build_groups()


# --- known problems: (backend, group, case id predicate) -> reason ---------------------------------
# Compile failures: the cases are compiled in a module of their own so the rest of the group still runs.

def compile_failure(backend, group, case) -> str | None:
    return None


def wrong_answer(backend, group, case) -> str | None:
    return None


_RESULTS: dict = {}


def _run_cases(backend, cases):
    """Compile one module computing every case; returns {case id: numpy result or the exception}."""
    fn = hj.jit(lambda inputs: [c.fn(*args) for c, args in zip(cases, inputs)], backend=backend)
    try:
        outputs = fn([c.args for c in cases])
        return {c.id: np.asarray(out) for c, out in zip(cases, outputs)}
    except Exception as e:  # every case of the module reports the error
        return {c.id: e for c in cases}


def result(backend, group, case):
    key = (backend, group, compile_failure(backend, group, case) is not None)
    if key not in _RESULTS:
        cases = [c for c in GROUPS[group] if (compile_failure(backend, group, c) is not None) == key[2]]
        _RESULTS[key] = _run_cases(backend, cases)
    return _RESULTS[key][case.id]


def _params():
    for backend in BACKENDS:
        for group, cases in GROUPS.items():
            for case in cases:
                marks = []
                reason = compile_failure(backend, group, case)
                if reason:
                    marks.append(pytest.mark.xfail(reason=reason, raises=hj.CompileError, strict=True))
                reason = wrong_answer(backend, group, case)
                if reason:
                    marks.append(pytest.mark.xfail(reason=reason, raises=AssertionError, strict=True))
                yield pytest.param(backend, group, case, id=f"{backend}-{case.id}", marks=marks)


def describe_inputs(args) -> str:
    parts = []
    for a in args:
        a = np.asarray(a)
        text = np.array2string(a, threshold=30, max_line_width=200) if a.size <= 30 else "..."
        parts.append(f"{a.dtype}{list(a.shape)} {text}")
    return "; ".join(parts)


@pytest.mark.parametrize("backend, group, case", list(_params()))
def test_op(backend, group, case):
    actual = result(backend, group, case)
    if isinstance(actual, Exception):
        raise actual
    where = f"{case.id} on {backend} (module {group}); inputs: {describe_inputs(case.args)}"
    try:
        if case.exact:
            assert actual.shape == case.expected.shape, f"shape {actual.shape} != {case.expected.shape}"
            assert actual.dtype == case.dtype, f"dtype {actual.dtype} != {case.dtype}"
            np.testing.assert_array_equal(actual, case.expected)
        else:
            assert_close(actual, case.expected, case.dtype, scale=case.scale.get(backend, 1.0))
    except AssertionError as e:
        raise AssertionError(f"{where}\n{e}") from None


# --- trace-time checks (no compiling) --------------------------------------------------------------

def _trace(fn, *args):
    return hj.jit(fn, backend="reference").lower(*args)


@pytest.mark.parametrize("name", sorted(UNARY) + sorted(BINARY))
def test_rejected_dtypes(name):
    """Every dtype a row's `kinds` leaves out is refused at trace time with a DTypeError that names the op."""
    row = UNARY.get(name) or BINARY[name]
    for dtype in MAIN_DTYPES + EXTRA_DTYPES:
        if takes(row, dtype):
            continue
        x = np.zeros((2,), dtype)
        fn = unary_fn(name) if name in UNARY else binary_fn(name)
        with pytest.raises(hj.DTypeError, match=name):
            _trace(fn, *([x] if name in UNARY else [x, x]))


@pytest.mark.parametrize("name", ["max", "min"])
def test_reduction_of_nothing_has_no_identity(name):
    with pytest.raises(hj.ShapeError, match="zero-size"):
        _trace(lambda x: getattr(ops, name)(x, axis=0), np.zeros((0, 3), np.float32))


@pytest.mark.parametrize("sx, sy", [((2, 3), (4, 3)), ((3,), (4,)), ((2, 1, 3), (2, 4))])
def test_incompatible_shapes(sx, sy):
    with pytest.raises(hj.ShapeError):
        _trace(lambda x, y: ops.matmul(x, y) if len(sx) != 3 else ops.add(x, y),
               np.zeros(sx, np.float32), np.zeros(sy, np.float32))
