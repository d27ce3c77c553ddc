"""The discrete Fourier transform along the last axis, built from real matmuls and elementwise ops.

IREE 3.13 lowers stablehlo.fft only for power-of-two lengths of complex64 on llvm-cpu (1000 and 997 points:
'failed to legalize operation stablehlo.fft'; f64 not at all; vmvx never), so hlojit builds the transform
itself, on the real and imaginary parts as one real tensor of "planes" [p, ...] (p = 0 real, 1 imaginary;
a real input has the one plane), so that the matmuls stay real, which IREE data-tiles:

- n = f_1 f_2 ... f_r, each factor <= DIRECT_MAX (fewest stages, then the smallest sum of factors): the
  mixed-radix Cooley-Tukey FFT written out as r stages. The input is viewed as [p, B, j_1, ..., j_r]
  (j_1 the most significant digit); stage i is one dot_general of the constant DFT matrix of length f_i,
  shaped [p', k_i, p, j_i], contracting (p, j_i). A dot_general puts its constant's free dimension k_i
  first, so after the last stage the digits lie as [p', k_r, ..., k_1, B]: the natural order of
  k = k_1 + f_1 (k_2 + f_2 (...)), with no transpose written anywhere (batched inputs, B > 1, take one at
  the end). Between stages the twiddles exp(-+2 pi i k_i j_rest / (f_i ... f_r)) multiply elementwise.
- a length with a prime factor > DIRECT_MAX: Bluestein's chirp-z, a circular convolution of smooth length
  M >= 2n - 1 (the smallest with as few stages as the next power of two) done with two FFTs of length M by
  this plan, the chirp's FFT a constant.

A real input makes the first stage's matrix half as tall ([p', k_1, 1, j_1]), and a caller that keeps only
the first m outputs (rfft: n//2 + 1) has the last stage compute only the rows those need.
Costs: 4 f_i real multiply-adds per point and stage, but on llvm-cpu a stage's time is mostly IREE's data
tiling (pack, matmul, unpack: three passes over the data) and hardly grows with f_i up to 128 (2**20 points,
one stage, measured: f = 32 108 ms, 64 112 ms, 128 125 ms, 256 208 ms, a copy 30 ms; a loaded VM): so the
fewest stages of lengths <= 128. 2**20 is 128 x 128 x 64.
"""
from __future__ import annotations

import functools
import math

import numpy as np

from .. import dtypes
from ..tensor import Tensor
from ._core import barrier, constant
from .joining import concatenate, pad
from .matmul import dot_general
from .shape import flip, reshape, slice_axis, transpose

DIRECT_MAX = 128


def _prime_factors(n: int) -> list[int]:
    out, d = [], 2
    while d * d <= n:
        while n % d == 0:
            out.append(d)
            n //= d
        d += 1
    return out + ([n] if n > 1 else [])


