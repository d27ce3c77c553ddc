"""Audit the reference backend's elementwise ops against the StableHLO spec, op x dtype.

    python tools/spec_audit.py            # one line per failing (op, dtype), then the count
    python tools/spec_audit.py -v         # and the first mismatching inputs of each

For every elementwise op of the spec and every dtype the spec allows it and hlojit supports, a one-op module
runs on corner values (signed zeros, infinities, NaN, INT_MIN, the largest unsigned, both sides of the complex
branch cuts) through hj.from_mlir(backend="reference") and is compared with an oracle independent of numpy's
ufuncs: Python's math and cmath (C99 Annex G) in double precision, rounded once to the result type, or integer
arithmetic modulo 2^n. Floats must agree to a few ulps of their type, NaN with NaN, and zeros in their sign;
complex numbers to a few ulps of their modulus. Values the spec leaves to the implementation are not asked:
integer quotients by 0 and INT_MIN / -1, the sign of a zero or a NaN part where Annex G leaves it unspecified,
complex remainder (the spec says TBD). The audit that this came from (2026-12-02) also ran the structural and
region ops (reshape ... sort, scatter, while) in every dtype: all agreed with numpy's indexing, so they are not
repeated here; tests/data/stablehlo/dtypes.mlir holds its findings as conformance cases.
"""
from __future__ import annotations

import argparse
import cmath
import math
import operator
import os
import sys
import warnings

import ml_dtypes
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import hlojit as hj  # noqa: E402
from hlojit.dialects.types import finfo  # noqa: E402  (bfloat16's too, whatever ml_dtypes' version)

inf, nan = math.inf, math.nan
BOOL = [np.dtype(np.bool_)]
SIGNED = [np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64)]
UNSIGNED = [np.dtype(t) for t in (np.uint8, np.uint16, np.uint32, np.uint64)]
INTEGER = SIGNED + UNSIGNED
FLOAT = [np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16), np.dtype(np.float32), np.dtype(np.float64)]
COMPLEX = [np.dtype(np.complex64), np.dtype(np.complex128)]
EVERY = BOOL + INTEGER + FLOAT + COMPLEX
ULPS = 4                                        # allowed error of a transcendental, in ulps of the result type
EPSILON = {d.name: float(finfo(d).eps) for d in FLOAT + COMPLEX}
SPELLING = {"bool": "i1", "bfloat16": "bf16", "complex64": "complex<f32>", "complex128": "complex<f64>"}


def mlir_type(dtype: np.dtype, n: int) -> str:
    name = dtype.name
    spelled = SPELLING.get(name) or ("f" + name[5:] if name.startswith("float") else
                                     "ui" + name[4:] if name.startswith("uint") else "i" + name[3:])
    return f"tensor<{n}x{spelled}>"


def is_float(dtype: np.dtype) -> bool:
    return dtype in FLOAT


def part_type(dtype: np.dtype) -> np.dtype:
    return np.dtype({"complex64": np.float32, "complex128": np.float64}.get(dtype.name, dtype))


# --- corner values -----------------------------------------------------------------------------------------

def corners(dtype: np.dtype) -> list:
    if dtype == np.bool_:
        return [False, True]
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        small = [0, 1, 2, 3, 5, 7] if dtype.kind == "u" else [0, 1, -1, 3, -3, 7, -8]
        return small + [int(info.min), int(info.max), int(info.max) - 1] + ([1 << (8 * dtype.itemsize - 1)]
                                                                             if dtype.kind == "u" else [])
    reals = [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, 0.75, -0.3, 10.0, inf, -inf, nan]
    if dtype.kind != "c":
        return reals
    parts = [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, inf, nan]
    cuts = [complex(-2, 0.0), complex(-2, -0.0), complex(0.0, 2), complex(-0.0, -2), complex(-0.5, 1e-3),
            1e-4 + 2e-4j]
    return [complex(a, b) for a in parts for b in parts] + cuts


def as_array(values, dtype: np.dtype) -> np.ndarray:
    """Python values as dtype; complex parts set one by one (complex(x, -0.0) arithmetic would lose signs)."""
    if dtype.kind != "c":
        return np.array(values, dtype=object).astype(dtype) if dtype.kind in "iu" else np.array(values).astype(dtype)
    out = np.empty(len(values), dtype)
    out.real = [complex(v).real for v in values]
    out.imag = [complex(v).imag for v in values]
    return out


