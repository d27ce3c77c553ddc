"""The cases of tests/test_ops.py's op table: every row of the UNARY, BINARY, COMPARISONS and REDUCTIONS
tables, matmul/dot, where, astype, promotion, the shape ops and array creation, each a `Case` (one op on one
set of inputs: a traced function, the numpy inputs, numpy's answer and hlojit's result dtype).

- Shapes rotate over the rows: within a dtype, row i gets the i-th test shape (ranks 0-4, a 0-size array;
  for binary rows broadcasting pairs), so every shape meets many rows without compiling rows x shapes.
- numpy's answer is computed on the inputs cast to hlojit's result dtype (hlojit, like JAX, promotes
  int -> float32 where numpy gives float64), in float64 for the narrower floats, then rounded once to the
  result dtype. The result dtype itself is derived here from the op's rules, independently of hlojit.
"""
from __future__ import annotations

import dataclasses
import math
import zlib
from typing import Callable

import ml_dtypes
import numpy as np

from hlojit import ops
from hlojit.frontend.ops.elementwise import BINARY, COMPARISONS, UNARY
from hlojit.frontend.ops.reductions import REDUCTIONS

from conftest import BACKENDS

F16, BF16, F32, F64 = np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16), np.dtype(np.float32), np.dtype(np.float64)
I8, I16, I32, I64, U8, U32, BOOL = (np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64, np.uint8,
                                                           np.uint32, np.bool_))
SHORT = {F16: "f16", BF16: "bf16", F32: "f32", F64: "f64", I8: "i8", I16: "i16", I32: "i32", I64: "i64",
         U8: "u8", U32: "u32", BOOL: "bool"}
MAIN_DTYPES = (F32, F64, I32, BOOL)        # every row, every shape, the specials
EXTRA_DTYPES = (F16, BF16, I8, U8)         # every row that takes them, on fewer shapes
FLOATS = (F16, BF16, F32, F64)
IREE = tuple(b for b in BACKENDS if b.startswith("iree:"))


def kind(dtype) -> str:
    """The row `kinds` letter of a dtype: b(ool) i(nt) u(nsigned) f(loat)."""
    return "f" if dtype in FLOATS else dtype.kind


def shape_str(shape) -> str:
    return "x".join(map(str, shape)) if shape else "scalar"


@dataclasses.dataclass
class Case:
    id: str                          # names op, dtype and shapes: "exp-f32-2x3"
    fn: Callable                     # traced: fn(*inputs) -> Tensor
    args: tuple                      # numpy inputs
    expected: np.ndarray             # numpy's answer, already in `dtype`
    dtype: np.dtype                  # hlojit's result dtype
    scale: dict = dataclasses.field(default_factory=dict)   # backend -> tolerance multiplier
    exact: bool = False              # bit-exact comparison (data movement, conversions, creation)
    op: str = ""                     # the row name (for the known-problem tables)
    relative: bool = False           # relative tolerance only: no absolute floor (results near 0 matter)


def rng_for(name: str) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(name.encode()))


FLOAT_DOMAINS = {"any": (-5, 5), "pos": (0.1, 10), "gt-1": (-0.9, 10), "small": (-2, 2), "exp": (-2.5, 2.5),
                 "base": (0.2, 3), "unit": (0.6, 1.4), "nonzero": (0.5, 5), "open-unit": (-0.95, 0.95),
                 "ge1": (1.0, 10), "tan": (-1.4, 1.4)}


