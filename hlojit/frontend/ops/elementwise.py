"""Elementwise ops, driven by two tables.

A row is the op's numpy name -> (StableHLO op, the dtype kinds it takes, whether integer inputs first
become the default float, the numpy reference that tests compare with). Rows whose StableHLO op is None
are composites, each registered where it is defined by `@composite(name)` (below the tables, and in math.py,
trig.py, special.py), with numpy's semantics where StableHLO's differ (integer
division, remainder's sign, bool arithmetic): a unary one is fn(x), a binary one fn(a, b), on operands already
promoted and broadcast. Those whose ops have no useful derivative (bit tricks, integer argument reduction)
declare theirs where they are defined (`derivatives.derivative`).

Complex operands (kind c) take the row's StableHLO op itself (stablehlo.sine of complex<f32> ...), as real ones do:
the reference backend computes it with numpy, and the pipeline writes it out on real parts for IREE
(pipeline/complex_math_pairs.py). The functions StableHLO has no complex op for (sinh, log10, arcsin ...) are
complex_composites.COMPOSITES, built from those ops.
"""
from __future__ import annotations

import math
from typing import Callable, NamedTuple

import numpy as np

from ...dialects import stablehlo as hlo
from ...errors import DTypeError
from .. import dtypes
from ..derivatives import derivative
from ..tensor import Tensor
from .shape import broadcast_to, ones_like, zeros_like
from ._core import as_tensor, broadcast_all, constant, convert, describe, emit, fail, promote, wrap


class Elementwise(NamedTuple):
    hlo: str | None          # StableHLO op name; None for a composite defined in this module
    kinds: str               # dtype kinds taken: b(ool) i(nt) u(nsigned) f(loat) c(omplex)
    to_float: bool           # bool/int operands first become the default float (exp, log, divide ...)
    numpy: Callable          # the numpy reference the op tests compare with


def _kind(dtype) -> str:
    return "f" if dtypes.is_float(dtype) else dtype.kind


def _lgamma(x: float) -> float:
    """math.lgamma with its limits where it raises: +inf at the poles and on overflow."""
    try:
        return math.lgamma(x)
    except (ValueError, OverflowError):
        return math.inf


def _digamma(x):
    """scipy.special.digamma, imported when a test asks (scipy is a test dependency, not hlojit's)."""
    from scipy.special import digamma
    return digamma(x)


UNARY = {
    "negative": Elementwise("negate", "iufc", False, np.negative),
    "abs": Elementwise(None, "biufc", False, np.abs),
    "sign": Elementwise(None, "iufc", False, np.sign),
    "exp": Elementwise("exponential", "fc", True, np.exp),
    "expm1": Elementwise("exponential_minus_one", "fc", True, np.expm1),
    "log": Elementwise("log", "fc", True, np.log),
    "log1p": Elementwise("log_plus_one", "fc", True, np.log1p),
    "sqrt": Elementwise("sqrt", "fc", True, np.sqrt),
    "rsqrt": Elementwise("rsqrt", "fc", True, lambda x: 1 / np.sqrt(x)),
    "tanh": Elementwise("tanh", "fc", True, np.tanh),
    "sigmoid": Elementwise("logistic", "fc", True, lambda x: 1 / (1 + np.exp(-x))),
    "sin": Elementwise("sine", "fc", True, np.sin),    # IREE's inaccurate/unlinkable ones: pipeline/accurate_math
    "cos": Elementwise("cosine", "fc", True, np.cos),
    "floor": Elementwise(None, "biuf", False, np.floor),
    "ceil": Elementwise(None, "biuf", False, np.ceil),
    "round": Elementwise(None, "biuf", False, np.round),
    "invert": Elementwise("not", "biu", False, np.invert),
    "logical_not": Elementwise(None, "biuf", False, np.logical_not),
    "isfinite": Elementwise(None, "biuf", False, np.isfinite),
    "isnan": Elementwise(None, "biuf", False, np.isnan),
    "isinf": Elementwise(None, "biuf", False, np.isinf),
    "square": Elementwise(None, "iufc", False, np.square),
    "reciprocal": Elementwise(None, "fc", True, np.reciprocal),
    "relu": Elementwise(None, "iuf", False, lambda x: np.maximum(x, 0)),
    "softplus": Elementwise(None, "f", True, lambda x: np.logaddexp(x, 0)),
    # the math family: composites in math.py, trig.py, special.py
    "cbrt": Elementwise("cbrt", "f", True, np.cbrt),
    "exp2": Elementwise(None, "f", True, np.exp2),
    "log2": Elementwise(None, "f", True, np.log2),
    "log10": Elementwise(None, "f", True, np.log10),
    "tan": Elementwise("tan", "fc", True, np.tan),
    "arcsin": Elementwise(None, "f", True, np.arcsin),
    "arccos": Elementwise(None, "f", True, np.arccos),
    "arctan": Elementwise(None, "f", True, np.arctan),
    "sinh": Elementwise(None, "f", True, np.sinh),
    "cosh": Elementwise(None, "f", True, np.cosh),
    "arcsinh": Elementwise(None, "f", True, np.arcsinh),
    "arccosh": Elementwise(None, "f", True, np.arccosh),
    "arctanh": Elementwise(None, "f", True, np.arctanh),
    "erf": Elementwise(None, "f", True, np.vectorize(math.erf, otypes=[np.float64])),
    "erfc": Elementwise(None, "f", True, np.vectorize(math.erfc, otypes=[np.float64])),
    "lgamma": Elementwise(None, "f", True, np.vectorize(_lgamma, otypes=[np.float64])),
    "digamma": Elementwise(None, "f", True, _digamma),
    "trunc": Elementwise(None, "biuf", False, np.trunc),
    "relu6": Elementwise(None, "iuf", False, lambda x: np.minimum(np.maximum(x, 0), 6)),
    "silu": Elementwise(None, "f", True, lambda x: x / (1 + np.exp(-x))),
    "log_sigmoid": Elementwise(None, "f", True, lambda x: -np.logaddexp(0, -x)),
}

