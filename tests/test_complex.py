"""complex64 and complex128: promotion, the parts, arithmetic and the transcendental functions against numpy
on every target (one compiled module per backend and dtype), hj.Array in and out, and gradients of real
losses of complex values against central differences (JAX's convention: dL/dx - i dL/dy)."""
import numpy as np
import pytest

import hlojit as hj
from hlojit import ops
from hlojit.errors import DTypeError

from conftest import assert_close

RNG = np.random.default_rng(12)


def _z(shape, dtype):
    return (RNG.normal(size=shape) + 1j * RNG.normal(size=shape)).astype(dtype)


@pytest.mark.parametrize("a, b, expected", [
    (np.float32, np.complex64, np.complex64), (np.float64, np.complex64, np.complex128),
    (np.complex64, np.complex128, np.complex128), (np.int32, np.complex64, np.complex64),
    (np.float16, np.complex64, np.complex64), (np.bool_, np.complex128, np.complex128),
])
def test_promotion_puts_complex_above_float(a, b, expected):
    out = hj.jit(lambda x, y: x + y, backend="reference")(np.ones(2, a), np.ones(2, b))
    assert out.dtype == np.dtype(expected)


@pytest.mark.parametrize("dtype, expected", [(np.float32, np.complex64), (np.float64, np.complex128),
                                             (np.int32, np.complex64), (np.complex128, np.complex128)])
def test_python_complex_scalars_are_weak(dtype, expected):
    out = hj.jit(lambda x: x * 1j + (2 + 0.5j), backend="reference")(np.ones(3, dtype))
    assert out.dtype == np.dtype(expected)
    assert_close(out, np.ones(3, dtype) * 1j + (2 + 0.5j), expected)


def test_complex_ops_are_refused_where_numpy_has_no_order():
    with pytest.raises(DTypeError, match="no order"):
        hj.jit(lambda z: z < z, backend="reference")(np.ones(2, np.complex64))
    with pytest.raises(DTypeError, match="maximum"):
        hj.jit(lambda z: ops.maximum(z, z), backend="reference")(np.ones(2, np.complex64))
    with pytest.raises(DTypeError, match="max: complex numbers have no order"):
        hj.jit(lambda z: ops.max(z), backend="reference")(np.ones(2, np.complex64))


def test_tensor_parts_and_numpy_ufuncs():
    z = _z((3,), np.complex128)
    out = hj.jit(lambda z: (z.real, z.imag, z.conj(), np.conjugate(z), np.absolute(z), ops.angle(z)),
                 backend="reference")(z)
    for actual, expected in zip(out, (z.real, z.imag, z.conj(), z.conj(), np.abs(z), np.angle(z))):
        assert_close(actual, expected)


UNARY = ["exp", "log", "sqrt", "sin", "cos", "tan", "sinh", "cosh", "tanh", "abs", "angle", "conj", "real",
         "imag", "square", "reciprocal", "negative", "sign", "log10", "log2", "isnan", "isfinite", "isinf"]
NUMPY = {"conj": np.conj, "angle": np.angle, "real": np.real, "imag": np.imag,
         "sign": lambda z: np.where(z == 0, 0, z / np.where(z == 0, 1, np.abs(z)))}


def _binary_cases(z, w, x):
    return [
        ("z+w", lambda z, w, x: z + w), ("z-w", lambda z, w, x: z - w), ("z*w", lambda z, w, x: z * w),
        ("z/w", lambda z, w, x: z / w), ("z*x+1j", lambda z, w, x: z * x + 1j), ("x/z", lambda z, w, x: x / z),
        ("z**3", lambda z, w, x: z ** 3), ("z**-2", lambda z, w, x: z ** -2), ("z**w", lambda z, w, x: z ** w),
        ("x+1j*x", lambda z, w, x: x + 1j * x), ("z==w", lambda z, w, x: z == w), ("z!=z", lambda z, w, x: z != z),
        ("z==z", lambda z, w, x: z == z),
    ]