def values(dtype, shape, domain: str, rng) -> np.ndarray:
    """Random inputs of `dtype` from an input domain: any, pos(itive), gt-1, small, exp(onent), base,
    unit (near 1), nonzero (either sign), shift (0 .. bits-1)."""
    dtype = np.dtype(dtype)
    if dtype == BOOL:
        return rng.random(shape) < 0.5
    if kind(dtype) == "f":
        lo, hi = FLOAT_DOMAINS[domain]
        x = rng.uniform(lo, hi, shape)
        if domain == "nonzero":
            x *= rng.choice([-1, 1], shape)
        if domain in ("any", "small") and x.size:   # some exact halves: rounding ties, floor/ceil of .5
            flat = x.reshape(-1)
            flat[::3] = np.round(flat[::3] * 2) / 2
        return x.astype(dtype)
    info = np.iinfo(dtype)
    wide = (-50, 50) if dtype.itemsize > 1 else (info.min, info.max)
    lo, hi = {"any": wide, "pos": (1, 10), "gt-1": (0, 10), "small": (-3, 3), "exp": (0, 4), "base": (-3, 3),
              "unit": (-2, 2), "nonzero": (1, 20), "shift": (0, 8 * dtype.itemsize - 1), "open-unit": (-1, 1),
              "ge1": (1, 10), "tan": (-1, 1), "low": (0, info.max // 2)}[domain]
    if dtype.kind == "u":
        lo = max(lo, 0)
    x = rng.integers(lo, hi, shape, endpoint=True)
    if domain == "nonzero" and dtype.kind == "i":
        x *= rng.choice([-1, 1], shape)
    return x.astype(dtype)


def compute(ref, dtype, *args, native=False):
    """numpy's answer in hlojit's result `dtype`: narrow floats are computed in float64 and rounded once
    (`native`: in the dtype itself, for answers that depend on it, like nextafter's)."""
    wide = [a.astype(F64) if a.dtype in FLOATS and not native else a for a in args]
    return np.asarray(ref(*wide)).astype(dtype)


# --- elementwise: the UNARY, BINARY and COMPARISONS tables -------------------------------------------

UNARY_DOMAIN = {"log": "pos", "log2": "pos", "log10": "pos", "sqrt": "pos", "rsqrt": "pos", "lgamma": "pos",
                "log1p": "gt-1", "reciprocal": "nonzero", "arcsin": "open-unit", "arccos": "open-unit",
                "arctanh": "open-unit", "arccosh": "ge1", "tan": "tan"}
BINARY_DOMAIN = {  # name -> (domain of x, domain of y)
    "divide": ("any", "nonzero"), "floor_divide": ("any", "nonzero"), "remainder": ("any", "nonzero"),
    "power": ("base", "exp"), "left_shift": ("any", "shift"), "right_shift": ("any", "shift"),
}
BOOL_RESULT = {"logical_not", "isfinite", "isnan", "isinf", "logical_and", "logical_or", "logical_xor",
               *COMPARISONS}
# Rows whose answer is exact or correctly rounded (IEEE + - * / sqrt, rounding, comparisons, bit ops):
# compared at the dtype's tolerance. Every other row (exp, sin, erf ...) is a polynomial approximation, in
# IREE or in hlojit's own composites, whose last bits differ from numpy's libm by a few ulps: 8x the dtype
# tolerance (f32: 8e-6 relative) leaves room for that and for nothing more.
EXACT_ROWS = {"negative", "abs", "sign", "sqrt", "floor", "ceil", "round", "trunc", "invert", "logical_not",
              "isfinite", "isnan", "isinf", "square", "reciprocal", "relu", "relu6", "add", "subtract", "multiply",
              "divide", "floor_divide", "remainder", "maximum", "minimum", "bitwise_and", "bitwise_or",
              "bitwise_xor", "left_shift", "right_shift", "logical_and", "logical_or", "logical_xor", "copysign",
              "nextafter", *COMPARISONS}
APPROXIMATE_SCALE = 8.0
NATIVE_PRECISION_ROWS = {"nextafter"}   # numpy's answer computed in the dtype itself, not in float64
# f16/bf16/i8/u8 take every row that is not float-only, and these float-only ones: the float-only rows
# compute in f32 (ints) or have no code of their own for narrow floats, and each costs a compiled dispatch
REPRESENTATIVE_FLOAT_ROWS = {  # (sin/cos/tan cost ~2 s of compiling per dispatch: their exact argument reduction)
    "f": {"exp", "log", "sqrt", "tanh", "sigmoid", "reciprocal", "sin", "divide", "arctan2"},
    "i": {"exp", "sqrt", "reciprocal", "divide"}, "u": {"exp", "sqrt", "reciprocal", "divide"},
}

UNARY_SHAPES = [(), (0, 3), (7,), (2, 3), (2, 3, 4), (2, 1, 3, 2)]
UNARY_SHAPES_EXTRA = [(2, 3), (), (5,)]
BINARY_SHAPES = [((), ()), ((2, 1, 3), (4, 3)), ((5,), ()), ((2, 3), (2, 3)), ((0, 3), (3,)), ((), (5,)),
                 ((2, 1, 3, 1), (3, 2)), ((4, 1), (1, 3))]
BINARY_SHAPES_EXTRA = [((2, 1, 3), (4, 3)), ((2, 3), (2, 3)), ((), (4,))]

# Float specials: nan/inf propagation, signed zeros, ties, huge and tiny values.
SPECIALS = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 2.5, -2.5, 0.5, 3.0, -7.25, 1e30, -1e-30]
# sin/cos/tan also get large arguments: their argument reduction (IREE's own lost all accuracy past 1e7)
TRIG_LARGE = {F32: [100.0, 1e3, 1e4, 1e6, 1e10, 1e20, -3e38, 7e37],
              F64: [100.0, 1e3, 1e6, 1e10, 1e20, 1e100, -1e300, 1.7e308]}


def takes(row, dtype) -> bool:
    return row.to_float or kind(dtype) in row.kinds


def result_dtype(name, row, dtype):
    if name in BOOL_RESULT:
        return BOOL
    if row is not None and row.to_float and dtype not in FLOATS:
        return F32
    return dtype


def elementwise_case(name, row, ref, args, cid, dtype, fn=None, inputs=None):
    """A case of row `name` on `args`; `fn`/`inputs` override the traced function and its inputs
    (Python scalars are closed over, but numpy's answer needs them as arrays)."""
    out = result_dtype(name, row, dtype)
    converted = [a.astype(out) if row is not None and row.to_float else a for a in args]
    if fn is None:
        fn = (lambda x, n=name: getattr(ops, n)(x)) if len(args) == 1 else (lambda x, y, n=name: getattr(ops, n)(x, y))
    scale = {} if name in EXACT_ROWS else {b: APPROXIMATE_SCALE for b in BACKENDS}
    expected = compute(ref, out, *converted, native=name in NATIVE_PRECISION_ROWS)
    return Case(cid, fn, tuple(inputs if inputs is not None else args), expected, out, scale, op=name)


def unary_rows(dtype):
    for name, row in UNARY.items():
        if takes(row, dtype) and (dtype in MAIN_DTYPES or row.kinds != "f" or
                                  name in REPRESENTATIVE_FLOAT_ROWS[kind(dtype)]):
            yield name, row


def unary_cases(dtype, offset):
    """f32/f64: one case per row, random values of its domain followed by the specials (so a costly row
    compiles one dispatch per dtype); other dtypes: one case per row on a rotating shape."""
    shapes = UNARY_SHAPES if dtype in MAIN_DTYPES else UNARY_SHAPES_EXTRA
    dt = SHORT[dtype]
    cases = []
    for i, (name, row) in enumerate(unary_rows(dtype)):
        if dtype in (F32, F64):
            cid = f"{name}-{dt}-values-and-specials"
            x = np.concatenate([values(dtype, (10,), UNARY_DOMAIN.get(name, "any"), rng_for(cid)),
                                np.array(SPECIALS + (TRIG_LARGE[dtype] if name in ("sin", "cos", "tan") else []),
                                         dtype)])
        else:
            shape = shapes[(i + offset) % len(shapes)]
            cid = f"{name}-{dt}-{shape_str(shape)}"
            x = values(dtype, shape, UNARY_DOMAIN.get(name, "any"), rng_for(cid))
        cases.append(elementwise_case(name, row, row.numpy, (x,), cid, dtype))
    if dtype in (F32, F64):
        tiny = np.finfo(dtype).smallest_subnormal
        sub = np.array([tiny, -tiny, 1000 * tiny, -1000 * tiny], dtype)
        for name in ("floor", "ceil"):  # numpy: floor(-subnormal) == -1, ceil(+subnormal) == 1
            cases.append(elementwise_case(name, UNARY[name], UNARY[name].numpy, (sub,),
                                          f"{name}-{dt}-subnormal", dtype))
        tiny_x = np.array([1e-5, -1e-6, 3e-8, 1e-20, -2e-3], dtype)  # the point of expm1/log1p: relative accuracy
        for name in ("expm1", "log1p"):
            if name in UNARY:
                c = elementwise_case(name, UNARY[name], UNARY[name].numpy, (tiny_x,), f"{name}-{dt}-tiny", dtype)
                c.relative = True  # no absolute floor to hide behind: the results are 1e-5 .. 1e-20
                cases.append(c)
    return cases


def binary_rows():
    """(name, row or None, numpy reference) for the BINARY and COMPARISONS tables."""
    for name, row in BINARY.items():
        yield name, row, row.numpy
    for name in COMPARISONS:
        yield name, None, getattr(np, name)


HIGH_BIT_ROWS = {"floor_divide", "remainder", "right_shift"}

# Python scalars are weakly typed: the array's dtype wins. (row, side the scalar goes on)
SCALAR_ROWS = {"add": "right", "subtract": "left", "multiply": "left", "divide": "right", "maximum": "right",
               "less": "left", "floor_divide": "right", "remainder": "right", "right_shift": "right",
               "bitwise_and": "left", "power": "right", "equal": "right"}


def binary_cases(dtype, offset):
    pairs = BINARY_SHAPES if dtype in MAIN_DTYPES else BINARY_SHAPES_EXTRA
    rows = [(n, r, ref) for n, r, ref in binary_rows() if r is None or takes(r, dtype) and (
        dtype in MAIN_DTYPES or r.kinds != "f" or n in REPRESENTATIVE_FLOAT_ROWS[kind(dtype)])]
    dt = SHORT[dtype]
    cases = []
    for i, (name, row, ref) in enumerate(rows):
        dx, dy = BINARY_DOMAIN.get(name, ("any", "any")) if dtype != BOOL else ("any", "any")
        if dtype == U8 and name in HIGH_BIT_ROWS:
            dx = "low"  # values >= 128 are the case of their own below
        sx, sy = pairs[(i + offset) % len(pairs)]
        cid = f"{name}-{dt}-{shape_str(sx)},{shape_str(sy)}"
        rng = rng_for(cid)
        cases.append(elementwise_case(name, row, ref, (values(dtype, sx, dx, rng), values(dtype, sy, dy, rng)),
                                      cid, dtype))

        if dtype.kind in "iu" and name in ("floor_divide", "remainder"):
            # all sign combinations and zero divisors: numpy's x // 0 == x % 0 == 0 for integers; remainder
            # takes the divisor's sign, floor_divide rounds toward -inf
            xs, ys = ([-7, -6, -1, 0, 1, 5, 7], [-3, -2, -1, 0, 1, 2, 3]) if dtype.kind == "i" else \
                ([0, 1, 5, 7, 100], [0, 1, 2, 3, 7])
            x, y = np.array(xs, dtype)[:, None], np.array(ys, dtype)[None, :]
            cases.append(elementwise_case(name, row, ref, (x, y), f"{name}-{dt}-signs-and-zero", dtype))
            if dtype.kind == "i":  # INT_MIN // -1 overflows (and traps in hardware); numpy wraps to INT_MIN
                lo = np.iinfo(dtype).min
                x, y = np.array([lo, lo, lo, lo + 1], dtype), np.array([-1, 1, 0, -1], dtype)
                cases.append(elementwise_case(name, row, ref, (x, y), f"{name}-{dt}-int-min-dividend", dtype))
                x, y = np.array([-1, 5, -7, lo, 0], dtype), np.array([lo, lo, lo, lo, lo], dtype)
                cases.append(elementwise_case(name, row, ref, (x, y), f"{name}-{dt}-int-min-divisor", dtype))
        if dtype == U8 and name in HIGH_BIT_ROWS:  # unsigned values with the top bit set
            x = np.array([128, 156, 200, 255, 135, 252], dtype)
            y = np.array([1, 14, 3, 7, 19, 2] if name != "right_shift" else [1, 2, 7, 0, 3, 1], dtype)
            cases.append(elementwise_case(name, row, ref, (x, y), f"{name}-{dt}-high-bit", dtype))
        if dtype.kind in "iu" and name in ("left_shift", "right_shift"):
            bits = 8 * dtype.itemsize  # shifts by >= the bit width: numpy gives 0 (-1 for negatives >>)
            x = np.array([1, 3, 100, 7] + ([-8, -1] if dtype.kind == "i" else [64, 127]), dtype)[:, None]
            y = np.array([bits - 1, bits, bits + 1, 2 * bits], dtype)[None, :]
            cases.append(elementwise_case(name, row, ref, (x, y), f"{name}-{dt}-wide-shift", dtype))

        if dtype in (F32, F64):  # every pair of specials: nan/inf propagation, x / 0, x % inf, ...
            s = np.array(SPECIALS, dtype)
            if name == "power":  # the C99/numpy special cases and negative bases are cases of their own
                x, y = np.abs(s)[np.abs(s) != 1][:, None], s[(s != 0) & ~np.isnan(s)][None, :]
            elif name in ("remainder", "floor_divide"):  # infinite divisors, huge quotients: cases of their own
                x, y = s[np.abs(s) < 1e20][:, None], s[~np.isinf(s)][None, :]
            else:
                x, y = s[:, None], s[None, :]
            cases.append(elementwise_case(name, row, ref, (x, y), f"{name}-{dt}-specials", dtype))
            if name in ("remainder", "floor_divide"):  # finite x, infinite divisor: x % inf, x // inf
                x = np.array([0.0, -0.0, 1.0, -1.0, 2.5, -7.25], dtype)[:, None]
                y = np.array([np.inf, -np.inf], dtype)[None, :]
                cases.append(elementwise_case(name, row, ref, (x, y), f"{name}-{dt}-infinite-divisor", dtype))
                x = np.array([1e30, -1e30, 1e17 + 8, 3e38, 2.0 ** 60], dtype)  # fmod is exact for any quotient
                y = np.array([2.5, 2.5, 3.0, -7.0, 0.75], dtype)
                cases.append(elementwise_case(name, row, ref, (x, y), f"{name}-{dt}-huge-quotient", dtype))
            if name == "power":
                x = np.array([np.nan, np.inf, -np.inf, 0.0, 1.0, 1.0, 1.0], dtype)
                y = np.array([0.0, -0.0, 0.0, 0.0, np.nan, np.inf, -np.inf], dtype)
                cases.append(elementwise_case(name, row, ref, (x, y), f"power-{dt}-x**0-and-1**y", dtype))
                x = np.array([-2, -2, -1.5, -3, -0.5, -1, -2], dtype)   # (-2)**3 == -8; (-1)**0.5 is nan
                y = np.array([3, 2, 2, -1, 3, 0.5, 0], dtype)
                cases.append(elementwise_case(name, row, ref, (x, y), f"power-{dt}-negative-base", dtype))

        if name in SCALAR_ROWS and dtype in (F32, F64, I32, I8, U8):
            side = SCALAR_ROWS[name]
            scalar = {"power": 3, "right_shift": 2}.get(name, 3 if kind(dtype) != "f" else 0.75)
            x = values(dtype, (2, 3), dx, rng_for(f"{name}-{dt}-scalar"))
            s = np.array(scalar).astype(result_dtype(name, row, dtype) if row is not None and row.to_float else dtype)
            if side == "right":
                fn, args = (lambda x, n=name, v=scalar: getattr(ops, n)(x, v)), (x, s)
            else:
                fn, args = (lambda x, n=name, v=scalar: getattr(ops, n)(v, x)), (s, x)
            cases.append(elementwise_case(name, row, ref, args, f"{name}-{dt}-python-scalar-{side}", dtype,
                                          fn=fn, inputs=(x,)))
    if dtype in (F32, F64, I32):  # x ** n for a Python int n: repeated squaring (JAX's integer_pow)
        exps = (0, 1, 2, 5, -1, -2) if dtype != I32 else (0, 1, 2, 5)
        x = values(dtype, (len(exps),), "small" if dtype == I32 else "nonzero", rng_for(f"ipow-{dt}"))
        expected = np.stack([compute(lambda a, n=n: a ** float(n) if a.dtype.kind == "f" else a ** n, dtype, x)
                             for n in exps])
        fn = lambda x, exps=exps: _stack([ops.power(x, n) for n in exps])
        cases.append(Case(f"power-{dt}-python-int-exponents", fn, (x,), expected, dtype,
                          {b: APPROXIMATE_SCALE for b in BACKENDS}, op="power"))  # a rounding per multiply
    return cases


def _stack(tensors):
    """Stack same-shaped tensors on a new leading axis (one output for several cases), with tested ops only."""
    n = len(tensors)
    shape = (n,) + tensors[0].shape
    index = ops.broadcast_to(ops.reshape(ops.arange(n), (n,) + (1,) * len(tensors[0].shape)), shape)
    out = ops.broadcast_to(tensors[0], shape)
    for i, t in enumerate(tensors[1:], 1):
        out = ops.where(index == i, ops.broadcast_to(t, shape), out)
    return out


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


REDUCTION_LAYOUTS = [  # (shape, axis, keepdims)
    ((2, 3, 4), None, False), ((7,), 0, False), ((2, 3, 4), 0, False), ((), None, False),
    ((2, 3, 4), -1, False), ((0, 3), 0, False), ((2, 3, 4), (0, 2), False), ((48, 64), None, False),
    ((2, 3, 4), 1, True), ((2, 1, 3, 2), (1, 3), False), ((0, 3), 1, False), ((2, 3, 4), None, True),
    ((48, 64), 1, False), ((3, 5), (), False),
]
REDUCTION_LAYOUTS_EXTRA = [((2, 3, 4), None, False), ((2, 3, 4), 1, True), ((24, 16), 0, False)]


def reduction_rows():
    for name, row in REDUCTIONS.items():
        yield name, getattr(ops, name), row[-1]
    yield "mean", ops.mean, np.mean


def reduction_cases(dtype, offset):
    cases = []
    layouts = REDUCTION_LAYOUTS if dtype in MAIN_DTYPES else REDUCTION_LAYOUTS_EXTRA
    per_row = 2 if dtype in MAIN_DTYPES else 1   # 7 rows x 2: each of the 14 layouts once per dtype
    dt = SHORT[dtype]
    for i, (name, op, ref) in enumerate(reduction_rows()):
        out = accumulator(name, dtype)
        # max/min of nothing has no identity: see test_reduction_of_nothing_has_no_identity
        usable = [l for l in layouts if name not in ("max", "min") or 0 not in l[0]]
        for j in range(per_row):
            shape, axis, keepdims = usable[(per_row * i + j + offset) % len(usable)]
            axis_str = "all" if axis is None else str(axis).replace(" ", "")
            cid = f"{name}-{dt}-{shape_str(shape)}-axis={axis_str}" + ("-keepdims" if keepdims else "")
            # narrow floats sum positive numbers: with cancellation their error is relative to sum(|x|)
            domain = "unit" if name == "prod" or (dtype in (F16, BF16) and name in ("sum", "mean")) else "any"
            x = values(dtype, shape, domain, rng_for(cid))
            inp = x.astype(out) if name not in ("any", "all") else x
            wide = inp.astype(F64) if out in FLOATS else inp
            expected = np.asarray(ref(wide, axis=axis, keepdims=keepdims)).astype(out)
            fn = lambda x, op=op, axis=axis, keepdims=keepdims: op(x, axis=axis, keepdims=keepdims)
            # a float sum of n terms differs from numpy's (pairwise) order by about log2(n) roundings
            n = x.size // max(1, expected.size)
            scale = {b: max(1.0, math.log2(max(n, 1))) for b in BACKENDS} if out in FLOATS else {}
            cases.append(Case(cid, fn, (x,), expected, out, scale, op=name))
        if dtype in (F32, F64):  # nan and inf propagate through every reduction
            x = np.array([[1.0, np.nan, -2.0, 3.0], [1.0, np.inf, -2.0, 3.0], [np.inf, 1.0, -np.inf, 0.0],
                          [0.5, 2.0, -1.0, 4.0], [-np.inf, -1.0, 0.0, -0.0]], dtype)
            expected = compute(lambda a, ref=ref: ref(a, axis=1), out, x)
            cases.append(Case(f"{name}-{dt}-specials", lambda x, op=op: op(x, axis=1), (x,), expected, out, op=name))
    return cases


# --- contractions --------------------------------------------------------------------------------

MATMUL_SHAPES = [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)), ((5, 2, 3), (5, 3, 4)),
                 ((5, 2, 3), (3, 4)), ((3,), (5, 3, 4)), ((2, 1, 2, 3), (3, 3, 4)), ((0, 3), (3, 4)),
                 ((2, 0), (0, 3)), ((16, 32), (32, 8))]