BINARY = {
    "add": Elementwise("add", "biufc", False, np.add),
    "subtract": Elementwise("subtract", "iufc", False, np.subtract),
    "multiply": Elementwise("multiply", "biufc", False, np.multiply),
    "divide": Elementwise("divide", "fc", True, np.true_divide),
    "floor_divide": Elementwise(None, "iuf", False, np.floor_divide),
    "remainder": Elementwise(None, "iuf", False, np.remainder),
    "power": Elementwise("power", "iufc", False, np.power),
    "maximum": Elementwise("maximum", "biuf", False, np.maximum),
    "minimum": Elementwise("minimum", "biuf", False, np.minimum),
    "bitwise_and": Elementwise("and", "biu", False, np.bitwise_and),
    "bitwise_or": Elementwise("or", "biu", False, np.bitwise_or),
    "bitwise_xor": Elementwise("xor", "biu", False, np.bitwise_xor),
    "left_shift": Elementwise("shift_left", "iu", False, np.left_shift),
    "right_shift": Elementwise(None, "iu", False, np.right_shift),
    "logical_and": Elementwise(None, "biuf", False, np.logical_and),
    "logical_or": Elementwise(None, "biuf", False, np.logical_or),
    "logical_xor": Elementwise(None, "biuf", False, np.logical_xor),
    "arctan2": Elementwise("atan2", "f", True, np.arctan2),
    "hypot": Elementwise(None, "f", True, np.hypot),
    "copysign": Elementwise(None, "f", True, np.copysign),
    "nextafter": Elementwise(None, "f", True, np.nextafter),
}

COMPARISONS = {  # numpy name -> StableHLO comparison direction
    "equal": "EQ", "not_equal": "NE", "less": "LT", "less_equal": "LE", "greater": "GT", "greater_equal": "GE",
}

# name -> the function computing a UNARY (BINARY) row that has no StableHLO op of its own, from other ops; each is
# registered where it is defined, by @composite (here, and in math.py, trig.py, special.py)
_COMPOSITE_UNARY: dict = {}
_COMPOSITE_BINARY: dict = {}


def composite(name: str):
    """Register the decorated function as the composite of the UNARY or BINARY row `name` (one without a StableHLO
    op: row.hlo is None), once."""
    row, table = (UNARY[name], _COMPOSITE_UNARY) if name in UNARY else (BINARY[name], _COMPOSITE_BINARY)
    if row.hlo is not None or name in table:
        raise ValueError(f"{name}: a composite is only for a row without a StableHLO op, registered once")

    def register(fn):
        table[name] = fn
        return fn
    return register


