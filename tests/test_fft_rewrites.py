"""pipeline/fft_rewrites.py: the stablehlo.ffts IREE 3.13 does not lower (f64 ones; f32 ones of lengths not powers of
two on llvm-cpu, every one on vmvx) as real matrix products, before and after, and their numbers on IREE against
the reference backend (numpy.fft) for the four FFT types."""
from __future__ import annotations

import numpy as np
import pytest
from iree.compiler import ir

import hlojit as hj
from hlojit.pipeline import fft_rewrites

_FFTS = """func.func @main(%a: tensor<3x5x4xcomplex<f64>>, %b: tensor<2x3x6xf64>, %c: tensor<2x4x4xcomplex<f64>>,
    %d: tensor<3x4xcomplex<f64>>) -> (tensor<3x5x4xcomplex<f64>>, tensor<3x5x4xcomplex<f64>>,
    tensor<2x3x4xcomplex<f64>>, tensor<2x4x6xf64>, tensor<3x7xf64>) {
  %0 = stablehlo.fft %a, type = FFT, length = [5, 4] : (tensor<3x5x4xcomplex<f64>>) -> tensor<3x5x4xcomplex<f64>>
  %1 = stablehlo.fft %a, type = IFFT, length = [4] : (tensor<3x5x4xcomplex<f64>>) -> tensor<3x5x4xcomplex<f64>>
  %2 = stablehlo.fft %b, type = RFFT, length = [3, 6] : (tensor<2x3x6xf64>) -> tensor<2x3x4xcomplex<f64>>
  %3 = stablehlo.fft %c, type = IRFFT, length = [4, 6] : (tensor<2x4x4xcomplex<f64>>) -> tensor<2x4x6xf64>
  %4 = stablehlo.fft %d, type = IRFFT, length = [7] : (tensor<3x4xcomplex<f64>>) -> tensor<3x7xf64>
  return %0, %1, %2, %3, %4 : tensor<3x5x4xcomplex<f64>>, tensor<3x5x4xcomplex<f64>>, tensor<2x3x4xcomplex<f64>>,
    tensor<2x4x6xf64>, tensor<3x7xf64>
}"""


def _inputs():
    rng = np.random.default_rng(3)

    def complex_normal(*shape):
        return rng.normal(size=shape) + 1j * rng.normal(size=shape)
    return complex_normal(3, 5, 4), rng.normal(size=(2, 3, 6)), complex_normal(2, 4, 4), complex_normal(3, 4)


def test_f64_ffts_become_dot_generals_and_f32_ones_where_iree_lowers_none():
    with ir.Context() as context:
        context.load_all_available_dialects()
        module = ir.Module.parse(_FFTS)
        assert fft_rewrites.ffts_beyond_iree_as_real_dft(module) == 5
        assert module.operation.verify()
        text = str(module)
        single = ir.Module.parse(_FFTS.replace("f64", "f32"))
        assert fft_rewrites.ffts_beyond_iree_as_real_dft(single) == 4   # llvm-cpu lowers the 1-D IFFT of 4
        assert str(single).count("stablehlo.fft") == 1 and "length = [4]" in str(single)
        assert fft_rewrites.ffts_as_real_dft(ir.Module.parse(_FFTS.replace("f64", "f32"))) == 5
    assert "stablehlo.fft" not in text
    # 4 per complex dimension, 2 for the real one of RFFT (its input) and of IRFFT (its result)
    assert text.count("stablehlo.dot_general") == 2 * 4 + 4 + (2 + 4) + (4 + 2) + 2
    assert "stablehlo.real" in text and "stablehlo.complex" in text


def test_the_rewritten_module_computes_numpy_fft():
    """The rewrite on its own, run by the reference backend: the matrices are numpy.fft's transforms."""
    with ir.Context() as context:
        context.load_all_available_dialects()
        module = ir.Module.parse(_FFTS)
        fft_rewrites.ffts_as_real_dft(module)
        rewritten = str(module)
    a, b, c, d = _inputs()
    expected = [np.fft.fftn(a, axes=(1, 2)), np.fft.ifft(a), np.fft.rfftn(b, axes=(1, 2)),
                np.fft.irfftn(c, s=(4, 6), axes=(1, 2)), np.fft.irfft(d, n=7)]
    for got, want in zip(hj.from_mlir(rewritten, backend="reference")(a, b, c, d), expected):
        np.testing.assert_allclose(np.asarray(got), want, rtol=0, atol=1e-14)


