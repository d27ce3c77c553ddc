"""numpy's further math names, each a composite of the op library with numpy's special values:
logaddexp(2), sinc, fmod, fmax/fmin, heaviside, angles, float_power, divmod, modf, ldexp, gcd/lcm,
isclose/allclose/array_equal, ptp, count_nonzero, diff/ediff1d, trapezoid, polyval, convolve/correlate, interp.

Built from traced ops, so they differentiate where their pieces do and run on every target.
"""
from __future__ import annotations

import math

import numpy as np

from ...errors import DTypeError, ShapeError
from .. import dtypes
from ..tensor import Tensor
from . import _core
from ._core import as_tensor, describe, fail
from .complex_math import complex, conj, conjugate, imag, real  # noqa: F401  (numpy's names, in numeric's __all__)
from .elementwise import binary, compare, unary, where
from ..control import while_loop
from .math import FORMATS, bitcast
from .indexing import take
from .joining import concatenate, pad, stack
from .matmul import dot_general
from .reductions import all as _all, any as _any, max as _max, min as _min, sum as _sum
from .shape import flip as reverse, ravel, reshape, slice_axis, static_int
from .statistics import argsort


def _floats(op: str, *xs, broadcast: bool = True, complex_ok: bool = False):
    """Operands promoted together, integers and bools becoming the default float (numpy's float ufuncs);
    complex ones stay complex where the op takes them (`complex_ok`) and are refused where it does not."""
    tensors, dtype, weak = _core.promote(op, *xs)
    if dtypes.is_complex(dtype):
        if not complex_ok:
            fail(DTypeError, op, f"does not take complex operands ({', '.join(describe(t) for t in tensors)})")
        return _core.broadcast_all(op, tensors) if broadcast else tensors
    if not dtypes.is_float(dtype):
        tensors = [_core.convert(t, dtypes.DEFAULT_FLOAT, weak) for t in tensors]
    return _core.broadcast_all(op, tensors) if broadcast else tensors


def logaddexp(x, y) -> Tensor:
    """log(exp(x) + exp(y)) without overflow: max + log1p(exp(-|x - y|)); equal infinities give that infinity."""
    x, y = _floats("logaddexp", x, y)
    big = binary("maximum", x, y)
    gap = unary("abs", x - y)
    return where(compare("equal", x, y), x + math.log(2.0), big + unary("log1p", unary("exp", -gap)))


def logaddexp2(x, y) -> Tensor:
    """log2(2**x + 2**y) without overflow."""
    x, y = _floats("logaddexp2", x, y)
    big = binary("maximum", x, y)
    gap = unary("abs", x - y)
    return where(compare("equal", x, y), x + 1.0, big + unary("log1p", unary("exp2", -gap)) / math.log(2.0))


def sinc(x) -> Tensor:
    """sin(pi x) / (pi x), 1 at 0."""
    (x,) = _floats("sinc", x, complex_ok=True)
    zero = compare("equal", x, 0.0)
    safe = where(zero, 1.0, x) * math.pi
    return where(zero, 1.0, unary("sin", safe) / safe)


def fmod(x, y) -> Tensor:
    """C's fmod (numpy.fmod): the remainder with the sign of x; integer fmod(x, 0) is 0, as numpy's."""
    (x, y), dtype, _ = _core.promote("fmod", x, y)
    x, y = _core.broadcast_all("fmod", [x, y])
    r = binary("remainder", x, y)     # numpy's remainder, exact, with y's sign: differs by y where signs differ
    zero = _core.constant(0, dtype)
    wrong = compare("not_equal", r, zero) & compare("not_equal", compare("less", r, zero), compare("less", x, zero))
    out = where(wrong, r - y, r)
    if not dtypes.is_float(dtype):
        return out
    out = where(compare("equal", out, zero), binary("copysign", out, x), out)   # zeros take x's sign
    return where(unary("isinf", y) & unary("isfinite", x), x, out)            # remainder(-1, inf) is inf