def _reduction_cases():
    """(name, hlojit fn, numpy fn) of functions that reduce or interpolate complex values: before 12-02 each of
    these silently took the real part (a float-only helper converted the operand), or (vdot) forgot the
    conjugate; var/std/norms of complex are real, as numpy's."""
    grid = np.array([0.0, 0.5, 1.5, 2.0])
    return [
        ("var", lambda z, w, x: ops.var(z, axis=1), lambda z, w, x: np.var(z, axis=1)),
        ("std-ddof", lambda z, w, x: ops.std(z, ddof=1), lambda z, w, x: np.std(z, ddof=1)),
        ("nanvar", lambda z, w, x: ops.nanvar(ops.where(x > 1, np.nan, z), axis=0),
         lambda z, w, x: np.nanvar(np.where(x > 1, np.nan, z), axis=0)),
        ("nanmean", lambda z, w, x: ops.nanmean(ops.where(x > 1, np.nan, z)),
         lambda z, w, x: np.nanmean(np.where(x > 1, np.nan, z))),
        ("average-weights", lambda z, w, x: ops.average(z, axis=1, weights=ops.abs(x[0])),
         lambda z, w, x: np.average(z, axis=1, weights=np.abs(x[0]))),
        ("cov", lambda z, w, x: ops.cov(z), lambda z, w, x: np.cov(z)),
        ("corrcoef", lambda z, w, x: ops.corrcoef(z, w), lambda z, w, x: np.corrcoef(z, w)),
        ("vdot", lambda z, w, x: ops.vdot(z, w), lambda z, w, x: np.vdot(z, w)),
        ("interp", lambda z, w, x: ops.interp(ops.abs(x[0]), grid.astype(x.dtype), z[0]),
         lambda z, w, x: np.interp(np.abs(x[0]), grid, z[0])),
        ("trapezoid", lambda z, w, x: ops.trapezoid(z, axis=0), lambda z, w, x: np.trapezoid(z, axis=0)),
        ("gradient", lambda z, w, x: ops.gradient(z, axis=1), lambda z, w, x: np.gradient(z, axis=1)),
        ("rint", lambda z, w, x: ops.rint(z * 3), lambda z, w, x: np.rint(z * 3)),
        ("sinc", lambda z, w, x: ops.sinc(z), lambda z, w, x: np.sinc(z)),
        ("nan_to_num", lambda z, w, x: ops.nan_to_num(ops.where(x > 1, np.inf, z)),
         lambda z, w, x: np.nan_to_num(np.where(x > 1, np.inf, z))),
        ("norm", lambda z, w, x: ops.linalg.norm(z), lambda z, w, x: np.linalg.norm(z)),
        ("norm-vector", lambda z, w, x: ops.linalg.norm(z[0]), lambda z, w, x: np.linalg.norm(z[0])),
        ("norm-3", lambda z, w, x: ops.linalg.norm(z[0], 3), lambda z, w, x: np.linalg.norm(z[0], 3)),
        ("norm-1", lambda z, w, x: ops.linalg.norm(z, 1), lambda z, w, x: np.linalg.norm(z, 1)),
        ("norm-inf", lambda z, w, x: ops.linalg.norm(z, np.inf), lambda z, w, x: np.linalg.norm(z, np.inf)),
        ("norm-0", lambda z, w, x: ops.linalg.norm(z[1], 0), lambda z, w, x: np.linalg.norm(z[1], 0)),
        ("vector_norm", lambda z, w, x: ops.linalg.vector_norm(z, axis=0),
         lambda z, w, x: np.linalg.vector_norm(z, axis=0)),
        # reduce_window of complex values: vmvx could not compile them ('util.buffer.load' of complex<f32>)
        ("cumsum", lambda z, w, x: ops.cumsum(z, axis=1), lambda z, w, x: np.cumsum(z, axis=1)),
        ("cumprod", lambda z, w, x: ops.cumprod(w, axis=0), lambda z, w, x: np.cumprod(w, axis=0)),
    ]


@pytest.mark.parametrize("fn", [
    lambda z: ops.median(z), lambda z: ops.percentile(z, 50), lambda z: ops.logsumexp(z), lambda z: ops.softmax(z),
    lambda z: ops.histogram(z), lambda z: ops.logaddexp(z, z), lambda z: ops.i0(z), lambda z: ops.unwrap(z)],
    ids=["median", "percentile", "logsumexp", "softmax", "histogram", "logaddexp", "i0", "unwrap"])
def test_functions_without_a_complex_meaning_refuse_it(fn):
    """Before 12-02 these took the real part of a complex operand silently."""
    with pytest.raises(DTypeError, match="complex"):
        hj.jit(fn, backend="reference").lower(np.ones(3, np.complex64))


