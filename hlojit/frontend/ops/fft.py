"""hlojit.ops.fft: numpy.fft's names on traced arrays.

fft ifft rfft irfft hfft ihfft, their 2-D and n-D forms, fftfreq rfftfreq fftshift ifftshift, with numpy's
`n=` / `s=` / `axes=` (truncate or zero-pad first) and `norm=` ("backward": the inverse scales by 1/n,
"ortho": both by 1/sqrt(n), "forward": the forward one by 1/n). Float32 (and ints, f16) give complex64,
float64 gives complex128, as in JAX. The transforms are fft_plan's, built from real matmuls, so they run
on every target and differentiate with the ops they are made of.
"""
from __future__ import annotations

import math

import numpy as np

from ...errors import ShapeError
from .. import dtypes, eager as _eager
from ..tensor import Tensor
from . import fft_plan
from ._core import as_tensor, constant, convert, fail, normalize_axis
from .complex_math import complex as make_complex, conj, imag, real
from .joining import concatenate, pad, roll
from .shape import flip, moveaxis, slice_axis

_NORMS = (None, "backward", "ortho", "forward")


def _check_norm(op: str, norm):
    if norm not in _NORMS:
        fail(ValueError, op, f'norm must be "backward", "ortho" or "forward", not {norm!r}')


def _scale(n: int, norm, inverse: bool) -> float:
    """The factor the result is multiplied by."""
    if norm == "ortho":
        return 1 / math.sqrt(n)
    if (norm == "forward") != inverse:   # forward scales the forward transform, backward the inverse
        return 1 / n
    return 1.0


def _swap_norm(norm):
    return {None: "forward", "backward": "forward", "forward": "backward", "ortho": "ortho"}[norm]


def _resize(op: str, x: Tensor, axis: int, n: int) -> Tensor:
    """x truncated or zero-padded along axis to length n (numpy's n=)."""
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool) or n < 1:
        fail(ValueError, op, f"invalid number of data points ({n}) along axis {axis} of {list(x.shape)}")
    size = x.shape[axis]
    if n < size:
        return slice_axis(x, axis, 0, n)
    if n > size:
        widths = [(0, 0)] * x.ndim
        widths[axis] = (0, n - size)
        return pad(x, widths)
    return x


def _parts(op: str, x) -> tuple[Tensor, Tensor | None]:
    """(re, im) in the transform's float dtype; im is None for a real input."""
    x = as_tensor(x, op)
    part = fft_plan.part_dtype(x.dtype)
    if dtypes.is_complex(x.dtype):
        return convert(real(x), part), convert(imag(x), part)
    return convert(x, part), None


def _c2c(op: str, x, n, axis: int, norm, inverse: bool, keep: int | None = None) -> Tensor:
    """The transform along axis, of its first `keep` frequencies (all by default)."""
    _check_norm(op, norm)
    x = as_tensor(x, op)
    axis = normalize_axis(op, axis, x.ndim) if x.ndim else fail(ShapeError, op, "needs an array of rank >= 1")
    if n is not None:
        x = _resize(op, x, axis, n)
    if x.shape[axis] == 0:
        fail(ValueError, op, f"invalid number of data points (0) along axis {axis} of {list(x.shape)}")
    if 0 in x.shape:        # an empty stack of signals: nothing to transform (the plan's reshapes need a row)
        shape = list(x.shape)
        shape[axis] = keep or shape[axis]
        return constant(np.zeros(shape), dtypes.complex_dtype(fft_plan.part_dtype(x.dtype)))
    re, im = _parts(op, moveaxis(x, axis, -1))
    scale = _scale(re.shape[-1], norm, inverse)
    re, im = fft_plan.dft(re, im, inverse, keep)
    if scale != 1:
        re, im = re * scale, im * scale
    return moveaxis(make_complex(re, im), -1, axis)


def fft(a, n=None, axis=-1, norm=None) -> Tensor:
    """The 1-D discrete Fourier transform along `axis`: X_k = sum_j a_j exp(-2 pi i jk / n)."""
    return _c2c("fft", a, n, axis, norm, False)


def ifft(a, n=None, axis=-1, norm=None) -> Tensor:
    """The inverse of fft: exp(+2 pi i jk / n), scaled by 1/n by default."""
    return _c2c("ifft", a, n, axis, norm, True)


