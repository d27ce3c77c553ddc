"""hlojit.ops.fft against numpy.fft: lengths 1, 2, primes (7, 97, 997), mixed radix (360),
powers of two up to 2**12, every function and norm, n=/s=/axes=, NaN; gradients against central differences.
Cases are batched into a few compiled modules per target; the tables of cases on the reference backend and iree:cpu
(conftest.LIBRARY_BACKENDS), the NaN and gradient checks on vmvx too."""
import numpy as np
import pytest

import hlojit as hj
from hlojit import ops

from conftest import LIBRARY_BACKENDS

RNG = np.random.default_rng(5)
SIZES = [1, 2, 7, 8, 97, 128, 129, 360, 997, 4096]


def _c(shape, dtype=np.complex64):
    return (RNG.normal(size=shape) + 1j * RNG.normal(size=shape)).astype(dtype)


def _r(shape, dtype=np.float32):
    return RNG.normal(size=shape).astype(dtype)


def _check(actual, expected, dtype, what):
    """Relative to the largest magnitude: an FFT's error is spread over all outputs."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.dtype == np.dtype(dtype), f"{what}: dtype {actual.dtype} != {dtype}"
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != {expected.shape}"
    tol = 2e-6 if np.dtype(dtype) in (np.complex64, np.float32) else 1e-12
    err = np.max(np.abs(actual - expected), initial=0) / max(np.max(np.abs(expected), initial=0), 1)
    assert err < tol, f"{what}: relative error {err:.2e} (tolerance {tol:.0e})"


def _size_cases():
    cases = []
    for n in SIZES:
        x = _c((2, n))
        cases.append((f"fft-{n}", lambda x: ops.fft.fft(x), x, np.fft.fft(x.astype(np.complex128)), np.complex64))
    x = _c((3, 97), np.complex128)
    cases.append(("fft-97-c128", ops.fft.fft, x, np.fft.fft(x), np.complex128))
    x = _c((360,), np.complex128)
    cases.append(("ifft-360-c128", ops.fft.ifft, x, np.fft.ifft(x), np.complex128))
    x = _r((3, 1000))      # three stages: a real input's half-height first stage, rfft's trimmed last one
    cases.append(("rfft-1000", ops.fft.rfft, x, np.fft.rfft(x.astype(np.float64)), np.complex64))
    return cases


def _api_cases():
    x64, xr, x3 = _c((4, 12)), _r((4, 12)), _c((2, 6, 10))
    r3, xd = _r((3, 8, 10)), _r((5, 9), np.float64)
    w = x64.astype(np.complex128)
    rows = [
        ("ifft", lambda x: ops.fft.ifft(x), x64, np.fft.ifft(w)),
        ("fft-ortho", lambda x: ops.fft.fft(x, norm="ortho"), x64, np.fft.fft(w, norm="ortho")),
        ("fft-forward", lambda x: ops.fft.fft(x, norm="forward"), x64, np.fft.fft(w, norm="forward")),
        ("ifft-forward", lambda x: ops.fft.ifft(x, norm="forward"), x64, np.fft.ifft(w, norm="forward")),
        ("fft-n-pad", lambda x: ops.fft.fft(x, n=20), x64, np.fft.fft(w, n=20)),
        ("fft-n-cut", lambda x: ops.fft.fft(x, n=5, axis=0), x64, np.fft.fft(w, n=5, axis=0)),
        ("fft-axis0", lambda x: ops.fft.fft(x, axis=0), x64, np.fft.fft(w, axis=0)),
        ("fft-real-in", lambda x: ops.fft.fft(x), xr, np.fft.fft(xr.astype(np.float64))),
        ("rfft", lambda x: ops.fft.rfft(x), xr, np.fft.rfft(xr.astype(np.float64))),
        ("rfft-odd-n", lambda x: ops.fft.rfft(x, n=11), xr, np.fft.rfft(xr.astype(np.float64), n=11)),
        ("irfft", lambda x: ops.fft.irfft(x), x64, np.fft.irfft(w)),
        ("irfft-odd", lambda x: ops.fft.irfft(x, n=13, norm="ortho"), x64, np.fft.irfft(w, n=13, norm="ortho")),
        ("irfft-n2", lambda x: ops.fft.irfft(x, n=2), x64, np.fft.irfft(w, n=2)),
        ("hfft", lambda x: ops.fft.hfft(x), x64, np.fft.hfft(w)),
        ("ihfft", lambda x: ops.fft.ihfft(x), xr, np.fft.ihfft(xr.astype(np.float64))),
        ("fft2", lambda x: ops.fft.fft2(x), x3, np.fft.fft2(x3.astype(np.complex128))),
        ("ifft2-s", lambda x: ops.fft.ifft2(x, s=(4, 7)), x3,
         np.fft.ifft2(x3.astype(np.complex128), s=(4, 7), axes=(-2, -1))),
        ("fftn", lambda x: ops.fft.fftn(x), x3, np.fft.fftn(x3.astype(np.complex128))),
        ("ifftn-axes", lambda x: ops.fft.ifftn(x, axes=(0, 2), norm="ortho"), x3,
         np.fft.ifftn(x3.astype(np.complex128), axes=(0, 2), norm="ortho")),
        ("rfft2", lambda x: ops.fft.rfft2(x), r3, np.fft.rfft2(r3.astype(np.float64))),
        ("rfftn", lambda x: ops.fft.rfftn(x), r3, np.fft.rfftn(r3.astype(np.float64))),
        ("irfft2", lambda x: ops.fft.irfft2(x), x3, np.fft.irfft2(x3.astype(np.complex128))),
        ("irfftn-s", lambda x: ops.fft.irfftn(x, s=(5, 6, 9)), x3,
         np.fft.irfftn(x3.astype(np.complex128), s=(5, 6, 9), axes=(0, 1, 2))),
        ("roundtrip", lambda x: ops.fft.irfft(ops.fft.rfft(x), n=12), xr, xr.astype(np.float64)),
        ("fftshift", lambda x: ops.fft.fftshift(x), x64, np.fft.fftshift(x64)),
        ("ifftshift-axis", lambda x: ops.fft.ifftshift(x, axes=1), x64, np.fft.ifftshift(x64, axes=1)),
    ]
    cases = []
    for name, fn, x, expected in rows:
        dtype = np.complex64 if np.iscomplexobj(expected) else np.float32
        cases.append((name, fn, x, expected, dtype))
    cases.append(("rfft-f64", ops.fft.rfft, xd, np.fft.rfft(xd), np.complex128))
    cases.append(("irfft-c128", ops.fft.irfft, np.fft.rfft(xd), np.fft.irfft(np.fft.rfft(xd)), np.float64))
    return cases


GROUPS = {"sizes": _size_cases(), "api": _api_cases()}
_RESULTS = {}


def _outputs(backend, group):
    if (backend, group) not in _RESULTS:
        cases = GROUPS[group]
        _RESULTS[backend, group] = hj.jit(lambda xs: [c[1](x) for c, x in zip(cases, xs)],
                                          backend=backend)([c[2] for c in cases])
    return _RESULTS[backend, group]


@pytest.mark.parametrize("group", list(GROUPS))
@pytest.mark.parametrize("backend", LIBRARY_BACKENDS)
def test_fft_against_numpy(backend, group):
    for case, actual in zip(GROUPS[group], _outputs(backend, group)):
        name, _, _, expected, dtype = case
        _check(actual, np.asarray(expected).astype(dtype), dtype, f"{name} on {backend}")


def test_frequencies_and_nan():
    def f(x):
        return ops.fft.fftfreq(8, 0.5), ops.fft.rfftfreq(9), ops.fft.fft(x)
    x = np.array([1, np.nan, 2, 3], np.complex64)
    freq, rfreq, y = hj.jit(f, backend="reference")(x)
    np.testing.assert_allclose(np.asarray(freq), np.fft.fftfreq(8, 0.5))
    np.testing.assert_allclose(np.asarray(rfreq), np.fft.rfftfreq(9))
    assert np.all(np.isnan(np.asarray(y)))             # every output depends on every input, as in numpy


def test_nan_spreads_on_iree_too(backend):
    x = np.array([1, np.nan, 2, 3, 4, 5, 6, 7], np.complex64)
    y = np.asarray(hj.jit(ops.fft.fft, backend=backend)(x))
    assert np.all(np.isnan(y.real) | np.isnan(y.imag))


def test_bad_arguments_raise():
    x = np.ones(4, np.complex64)
    with pytest.raises(ValueError, match="norm"):
        hj.jit(lambda x: ops.fft.fft(x, norm="both"), backend="reference")(x)
    with pytest.raises(ValueError, match="invalid number of data points"):
        hj.jit(lambda x: ops.fft.fft(x, n=0), backend="reference")(x)
    with pytest.raises(ValueError, match="different lengths"):
        hj.jit(lambda x: ops.fft.fftn(x, s=(2, 2), axes=(0,)), backend="reference")(x)


@pytest.mark.parametrize("backend", LIBRARY_BACKENDS)
def test_empty_stacks_of_signals(backend):
    """Transforms along a non-empty axis of an empty stack give numpy's empty results (the plan's reshapes raised
    "cannot reshape float32[2, 4, 0] into (2, -1, 0)"); an empty transformed axis stays numpy's ValueError."""
    x = np.zeros((0, 4), np.float32)
    names = ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft")
    got = hj.jit(lambda x: [getattr(ops.fft, name)(x) for name in names] + [ops.fft.fft2(x, axes=(1, 1))],
                 backend=backend)(x)
    expected = [getattr(np.fft, name)(x) for name in names] + [np.fft.fft2(x, axes=(1, 1))]
    for name, g, e in zip(names + ("fft2",), got, expected):
        g = np.asarray(g)
        assert g.shape == e.shape and g.dtype == e.dtype, (name, g.shape, g.dtype, e.shape, e.dtype)   # numpy 2 keeps f32
    with pytest.raises(ValueError, match="invalid number of data points"):
        hj.jit(ops.fft.fft2, backend="reference")(x)


