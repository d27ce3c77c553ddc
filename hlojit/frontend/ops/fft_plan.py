"""The discrete Fourier transform along the last axis, built from real matmuls and elementwise ops.

IREE 3.13 does not lower stablehlo.fft on vmvx and only some sizes and dtypes on llvm-cpu (f64 not at all),
so hlojit builds the transform itself, on the real and imaginary parts as two real tensors (the matmuls
stay real, which IREE data-tiles, and complex numbers appear only at the ends):

- n <= DIRECT_MAX: one matmul of [re | im] by the real 2n x 2n matrix [[C, -S], [S, C]] of the DFT
  (C = cos, S = sin of 2 pi jk / n, computed in float64 by numpy and rounded once);
- otherwise n = n1 * n2 with n1 the divisor of n nearest sqrt(n): the "four-step" Cooley-Tukey FFT
  (DFTs of length n1 over the columns, twiddles exp(-2 pi i j2 k1 / n), DFTs of length n2 over the rows,
  a transpose), each length again by this plan: any n that factors into pieces <= DIRECT_MAX;
- a prime n > DIRECT_MAX (or a piece that is one): Bluestein's chirp-z, a convolution of length
  M = 2**ceil(log2(2n - 1)) done with two FFTs of length M by this plan, the chirp's FFT a constant.

Costs: O(n (n1 + n2 + ...)) multiply-adds in matmuls: 2**20 is 1024 x 1024 = (32 x 32) x (32 x 32).
"""
from __future__ import annotations

import functools
import math

import numpy as np

from .. import dtypes
from ..tensor import Tensor
from ._core import barrier, constant
from .joining import concatenate, pad
from .matmul import matmul
from .shape import reshape, slice_axis, transpose

DIRECT_MAX = 128


@functools.lru_cache(maxsize=64)
def _dft_matrix(n: int, inverse: bool, rows: str) -> np.ndarray:
    """[re | im] @ this = [re' | im'] of the DFT of length n (float64). rows="re" drops the im half (a real
    input), "both" keeps it."""
    k = np.arange(n)
    angle = 2 * np.pi * ((np.outer(k, k)) % n) / n     # reduced mod n: exact angles for large jk
    c, s = np.cos(angle), np.sin(angle) * (1 if inverse else -1)
    top = np.concatenate([c, s], axis=1)               # re * (c + i s)
    bottom = np.concatenate([-s, c], axis=1)           # i im * (c + i s)
    return top if rows == "re" else np.concatenate([top, bottom], axis=0)


@functools.lru_cache(maxsize=64)
def _twiddles(n1: int, n2: int, inverse: bool) -> tuple[np.ndarray, np.ndarray]:
    """cos and sin of the four-step twiddles exp(-+2 pi i j2 k1 / n), shaped [n2, n1] (j2, k1)."""
    n = n1 * n2
    angle = 2 * np.pi * (np.outer(np.arange(n2), np.arange(n1)) % n) / n
    return np.cos(angle), np.sin(angle) * (1 if inverse else -1)


def _split(n: int) -> int:
    """The divisor of n nearest sqrt(n) from below (1 for a prime)."""
    for d in range(math.isqrt(n), 0, -1):
        if n % d == 0:
            return d
    return 1


def _const(array: np.ndarray, dtype) -> Tensor:
    return barrier(constant(np.asarray(array, dtype), dtype))


