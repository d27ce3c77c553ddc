"""Elementwise ops on the reference backend where the spec (or the definition it takes from CHLO) differs from
what numpy computes by default: complex square, and the quotients the spec leaves to the implementation."""
from __future__ import annotations

import numpy as np

import hlojit as hj

_UNARY = """func.func @main(%x: tensor<{n}x{t}>) -> tensor<{n}x{t}> {{
  %r = chlo.square %x : tensor<{n}x{t}> -> tensor<{n}x{t}>
  return %r : tensor<{n}x{t}>
}}"""


def test_complex_square_takes_the_real_part_as_a_difference_times_a_sum():
    """((re - im)(re + im), 2 re im): no overflow where re**2 or im**2 overflows but the result does not, 0 where
    |re| = |im| is finite, nan from inf - inf (numpy's square gives nan + inf j at 1e308 (1 + j))."""
    inf = np.inf
    cases = {
        np.complex128: ([1j, 2 + 1j, 1e155 + 2e155j, 1e308 + 1e308j, 1e308 - 1e308j, complex(inf, inf), 3 - 3j],
                        [-1, 3 + 4j, complex(-inf, inf), complex(0, inf), complex(0, -inf), complex(np.nan, inf),
                         -18j]),
        np.complex64: ([1e19 + 2e19j, 3e38 + 3e38j, 2 + 1j], [complex(-3e38, inf), complex(0, inf), 3 + 4j]),
    }
    for dtype, (x, expected) in cases.items():
        t = f"complex<f{np.dtype(dtype).itemsize * 4}>"
        got = np.asarray(hj.from_mlir(_UNARY.format(n=len(x), t=t), backend="reference")(np.array(x, dtype)))
        assert got.dtype == dtype
        expected = np.array(expected, dtype)
        for part in (np.real, np.imag):
            np.testing.assert_allclose(part(got), part(expected), rtol=1e-6 if dtype == np.complex64 else 1e-15)


_DIVIDE = """func.func @main(%a: tensor<4x{t}>, %b: tensor<4x{t}>) -> tensor<4x{t}> {{
  %r = stablehlo.divide %a, %b : tensor<4x{t}>
  return %r : tensor<4x{t}>
}}"""


def test_integer_quotients_left_to_the_implementation_are_zero():
    """x / 0 and INT_MIN / -1 (which overflows) are 0, as in openxla's reference interpreter; the others
    truncate toward zero."""
    for dtype in (np.int8, np.int32, np.int64):
        low = np.iinfo(dtype).min
        a, b = np.array([low, 7, low, -7], dtype), np.array([-1, 0, 1, 2], dtype)
        t = f"i{np.dtype(dtype).itemsize * 8}"
        got = np.asarray(hj.from_mlir(_DIVIDE.format(t=t), backend="reference")(a, b))
        np.testing.assert_array_equal(got, np.array([0, 0, low, -3], dtype))


_SHIFT = """func.func @main(%a: tensor<{n}x{t}>, %b: tensor<{n}x{t}>) -> tensor<{n}x{t}> {{
  %r = stablehlo.shift_right_arithmetic %a, %b : tensor<{n}x{t}>
  return %r : tensor<{n}x{t}>
}}"""


def _arithmetic_shift_closed_form(x: int, s: int, width: int) -> int:
    """The bit pattern x shifted right by s (unsigned, at most the width), its top bit copied into the vacated
    bits: with s >= width every bit is the top bit."""
    s = min(s, width)
    filled = ((1 << width) - 1) ^ (((1 << width) - 1) >> s) if x >> (width - 1) else 0
    return (x >> s) | filled


def test_shift_right_arithmetic_of_unsigned_shifts_the_bit_pattern():
    """ui8 0x80 >> 1 is 0xC0 (the spec shifts the pattern, copying its top bit; numpy's unsigned shift is
    logical); amounts at or past the width, as unsigned, fill with the top bit (0xFF..., or 0)."""
    for dtype in (np.uint8, np.uint16, np.uint32, np.uint64):
        width = np.dtype(dtype).itemsize * 8
        top, full = 1 << (width - 1), (1 << width) - 1
        xs = [top, top | 5, full, 5, top - 1, 0, top, top, 7, full, top | 1, top]
        ss = [1, 2, 0, 1, width - 1, 3, width - 1, width, width, width + 3, full, full - width + 1]
        a, b = np.array(xs, dtype), np.array(ss, dtype)
        t = f"ui{width}"
        got = np.asarray(hj.from_mlir(_SHIFT.format(n=len(xs), t=t), backend="reference")(a, b))
        expected = np.array([_arithmetic_shift_closed_form(x, s, width) for x, s in zip(xs, ss)], dtype)
        assert got.dtype == dtype
        np.testing.assert_array_equal(got, expected)


def test_shift_right_arithmetic_of_signed_past_the_width_copies_the_sign():
    """Signed amounts at or past the width, and negative ones (huge as unsigned), give -1 or 0."""
    for dtype in (np.int8, np.int32, np.int64):
        width = np.dtype(dtype).itemsize * 8
        a = np.array([-5, 5, -5, 5, -128, 100], dtype)
        b = np.array([width, width + 1, -1, -3, 3, 2], dtype)
        got = np.asarray(hj.from_mlir(_SHIFT.format(n=6, t=f"i{width}"), backend="reference")(a, b))
        np.testing.assert_array_equal(got, np.array([-1, 0, -1, 0, -16, 25], dtype))
