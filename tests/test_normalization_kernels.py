"""pipeline/normalization_kernels.py: f32 softmax and layer norm over the last axis as hand-written llvm-cpu dispatches,
against numpy (the pattern's own arithmetic in f64) and the reference backend, for traced programs and JAX-style
modules."""
from __future__ import annotations

import numpy as np
import pytest
from iree.compiler import ir

import hlojit as hj
from hlojit import nn
from hlojit.pipeline import normalization_kernels, quirks, targets


@pytest.fixture
def every_row(monkeypatch):
    """iree:cpu with every softmax and layer norm claimed however small, rows spread over several workgroups (compiled in this
    process, where the bounds are patched; nothing cached)."""
    monkeypatch.setattr(normalization_kernels, "MIN_ELEMENTS", 1)
    monkeypatch.setattr(normalization_kernels, "ROW_ELEMENTS", 64)
    monkeypatch.setenv("HLOJIT_COMPILE_WORKER", "0")
    monkeypatch.setenv("HLOJIT_CACHE", "0")


def rewritten(module_text: str) -> tuple[dict, str]:
    with ir.Context() as context:
        context.load_all_available_dialects()
        module = ir.Module.parse(module_text)
        counts = quirks.apply(module, targets.cpu())
        return counts, str(module)


def softmax64(x):
    """exp(x - max) / sum(exp(x - max)) in f64: the StableHLO's meaning, NaN where it gives NaN."""
    x = x.astype(np.float64)
    with np.errstate(invalid="ignore"):
        e = np.exp(x - x.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)


# row lengths: below one vector, one and a tail, several, longer than a workgroup's share; rows not a multiple
# of a workgroup's
SHAPES = [(5, 1), (9, 7), (3, 16), (4, 5, 33), (2, 3, 128), (7, 1000)]


def test_softmaxes_agree_with_numpy_on_every_row_length(every_row):
    rng = np.random.default_rng(0)
    xs = [(rng.standard_normal(s) * 4).astype(np.float32) for s in SHAPES]
    fn = hj.jit(lambda *xs: tuple(nn.softmax(x, axis=-1) for x in xs), backend="iree:cpu")
    counts, text = rewritten(str(fn.lower(*xs).program.module))
    assert counts["softmaxes_by_kernel"] == len(SHAPES) and "stablehlo.exponential" not in text
    for got, x in zip(fn(*xs), xs):
        np.testing.assert_allclose(np.asarray(got), softmax64(x), rtol=2e-6, atol=1e-9)


def test_special_values_stay_in_their_rows(every_row):
    """+inf in a row makes it NaN (inf - inf), a row of -inf is NaN (-inf - -inf), NaN spreads over its row only,
    -inf among finite values is 0, and huge values are shifted away before exp."""
    x = np.random.default_rng(1).standard_normal((6, 37)).astype(np.float32)
    x[0, 3] = np.inf
    x[1, :] = -np.inf
    x[2, 30] = np.nan
    x[3, 0] = -np.inf
    x[4, :4] = [3e38, -3e38, 1e30, 0]
    got = np.asarray(hj.jit(lambda x: nn.softmax(x, axis=-1), backend="iree:cpu")(x))
    want = softmax64(x)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    assert np.isnan(got[:3]).all() and not np.isnan(got[3:]).any() and got[3, 0] == 0 and got[4, 0] == 1
    np.testing.assert_allclose(got[3:], want[3:], rtol=2e-6, atol=1e-9)


JAX_STYLE = """
func.func @main(%x: tensor<64x128xf32>) -> tensor<64x128xf32> {
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %m = stablehlo.reduce(%x init: %ninf) applies stablehlo.maximum across dimensions = [1]
       : (tensor<64x128xf32>, tensor<f32>) -> tensor<64xf32>
  %mb = stablehlo.broadcast_in_dim %m, dims = [0] : (tensor<64xf32>) -> tensor<64x128xf32>
  %d = stablehlo.subtract %x, %mb : tensor<64x128xf32>
  %e = stablehlo.exponential %d : tensor<64x128xf32>
  %s = stablehlo.reduce(%e init: %zero) applies stablehlo.add across dimensions = [1]
       : (tensor<64x128xf32>, tensor<f32>) -> tensor<64xf32>
  %sb = stablehlo.broadcast_in_dim %s, dims = [0] : (tensor<64xf32>) -> tensor<64x128xf32>
  %y = stablehlo.divide %e, %sb : tensor<64x128xf32>
  return %y : tensor<64x128xf32>
}"""