def python_values(x: np.ndarray) -> list:
    if x.dtype.kind == "c":
        return [complex(v) for v in x.tolist()]
    if is_float(x.dtype):
        return x.astype(np.float64).tolist()
    return [bool(v) if x.dtype == np.bool_ else int(v) for v in x.tolist()]


# --- oracles: Python values -> Python value, or None where the spec leaves the value open ------------------

def _guarded(fn):
    """math's ValueError/OverflowError -> IEEE's nan/inf, as the spec's ops give them."""
    def run(*args):
        try:
            return fn(*args)
        except OverflowError:
            return inf
        except (ValueError, ZeroDivisionError):
            return nan
    return run


def _real_log(x):
    return -inf if x == 0 else nan if x < 0 or x != x else inf if x == inf else math.log(x)


def _real_log1p(x):
    return -inf if x == -1 else nan if x < -1 or x != x else inf if x == inf else math.log1p(x)


def _real_sqrt(x):
    return x if x == 0 or x == inf or x != x else nan if x < 0 else math.sqrt(x)


def _real_cbrt(x):
    return x if x == 0 or not math.isfinite(x) else math.copysign(abs(x) ** (1 / 3), x)


def _periodic(fn):
    return lambda x: nan if math.isinf(x) else fn(x)


def _complex_log(z):
    return complex(-inf, math.atan2(z.imag, z.real)) if z == 0 else cmath.log(z)


def _complex_log1p(z):
    """log1p's real part from log1p(x(2 + x) + y^2) / 2 near 0 (Python's log(1 + z) would lose its digits)."""
    if z == -1:
        return complex(-inf, math.atan2(z.imag, 0.0))
    real = 0.5 * math.log1p(z.real * (2 + z.real) + z.imag ** 2) if abs(z) < 0.5 else math.log(abs(1 + z))
    return complex(real, math.atan2(z.imag, 1 + z.real))


def _complex_expm1(z):
    if abs(z) < 1:
        return complex(math.expm1(z.real) * math.cos(z.imag) - 2 * math.sin(z.imag / 2) ** 2,
                       math.exp(z.real) * math.sin(z.imag))
    return cmath.exp(z) - 1


def _complex_cbrt(z):
    if z == 0:
        return z
    r, phi = cmath.polar(z)
    return cmath.rect(r ** (1 / 3), phi / 3)


def _finite_only(fn):
    """Annex G defines complex functions at infinite and NaN parts, leaving signs open: finite z only."""
    return lambda z: fn(z) if math.isfinite(z.real) and math.isfinite(z.imag) else None


UNARY_MATH = {  # op -> (real oracle, complex oracle)
    "exponential": (_guarded(math.exp), cmath.exp), "exponential_minus_one": (_guarded(math.expm1), _complex_expm1),
    "log": (_real_log, _complex_log), "log_plus_one": (_real_log1p, _complex_log1p),
    "sqrt": (_real_sqrt, cmath.sqrt), "cbrt": (_real_cbrt, _complex_cbrt),
    "rsqrt": (lambda x: math.copysign(inf, x) if x == 0 else 1 / _real_sqrt(x) if _real_sqrt(x) == _real_sqrt(x)
              else nan, lambda z: None if z == 0 else 1 / cmath.sqrt(z)),     # 1 / 0: some infinity
    "tanh": (math.tanh, cmath.tanh), "sine": (_periodic(math.sin), cmath.sin),
    "cosine": (_periodic(math.cos), cmath.cos), "tan": (_periodic(math.tan), cmath.tan),
    "logistic": (lambda x: 0.0 if x == -inf else nan if x != x else 1 / (1 + _guarded(math.exp)(-x)),
                 lambda z: 1 / (1 + cmath.exp(-z))),
}


def _integral(fn):
    """A rounding to an integral value: it keeps x's sign, zeros included (IEEE roundToIntegral)."""
    return lambda x: x if not math.isfinite(x) else math.copysign(fn(x), x)


def _half_away(x):
    t = math.trunc(x)
    return t + math.copysign(1, x) if abs(x - t) >= 0.5 else t


def _sign(x):
    if isinstance(x, complex):
        if x.real != x.real or x.imag != x.imag:
            return complex(nan, nan)
        if x == 0:
            return 0j
        # each part divided by the real |x| (XLA's and numpy's: sign(-0 + 1j) is -0 + 1j; Python's complex quotient
        # by |x| would give +0 there); NaN for an infinite x
        return complex(x.real / abs(x), x.imag / abs(x)) if math.isfinite(abs(x)) else complex(nan, nan)
    if isinstance(x, float):
        return x if x == 0 or x != x else math.copysign(1.0, x)
    return (x > 0) - (x < 0)


