"""`Program`: what the frontend hands to a backend: a StableHLO module and its calling convention."""
from __future__ import annotations

import dataclasses
import io

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


def bytecode_of(module: ir.Module) -> bytes:
    """The module as MLIR bytecode: how a module moves to another context or process (~0.1 ms for a small one)."""
    buffer = io.BytesIO()
    module.operation.write_bytecode(buffer)
    return buffer.getvalue()