DOT_SHAPES = [((), (2, 3)), ((3,), (3,)), ((2, 3), (3,)), ((2, 3), (3, 4)), ((2, 3, 4), (4,)),
              ((2, 3, 4), (5, 4, 2)), ((0, 3), (3, 2))]
# other dtypes: 1-D, 2-D, batched and broadcast-batch shapes of each
SOME_MATMUL = [((3,), (3, 4)), ((2, 3), (3, 4)), ((5, 2, 3), (3, 4)), ((2, 1, 2, 3), (3, 3, 4))]
SOME_DOT = [((2, 3), (3,)), ((2, 3, 4), (5, 4, 2))]


def contraction_cases(dtype):
    cases = []
    for name, op, ref, shapes in (("matmul", ops.matmul, np.matmul, MATMUL_SHAPES if dtype == F32 else SOME_MATMUL),
                                  ("dot", ops.dot, np.dot, DOT_SHAPES if dtype == F32 else SOME_DOT)):
        for sx, sy in shapes:
            cid = f"{name}-{SHORT[dtype]}-{shape_str(sx)},{shape_str(sy)}"
            rng = rng_for(cid)
            x, y = values(dtype, sx, "small", rng), values(dtype, sy, "small", rng)
            if dtype in FLOATS:
                expected = compute(ref, dtype, x, y)
            elif dtype == BOOL:  # numpy: logical or of ands
                expected = np.asarray(ref(x, y))
            else:  # integer products wrap as numpy's do in the same width
                expected = np.asarray(ref(x.astype(np.int64), y.astype(np.int64))).astype(dtype)
            k = sx[-1] if sx else 1
            # k products summed: a few roundings in f32 and f64 (16-bit floats sum in f32 and round once)
            scale = {b: max(1.0, float(k)) for b in BACKENDS} if dtype in FLOATS else {}
            cases.append(Case(cid, lambda x, y, op=op: op(x, y), (x, y), expected, dtype, scale, op=name))
    return cases