def test_import_forms():
    import hlojit.ops.fft as hfft
    assert hfft is ops.fft and hfft.rfft2 is ops.fft.rfft2


def test_stablehlo_fft_runs_on_the_reference_backend():
    text = """func.func @main(%a: tensor<2x8xcomplex<f32>>, %b: tensor<6xf64>) -> (tensor<2x8xcomplex<f32>>,
                 tensor<4xcomplex<f64>>, tensor<6xf64>) {
      %0 = stablehlo.fft %a, type = IFFT, length = [8] : (tensor<2x8xcomplex<f32>>) -> tensor<2x8xcomplex<f32>>
      %1 = stablehlo.fft %b, type = RFFT, length = [6] : (tensor<6xf64>) -> tensor<4xcomplex<f64>>
      %2 = stablehlo.fft %1, type = IRFFT, length = [6] : (tensor<4xcomplex<f64>>) -> tensor<6xf64>
      return %0, %1, %2 : tensor<2x8xcomplex<f32>>, tensor<4xcomplex<f64>>, tensor<6xf64>
    }"""
    a, b = _c((2, 8)), RNG.normal(size=6)
    y0, y1, y2 = hj.from_mlir(text, backend="reference")(a, b)
    _check(y0, np.fft.ifft(a).astype(np.complex64), np.complex64, "IFFT")
    _check(y1, np.fft.rfft(b), np.complex128, "RFFT")
    _check(y2, b, np.float64, "IRFFT")


