"""Elementwise ops, comparisons, select and convert, by numpy ufuncs with StableHLO's semantics."""
from __future__ import annotations

import numpy as np

from ..dialects.types import dtype_of
from .interpreter import OPS, enum_attr


def _int_divide(a, b):
    """StableHLO's integer divide truncates toward zero, numpy's // floors: they differ where the quotient is
    negative and inexact. Not through |a| // |b|: |INT_MIN| wraps negative. The two quotients the spec leaves
    to the implementation are 0, as in openxla's reference interpreter: x / 0 and INT_MIN / -1 (which
    overflows)."""
    with np.errstate(divide="ignore", over="ignore"):
        q, r = np.floor_divide(a, b), np.remainder(a, b)
    if a.dtype.kind == "u":
        return q
    overflow = (a == np.iinfo(a.dtype).min) & (b == -1)
    return np.where(overflow, 0, np.where((r != 0) & ((a < 0) != (b < 0)), q + 1, q)).astype(a.dtype)


def _shift_right_logical(a, b):
    if a.dtype.kind == "u" or a.dtype == np.bool_:
        return np.right_shift(a, b)
    unsigned = np.dtype(f"u{a.dtype.itemsize}")
    return np.right_shift(a.view(unsigned) if a.ndim else a.astype(unsigned), b.astype(unsigned)).astype(a.dtype)


def _shift_right_arithmetic(a, b):
    """The spec shifts the bit pattern, replicating its top bit, for unsigned types too (numpy's right_shift of
    an unsigned is logical): shift the pattern as the signed type of its width. numpy's signed shift already
    gives the spec's rule for amounts at or past the width, taken as unsigned (all copies of the sign bit).
    A 1-bit bool is its own sign bit: every shift leaves it."""
    if a.dtype == np.bool_:
        return a
    if a.dtype.kind != "u":
        return np.right_shift(a, b)
    signed = np.dtype(f"i{a.dtype.itemsize}")
    return np.right_shift(np.asarray(a).view(signed), np.asarray(b).view(signed)).view(a.dtype)


def _power(a, b):
    """Integer powers as StableHLO defines them for negative exponents (numpy raises): 1 ** -n is 1,
    (-1) ** -n is +-1, any other base gives 0 (the truncated reciprocal); 0 ** -n is 0 too."""
    if a.dtype.kind not in "iu" or b.dtype.kind == "u":
        return np.power(a, b)
    negative = b < 0
    if not np.any(negative):
        return np.power(a, b)
    with np.errstate(over="ignore"):
        result = np.power(a, np.where(negative, 0, b))
    odd = (b % 2) != 0
    reciprocal = np.where(a == 1, 1, np.where(a == -1, np.where(odd, -1, 1), 0))
    return np.where(negative, reciprocal, result).astype(a.dtype)


def _logistic(x):
    return (1 / (1 + np.exp(-x.astype(np.float64) if x.dtype.itemsize < 4 else -x))).astype(x.dtype)


def _round_afz(x):
    return (np.sign(x) * np.floor(np.abs(x) + 0.5)).astype(x.dtype)


def _sign(x):
    """The spec's sign: a zero keeps its sign (numpy's sign(-0.0) is +0.0)."""
    return np.where(x == 0, x, np.sign(x))


def _same_type(fn):
    """Elementwise ops: compute with numpy, keep the result type (numpy scalars upcast otherwise)."""
    def build(op):
        dtype = dtype_of(op.result.type)
        return lambda *xs: np.asarray(fn(*xs), dtype=dtype)
    return build


_UNARY = {
    "negate": np.negative, "abs": np.abs, "sign": _sign, "exponential": np.exp,
    "exponential_minus_one": np.expm1, "log": np.log, "log_plus_one": np.log1p, "sqrt": np.sqrt,
    "rsqrt": lambda x: 1 / np.sqrt(x), "cbrt": np.cbrt, "tanh": np.tanh, "logistic": _logistic,
    "sine": np.sin, "cosine": np.cos, "tan": np.tan, "floor": np.floor, "ceil": np.ceil,
    "round_nearest_even": np.round, "round_nearest_afz": _round_afz,
    "not": lambda x: np.logical_not(x) if x.dtype == np.bool_ else np.invert(x),
}
_BINARY = {
    "add": np.add, "subtract": np.subtract, "multiply": np.multiply, "maximum": np.maximum,
    "minimum": np.minimum, "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor,
    "atan2": np.arctan2, "shift_left": np.left_shift, "shift_right_arithmetic": _shift_right_arithmetic,
    "shift_right_logical": _shift_right_logical, "power": _power,
    "divide": lambda a, b: _int_divide(a, b) if a.dtype.kind in "iu" else np.true_divide(a, b),
    "remainder": np.fmod,
}
_COMPARE = {"EQ": np.equal, "NE": np.not_equal, "LT": np.less, "LE": np.less_equal, "GT": np.greater,
            "GE": np.greater_equal}


def _total_order_key(x):
    """Floats as integers in IEEE totalOrder (-NaN < -inf < ... < -0 < +0 < ... < +inf < +NaN): the bits,
    negatives mirrored below zero."""
    bits = np.dtype(f"i{x.dtype.itemsize}")
    i = np.ascontiguousarray(x).view(bits).astype(np.int64)
    return np.where(i < 0, np.iinfo(bits).min - i - 1, i)   # -0 (the bits of min) just below +0


def _compare(op):
    """compare_type TOTALORDER orders floats by totalOrder (NaNs by sign and payload, -0 before +0); the others
    (FLOAT, SIGNED, UNSIGNED) are numpy's comparison of the operands' own type."""
    compare = _COMPARE[enum_attr(op, "comparison_direction")]
    total = "compare_type" in op.attributes and enum_attr(op, "compare_type") == "TOTALORDER"
    operand = dtype_of(op.operands[0].type)
    if total and (operand.kind == "f" or operand.name == "bfloat16"):
        return lambda a, b: compare(_total_order_key(a), _total_order_key(b))
    return compare


def _convert(op):
    """numpy's astype; complex -> real keeps the real part (StableHLO's rule; numpy would warn)."""
    dtype = dtype_of(op.result.type)
    if dtype.kind != "c" and dtype_of(op.operands[0].type).kind == "c":
        return lambda x: np.real(x).astype(dtype)
    return lambda x: np.asarray(x).astype(dtype)


OPS.update({f"stablehlo.{name}": _same_type(fn) for name, fn in {**_UNARY, **_BINARY}.items()})
OPS.update({
    "stablehlo.compare": _compare,
    "stablehlo.select": _same_type(np.where),
    "stablehlo.is_finite": lambda op: np.isfinite,
    "stablehlo.convert": _convert,
})