# --- where, astype, promotion ----------------------------------------------------------------------

ASTYPE_DTYPES = (BOOL, I8, U8, I32, F16, BF16, F32, F64)


def astype_source(src, dst):
    """Inputs of `src` whose conversion to `dst` numpy defines (in range; floats truncate toward zero)."""
    if src == BOOL:
        return np.array([True, False, True])
    if kind(src) == "f":
        v = [0.0, -0.0, 1.0, 1.5, 2.7, 100.25, 126.9, 0.999]
        if dst.kind == "i":
            v += [-1.5, -2.7, -100.9, -0.999]
        if kind(dst) in "fb":
            v += [np.nan, np.inf, -np.inf, -3.25, 1e-3, 0.1]
        if kind(dst) == "f" and src.itemsize > dst.itemsize:   # rounding to nearest even, overflow to inf
            v += [65519.0, 70000.0, 1.00390625, 1.005859375, 1.0 + 2.0 ** -11 + 2.0 ** -20]
            if src == F64:
                v += [1e300, 1 + 2.0 ** -30, -1e-300]
        return np.array(v).astype(src)
    v = [0, 1, 2, 100, 127]
    if src.kind == "i":
        v += [-1, -128]
    if src == I32:
        v += [300, -300, 65536 + 7, 2 ** 31 - 1]    # wrap into narrower ints
        if kind(dst) == "f" and dst.itemsize > 2:
            v += [16777217, -16777219]                # rounds to nearest even in f32
    return np.array(v).astype(src)