# jax 0.10.2's jax.nn.softmax(x, axis=-1): max(-inf, reduce_max(x)), each row broadcast to [.., 1] and then along it
JAX_0_10 = """
func.func @main(%x: tensor<64x128xf32>) -> tensor<64x128xf32> {
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %m = stablehlo.reduce(%x init: %ninf) applies stablehlo.maximum across dimensions = [1]
       : (tensor<64x128xf32>, tensor<f32>) -> tensor<64xf32>
  %ninfs = stablehlo.broadcast_in_dim %ninf, dims = [] : (tensor<f32>) -> tensor<64xf32>
  %m2 = stablehlo.maximum %ninfs, %m : tensor<64xf32>
  %m3 = stablehlo.broadcast_in_dim %m2, dims = [0] : (tensor<64xf32>) -> tensor<64x1xf32>
  %mb = stablehlo.broadcast_in_dim %m3, dims = [0, 1] : (tensor<64x1xf32>) -> tensor<64x128xf32>
  %d = stablehlo.subtract %x, %mb : tensor<64x128xf32>
  %e = stablehlo.exponential %d : tensor<64x128xf32>
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %s = stablehlo.reduce(%e init: %zero) applies stablehlo.add across dimensions = [1]
       : (tensor<64x128xf32>, tensor<f32>) -> tensor<64xf32>
  %s2 = stablehlo.broadcast_in_dim %s, dims = [0] : (tensor<64xf32>) -> tensor<64x1xf32>
  %sb = stablehlo.broadcast_in_dim %s2, dims = [0, 1] : (tensor<64x1xf32>) -> tensor<64x128xf32>
  %y = stablehlo.divide %e, %sb : tensor<64x128xf32>
  return %y : tensor<64x128xf32>
}"""


@pytest.mark.parametrize("module", [JAX_STYLE, JAX_0_10], ids=["rows-broadcast", "jax-0.10"])
def test_a_jax_style_softmax_from_mlir_is_claimed_and_agrees_with_the_reference(module):
    """jax.nn.softmax's export broadcasts the reduced rows back without a reshape to [.., 1] (jax 0.10: through a
    broadcast to [.., 1], its maximum within max(-inf, .), which the transformer block through from_mlir kept
    IREE's); the rewrite runs on from_mlir modules as on traced ones. The maximum's and the sum's ops are gone."""
    counts, text = rewritten(module)
    assert counts["softmaxes_by_kernel"] == 1
    assert "flow.dispatch @hlojit_softmax_kernel_64x128" in text
    assert all(name not in text for name in ("stablehlo.exponential", "stablehlo.reduce", "stablehlo.divide"))
    x = (np.random.default_rng(2).standard_normal((64, 128)) * 10).astype(np.float32)
    x[3, :5] = [np.inf, -np.inf, 0.0, 1.0, 2.0]
    x[7] = -np.inf
    got = np.asarray(hj.from_mlir(module, backend="iree:cpu")(x))
    want = np.asarray(hj.from_mlir(module, backend="reference")(x))
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-9, equal_nan=True)


def test_what_the_kernel_leaves_to_iree():
    """Another axis, f64, a short softmax, a sum by another init, a max over two axes; and where the exponentials
    are used again the kernel still runs but they stay (and the kernel is the cpu target's alone)."""
    big = np.ones((64, 128), np.float32)
    cases = [(lambda x: nn.softmax(x, axis=0), big), (lambda x: nn.softmax(x, axis=-1), big.astype(np.float64)),
             (lambda x: nn.softmax(x, axis=-1), np.ones((4, 16), np.float32))]
    for fn, x in cases:
        counts, _ = rewritten(str(hj.jit(fn).lower(x).program.module))
        assert "softmaxes_by_kernel" not in counts, fn
    assert "softmaxes_by_kernel" not in rewritten(JAX_STYLE.replace("dense<0.0>", "dense<1.0>"))[0]
    shared = JAX_STYLE.replace("return %y : tensor<64x128xf32>", "%z = stablehlo.add %y, %e : tensor<64x128xf32>\n"
                               "  return %z : tensor<64x128xf32>")
    counts, text = rewritten(shared)
    assert counts["softmaxes_by_kernel"] == 1 and text.count("stablehlo.exponential") == 1
    for rewrite in (normalization_kernels.softmaxes_by_kernel, normalization_kernels.layer_norms_by_kernel):
        assert rewrite not in quirks.QUIRKS["vmvx"] + quirks.QUIRKS["cuda"]


