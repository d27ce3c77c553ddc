"""Exact float remainder and vmvx's unsigned narrow division: the rewrites accurate_math.fmod builds (C's fmod in
integers on the mantissas: f64 on llvm-cpu and vmvx, which cannot link f64 fmod; every float below f64 on vmvx,
whose own is IEEE's remainder and nan for subnormal divisors) and vmvx_rewrites.narrow_unsigned_in_i32, before
and after, and their numbers on IREE against numpy for `from_mlir` modules and traced functions alike."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import hlojit as hj
from hlojit.pipeline import accurate_math, vmvx_rewrites

from conftest import BACKENDS, assert_close
from test_legalize import rewritten

IREE = [b for b in BACKENDS if b.startswith("iree:")]
NAN, INF = float("nan"), float("inf")


def _fmod_operands(dtype) -> tuple[np.ndarray, np.ndarray]:
    """Dividends and divisors: huge quotients (up to max / smallest subnormal), subnormal divisors and dividends,
    signs and signed zeros, numpy's special cases, and random pairs over the whole exponent range."""
    info = np.finfo(dtype)
    sub, tiny, big = float(info.smallest_subnormal), float(info.tiny), float(info.max)
    pairs = [(1e30, 2.5), (-1e30, 2.5), (big, sub), (-big, 3 * sub), (big, -7.0), (2.0 ** 100, 3.0), (1e17 + 8, 3.0),
             (1.0, sub), (3.7 * tiny, 10 * sub), (sub, sub), (-0.3 * tiny, 3 * sub), (tiny, 0.7 * tiny),
             (7.0, 2.5), (-7.25, 2.0), (0.3, 0.1), (1.0, 1e30), (-0.0, 3.0), (4.0, -2.0), (-4.0, 2.0), (-1.0, sub),
             (5.0, 0.0), (5.0, -0.0), (0.0, 0.0), (INF, 2.0), (-INF, 2.0), (NAN, 2.0), (2.0, NAN), (3.0, INF),
             (-3.0, -INF), (INF, INF), (sub, INF), (-0.0, INF)]
    pairs += ([(1.0, 5e-324), (3e-310, 1e-320), (-3e-310, 1e-320), (1e308, 3e-323)] if dtype == np.float64 else
              [(1.0, 4e-45), (3e-39, 1e-44), (-3e-39, 1e-44), (3e38, 3e-44)])
    rng = np.random.default_rng(7)
    n = 48

    def spread(size):
        signs = rng.choice([-1.0, 1.0], size)
        return signs * np.ldexp(rng.uniform(0.5, 1.0, size), rng.integers(info.minexp - info.nmant, info.maxexp, size))
    a, b = (np.array([p[k] for p in pairs], np.float64) for k in (0, 1))
    return (np.concatenate([a, spread(n)]).astype(dtype), np.concatenate([b, spread(n)]).astype(dtype))


def _assert_fmod(actual, a, b):
    """Bit for bit numpy's fmod (nan where numpy's is nan), the zeros' signs included."""
    with np.errstate(all="ignore"):
        expected = np.fmod(a, b)
    actual = np.asarray(actual)
    assert actual.dtype == expected.dtype
    bad = ~((actual == expected) & (np.signbit(actual) == np.signbit(expected)) | np.isnan(actual) & np.isnan(expected))
    assert not bad.any(), list(zip(a[bad], b[bad], actual[bad], expected[bad]))


def _module(ops: list[tuple[str, str]], n: int) -> str:
    """A from_mlir module of binary ops, (op, element type) each on its own pair of arguments."""
    args = ", ".join(f"%a{k}: tensor<{n}x{t}>, %b{k}: tensor<{n}x{t}>" for k, (_, t) in enumerate(ops))
    results = ", ".join(f"tensor<{n}x{t}>" for _, t in ops)
    body = "\n".join(f"  %{k} = stablehlo.{op} %a{k}, %b{k} : tensor<{n}x{t}>" for k, (op, t) in enumerate(ops))
    returned = ", ".join(f"%{k}" for k in range(len(ops)))
    return f"func.func @main({args}) -> ({results}) {{\n{body}\n  return {returned} : {results}\n}}"