def _ignoring_nan(op: str, extreme: str, x, y) -> Tensor:
    """maximum/minimum of x and y where neither is NaN, else the one that is not (NaN if both are)."""
    (x, y), _, _ = _core.promote(op, x, y)
    x, y = _core.broadcast_all(op, [x, y])
    if not dtypes.is_float(x.dtype):
        return binary(extreme, x, y)
    return where(unary("isnan", x), y, where(unary("isnan", y), x, binary(extreme, x, y)))


def fmax(x, y) -> Tensor:
    """The larger, ignoring a NaN (numpy.fmax: NaN only if both are)."""
    return _ignoring_nan("fmax", "maximum", x, y)


def fmin(x, y) -> Tensor:
    """The smaller, ignoring a NaN (numpy.fmin)."""
    return _ignoring_nan("fmin", "minimum", x, y)


def heaviside(x, h0) -> Tensor:
    """0 below 0, h0 at 0, 1 above; NaN stays NaN."""
    x, h0 = _floats("heaviside", x, h0)
    step = where(compare("less", x, 0.0), 0.0, where(compare("greater", x, 0.0), 1.0, h0))
    return where(unary("isnan", x), x, step)


def deg2rad(x) -> Tensor:
    (x,) = _floats("deg2rad", x)
    return x * (math.pi / 180.0)


def rad2deg(x) -> Tensor:
    (x,) = _floats("rad2deg", x)
    return x * (180.0 / math.pi)


radians, degrees = deg2rad, rad2deg


def positive(x) -> Tensor:
    """+x (a copy of x)."""
    x = as_tensor(x, "positive")
    if x.dtype == dtypes.bool_:
        fail(DTypeError, "positive", "does not take bool (numpy neither)")
    return x


def float_power(x, y) -> Tensor:
    """x ** y computed in float64 (complex128 for complex inputs: numpy's float_power), whatever the inputs."""
    (x, y), dtype, _ = _core.promote("float_power", x, y)
    wide = dtypes.complex128 if dtypes.is_complex(dtype) else dtypes.float64   # numpy: complex128 for complex
    return binary("power", _core.convert(x, wide), _core.convert(y, wide))


def divmod(x, y) -> tuple[Tensor, Tensor]:
    """(x // y, x % y) with numpy's signs."""
    return binary("floor_divide", x, y), binary("remainder", x, y)


def modf(x) -> tuple[Tensor, Tensor]:
    """(fractional part, integral part), both with x's sign, a zero fraction too (modf(-2.0) is (-0.0, -2.0));
    infinities give (+-0, +-inf)."""
    (x,) = _floats("modf", x)
    whole = unary("trunc", x)
    fraction = binary("copysign", where(unary("isinf", x), _core.constant(0, x.dtype), x - whole), x)
    return fraction, whole


def ldexp(x, n) -> Tensor:
    """x * 2**n for integer n."""
    n = as_tensor(n, "ldexp")
    if dtypes.is_float(n.dtype):
        fail(DTypeError, "ldexp", f"exponents must be integers, not {describe(n)}")
    (x,) = _floats("ldexp", x)
    # two halves, so 2**n itself does not overflow where x * 2**n does not (n up to twice the exponent range)
    half = binary("floor_divide", n, 2)
    first = binary("power", _core.broadcast_to(_core.constant(2.0, x.dtype), n.shape, "ldexp"),
                   _core.convert(half, x.dtype))
    second = binary("power", _core.broadcast_to(_core.constant(2.0, x.dtype), n.shape, "ldexp"),
                    _core.convert(n - half, x.dtype))
    return x * first * second


