"""VJP rules of the elementwise StableHLO ops (operands and results share one shape), plus select,
clamp and convert. Each is written with frontend ops, so the backward pass is itself differentiable."""
from __future__ import annotations

from .. import dtypes, ops
from ..ops._core import convert
from .core import no_gradient, register

no_gradient("floor", "ceil", "sign", "round_nearest_even", "round_nearest_afz", "compare", "is_finite", "not",
            "and", "or", "xor", "shift_left", "shift_right_arithmetic", "shift_right_logical", "popcnt",
            "count_leading_zeros", "iota", "constant", "bitcast_convert", "rng_bit_generator")


def _unary(name):
    """@_unary("exponential") def _(x, y, g): ... -> the cotangent of x from y = op(x) and g."""
    def add(fn):
        register(name)(lambda p, cts, active: [fn(p.inputs[0], p.outputs[0], cts[0])])
        return fn
    return add


def _binary(name):
    """@_binary("divide") def _(x, y, z, g, active) -> (gx, gy), computing only the active ones."""
    def add(fn):
        register(name)(lambda p, cts, active: list(fn(*p.inputs, p.outputs[0], cts[0], active)))
        return fn
    return add


register("negate")(lambda p, cts, active: [-cts[0]])
_unary("exponential")(lambda x, y, g: g * y)
_unary("exponential_minus_one")(lambda x, y, g: g * (y + 1))
_unary("log")(lambda x, y, g: g / x)
_unary("log_plus_one")(lambda x, y, g: g / (x + 1))
_unary("sqrt")(lambda x, y, g: g * 0.5 / y)
_unary("rsqrt")(lambda x, y, g: g * -0.5 * y / x)
_unary("cbrt")(lambda x, y, g: g / (3 * y * y))
_unary("tanh")(lambda x, y, g: g * (1 - y * y))
_unary("logistic")(lambda x, y, g: g * y * (1 - y))
_unary("sine")(lambda x, y, g: g * ops.cos(x))
_unary("cosine")(lambda x, y, g: -g * ops.sin(x))
_unary("tan")(lambda x, y, g: g * (1 + y * y))


@_unary("abs")
def _abs(x, y, g):
    """sign(x); of a complex x (a real |x|) conj(x) / |x|: the gradient of |x + iy| is (x - iy) / |z| in JAX's
    convention (dL/dx - i dL/dy)."""
    return g * (ops.conj(ops.sign(x)) if dtypes.is_complex(x.dtype) else ops.sign(x))


@_binary("add")
def _add(x, y, z, g, active):
    return g, g


@_binary("subtract")
def _subtract(x, y, z, g, active):
    return g, (-g if active[1] else None)


@_binary("multiply")
def _multiply(x, y, z, g, active):
    return (g * y if active[0] else None), (g * x if active[1] else None)


@_binary("divide")
def _divide(x, y, z, g, active):
    gx = g / y
    return (gx if active[0] else None), (-gx * z if active[1] else None)


@_binary("remainder")
def _remainder(x, y, z, g, active):
    """x - trunc(x / y) * y (StableHLO's remainder takes the dividend's sign)."""
    if not active[1]:
        return g, None
    q = x / y
    return (g if active[0] else None), -g * (ops.sign(q) * ops.floor(ops.abs(q)))


@_binary("power")
def _power(x, y, z, g, active):
    gx = gy = None
    if active[0]:  # y * x**(y-1), 0 where y == 0 (x**-1 at x == 0 would give nan)
        gx = g * ops.where(y == 0, 0.0, y * ops.power(x, y - 1))
    if active[1]:  # z * log(x), 0 where x == 0 (JAX's convention)
        gy = g * z * ops.log(ops.where(x == 0, 1.0, x))
    return gx, gy


def _extremum(pick):
    """maximum/minimum: the cotangent goes to the operand that was picked, half to each on a tie."""
    def rule(x, y, z, g, active):
        share = ops.where(pick(x, y), 1.0, ops.where(x == y, 0.5, 0.0)).astype(g.dtype)
        return (g * share if active[0] else None), (g * (1 - share) if active[1] else None)
    return rule


_binary("maximum")(_extremum(lambda x, y: x > y))
_binary("minimum")(_extremum(lambda x, y: x < y))


@_binary("atan2")
def _atan2(x, y, z, g, active):
    """z = atan2(x, y): d/dx = y / (x² + y²), d/dy = -x / (x² + y²)."""
    scale = g / (x * x + y * y)
    return (scale * y if active[0] else None), (-scale * x if active[1] else None)


@register("select")
def _select(p, cts, active):
    pred, on_true, _ = p.inputs
    g = cts[0]
    zero = ops.zeros_like(g)
    return [None, ops.where(pred, g, zero) if active[1] else None, ops.where(pred, zero, g) if active[2] else None]


@register("clamp")
def _clamp(p, cts, active):
    low, x, high = p.inputs
    g = cts[0]
    zero = ops.zeros_like(g)
    below, above = x < low, x > high
    inside = ops.logical_not(below | above)
    grads = [ops.where(below, g, zero), ops.where(inside, g, zero), ops.where(above, g, zero)]
    return [ops.sum(gr, axis=tuple(range(gr.ndim))) if t.shape == () and gr.shape != () else gr
            for gr, t in zip(grads, p.inputs)]


@register("convert")
def _convert(p, cts, active):
    """Back to the input's dtype; real -> complex gives back the real part of the cotangent (JAX's rule)."""
    (x,), g = p.inputs, cts[0]
    if not dtypes.is_inexact(x.dtype):
        return [None]
    if dtypes.is_complex(g.dtype) and not dtypes.is_complex(x.dtype):
        g = ops.real(g)
    return [convert(g, x.dtype)]


# Complex parts, with JAX's convention (cotangents are transposes of the linear map, no conjugation), so
# grad of a real loss of a complex z is the conjugate of 2 dL/dz̄: grad(abs(z)**2) = 2 conj(z).
register("real")(lambda p, cts, active: [ops.complex(cts[0], ops.zeros_like(cts[0]))])
register("imag")(lambda p, cts, active: [ops.complex(ops.zeros_like(cts[0]), -cts[0])])
register("complex")(lambda p, cts, active: [ops.real(cts[0]), -ops.imag(cts[0])])


@register("optimization_barrier")
def _barrier(p, cts, active):
    return list(cts)
