"""hj.from_mlir: StableHLO from elsewhere (JAX's export) on every backend."""
import glob
import os

import ml_dtypes
import numpy as np
import pytest

import hlojit as hj
from hlojit.frontend.upgrade import upgrade
from hlojit.pipeline import legalize
from legalize_runs import on_target_and_reference
from test_legalize import rewritten   # rewritten: parse, rewrite, verify

DATA = os.path.join(os.path.dirname(__file__), "data", "jax")
CHECKED_IN = sorted(glob.glob(os.path.join(DATA, "*.mlir")))


def numpy_reference(name, args):
    """What each checked-in JAX program computes, written in numpy."""
    if name == "sin_affine":
        return np.sin(args[0]) * 2 + 1
    if name == "mlp":
        x, w, b = args
        return np.maximum(x @ w + b, 0)
    if name == "softmax":
        e = np.exp(args[0] - args[0].max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)
    if name == "where_mean":
        x = args[0]
        return np.where(x > 0, x, 0.1 * x).mean(axis=0)
    # JAX programs IREE or the reference backend failed on (found by exporting JAX functions through from_mlir)
    if name == "fft_abs_f64":        # private @fft of complex<f64>: vmvx's complex pairs stopped at the call
        return np.abs(np.fft.fft(args[0]))
    if name == "rfft_round_trip":    # RFFT and IRFFT of 20 points: llvm-cpu lowers powers of two only, vmvx none
        return np.fft.irfft(np.fft.rfft(args[0]) * 0.5, 20)
    if name == "bf16_matmul":        # a bf16 dot_general with a bf16 result: vmvx could not lower its zero
        a, b = (x.astype(ml_dtypes.bfloat16).astype(np.float32) for x in args)
        return (a @ b).astype(ml_dtypes.bfloat16).astype(np.float32)
    if name == "top_k":              # chlo.top_k: IREE made its own top-k of the expansion's sort and slice
        order = np.argsort(-args[0], axis=-1, kind="stable")[:, :4]
        return np.take_along_axis(args[0], order, -1), order.astype(np.int32)
    if name == "argsort_stable":     # a stable sort of (x, iota): llvm-cpu failed to compile the added positions
        return np.argsort(args[0], axis=-1, kind="stable").astype(np.int32)
    if name == "strided_reverse":    # a slice strided along the last axis, then a reverse: llvm-cpu failed
        return args[0][:, 1::2][::-1, ::-1]
    raise KeyError(name)


# bf16 products: one bf16 rounding of an f32 sum, which a different summation order can move by one bf16 ulp
TOLERANCE = {"bf16_matmul": 8e-3}


@pytest.mark.parametrize("path", CHECKED_IN, ids=lambda p: os.path.basename(p)[:-5])
def test_checked_in_jax_programs_run_on_every_backend(path, backend):
    module = hj.from_mlir(path, backend=backend)
    rng = np.random.default_rng(1)
    args = [rng.standard_normal(shape).astype(dtype) for shape, dtype in module.inputs]
    name = os.path.basename(path)[:-5]
    expected, actual = numpy_reference(name, args), module(*args)
    if not isinstance(expected, tuple):
        expected, actual = (expected,), (actual,)
    tolerance = TOLERANCE.get(name, 2e-6)
    for got, want in zip(actual, expected):
        np.testing.assert_allclose(np.asarray(got), want, rtol=tolerance, atol=tolerance)