def frexp(x) -> tuple[Tensor, Tensor]:
    """(mantissa in [0.5, 1) with x's sign, int32 exponent) with x = mantissa * 2**exponent; zeros, infinities
    and NaN give (x, 0). All from the bits, in integers (IREE flushes subnormal floats to zero)."""
    (x,) = _floats("frexp", x)
    fmt = FORMATS[x.dtype]
    exponent_bits = fmt.bits - fmt.mantissa - 1
    bits = bitcast(x, fmt.uint)
    u = lambda v: _core.constant(v, fmt.uint)   # noqa: E731
    field = _core.convert((bits >> fmt.mantissa) & u((1 << exponent_bits) - 1), dtypes.int32)
    fraction = bits & u((1 << fmt.mantissa) - 1)
    sign = bits & u(1 << (fmt.bits - 1))
    # a subnormal's leading bit is at position p < mantissa: shift it up to the implicit bit's place
    top = _core.broadcast_to(_core.constant(0, dtypes.int32), x.shape, "frexp")
    for k in range(1, fmt.mantissa):
        top = top + _core.convert(compare("greater_equal", fraction, u(1 << k)), dtypes.int32)
    subnormal = compare("equal", field, 0)
    shift = _core.convert(where(subnormal, fmt.mantissa - top, 0), fmt.uint)
    fraction = (fraction << shift) & u((1 << fmt.mantissa) - 1)
    mantissa = bitcast(sign | u((fmt.bias - 1) << fmt.mantissa) | fraction, x.dtype)
    exponent = where(subnormal, top + 2 - fmt.bias - fmt.mantissa, field - (fmt.bias - 1))
    magnitude = bits & u((1 << (fmt.bits - 1)) - 1)      # zero tests on bits: IREE compares subnormals as 0
    special = compare("equal", magnitude, u(0)) | compare("equal", field, (1 << exponent_bits) - 1)
    return where(special, x, mantissa), where(special, 0, exponent)


# numpy.i0's Chebyshev coefficients (Cephes): [0, 8] in exp(x) i0(x) of x/2 - 2, and (8, inf) of 32/x - 2
_I0_SMALL = (-4.4153416464793395e-18, 3.3307945188222384e-17, -2.431279846547955e-16, 1.715391285555133e-15,
             -1.1685332877993451e-14, 7.676185498604936e-14, -4.856446783111929e-13, 2.95505266312964e-12,
             -1.726826291441556e-11, 9.675809035373237e-11, -5.189795601635263e-10, 2.6598237246823866e-09,
             -1.300025009986248e-08, 6.046995022541919e-08, -2.670793853940612e-07, 1.1173875391201037e-06,
             -4.4167383584587505e-06, 1.6448448070728896e-05, -5.754195010082104e-05, 0.00018850288509584165,
             -0.0005763755745385824, 0.0016394756169413357, -0.004324309995050576, 0.010546460394594998,
             -0.02373741480589947, 0.04930528423967071, -0.09490109704804764, 0.17162090152220877,
             -0.3046826723431984, 0.6767952744094761)
_I0_LARGE = (-7.233180487874754e-18, -4.830504485944182e-18, 4.46562142029676e-17, 3.461222867697461e-17,
             -2.8276239805165836e-16, -3.425485619677219e-16, 1.7725601330565263e-15, 3.8116806693526224e-15,
             -9.554846698828307e-15, -4.150569347287222e-14, 1.54008621752141e-14, 3.8527783827421426e-13,
             7.180124451383666e-13, -1.7941785315068062e-12, -1.3215811840447713e-11, -3.1499165279632416e-11,
             1.1889147107846439e-11, 4.94060238822497e-10, 3.3962320257083865e-09, 2.266668990498178e-08,
             2.0489185894690638e-07, 2.8913705208347567e-06, 6.889758346916825e-05, 0.0033691164782556943,
             0.8044904110141088)


def _chebyshev(x: Tensor, coefficients) -> Tensor:
    """Cephes' chbevl: the Chebyshev series at x (Clenshaw's recurrence)."""
    b0 = _core.broadcast_to(_core.constant(coefficients[0], x.dtype), x.shape, "i0")
    b1 = b0 * 0.0
    b2 = b1
    for c in coefficients[1:]:
        b2, b1 = b1, b0
        b0 = x * b1 - b2 + c
    return (b0 - b2) * 0.5