def astype_cases():
    cases = []
    for src in ASTYPE_DTYPES:
        for dst in ASTYPE_DTYPES:
            x = astype_source(src, dst)
            cases.append(Case(f"astype-{SHORT[src]}-to-{SHORT[dst]}", lambda x, d=dst: ops.astype(x, d), (x,),
                              x.astype(dst), dst, exact=True, op="astype"))
    return cases


# (x dtype, y dtype, result dtype): JAX's lattice (int meets float in the float; unsigned meets signed one
# size up; bf16 + f16 is f32)
PROMOTIONS = [(I32, F32, F32), (U8, I8, I16), (I32, F16, F16), (BF16, F16, F32), (BOOL, I8, I8), (F32, F64, F64),
              (U8, I32, I32), (BOOL, F32, F32), (I8, U32, I64)]


def promotion_cases():
    cases = []
    for dx, dy, out in PROMOTIONS:
        cid = f"add-promote-{SHORT[dx]}+{SHORT[dy]}"
        rng = rng_for(cid)
        x, y = values(dx, (2, 3), "small", rng), values(dy, (3,), "small", rng)
        cases.append(Case(cid, lambda x, y: ops.add(x, y), (x, y), compute(np.add, out, x.astype(out), y.astype(out)),
                          out, op="add"))
    return cases