def _check_kinds(name: str, row: Elementwise, operands):
    for x in operands:
        if _kind(x.dtype) not in row.kinds:
            taken = {"b": "bool", "i": "signed int", "u": "unsigned int", "f": "float", "c": "complex"}
            fail(DTypeError, name, f"does not take {x.dtype} (operand {x.dtype}{list(x.shape)}); it takes "
                                   f"{', '.join(taken[k] for k in row.kinds)}")


def _prepare(name: str, row: Elementwise, *operands) -> tuple[list[Tensor], object, bool]:
    tensors, dtype, weak = promote(name, *operands)
    if row.to_float and not dtypes.is_inexact(dtype):
        tensors = [convert(t, dtypes.DEFAULT_FLOAT, weak) for t in tensors]
        dtype = dtypes.DEFAULT_FLOAT
    _check_kinds(name, row, tensors)
    return broadcast_all(name, tensors), dtype, weak


def _emit_same(op: str, tensors: list[Tensor], dtype, weak) -> Tensor:
    if len(tensors) == 1:
        value = emit(hlo.unary, op, tensors[0].value)
    else:
        value = emit(hlo.binary, op, tensors[0].value, tensors[1].value)
    return wrap(value, tensors[0].shape, dtype, weak)


def _complex_composite(name: str):
    """The composite for complex operands of op `name` (complex_composites.COMPOSITES: sinh, log10, arcsin ...), or
    None. Imported here, when a complex operand asks: those composites are built from this module's ops, so their
    modules import this one."""
    from .complex_composites import COMPOSITES
    return COMPOSITES.get(name)


def _is_complex_value(x) -> bool:
    dtype = getattr(x, "dtype", None)
    return dtypes.is_complex(dtype) if dtype is not None else np.iscomplexobj(x)


def unary(name: str, x) -> Tensor:
    row = UNARY[name]
    composite = _complex_composite(name) if _is_complex_value(x) else None
    if composite is not None:
        return composite(as_tensor(x, name))
    (x,), dtype, weak = _prepare(name, row, x)
    if row.hlo is not None:
        return _emit_same(row.hlo, [x], dtype, weak)
    return _COMPOSITE_UNARY[name](x)


def binary(name: str, x, y) -> Tensor:
    row = BINARY[name]
    if name == "power" and _is_int(y) and isinstance(x, Tensor):    # x ** 3: repeated products
        return _integer_power(as_tensor(x, name), y)
    if row.hlo is None:
        tensors, _, _ = _prepare(name, row, x, y)
        return _COMPOSITE_BINARY[name](*tensors)
    tensors, dtype, weak = _prepare(name, row, x, y)
    # the spec's float power is C99's pow and its i1 add/multiply/maximum/minimum numpy's OR/AND: IREE's
    # exp(y log x) and XOR add are the pipeline's to mend (legalize.power_by_magnitude, bool_arithmetic_as_logic)
    return _emit_same(row.hlo, tensors, dtype, weak)


def compare(name: str, x, y) -> Tensor:
    tensors, dtype, _ = promote(name, x, y)
    a, b = broadcast_all(name, tensors)
    if dtypes.is_complex(dtype) and name not in ("equal", "not_equal"):
        fail(DTypeError, name, f"complex numbers have no order ({describe(a)}, {describe(b)})")
    return wrap(emit(hlo.compare, a.value, b.value, COMPARISONS[name]), a.shape, dtypes.bool_)


def _is_int(y) -> bool:
    return isinstance(y, int) and not isinstance(y, bool)


# --- composites ----------------------------------------------------------------------------------

def _full_like(x: Tensor, value, dtype=None) -> Tensor:
    return broadcast_to(constant(value, dtype or x.dtype, x.weak), x.shape)


def _select(pred: Tensor, a: Tensor, b: Tensor) -> Tensor:
    return wrap(emit(hlo.select, pred.value, a.value, b.value), a.shape, a.dtype, a.weak)