@functools.lru_cache(maxsize=256)
def _best_split(n: int, stages: int) -> tuple[int, ...] | None:
    """n as `stages` factors <= DIRECT_MAX with the smallest sum (descending), or None."""
    if stages == 1:
        return (n,) if n <= DIRECT_MAX else None
    best = None
    for d in range(min(n, DIRECT_MAX), 1, -1):
        if n % d == 0:
            rest = _best_split(n // d, stages - 1)
            if rest is not None and rest[0] <= d and (best is None or d + sum(rest) < sum(best)):
                best = (d,) + rest
    return best


@functools.lru_cache(maxsize=256)
def factors(n: int) -> tuple[int, ...] | None:
    """The stage lengths of n (fewest stages, then smallest sum), or None when a prime factor of n is larger
    than DIRECT_MAX (Bluestein)."""
    if n <= DIRECT_MAX:
        return (n,)
    if max(_prime_factors(n)) > DIRECT_MAX:
        return None
    stages = math.ceil(math.log(n) / math.log(DIRECT_MAX) - 1e-9)
    while _best_split(n, stages) is None:
        stages += 1
    return _best_split(n, stages)


@functools.lru_cache(maxsize=64)
def _stage_matrix(f: int, inverse: bool, planes: int, rows: int) -> np.ndarray:
    """W[p', k, p, j] of the DFT of length f for k < rows: out_p' = sum_(p, j) W x_p (float64)."""
    k, j = np.arange(rows), np.arange(f)
    angle = 2 * np.pi * (np.outer(k, j) % f) / f        # reduced mod f: exact angles for large jk
    c, s = np.cos(angle), np.sin(angle) * (1 if inverse else -1)
    w = np.stack([np.stack([c, -s], axis=1), np.stack([s, c], axis=1)])   # (re + i im)(c + i s)
    return w[:, :, :planes]


@functools.lru_cache(maxsize=64)
def _twiddles(head: int, rest: int, inverse: bool) -> tuple[np.ndarray, np.ndarray]:
    """cos and sin of exp(-+2 pi i k j / (head rest)) for k < head, j < rest: shaped [head, rest]."""
    n = head * rest
    angle = 2 * np.pi * (np.outer(np.arange(head), np.arange(rest)) % n) / n
    return np.cos(angle), np.sin(angle) * (1 if inverse else -1)


def _const(array: np.ndarray, dtype) -> Tensor:
    return barrier(constant(np.asarray(array, dtype), dtype))


def _plane(x: Tensor, p: int) -> Tensor:
    return slice_axis(x, 0, p, p + 1)


def _complex_multiply(x: Tensor, c: Tensor, s: Tensor) -> Tensor:
    """The planes x (one or two) times c + i s, broadcast: two planes. Written as x c + flip(x) (-s, s), one
    elementwise expression over both planes, which IREE makes one dispatch (the parts apart made two)."""
    if x.shape[0] == 1:
        return concatenate([x * c, x * s], axis=0)
    signs = _const(np.array([-1.0, 1.0]).reshape((2,) + (1,) * (x.ndim - 1)), x.dtype)
    return x * c + flip(x, 0) * (s * signs)


def dft(re: Tensor, im: Tensor | None, inverse: bool = False, keep: int | None = None) -> tuple[Tensor, Tensor]:
    """The unscaled DFT (exp(-2 pi i jk/n); exp(+...) if inverse) along the last axis of re + i im
    (im None: a real input). Returns (re, im) of the first `keep` (default all n) frequencies."""
    lead, n = re.shape[:-1], re.shape[-1]
    batch = math.prod(lead)
    planes = [reshape(t, (1, batch, n)) for t in ((re,) if im is None else (re, im))]
    x = planes[0] if len(planes) == 1 else concatenate(planes, axis=0)
    out = _planar(x, inverse, keep or n)                            # [2, batch, keep]
    return tuple(reshape(_plane(out, p), lead + (out.shape[-1],)) for p in (0, 1))


def _planar(x: Tensor, inverse: bool, keep: int) -> Tensor:
    """[planes, B, n] -> [2, B, keep]: the first keep frequencies of each of the B rows."""
    n = x.shape[-1]
    stages = factors(n)
    if stages is None:
        return _bluestein(x, inverse, keep)
    batch = x.shape[1]
    x = reshape(x, x.shape[:2] + stages)                           # [p, B, j_1, ..., j_r]
    for i, f in enumerate(stages):
        last = i == len(stages) - 1
        rows = -(-keep * f // n) if last else f                     # the k_r that the first keep outputs need
        w = constant(_stage_matrix(f, inverse, x.shape[0], rows).astype(x.dtype), x.dtype)
        x = dot_general(w, x, ((2, 3), (0, i + 2)))                 # [p', k_i, ..., k_1, B, j_i+1, ...]
        if not last:
            rest = n // math.prod(stages[:i + 1])
            c, s = (_const(t.reshape((f,) + (1,) * (i + 1) + stages[i + 1:]), x.dtype)
                    for t in _twiddles(f, rest, inverse))
            x = _complex_multiply(x, c, s)
    x = reshape(x, (2, -1, batch))                                   # [p', k, B]
    if x.shape[1] != keep:
        x = slice_axis(x, 1, 0, keep)
    return transpose(x, (0, 2, 1)) if batch > 1 else reshape(x, (2, 1, keep))


@functools.lru_cache(maxsize=64)
def convolution_length(n: int) -> int:
    """The smallest M >= 2n - 1 whose stages are no more than those of the next power of two."""
    power = 1 << (2 * n - 2).bit_length()
    most = len(factors(power))
    return next(m for m in range(2 * n - 1, power + 1) if factors(m) is not None and len(factors(m)) <= most)


@functools.lru_cache(maxsize=16)
def _chirp(n: int, inverse: bool) -> tuple[np.ndarray, np.ndarray]:
    """w_k = exp(-+ pi i k^2 / n) (k^2 reduced mod 2n, exactly) and the FFT of length M of the conjugate
    chirp laid out for a circular convolution, divided by M (the inverse FFT's scale)."""
    k = np.arange(n)
    w = np.exp((1j if inverse else -1j) * np.pi * ((k * k) % (2 * n)) / n)
    m = convolution_length(n)
    b = np.zeros(m, np.complex128)
    b[:n] = np.conj(w)
    b[m - n + 1:] = np.conj(w[1:][::-1])
    return w, np.fft.fft(b) / m


def _bluestein(x: Tensor, inverse: bool, keep: int) -> Tensor:
    """X_k = w_k sum_j (x_j w_j) conj(w)_{k-j}: the sum is a circular convolution of length M >= 2n - 1."""
    n = x.shape[-1]
    m = convolution_length(n)
    w, fb = _chirp(n, inverse)
    wide = np.pad(w, (0, m - n))          # padding x before the chirp multiply lets IREE fuse the two
    a = _complex_multiply(pad(x, [(0, 0), (0, 0), (0, m - n)]), _const(wide.real, x.dtype), _const(wide.imag, x.dtype))
    f = _planar(a, False, m)
    g = _planar(_complex_multiply(f, _const(fb.real, x.dtype), _const(fb.imag, x.dtype)), True, keep)
    return _complex_multiply(g, _const(w.real[:keep], x.dtype), _const(w.imag[:keep], x.dtype))


def part_dtype(dtype) -> np.dtype:
    """The float dtype an FFT of this input computes in: f64 for f64/c128, else f32."""
    return dtypes.float64 if dtype in (dtypes.float64, dtypes.complex128) else dtypes.float32
