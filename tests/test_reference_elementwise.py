"""Elementwise ops on the reference backend where the spec (or the definition it takes from CHLO) differs from
what numpy computes by default: complex square, the quotients the spec leaves to the implementation, and what
the op x dtype audit against the spec found (signed zeros, complex orders, quotients and roots)."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

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


_TYPES = {np.dtype(np.float16): "f16", np.dtype(ml_dtypes.bfloat16): "bf16", np.dtype(np.float32): "f32",
          np.dtype(np.float64): "f64", np.dtype(np.complex64): "complex<f32>", np.dtype(np.complex128): "complex<f64>",
          np.dtype(np.int8): "i8", np.dtype(np.int32): "i32", np.dtype(np.int64): "i64", np.dtype(np.uint8): "ui8",
          np.dtype(np.uint64): "ui64", np.dtype(np.bool_): "i1"}


def _one_op(op: str, *args, result=None, attributes: str = ""):
    """`"stablehlo.<op>"(args) attributes` on the reference backend; the result's dtype is the first argument's
    unless given."""
    args = [np.asarray(a) for a in args]
    types = [f"tensor<{a.size}x{_TYPES[a.dtype]}>" for a in args]
    out = f"tensor<{args[0].size}x{_TYPES[np.dtype(result or args[0].dtype)]}>"
    params = ", ".join(f"%a{i}: {t}" for i, t in enumerate(types))
    names = ", ".join(f"%a{i}" for i in range(len(args)))
    text = (f'func.func @main({params}) -> {out} {{\n  %r = "stablehlo.{op}"({names}) {attributes} : '
            f'({", ".join(types)}) -> {out}\n  return %r : {out}\n}}')
    return np.asarray(hj.from_mlir(text, backend="reference")(*args))


def _same_bits(got, expected):
    """Equal, NaN where NaN, and numbers of the same sign, zeros included (part by part for complex)."""
    got, expected = np.asarray(got), np.asarray(expected)
    assert got.dtype == expected.dtype
    for part in ((np.real, np.imag) if got.dtype.kind == "c" else (lambda v: v,)):
        g, e = part(got).astype(np.float64), part(expected).astype(np.float64)
        np.testing.assert_array_equal(g, e)
        np.testing.assert_array_equal(np.signbit(g) & ~np.isnan(g), np.signbit(e) & ~np.isnan(e))


FLOATS = [np.float16, ml_dtypes.bfloat16, np.float32, np.float64]


@pytest.mark.parametrize("dtype", FLOATS)
def test_maximum_and_minimum_order_negative_zero_below_positive_zero(dtype):
    """IEEE maximum(+0, -0) is +0 and minimum is -0 in either order (numpy returns its first operand)."""
    a, b = np.array([0.0, -0.0, -0.0, 0.0, np.nan], dtype), np.array([-0.0, 0.0, -0.0, 0.0, -0.0], dtype)
    _same_bits(_one_op("maximum", a, b), np.array([0.0, 0.0, -0.0, 0.0, np.nan], dtype))
    _same_bits(_one_op("minimum", a, b), np.array([-0.0, -0.0, -0.0, 0.0, np.nan], dtype))


@pytest.mark.parametrize("dtype", FLOATS)
def test_round_nearest_afz_keeps_negative_zero_and_the_largest_float_below_a_half(dtype):
    """-0.0 and -0.3 round to -0.0 (sign(x) * floor(|x| + 0.5) gave +0.0); the largest float below 0.5 rounds to
    0, not to 1 (0.49999997f + 0.5 rounds up to 1.0f); ties go away from zero."""
    below_half = np.nextafter(np.float32(0.5), np.float32(0)) if dtype == np.float32 else \
        np.nextafter(0.5, 0) if dtype == np.float64 else 0.25
    x = np.array([-0.0, -0.3, below_half, -2.5, 2.5, 0.5, -1.5, np.inf, np.nan], dtype)
    _same_bits(_one_op("round_nearest_afz", x), np.array([-0.0, -0.0, 0.0, -3, 3, 1, -2, np.inf, np.nan], dtype))


def test_complex_remainder_raises_naming_the_op():
    """The spec's complex remainder is TBD (openxla/stablehlo#997): a clear error, not numpy's TypeError."""
    x = np.array([1 + 1j], np.complex64)
    with pytest.raises(hj.BackendError, match=r"stablehlo.remainder of tensor<1xcomplex<f32>>.*#997"):
        _one_op("remainder", x, x)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_compare_is_lexicographic_even_beside_a_nan_imaginary_part(dtype):
    """(0, 0) < (0.5, nan): the real parts decide (numpy's complex compare is false with any NaN part)."""
    nan = np.nan
    a = np.array([0, complex(0.5, nan), 1 + 1j, 1 + 2j, complex(nan, 0), 1 + 1j], dtype)
    b = np.array([complex(0.5, nan), 0, 1 + 2j, 1 + 1j, 0, 1 + 1j], dtype)
    expected = {"LT": [True, False, True, False, False, False], "LE": [True, False, True, False, False, True],
                "GT": [False, True, False, True, False, False], "GE": [False, True, False, True, False, True]}
    for direction, want in expected.items():
        attributes = (f"{{comparison_direction = #stablehlo<comparison_direction {direction}>, "
                      f"compare_type = #stablehlo<comparison_type FLOAT>}}")
        got = _one_op("compare", a, b, result=np.bool_, attributes=attributes)
        np.testing.assert_array_equal(got, want, err_msg=direction)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_to_bool_is_true_for_every_nonzero_number(dtype):
    """The spec converts any nonzero value to true: 1j too (the real part alone decides integer targets)."""
    x = np.array([0, complex(-0.0, 0), 1j, -2, complex(0, np.nan)], dtype)
    np.testing.assert_array_equal(_one_op("convert", x, result=np.bool_), [False, False, True, True, True])
    np.testing.assert_array_equal(_one_op("convert", x, result=np.int32), [0, 0, 0, -2, 0])


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_sign_follows_the_spec(dtype):
    """(0, 0) for a zero of either sign, (nan, nan) for a NaN part, x / |x| otherwise, each part divided by |x|
    (a zero part keeps its sign, as XLA's and numpy's: a complex quotient gave sign(-0 + 1j) = +0 + 1j): NaN for an
    infinite x (numpy's sign gives the limit 1j: hj.numpy.sign's composite), and a unit number for a subnormal one
    (numpy's quotient gave inf+nanj)."""
    tiny = np.finfo(dtype).smallest_subnormal
    nan, inf = np.nan, np.inf
    x = np.array([complex(-0.0, -0.0), complex(1, nan), complex(0, inf), 4 + 0j, complex(tiny, 0), -2j,
                  complex(-0.0, 3), complex(-5, -0.0), 3 + 4j], dtype)
    want = np.array([0, complex(nan, nan), complex(nan, nan), 1, 1, -1j, complex(-0.0, 1), complex(-1, -0.0)], dtype)
    got = _one_op("sign", x)
    _same_bits(got[:8], want)
    np.testing.assert_allclose(got[8], 0.6 + 0.8j, rtol=1e-7)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_divide_by_a_subnormal(dtype):
    """numpy's complex quotient overflows 1/|b| for a subnormal b: tiny / tiny gave inf+nanj, not 1."""
    tiny = np.finfo(dtype).smallest_subnormal
    a = np.array([complex(tiny, 0), complex(3 * tiny, tiny), 1 + 1j, 6 + 8j], dtype)
    b = np.array([complex(tiny, 0), complex(tiny, 0), complex(0, 2 * tiny), 3 + 4j], dtype)
    want = np.array([1, 3 + 1j, complex(np.inf, -np.inf), 2], dtype)
    _same_bits(_one_op("divide", a, b), want)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_atan2_is_minus_i_log_of_the_normalised_point(dtype):
    """atan2(y, x) = -i log((x + i y) / sqrt(x^2 + y^2)) (numpy's arctan2 refuses complex); for real y and x
    it is the real atan2."""
    import cmath
    y = np.array([1, 0.5 - 1j, -2 + 1j, 3], dtype)
    x = np.array([1, 2 + 0.25j, 1 - 1j, -4], dtype)
    got = _one_op("atan2", y, x)
    want = [-1j * cmath.log((complex(b) + 1j * complex(a)) / cmath.sqrt(complex(b) ** 2 + complex(a) ** 2))
            for a, b in zip(y, x)]
    np.testing.assert_allclose(got, np.array(want, dtype), rtol=2e-6 if dtype == np.complex64 else 1e-14)
    np.testing.assert_allclose(got.real[[0, 3]], np.arctan2([1, 3], [1, -4]), rtol=1e-6)
    zero = _one_op("atan2", np.zeros(1, dtype), np.array([1 - 2.5j], dtype))     # 0: complex64's own rounding gave 6e-8
    assert np.abs(zero[0]) < 1e-12, zero


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_cbrt_is_the_principal_root(dtype):
    """cbrt(z)^3 = z with arg(cbrt(z)) = arg(z)/3 (numpy's cbrt refuses complex): cbrt(-8) is 1 + sqrt(3) i."""
    z = np.array([-8, 8j, 2 - 3j, complex(-0.0, 0.0), complex(-27, -0.0)], dtype)
    got = _one_op("cbrt", z)
    rtol = 2e-6 if dtype == np.complex64 else 1e-14
    np.testing.assert_allclose(got[0], 1 + np.sqrt(3) * 1j, rtol=rtol)
    np.testing.assert_allclose(got.astype(np.complex128) ** 3, z, rtol=4 * rtol, atol=1e-30)
    np.testing.assert_allclose(np.angle(got[:3].astype(np.complex128)), np.angle(z[:3]) / 3, rtol=rtol, atol=1e-30)
    _same_bits(got[3:4], z[3:4])
    assert np.signbit(got[4].imag)                      # below the cut: arg -pi / 3


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_log_plus_one_keeps_the_real_parts_digits_near_zero(dtype):
    """log1p(z) real part log1p(x(2 + x) + y^2) / 2: numpy's log(1 + z) lost 3e-5 of it in complex64."""
    import math
    z = np.array([1e-4 + 2e-4j, -1e-7 + 3e-8j, 2 + 1j, complex(1, -0.0)], dtype)
    got = _one_op("log_plus_one", z)
    want_real = [0.5 * math.log1p(complex(v).real * (2 + complex(v).real) + complex(v).imag ** 2) for v in z]
    want_imag = [math.atan2(complex(v).imag, 1 + complex(v).real) for v in z]
    rtol = 2e-7 if dtype == np.complex64 else 1e-15
    np.testing.assert_allclose(got.real, want_real, rtol=rtol)
    np.testing.assert_allclose(got.imag, want_imag, rtol=rtol)
    assert np.signbit(got[3].imag)


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16])
def test_cholesky_and_triangular_solve_of_half_floats(dtype):
    """numpy's linalg refuses f16 and its einsum refuses bf16: both run in float32, rounded back."""
    a = np.array([[4.0, 2.0], [2.0, 3.0]], dtype)
    t = f"tensor<2x2x{_TYPES[np.dtype(dtype)]}>"
    chol = (f"func.func @main(%a: {t}) -> {t} {{\n  %r = stablehlo.cholesky %a, lower = true : {t}\n"
            f"  return %r : {t}\n}}")
    got = np.asarray(hj.from_mlir(chol, backend="reference")(a))
    assert got.dtype == dtype
    np.testing.assert_allclose(np.tril(got).astype(np.float64), np.linalg.cholesky(a.astype(np.float64)), rtol=1e-2)
    solve = (f"func.func @main(%a: {t}, %b: {t}) -> {t} {{\n  %r = \"stablehlo.triangular_solve\"(%a, %b) "
             f"{{left_side = true, lower = true, unit_diagonal = false, "
             f"transpose_a = #stablehlo<transpose NO_TRANSPOSE>}}"
             f" : ({t}, {t}) -> {t}\n  return %r : {t}\n}}")
    low, b = np.tril(a), np.array([[1.0, 2.0], [3.0, 4.0]], dtype)
    got = np.asarray(hj.from_mlir(solve, backend="reference")(low, b))
    np.testing.assert_allclose(got.astype(np.float64), np.linalg.solve(low.astype(np.float64), b.astype(np.float64)),
                               rtol=1e-2)


def test_the_spec_audit_finds_every_op_and_dtype_agreeing():
    """tools/spec_audit.py: every elementwise op, compare and convert of the spec in every dtype it allows, on
    corner values, against math/cmath oracles (29 (op, dtype) pairs failed before its fixes)."""
    import importlib.util
    import os
    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tools", "spec_audit.py")
    spec = importlib.util.spec_from_file_location("spec_audit", path)
    audit = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(audit)
    failing = [(op, dtype, bad[:2]) for op, dtype, bad in audit.audits() if bad]
    assert not failing, failing