def _numeric_grad(f, x, eps=1e-6):
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        units = (1, 1j) if np.iscomplexobj(x) else (1,)
        for unit in units:
            dx = np.zeros_like(x)
            dx[i] = unit * eps
            g[i] += np.conj(unit) * (f(x + dx) - f(x - dx)) / (2 * eps)
    return g


GRADS = [  # real losses of FFTs (float64 / complex128 arguments)
    ("abs2-fft-7", lambda x: ops.sum(ops.abs(ops.fft.fft(x)) ** 2), lambda x: np.sum(np.abs(np.fft.fft(x)) ** 2),
     (7,), np.complex128),
    ("rfft-weighted-12", lambda x: ops.sum(ops.real(ops.fft.rfft(x)) * ops.arange(7.0) + ops.imag(ops.fft.rfft(x))),
     lambda x: np.sum(np.fft.rfft(x).real * np.arange(7.0) + np.fft.rfft(x).imag), (12,), np.float64),
    ("irfft-ortho", lambda x: ops.sum(ops.fft.irfft(x, n=9, norm="ortho") ** 3),
     lambda x: np.sum(np.fft.irfft(x, n=9, norm="ortho") ** 3), (5,), np.complex128),
    ("fft2-abs", lambda x: ops.sum(ops.abs(ops.fft.fft2(x) + 1)), lambda x: np.sum(np.abs(np.fft.fft2(x) + 1)),
     (3, 4), np.complex128),
    ("bluestein-131", lambda x: ops.sum(ops.real(ops.fft.fft(x)) * ops.cos(ops.arange(131.0))),
     lambda x: np.sum(np.fft.fft(x).real * np.cos(np.arange(131.0))), (131,), np.float64),
]


@pytest.mark.parametrize("name, loss, reference, shape, dtype", GRADS, ids=[g[0] for g in GRADS])
def test_fft_gradients(name, loss, reference, shape, dtype):
    x = (RNG.normal(size=shape) + (1j * RNG.normal(size=shape) if dtype == np.complex128 else 0)).astype(dtype)
    grad = np.asarray(hj.jit(hj.grad(loss), backend="reference")(x))
    np.testing.assert_allclose(grad, _numeric_grad(reference, x), rtol=1e-5, atol=1e-6)


def test_fft_gradient_on_every_target(backend):
    """The backward pass of a Bluestein-sized rfft and a four-step fft compiles and agrees everywhere."""
    def loss(x):
        return ops.sum(ops.abs(ops.fft.fft(x * (1 + 0.5j))) ** 2) + ops.sum(ops.real(ops.fft.rfft(x)) ** 3)
    x = RNG.normal(size=(131,))
    grad = np.asarray(hj.jit(hj.grad(loss), backend=backend)(x))

    def reference(x):
        return np.sum(np.abs(np.fft.fft(x * (1 + 0.5j))) ** 2) + np.sum(np.fft.rfft(x).real ** 3)
    np.testing.assert_allclose(grad, _numeric_grad(reference, x), rtol=1e-5, atol=1e-5)
