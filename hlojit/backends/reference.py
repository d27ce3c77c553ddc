"""The reference backend: hlojit's StableHLO interpreter (hlojit/interpreter/) behind the backend interface, the
oracle every IREE target is tested against. A program runs as the interpreter's generated numpy function;
results are `hj.Array`s on the host, and donated arguments are marked consumed as IREE's would be.
"""
from __future__ import annotations

import numpy as np

from ..interpreter import Functions, supported_ops
from ..pipeline.program import Program
from .array import Array
from .donations import check_donations

__all__ = ["Executable", "ReferenceBackend", "supported_ops"]


class Executable:
    """`executable(leaves) -> [Array]` by the generated numpy function."""

    def __init__(self, program: Program):
        self.source_name = program.name
        self.donated = program.donated  # marked donated after the call, as on IREE (no memory to reuse here)
        functions = Functions(program.module)
        self._run = functions["main"]
        self._inputs = [(tuple(shape), np.dtype(dtype)) for shape, dtype in program.inputs]
        self._outputs = [(tuple(shape), np.dtype(dtype)) for shape, dtype in program.outputs]

    def __call__(self, leaves) -> list[Array]:
        if self.donated:
            check_donations(leaves, self.donated, self.source_name)
        # np.asarray answers big-endian, read-only and Fortran-order arrays alike: values in native order
        args = [np.asarray(x, dtype=dtype) for x, (_, dtype) in zip(leaves, self._inputs)]
        outs = self._run(*args)
        for i in self.donated:  # only once it ran: a call that fails consumes nothing
            if type(leaves[i]) is Array:
                leaves[i].donate(self.source_name)
        return [Array.from_numpy(np.asarray(o, dtype=dtype).reshape(shape), driver="reference")
                for o, (shape, dtype) in zip(outs, self._outputs)]

    call = __call__

    def call_single(self, leaves) -> Array:
        return self(leaves)[0]


class ReferenceBackend:
    name = "reference"

    def expect_compile(self):
        """Nothing to get ready: numpy runs the program as it is (IreeBackend starts its compile worker)."""

    def load(self, program: Program, driver: str | None = None, autotune: bool = False,
             on_upgrade=None) -> Executable:
        """`driver` (an IREE CPU driver), `autotune` and `on_upgrade` (tiered compilation) mean nothing to numpy:
        accepted and ignored."""
        return Executable(program)

    def put(self, array: np.ndarray) -> Array:
        return Array.from_numpy(np.array(array, order="C"), driver="reference")  # a C-ordered copy of its own

    def __repr__(self):
        return "<backend reference>"