def test_float_remainder_below_f64_becomes_integer_fmod_on_vmvx():
    count, text = rewritten(_module([("remainder", "f32"), ("remainder", "f16"), ("remainder", "f64")], 3),
                            accurate_math.remainder_exactly_below_f64)
    assert count == 2 and text.count("stablehlo.while") == 2, text
    assert "stablehlo.remainder %arg4, %arg5 : tensor<3xf64>" in text               # f64's is f64_by_basic_ops'
    assert "(tensor<3xf16>) -> tensor<3xf32>" in text and "(tensor<3xf32>) -> tensor<3xf16>" in text


F64, F32 = _fmod_operands(np.float64), _fmod_operands(np.float32)


@pytest.mark.parametrize("backend", IREE)
def test_from_mlir_remainder_is_exact_fmod(backend):
    """1e30 rem 2.5 is 1 (a - trunc(a/b) b gave 0), 1 rem 5e-324 is 0 (vmvx's f32 gave nan for subnormal divisors),
    max rem the smallest subnormal, specials as numpy: on both float widths."""
    out = hj.from_mlir(_module([("remainder", "f64"), ("remainder", "f32")], len(F64[0])), backend=backend)(*F64, *F32)
    _assert_fmod(out[0], *F64)
    _assert_fmod(out[1], *F32)


def _map_module(n: int) -> str:
    """A remainder in the body of a stablehlo.map per float width: scalar code in IREE, where no while goes."""
    maps = []
    for k, t in enumerate(("f64", "f32")):
        maps.append(f"""  %{k} = "stablehlo.map"(%a{k}, %b{k}) ({{
  ^bb0(%x: tensor<{t}>, %y: tensor<{t}>):
    %r = stablehlo.remainder %x, %y : tensor<{t}>
    stablehlo.return %r : tensor<{t}>
  }}) {{dimensions = array<i64: 0>}} : (tensor<{n}x{t}>, tensor<{n}x{t}>) -> tensor<{n}x{t}>""")
    return (f"func.func @main(%a0: tensor<{n}xf64>, %b0: tensor<{n}xf64>, %a1: tensor<{n}xf32>, %b1: tensor<{n}xf32>)"
            f" -> (tensor<{n}xf64>, tensor<{n}xf32>) {{\n" + "\n".join(maps)
            + f"\n  return %0, %1 : tensor<{n}xf64>, tensor<{n}xf32>\n}}")


@pytest.mark.parametrize("backend", IREE)
def test_remainder_in_a_body_is_exact_fmod_without_a_loop(backend):
    """In a map (reduce, scatter ...) body the integer fmod takes the largest shift's steps unrolled (a while there
    failed to compile: 'tensor.from_elements' op failed to verify)."""
    n = 12
    picks = np.r_[0:8, len(F64[0]) - 4:len(F64[0])]              # huge quotients, subnormals, random
    f64, f32 = [x[picks] for x in F64], [x[picks] for x in F32]
    out = hj.from_mlir(_map_module(n), backend=backend)(*f64, *f32)
    _assert_fmod(out[0], *f64)
    _assert_fmod(out[1], *f32)


HALF = [(np.float16, "f16"), (ml_dtypes.bfloat16, "bf16")]


@pytest.mark.parametrize("backend", IREE)
def test_from_mlir_half_remainder_is_exact_fmod(backend):
    """f16 and bf16 (vmvx: computed in f32 by the exact fmod, rounded once: exactly, fmod's result is representable)."""
    a = np.array([7.0, -7.25, 600.0, 1.0, -1e4, 3.0, -0.0, 4.0, 5.0, NAN, INF, 2.5, 6e-8, 1e-5], np.float32)
    b = np.array([2.5, 2.0, 0.3, 6e-8, 3.0, INF, 3.0, -2.0, 0.0, 1.0, 1.0, NAN, 6e-8, 6e-8], np.float32)
    inputs = [x.astype(t) for t, _ in HALF for x in (a, b)]
    out = hj.from_mlir(_module([("remainder", name) for _, name in HALF], len(a)), backend=backend)(*inputs)
    for k, (t, _) in enumerate(HALF):
        x, y = inputs[2 * k], inputs[2 * k + 1]
        with np.errstate(all="ignore"):
            expected = np.fmod(x.astype(np.float32), y.astype(np.float32)).astype(t)
        np.testing.assert_array_equal(np.asarray(out[k]).astype(np.float32), expected.astype(np.float32))


