"""Calls and the ops around them: composite (runs its decomposition), custom_call (JAX's shape assertion; any
other target is refused by name), tuples, tokens, and the ids of a one-device program. The collectives and
host communication are not for a one-process numpy interpreter: they are refused with what they are.
"""
from __future__ import annotations

import numpy as np
from iree.compiler import ir

from ..dialects.types import dtype_of
from ..errors import BackendError
from .interpreter import OPS


def _symbol(op, name: str) -> str:
    return str(op.attributes[name]).lstrip("@").strip('"')


def _composite(op, functions):
    """A composite is its decomposition function called with its operands (the spec's meaning)."""
    callee = _symbol(op, "decomposition")
    run = functions.get(callee)
    if run is None:
        raise BackendError(f"stablehlo.composite {op.attributes['name']}: no function @{callee} (at {op.location})")
    return (lambda *args: run(*args)[0]) if len(op.results) == 1 else run


_composite.takes_functions = True


def _custom_call(op):
    target = str(ir.StringAttr(op.attributes["call_target_name"]).value)
    if target == "shape_assertion":      # JAX's exports check their symbolic shapes with it
        message = str(ir.StringAttr(op.attributes["error_message"]).value) if "error_message" in op.attributes \
            else "shape assertion failed"

        def check(condition, *values):
            if not bool(np.asarray(condition)):
                raise BackendError(message.format(*(int(np.asarray(v)) for v in values)))
        return check
    raise BackendError(f"stablehlo.custom_call @{target} is not part of StableHLO: the reference backend runs only "
                       f"JAX's shape_assertion (at {op.location})")


def _get_tuple_element(op):
    index = int(ir.IntegerAttr(op.attributes["index"]).value)
    return lambda t: t[index]


def _id(op):
    value = np.array(0, dtype=dtype_of(op.result.type))
    return lambda: value


def _refused(what: str):
    def build(op):
        raise BackendError(f"{op.name} is {what}: the reference backend runs one process with no host channels "
                           f"(at {op.location})")
    return build


OPS.update({
    "stablehlo.composite": _composite,
    "stablehlo.custom_call": _custom_call,
    "stablehlo.tuple": lambda op: (lambda *values: tuple(values)),
    "stablehlo.get_tuple_element": _get_tuple_element,
    "stablehlo.after_all": lambda op: (lambda *tokens: None),
    "stablehlo.create_token": lambda op: (lambda: None),
    "stablehlo.replica_id": _id,            # one replica, one partition: both are 0
    "stablehlo.partition_id": _id,
})
OPS.update({f"stablehlo.{name}": _refused("a collective") for name in (
    "all_gather", "all_reduce", "reduce_scatter", "all_to_all", "collective_permute", "collective_broadcast")})
OPS.update({f"stablehlo.{name}": _refused("host communication") for name in ("infeed", "outfeed", "send", "recv")})
