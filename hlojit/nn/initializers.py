"""Weight initialisers, as `jax.nn.initializers` has them: each factory returns `init(key, shape, dtype)`.

    w = hj.nn.glorot_uniform()(key, (784, 128))                 # dense: (in, out)
    k = hj.nn.he_normal(in_axis=1, out_axis=0)(key, (16, 3, 3, 3))  # conv: OIHW

Fans are JAX's: fan_in = shape[in_axis] * receptive field, fan_out = shape[out_axis] * receptive field,
where the receptive field is the product of the other dimensions (the kernel window). The defaults
(in_axis=-2, out_axis=-1) suit (in, out) dense kernels and HWIO conv kernels; pass in_axis=1, out_axis=0
for the OIHW kernels `hj.nn.conv2d` takes by default (`init_conv2d` does).

The "normal" variance-scaling initialisers (glorot_normal, he_normal, lecun_normal) draw from a normal
truncated at two standard deviations and rescaled to the asked variance, as JAX's do (same recipe, same
key use: the numbers agree with JAX's to a few ulps). Inside `hj.jit` an initialiser traces into the
caller's program; outside it runs as a small compiled program (one per shape and configuration).
"""
from __future__ import annotations

import math

import numpy as np

from .. import random
from ..errors import DTypeError, ShapeError
from ..frontend import dtypes, ops, trace
from ..frontend.jit import Exec
from ..frontend.ops._core import fail

_MODES = ("fan_in", "fan_out", "fan_avg")
_DISTRIBUTIONS = ("uniform", "normal", "truncated_normal")
_TRUNCATED_STD = 0.87962566103423978   # std of a standard normal truncated to [-2, 2]


def compute_fans(shape, in_axis=-2, out_axis=-1, batch_axis=()) -> tuple[float, float]:
    """(fan_in, fan_out) of a kernel shape, as jax.nn.initializers computes them."""
    shape = tuple(int(d) for d in shape)
    if len(shape) <= 1:
        fan = shape[0] if shape else 1
        return fan, fan
    try:
        batch = math.prod(shape[a] for a in ((batch_axis,) if isinstance(batch_axis, int) else batch_axis))
        receptive = math.prod(shape) / shape[in_axis] / shape[out_axis] / batch
        return shape[in_axis] * receptive, shape[out_axis] * receptive
    except IndexError:
        fail(ShapeError, "nn.initializers", f"in_axis {in_axis}, out_axis {out_axis} or batch_axis {batch_axis} "
                                            f"is out of range for shape {shape}")


def _float(op: str, dtype):
    dtype = dtypes.canonical(dtype)
    if not dtypes.is_float(dtype):
        fail(DTypeError, op, f"dtype must be a float type, not {dtype}")
    return dtype


def _truncated_normal(key, shape, dtype):
    """Standard normal truncated to [-2, 2] by the inverse CDF: JAX's random.truncated_normal recipe,
    computed in float32 (hj.random's erfinv is float32's)."""
    sqrt2 = float(np.float32(np.sqrt(2)))
    lo, hi = math.erf(-2 / math.sqrt(2)), math.erf(2 / math.sqrt(2))
    u = random.uniform(key, shape, dtypes.float32, np.float32(lo), np.float32(hi))
    z = random.erfinv_f32(u) * sqrt2
    z = ops.clip(z, np.nextafter(np.float32(-2), np.float32(0)), np.nextafter(np.float32(2), np.float32(0)))
    return ops.astype(z, dtype)


def _sample(key, shape, dtype, distribution, scale):
    """The traced body every initialiser shares: unit draws times a constant scale."""
    if distribution == "zeros":
        return ops.zeros(shape, dtype)
    if distribution == "ones":
        return ops.ones(shape, dtype)
    if distribution == "uniform":   # in [-scale, scale)
        return random.uniform(key, shape, dtype, -1.0) * np.asarray(scale, dtype)
    if distribution == "uniform_positive":   # in [0, scale)
        return random.uniform(key, shape, dtype) * np.asarray(scale, dtype)
    if distribution == "normal":
        draw = random.normal(key, shape, dtypes.float32 if dtype == dtypes.float64 else dtype)
        return ops.astype(draw, dtype) * np.asarray(scale, dtype)
    return _truncated_normal(key, shape, dtype) * np.asarray(scale, dtype)


_eager: list = []   # the compiled form of _sample for calls outside hj.jit, made on first use


def _eager_sample(key, **static):
    if not _eager:
        _eager.append(Exec(_sample, static_argnames=("shape", "dtype", "distribution", "scale")))
    return _eager[0](key, **static)