def where_cases():
    cases = []
    rng = rng_for("where")
    cond = rng.random((2, 3)) < 0.5
    for dtype in (F32, F64, I32, BOOL, F16, I8):
        x, y = values(dtype, (2, 3), "any", rng), values(dtype, (2, 3), "any", rng)
        cases.append(Case(f"where-{SHORT[dtype]}-2x3", lambda c, x, y: ops.where(c, x, y), (cond, x, y),
                          np.where(cond, x, y), dtype, exact=True, op="where"))
    c3, x21, y23 = rng.random(3) < 0.5, values(F32, (2, 1), "any", rng), values(F32, (2, 3), "any", rng)
    ci = np.array([[0, 3, -1], [2, 0, 0]], np.int32)
    x_nan = np.array([np.nan, np.inf, -0.0], np.float32)
    where = lambda c, x, y: ops.where(c, x, y)
    extra = [
        ("where-broadcast-3,2x1,2x3", where, (c3, x21, y23), np.where(c3, x21, y23)),
        ("where-int-condition", where, (ci, y23, x21), np.where(ci, y23, x21)),
        ("where-promote-i32,f32", where, (cond, ci, y23), np.where(cond, ci.astype(F32), y23)),
        ("where-python-scalar", lambda c, y: ops.where(c, y, 0.5), (cond, y23), np.where(cond, y23, F32.type(0.5))),
        ("where-scalar-condition", where, (np.bool_(False), x21, y23), np.where(False, x21, y23)),
        ("where-0-size", where, (np.zeros((0, 3), bool), y23[:1], np.float32(2)),
         np.where(np.zeros((0, 3), bool), y23[:1], np.float32(2))),
        ("where-nan-inf", where, (c3, x_nan, np.float32(1)), np.where(c3, x_nan, np.float32(1))),
    ]
    cases += [Case(cid, fn, args, np.asarray(exp, F32), F32, exact=True, op="where") for cid, fn, args, exp in extra]
    return cases


