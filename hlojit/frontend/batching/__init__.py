"""vmap: batching of traced functions as a transformation of their StableHLO. The rules live in one
table (`core.RULES`, one entry per StableHLO op, beside autodiff's VJP rules), filled by the rules_*
modules, one per op family; `NEVER_BATCHED` names the ops that need none, with the reason."""
from . import rules_control, rules_elementwise, rules_indexing, rules_reduce, rules_shape, rules_spec  # noqa: F401
from .api import vmap
from .core import RULES

NEVER_BATCHED = {**rules_shape.NEVER_BATCHED, **rules_spec.NEVER_BATCHED}

__all__ = ["NEVER_BATCHED", "RULES", "vmap"]