def i0(x) -> Tensor:
    """The modified Bessel function of the first kind, order 0 (numpy.i0's Chebyshev expansions)."""
    (x,) = _floats("i0", x)
    a = unary("abs", x)
    small = compare("less_equal", a, 8.0)
    near = unary("exp", a) * _chebyshev(a * 0.5 - 2.0, _I0_SMALL)
    safe = where(small, 8.0, a)
    far = unary("exp", safe) * _chebyshev(32.0 / safe - 2.0, _I0_LARGE) / unary("sqrt", safe)
    return where(small, near, far)


def gcd(x, y) -> Tensor:
    """The greatest common divisor of integers (non-negative), by Euclid's algorithm in a bounded loop."""
    (x, y), dtype, _ = _core.promote("gcd", x, y)
    if not dtypes.is_int(dtype):
        fail(DTypeError, "gcd", f"takes integers, not {describe(x)} and {describe(y)}")
    a, b = _core.broadcast_all("gcd", [unary("abs", x), unary("abs", y)])

    def body(state):
        a, b = state
        nonzero = compare("not_equal", b, 0)
        safe = where(nonzero, b, 1)
        return where(nonzero, b, a), where(nonzero, binary("remainder", a, safe), b)
    a, _ = while_loop(lambda s: _any(compare("not_equal", s[1], 0)), body, (a, b))
    return a


def lcm(x, y) -> Tensor:
    """The least common multiple of integers (non-negative); 0 when either is 0."""
    (x, y), dtype, _ = _core.promote("lcm", x, y)
    if not dtypes.is_int(dtype):
        fail(DTypeError, "lcm", f"takes integers, not {describe(x)} and {describe(y)}")
    g = gcd(x, y)
    zero = compare("equal", g, 0)
    return where(zero, 0, unary("abs", binary("floor_divide", x, where(zero, 1, g)) * y))


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False) -> Tensor:
    """|a - b| <= atol + rtol * |b|, elementwise (numpy's asymmetric rule); infinities equal only themselves."""
    (a, b), dtype, _ = _core.promote("isclose", a, b)
    a, b = _core.broadcast_all("isclose", [a, b])
    if not dtypes.is_float(dtype):
        if dtype == dtypes.bool_:
            return compare("equal", a, b)
        a, b = _core.convert(a, dtypes.DEFAULT_FLOAT), _core.convert(b, dtypes.DEFAULT_FLOAT)
    finite = unary("isfinite", a) & unary("isfinite", b)
    close = compare("less_equal", unary("abs", a - b), atol + rtol * unary("abs", b))
    out = where(finite, close, compare("equal", a, b))
    if equal_nan:
        out = out | (unary("isnan", a) & unary("isnan", b))
    return out


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False) -> Tensor:
    """Whether every element is close (a bool scalar)."""
    return _all(isclose(a, b, rtol, atol, equal_nan))


def array_equal(a1, a2, equal_nan=False) -> Tensor:
    """Same shape and elements (shapes are static: different shapes give a constant False)."""
    a1, a2 = as_tensor(a1, "array_equal"), as_tensor(a2, "array_equal")
    if a1.shape != a2.shape:
        return _core.constant(False, dtypes.bool_, op="array_equal")
    same = compare("equal", a1, a2)
    if equal_nan and (dtypes.is_float(a1.dtype) or dtypes.is_float(a2.dtype)):
        same = same | (unary("isnan", a1) & unary("isnan", a2))
    return _all(same)


def array_equiv(a1, a2) -> Tensor:
    """Equal after broadcasting to one shape (False if they do not broadcast)."""
    a1, a2 = as_tensor(a1, "array_equiv"), as_tensor(a2, "array_equiv")
    try:
        _core.broadcast_shapes("array_equiv", a1.shape, a2.shape)
    except ShapeError:
        return _core.constant(False, dtypes.bool_, op="array_equiv")
    return _all(compare("equal", a1, a2))


