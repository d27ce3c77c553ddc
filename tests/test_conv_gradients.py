"""pipeline/conv_gradients.py and conv_phases.py: the gradient convolutions JAX (and hlojit's autodiff) writes (an input gradient of a strided convolution as an
input-dilated convolution, a kernel gradient as a convolution whose window is the image), rewritten for llvm-cpu,
before and after, and their numbers on iree:cpu against the reference backend, which runs the convolutions as the
spec defines them. The shapes and attributes are those jax.grad of lax.conv_general_dilated lowers to (jax 0.10)."""
from __future__ import annotations

import numpy as np
import pytest

import hlojit as hj
from hlojit import ops
from hlojit.pipeline import compile_program, conv_gradients, quirks, targets

from legalize_runs import bundled_on_target_and_reference
from test_legalize import rewritten, target_rewritten

NCHW_BY_IO = "[b, f, 0, 1]x[i, o, 0, 1]->[b, f, 0, 1]"    # an input gradient's (the kernel flipped, in and out swapped)
KERNEL_GRADIENT = "[f, b, 0, 1]x[i, o, 0, 1]->[f, b, 0, 1]"  # a kernel gradient's: the batch is contracted


def convolution(x, w, out, dims, stride, pad, lhs=None, rhs=None) -> str:
    def shape(s):
        return "x".join(map(str, s)) + "xf32"
    spatial = len(x) - 2
    lhs, rhs = lhs or [1] * spatial, rhs or [1] * spatial
    return f"""func.func @main(%x: tensor<{shape(x)}>, %w: tensor<{shape(w)}>) -> tensor<{shape(out)}> {{
  %0 = stablehlo.convolution(%x, %w) dim_numbers = {dims}, window = {{stride = {stride}, pad = {pad}, lhs_dilate = {lhs}, rhs_dilate = {rhs}}} {{batch_group_count = 1 : i64, feature_group_count = 1 : i64}} : (tensor<{shape(x)}>, tensor<{shape(w)}>) -> tensor<{shape(out)}>
  return %0 : tensor<{shape(out)}>
}}"""


INPUT_GRADIENTS = [
    # 3x3 stride 2 padding 1, and 1x1 stride 2 (ResNet's downsampling): the output gradient dilated by 2
    convolution((2, 4, 6, 6), (4, 3, 3, 3), (2, 3, 12, 12), NCHW_BY_IO, [1, 1], [[1, 2], [1, 2]], lhs=[2, 2]),
    convolution((2, 4, 6, 6), (4, 3, 1, 1), (2, 3, 12, 12), NCHW_BY_IO, [1, 1], [[0, 1], [0, 1]], lhs=[2, 2]),
    # negative padding crops the dilated input; strides 3 and 2; 1-D
    convolution((1, 2, 5, 4), (2, 3, 2, 2), (1, 3, 13, 5), NCHW_BY_IO, [1, 1], [[-1, 2], [0, -1]], lhs=[3, 2]),
    convolution((2, 3, 5), (4, 3, 3), (2, 4, 9), "[b, f, 0]x[o, i, 0]->[b, f, 0]", [1], [[1, 1]], lhs=[2]),
    # and a window stride (not by phases: as padding on llvm-cpu)
    convolution((2, 4, 6, 6), (4, 3, 3, 3), (2, 3, 6, 6), NCHW_BY_IO, [2, 2], [[1, 2], [1, 2]], lhs=[2, 2]),
]
KERNEL_GRADIENTS = [
    # ResNet's 7x7 stride-2 stem (input 32 x 32 here), a 3x3 stride-1 layer, a 1x1 stride-2 one (negative padding)
    convolution((2, 3, 32, 32), (2, 4, 16, 16), (4, 3, 7, 7), KERNEL_GRADIENT, [1, 1], [[3, 2], [3, 2]], rhs=[2, 2]),
    convolution((2, 3, 10, 10), (2, 4, 10, 10), (4, 3, 3, 3), KERNEL_GRADIENT, [1, 1], [[1, 1], [1, 1]]),
    convolution((2, 3, 12, 12), (2, 4, 6, 6), (4, 3, 1, 1), KERNEL_GRADIENT, [1, 1], [[0, -1], [0, -1]], rhs=[2, 2]),
    # a channels-last network's (HWIO kernel gradient), with a window stride (the forward's kernel dilation 2)
    convolution((12, 12, 2, 3), (8, 8, 2, 4), (3, 3, 3, 4), "[0, 1, f, b]x[0, 1, i, o]->[0, 1, b, f]", [2, 2],
                [[0, 0], [0, 0]]),
]
FORWARD = convolution((1, 3, 8, 8), (4, 3, 3, 3), (1, 4, 8, 8), "[b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1]", [1, 1],
                      [[1, 1], [1, 1]])