def dft(re: Tensor, im: Tensor | None, inverse: bool = False) -> tuple[Tensor, Tensor]:
    """The unscaled DFT (exp(-2 pi i jk/n); exp(+...) if inverse) along the last axis of re + i im
    (im None: a real input). Returns (re, im) of the same shape."""
    n = re.shape[-1]
    if n <= DIRECT_MAX:
        return _direct(re, im, inverse)
    n1 = _split(n)
    if n1 == 1:
        return _bluestein(re, im, inverse)
    return _four_step(re, im, n1, n // n1, inverse)


def _direct(re, im, inverse):
    n = re.shape[-1]
    lead = re.shape[:-1]
    rows = "re" if im is None else "both"
    m = _const(_dft_matrix(n, inverse, rows), re.dtype)
    x = re if im is None else concatenate([re, im], axis=-1)
    flat = reshape(x, (-1, x.shape[-1])) if len(lead) != 1 else x
    out = matmul(flat, m)
    out = reshape(out, lead + (2 * n,)) if len(lead) != 1 else out
    return slice_axis(out, out.ndim - 1, 0, n), slice_axis(out, out.ndim - 1, n, 2 * n)


def _swap_last(t: Tensor) -> Tensor:
    axes = list(range(t.ndim))
    axes[-2], axes[-1] = axes[-1], axes[-2]
    return transpose(t, axes)


def _four_step(re, im, n1, n2, inverse):
    """x[j1 * n2 + j2] -> X[k1 + n1 * k2]: DFT_n1 over j1, twiddle, DFT_n2 over j2, read out transposed."""
    lead = re.shape[:-1]
    parts = [reshape(t, lead + (n1, n2)) for t in (re, im) if t is not None]
    cols = [_swap_last(t) for t in parts]                          # [..., j2, j1]
    re1, im1 = dft(cols[0], cols[1] if im is not None else None, inverse)   # [..., j2, k1]
    c, s = _twiddles(n1, n2, inverse)
    c, s = _const(c, re.dtype), _const(s, re.dtype)
    re2, im2 = re1 * c - im1 * s, re1 * s + im1 * c
    re3, im3 = dft(_swap_last(re2), _swap_last(im2), inverse)      # [..., k1, k2]
    return tuple(reshape(_swap_last(t), lead + (n1 * n2,)) for t in (re3, im3))   # k = k1 + n1 k2


def _fft_length(n: int) -> int:
    return 1 << (2 * n - 2).bit_length()


@functools.lru_cache(maxsize=16)
def _chirp(n: int, inverse: bool) -> tuple[np.ndarray, np.ndarray]:
    """w_k = exp(-+ pi i k^2 / n) (k^2 reduced mod 2n, exactly) and the FFT of length M of the conjugate
    chirp laid out for a circular convolution."""
    k = np.arange(n)
    w = np.exp((1j if inverse else -1j) * np.pi * ((k * k) % (2 * n)) / n)
    m = _fft_length(n)
    b = np.zeros(m, np.complex128)
    b[:n] = np.conj(w)
    b[m - n + 1:] = np.conj(w[1:][::-1])
    return w, np.fft.fft(b)


def _bluestein(re, im, inverse):
    """X_k = w_k sum_j (x_j w_j) conj(w)_{k-j}: the sum is a circular convolution of length M >= 2n - 1."""
    n = re.shape[-1]
    m = _fft_length(n)
    w, fb = _chirp(n, inverse)
    wr, wi = _const(w.real, re.dtype), _const(w.imag, re.dtype)
    ar, ai = (re * wr, re * wi) if im is None else (re * wr - im * wi, re * wi + im * wr)
    widths = [(0, 0)] * (re.ndim - 1) + [(0, m - n)]
    fr, fi = dft(pad(ar, widths), pad(ai, widths), False)
    br, bi = _const(fb.real / m, re.dtype), _const(fb.imag / m, re.dtype)   # 1/M: the inverse FFT's scale
    cr, ci = fr * br - fi * bi, fr * bi + fi * br
    gr, gi = dft(cr, ci, True)
    gr, gi = slice_axis(gr, gr.ndim - 1, 0, n), slice_axis(gi, gi.ndim - 1, 0, n)
    return gr * wr - gi * wi, gr * wi + gi * wr


def part_dtype(dtype) -> np.dtype:
    """The float dtype an FFT of this input computes in: f64 for f64/c128, else f32."""
    return dtypes.float64 if dtype in (dtypes.float64, dtypes.complex128) else dtypes.float32
