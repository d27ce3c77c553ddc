"""pipeline/layout.py: one channels-last layout for a whole network on llvm-cpu. The rewrite before and after
(golden text), what it leaves of a ResNet block's transposes, and its numbers: the rewritten module on the
reference backend, and convolution nets (NCHW and NHWC, with bias, relu, batch norm and pools, and their
gradients) on every backend against the reference."""
from __future__ import annotations

import numpy as np
import pytest
from iree.compiler import ir

import hlojit as hj
from hlojit import nn, ops
from hlojit.pipeline import (compile_rewrites, conv_patches, layout, matmul_kernel, normalization_kernels, quirks,
                             window_scatters)

from conftest import LIBRARY_BACKENDS, assert_close

SMALL = """func.func @main(%x: tensor<1x2x4x4xf32>, %w: tensor<3x2x3x3xf32>, %b: tensor<3xf32>) -> tensor<1x3xf32> {
  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x2x4x4xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x4x4xf32>
  %1 = stablehlo.broadcast_in_dim %b, dims = [1] : (tensor<3xf32>) -> tensor<1x3x4x4xf32>
  %2 = stablehlo.add %0, %1 : tensor<1x3x4x4xf32>
  %zero = stablehlo.constant dense<0.0> : tensor<1x3x4x4xf32>
  %3 = stablehlo.maximum %2, %zero : tensor<1x3x4x4xf32>
  %init = stablehlo.constant dense<0.0> : tensor<f32>
  %4 = stablehlo.reduce(%3 init: %init) applies stablehlo.add across dimensions = [2, 3] : (tensor<1x3x4x4xf32>, tensor<f32>) -> tensor<1x3xf32>
  return %4 : tensor<1x3xf32>
}"""  # noqa: E501

SMALL_AFTER = """module {
  func.func @main(%arg0: tensor<1x2x4x4xf32>, %arg1: tensor<3x2x3x3xf32>, %arg2: tensor<3xf32>) -> tensor<1x3xf32> {
    %0 = stablehlo.transpose %arg0, dims = [0, 2, 3, 1] : (tensor<1x2x4x4xf32>) -> tensor<1x4x4x2xf32>
    %1 = stablehlo.transpose %arg1, dims = [2, 3, 1, 0] : (tensor<3x2x3x3xf32>) -> tensor<3x3x2x3xf32>
    %2 = stablehlo.optimization_barrier %0 : tensor<1x4x4x2xf32>
    %3 = stablehlo.optimization_barrier %1 : tensor<3x3x2x3xf32>
    %4 = stablehlo.convolution(%2, %3) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<3x3x2x3xf32>) -> tensor<1x4x4x3xf32>
    %5 = stablehlo.broadcast_in_dim %arg2, dims = [3] : (tensor<3xf32>) -> tensor<1x4x4x3xf32>
    %6 = stablehlo.add %4, %5 : tensor<1x4x4x3xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<1x4x4x3xf32>
    %7 = stablehlo.maximum %6, %cst : tensor<1x4x4x3xf32>
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %8 = stablehlo.reduce(%7 init: %cst_0) applies stablehlo.add across dimensions = [1, 2] : (tensor<1x4x4x3xf32>, tensor<f32>) -> tensor<1x3xf32>
    return %8 : tensor<1x3xf32>
  }
}
"""  # noqa: E501


def rewritten(text: str, *rewrites) -> tuple[list, str]:
    with ir.Context() as context:
        context.load_all_available_dialects()
        module = ir.Module.parse(text)
        counts = [rewrite(module) for rewrite in rewrites]
        assert module.operation.verify()
        return counts, str(module)


def test_channels_last_golden():
    """The convolution turns channels last; its result's transpose sinks through the bias, the relu and the
    global average pool's reduce and vanishes: the module keeps the transposes of its inputs, behind barriers."""
    counts, text = rewritten(SMALL, layout.channels_last)
    assert counts == [1]
    assert text == SMALL_AFTER


def test_channels_last_modules_are_left_alone():
    nhwc = hj.jit(lambda x, w: ops.relu(ops.conv(x, w, padding="SAME", layout="NHWC"))).lower(
        np.ones((1, 4, 4, 2), np.float32), np.ones((3, 3, 2, 3), np.float32)).mlir
    counts, text = rewritten(nhwc, layout.channels_last)
    assert counts == [0] and text == nhwc


