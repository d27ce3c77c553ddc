"""Derivatives of the frontend's elementwise composites whose own ops have none worth having: exact argument
reductions run in integers, erf, lgamma and digamma are fitted polynomials. Each one records a `Region`
(frontend/derivatives.py) whose backward pass is the textbook derivative, written with frontend ops (so it
can be differentiated again). top_k, softmax, log_softmax and gelu declare theirs where they are defined
(`derivatives.closed_form`)."""
from __future__ import annotations

import math

from ...errors import DifferentiationError
from .. import dtypes, ops, trace as _trace
from ..derivatives import Region, add_region
from ..ops import elementwise


def _square(x):
    return x * x


UNARY = {  # name -> d(name)(x) from x and y = name(x)
    "arcsin": lambda x, y: ops.rsqrt(1 - x * x),
    "arccos": lambda x, y: -ops.rsqrt(1 - x * x),
    "arctan": lambda x, y: 1 / (1 + x * x),
    "sinh": lambda x, y: ops.cosh(x),
    "cosh": lambda x, y: ops.sinh(x),
    "arcsinh": lambda x, y: ops.rsqrt(x * x + 1),
    "arccosh": lambda x, y: ops.rsqrt((x - 1) * (x + 1)),
    "arctanh": lambda x, y: 1 / (1 - x * x),
    "exp2": lambda x, y: y * math.log(2),
    "log2": lambda x, y: 1 / (x * math.log(2)),
    "log10": lambda x, y: 1 / (x * math.log(10)),
    "erf": lambda x, y: (2 / math.sqrt(math.pi)) * ops.exp(-x * x),
    "erfc": lambda x, y: (-2 / math.sqrt(math.pi)) * ops.exp(-x * x),
    "lgamma": lambda x, y: ops.digamma(x),
    "softplus": lambda x, y: ops.sigmoid(x),
    # JAX's jax.nn.relu (and torch): slope 0 at 0, where maximum(x, 0)'s tie rule gave 0.5; the mask comes from
    # y, which the next layer reads anyway, so the forward's matmul dispatch no longer writes x out as well
    "relu": lambda x, y: ops.where(y > 0, 1.0, 0.0),
    "trunc": lambda x, y: ops.zeros_like(x),
}

BINARY = {  # name -> (d/dx, d/dy) from x, y and z = name(x, y)
    "hypot": lambda x, y, z: (x / z, y / z),
    "copysign": lambda x, y, z: (ops.where(ops.signbit(x) == ops.signbit(y), 1.0, -1.0).astype(x.dtype),
                                 ops.zeros_like(y)),
    "floor_divide": lambda x, y, z: (ops.zeros_like(x), ops.zeros_like(y)),
    "remainder": lambda x, y, z: (ops.ones_like(x), -ops.floor(x / y)),
}

NOT_DIFFERENTIABLE = {
    "digamma": "its derivative (trigamma) is not implemented",
    "nextafter": "it steps to the neighbouring float, a function of no slope",
}


def _differentiable(name, derivative):
    def run(composite, *xs):
        y = composite(*xs)
        if _trace.current() is None or not dtypes.is_float(y.dtype) or any(y.value == x.value for x in xs):
            return y

        def bwd(residuals, cts):
            *inputs, out = residuals
            slopes = derivative(*inputs, out)
            slopes = slopes if isinstance(slopes, tuple) else (slopes,)
            return [(cts[0] * s).astype(x.dtype) for s, x in zip(slopes, inputs)]
        add_region(Region(name, [x.value for x in xs], [y.value], [x.value for x in xs] + [y.value], bwd))
        return y
    return run


def _refused(name, why):
    def run(composite, *xs):
        y = composite(*xs)
        if _trace.current() is None or not dtypes.is_float(y.dtype):
            return y
        site = _trace.user_site()

        def bwd(residuals, cts):
            raise DifferentiationError(f"reverse mode through {name} (at {site}): {why}")
        add_region(Region(name, [x.value for x in xs], [y.value], [], bwd))
        return y
    return run


for _name, _slope in UNARY.items():
    elementwise.DIFFERENTIABLE[_name] = _differentiable(_name, _slope)
for _name, _slopes in BINARY.items():
    elementwise.DIFFERENTIABLE[_name] = _differentiable(_name, _slopes)
for _name, _why in NOT_DIFFERENTIABLE.items():
    elementwise.DIFFERENTIABLE[_name] = _refused(_name, _why)