def ptp(x, axis=None, keepdims=False) -> Tensor:
    """Peak to peak: max - min."""
    return _max(x, axis, keepdims) - _min(x, axis, keepdims)


def count_nonzero(x, axis=None, keepdims=False) -> Tensor:
    """How many elements are not zero (int32, JAX's default integer)."""
    x = as_tensor(x, "count_nonzero")
    return _sum(_core.convert(compare("not_equal", x, _core.constant(0, x.dtype, x.weak)), dtypes.int32),
                axis, keepdims)


def diff(a, n=1, axis=-1, prepend=None, append=None) -> Tensor:
    """The n-th discrete difference along `axis` (bools: not-equal, as numpy)."""
    x = as_tensor(a, "diff")
    n = static_int("diff", "n", n)
    if n < 0:
        fail(ValueError, "diff", f"order n must be non-negative, not {n}")
    if x.ndim == 0:
        fail(ShapeError, "diff", "needs an array of at least 1 dimension")
    axis = _core.normalize_axis("diff", axis, x.ndim)
    parts = []
    for extra in (prepend, append):
        if extra is None:
            parts.append(None)
            continue
        e = as_tensor(extra, "diff")
        if e.ndim == 0:
            shape = list(x.shape)
            shape[axis] = 1
            e = _core.broadcast_to(e, tuple(shape), "diff")
        parts.append(e)
    pieces = [p for p in (parts[0], x, parts[1]) if p is not None]
    x = concatenate(pieces, axis=axis) if len(pieces) > 1 else x
    for _ in range(n):
        length = x.shape[axis]
        hi, lo = slice_axis(x, axis, 1, length), slice_axis(x, axis, 0, max(length - 1, 0))
        x = compare("not_equal", hi, lo) if x.dtype == dtypes.bool_ else hi - lo
    return x


def ediff1d(ary, to_end=None, to_begin=None) -> Tensor:
    """Differences of the flattened array, with optional values before and after."""
    x = ravel(as_tensor(ary, "ediff1d"))
    d = slice_axis(x, 0, 1, x.shape[0]) - slice_axis(x, 0, 0, max(x.shape[0] - 1, 0))
    pieces = [ravel(_core.convert(as_tensor(v, "ediff1d"), d.dtype)) for v in (to_begin,) if v is not None]
    pieces += [d] + [ravel(_core.convert(as_tensor(v, "ediff1d"), d.dtype)) for v in (to_end,) if v is not None]
    return concatenate(pieces) if len(pieces) > 1 else d


def trapezoid(y, x=None, dx=1.0, axis=-1) -> Tensor:
    """The integral of y by the trapezoidal rule along `axis`, over sample points x (or spacing dx)."""
    (y,) = _floats("trapezoid", y, complex_ok=True)
    axis = _core.normalize_axis("trapezoid", axis, y.ndim)
    n = y.shape[axis]
    mean = (slice_axis(y, axis, 1, n) + slice_axis(y, axis, 0, max(n - 1, 0))) * 0.5
    if x is None:
        return _sum(mean, axis=axis) * dx
    x = as_tensor(x, "trapezoid")
    if x.ndim == 1:
        if x.shape[0] != n:
            fail(ShapeError, "trapezoid", f"x has {x.shape[0]} points, y has {n} along axis {axis}")
        steps = slice_axis(x, 0, 1, n) - slice_axis(x, 0, 0, max(n - 1, 0))
        shape = [1] * y.ndim
        shape[axis] = max(n - 1, 0)
        steps = reshape(steps, tuple(shape))
    else:
        xa = _core.normalize_axis("trapezoid", axis - y.ndim + x.ndim, x.ndim)
        steps = slice_axis(x, xa, 1, n) - slice_axis(x, xa, 0, max(n - 1, 0))
    return _sum(mean * steps, axis=axis)