def test_only_llvm_cpu_gets_the_layout():
    """vmvx and cuda get the user's layout (IREE's GPU pipeline picks its own; vmvx measured no faster)."""
    cpu = quirks.QUIRKS["cpu"]
    # Speed rewrites run last but for the matmul operands' barriers, which must see the graph they leave;
    # select_and_scatter's rewrite after the layout, which moves the op itself channels last (a max-pool gradient),
    # and float compares by bits after both (the layout cannot move through their bitcasts)
    speed_then_tiling = [layout.channels_last, quirks.requested_winograd, conv_patches.convolutions_as_patch_products,
                         window_scatters.select_and_scatters_by_offset, quirks.float_compares_by_bits,
                         matmul_kernel.matmuls_by_kernel,
                         normalization_kernels.softmaxes_by_kernel, normalization_kernels.layer_norms_by_kernel,
                         *compile_rewrites.CPU_AFTER_PAIRS, *compile_rewrites.CPU_DATA_TILING]
    assert cpu[-len(speed_then_tiling):] == speed_then_tiling   # the tiling list's length is its own
    for name in ("vmvx", "cuda"):
        assert layout.channels_last not in quirks.QUIRKS[name]


RNG = np.random.default_rng(3)
X = RNG.standard_normal((2, 3, 12, 12)).astype(np.float32)
STEM = (RNG.standard_normal((8, 3, 3, 3)) / 3).astype(np.float32)
BLOCK = (RNG.standard_normal((8, 8, 3, 3)) / 8).astype(np.float32)
BIAS = RNG.standard_normal(8).astype(np.float32)
SCALE = (1 + 0.1 * RNG.standard_normal(8)).astype(np.float32)
ZEROS, ONES = np.zeros(8, np.float32), np.ones(8, np.float32)


def resnet_block(x, stem, block, bias, scale, layout_name="NCHW"):
    """conv + bias + relu, max pool, then a residual block (conv, batch norm, relu, conv, batch norm, + input,
    relu) and a global average pool, in either layout."""
    axis = 1 if layout_name == "NCHW" else -1
    shape = (1, -1, 1, 1) if layout_name == "NCHW" else (1, 1, 1, -1)
    spatial = (2, 3) if layout_name == "NCHW" else (1, 2)

    def norm(y):
        return nn.batch_norm(y, scale, bias, ZEROS, ONES, training=True, axis=axis)[0]
    y = ops.relu(ops.conv(x, stem, padding=1, layout=layout_name) + bias.reshape(shape))
    y = ops.max_pool(y, 3, strides=2, padding=1, layout=layout_name)
    z = ops.relu(norm(ops.conv(y, block, padding=1, layout=layout_name)))
    z = norm(ops.conv(z, block, padding=1, layout=layout_name))
    y = ops.relu(y + z)
    y = ops.avg_pool(y, 2, layout=layout_name)
    return y.mean(axis=spatial)


def nets(x, stem, block, bias, scale):
    """Both layouts and the NCHW net's gradients, one module."""
    x_last, stem_last, block_last = x.transpose(0, 2, 3, 1), stem.transpose(2, 3, 1, 0), block.transpose(2, 3, 1, 0)
    loss = lambda *a: ops.sum(resnet_block(*a) ** 2)  # noqa: E731
    grads = hj.grad(loss, argnums=(0, 1, 2, 3, 4))(x, stem, block, bias, scale)
    return {"nchw": resnet_block(x, stem, block, bias, scale),
            "nhwc": resnet_block(x_last, stem_last, block_last, bias, scale, "NHWC"), "grads": grads}


ARGS = (X, STEM, BLOCK, BIAS, SCALE)


def test_the_max_pool_gradient_moves_channels_last_with_the_network():
    """select_and_scatter takes the layout of the relu it selects from (operand [2, 12, 12, 8]): without the move
    the operand and the result were transposed in full around it (ResNet-18 b8's step 4-7% slower)."""
    loss = lambda *a: ops.sum(resnet_block(*a) ** 2)  # noqa: E731
    text = hj.jit(hj.grad(loss)).lower(*ARGS).mlir
    assert text.count("stablehlo.select_and_scatter") == 1
    _, after = rewritten(text, layout.channels_last)
    (line,) = [line for line in after.splitlines() if "stablehlo.select_and_scatter" in line]
    assert "window_dimensions = array<i64: 1, 3, 3, 1>" in line and "(tensor<2x12x12x8xf32>, tensor<2x6x6x8xf32>" in \
        after[after.index(line):]


def test_a_resnet_block_keeps_only_its_entry_transposes():
    """The forward network's transposes after the pass: the image and the two kernels, nothing between."""
    text = hj.jit(resnet_block).lower(*ARGS).mlir
    assert "transpose" not in text and "optimization_barrier" not in text    # the frontend adds none
    counts, after = rewritten(text, layout.channels_last)
    assert counts == [3]
    assert after.count("stablehlo.transpose") == 3 and after.count("stablehlo.optimization_barrier") == 3
    assert after.count("dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]") == 3


def test_rewritten_module_means_the_same_on_the_reference_backend():
    """The pass on the whole module, gradients included, run by the reference interpreter: the numbers of the
    module as traced."""
    text = hj.jit(nets).lower(*ARGS).mlir
    counts, after = rewritten(text, layout.channels_last)
    assert counts[0] > 3    # the gradients' convolutions too
    want = hj.from_mlir(text, backend="reference")(*ARGS)
    got = hj.from_mlir(after, backend="reference")(*ARGS)
    for a, b in zip(got, want):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("backend", LIBRARY_BACKENDS)   # vmvx keeps the user's layout: its nets are the op tables'