# --- shape ops and creation ----------------------------------------------------------------------

SHAPE_OPS = [  # (id, hlojit fn, numpy fn, input shape)
    ("reshape-2x3x4-to-6x4", lambda x: ops.reshape(x, (6, 4)), lambda x: x.reshape(6, 4), (2, 3, 4)),
    ("reshape-minus-one", lambda x: ops.reshape(x, (-1, 2)), lambda x: x.reshape(-1, 2), (2, 3, 4)),
    ("reshape-to-scalar", lambda x: ops.reshape(x, ()), lambda x: x.reshape(()), (1, 1)),
    ("reshape-scalar-to-1x1x1", lambda x: ops.reshape(x, (1, 1, 1)), lambda x: x.reshape(1, 1, 1), ()),
    ("reshape-0-size", lambda x: ops.reshape(x, (3, 0)), lambda x: x.reshape(3, 0), (0, 3)),
    ("transpose-reverse", lambda x: ops.transpose(x), lambda x: x.T, (2, 3, 4)),
    ("transpose-rank4", lambda x: ops.transpose(x, (2, 0, 3, 1)), lambda x: x.transpose(2, 0, 3, 1), (2, 3, 4, 5)),
    ("transpose-negative-axes", lambda x: ops.transpose(x, (-1, 0, 1)), lambda x: x.transpose(-1, 0, 1), (2, 3, 4)),
    ("transpose-0-size", lambda x: ops.transpose(x), lambda x: x.T, (0, 3)),
    ("expand_dims-0", lambda x: ops.expand_dims(x, 0), lambda x: np.expand_dims(x, 0), (2, 3)),
    ("expand_dims-minus-one", lambda x: ops.expand_dims(x, -1), lambda x: np.expand_dims(x, -1), (2, 3)),
    ("expand_dims-tuple", lambda x: ops.expand_dims(x, (0, 3)), lambda x: np.expand_dims(x, (0, 3)), (2, 3)),
    ("expand_dims-scalar", lambda x: ops.expand_dims(x, 0), lambda x: np.expand_dims(x, 0), ()),
    ("squeeze-all", lambda x: ops.squeeze(x), lambda x: np.squeeze(x), (1, 3, 1, 2)),
    ("squeeze-axis", lambda x: ops.squeeze(x, 2), lambda x: np.squeeze(x, 2), (1, 3, 1, 2)),
    ("squeeze-to-scalar", lambda x: ops.squeeze(x), lambda x: np.squeeze(x), (1, 1)),
    ("broadcast_to-new-dims", lambda x: ops.broadcast_to(x, (2, 4, 3)), lambda x: np.broadcast_to(x, (2, 4, 3)), (3,)),
    ("broadcast_to-stretch", lambda x: ops.broadcast_to(x, (2, 5, 3)), lambda x: np.broadcast_to(x, (2, 5, 3)),
     (2, 1, 3)),
    ("broadcast_to-scalar", lambda x: ops.broadcast_to(x, (2, 3)), lambda x: np.broadcast_to(x, (2, 3)), ()),
    ("broadcast_to-0-size", lambda x: ops.broadcast_to(x, (2, 0, 3)), lambda x: np.broadcast_to(x, (2, 0, 3)),
     (0, 3)),
    ("tensor-methods", lambda x: x.reshape(4, 6).T, lambda x: x.reshape(4, 6).T, (2, 3, 4)),
]


def shape_cases():
    cases = []
    for dtype in (F32, I32, BOOL, F64, I8):
        for i, (cid, fn, ref, shape) in enumerate(SHAPE_OPS):
            if dtype not in (F32, I32) and i % 4 != {BOOL: 0, F64: 1, I8: 2}[dtype]:
                continue  # f32 and i32 take every shape op; the others a rotating quarter
            x = values(dtype, shape, "any", rng_for(cid))
            cases.append(Case(f"{cid}-{SHORT[dtype]}", fn, (x,), np.array(ref(x)), dtype, exact=True,
                              op=cid.split("-")[0]))
    return cases


CREATION = [  # (id, hlojit fn, numpy answer)
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
    ("full-f16-rank4", lambda: ops.full((1, 2, 1, 2), -3.5, np.float16), np.full((1, 2, 1, 2), -3.5, np.float16)),
]


def creation_cases():
    return [Case(cid, fn, (), expected, expected.dtype, exact=True, op=cid.split("-")[0])
            for cid, fn, expected in CREATION]
