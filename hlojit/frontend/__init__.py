"""Tracing: `Tensor`, dtypes and promotion, the op library, and `jit`/`Exec` with its cache."""
from . import dtypes, ops
from .dtypes import promotion
from .jit import CacheInfo, Exec, Lowered, RecompileWarning, jit
from .tensor import Tensor

__all__ = ["CacheInfo", "Exec", "Lowered", "RecompileWarning", "Tensor", "dtypes", "jit", "ops", "promotion"]
