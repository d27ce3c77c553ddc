"""The discrete Fourier transform along the last axis, built from real matmuls and elementwise ops.

IREE 3.13 lowers stablehlo.fft only for power-of-two lengths of complex64 on llvm-cpu (1000 and 997 points:
'failed to legalize operation stablehlo.fft'; f64 not at all; vmvx never), so hlojit builds the transform
itself, on the real and imaginary parts as one real tensor of "planes" [p, ...] (p = 0 real, 1 imaginary;
a real input has the one plane), so that the matmuls stay real, which IREE data-tiles:

- n = f_1 f_2 ... f_r, each factor <= DIRECT_MAX, chosen by a cost model (stage_cost): the mixed-radix
  Cooley-Tukey FFT written out as r stages. The input is viewed as [p, B, j_1, ..., j_r] (j_1 the most
  significant digit); stage i is one dot_general of the constant DFT matrix of length f_i, shaped
  [p', k_i, p, j_i], contracting (p, j_i). A dot_general puts its constant's free dimension k_i first, so
  after the last stage the digits lie as [p', k_r, ..., k_1, B]: the natural order of
  k = k_1 + f_1 (k_2 + f_2 (...)), with no transpose written anywhere (batched inputs, B > 1, take one at
  the end). Between stages the twiddles exp(-+2 pi i k_i j_rest / (f_i ... f_r)) multiply elementwise, in
  one dispatch.
- a length with a prime factor > DIRECT_MAX: Bluestein's chirp-z, a circular convolution of a smooth
  length M >= 2n - 1 (the cheapest up to the next power of two) done with two FFTs of length M by this
  plan, the chirp's FFT a constant.

A real input makes the first stage's matrix half as tall ([p', k_1, 1, j_1]), and a caller that keeps only
the first m outputs (rfft: n//2 + 1) has the last stage compute only the rows those need.
Against IREE's own stablehlo.fft (c64, iree:cpu, interleaved medians on a loaded VM, relative to numpy):
128 points 0.49x (this plan 0.53x), 1024 0.64x (0.65x), 4096 0.76x, 2**18 1.11x, 2**20 1.29x (1.20x), and
between 0.14x and 2.2x at 2**16 from run to run; not used: it would need its own rules (gradient, vmap) and
this plan still for vmvx, f64 and other lengths.
"""
from __future__ import annotations

import functools
import itertools
import math

import numpy as np

from .. import dtypes
from ..tensor import Tensor
from ._core import barrier, constant
from .joining import concatenate, pad
from .matmul import dot_general
from .shape import flip, reshape, slice_axis, transpose

DIRECT_MAX = 128


_SMALL_PRIMES = [p for p in range(2, DIRECT_MAX + 1) if all(p % d for d in range(2, math.isqrt(p) + 1))]


def _smooth(n: int) -> bool:
    """Whether every prime factor of n is <= DIRECT_MAX."""
    for p in _SMALL_PRIMES:
        while n % p == 0:
            n //= p
    return n == 1


def stage_cost(n: int) -> float:
    """What one more stage costs, in the units of a stage's length (its 4 f multiply-adds a point): a pass
    over data that stays in cache is cheap, one over memory is not, and each stage's dispatches (the matmul,
    IREE's packing, the twiddles) cost some microseconds whatever n (about 6000 point-lengths). Fitted to c64 timings on
    llvm-cpu (interleaved, medians): 1000 10x10x10 0.72x numpy, 40x25 0.58x; 4096 8x8x8x8 0.92x, 16x16x16
    0.81x, 64x64 0.42x; 65536 8x8x8x8x16 2.8x, 16x16x16x16 0.75x, 64x32x32 0.17x; 2**20 32x32x32x32 1.45x,
    16x16x16x16x16 0.94x, 8**6 x 4 0.81x."""
    return (8 if n <= 1 << 17 else 96) + 6000 / n


@functools.lru_cache(maxsize=4096)
def _cheapest(n: int, per_stage: float) -> tuple[float, tuple[int, ...]]:
    """(cost, factors): n as factors <= DIRECT_MAX (descending) with the least sum of (f + per_stage)."""
    if n == 1:
        return 0, ()
    best = None
    for d in range(min(n, DIRECT_MAX), 1, -1):
        if n % d == 0:
            cost, rest = _cheapest(n // d, per_stage)
            if best is None or cost + d + per_stage < best[0]:
                best = (cost + d + per_stage, tuple(sorted((d,) + rest, reverse=True)))
    return best


def plan_cost(n: int) -> float | None:
    """The cost of an n-point transform by stages (n times the cost of its factors), None for Bluestein."""
    f = factors(n)
    return None if f is None else n * _cheapest(n, stage_cost(n))[0]


@functools.lru_cache(maxsize=256)
def factors(n: int) -> tuple[int, ...] | None:
    """The stage lengths of n (the least cost, stage_cost), or None when a prime factor of n is larger than
    DIRECT_MAX (Bluestein)."""
    if n == 1:
        return (1,)
    return _cheapest(n, stage_cost(n))[1] if _smooth(n) else None


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
        # no barrier: the matrix is small (4 f^2), and IREE packs it for the matmul when it compiles
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
    """The M >= 2n - 1 whose transform costs least, among the next power of two and the first 32 smooth
    lengths from 2n - 1 (enough to find a cheap one, few enough to cost a large prime little planning)."""
    low = 2 * n - 1
    power = 1 << (low - 1).bit_length()
    smooth = itertools.islice((m for m in range(low, power) if _smooth(m)), 32)
    return min([*smooth, power], key=plan_cost)


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