def test_conv_nets_match_the_reference_backend(backend):
    got = hj.jit(nets, backend=backend)(*ARGS)
    want = hj.jit(nets, backend="reference")(*ARGS)
    assert_close(got["nchw"], want["nchw"], np.float32, scale=50)
    assert_close(got["nhwc"], want["nchw"], np.float32, scale=50)
    for a, b in zip(got["grads"], want["grads"]):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-3, atol=1e-4)


def test_explain_and_artifacts_list_the_rewrite(tmp_path):
    """explain names the target rewrites that changed the module; an exported artifact counts them."""
    small = hj.jit(lambda x, w: ops.relu(ops.conv(x, w, padding="SAME")), backend="iree:cpu")
    args = (np.ones((1, 2, 4, 4), np.float32), np.ones((3, 2, 3, 3), np.float32))
    summary = str(small.explain(*args))
    assert "target rewrites: channels_last 1" in summary
    assert "target rewrites: none" in str(hj.jit(lambda x: x + 1, backend="iree:cpu").explain(args[0]))
    manifest = hj.export(small, *args, path=str(tmp_path / "conv"), target="cpu")
    assert manifest.rewrites == {"channels_last": 1}


def test_from_mlir_modules_get_the_layout_too(backend):
    """A channels-first module brought as text runs through the same pipeline as a traced one."""
    rng = np.random.default_rng(5)
    x, w, b = (rng.standard_normal(s).astype(np.float32) for s in ((1, 2, 4, 4), (3, 2, 3, 3), (3,)))
    got = hj.from_mlir(SMALL, backend=backend)(x, w, b)
    want = hj.from_mlir(SMALL, backend="reference")(x, w, b)
    assert_close(got, want, np.float32, scale=10)


TRANSPOSED_PRODUCTS = """func.func @main(%a: tensor<6x5xf32>, %b: tensor<6x7xf32>, %c: tensor<2x6x5xf32>, %d: tensor<2x6x7xf32>)
    -> (tensor<7x5xf32>, tensor<2x7x5xf32>, tensor<5x7xf32>, tensor<7x5xf32>) {
  %p = stablehlo.dot_general %a, %b, contracting_dims = [0] x [0], precision = [DEFAULT, HIGHEST] : (tensor<6x5xf32>, tensor<6x7xf32>) -> tensor<5x7xf32>
  %t = stablehlo.transpose %p, dims = [1, 0] : (tensor<5x7xf32>) -> tensor<7x5xf32>
  %q = stablehlo.dot_general %c, %d, batching_dims = [0] x [0], contracting_dims = [1] x [1] : (tensor<2x6x5xf32>, tensor<2x6x7xf32>) -> tensor<2x5x7xf32>
  %u = stablehlo.transpose %q, dims = [0, 2, 1] : (tensor<2x5x7xf32>) -> tensor<2x7x5xf32>
  %r = stablehlo.dot_general %a, %b, contracting_dims = [0] x [0] : (tensor<6x5xf32>, tensor<6x7xf32>) -> tensor<5x7xf32>
  %v = stablehlo.transpose %r, dims = [1, 0] : (tensor<5x7xf32>) -> tensor<7x5xf32>
  return %t, %u, %r, %v : tensor<7x5xf32>, tensor<2x7x5xf32>, tensor<5x7xf32>, tensor<7x5xf32>
}"""  # noqa: E501


def test_a_transposed_product_becomes_the_product_of_its_operands_swapped():
    """dy^T x transposed (JAX's weight gradient) is x^T dy: the first two products lose their transposes (the
    precision pairs swap with the operands); the third, also returned as it is, keeps its own."""
    counts, text = rewritten(TRANSPOSED_PRODUCTS, layout.transposed_products_swapped)
    assert counts == [2] and text.count("stablehlo.transpose") == 1, text
    assert "stablehlo.dot_general %arg1, %arg0, contracting_dims = [0] x [0], precision = [HIGHEST, DEFAULT] : " \
           "(tensor<6x7xf32>, tensor<6x5xf32>) -> tensor<7x5xf32>" in text, text
    assert "stablehlo.dot_general %arg3, %arg2, batching_dims = [0] x [0], contracting_dims = [1] x [1] : " \
           "(tensor<2x6x7xf32>, tensor<2x6x5xf32>) -> tensor<2x7x5xf32>" in text, text
    rng = np.random.default_rng(3)
    args = [rng.standard_normal(shape).astype(np.float32) for shape in ((6, 5), (6, 7), (2, 6, 5), (2, 6, 7))]
    for got, want in zip(hj.from_mlir(TRANSPOSED_PRODUCTS, backend="iree:cpu")(*args),
                         hj.from_mlir(TRANSPOSED_PRODUCTS, backend="reference")(*args)):
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5, atol=1e-5)