def test_no_helper_takes_the_real_part_silently():
    """The frontend's convert refuses complex -> real (astype, .real and abs say which real value is meant)."""
    from hlojit.frontend.ops import _core
    with pytest.raises(DTypeError, match="would drop the imaginary part"):
        hj.jit(lambda z: _core.convert(z, np.float32), backend="reference").lower(np.ones(3, np.complex64))
    assert hj.jit(lambda z: z.astype(np.float32), backend="reference")(np.complex64([1 + 2j])).tolist() == [1.0]


# The reduction cases iree:vmvx runs: the others are library functions composed of ops the table checks there
# already (conftest.LIBRARY_BACKENDS); these lower through vmvx's own reduce_window of complex values
VMVX_REDUCTIONS = ("cumsum", "cumprod")


def _suite(dtype, backend="reference"):
    """(traced function, inputs, (name, numpy result) rows) of one backend and dtype: everything compiles into one
    module. iree:vmvx leaves the library functions of _reduction_cases but VMVX_REDUCTIONS out (its module
    compiled in 18.7 s with them, 10.1 without, complex128 on the 2-vCPU VM)."""
    part = np.float32 if dtype == np.complex64 else np.float64
    z = _z((3, 4), dtype)
    z[0, :3] = [0, 1e-3 - 2j, -4 + 0j]            # zero, small, the negative real axis
    z[1, 0] = 30 + 2j                               # tanh's far range
    w = _z((3, 4), dtype)
    w[0, 0] = 1
    w[2] = z[2]                                     # some equal elements
    x = RNG.normal(size=(3, 4)).astype(part)
    reductions = [c for c in _reduction_cases() if backend != "iree:vmvx" or c[0] in VMVX_REDUCTIONS]

    def traced(z, w, x):
        out = [getattr(ops, name)(z) for name in UNARY]
        out += [fn(z, w, x) for _, fn in _binary_cases(z, w, x)]
        out += [z @ w.T, ops.sum(z, axis=1), ops.mean(z), ops.prod(z[1:], axis=0), ops.dot(z[0], w[0]),
                z.astype(part), x.astype(dtype), ops.complex(x, 2 * x), ops.where(x > 0, z, w), z.T, z[1:, ::2],
                ops.concatenate([z, w]), ops.reshape(z, (4, 3)), ops.angle(x), ops.real(x), ops.imag(x)]
        out += [fn(z, w, x) for _, fn, _ in reductions]
        return out
    with np.errstate(all="ignore"):
        expected = [NUMPY.get(name, getattr(np, name, None))(z) for name in UNARY]
        expected += [fn(z, w, x) for _, fn in _binary_cases(z, w, x)]
        expected += [z @ w.T, z.sum(axis=1), z.mean(), z[1:].prod(axis=0), np.dot(z[0], w[0]), z.real.astype(part),
                     x.astype(dtype), (x + 2j * x).astype(dtype), np.where(x > 0, z, w), z.T, z[1:, ::2],
                     np.concatenate([z, w]), z.reshape(4, 3), np.angle(x).astype(part), x, np.zeros_like(x)]
        expected += [ref(z, w, x) for _, _, ref in reductions]
    names = UNARY + [n for n, _ in _binary_cases(z, w, x)] + [
        "matmul", "sum", "mean", "prod", "dot", "astype-real", "astype-complex", "complex", "where", "T", "slice",
        "concatenate", "reshape", "angle-real", "real-real", "imag-real"] + [n for n, _, _ in reductions]
    rows = list(zip(names, expected))
    return traced, (z, w, x), rows


_RESULTS = {}


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_ops_against_numpy(backend, dtype):
    if backend == "iree:vmvx" and dtype == np.complex128:   # ~16 s of the suite: iree:cpu checks these rewrites
        pytest.skip("vmvx runs complex64 only here (the complex128 module's rewrites are checked on iree:cpu)")
    if backend == "iree:cpu" and dtype == np.complex64:     # ~23 s: the same rewrites, in f32 pairs, run on vmvx
        pytest.skip("iree:cpu runs complex128 only here (the complex64 module's rewrites are checked on iree:vmvx)")
    traced, args, rows = _suite(dtype, backend)
    key = (backend, dtype)
    if key not in _RESULTS:
        _RESULTS[key] = hj.jit(traced, backend=backend)(*args)
    scale = 8 if dtype == np.complex64 else 50     # libm's last bits differ, and sums of products
    for (name, expected), actual in zip(rows, _RESULTS[key]):
        expected = np.asarray(expected)
        if expected.dtype == np.float64 and dtype == np.complex64:
            expected = expected.astype(np.float32)
        if expected.dtype == np.complex128 and dtype == np.complex64:
            expected = expected.astype(np.complex64)
        try:
            assert_close(actual, expected, scale=scale)
        except AssertionError as e:
            raise AssertionError(f"{name} on {backend}: {e}") from None


