"""CHLO ops, the "client HLO" that JAX's exports contain beside StableHLO: the special functions, the
broadcasting binary ops, top_k, and the small elementwise helpers; as numpy (float64 inside, the result
type outside) for an oracle, not for speed.
"""
from __future__ import annotations

import math

import numpy as np
from iree.compiler import ir

from ..dialects.types import attr_ints, dtype_of, enum_attr, shape_of
from .complex import _complex
from .elementwise import _BINARY, _COMPARE, _is_float, _total_order_key
from .interpreter import OPS
from .special import bessel_i1e, digamma, polygamma, zeta


def _vectorized(fn):
    return np.vectorize(fn, otypes=[np.float64])


def _lgamma(x: float) -> float:
    try:
        return math.lgamma(x)
    except (ValueError, OverflowError):
        return math.inf


def _erf_inv(y: float) -> float:
    """erf^-1 by Newton's method on math.erf from a rational first guess (Giles' approximation)."""
    if math.isnan(y) or abs(y) > 1:
        return math.nan
    if abs(y) == 1:
        return math.copysign(math.inf, y)
    w = -math.log((1 - y) * (1 + y))
    x = math.copysign(math.sqrt(w) * 0.88, y) if w > 5 else y * (0.886 + 0.23 * y * y)
    for _ in range(60):
        step = (math.erf(x) - y) / (2 / math.sqrt(math.pi) * math.exp(-x * x))
        x -= step
        if abs(step) <= 1e-17 * max(1.0, abs(x)):
            break
    return x


def _square(x):
    """x * x; on complex numbers ((re - im) (re + im), 2 re im) as chlo.square defines it: the real part does not
    overflow where re**2 - im**2 would, and is 0 where |re| = |im| is finite (numpy's square gives inf - inf)."""
    if x.dtype.kind != "c":
        return np.square(x)
    re, im = x.real, x.imag
    out = np.empty_like(x)
    with np.errstate(over="ignore", invalid="ignore"):
        out.real = np.where(np.isfinite(re) & (np.abs(re) == np.abs(im)), 0, (re - im) * (re + im))
        out.imag = 2 * (re * im)
    return out


def _in_float64(fn):
    """A special function of two operands computed in float64 (the result type is applied by its builder)."""
    return lambda a, b: fn(a.astype(np.float64), b.astype(np.float64))


_UNARY = {
    "erf": _vectorized(math.erf), "erfc": _vectorized(math.erfc), "erf_inv": _vectorized(_erf_inv),
    "lgamma": _vectorized(_lgamma), "digamma": digamma,
    "tan": np.tan, "sinh": np.sinh, "cosh": np.cosh, "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan,
    "asinh": np.arcsinh, "acosh": np.arccosh, "atanh": np.arctanh, "square": _square, "conj": np.conj,
    "is_inf": np.isinf, "is_neg_inf": np.isneginf, "is_pos_inf": np.isposinf, "bessel_i1e": bessel_i1e,
}
_SPECIAL_BINARY = {
    "polygamma": _in_float64(polygamma), "zeta": _in_float64(zeta),
    "next_after": np.nextafter,
}


def _unary(fn):
    def build(op):
        dtype = dtype_of(op.result.type)
        return lambda x: np.asarray(fn(x.astype(np.float64) if x.dtype.kind == "f" and dtype != np.bool_ else x),
                                    dtype=dtype)
    return build


def _broadcasting(fn):
    """chlo.broadcast_*: numpy broadcasting, or `broadcast_dimensions` mapping the lower-rank operand's axes."""
    def build(op):
        dtype = dtype_of(op.result.type)
        ranks = [len(shape_of(v.type)) for v in op.operands]
        dims = attr_ints(op, "broadcast_dimensions") if "broadcast_dimensions" in op.attributes else None

        def place(x, rank):
            if dims is None or x.ndim == max(ranks):
                return x
            shape = [1] * max(ranks)
            for axis, d in zip(dims, x.shape):
                shape[axis] = d
            return x.reshape(shape)
        return lambda a, b: np.asarray(fn(place(a, ranks[0]), place(b, ranks[1])), dtype=dtype)
    return build


def _broadcast_compare(op):
    direction = enum_attr(op, "comparison_direction")
    return _broadcasting(_COMPARE[direction])(op)


def _binary(fn):
    def build(op):
        dtype = dtype_of(op.result.type)
        return lambda a, b: np.asarray(fn(a, b), dtype=dtype)
    return build


def _broadcast_complex(op):
    """chlo.broadcast_complex: re + i*im after broadcasting, without arithmetic (as stablehlo.complex)."""
    make = _complex(dtype_of(op.result.type))
    return _broadcasting(lambda re, im: make(*np.broadcast_arrays(re, im)))(op)


def _top_k(op):
    """chlo.top_k: the k largest along the last axis, largest first, equal ones by position. Floats in IEEE
    totalOrder, as CHLO's own expansion (a stable sort by `compare GT, TOTALORDER`) and XLA order them: +NaN
    above +inf, -NaN below -inf, +0 above -0 (argsort of -x put NaN last, so JAX's top_k of [1, nan] gave 1)."""
    k = int(ir.IntegerAttr(op.attributes["k"]).value)

    def run(x):
        key = _total_order_key(x) if _is_float(x.dtype) else x
        order = np.argsort(~key, axis=-1, kind="stable")[..., :k]    # ~ reverses the order of every integer type
        return np.take_along_axis(x, order, -1), order.astype(np.int32)
    return run


def _constant_like(op):
    value = np.array(op.attributes["value"])
    shape, dtype = shape_of(op.result.type), dtype_of(op.result.type)
    return lambda x: np.full(shape, value, dtype)


OPS.update({f"chlo.{name}": _unary(fn) for name, fn in _UNARY.items()})
OPS.update({f"chlo.broadcast_{name}": _broadcasting(fn) for name, fn in _BINARY.items()})
OPS.update({f"chlo.{name}": _binary(fn) for name, fn in _SPECIAL_BINARY.items()})
OPS.update({f"chlo.broadcast_{name}": _broadcasting(fn) for name, fn in _SPECIAL_BINARY.items()})
OPS.update({
    "chlo.broadcast_complex": _broadcast_complex,
    "chlo.broadcast_compare": _broadcast_compare,
    "chlo.broadcast_select": lambda op: (lambda dtype: lambda p, a, b: np.asarray(np.where(p, a, b), dtype))(
        dtype_of(op.result.type)),
    "chlo.top_k": _top_k,
    "chlo.constant_like": _constant_like,
})
