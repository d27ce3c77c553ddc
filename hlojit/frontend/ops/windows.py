"""numpy's window functions: bartlett, blackman, hamming, hanning, kaiser, with numpy's formulas.

The values depend only on M (and kaiser's beta), so each is computed in float64 with numpy while tracing and
becomes a float32 constant (float64 with `dtype=`), as jax.numpy's are float32 by default: a window costs
nothing at run time. M <= 0 gives an empty window and M = 1 the single value 1, as numpy.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes
from ..tensor import Tensor
from . import _core
from ._core import fail


def _window(op: str, M, dtype, formula) -> Tensor:
    if isinstance(M, Tensor):
        fail(TypeError, op, "M must be a Python int: the window's length is its shape")
    M = int(M)
    if M < 1:
        values = np.zeros(0)
    elif M == 1:
        values = np.ones(1)
    else:
        values = formula(M, np.arange(M, dtype=np.float64))
    return _core.constant(values, dtypes.canonical(dtype))


def bartlett(M, *, dtype=dtypes.float32) -> Tensor:
    """The triangular window, zero at both ends."""
    return _window("bartlett", M, dtype, lambda M, n: 1 - np.abs(2 * n / (M - 1) - 1))


def blackman(M, *, dtype=dtypes.float32) -> Tensor:
    return _window("blackman", M, dtype, lambda M, n: 0.42 - 0.5 * np.cos(2 * np.pi * n / (M - 1))
                   + 0.08 * np.cos(4 * np.pi * n / (M - 1)))


def hamming(M, *, dtype=dtypes.float32) -> Tensor:
    return _window("hamming", M, dtype, lambda M, n: 0.54 - 0.46 * np.cos(2 * np.pi * n / (M - 1)))


def hanning(M, *, dtype=dtypes.float32) -> Tensor:
    return _window("hanning", M, dtype, lambda M, n: 0.5 - 0.5 * np.cos(2 * np.pi * n / (M - 1)))


def kaiser(M, beta, *, dtype=dtypes.float32) -> Tensor:
    """I0(beta sqrt(1 - (2n/(M-1) - 1)^2)) / I0(beta); beta must be known when tracing (a Python number)."""
    if isinstance(beta, Tensor):
        fail(TypeError, "kaiser", "beta must be a Python number here (the window is a constant)")
    beta = float(beta)
    return _window("kaiser", M, dtype, lambda M, n: np.i0(beta * np.sqrt(1 - (2 * n / (M - 1) - 1) ** 2))
                   / np.i0(beta))