@pytest.mark.parametrize("backend", ["iree:cpu", "iree:vmvx"])
def test_f64_ffts_run_on_iree_as_on_the_reference_backend(backend):
    inputs = _inputs()
    expected = hj.from_mlir(_FFTS, backend="reference")(*inputs)
    for got, want in zip(hj.from_mlir(_FFTS, backend=backend)(*inputs), expected):
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=0, atol=1e-13)


@pytest.mark.parametrize("backend", ["iree:cpu", "iree:vmvx"])
def test_f32_ffts_run_on_iree_as_on_the_reference_backend(backend):
    """llvm-cpu failed to legalize the FFTs of 5, 3, 6 and 7 points and the 2-D ones (JAX's jnp.fft.rfft of 20
    points and fft2 of 4 x 8 did not compile), vmvx every one; the matrices' f32 errors grow with n (~n eps)."""
    text = _FFTS.replace("f64", "f32")
    inputs = [x.astype(np.complex64 if x.dtype.kind == "c" else np.float32) for x in _inputs()]
    expected = hj.from_mlir(text, backend="reference")(*inputs)
    for got, want in zip(hj.from_mlir(text, backend=backend)(*inputs), expected):
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=0, atol=2e-5)


FFT2_OF_POWERS_OF_TWO = """func.func @main(%x: tensor<2x4x8xcomplex<f32>>) -> tensor<2x4x8xcomplex<f32>> {
  %0 = stablehlo.fft %x, type = FFT, length = [4, 8] : (tensor<2x4x8xcomplex<f32>>) -> tensor<2x4x8xcomplex<f32>>
  return %0 : tensor<2x4x8xcomplex<f32>>
}"""


def test_a_2d_fft_of_powers_of_two_is_rewritten_for_llvm_cpu_and_runs():
    """jnp.fft.fft2 of 4 x 8: llvm-cpu lowers 1-D power-of-two FFTs only."""
    with ir.Context() as context:
        context.load_all_available_dialects()
        assert fft_rewrites.ffts_beyond_iree_as_real_dft(ir.Module.parse(FFT2_OF_POWERS_OF_TWO)) == 1
    rng = np.random.default_rng(5)
    x = (rng.normal(size=(2, 4, 8)) + 1j * rng.normal(size=(2, 4, 8))).astype(np.complex64)
    got = hj.from_mlir(FFT2_OF_POWERS_OF_TWO, backend="iree:cpu")(x)
    np.testing.assert_allclose(np.asarray(got), np.fft.fft2(x), rtol=0, atol=2e-5)


def test_real_dft_products_beside_a_native_fft_compile_data_tiled():
    """A 2-D f32 FFT (real DFT products, complex_pairs.py kept off by the native 1-D FFT beside it): the complex op
    that reads the products was fused into their data-tiled matmul, which failed, and the module compiled a second
    time without data tiling (compile_rewrites.complex_results_apart_from_matmuls)."""
    t = "tensor<3x5x4xcomplex<f32>>"
    text = f"""func.func @main(%a: {t}, %e: {t}) -> ({t}, {t}) {{
  %0 = stablehlo.fft %a, type = FFT, length = [5, 4] : ({t}) -> {t}
  %1 = stablehlo.fft %e, type = IFFT, length = [4] : ({t}) -> {t}
  return %0, %1 : {t}, {t}
}}"""
    rng = np.random.default_rng(6)
    a, e = ((rng.normal(size=(3, 5, 4)) + 1j * rng.normal(size=(3, 5, 4))).astype(np.complex64) for _ in range(2))
    module = hj.from_mlir(text, backend="iree:cpu")
    got = module(a, e)
    np.testing.assert_allclose(np.asarray(got[0]), np.fft.fftn(a, axes=(1, 2)), rtol=0, atol=2e-5)
    np.testing.assert_allclose(np.asarray(got[1]), np.fft.ifft(e, axis=2), rtol=0, atol=2e-5)
    used = module.executable.compiled.target
    assert used == hj.backends.get("iree:cpu").target, used.flags      # no fallback


@pytest.mark.parametrize("dtype", ["f64", "f32"])
def test_ffts_iree_cannot_lower_compile_for_cuda(dtype):
    """iree:cuda has no GPU here: it lowers what llvm-cpu lowers (JAX's rfft of 20 points, fft2 and f64 ffts did not
    compile for it), so it gets the same rewrite."""
    from hlojit.frontend.from_mlir import parse
    from hlojit.pipeline import compile_program, cuda
    for text in (_FFTS.replace("f64", dtype), FFT2_OF_POWERS_OF_TWO):
        compile_program(parse(text, "main", None), cuda())