def test_nan_and_inf_parts(backend):
    z = np.array([np.nan + 1j, 1 + np.nan * 1j, np.inf + 0j, 1 - 1j], np.complex64)
    out = hj.jit(lambda z: (ops.isnan(z), ops.isinf(z), ops.isfinite(z), z == z, ops.abs(z)), backend=backend)(z)
    for actual, expected in zip(out, (np.isnan(z), np.isinf(z), np.isfinite(z), z == z, np.abs(z))):
        assert_close(actual, expected)


def test_arrays_carry_complex_in_and_out(backend):
    z = _z((2, 3), np.complex128)
    f = hj.jit(lambda z: z * 2, backend=backend)
    y = f(z)
    assert isinstance(y, hj.Array) and y.dtype == np.complex128
    assert_close(f(y), z * 4)                        # an hj.Array of complex goes back in


def _loops(lib, z):
    """Complex values carried by while_loop, fori_loop, scan and cond, and captured by their bodies: `lib` is
    hlojit.ops, or None for the same steps in plain Python on numpy."""
    if lib is None:
        w, steps = z, 0
        while w[0, 0].real < 3:
            w, steps = w * (1 + 0.5j), steps + 1
        f = z
        for _ in range(3):
            f = f * f + z
        carry, ys = z[0], []
        for x in z:
            carry, ys = carry + x, ys + [carry * x]
        return [w, f, carry, np.stack(ys), z * 1j if z[0, 1].real > 0 else -z]
    steps, w = lib.while_loop(lambda c: lib.real(c[1][0, 0]) < 3, lambda c: (c[0] + 1, c[1] * (1 + 0.5j)), (0, z))
    f = lib.fori_loop(0, 3, lambda i, c: c * c + z, z)
    carry, ys = lib.scan(lambda c, x: (c + x, c * x), z[0], z)
    return [w, f, carry, ys, lib.cond(lib.real(z[0, 1]) > 0, lambda a: a * 1j, lambda a: -a, z)]


def test_complex_values_through_control_flow(backend):
    """IREE's targets used to fail on these (complex_pairs left functions with complex regions alone)."""
    args = [(np.arange(6) + 0.5j * np.arange(6)[::-1]).reshape(2, 3).astype(dtype) * 0.1
            for dtype in (np.complex64, np.complex128)]
    out = hj.jit(lambda z64, z128: _loops(ops, z64) + _loops(ops, z128), backend=backend)(*args)
    expected = _loops(None, args[0]) + _loops(None, args[1])
    for actual, want in zip(out, expected):
        assert_close(actual, want)


def _central_gradient(f, z, eps=1e-6):
    """JAX's convention for a real f of complex z: df/dx - i df/dy, by central differences."""
    g = np.zeros_like(z)
    for i in np.ndindex(z.shape):
        for unit, sign in ((1, 1), (1j, -1j)):
            dz = np.zeros_like(z)
            dz[i] = unit * eps
            g[i] += sign * (f(z + dz) - f(z - dz)) / (2 * eps)
    return g


LOSSES = [  # (id, hlojit loss, numpy loss) of a complex128 argument
    ("abs2", lambda z: ops.sum(ops.abs(z) ** 2), lambda z: np.sum(np.abs(z) ** 2)),
    ("real-exp", lambda z: ops.sum(ops.real(ops.exp(z) * (1 + 2j))), lambda z: np.sum(np.real(np.exp(z) * (1 + 2j)))),
    ("imag-log-sqrt", lambda z: ops.sum(ops.imag(ops.log(z)) + ops.real(ops.sqrt(z))),
     lambda z: np.sum(np.imag(np.log(z)) + np.real(np.sqrt(z)))),
    ("matmul-conj", lambda z: ops.real(ops.sum(ops.conj(z) @ z.T)), lambda z: np.real(np.sum(np.conj(z) @ z.T))),
    ("angle-tanh", lambda z: ops.sum(ops.angle(ops.tanh(z))), lambda z: np.sum(np.angle(np.tanh(z)))),
    ("abs-sin-div", lambda z: ops.sum(ops.abs(ops.sin(z) / (z + 3))), lambda z: np.sum(np.abs(np.sin(z) / (z + 3)))),
]


