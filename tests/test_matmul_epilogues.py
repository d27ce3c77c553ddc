"""compile_rewrites.py's barriers between a data-tiled matmul and the elementwise work IREE 3.13 would fuse into
its dispatch and then fail to compile (the whole module went to the no-data-tiling fallback): an optimizer's
update that makes several results (matmul_updates_apart), a select on a traced bool (traced_bools_apart_from_matmuls:
an attention mask). Golden texts, which targets get them, and the modules compiled data-tiled against the
reference backend."""
from __future__ import annotations

import numpy as np

from hlojit.frontend.from_mlir import parse
from hlojit.pipeline import compile_program, compile_rewrites, targets

from legalize_runs import on_target_and_reference
from test_legalize import rewritten, target_rewritten


# An Adam update of a weight gradient, as hj.optim traces it without barriers (and as JAX exports optax's step).
# Fused into the gradient's matmul, raw IREE 3.13 fails on x86 ("exceeded stack allocation limit of 32768 bytes")
# and the module compiled again without data tiling.
ADAM_UPDATE = """func.func @main(%p: tensor<512x256xf32>, %m: tensor<512x256xf32>, %v: tensor<512x256xf32>,
    %x: tensor<128x512xf32>, %d: tensor<128x256xf32>) -> (tensor<512x256xf32>, tensor<512x256xf32>, tensor<512x256xf32>) {
  %g = stablehlo.dot_general %x, %d, contracting_dims = [0] x [0] : (tensor<128x512xf32>, tensor<128x256xf32>) -> tensor<512x256xf32>
  %b1 = stablehlo.constant dense<0.9> : tensor<512x256xf32>
  %c1 = stablehlo.constant dense<0.1> : tensor<512x256xf32>
  %b2 = stablehlo.constant dense<0.999> : tensor<512x256xf32>
  %c2 = stablehlo.constant dense<0.001> : tensor<512x256xf32>
  %eps = stablehlo.constant dense<1.0e-8> : tensor<512x256xf32>
  %m0 = stablehlo.multiply %b1, %m : tensor<512x256xf32>
  %m1 = stablehlo.multiply %c1, %g : tensor<512x256xf32>
  %m2 = stablehlo.add %m0, %m1 : tensor<512x256xf32>
  %v0 = stablehlo.multiply %b2, %v : tensor<512x256xf32>
  %g2 = stablehlo.multiply %g, %g : tensor<512x256xf32>
  %v1 = stablehlo.multiply %c2, %g2 : tensor<512x256xf32>
  %v2 = stablehlo.add %v0, %v1 : tensor<512x256xf32>
  %s = stablehlo.sqrt %v2 : tensor<512x256xf32>
  %den = stablehlo.add %s, %eps : tensor<512x256xf32>
  %step = stablehlo.multiply %c2, %m2 : tensor<512x256xf32>
  %q = stablehlo.divide %step, %den : tensor<512x256xf32>
  %p2 = stablehlo.subtract %p, %q : tensor<512x256xf32>
  return %p2, %m2, %v2 : tensor<512x256xf32>, tensor<512x256xf32>, tensor<512x256xf32>
}"""


def test_matmul_reaching_two_results_gets_a_barrier_golden():
    count, text = rewritten(ADAM_UPDATE, compile_rewrites.matmul_updates_apart)
    assert count == 1 and text.count("stablehlo.optimization_barrier") == 1, text
    # the barrier stands right before the first use (after the producer, in a backward pass, it cost host syncs)
    assert """%1 = stablehlo.multiply %cst, %arg1 : tensor<512x256xf32>
    %2 = stablehlo.optimization_barrier %0 : tensor<512x256xf32>
    %3 = stablehlo.multiply %cst_0, %2 : tensor<512x256xf32>""" in text, text
    assert "%6 = stablehlo.multiply %2, %2" in text, text
    one_result = """func.func @main(%x: tensor<32x96xf32>, %d: tensor<32x64xf32>, %b: tensor<96x64xf32>)
    -> (tensor<96x64xf32>, tensor<96x64xf32>) {
  %g = stablehlo.dot_general %x, %d, contracting_dims = [0] x [0] : (tensor<32x96xf32>, tensor<32x64xf32>) -> tensor<96x64xf32>
  %y = stablehlo.add %g, %b : tensor<96x64xf32>
  %z = stablehlo.maximum %y, %b : tensor<96x64xf32>
  return %z, %b : tensor<96x64xf32>, tensor<96x64xf32>
}"""   # a layer's bias and relu: one result, fused (as fast, one dispatch fewer)
    assert rewritten(one_result, compile_rewrites.matmul_updates_apart)[0] == 0


