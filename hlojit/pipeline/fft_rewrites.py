"""stablehlo.fft as discrete Fourier transforms by real matrix products, where IREE 3.13 cannot lower the FFT.

IREE 3.13 does not lower an FFT of complex<f64> or f64 values on any CPU target (compiling a 1-D one kills the
compiler with SIGFPE); of complex<f32> or f32 values llvm-cpu lowers only 1-D ones of power-of-two lengths ("failed
to legalize operation 'stablehlo.fft'" for a length of 20 or 7, or lengths [4, 8]: JAX's jnp.fft.rfft(x) of 20
points and fft2 of 4 x 8 did not compile) and vmvx none ("'util.buffer.load' op result #0 must be index or
integer" at 16); cuda lowers what llvm-cpu lowers (JAX's rfft of 20 points, its f64 fft and fft2 did not compile
for iree:cuda). Here each transformed dimension of length n is a dot_general with n x n cosine and sine
matrices (twiddles from numpy in f64, with j k reduced mod n first, so each is correctly rounded, then rounded
once to the operand's precision), on the real and imaginary parts, which stablehlo.real/imag/complex take apart
and join; complex_pairs.py then carries the parts on. The spec's
order is kept: FFT and IFFT transform each of the trailing `fft_length` dimensions (IFFT scaled by 1/n), RFFT
transforms the innermost of a real input keeping its n // 2 + 1 non-negative frequencies and then the others,
IRFFT inverts the others and then makes n real values of the innermost from its half spectrum (the imaginary
parts of its first and, for even n, middle frequency do not count, as in numpy).

The work is n**2 per dimension instead of n log n (an f32 transform's error grows with n, not log n: ~n eps), and
the matrices are constants: dimensions longer than MAX_LENGTH are left to IREE, and complex_pairs.py's refusal
says why f64 ones do not compile. hj.numpy.fft plans its own transforms (any length, n log n) and emits no
stablehlo.fft these rewrites would see but IREE's power-of-two ones on llvm-cpu.
"""
from __future__ import annotations

import numpy as np
from iree.compiler import ir

from ..dialects import stablehlo as hlo
from ..dialects.types import attr_ints, dtype_of, shape_of
from .legalize import walk

MAX_LENGTH = 256


def _is_f64(op) -> bool:
    return any(dtype_of(v.type).name in ("float64", "complex128") for v in (*op.operands, *op.results))


def _angles(rows: int, columns: int, n: int) -> np.ndarray:
    j, k = np.arange(rows)[:, None], np.arange(columns)[None, :]
    return 2 * np.pi * ((j * k) % n) / n


def _along(x: ir.Value, matrix: np.ndarray, axis: int) -> ir.Value:
    """x's `axis` contracted with the rows of `matrix`, its columns in the place of that axis."""
    rank = len(shape_of(x.type))
    matrix = matrix.astype(dtype_of(x.type))     # f64 twiddles rounded once to x's precision
    product = hlo.dot_general(x, hlo.constant(matrix), lhs_contract=[axis], rhs_contract=[0])
    order = [*range(axis), rank - 1, *range(axis, rank - 1)]   # the new last dimension back to `axis`
    return product if axis == rank - 1 else hlo.transpose(product, order)


def _complex_dft(re, im, axis: int, n: int, inverse: bool):
    """(re, im) of sum_j x_j exp(-+2 pi i j k / n) along axis (1/n and + for the inverse)."""
    angles = _angles(n, n, n)
    scale = 1 / n if inverse else 1.0
    cos, sin = np.cos(angles) * scale, np.sin(angles) * (scale if inverse else -scale)
    if im is None:
        return _along(re, cos, axis), _along(re, sin, axis)
    out_re = hlo.binary("subtract", _along(re, cos, axis), _along(im, sin, axis))
    out_im = hlo.binary("add", _along(re, sin, axis), _along(im, cos, axis))
    return out_re, out_im


def _real_from_half_spectrum(re, im, axis: int, n: int):
    """x_t = (1/n) sum_k w_k (re_k cos(2 pi k t / n) - im_k sin(2 pi k t / n)) over the n // 2 + 1 frequencies,
    w_k = 1 for k = 0 and k = n / 2, 2 for the others (each stands for itself and its conjugate)."""
    m = n // 2 + 1
    weights = np.full((m, 1), 2.0)
    weights[0] = 1.0
    if n % 2 == 0:
        weights[-1] = 1.0
    angles = _angles(m, n, n)
    return hlo.binary("add", _along(re, np.cos(angles) * weights / n, axis),
                      _along(im, -np.sin(angles) * weights / n, axis))


def _transform(x: ir.Value, kind: str, lengths: list[int]) -> ir.Value:
    rank = len(shape_of(x.type))
    axes = list(range(rank - len(lengths), rank))
    if kind in ("FFT", "IFFT"):
        re, im = hlo.real(x), hlo.imag(x)
        for axis, n in zip(axes, lengths):
            re, im = _complex_dft(re, im, axis, n, kind == "IFFT")
        return hlo.complex(re, im)
    if kind == "RFFT":
        n = lengths[-1]
        cos, sin = np.cos(_angles(n, n // 2 + 1, n)), -np.sin(_angles(n, n // 2 + 1, n))
        re, im = _along(x, cos, axes[-1]), _along(x, sin, axes[-1])
        for axis, n in zip(axes[:-1], lengths[:-1]):
            re, im = _complex_dft(re, im, axis, n, False)
        return hlo.complex(re, im)
    re, im = hlo.real(x), hlo.imag(x)             # IRFFT
    for axis, n in zip(axes[:-1], lengths[:-1]):
        re, im = _complex_dft(re, im, axis, n, True)
    return _real_from_half_spectrum(re, im, axes[-1], lengths[-1])


def _as_real_dft(module: ir.Module, lowered_by_iree) -> int:
    count = 0
    for op in list(walk(module.operation)):
        if op.name != "stablehlo.fft":
            continue
        lengths = attr_ints(op, "fft_length")
        kind = str(op.attributes["fft_type"]).removeprefix("#stablehlo<fft_type ").removesuffix(">")
        if (lowered_by_iree(op, lengths) or max(lengths, default=0) > MAX_LENGTH or 0 in lengths
                or 0 in shape_of(op.operands[0].type)):
            continue
        with ir.InsertionPoint(op), op.location:
            new = _transform(op.operands[0], kind, lengths)
        op.result.replace_all_uses_with(new)
        op.erase()
        count += 1
    return count


def _iree_lowers(op, lengths: list[int]) -> bool:
    return not _is_f64(op) and len(lengths) == 1 and lengths[0] & (lengths[0] - 1) == 0


def ffts_beyond_iree_as_real_dft(module: ir.Module) -> int:
    """llvm-cpu and cuda: f64 FFTs, and f32 ones but those of one dimension whose length is a power of two
    (jnp.fft.fft2 of 4 x 8 failed too; cuda failed the same cases, a 1-D complex128 one of 16 with "'arith.mulf' op
    requires the same type for all operands")."""
    return _as_real_dft(module, _iree_lowers)


def ffts_as_real_dft(module: ir.Module) -> int:
    """vmvx: every FFT."""
    return _as_real_dft(module, lambda op, lengths: False)