def test_traced_f64_remainder_floor_divide_and_fmod_of_huge_quotients(backend):
    """numpy's % and // and fmod (built on the spec's remainder) of quotients past 2**53 (not of subnormals: the
    frontend's sign fixes compare and add, which IREE's CPU code flushes)."""
    a = np.array([1e30, -1e30, 1e300, 2.0 ** 80 + 2.0 ** 28, 1e17 + 8, 12.5, -1e200])
    b = np.array([2.5, 7.0, -3.0, 3.0, 3.0, -0.75, 1e-100])
    out = hj.jit(lambda x, y: (x % y, hj.ops.fmod(x, y), x // y), backend=backend)(a, b)
    np.testing.assert_array_equal(np.asarray(out[0]), np.remainder(a, b))
    np.testing.assert_array_equal(np.asarray(out[1]), np.fmod(a, b))
    assert_close(out[2], np.floor_divide(a, b))


# --- vmvx: ui8/ui16 divide, remainder and shift_right_logical ----------------------------------------------

def test_narrow_unsigned_division_and_shift_compute_in_i32_golden():
    ops = [("divide", "ui8"), ("remainder", "ui16"), ("shift_right_logical", "ui8"), ("divide", "i8"),
           ("divide", "ui32"), ("shift_right_arithmetic", "ui8")]
    count, text = rewritten(_module(ops, 4), vmvx_rewrites.narrow_unsigned_in_i32)
    assert count == 3, text
    for op in ("divide", "remainder", "shift_right_logical"):
        assert any(f"stablehlo.{op} " in line and "tensor<4xi32>" in line for line in text.splitlines()), op
    assert "stablehlo.minimum" in text                       # the shift amount clamped to the width
    kept = ["stablehlo.divide %arg6, %arg7 : tensor<4xi8>", "stablehlo.divide %arg8, %arg9 : tensor<4xui32>",
            "stablehlo.shift_right_arithmetic %arg10, %arg11 : tensor<4xui8>"]
    assert all(line in text for line in kept), text


def _unsigned_operands(dtype) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Dividends with the top bit set (and not), divisors small and large, shifts up to and past the width."""
    bits = 8 * np.dtype(dtype).itemsize
    top, ones = 1 << (bits - 1), (1 << bits) - 1
    x = np.array([top, top + 28, 200 << (bits - 8), ones, top + 7, ones - 3, 5, 100, 156, 252], dtype)
    y = np.array([1, 14, 3, 7, 19, top + 1, 3, ones, 14, 2], dtype)
    shift = np.array([1, 2, 7, 0, 3, 1, bits - 1, bits, bits + 1, min(2 * bits, ones)], dtype)
    return x, y, shift


UNSIGNED = [(np.uint8, "ui8"), (np.uint16, "ui16")]


@pytest.mark.parametrize("backend", IREE)
def test_from_mlir_narrow_unsigned_division_and_shift(backend):
    """vmvx sign-extended them: ui8 156 / 14 gave 139, 252 >> 7 gave 255."""
    ops, inputs, expected = [], [], []
    for dtype, name in UNSIGNED:
        x, y, s = _unsigned_operands(dtype)
        ops += [("divide", name), ("remainder", name), ("shift_right_logical", name)]
        inputs += [x, y, x, y, x, s]
        bits = 8 * x.dtype.itemsize                                 # the spec: a shift past the width is 0
        expected += [x // y, x % y, np.where(s >= bits, 0, x >> np.minimum(s, bits - 1)).astype(dtype)]
    out = hj.from_mlir(_module(ops, 10), backend=backend)(*inputs)
    for actual, e in zip(out, expected):
        np.testing.assert_array_equal(np.asarray(actual), e)


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16])
def test_traced_narrow_unsigned_floor_divide_remainder_and_right_shift(backend, dtype):
    x, y, s = _unsigned_operands(dtype)
    s = np.minimum(s, 8 * x.dtype.itemsize - 1)                 # numpy's own shifts past the width are undefined
    out = hj.jit(lambda a, b, c: (a // b, a % b, a >> c, hj.ops.divmod(a, b)), backend=backend)(x, y, s)
    for actual, expected in zip([*out[:3], *out[3]], [x // y, x % y, x >> s, x // y, x % y]):
        np.testing.assert_array_equal(np.asarray(actual), expected)
