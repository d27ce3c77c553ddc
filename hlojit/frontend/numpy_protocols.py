"""numpy's protocols on Tensors and hj.Arrays: `np.sin(x)`, `np.sum(x, axis=0)`, `np.concatenate([x, y])`.

numpy hands a ufunc call to `__array_ufunc__` and any other numpy function to `__array_function__`; both
run the `hlojit.ops` function of the same name when there is one that takes the arguments given (so inside
a trace they trace it, outside one it runs eagerly). Otherwise: with a traced Tensor among the arguments a
TracingError names the numpy function (its value does not exist yet); with only concrete arrays the numpy
function runs on np.asarray of them, as numpy would have run it.
"""
from __future__ import annotations

import inspect

import numpy as np

from ..backends import Array
from ..errors import TracingError
from . import ops, pytree, trace
from .tensor import Tensor

# numpy functions that read only the shape, which a traced Tensor knows
_METADATA = {"shape": lambda x: tuple(x.shape), "ndim": lambda x: len(x.shape),
             "size": lambda x: int(np.prod(x.shape, dtype=np.int64))}
_SIGNATURES: dict = {}


def _accepts(op, args, kwargs) -> bool:
    signature = _SIGNATURES.get(op)
    if signature is None:
        signature = _SIGNATURES[op] = inspect.signature(op)
    try:
        signature.bind(*args, **kwargs)
    except TypeError:
        return False
    return True


def _equivalent(ops, name: str, args, kwargs):
    op = getattr(ops, name, None)
    if not callable(op) or isinstance(op, type) or not _accepts(op, args, kwargs):
        return None
    return op


def _on_host(tree):
    leaves, treedef = pytree.flatten(tree)
    if any(isinstance(x, Tensor) for x in leaves):
        return None
    return pytree.unflatten(treedef, [np.asarray(x) if isinstance(x, Array) else x for x in leaves])


def _no_equivalent(what: str):
    raise TracingError(f"numpy's {what} has no hlojit equivalent that takes these arguments, and a traced "
                       f"Tensor has no value to give numpy, at {trace.user_site()}; use hlojit.ops")


def array_ufunc(ufunc, method: str, inputs, kwargs):
    if method == "__call__" and not kwargs:
        op = _equivalent(ops, ufunc.__name__, inputs, kwargs)
        if op is not None:
            return op(*inputs)
    host = _on_host((list(inputs), kwargs))
    if host is None:
        _no_equivalent(f"np.{ufunc.__name__}" + ("" if method == "__call__" else f".{method}")
                       + (f" with {', '.join(kwargs)}=" if kwargs else ""))
    return getattr(ufunc, method)(*host[0], **host[1])


def array_function(func, args, kwargs):
    name = func.__name__
    if func.__module__ == "numpy":
        if name in _METADATA and len(args) == 1 and not kwargs:
            return _METADATA[name](args[0])
        op = _equivalent(ops, name, args, kwargs)
        if op is not None:
            return op(*args, **kwargs)
    host = _on_host((list(args), kwargs))
    if host is None:
        _no_equivalent(f"{func.__module__}.{name}")
    return func(*host[0], **host[1])