class Initializer:
    """`init(key, shape, dtype=None)`: an array of `shape` drawn with `key` (see the module docstring)."""

    def __init__(self, name: str, distribution: str, dtype, scale=None, mode=None, in_axis=-2, out_axis=-1,
                 batch_axis=()):
        self.name, self.distribution, self.dtype = name, distribution, _float(name, dtype)
        self.scale, self.mode = scale, mode
        self.in_axis, self.out_axis, self.batch_axis = in_axis, out_axis, batch_axis

    def __repr__(self):
        return f"hj.nn.{self.name}()"

    def __call__(self, key, shape, dtype=None):
        dtype = self.dtype if dtype is None else _float(self.name, dtype)
        shape = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(d) for d in shape)
        if any(d < 0 for d in shape):
            fail(ShapeError, self.name, f"shape {shape} has a negative dimension")
        scale = 1.0 if self.scale is None else self.scale
        if self.mode is not None:   # variance scaling: the std follows from the fans
            fan_in, fan_out = compute_fans(shape, self.in_axis, self.out_axis, self.batch_axis)
            fan = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2}[self.mode]
            variance = float(np.asarray(self.scale / max(fan, 1e-30), dtype))
            scale = {"uniform": math.sqrt(3 * variance), "normal": math.sqrt(variance),
                     "truncated_normal": math.sqrt(variance) / _TRUNCATED_STD}[self.distribution]
        if trace.current() is not None:
            return _sample(key, shape, dtype, self.distribution, float(scale))
        return _eager_sample(key, shape=shape, dtype=dtype, distribution=self.distribution, scale=float(scale))


def variance_scaling(scale: float, mode: str, distribution: str, in_axis=-2, out_axis=-1, batch_axis=(),
                     dtype=dtypes.float32) -> Initializer:
    """Draws with variance scale / fan (mode: fan_in, fan_out or fan_avg) from a uniform, a normal or a
    normal truncated at two standard deviations (jax.nn.initializers.variance_scaling)."""
    if mode not in _MODES:
        fail(ValueError, "variance_scaling", f"mode must be one of {_MODES}, not {mode!r}")
    if distribution not in _DISTRIBUTIONS:
        fail(ValueError, "variance_scaling", f"distribution must be one of {_DISTRIBUTIONS}, not {distribution!r}")
    if not scale > 0:
        fail(ValueError, "variance_scaling", f"scale must be positive, not {scale!r}")
    return Initializer("variance_scaling", distribution, dtype, float(scale), mode, in_axis, out_axis, batch_axis)


def _named(name: str, scale: float, mode: str, distribution: str, what: str):
    def factory(in_axis=-2, out_axis=-1, batch_axis=(), dtype=dtypes.float32) -> Initializer:
        init = variance_scaling(scale, mode, distribution, in_axis, out_axis, batch_axis, dtype)
        init.name = name
        return init
    factory.__name__ = factory.__qualname__ = name
    factory.__doc__ = f"{what} (jax.nn.initializers.{name}): variance_scaling({scale}, {mode!r}, {distribution!r})."
    return factory


glorot_uniform = _named("glorot_uniform", 1.0, "fan_avg", "uniform", "Glorot/Xavier uniform, for tanh/linear layers")
glorot_normal = _named("glorot_normal", 1.0, "fan_avg", "truncated_normal", "Glorot/Xavier truncated normal")
he_uniform = _named("he_uniform", 2.0, "fan_in", "uniform", "He/Kaiming uniform, for ReLU layers")
he_normal = _named("he_normal", 2.0, "fan_in", "truncated_normal", "He/Kaiming truncated normal, for ReLU layers")
lecun_uniform = _named("lecun_uniform", 1.0, "fan_in", "uniform", "LeCun uniform, for SELU layers")
lecun_normal = _named("lecun_normal", 1.0, "fan_in", "truncated_normal", "LeCun truncated normal")
xavier_uniform, xavier_normal, kaiming_uniform, kaiming_normal = glorot_uniform, glorot_normal, he_uniform, he_normal


def normal(stddev: float = 1e-2, dtype=dtypes.float32) -> Initializer:
    """Normal draws with standard deviation `stddev` (jax.nn.initializers.normal)."""
    return Initializer("normal", "normal", dtype, float(stddev))


def uniform(scale: float = 1e-2, dtype=dtypes.float32) -> Initializer:
    """Uniform draws in [0, scale) (jax.nn.initializers.uniform; variance_scaling's "uniform" is centred)."""
    return Initializer("uniform", "uniform_positive", dtype, float(scale))


def zeros(key, shape, dtype=dtypes.float32):
    """All zeros (biases, batch-norm offsets); the key is unused, as in jax.nn.initializers.zeros."""
    return Initializer("zeros", "zeros", dtype)(key, shape, dtype)


def ones(key, shape, dtype=dtypes.float32):
    """All ones (batch-norm and layer-norm scales)."""
    return Initializer("ones", "ones", dtype)(key, shape, dtype)
