"""arctan, arcsin and arccos, which StableHLO has no op for, from its atan2 (numpy's signed zeros and
infinities: atan2(x, 1) is arctan(x) for every x, nan and +-inf included).

sin, cos, tan and arctan2 are StableHLO's own ops (elementwise.py's rows); where IREE cannot link them (f64)
or computes them inaccurately (f32 far from 0), the pipeline rewrites them into basic ops for that target
(pipeline/accurate_math.py). Its polynomial kernels of sin and cos on [-pi/4, pi/4] also serve special.py.
Each carries its textbook derivative (`derivatives.derivative`).
"""
from __future__ import annotations

from ...pipeline.accurate_math import cos_kernel, horner, sin_kernel  # noqa: F401  (special.py's kernels)
from ..derivatives import derivative
from ..tensor import Tensor
from . import elementwise as ew


@ew.composite("arctan")
@derivative(lambda x, y: 1 / (1 + x * x))
@ew.in_float32_at_least
def arctan(x: Tensor) -> Tensor:
    return ew.binary("arctan2", x, 1.0)


@ew.composite("arcsin")
@derivative(lambda x, y: ew.unary("rsqrt", 1 - x * x))
@ew.in_float32_at_least
def arcsin(x: Tensor) -> Tensor:
    return ew.binary("arctan2", x, ew.unary("sqrt", (1 - x) * (1 + x)))


@ew.composite("arccos")
@derivative(lambda x, y: -ew.unary("rsqrt", 1 - x * x))
@ew.in_float32_at_least
def arccos(x: Tensor) -> Tensor:
    return 2 * ew.binary("arctan2", ew.unary("sqrt", 1 - x), ew.unary("sqrt", 1 + x))