@pytest.mark.parametrize("name, loss, reference", LOSSES, ids=[c[0] for c in LOSSES])
def test_gradients_of_real_losses_of_complex_values(name, loss, reference):
    z = _z((2, 2), np.complex128) + 0.5
    grad = hj.jit(hj.grad(loss), backend="reference")(z)
    np.testing.assert_allclose(np.asarray(grad), _central_gradient(reference, z), rtol=1e-6, atol=1e-7)


def test_gradient_flows_from_complex_back_to_a_real_argument(backend):
    def loss(x):
        z = ops.exp(1j * x) * (x + 2j)
        return ops.sum(ops.abs(z) ** 2 + ops.real(z))
    x = np.linspace(-1, 1, 5)
    grad = hj.jit(hj.grad(loss), backend=backend)(x)
    eps = 1e-6
    f = lambda x: np.sum(np.abs(np.exp(1j * x) * (x + 2j)) ** 2 + np.real(np.exp(1j * x) * (x + 2j)))
    numeric = np.array([(f(x + eps * e) - f(x - eps * e)) / (2 * eps) for e in np.eye(5)])
    assert np.asarray(grad).dtype == np.float64
    np.testing.assert_allclose(np.asarray(grad), numeric, rtol=1e-6, atol=1e-7)


GOLDEN_BEFORE = """func.func @main(%z: tensor<2xcomplex<f32>>, %w: tensor<2xcomplex<f32>>) -> tensor<2xcomplex<f32>> {
  %0 = stablehlo.multiply %z, %w : tensor<2xcomplex<f32>>
  return %0 : tensor<2xcomplex<f32>>
}"""
GOLDEN_AFTER = [  # vmvx's form: bitcast views at the ends, the product written out on the parts
    "%0 = flow.tensor.bitcast %arg0 : tensor<2xcomplex<f32>> -> tensor<2x2xf32>",
    "%1 = stablehlo.slice %0 [0:2, 0:1] : (tensor<2x2xf32>) -> tensor<2x1xf32>",
    "%2 = stablehlo.slice %0 [0:2, 1:2] : (tensor<2x2xf32>) -> tensor<2x1xf32>",
    "%3 = stablehlo.reshape %1 : (tensor<2x1xf32>) -> tensor<2xf32>",
    "%4 = stablehlo.reshape %2 : (tensor<2x1xf32>) -> tensor<2xf32>",
    "%5 = flow.tensor.bitcast %arg1 : tensor<2xcomplex<f32>> -> tensor<2x2xf32>",
    "%6 = stablehlo.slice %5 [0:2, 0:1] : (tensor<2x2xf32>) -> tensor<2x1xf32>",
    "%7 = stablehlo.slice %5 [0:2, 1:2] : (tensor<2x2xf32>) -> tensor<2x1xf32>",
    "%8 = stablehlo.reshape %6 : (tensor<2x1xf32>) -> tensor<2xf32>",
    "%9 = stablehlo.reshape %7 : (tensor<2x1xf32>) -> tensor<2xf32>",
    "%10 = stablehlo.multiply %3, %8 : tensor<2xf32>",
    "%11 = stablehlo.multiply %4, %9 : tensor<2xf32>",
    "%12 = stablehlo.subtract %10, %11 : tensor<2xf32>",
    "%13 = stablehlo.multiply %3, %9 : tensor<2xf32>",
    "%14 = stablehlo.multiply %4, %8 : tensor<2xf32>",
    "%15 = stablehlo.add %13, %14 : tensor<2xf32>",
    "%16 = stablehlo.reshape %12 : (tensor<2xf32>) -> tensor<2x1xf32>",
    "%17 = stablehlo.reshape %15 : (tensor<2xf32>) -> tensor<2x1xf32>",
    "%18 = stablehlo.concatenate %16, %17, dim = 1 : (tensor<2x1xf32>, tensor<2x1xf32>) -> tensor<2x2xf32>",
    "%19 = flow.tensor.bitcast %18 : tensor<2x2xf32> -> tensor<2xcomplex<f32>>",
    "return %19 : tensor<2xcomplex<f32>>",
]


def _rewritten(text, native_ends=False):
    from iree.compiler import ir
    from hlojit.pipeline import complex_pairs, sessions, targets
    session = sessions.session_for(targets.vmvx().flags)
    module = ir.Module.parse(text, context=session.context)
    with session.context:
        count = complex_pairs.complex_as_real_pairs(module, native_ends)
    lines = [line.strip() for line in str(module).splitlines()]
    return count, lines[lines.index(next(x for x in lines if x.startswith("func.func"))) + 1:-2]


