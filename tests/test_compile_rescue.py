"""targets.rescue: a data-tiled cpu compile that IREE 3.13 refuses for "large vector sizes" (its multi-use fusion put
a data-tiled product's unpack in a dispatch of several results) is compiled again without that fusion, data-tiled,
instead of falling back to no data tiling at all for the whole module."""
import numpy as np
import pytest

import hlojit as hj
from hlojit import ops
from hlojit.pipeline import targets

REFUSAL = ("error: One or more operations with large vector sizes (16384 bytes) were found:\n"
           " (loc(\"stablehlo.dot_general\"(\"model.py\":12:0)))")


def test_only_the_large_vector_refusal_of_a_data_tiled_cpu_compile_is_rescued():
    kernels = targets.cpu(flag_set="data-tiling+matmul-kernels")
    rescued = targets.rescue(kernels, REFUSAL)
    assert rescued.flags == kernels.flags + targets.UNFUSED_MULTI_USE
    assert rescued.flag_set == kernels.flag_set and rescued.fallback == kernels.fallback
    assert rescued.label == "cpu[data-tiling+matmul-kernels+unfused-multi-use]"
    assert targets.rescue(rescued, REFUSAL) is None                       # once
    assert targets.rescue(kernels, "error: failed to legalize operation 'stablehlo.sort'") is None
    bare = targets.cpu().fallback
    assert targets.rescue(bare, REFUSAL) is None and targets.rescue(targets.vmvx(), REFUSAL) is None
    assert [t.label for t in targets.attempts(kernels)] == [
        "cpu[data-tiling+matmul-kernels]", "cpu[data-tiling+matmul-kernels+unfused-multi-use]",
        "cpu[data-tiling]", "cpu[data-tiling+unfused-multi-use]", "cpu[no-data-tiling]"]
    assert targets.attempt_of(kernels, rescued) == 1 and targets.attempt_of(kernels, bare) == 4


def activation_and_double(x, w, b):
    """A dense layer written twice, as a user (or JAX's tracer) may: IREE merges the two products into one with two
    users, and fused those into one dispatch of two results (on the 2-vCPU Zen 3 at 128 x 128 by 128 x 512 this
    compiled with no data tiling before, on both flag sets)."""
    return ops.tanh(x @ w + b), (x @ w + b) * 2.0


@pytest.mark.parametrize("flag_set", ["data-tiling", "data-tiling+matmul-kernels"])
def test_a_product_with_two_users_compiles_data_tiled_and_matches_numpy(flag_set, monkeypatch, tmp_path):
    from hlojit.backends.iree import IreeBackend
    monkeypatch.setenv("HLOJIT_CACHE_DIR", str(tmp_path))
    backend = IreeBackend("iree:cpu", targets.cpu(flag_set=flag_set))
    rng = np.random.default_rng(0)
    x = rng.standard_normal((128, 128)).astype(np.float32)
    w = (rng.standard_normal((128, 512)) / 16).astype(np.float32)
    b = rng.standard_normal(512).astype(np.float32)

    def jit():
        f = hj.jit(activation_and_double)
        f.backend = backend
        return f
    f = jit()
    activation, doubled = f(x, w, b)
    h = x.astype(np.float64) @ w + b
    np.testing.assert_allclose(np.asarray(activation), np.tanh(h), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.asarray(doubled), 2 * h, rtol=1e-5, atol=1e-4)
    made_by = f.compile(x, w, b).compiled.target
    assert targets.data_tiled(made_by) and made_by.flag_set == flag_set, made_by.label
    again = jit().compile(x, w, b).compiled
    assert again.cache_hit and again.target == made_by     # the persistent cache knows which attempt made it
