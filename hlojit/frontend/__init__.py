"""Tracing: `Tensor`, dtypes and promotion, the op library, and `jit`/`Exec` with its cache."""
from types import SimpleNamespace as _Namespace

from ..backends import operators as _operators
from . import dtypes, ops  # first: ops makes its functions eager (eager.py) as it loads
from . import eager, numpy_protocols
from .dtypes import promotion
from .jit import CacheInfo, Exec, Lowered, RecompileWarning, device_put, jit
from .tensor import Tensor

# hj.Array's and Tensor's operators and numpy protocols run these (backends/operators.py says why)
_operators.register(ops, _Namespace(array_ufunc=numpy_protocols.array_ufunc,
                                    array_function=numpy_protocols.array_function, at=eager.at))

__all__ = ["CacheInfo", "Exec", "Lowered", "RecompileWarning", "Tensor", "dtypes", "eager", "jit", "ops",
           "promotion"]
