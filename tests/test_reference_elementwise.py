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