def test_complex_pairs_golden():
    count, body = _rewritten(GOLDEN_BEFORE)
    assert count == 1 and body == GOLDEN_AFTER


def test_complex_pairs_native_ends_and_unknown_ops():
    _, body = _rewritten(GOLDEN_BEFORE, native_ends=True)
    assert body[0].startswith("%0 = stablehlo.real %arg0") and body[-2].startswith("%") and \
        "stablehlo.complex" in body[-2]
    math = GOLDEN_BEFORE.replace("stablehlo.multiply %z, %w", "stablehlo.exponential %z")
    count, body = _rewritten(math)   # complex exp has real-pair rules now (pipeline/complex_math_pairs.py)
    assert count == 1 and not any("complex" in line for line in body if "stablehlo.exponential" in line)
    unknown = GOLDEN_BEFORE.replace("stablehlo.multiply %z, %w", "stablehlo.remainder %z, %w")
    with pytest.raises(hj.CompileError, match="remainder"):   # no rule (the spec has none): refused before IREE
        _rewritten(unknown)


ORDER_BEFORE = """func.func @main(%z: tensor<2xcomplex<f32>>, %w: tensor<2xcomplex<f32>>)
    -> (tensor<2xi1>, tensor<2xi1>) {
  %0 = stablehlo.compare GE, %z, %w, FLOAT : (tensor<2xcomplex<f32>>, tensor<2xcomplex<f32>>) -> tensor<2xi1>
  %1 = stablehlo.convert %z : (tensor<2xcomplex<f32>>) -> tensor<2xi1>
  return %0, %1 : tensor<2xi1>, tensor<2xi1>
}"""
ORDER_AFTER = [
    "%0 = stablehlo.real %arg0 : (tensor<2xcomplex<f32>>) -> tensor<2xf32>",
    "%1 = stablehlo.imag %arg0 : (tensor<2xcomplex<f32>>) -> tensor<2xf32>",
    "%2 = stablehlo.real %arg1 : (tensor<2xcomplex<f32>>) -> tensor<2xf32>",
    "%3 = stablehlo.imag %arg1 : (tensor<2xcomplex<f32>>) -> tensor<2xf32>",
    "%4 = stablehlo.compare EQ, %0, %2, FLOAT : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xi1>",
    "%5 = stablehlo.compare GE, %1, %3, FLOAT : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xi1>",
    "%6 = stablehlo.and %4, %5 : tensor<2xi1>",
    "%7 = stablehlo.compare GT, %0, %2, FLOAT : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xi1>",
    "%8 = stablehlo.or %7, %6 : tensor<2xi1>",
    "%cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>",
    "%9 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<2xf32>",
    "%10 = stablehlo.compare NE, %0, %9, FLOAT : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xi1>",
    "%11 = stablehlo.compare NE, %1, %9, FLOAT : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xi1>",
    "%12 = stablehlo.or %10, %11 : tensor<2xi1>",
    "return %8, %12 : tensor<2xi1>, tensor<2xi1>",
]


def test_complex_pairs_order_lexicographically_and_convert_nonzero_to_true():
    """Complex GE is (re > re') or (re == re' and im >= im'), as the spec orders complex numbers (IREE's own GE
    was true for 1+1j >= 1+2j); complex -> i1 is true where either part is nonzero (it took the real part).
    Their values against the spec on every backend: tests/data/stablehlo/dtypes.mlir."""
    count, body = _rewritten(ORDER_BEFORE, native_ends=True)
    assert count == 2 and body == ORDER_AFTER


def test_complex_atan2_and_cbrt_have_real_pair_rules():
    """Both were refused as ops without a rule; now written out on real ops (no complex op left)."""
    for op in ("atan2 %z, %w", "cbrt %z"):
        count, body = _rewritten(GOLDEN_BEFORE.replace("multiply %z, %w", op))
        assert count == 1 and not any(f"stablehlo.{op.split()[0]}" in line and "complex" in line for line in body)


def test_complex_artifacts_export_and_load(tmp_path):
    """The vmfb declares tensor<4xcomplex<f32>>: the manifest check used to stop at the inner `>`."""
    z = _z((4,), np.complex64)
    hj.export(lambda z: z * (1 - 2j), z, path=str(tmp_path / "f"))
    assert_close(hj.load(str(tmp_path / "f"))(z), z * (1 - 2j))
