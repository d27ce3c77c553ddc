"""A numpy interpreter of StableHLO (and CHLO): the meaning of every op the project knows, computed exactly.

It is the reference backend's engine (backends/reference.py: the oracle every IREE target is tested against)
and the pipeline's constant folder's (pipeline/constant_folding.py), so it sits below both and imports
neither: only dialects/ (types, the op registry) and errors. `Functions(module)` walks each function once
and generates a straight-line Python function that calls one numpy closure per op, so a call does no
dispatch on op names. Semantics are StableHLO's (integer division truncates, remainder takes the
dividend's sign ...); it knows nothing of the frontend. The op tables live beside this file, one module
per family, each adding builders to `interpreter.OPS`.
"""
from __future__ import annotations

from . import elementwise, nn, shape, structural  # noqa: F401  (they register their ops)
from . import control  # noqa: F401  (if, case, while)
from . import indexing  # noqa: F401  (gather, scatter)
from . import math  # noqa: F401  (bitcast_convert, sort)
from . import bits, calls, dynamic, linalg  # noqa: F401  (popcnt ... clamp; composite, custom_call; dynamic_*)
from . import chlo  # noqa: F401  (JAX's client ops: special functions, broadcasting binaries, top_k)
from . import chlo_structured  # noqa: F401  (mulhi, scan, ragged_dot, chlo.constant)
from . import complex  # noqa: F401  (real, imag, complex, fft)
from .interpreter import OPS, Functions, free_values, supported_ops

__all__ = ["OPS", "Functions", "free_values", "supported_ops"]