def polyval(p, x) -> Tensor:
    """The polynomial with coefficients p (highest power first) at x, by Horner's rule."""
    p = as_tensor(p, "polyval")
    if p.ndim != 1:
        fail(ShapeError, "polyval", f"coefficients must be 1-D, not {describe(p)}")
    (x,), _, _ = _core.promote("polyval", x)
    (p, x), _, _ = _core.promote("polyval", p, x)
    out = _core.broadcast_to(_core.constant(0, x.dtype, x.weak), x.shape, "polyval")
    for i in range(p.shape[0]):
        out = out * x + p[i]
    return out


def _correlate_valid(a: Tensor, v: Tensor) -> Tensor:
    """out[k] = sum_j a[k + j] v[j] for k in [0, len(a) - len(v)]: one row of a window product per shift."""
    n, m = a.shape[0], v.shape[0]
    rows = [slice_axis(a, 0, k, k + m) for k in range(n - m + 1)]
    return dot_general(stack(rows), v, ((1,), (0,)))


def correlate(a, v, mode="valid") -> Tensor:
    """numpy.correlate of two 1-D arrays: modes 'valid', 'same', 'full'; sum(a[n + k] * conj(v[n])), so complex v
    is conjugated (numpy's and JAX's)."""
    v = as_tensor(v, "correlate")
    return _convolve_or_correlate("correlate", a, conj(v) if dtypes.is_complex(v.dtype) else v, mode, flip=False)


def convolve(a, v, mode="full") -> Tensor:
    """numpy.convolve of two 1-D arrays (the kernel flipped): modes 'full', 'same', 'valid'."""
    return _convolve_or_correlate("convolve", a, v, mode, flip=True)