SIMPLE_UNARY = {  # op -> (dtypes, oracle)
    "abs": (SIGNED + FLOAT + COMPLEX, abs), "negate": (INTEGER + FLOAT + COMPLEX, operator.neg),
    "sign": (SIGNED + FLOAT + COMPLEX, _sign),
    "floor": (FLOAT, _integral(math.floor)), "ceil": (FLOAT, _integral(math.ceil)),
    "round_nearest_even": (FLOAT, _integral(round)),
    "round_nearest_afz": (FLOAT, _integral(_half_away)),
    "not": (BOOL + INTEGER, lambda x: not x if isinstance(x, bool) else ~x),
}


def _float_max(x, y):
    if x != x or y != y:
        return nan
    return (y if math.copysign(1, x) < 0 else x) if x == y == 0 else max(x, y)


def _float_min(x, y):
    if x != x or y != y:
        return nan
    return (x if math.copysign(1, x) < 0 else y) if x == y == 0 else min(x, y)


def _lexicographic(pick_larger):
    def pick(x, y):
        if any(v != v for v in (x.real, x.imag, y.real, y.imag)) or x == y:
            return None                  # NaN propagation, and which of two equal numbers: unspecified
        return x if ((x.real, x.imag) > (y.real, y.imag)) == pick_larger else y
    return pick


def _divide(x, y):
    if isinstance(x, complex):
        return None if y == 0 else x / y
    if isinstance(x, float):
        if y == 0:
            return nan if x == 0 or x != x else math.copysign(inf, x) * math.copysign(1, y)
        return nan if math.isinf(x) and math.isinf(y) else x / y
    if y == 0:
        return None                                      # implementation-defined
    q = abs(x) // abs(y)
    return q if (x >= 0) == (y >= 0) else -q


def _remainder(x, y):
    if isinstance(x, float):
        return nan if y == 0 or math.isinf(x) or x != x or y != y else math.fmod(x, y)
    if y == 0:
        return None                                      # implementation-defined
    return x - _divide(x, y) * y


def _power(x, y):
    if isinstance(x, complex):
        return None if x == 0 else x ** y
    if isinstance(x, float):
        if x == 0 and y < 0:
            odd = math.isfinite(y) and y == int(y) and int(y) % 2 == 1
            return math.copysign(inf, x) if odd else inf
        return _guarded(math.pow)(x, y)
    if y < 0:
        return 1 if x == 1 else (-1) ** (-y) if x == -1 else 0
    return x ** y


def _complex_atan2(y, x):
    root = cmath.sqrt(x * x + y * y)
    return None if root == 0 else -1j * cmath.log((x + 1j * y) / root)


BINARY = {  # op -> (dtypes, oracle)
    "add": (EVERY, lambda x, y: (x or y) if isinstance(x, bool) else x + y),
    "subtract": (INTEGER + FLOAT + COMPLEX, operator.sub),
    "multiply": (EVERY, lambda x, y: (x and y) if isinstance(x, bool) else x * y),
    "divide": (INTEGER + FLOAT + COMPLEX, _divide), "remainder": (INTEGER + FLOAT, _remainder),
    "power": (INTEGER + FLOAT + COMPLEX, _power),
    "maximum": (EVERY, lambda x, y: _float_max(x, y) if isinstance(x, float) else
                _lexicographic(True)(x, y) if isinstance(x, complex) else max(x, y)),
    "minimum": (EVERY, lambda x, y: _float_min(x, y) if isinstance(x, float) else
                _lexicographic(False)(x, y) if isinstance(x, complex) else min(x, y)),
    "atan2": (FLOAT + COMPLEX, lambda y, x: _complex_atan2(y, x) if isinstance(y, complex) else math.atan2(y, x)),
    "and": (BOOL + INTEGER, lambda x, y: x and y if isinstance(x, bool) else x & y),
    "or": (BOOL + INTEGER, lambda x, y: x or y if isinstance(x, bool) else x | y),
    "xor": (BOOL + INTEGER, operator.xor),
}


# --- running and comparing ---------------------------------------------------------------------------------

