"""`Program`: what the frontend hands to a backend: a StableHLO module and its calling convention."""
from __future__ import annotations

import dataclasses

from iree.compiler import ir


@dataclasses.dataclass
class Program:
    module: ir.Module
    inputs: list                    # [(shape, numpy dtype)] of the flat arguments of @main
    outputs: list                   # [(shape, numpy dtype)] of the flat results
    name: str = "main"              # the user's function name, for messages
    why: str = ""                   # why it is being compiled (the jit cache's miss reason), for HLOJIT_LOG
    donated: tuple = ()             # flat argument indices the caller gives up (donate_argnums)
    aliases: dict = dataclasses.field(default_factory=dict)  # {argument: result} IREE writes into in place

    @property
    def mlir(self) -> str:
        return str(self.module)