def rfft(a, n=None, axis=-1, norm=None) -> Tensor:
    """fft of a real input, keeping the n//2 + 1 non-negative frequencies."""
    a = as_tensor(a, "rfft")
    if dtypes.is_complex(a.dtype):
        a = real(a)   # numpy discards the imaginary part too
    axis = normalize_axis("rfft", axis, a.ndim) if a.ndim else fail(ShapeError, "rfft", "needs an array of rank >= 1")
    size = a.shape[axis] if n is None else n
    return _c2c("rfft", a, n, axis, norm, False, keep=size // 2 + 1 if size > 0 else None)


def irfft(a, n=None, axis=-1, norm=None) -> Tensor:
    """The inverse of rfft: a real result of length n (default 2 (m - 1)) from the m non-negative
    frequencies of a Hermitian spectrum."""
    _check_norm("irfft", norm)
    a = as_tensor(a, "irfft")
    if not a.ndim:
        fail(ShapeError, "irfft", "needs an array of rank >= 1")
    axis = normalize_axis("irfft", axis, a.ndim)
    n = 2 * (a.shape[axis] - 1) if n is None else n
    if not isinstance(n, (int, np.integer)) or n < 1:
        fail(ValueError, "irfft", f"invalid number of data points ({n}) along axis {axis}")
    half = _resize("irfft", a, axis, n // 2 + 1)
    full = half
    if n - n // 2 > 1:  # X[n - k] = conj(X[k]) for k = 1 .. ceil(n/2) - 1
        upper = slice_axis(half, axis, 1, n - n // 2)
        full = concatenate([half, conj(flip(upper, axis))], axis=axis)
    return real(_c2c("irfft", full, None, axis, norm, True))


def hfft(a, n=None, axis=-1, norm=None) -> Tensor:
    """The FFT of a signal with Hermitian symmetry given by its first half: real output of length n."""
    _check_norm("hfft", norm)
    return irfft(conj(as_tensor(a, "hfft")), n, axis, _swap_norm(norm))


def ihfft(a, n=None, axis=-1, norm=None) -> Tensor:
    """The inverse of hfft: the n//2 + 1 first values of the Hermitian spectrum of a real signal."""
    _check_norm("ihfft", norm)
    return conj(rfft(a, n, axis, _swap_norm(norm)))


def _axes_and_sizes(op: str, x: Tensor, s, axes) -> tuple[list[int], list]:
    """numpy's rule: axes default to the last len(s) axes (all axes without s); s defaults to None each."""
    if axes is None:
        axes = list(range(x.ndim - len(s), x.ndim)) if s is not None else list(range(x.ndim))
    axes = [normalize_axis(op, a, x.ndim) for a in (axes if isinstance(axes, (list, tuple)) else [axes])]
    if s is None:
        s = [None] * len(axes)
    if len(s) != len(axes):
        fail(ValueError, op, f"s={tuple(s)} and axes={tuple(axes)} have different lengths")
    return axes, list(s)


def _c2c_n(op, a, s, axes, norm, inverse):
    x = as_tensor(a, op)
    axes, sizes = _axes_and_sizes(op, x, s, axes)
    for axis, n in reversed(list(zip(axes, sizes))):
        x = _c2c(op, x, n, axis, norm, inverse)
    return x


def fftn(a, s=None, axes=None, norm=None) -> Tensor:
    """The n-D FFT: fft along each of `axes` (all by default), each truncated or padded to `s`."""
    return _c2c_n("fftn", a, s, axes, norm, False)


def ifftn(a, s=None, axes=None, norm=None) -> Tensor:
    return _c2c_n("ifftn", a, s, axes, norm, True)


def fft2(a, s=None, axes=(-2, -1), norm=None) -> Tensor:
    return _c2c_n("fft2", a, s, axes, norm, False)


def ifft2(a, s=None, axes=(-2, -1), norm=None) -> Tensor:
    return _c2c_n("ifft2", a, s, axes, norm, True)


def rfftn(a, s=None, axes=None, norm=None) -> Tensor:
    """rfft along the last of `axes`, then fft along the others."""
    x = as_tensor(a, "rfftn")
    axes, sizes = _axes_and_sizes("rfftn", x, s, axes)
    x = rfft(x, sizes[-1], axes[-1], norm)
    for axis, n in reversed(list(zip(axes[:-1], sizes[:-1]))):
        x = _c2c("rfftn", x, n, axis, norm, False)
    return x


def irfftn(a, s=None, axes=None, norm=None) -> Tensor:
    """ifft along all but the last of `axes`, then irfft along the last (length s[-1], default 2 (m - 1))."""
    x = as_tensor(a, "irfftn")
    axes, sizes = _axes_and_sizes("irfftn", x, s, axes)
    for axis, n in zip(axes[:-1], sizes[:-1]):
        x = _c2c("irfftn", x, n, axis, norm, True)
    return irfft(x, sizes[-1], axes[-1], norm)


def rfft2(a, s=None, axes=(-2, -1), norm=None) -> Tensor:
    return rfftn(a, s, axes, norm)


def irfft2(a, s=None, axes=(-2, -1), norm=None) -> Tensor:
    return irfftn(a, s, axes, norm)


def fftfreq(n: int, d: float = 1.0, dtype=None) -> Tensor:
    """The sample frequencies of an fft of length n with spacing d: [0, 1, ..., -(n//2), ..., -1] / (d n)."""
    dtype = dtypes.canonical(dtype or dtypes.DEFAULT_FLOAT)
    return constant(np.fft.fftfreq(n, d), dtype, op="fftfreq")


def rfftfreq(n: int, d: float = 1.0, dtype=None) -> Tensor:
    """The n//2 + 1 non-negative sample frequencies of an rfft of length n."""
    dtype = dtypes.canonical(dtype or dtypes.DEFAULT_FLOAT)
    return constant(np.fft.rfftfreq(n, d), dtype, op="rfftfreq")


def _shift(op: str, x, axes, sign: int) -> Tensor:
    x = as_tensor(x, op)
    axes = range(x.ndim) if axes is None else (axes if isinstance(axes, (list, tuple)) else [axes])
    axes = [normalize_axis(op, a, x.ndim) for a in axes]
    if not axes:
        return x
    return roll(x, [sign * (x.shape[a] // 2) for a in axes], axes)


def fftshift(x, axes=None) -> Tensor:
    """The zero frequency moved to the middle (numpy's roll by n // 2 along each axis)."""
    return _shift("fftshift", x, axes, 1)


def ifftshift(x, axes=None) -> Tensor:
    """The inverse of fftshift."""
    return _shift("ifftshift", x, axes, -1)


__all__ = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "rfft2", "irfft2", "fftn", "ifftn",
           "rfftn", "irfftn", "fftfreq", "rfftfreq", "fftshift", "ifftshift"]

_eager.wrap_namespace(globals(), __all__)   # last: outside a trace each runs at once, giving hj.Arrays