def _integer_power(x: Tensor, n: int) -> Tensor:
    """x ** n for a Python int n, by repeated squaring (what JAX's integer_pow lowers to)."""
    if n < 0:
        if not dtypes.is_inexact(x.dtype):
            fail(ValueError, "power", f"integers to negative integer powers are not allowed ({x.dtype} ** {n})")
        return unary("reciprocal", _integer_power(x, -n))
    if x.dtype == dtypes.bool_:
        x = convert(x, dtypes.DEFAULT_INT, True)
    result, base = None, x
    while n:
        if n & 1:
            result = base if result is None else _emit_same("multiply", [result, base], x.dtype, x.weak)
        n >>= 1
        if n:
            base = _emit_same("multiply", [base, base], x.dtype, x.weak)
    return result if result is not None else _full_like(x, 1)


def in_float32_at_least(fn):
    """Compute a float composite of f16/bf16 operands in f32 and round the result once."""
    def run(*xs):
        narrow = xs[0].dtype in (dtypes.float16, dtypes.bfloat16)
        if not narrow:
            return fn(*xs)
        out = fn(*(convert(x, dtypes.float32) for x in xs))
        return convert(out, xs[0].dtype, xs[0].weak)
    run.__name__ = fn.__name__
    return run


@composite("abs")
def _abs(x):
    """|x|; of a complex x the real magnitude (stablehlo.abs's result type)."""
    return x if x.dtype.kind in "bu" else _emit_same("abs", [x], dtypes.real_dtype(x.dtype), x.weak)


@composite("sign")
def _sign(x):
    if x.dtype.kind == "u":
        return convert(x != 0, x.dtype, x.weak)
    return _emit_same("sign", [x], x.dtype, x.weak)


def _rounding(op):
    def build(x):  # integers are already whole
        return _emit_same(op, [x], x.dtype, x.weak) if dtypes.is_float(x.dtype) else x
    return build


def _to_bool(x: Tensor) -> Tensor:
    return x if x.dtype == dtypes.bool_ else compare("not_equal", x, 0)


@composite("isfinite")
def _is_finite(x):
    if not dtypes.is_float(x.dtype):
        return _full_like(x, True, dtypes.bool_)
    return wrap(emit(hlo.is_finite, x.value), x.shape, dtypes.bool_)


@composite("isnan")
def _is_nan(x):
    return compare("not_equal", x, x) if dtypes.is_float(x.dtype) else _full_like(x, False, dtypes.bool_)


@composite("isinf")
def _is_inf(x):
    return compare("equal", _abs(x), float("inf")) if dtypes.is_float(x.dtype) else _full_like(x, False, dtypes.bool_)


# JAX's jax.nn.relu (and torch): slope 0 at 0, where maximum(x, 0)'s tie rule gave 0.5; the mask comes from
# y, which the next layer reads anyway, so the forward's matmul dispatch no longer writes x out as well
@composite("relu")
@derivative(lambda x, y: where(y > 0, 1.0, 0.0))
def _relu(x):
    return _emit_same("maximum", [x, _full_like(x, 0)], x.dtype, x.weak)


@composite("softplus")
@derivative(lambda x, y: unary("sigmoid", x))
def _softplus(x):
    """max(x, 0) + log1p(exp(-|x|)): no overflow for large |x|."""
    return binary("maximum", x, 0) + unary("log1p", unary("exp", -_abs(x)))


composite("floor")(_rounding("floor"))
composite("ceil")(_rounding("ceil"))
composite("round")(_rounding("round_nearest_even"))  # numpy rounds half to even


@composite("logical_not")
def _logical_not(x):
    return _emit_same("not", [_to_bool(x)], dtypes.bool_, False)


@composite("square")
def _square(x):
    return _emit_same("multiply", [x, x], x.dtype, x.weak)


@composite("reciprocal")
def _reciprocal(x):
    return _emit_same("divide", [_full_like(x, 1), x], x.dtype, x.weak)


def _safe_divisor(a: Tensor, b: Tensor) -> Tensor:
    """b with zeros (and -1 under INT_MIN) replaced by 1: integer division by them traps on x86."""
    bad = compare("equal", b, 0)
    if a.dtype.kind == "i":
        bad = bad | ((a == int(np.iinfo(a.dtype).min)) & (b == -1))
    return _select(bad, _full_like(b, 1), b)


