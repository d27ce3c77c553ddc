"""pipeline/conv_patches.py: convolutions of 128 input channels or more as one product of their patches on llvm-cpu's
flag sets without the matmul kernels (the suite's iree:cpu), against a float64 oracle; which targets and convolutions
it takes."""
from __future__ import annotations

import numpy as np
import pytest
from iree.compiler import ir

import hlojit as hj
from hlojit import ops
from hlojit.pipeline import quirks, targets

# (input shape, kernel shape, layout, stride, padding, dilation, groups): 2-D in both layouts, strided, asymmetric and
# SAME padding, a dilated kernel, 1x1, 1-D and 3-D, and what the rewrite leaves (64 channels, feature groups)
CASES = [
    ((2, 128, 6, 5), (8, 128, 3, 3), "NCHW", 1, ((1, 1), (1, 1)), 1, 1),
    ((2, 7, 6, 130), (3, 2, 130, 4), "NHWC", (2, 1), ((0, 2), (1, 0)), 1, 1),
    ((1, 128, 9, 9), (5, 128, 3, 3), "NCHW", 2, "SAME", 2, 1),
    ((3, 256, 4, 4), (6, 256, 1, 1), "NCHW", 2, "VALID", 1, 1),
    ((2, 128, 11), (4, 128, 3), "NCW", 1, ((2, 1),), 1, 1),
    ((1, 128, 3, 4, 3), (2, 128, 2, 2, 2), "NCDHW", 1, "SAME", 1, 1),
    ((2, 64, 6, 6), (4, 64, 3, 3), "NCHW", 1, "SAME", 1, 1),        # below PATCHES_FROM_CHANNELS: left
    ((1, 256, 5, 5), (4, 128, 3, 3), "NCHW", 1, "SAME", 1, 2),      # feature groups: left
]
TAKEN = 6


def _convolutions(*args):
    return tuple(ops.conv(x, w, stride=s, padding=p, dilation=d, groups=g, layout=layout)
                 for (x, w), (_, _, layout, s, p, d, g) in zip(zip(args[0::2], args[1::2]), CASES))


def _arguments(dtype):
    rng = np.random.default_rng(7)
    return [rng.standard_normal(shape).astype(dtype) for xs, ws, *_ in CASES for shape in (xs, ws)]


def test_patch_products_match_a_float64_convolution_on_iree_cpu():
    got = hj.jit(_convolutions, backend="iree:cpu")(*_arguments(np.float32))
    want = hj.jit(_convolutions, backend="reference")(*_arguments(np.float64))
    for k, (g, w) in enumerate(zip(got, want)):
        g, w = np.asarray(g), np.asarray(w)
        assert g.dtype == np.float32 and g.shape == w.shape, k
        np.testing.assert_allclose(g, w, rtol=0, atol=2e-5 * np.abs(w).max(), err_msg=f"case {k}")


def _rewritten(target) -> dict:
    program = hj.jit(_convolutions).lower(*_arguments(np.float32)).program
    with ir.Context():
        module = ir.Module.parse(str(program.module))
        return quirks.apply(module, target)


@pytest.mark.parametrize("target, taken", [
    (targets.cpu(), TAKEN), (targets.cpu(flag_set="data-tiling+winograd"), TAKEN),
    (targets.cpu().fallback, TAKEN), (targets.quick(targets.cpu()), TAKEN),
    (targets.cpu(flag_set="data-tiling+matmul-kernels"), None)], ids=lambda v: getattr(v, "flag_set", str(v)))
def test_every_cpu_flag_set_but_the_matmul_kernels_takes_it(target, taken):
    assert _rewritten(target).get("convolutions_as_patch_products") == taken