def test_an_input_dilation_becomes_interior_padding_golden():
    count, text = rewritten(INPUT_GRADIENTS[2], conv_gradients.lhs_dilation_as_padding)
    assert count == 1
    assert "stablehlo.pad %arg0, %cst, low = [0, 0, -1, 0], high = [0, 0, 2, -1], interior = [0, 0, 2, 1] : " \
           "(tensor<1x2x5x4xf32>, tensor<f32>) -> tensor<1x2x14x6xf32>" in text, text
    assert "pad = [[0, 0], [0, 0]], lhs_dilate = [1, 1]," in text, text
    assert rewritten(FORWARD, conv_gradients.lhs_dilation_as_padding)[0] == 0


def test_a_kernel_gradient_becomes_one_product_of_patches_golden():
    count, text = rewritten(KERNEL_GRADIENTS[1], conv_gradients.kernel_gradients_as_products)
    assert count == 1 and "stablehlo.convolution" not in text, text
    assert text.count("stablehlo.slice") == 9, text     # a tap each, [i, window, b]: [2, 10, 10, 3]
    assert "stablehlo.concatenate" in text and "(tensor<9x200x3xf32>, tensor<200x4xf32>) -> tensor<9x3x4xf32>" in text
    for module in (FORWARD, *INPUT_GRADIENTS):      # a forward convolution's window is not bigger than its output
        assert rewritten(module, conv_gradients.kernel_gradients_as_products)[0] == 0


def test_patches_past_the_bound_stay_a_convolution(monkeypatch):
    monkeypatch.setattr(conv_gradients, "MAX_PATCH_ELEMENTS", 9 * 200 * 3 - 1)    # KERNEL_GRADIENTS[1]'s, less one
    assert rewritten(KERNEL_GRADIENTS[1], conv_gradients.kernel_gradients_as_products)[0] == 0


def test_the_cpu_target_runs_both_before_its_layout():
    rewrites, _ = target_rewritten(INPUT_GRADIENTS[0], "cpu")     # stride 1: by phases (conv_phases.py)
    assert "lhs_dilations_by_phases" in rewrites and "lhs_dilation_as_padding" not in rewrites, rewrites
    rewrites, _ = target_rewritten(INPUT_GRADIENTS[-1], "cpu")      # a window stride too: padding
    assert list(rewrites)[:2] == ["lhs_dilation_as_padding", "channels_last"], rewrites
    rewrites, _ = target_rewritten(KERNEL_GRADIENTS[0], "cpu")
    assert "kernel_gradients_as_products" in rewrites and "lhs_dilation_as_padding" not in rewrites, rewrites
    assert quirks.QUIRKS["cpu"].index(conv_gradients.kernel_gradients_as_products) < \
        quirks.QUIRKS["cpu"].index(quirks.layout.channels_last)


def _inputs(text: str, seed: int) -> list:
    rng = np.random.default_rng(seed)
    shapes = [part.split("tensor<")[1].split("xf32")[0] for part in text.split("->")[0].split("%")[1:3]]
    return [rng.standard_normal([int(n) for n in s.split("x")]).astype(np.float32) for s in shapes]


CASES = [(text, _inputs(text, i)) for i, text in enumerate(INPUT_GRADIENTS + KERNEL_GRADIENTS)]


@pytest.mark.shares_compiles
@pytest.mark.parametrize("backend", ["iree:cpu"])
@pytest.mark.parametrize("index", range(len(CASES)))
def test_gradient_convolutions_on_cpu_match_the_reference(backend, index):
    for actual, expected in bundled_on_target_and_reference(CASES, index, backend):
        np.testing.assert_allclose(actual, expected, rtol=2e-5, atol=2e-5 * np.abs(expected).max())


def test_a_conv_gradient_compiles_for_cuda():
    """cuda gets both rewrites first (the VJP writes JAX's rule; no GPU needed to compile)."""
    x, w, w1 = np.zeros((2, 4, 16, 16), np.float32), np.zeros((8, 4, 3, 3), np.float32), np.zeros((8, 4, 1, 1), np.float32)

    def loss(w, w1, x):
        return ops.sum(ops.conv(x, w, stride=2, padding=1) ** 2) + ops.sum(ops.conv(x, w1, stride=2) ** 2)
    program = hj.jit(hj.grad(loss, argnums=(0, 1, 2))).lower(w, w1, x).program
    rewrites, _ = target_rewritten(str(program.module), "cuda")
    assert rewrites["lhs_dilations_by_phases"] == 2 and rewrites["kernel_gradients_as_products"] == 2, rewrites
    assert compile_program(program, targets.cuda()).vmfb