def test_fresh_jax_exports_agree_with_jax(backend):
    jax = pytest.importorskip("jax")
    jnp = jax.numpy

    def f(x, y):
        return jnp.tanh(x @ y).sum(axis=0), jnp.maximum(x, 0.5).astype(jnp.int32)
    x = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
    y = np.linspace(0, 2, 8, dtype=np.float32).reshape(4, 2)
    text = jax.jit(f).lower(x, y).as_text()
    got = hj.from_mlir(text, backend=backend)(x, y)
    want = jax.jit(f)(x, y)
    assert isinstance(got, tuple) and len(got) == 2
    np.testing.assert_allclose(np.asarray(got[0]), np.asarray(want[0]), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(np.asarray(got[1]), np.asarray(want[1]))


MULTI_PLATFORM = os.path.join(DATA, "multi_platform", "sin_on_cpu_cos_on_cuda.mlir")


class Exported:
    """What hj.from_mlir reads of a jax.export.Exported: its module and the platforms it was lowered for."""

    def __init__(self, path, platforms):
        with open(path) as f:
            self.text, self.platforms = f.read(), platforms

    def mlir_module(self):
        return self.text


def test_multi_platform_export_runs_its_cpu_lowering(backend):
    """jax.export for several platforms adds a platform-index argument that selects each platform's lowering
    (stablehlo.case): hj.from_mlir binds it to the backend's platform, here the index of "cpu"."""
    x = np.array([1.0, -2.0, 3.0, 0.5], np.float32)
    module = hj.from_mlir(Exported(MULTI_PLATFORM, ("cuda", "cpu")), backend=backend)
    assert module.inputs == [((4,), np.dtype(np.float32))]
    np.testing.assert_allclose(np.asarray(module(x)), 2 * np.sin(x), rtol=1e-6)
    # the order of the platforms decides: told that cpu comes first, the module runs the cuda branch
    swapped = hj.from_mlir(MULTI_PLATFORM, backend=backend, platforms=("CPU", "cuda"))
    np.testing.assert_allclose(np.asarray(swapped(x)), 2 * np.cos(x), rtol=1e-6)


def test_multi_platform_export_without_its_platforms():
    x = np.array([1.0, -2.0, 3.0, 0.5], np.float32)
    module = hj.from_mlir(MULTI_PLATFORM, backend="reference")
    with pytest.raises(hj.SignatureError, match=r"takes 2 arguments, got 1: its argument 0 is the platform index "
                                                r".*platforms=exported.platforms"):
        module(x)
    np.testing.assert_allclose(np.asarray(module(np.int32(1), x)), 2 * np.sin(x), rtol=1e-6)
    with pytest.raises(hj.BackendError, match="exported for tpu, not for cpu"):
        hj.from_mlir(MULTI_PLATFORM, backend="reference", platforms=("tpu",))


def test_multi_platform_export_compiles_for_cuda():
    from hlojit.frontend.from_mlir import parse
    from hlojit.pipeline import compile_program, cuda
    program = parse(MULTI_PLATFORM, platform_index=0)
    assert len(program.inputs) == 1
    compile_program(program, cuda())


def test_fresh_multi_platform_export_agrees_with_jax(backend):
    jax = pytest.importorskip("jax")
    from jax import export, lax

    def f(x):
        return lax.platform_dependent(x, cpu=jax.numpy.tanh, default=jax.numpy.exp) @ x.T
    x = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
    exported = export.export(jax.jit(f), platforms=("cuda", "cpu"))(jax.ShapeDtypeStruct(x.shape, x.dtype))
    np.testing.assert_allclose(np.asarray(hj.from_mlir(exported, backend=backend)(x)), np.asarray(jax.jit(f)(x)),
                               rtol=1e-5, atol=1e-6)


def test_text_entry_and_argument_errors():
    text = """
    func.func @helper(%x: tensor<2xf32>) -> tensor<2xf32> {
      %0 = stablehlo.add %x, %x : tensor<2xf32>
      return %0 : tensor<2xf32>
    }
    func.func @double(%x: tensor<2xf32>) -> tensor<2xf32> {
      %0 = func.call @helper(%x) : (tensor<2xf32>) -> tensor<2xf32>
      return %0 : tensor<2xf32>
    }"""
    for backend in ("reference", "iree:cpu"):
        double = hj.from_mlir(text, entry="double", backend=backend)
        np.testing.assert_array_equal(np.asarray(double(np.array([1, 2], np.float32))), [2, 4])
    with pytest.raises(hj.SignatureError, match=r"argument 0 must be float32\[2\], got int32\[2\]"):
        double(np.array([1, 2], np.int32))
    with pytest.raises(hj.SignatureError, match="takes 1 arguments, got 2"):
        double(np.zeros(2, np.float32), np.zeros(2, np.float32))
    with pytest.raises(ValueError, match=r"has no function @nope; it has: @helper, @double"):
        hj.from_mlir(text, entry="nope")
    with pytest.raises(ValueError, match="not valid MLIR"):
        hj.from_mlir("func.func @main( {")


def test_unsupported_ops_are_named():
    text = """func.func @main(%s: tensor<2xui64>) -> tensor<4xui32> {
      %0, %1 = stablehlo.rng_bit_generator %s, algorithm = DEFAULT : (tensor<2xui64>) -> (tensor<2xui64>, tensor<4xui32>)
      return %1 : tensor<4xui32>
    }"""
    with pytest.raises(hj.BackendError, match="reference backend does not implement stablehlo.rng_bit_generator"):
        hj.from_mlir(text, backend="reference")


def test_an_op_iree_cannot_compile_gives_its_first_diagnostic():
    """A custom call IREE knows no target for: the error gives IREE's first diagnostic (f64 CHLO polygamma, this
    test's op before, now has its CHLO expanded before the rewrites: tests/test_chlo_expansion.py)."""
    text = """func.func @main(%x: tensor<2xf64>) -> tensor<2xf64> {
      %0 = stablehlo.custom_call @no_such_target(%x) : (tensor<2xf64>) -> tensor<2xf64>
      return %0 : tensor<2xf64>
    }"""
    with pytest.raises(hj.CompileError, match="failed to legalize operation 'stablehlo.custom_call'"):
        hj.from_mlir(text, backend="iree:cpu")


def test_dynamic_shapes_are_refused_clearly():
    text = """func.func @main(%x: tensor<?xf32>) -> tensor<?xf32> {
      return %x : tensor<?xf32>
    }"""
    with pytest.raises(hj.BackendError, match="static-shaped tensors only"):
        hj.from_mlir(text, backend="reference")


def test_vmvx_float_to_int_truncates_like_stablehlo(backend):
    """IREE 3.13's vmvx rounds float -> int to nearest and cannot lower float -> u8; pipeline/quirks.py
    mends both, here checked on every backend against numpy."""
    x = np.array([0.5, 0.7, 1.5, -0.5, -1.7, 2.2, 200.5, -0.2], np.float32)
    f = hj.jit(lambda x: (x.astype(np.int32), np.abs(x).astype(np.uint8), x.astype(np.int8)), backend=backend)
    as_int32, as_uint8, as_int8 = f(x)
    np.testing.assert_array_equal(np.asarray(as_int32), x.astype(np.int32))
    np.testing.assert_array_equal(np.asarray(as_uint8), np.abs(x).astype(np.uint8))
    np.testing.assert_array_equal(np.asarray(as_int8)[:6], x[:6].astype(np.int8))


# --- newer StableHLO than the bundled parser's (hlojit/frontend/upgrade.py) ---------------------------------

def test_upgrade_spells_stablehlo_square_as_chlo_square_or_multiply():
    custom = "  %r = stablehlo.square %x : tensor<2xcomplex<f64>> loc(#l)\n"
    assert upgrade(custom) == "  %r = chlo.square %x : tensor<2xcomplex<f64>> -> tensor<2xcomplex<f64>> loc(#l)\n"
    assert upgrade("%r = stablehlo.square %x : (tensor<f32>) -> tensor<f32>") == \
        "%r = stablehlo.multiply %x, %x : tensor<f32>"
    generic = '%r = "stablehlo.square"(%x) : (tensor<3xcomplex<f32>>) -> tensor<3xcomplex<f32>>'
    assert upgrade(generic) == "%r = chlo.square %x : tensor<3xcomplex<f32>> -> tensor<3xcomplex<f32>>"
    assert upgrade('%r = "stablehlo.square"(%x) : (tensor<3xi8>) -> tensor<3xi8>') == \
        "%r = stablehlo.multiply %x, %x : tensor<3xi8>"
    older = "%r = stablehlo.multiply %x, %x : tensor<f32>"
    assert upgrade(older) is older


def test_upgrade_spells_weak_order_compares_with_float_compares():
    text = "    %r = stablehlo.compare LT, %a, %b, WEAKORDER : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xi1>\n"
    t, b = "(tensor<2xf32>, tensor<2xf32>) -> tensor<2xi1>", "tensor<2xi1>"
    assert upgrade(text) == "\n".join([
        f"    %__weakorder0_ordered = stablehlo.compare LT, %a, %b, FLOAT : {t}",
        f"    %__weakorder0_a_nan = stablehlo.compare NE, %a, %a, FLOAT : {t}",
        f"    %__weakorder0_b_nan = stablehlo.compare NE, %b, %b, FLOAT : {t}",
        f"    %__weakorder0_not_nan = stablehlo.not %__weakorder0_a_nan : {b}",
        f"    %__weakorder0_above = stablehlo.and %__weakorder0_b_nan, %__weakorder0_not_nan : {b}",
        f"    %r = stablehlo.or %__weakorder0_ordered, %__weakorder0_above : {b}"]) + "\n"
    generic = ('%r = "stablehlo.compare"(%a, %b) <{compare_type = #stablehlo<comparison_type WEAKORDER>, '
               'comparison_direction = #stablehlo<comparison_direction GE>}> : '
               '(tensor<f64>, tensor<f64>) -> tensor<i1>')
    last = upgrade(generic).splitlines()[-1]
    assert last == "%r = stablehlo.or %__weakorder0_ordered, %__weakorder0_a_nan : tensor<i1>"
    integers = "%r = stablehlo.compare GT, %a, %b, WEAKORDER : (tensor<ui8>, tensor<ui8>) -> tensor<i1>"
    assert upgrade(integers) == "%r = stablehlo.compare GT, %a, %b : (tensor<ui8>, tensor<ui8>) -> tensor<i1>"
    complex_ = ("%r = stablehlo.compare EQ, %a, %b, WEAKORDER : (tensor<complex<f32>>, tensor<complex<f32>>) "
                "-> tensor<i1>")
    assert upgrade(complex_) == complex_          # no older meaning known: the parser names it


_WEAK = """func.func @main(%a: tensor<10xf32>, %b: tensor<10xf32>) -> ({results}) {{
{ops}
  return {names} : {results}
}}"""


def _weak_order(a, b):
    """numpy's sort order as pairs (is NaN, value): -0 == +0, NaNs equal each other and above +inf."""
    an, bn = np.isnan(a), np.isnan(b)
    av, bv = np.where(an, 0, a), np.where(bn, 0, b)
    less = (an < bn) | ((an == bn) & (av < bv))
    equal = (an == bn) & (av == bv)
    return {"EQ": equal, "NE": ~equal, "LT": less, "LE": less | equal, "GT": ~(less | equal), "GE": ~less}


def test_weak_order_compares_and_square_run_on_every_backend(backend):
    directions = ["EQ", "NE", "LT", "LE", "GT", "GE"]
    signature = "(tensor<10xf32>, tensor<10xf32>) -> tensor<10xi1>"
    ops = [f"  %{d} = stablehlo.compare {d}, %a, %b, WEAKORDER : {signature}" for d in directions]
    ops.append("  %sq = stablehlo.square %a : tensor<10xf32>")
    results = ", ".join(["tensor<10xi1>"] * 6 + ["tensor<10xf32>"])
    text = _WEAK.format(ops="\n".join(ops), names=", ".join(f"%{d}" for d in directions + ["sq"]), results=results)
    nan, negative_nan = np.float32(np.nan), -np.float32(np.nan)
    a = np.array([nan, negative_nan, -np.inf, -0.0, 1, np.inf, np.inf, nan, 3, -2], np.float32)
    b = np.array([negative_nan, nan, np.inf, 0.0, 2, np.inf, nan, np.inf, 3, -5], np.float32)
    *compares, square = hj.from_mlir(text, backend=backend)(a, b)
    expected = _weak_order(a, b)
    for d, got in zip(directions, compares):
        np.testing.assert_array_equal(np.asarray(got), expected[d], err_msg=d)
    np.testing.assert_array_equal(np.asarray(square), a * a)


_DIVISIONS = """func.func @main(%a: tensor<5xi64>, %b: tensor<5xi64>, %c: tensor<3xui32>, %d: tensor<3xui32>)
    -> (tensor<5xi64>, tensor<5xi64>, tensor<3xui32>, tensor<3xui32>) {
  %0 = stablehlo.divide %a, %b : tensor<5xi64>
  %1 = stablehlo.remainder %a, %b : tensor<5xi64>
  %2 = stablehlo.divide %c, %d : tensor<3xui32>
  %3 = stablehlo.remainder %c, %d : tensor<3xui32>
  return %0, %1, %2, %3 : tensor<5xi64>, tensor<5xi64>, tensor<3xui32>, tensor<3xui32>
}"""


def test_integer_division_by_zero_and_int_min_by_minus_one_is_zero_on_every_backend(backend):
    """The spec leaves these quotients to the implementation; hlojit's is 0 everywhere (pipeline/legalize.py
    guards the divisor for IREE, where x86 would trap on them)."""
    low = np.iinfo(np.int64).min
    a, b = np.int64([7, -7, low, low, -9]), np.int64([0, 0, -1, 1, 2])
    c, d = np.uint32([7, 0, 9]), np.uint32([0, 0, 2])
    outputs = hj.from_mlir(_DIVISIONS, backend=backend)(a, b, c, d)
    quotient, remainder, unsigned_quotient, unsigned_remainder = outputs
    np.testing.assert_array_equal(np.asarray(quotient), [0, 0, 0, low, -4])
    np.testing.assert_array_equal(np.asarray(remainder), [0, 0, 0, 0, -1])
    np.testing.assert_array_equal(np.asarray(unsigned_quotient), [0, 0, 4])
    np.testing.assert_array_equal(np.asarray(unsigned_remainder), [0, 0, 1])


def test_integer_division_guard_golden():
    text = """func.func @main(%a: tensor<2xui8>, %b: tensor<2xui8>, %x: tensor<2xf32>)
    -> (tensor<2xui8>, tensor<2xf32>) {
  %0 = stablehlo.divide %a, %b : tensor<2xui8>
  %1 = stablehlo.divide %x, %x : tensor<2xf32>
  return %0, %1 : tensor<2xui8>, tensor<2xf32>
}"""
    count, out = rewritten(text, legalize.integer_division_by_zero_and_overflow)
    assert count == 1
    assert out.splitlines()[2:-2] == [f"    {line}" for line in [
        "%c = stablehlo.constant dense<0> : tensor<ui8>",
        "%0 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<ui8>) -> tensor<2xui8>",
        "%1 = stablehlo.compare EQ, %arg1, %0, UNSIGNED : (tensor<2xui8>, tensor<2xui8>) -> tensor<2xi1>",
        "%c_0 = stablehlo.constant dense<1> : tensor<ui8>",
        "%2 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<ui8>) -> tensor<2xui8>",
        "%3 = stablehlo.select %1, %2, %arg1 : tensor<2xi1>, tensor<2xui8>",
        "%4 = stablehlo.divide %arg0, %3 : tensor<2xui8>",
        "%c_1 = stablehlo.constant dense<0> : tensor<ui8>",
        "%5 = stablehlo.broadcast_in_dim %c_1, dims = [] : (tensor<ui8>) -> tensor<2xui8>",
        "%6 = stablehlo.select %1, %5, %4 : tensor<2xi1>, tensor<2xui8>",
        "%7 = stablehlo.divide %arg2, %arg2 : tensor<2xf32>",          # floats are left alone
        "return %6, %7 : tensor<2xui8>, tensor<2xf32>"]], out


_SQUARES = """func.func @main(%z: tensor<6xcomplex<f64>>, %w: tensor<2xcomplex<f32>>, %i: tensor<3xi32>)
    -> (tensor<6xcomplex<f64>>, tensor<2xcomplex<f32>>, tensor<3xi32>) {
  %0 = stablehlo.square %z : tensor<6xcomplex<f64>>
  %1 = "stablehlo.square"(%w) : (tensor<2xcomplex<f32>>) -> tensor<2xcomplex<f32>>
  %2 = stablehlo.square %i : tensor<3xi32>
  return %0, %1, %2 : tensor<6xcomplex<f64>>, tensor<2xcomplex<f32>>, tensor<3xi32>
}"""


def test_square_of_complex_runs_on_every_backend(backend):
    """A newer module's stablehlo.square (chlo.square once upgraded): IREE's own complex<f64> lowering of it
    killed the process (SIGFPE); pipeline/legalize.py builds it from the parts, as the spec defines it."""
    z = np.array([2 + 1j, 1e155 + 2e155j, 1e308 + 1e308j, 1e308 - 1e308j, complex(np.inf, np.inf), 0.5 - 3j])
    w = np.array([1e19 + 2e19j, 3 - 1j], np.complex64)
    i = np.int32([3, -4, 46341])
    got_z, got_w, got_i = (np.asarray(v) for v in hj.from_mlir(_SQUARES, backend=backend)(z, w, i))
    inf, nan = np.inf, np.nan
    want_z = np.array([3 + 4j, complex(-inf, inf), complex(0, inf), complex(0, -inf), complex(nan, inf),
                       -8.75 - 3j])
    want_w = np.array([complex(-3e38, inf), 8 - 6j], np.complex64)
    for got, want, rtol in ((got_z, want_z, 1e-15), (got_w, want_w, 1e-6)):
        for part in (np.real, np.imag):
            np.testing.assert_allclose(part(got), part(want), rtol=rtol)
    np.testing.assert_array_equal(got_i, i * i)          # 46341**2 wraps, as multiply does


def test_chlo_square_by_parts_golden():
    text = """func.func @main(%z: tensor<2xcomplex<f32>>, %x: tensor<2xf32>)
    -> (tensor<2xcomplex<f32>>, tensor<2xf32>) {
  %0 = chlo.square %z : tensor<2xcomplex<f32>> -> tensor<2xcomplex<f32>>
  %1 = chlo.square %x : tensor<2xf32> -> tensor<2xf32>
  return %0, %1 : tensor<2xcomplex<f32>>, tensor<2xf32>
}"""
    count, out = rewritten(text, legalize.chlo_square_by_parts)
    assert count == 2
    ops = [line.split(" = ")[1].split(" ")[0] for line in out.splitlines() if " = " in line]
    assert ops == ["stablehlo.real", "stablehlo.imag", "stablehlo.is_finite", "stablehlo.abs", "stablehlo.abs",
                   "stablehlo.compare", "stablehlo.and", "stablehlo.subtract", "stablehlo.add", "stablehlo.multiply",
                   "stablehlo.constant", "stablehlo.broadcast_in_dim", "stablehlo.select", "stablehlo.constant",
                   "stablehlo.broadcast_in_dim", "stablehlo.multiply", "stablehlo.multiply", "stablehlo.complex",
                   "stablehlo.multiply"]


def test_the_jax_exports_tool_compares_a_module_with_jax():
    """tools/jax_exports.py (where JAX is installed): a case that passes, and one the spec leaves open that differs."""
    jax = pytest.importorskip("jax")
    import importlib.util
    spec = importlib.util.spec_from_file_location(
        "jax_exports", os.path.join(os.path.dirname(__file__), "..", "tools", "jax_exports.py"))
    tool = importlib.util.module_from_spec(spec)
    x64 = jax.config.jax_enable_x64
    try:
        spec.loader.exec_module(tool)       # turns on JAX's 64-bit mode (its f64 cases)
        assert tool.check("top_k", "reference") is None
        assert tool.check("convert_f2i", "reference").startswith("AssertionError")
    finally:
        jax.config.update("jax_enable_x64", x64)


# JAX writes helpers as private functions: jnp.fft.fft(x) of real x is a call of @fft returning complex<f64>
CALLED_FFT = """func.func @main(%x: tensor<12xf64>) -> tensor<12xf64> {
  %0 = call @fft(%x) : (tensor<12xf64>) -> tensor<12xcomplex<f64>>
  %1 = stablehlo.abs %0 : (tensor<12xcomplex<f64>>) -> tensor<12xf64>
  return %1 : tensor<12xf64>
}
func.func private @fft(%x: tensor<12xf64>) -> tensor<12xcomplex<f64>> {
  %0 = stablehlo.convert %x : (tensor<12xf64>) -> tensor<12xcomplex<f64>>
  %1 = stablehlo.fft %0, type = FFT, length = [12] : (tensor<12xcomplex<f64>>) -> tensor<12xcomplex<f64>>
  return %1 : tensor<12xcomplex<f64>>
}"""


def test_calls_are_inlined_first_golden():
    count, text = rewritten(CALLED_FFT, legalize.calls_inlined)
    assert count == 1
    assert text == """module {
  func.func @main(%arg0: tensor<12xf64>) -> tensor<12xf64> {
    %0 = stablehlo.convert %arg0 : (tensor<12xf64>) -> tensor<12xcomplex<f64>>
    %1 = stablehlo.fft %0, type = FFT, length = [12] : (tensor<12xcomplex<f64>>) -> tensor<12xcomplex<f64>>
    %2 = stablehlo.abs %1 : (tensor<12xcomplex<f64>>) -> tensor<12xf64>
    return %2 : tensor<12xf64>
  }
}
"""


@pytest.mark.parametrize("backend", ["iree:cpu", "iree:vmvx"])
def test_a_complex_value_returned_by_a_call_runs_on_iree(backend):
    """vmvx failed ('util.buffer.load' op result #0 must be ... but got 'complex<f64>'): the pairs rewrite works
    function by function, and main's abs of the call's complex result stayed complex."""
    x = np.linspace(-1, 2, 12)
    (actual, expected), = on_target_and_reference(CALLED_FFT, [x], backend)
    np.testing.assert_allclose(actual, np.abs(np.fft.fft(x)), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(actual, expected, rtol=1e-12, atol=1e-12)