def _fmod(a: Tensor, b: Tensor) -> Tensor:
    """C fmod (the dividend's sign): StableHLO's remainder."""
    return _emit_same("remainder", [a, b], a.dtype, a.weak)


@composite("remainder")
@derivative(lambda x, y, z: (ones_like(x), -unary("floor", x / y)))
def _remainder(a, b):
    """numpy's remainder: the result has the divisor's sign, a zero one too (-1.0 % 1.0 is 0.0, 1.0 % -1.0 is
    -0.0); x % 0 is 0 for integers, nan for floats."""
    dtype, weak = a.dtype, a.weak
    if dtypes.is_float(dtype):
        r = _fmod(a, b)
        fix = (r != 0) & ((r < 0) != (b < 0))
        return _select(r == 0, binary("copysign", _full_like(r, 0), b), _select(fix, r + b, r))
    r = _emit_same("remainder", [a, _safe_divisor(a, b)], dtype, weak)
    if dtype.kind == "i":
        r = _select((r != 0) & ((r < 0) != (b < 0)), r + b, r)
    return _select(b == 0, _full_like(r, 0), r)


@composite("floor_divide")
@derivative(lambda x, y, z: (zeros_like(x), zeros_like(y)))
def _floor_divide(a, b):
    """numpy's floor_divide: rounds toward -inf, a zero quotient with the sign of a / b (-0.0 // 1.0 is -0.0,
    -1.0 // -inf is 0.0); x // 0 is 0 for integers, +-inf/nan for floats."""
    dtype, weak = a.dtype, a.weak
    if dtypes.is_float(dtype):
        mod = _fmod(a, b)
        div = (a - mod) / b
        div = _select((mod != 0) & ((b < 0) != (mod < 0)), div - 1, div)
        floordiv = unary("floor", div)
        floordiv = _select(div - floordiv > 0.5, floordiv + 1, floordiv)
        floordiv = _select(div == 0, binary("copysign", _full_like(div, 0), a / b), floordiv)
        return _select(b == 0, a / b, floordiv)
    q = _emit_same("divide", [a, _safe_divisor(a, b)], dtype, weak)
    if dtype.kind == "i":
        r = _emit_same("remainder", [a, _safe_divisor(a, b)], dtype, weak)
        q = _select((r != 0) & ((r < 0) != (b < 0)), q - 1, q)
    return _select(b == 0, _full_like(q, 0), q)


@composite("right_shift")
def _right_shift(a, b):
    op = "shift_right_logical" if a.dtype.kind == "u" else "shift_right_arithmetic"
    return _emit_same(op, [a, b], a.dtype, a.weak)


def _logical(op):
    def build(a, b):
        return _emit_same(op, [_to_bool(a), _to_bool(b)], dtypes.bool_, False)
    return build


composite("logical_and")(_logical("and"))
composite("logical_or")(_logical("or"))
composite("logical_xor")(_logical("xor"))


def where(condition, x, y) -> Tensor:
    """Elements of x where condition holds, else of y (numpy broadcasting and promotion)."""
    (x, y), dtype, weak = promote("where", x, y)
    cond = _to_bool(as_tensor(condition, "where"))
    cond, x, y = broadcast_all("where", [cond, x, y])
    return _select(cond, x, y)


def astype(x, dtype) -> Tensor:
    """x converted to dtype; complex -> real keeps the real part (JAX; numpy warns and does the same)."""
    x = as_tensor(x, "astype")
    dtype = dtypes.canonical(dtype)
    if dtypes.is_complex(x.dtype) and not dtypes.is_complex(dtype):
        return astype(wrap(emit(hlo.real, x.value), x.shape, dtypes.real_dtype(x.dtype), x.weak), dtype)
    if dtype == dtypes.bool_ and x.dtype != dtypes.bool_:
        return compare("not_equal", x, 0)  # StableHLO convert to i1 is nonzero-is-true too; be explicit
    if dtype == dtypes.bfloat16 and _kind(x.dtype) in "biu":
        # through f32 (rounded twice), as JAX (XLA) converts (a direct convert rounds once:
        # 2**24 + 2**16 + 1 gives 2**24 + 2**17, JAX 2**24); pipeline/compile_rewrites.py keeps the two
        # converts apart where a target would fold them into one
        return convert(convert(x, dtypes.float32), dtype)
    return convert(x, dtype)
