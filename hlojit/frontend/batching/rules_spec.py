"""Batching rules of the spec's ops that the rules_* modules of the core families leave out (the elementwise
ones, CHLO's included, share rules_elementwise's rule): fft, CHLO's broadcasting ops and the ops that hlojit's
own ops never emit but a `from_mlir` module may hold run lane by lane, once per example, which is right for any op
though not fast; tokens and tuples carry nothing to batch.
"""
from __future__ import annotations

from ...dialects import registry
from .core import RULES, register
from .rules_control import lane_by_lane

RULES.update({name: lane_by_lane for name in registry.names("chlo", rule=registry.BROADCAST)})
RULES.update({f"chlo.{name}": lane_by_lane for name in ("top_k", "constant_like")})
register("fft", "batch_norm_grad", "batch_norm_inference", "batch_norm_training", "broadcast", "cholesky", "dot",
         "dynamic_broadcast_in_dim", "dynamic_gather", "dynamic_iota", "dynamic_pad", "dynamic_reshape",
         "einsum", "get_dimension_size", "real_dynamic_slice", "triangular_solve",
         "unary_einsum")(lane_by_lane)

_NOWHERE = "every backend here refuses it (one process, no host channels), so nothing runs it to batch"
NEVER_BATCHED = {
    "stablehlo.after_all": "tokens carry no values", "stablehlo.create_token": "tokens carry no values",
    "stablehlo.tuple": "a tuple holds no tensor to stack (hlojit's programs never make one)",
    "stablehlo.get_tuple_element": "a tuple holds no tensor to stack (hlojit's programs never make one)",
    "stablehlo.replica_id": "it has no operands: the same in every example, copied as it is",
    "stablehlo.partition_id": "it has no operands: the same in every example, copied as it is",
    **{f"stablehlo.{name}": _NOWHERE for name in ("all_gather", "all_reduce", "all_to_all", "collective_broadcast",
                                                  "collective_permute", "reduce_scatter", "infeed", "outfeed",
                                                  "send", "recv")},
}
