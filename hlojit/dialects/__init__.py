"""Typed builders for StableHLO on top of `iree.compiler.ir` (no tracing, no compiling)."""
from . import stablehlo, types

__all__ = ["stablehlo", "types"]