def run_op(op: str, operands: list, result: np.dtype, attributes: str = "") -> np.ndarray:
    n = operands[0].size
    types = [mlir_type(a.dtype, n) for a in operands]
    params = ", ".join(f"%a{i}: {t}" for i, t in enumerate(types))
    names = ", ".join(f"%a{i}" for i in range(len(operands)))
    out = mlir_type(result, n)
    text = (f'func.func @main({params}) -> {out} {{\n  %r = "stablehlo.{op}"({names}) {attributes} : '
            f'({", ".join(types)}) -> {out}\n  return %r : {out}\n}}')
    return np.asarray(hj.from_mlir(text, backend="reference")(*operands))


def wrapped(value: int, dtype: np.dtype) -> int:
    """An integer modulo 2^n, as the signed or unsigned value of dtype."""
    bits = 8 * dtype.itemsize
    value %= 1 << bits
    return value - (1 << bits) if dtype.kind == "i" and value >= 1 << (bits - 1) else value


def rounded_to(value: float, dtype: np.dtype) -> float:
    """value rounded once to a float dtype (past its range: an infinity, as asked, without numpy's warning)."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return float(np.array(float(value)).astype(dtype))


def agrees(got, want, dtype: np.dtype, exact: bool, ulps: int = ULPS, zero_signs: bool = True) -> bool:
    if want is None:
        return True
    if dtype == np.bool_ or dtype.kind in "iu":
        return bool(got) == bool(want) if dtype == np.bool_ else int(got) == wrapped(int(want), dtype)
    if dtype.kind == "c":
        want = complex(want)
        if not (math.isfinite(want.real) and math.isfinite(want.imag)):
            return all(agrees(g, w, part_type(dtype), True) for g, w in ((got.real, want.real), (got.imag, want.imag)))
        rounded = complex(*(rounded_to(p, part_type(dtype)) for p in (want.real, want.imag)))
        error = abs(complex(got) - rounded)
        zeros = not zero_signs or all(not (w == 0 and g == 0) or math.copysign(1, w) == math.copysign(1, float(g))
                                      for g, w in ((got.real, rounded.real), (got.imag, rounded.imag)))
        return zeros and error <= (0 if exact else ulps * EPSILON[dtype.name] * abs(rounded))
    want = rounded_to(want, dtype)                              # the oracle rounded to the result type once
    got = float(got)
    if want != want or got != got:
        return want != want and got != got
    if want == 0 and got == 0:
        return math.copysign(1, want) == math.copysign(1, got)
    close = math.isfinite(want) and abs(got - want) <= ulps * EPSILON[dtype.name] * abs(want)
    return got == want or (not exact and close)


def audit_op(op, dtype, operands, oracle, result=None, exact=True, attributes="", ulps=ULPS, zero_signs=True) -> list:
    """The inputs where the reference disagrees with the oracle, or the exception it raised."""
    result = dtype if result is None else result
    try:
        got = run_op(op, operands, result, attributes)
    except Exception as e:  # noqa: BLE001  (an audit reports what it meets)
        return [f"raises {type(e).__name__}: {str(e).splitlines()[0][:160]}"]
    bad = []
    for i, args in enumerate(zip(*(python_values(a) for a in operands))):
        want = oracle(*args)
        if not agrees(got[i], want, result, exact, ulps, zero_signs):
            bad.append(f"{args} -> {got[i]!r}, want {want!r}")
    return bad


def audits():
    """(op, dtype label, mismatches) of every audited pair."""
    for op, (real, complex_) in UNARY_MATH.items():
        for dtype in FLOAT + COMPLEX:
            oracle = _finite_only(complex_) if dtype.kind == "c" else real
            yield op, dtype.name, audit_op(op, dtype, [as_array(corners(dtype), dtype)], _guarded(oracle), exact=False)
    for op, (dtypes, oracle) in SIMPLE_UNARY.items():
        for dtype in dtypes:
            result = part_type(dtype) if op == "abs" else dtype
            yield op, dtype.name, audit_op(op, dtype, [as_array(corners(dtype), dtype)], oracle, result,
                                           exact=op != "sign" and not (op == "abs" and dtype.kind == "c"))
    for op, (dtypes, oracle) in BINARY.items():
        for dtype in dtypes:
            values = corners(dtype)[::3] if dtype.kind == "c" else corners(dtype)
            lhs = as_array([a for a in values for _ in values], dtype)
            rhs = as_array([b for _ in values for b in values], dtype)
            if op == "power" and dtype.kind in "iu":
                rhs = as_array([[0, 1, 2, 3, 7, 9, -1, -2][i % (6 if dtype.kind == "u" else 8)]
                                for i in range(len(lhs))], dtype)
            exact = op in ("add", "subtract", "multiply", "maximum", "minimum", "remainder") and dtype.kind != "c"
            if op in ("divide", "remainder") and dtype.kind == "i":
                oracle = _except_overflow(oracle, int(np.iinfo(dtype).min))
            # the zero parts' signs of complex quotients, powers and atan2 come from their formulas: not asked
            yield op, dtype.name, audit_op(op, dtype, [lhs, rhs], _complex_finite(oracle, dtype), exact=exact,
                                           ulps=16 if op == "power" else ULPS,
                                           zero_signs=dtype.kind != "c" or op not in ("divide", "power", "atan2"))
    for dtype in EVERY:
        for direction in ("EQ", "NE", "LT", "LE", "GT", "GE"):
            values = corners(dtype)[::3] if dtype.kind == "c" else corners(dtype)
            lhs = as_array([a for a in values for _ in values], dtype)
            rhs = as_array([b for _ in values for b in values], dtype)
            kind = "FLOAT" if dtype.kind == "c" or is_float(dtype) else "SIGNED" if dtype.kind == "i" else "UNSIGNED"
            attributes = (f"{{comparison_direction = #stablehlo<comparison_direction {direction}>, "
                          f"compare_type = #stablehlo<comparison_type {kind}>}}")
            yield f"compare {direction}", dtype.name, audit_op("compare", dtype, [lhs, rhs], _order(direction),
                                                               np.dtype(np.bool_), attributes=attributes)
    for source in EVERY:
        for target in EVERY:
            values = [v for v in corners(source) if _converts_exactly(v, source, target)]
            yield "convert", f"{source.name}->{target.name}", audit_op(
                "convert", source, [as_array(values, source)], lambda v, t=target: _converted(v, t), target)


def _except_overflow(oracle, int_min):
    """INT_MIN / -1 overflows: implementation-defined, not asked."""
    return lambda x, y: None if (x, y) == (int_min, -1) else oracle(x, y)


def _complex_finite(oracle, dtype):
    """Complex binary ops: finite operands only (Annex G leaves the rest's signs open)."""
    if dtype.kind != "c":
        return oracle
    return lambda x, y: oracle(x, y) if all(math.isfinite(v) for v in (x.real, x.imag, y.real, y.imag)) else None


def _order(direction):
    compare = {"EQ": operator.eq, "NE": operator.ne, "LT": operator.lt, "LE": operator.le, "GT": operator.gt,
               "GE": operator.ge}[direction]

    def run(x, y):
        if not isinstance(x, complex) or direction in ("EQ", "NE"):
            return compare(x, y)
        # lexicographic on (real, imag), each part an IEEE quiet compare
        if x.real != y.real or x.real != x.real or y.real != y.real:
            return compare(x.real, y.real)
        return compare(x.imag, y.imag)
    return run


def _converts_exactly(value, source: np.dtype, target: np.dtype) -> bool:
    """Whether the spec defines the conversion of value: an exactly representable result (out-of-range and
    inexact ones are TBD)."""
    real = complex(value).real if source.kind == "c" else value
    if target == np.bool_:
        return True
    if target.kind in "iu":
        if isinstance(real, float) and not math.isfinite(real):
            return False
        info = np.iinfo(target)
        return info.min <= math.trunc(real) <= info.max
    parts = (complex(value).real, complex(value).imag) if source.kind == "c" and target.kind == "c" else (real,)
    kept = part_type(target)
    return all(p != p or rounded_to(p, kept) == float(p) for p in parts)


def _converted(value, target: np.dtype):
    if target == np.bool_:
        return value != 0
    if target.kind in "iu":
        real = value.real if isinstance(value, complex) else value
        return math.trunc(real) if isinstance(real, float) else int(real)
    if target.kind == "c":
        return complex(value)
    return value.real if isinstance(value, complex) else float(value)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-v", "--verbose", action="store_true", help="show the first mismatching inputs")
    args = parser.parse_args(argv)
    failing = 0
    for op, dtype, bad in audits():
        if bad:
            failing += 1
            print(f"{op:24s} {dtype:22s} {len(bad)} bad" + ("".join(f"\n    {b}" for b in bad[:3]) if args.verbose
                                                            else f": {bad[0][:120]}"))
    print(f"{failing} failing (op, dtype) pairs")
    return 1 if failing else 0


if __name__ == "__main__":
    sys.exit(main())