def test_the_workgroups_cover_every_row_once():
    """A block of rows a workgroup: about ROW_ELEMENTS, at least MIN_WORKGROUPS of them, at most MAX_WORKGROUPS."""
    for rows, length in [(4096, 128), (3, 1000), (10**6, 1), (10**7, 4), (1, 16384)]:
        per = normalization_kernels._rows_per_workgroup(rows, length)
        workgroups = -(-rows // per)
        assert workgroups <= normalization_kernels.MAX_WORKGROUPS and (workgroups - 1) * per < rows <= workgroups * per
        assert workgroups >= min(rows, normalization_kernels.MIN_WORKGROUPS) or per * length <= normalization_kernels.ROW_ELEMENTS


def layer_norm64(x, scale=None, offset=None, eps=1e-5):
    """(x - mean) / sqrt(mean((x - mean)²) + eps) [* scale] [+ offset] in f64, eps as the f32 the module holds."""
    x = x.astype(np.float64)
    centred = x - x.mean(axis=-1, keepdims=True)
    y = centred / np.sqrt((centred * centred).mean(axis=-1, keepdims=True) + float(np.float32(eps)))
    return y * (1 if scale is None else scale) + (0 if offset is None else offset)


def test_layer_norms_agree_with_numpy_with_and_without_scale_and_offset(every_row):
    """Each form (scale and offset, neither, one of them, another eps, a scale shaped [1, ..., n]) over every row
    length, one program."""
    rng = np.random.default_rng(3)
    cases = []
    for shape in SHAPES:
        x = (rng.standard_normal(shape) * 3 + 1).astype(np.float32)
        scale, offset = (rng.standard_normal(shape[-1]).astype(np.float32) for _ in range(2))
        cases += [(x, scale, offset, 1e-5), (x, None, None, 1e-5), (x, scale, None, 1e-5), (x, None, offset, 1e-3),
                  (x, scale.reshape((1,) * (len(shape) - 1) + (-1,)), offset, 1e-5)]   # a scale [1, ..., n]
    forms = [(s is not None, o is not None, eps) for _, s, o, eps in cases]
    arrays = [a for x, s, o, _ in cases for a in (x, s, o) if a is not None]

    def norms(*arrays):
        it, out = iter(arrays), []
        for has_scale, has_offset, eps in forms:
            x = next(it)
            out.append(nn.layer_norm(x, next(it) if has_scale else None, next(it) if has_offset else None, eps=eps))
        return tuple(out)
    fn = hj.jit(norms, backend="iree:cpu")
    counts, text = rewritten(str(fn.lower(*arrays).program.module))
    assert counts["layer_norms_by_kernel"] == len(cases)
    assert "stablehlo.rsqrt" not in text and "stablehlo.reduce" not in text
    for got, (x, scale, offset, eps) in zip(fn(*arrays), cases):
        np.testing.assert_allclose(np.asarray(got), layer_norm64(x, scale, offset, eps), rtol=1e-5, atol=2e-6)


def test_layer_norm_special_values_stay_in_their_rows(every_row):
    """inf or NaN in a row makes that row NaN; a constant row is 0 (then the offset); huge values are centred
    before they are squared."""
    x = np.random.default_rng(4).standard_normal((5, 40)).astype(np.float32)
    x[0, 3], x[1, 7], x[2] = np.inf, np.nan, 7.0
    x[3] = x[3] * 1e3 + 1e4
    offset = np.linspace(-1, 1, 40, dtype=np.float32)
    got = np.asarray(hj.jit(lambda x, o: nn.layer_norm(x, None, o), backend="iree:cpu")(x, offset))
    assert np.isnan(got[:2]).all() and not np.isnan(got[2:]).any()
    np.testing.assert_array_equal(got[2], offset)
    np.testing.assert_allclose(got[3:], layer_norm64(x[3:], None, offset), rtol=1e-5, atol=2e-6)


def test_a_layer_norm_whose_parts_are_used_again_keeps_them():
    """The centred values feeding another op stay (the kernel still runs); a scale multiplied in before the
    normalising multiply, a mean over another axis, or a variance divided by n - 1 is not a layer norm here."""
    def shared(x):
        centred = x - x.mean(axis=-1, keepdims=True)
        y = centred * hj.ops.rsqrt((centred * centred).mean(axis=-1, keepdims=True) + 1e-5)
        return y, centred * 2.0
    x = np.ones((64, 128), np.float32)
    counts, text = rewritten(str(hj.jit(shared).lower(x).program.module))
    assert counts["layer_norms_by_kernel"] == 1 and "stablehlo.subtract" in text

    def unbiased(x):
        centred = x - x.mean(axis=-1, keepdims=True)
        return centred * hj.ops.rsqrt((centred * centred).sum(axis=-1, keepdims=True) / 127.0 + 1e-5)
    for fn in (unbiased, lambda x: nn.layer_norm(x, axis=0)):
        assert "layer_norms_by_kernel" not in rewritten(str(hj.jit(fn).lower(x).program.module))[0]


# jax 0.10.2's jit of (x - mean) / jnp.sqrt(var + 1e-5) * scale + offset, mean and var by x.mean(-1, keepdims=True):
# x - mean traced twice (two broadcasts of the one mean), the divide by a sqrt, the vectors broadcast via [1, 1, n]
JAX_LAYER_NORM = """
func.func @main(%arg0: tensor<4x32x128xf32>, %arg1: tensor<128xf32>, %arg2: tensor<128xf32>) -> tensor<4x32x128xf32> {
  %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %0 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.add across dimensions = [2]
       : (tensor<4x32x128xf32>, tensor<f32>) -> tensor<4x32xf32>
  %1 = stablehlo.broadcast_in_dim %0, dims = [0, 1] : (tensor<4x32xf32>) -> tensor<4x32x1xf32>
  %cst_0 = stablehlo.constant dense<1.280000e+02> : tensor<f32>
  %2 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<4x32x1xf32>
  %3 = stablehlo.divide %1, %2 : tensor<4x32x1xf32>
  %4 = stablehlo.broadcast_in_dim %3, dims = [0, 1, 2] : (tensor<4x32x1xf32>) -> tensor<4x32x128xf32>
  %5 = stablehlo.subtract %arg0, %4 : tensor<4x32x128xf32>
  %6 = stablehlo.multiply %5, %5 : tensor<4x32x128xf32>
  %7 = stablehlo.reduce(%6 init: %cst) applies stablehlo.add across dimensions = [2]
       : (tensor<4x32x128xf32>, tensor<f32>) -> tensor<4x32xf32>
  %8 = stablehlo.broadcast_in_dim %7, dims = [0, 1] : (tensor<4x32xf32>) -> tensor<4x32x1xf32>
  %10 = stablehlo.divide %8, %2 : tensor<4x32x1xf32>
  %11 = stablehlo.broadcast_in_dim %3, dims = [0, 1, 2] : (tensor<4x32x1xf32>) -> tensor<4x32x128xf32>
  %12 = stablehlo.subtract %arg0, %11 : tensor<4x32x128xf32>
  %cst_3 = stablehlo.constant dense<9.99999974E-6> : tensor<f32>
  %13 = stablehlo.broadcast_in_dim %cst_3, dims = [] : (tensor<f32>) -> tensor<4x32x1xf32>
  %14 = stablehlo.add %10, %13 : tensor<4x32x1xf32>
  %15 = stablehlo.sqrt %14 : tensor<4x32x1xf32>
  %16 = stablehlo.broadcast_in_dim %15, dims = [0, 1, 2] : (tensor<4x32x1xf32>) -> tensor<4x32x128xf32>
  %17 = stablehlo.divide %12, %16 : tensor<4x32x128xf32>
  %18 = stablehlo.broadcast_in_dim %arg1, dims = [2] : (tensor<128xf32>) -> tensor<1x1x128xf32>
  %19 = stablehlo.broadcast_in_dim %18, dims = [0, 1, 2] : (tensor<1x1x128xf32>) -> tensor<4x32x128xf32>
  %20 = stablehlo.multiply %17, %19 : tensor<4x32x128xf32>
  %21 = stablehlo.broadcast_in_dim %arg2, dims = [2] : (tensor<128xf32>) -> tensor<1x1x128xf32>
  %22 = stablehlo.broadcast_in_dim %21, dims = [0, 1, 2] : (tensor<1x1x128xf32>) -> tensor<4x32x128xf32>
  %23 = stablehlo.add %20, %22 : tensor<4x32x128xf32>
  return %23 : tensor<4x32x128xf32>
}"""


def test_a_jax_layer_norm_divided_by_its_root_from_mlir_is_claimed_and_agrees_with_the_reference():
    """JAX code's layer norm divides by sqrt(var + eps) and traces x - mean twice: IREE's own dispatches took it
    before (the transformer block through from_mlir). The kernel divides as the module says (no rsqrt); every op
    of the pattern is gone; special rows as in the traced form."""
    counts, text = rewritten(JAX_LAYER_NORM)
    assert counts["layer_norms_by_kernel"] == 1
    assert "flow.dispatch @hlojit_layer_norm_kernel_4x32x128_s3_o3_divided_3727c5ac" in text
    assert all(f"stablehlo.{name}" not in text for name in ("sqrt", "reduce", "divide", "subtract"))
    rng = np.random.default_rng(5)
    x = (rng.standard_normal((4, 32, 128)) * 3 + 1).astype(np.float32)
    x[0, 0, 3], x[1, 2, 7], x[2, 5] = np.inf, np.nan, 7.0
    scale, offset = (rng.standard_normal(128).astype(np.float32) for _ in range(2))
    got = np.asarray(hj.from_mlir(JAX_LAYER_NORM, backend="iree:cpu")(x, scale, offset))
    want = np.asarray(hj.from_mlir(JAX_LAYER_NORM, backend="reference")(x, scale, offset))
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=2e-6)
    np.testing.assert_array_equal(got[2, 5], offset)
