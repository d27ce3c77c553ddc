"""The reference backend: a numpy interpreter of StableHLO, the oracle every IREE target is tested against.

`load` walks @main once and generates a straight-line Python function that calls one numpy closure per
op, so a call does no dispatch on op names. Semantics are StableHLO's (integer division truncates,
remainder takes the dividend's sign ...), computed exactly in numpy; it knows nothing of the frontend.
The op tables live beside this file, one module per family, each adding builders to `interpreter.OPS`.
"""
from __future__ import annotations

import numpy as np

from ...pipeline.program import Program
from ..array import Array
from ..donations import check_donations
from . import elementwise, nn, shape, structural  # noqa: F401  (they register their ops)
from . import control  # noqa: F401  (if, case, while)
from . import indexing  # noqa: F401  (gather, scatter)
from . import math  # noqa: F401  (bitcast_convert, sort)
from . import bits, calls, dynamic, linalg  # noqa: F401  (popcnt ... clamp; composite, custom_call; dynamic_*)
from . import chlo  # noqa: F401  (JAX's client ops: special functions, broadcasting binaries, top_k)
from . import chlo_structured  # noqa: F401  (mulhi, scan, ragged_dot, chlo.constant)
from . import complex  # noqa: F401  (real, imag, complex, fft)
from .interpreter import Functions, supported_ops

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

    def load(self, program: Program, driver: str | None = None, autotune: bool = False,
             on_upgrade=None) -> Executable:
        """`driver` (an IREE CPU driver), `autotune` and `on_upgrade` (tiered compilation) mean nothing to numpy:
        accepted and ignored."""
        return Executable(program)

    def put(self, array: np.ndarray) -> Array:
        return Array.from_numpy(np.array(array, order="C"), driver="reference")  # a C-ordered copy of its own

    def __repr__(self):
        return "<backend reference>"
