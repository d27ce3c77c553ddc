"""Complex numbers and `stablehlo.fft`, by numpy: real, imag, complex, and the four FFT types over the
trailing `fft_length` dimensions, computed as numpy.fft computes them (pocketfft, in double precision and
rounded to the result type), so modules from `hj.from_mlir` that use stablehlo.fft run here exactly."""
from __future__ import annotations

import numpy as np

from ..dialects.types import attr_ints, dtype_of, enum_attr
from .interpreter import OPS


def _typed(fn):
    def build(op):
        dtype = dtype_of(op.result.type)
        return lambda *xs: np.asarray(fn(*xs), dtype=dtype)
    return build


def _fft(op):
    """numpy.fft over the last len(fft_length) axes; IRFFT's length gives the real output's sizes."""
    kind = enum_attr(op, "fft_type")
    lengths = attr_ints(op, "fft_length")
    dtype = dtype_of(op.result.type)
    axes = tuple(range(-len(lengths), 0))
    transform = {"FFT": np.fft.fftn, "IFFT": np.fft.ifftn, "RFFT": np.fft.rfftn, "IRFFT": np.fft.irfftn}[kind]

    def run(x):
        if x.size == 0 or 0 in lengths:
            return np.zeros(tuple(op.result.type.shape), dtype)
        return np.asarray(transform(x, s=lengths, axes=axes), dtype=dtype)
    return run


def _complex(dtype):
    """re + i*im without arithmetic (1j * inf would make the real part nan)."""
    def run(re, im):
        out = np.empty(np.shape(re), dtype)
        out.real, out.imag = re, im
        return out
    return run


OPS.update({
    "stablehlo.real": _typed(np.real),
    "stablehlo.imag": _typed(np.imag),
    "stablehlo.complex": lambda op: _complex(dtype_of(op.result.type)),
    "stablehlo.fft": _fft,
})
