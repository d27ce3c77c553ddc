"""The op registry (one record per StableHLO/CHLO op) and typed builders for StableHLO on top of
`iree.compiler.ir` (no tracing, no compiling)."""
from . import opviews, registry, stablehlo, types

__all__ = ["registry", "stablehlo", "types"]