def _convolve_or_correlate(op: str, a, v, mode: str, flip: bool) -> Tensor:
    (a, v), _, _ = _core.promote(op, a, v)
    if a.ndim != 1 or v.ndim != 1:
        fail(ShapeError, op, f"takes 1-D arrays, not {describe(a)} and {describe(v)}")
    if a.shape[0] == 0 or v.shape[0] == 0:
        fail(ShapeError, op, "arrays must not be empty")
    if mode not in ("valid", "same", "full"):
        fail(ValueError, op, f"mode must be 'valid', 'same' or 'full', not {mode!r}")
    swapped = v.shape[0] > a.shape[0]
    if swapped:   # numpy swaps so the longer one slides; correlate then reverses the result
        a, v = v, a
    if flip:
        v = reverse(v)
    n, m = a.shape[0], v.shape[0]
    widths = {"valid": (0, 0), "same": (m // 2, m - 1 - m // 2), "full": (m - 1, m - 1)}[mode]
    out = _correlate_valid(pad(a, (widths,)), v)
    return reverse(out) if swapped and not flip else out


def interp(x, xp, fp, left=None, right=None, period=None) -> Tensor:
    """Piecewise-linear interpolation of (xp, fp) at x, xp increasing; `left`/`right` beyond the ends (default:
    fp's first and last values); NaN stays NaN. Complex fp: its parts interpolated apart (numpy's). With a
    `period`, numpy's: x and xp are taken modulo it (xp in any order), the ends wrap round, left/right unused."""
    values = as_tensor(fp, "interp")
    if dtypes.is_complex(values.dtype):
        def part(v, take_part):
            return None if v is None else take_part(v) if isinstance(v, Tensor) else \
                float(np.real(v) if take_part is real else np.imag(v))
        return complex(interp(x, xp, real(values), part(left, real), part(right, real), period),
                       interp(x, xp, imag(values), part(left, imag), part(right, imag), period))
    x, xp, fp = _floats("interp", x, xp, fp, broadcast=False)
    if xp.ndim != 1 or fp.ndim != 1 or xp.shape != fp.shape or xp.shape[0] == 0:
        fail(ShapeError, "interp", f"xp and fp must be 1-D of one non-zero length, not {describe(xp)} and "
                                   f"{describe(fp)}")
    if period is not None:
        if period == 0:
            fail(ValueError, "interp", "period must be a non-zero value")
        period, left, right = abs(period), None, None
        x, xp = binary("remainder", x, period), binary("remainder", xp, period)
        order = argsort(xp)
        xp, fp = take(xp, order), take(fp, order)
        xp = concatenate([xp[-1:] - period, xp, xp[:1] + period])
        fp = concatenate([fp[-1:], fp, fp[:1]])
    n, flat = xp.shape[0], ravel(x)
    if n == 1:
        value = _core.broadcast_to(fp, flat.shape, "interp")
    else:   # the segment of each x: how many xp are <= x, minus one, within [0, n - 2]
        count = _sum(_core.convert(compare("less_equal", reshape(xp, (1, n)), reshape(flat, (flat.shape[0], 1))),
                                   dtypes.int32), axis=1)
        i = binary("minimum", binary("maximum", count - 1, 0), n - 2)
        x0, x1, f0, f1 = take(xp, i), take(xp, i + 1), take(fp, i), take(fp, i + 1)
        flat_span = compare("equal", x1, x0)
        t = (flat - x0) / where(flat_span, 1.0, x1 - x0)
        value = where(compare("equal", flat, x1), f1, where(flat_span, f0, f0 + t * (f1 - f0)))
    low = fp[0] if left is None else left
    high = fp[n - 1] if right is None else right
    value = where(compare("less", flat, xp[0]), low, where(compare("greater", flat, xp[n - 1]), high, value))
    return reshape(where(unary("isnan", flat), flat, value), x.shape)


__all__ = ["allclose", "array_equal", "array_equiv", "conj", "conjugate", "convolve", "correlate",
           "count_nonzero", "deg2rad", "degrees", "diff", "divmod", "ediff1d", "float_power", "fmax", "fmin",
           "fmod", "frexp", "gcd", "i0", "heaviside", "imag", "interp", "isclose", "lcm", "ldexp", "logaddexp", "logaddexp2",
           "modf", "polyval", "positive", "ptp", "rad2deg", "radians", "real", "sinc", "trapezoid"]


def round_(x, decimals: int = 0) -> Tensor:
    """numpy.round / around: to `decimals` places, halves to even (x * 10^d rounded, then divided, as numpy
    and jax.numpy do: so 2.675 with decimals=2 gives 2.67, 2.675 not being exact); integers are unchanged
    for decimals >= 0 and rounded to tens, hundreds ... for negative ones."""
    x = as_tensor(x, "round")
    decimals = static_int("round", "decimals", decimals)
    if decimals == 0 or dtypes.is_int(x.dtype) and decimals > 0 or x.dtype == dtypes.bool_:
        return unary("round", x) if decimals == 0 and not dtypes.is_int(x.dtype) else x
    if dtypes.is_complex(x.dtype):
        return complex(round_(real(x), decimals), round_(imag(x), decimals))
    if dtypes.is_int(x.dtype):
        factor = 10 ** -decimals
        scaled = _core.convert(x, dtypes.DEFAULT_FLOAT) / factor
        return _core.convert(unary("round", scaled) * factor, x.dtype)
    factor = _core.constant(10.0 ** decimals, x.dtype, True)
    return unary("round", x * factor) / factor


def rint(x) -> Tensor:
    """Round to the nearest integer, halves to even; integers become the default float (numpy's ufunc)."""
    (x,) = _floats("rint", x, complex_ok=True)
    return complex(unary("round", real(x)), unary("round", imag(x))) if dtypes.is_complex(x.dtype) else \
        unary("round", x)


def fabs(x) -> Tensor:
    """The absolute value, as a float (numpy's fabs: integers become the default float; complex refused)."""
    (x,) = _floats("fabs", x)
    if dtypes.is_complex(x.dtype):
        fail(DTypeError, "fabs", f"is not defined for complex {describe(x)}; use abs")
    return unary("abs", x)


def isposinf(x) -> Tensor:
    return binary("logical_and", unary("isinf", as_tensor(x, "isposinf")), compare("greater", x, 0))


def isneginf(x) -> Tensor:
    return binary("logical_and", unary("isinf", as_tensor(x, "isneginf")), compare("less", x, 0))