def test_adam_update_compiles_data_tiled_and_matches_the_reference():
    assert compile_program(parse(ADAM_UPDATE), targets.cpu()).target.flag_set == "data-tiling"  # not its fallback
    rng = np.random.default_rng(1)
    inputs = [rng.standard_normal((512, 256), np.float32), rng.standard_normal((512, 256), np.float32),
              rng.random((512, 256), np.float32), rng.standard_normal((128, 512), np.float32),
              rng.standard_normal((128, 256), np.float32)]
    for a, e in on_target_and_reference(ADAM_UPDATE, inputs, "iree:cpu"):
        np.testing.assert_allclose(a, e, rtol=1e-5, atol=1e-5)


def test_only_data_tiled_cpu_builds_keep_matmuls_from_updates():
    def barriers(target):
        return target_rewritten(ADAM_UPDATE, target)[0].get("matmul_updates_apart", 0)
    assert barriers(targets.cpu()) == 1
    assert barriers(targets.cpu().fallback) == barriers(targets.vmvx()) == barriers(targets.cuda()) == 0


# An attention mask as JAX writes it (jnp.where(mask, logits, -big)): a traced bool selected in the consumer of the
# logits' matmul. Fused, raw IREE 3.13 fails ("linalg.pack ... padding_value has 'i8' but got 'i1'").
MASKED_LOGITS = """func.func @main(%q: tensor<4x128x64xf32>, %k: tensor<4x128x64xf32>, %mask: tensor<1x128x128xi1>)
    -> tensor<4x128x128xf32> {
  %s = stablehlo.dot_general %q, %k, batching_dims = [0] x [0], contracting_dims = [2] x [2]
      : (tensor<4x128x64xf32>, tensor<4x128x64xf32>) -> tensor<4x128x128xf32>
  %m = stablehlo.broadcast_in_dim %mask, dims = [0, 1, 2] : (tensor<1x128x128xi1>) -> tensor<4x128x128xi1>
  %big = stablehlo.constant dense<-3.0e38> : tensor<4x128x128xf32>
  %r = stablehlo.select %m, %s, %big : tensor<4x128x128xi1>, tensor<4x128x128xf32>
  return %r : tensor<4x128x128xf32>
}"""


def test_a_traced_bool_beside_a_matmul_gets_a_barrier_golden():
    count, text = rewritten(MASKED_LOGITS, compile_rewrites.traced_bools_apart_from_matmuls)
    assert count == 1 and text.count("stablehlo.optimization_barrier") == 1, text
    assert "%2 = stablehlo.optimization_barrier %0 : tensor<4x128x128xf32>\n    %3 = stablehlo.select %1, %2, %cst" \
        in text, text
    # a causal mask computed from iotas is computed inside the consumer's dispatch, not read: no barrier
    causal = MASKED_LOGITS.replace("%mask: tensor<1x128x128xi1>", "%unused: tensor<1x128x128xi1>").replace(
        "%m = stablehlo.broadcast_in_dim %mask, dims = [0, 1, 2] : (tensor<1x128x128xi1>) -> tensor<4x128x128xi1>",
        "%rows = stablehlo.iota dim = 1 : tensor<4x128x128xi32>\n  %cols = stablehlo.iota dim = 2 : "
        "tensor<4x128x128xi32>\n  %m = stablehlo.compare GE, %rows, %cols : (tensor<4x128x128xi32>, "
        "tensor<4x128x128xi32>) -> tensor<4x128x128xi1>")
    assert rewritten(causal, compile_rewrites.traced_bools_apart_from_matmuls)[0] == 0


def test_masked_logits_compile_data_tiled_and_match_the_reference():
    assert compile_program(parse(MASKED_LOGITS), targets.cpu()).target.flag_set == "data-tiling"  # not its fallback
    assert target_rewritten(MASKED_LOGITS, targets.vmvx())[0].get("traced_bools_apart_from_matmuls") is None
    rng = np.random.default_rng(3)
    inputs = [rng.standard_normal((4, 128, 64), np.float32), rng.standard_normal((4, 128, 64), np.float32),
              rng.random((1, 128, 128)) < 0.5]
    for a, e in on_target_and_reference(MASKED_LOGITS, inputs, "iree:cpu"):
        np.testing.assert_allclose(a, e, rtol=1e-5, atol=1e-4)
