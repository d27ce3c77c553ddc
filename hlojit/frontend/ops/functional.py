"""numpy's function transformations `apply_along_axis` and `vectorize`, as jax.numpy builds them: on `hj.vmap`.

Both trace the user's function once on one example and let vmap batch the traced StableHLO, so the result is
one batched program (no Python loop over the elements). `vectorize` takes numpy's generalized-ufunc
`signature=` ("(n),(n)->()", "(m,n)->(n)" ...): the core dimensions named there are what the function sees,
every dimension to their left is a loop dimension, and the loop dimensions broadcast as numpy's do.
"""
from __future__ import annotations

import functools
import re

from ...errors import ShapeError
from .. import eager as _eager, pytree, trace as _trace
from ..batching import vmap
from ..tensor import Tensor
from ._core import as_tensor, broadcast_shapes, fail, normalize_axis
from .shape import expand_dims, squeeze

__all__ = ["apply_along_axis", "vectorize"]

_DIMENSION = r"\w+"
_CORE = rf"\((?:{_DIMENSION}(?:,{_DIMENSION})*)?\)"
_CORES = rf"{_CORE}(?:,{_CORE})*"
_SIGNATURE = re.compile(rf"^{_CORES}->{_CORES}$")


def apply_along_axis(func1d, axis: int, arr, *args, **kwargs):
    """func1d applied to every 1-d slice of `arr` along `axis` (numpy's apply_along_axis): the dimensions of
    func1d's result take the place of `axis`. `args` and `kwargs` go to every call unchanged."""
    arr = as_tensor(arr, "apply_along_axis")
    axis = normalize_axis("apply_along_axis", axis, arr.ndim)

    def func(row):
        return func1d(row, *args, **kwargs)
    for i in range(1, arr.ndim - axis):   # the dimensions after axis: mapped, each put back last
        func = vmap(func, in_axes=i, out_axes=-1)
    for _ in range(axis):                 # the dimensions before axis: mapped in place
        func = vmap(func, in_axes=0, out_axes=0)
    return func(arr)


def vectorize(pyfunc, *, excluded=None, signature: str | None = None):
    """pyfunc made to take arrays and map over their loop dimensions (numpy's vectorize, as jax.numpy has it).

    Without `signature` pyfunc gets scalars; with one (a gufunc signature such as "(m,n),(n)->(m)") it gets
    arrays of the core dimensions named there. `excluded`: positions (ints) and keyword names (strs) of
    arguments passed to pyfunc unchanged. Other keyword arguments are mapped too, after the positional ones,
    as numpy maps them. Runs inside hj.jit, under hj.grad and hj.vmap, and eagerly on arrays."""
    excluded = frozenset(excluded or ())
    for e in excluded:
        if not isinstance(e, (int, str)) or isinstance(e, bool):
            raise TypeError(f"vectorize: excluded holds positions (int) and keyword names (str), not {e!r}")
    cores = _parse_signature(signature) if signature is not None else None

    @functools.wraps(pyfunc)
    def traced(*args, **kwargs):
        return _vectorized_call(pyfunc, excluded, signature, cores, args, kwargs)

    @functools.wraps(pyfunc)
    def wrapped(*args, **kwargs):
        if _trace.current() is None:
            return _eager.run(traced, *args, **kwargs)
        return traced(*args, **kwargs)
    return wrapped


def _parse_signature(signature: str) -> tuple[list[tuple], list[tuple]]:
    """([core dimension names of each input], [of each output]) of a gufunc signature."""
    text = re.sub(r"\s+", "", signature) if isinstance(signature, str) else None
    if text is None or not _SIGNATURE.match(text):
        raise ValueError(f"vectorize: {signature!r} is not a valid gufunc signature (e.g. '(m,n),(n)->(m)')")
    ins, outs = text.split("->")
    return ([tuple(re.findall(_DIMENSION, arg)) for arg in re.findall(_CORE, ins)],
            [tuple(re.findall(_DIMENSION, arg)) for arg in re.findall(_CORE, outs)])


def _split_excluded(pyfunc, excluded, args, kwargs):
    """(a function of the mapped arguments only, those arguments: positional ones first, then keyword ones)."""
    static_args = [(i, a) for i, a in enumerate(args) if i in excluded]
    static_kwargs = {k: v for k, v in kwargs.items() if k in excluded}
    mapped = [a for i, a in enumerate(args) if i not in excluded]
    names = [k for k in kwargs if k not in excluded]

    def call(*values):
        full = list(values[:len(mapped)])
        for i, a in static_args:
            full.insert(i, a)
        return pyfunc(*full, **dict(zip(names, values[len(mapped):])), **static_kwargs)
    return call, mapped + [kwargs[k] for k in names]


def _vectorized_call(pyfunc, excluded, signature, cores, args, kwargs):
    call, values = _split_excluded(pyfunc, excluded, args, kwargs)
    values = [as_tensor(v, "vectorize") for v in values]
    shown = ", ".join(str(tuple(v.shape)) for v in values)
    in_cores = cores[0] if cores is not None else [()] * len(values)
    if len(in_cores) != len(values):
        fail(TypeError, "vectorize", f"signature {signature!r} takes {len(in_cores)} mapped arguments, the call "
                                     f"gives {len(values)} (shapes {shown}; excluded {sorted(excluded, key=str)})")
    sizes = _core_sizes(signature, values, in_cores, shown)
    loop_shapes = [v.shape[:v.ndim - len(core)] for v, core in zip(values, in_cores)]
    loop = broadcast_shapes(f"vectorize (loop dimensions of {shown}, signature {signature!r})", *loop_shapes)
    func = _checked(call, signature, cores, sizes, shown)
    # JAX's scheme: size-1 loop dimensions are squeezed away and mapped with in_axes None, one vmap per loop
    # dimension (outermost first), so an argument missing a dimension is never broadcast to it
    squeezed, filled = [], []
    for v, shape in zip(values, loop_shapes):
        squeezed.append(squeeze(v, axis=tuple(i for i, n in enumerate(shape) if n == 1)))
        filled.append((1,) * (len(loop) - len(shape)) + tuple(shape))
    unmapped = []
    for dim in reversed(range(len(loop))):
        in_axes = tuple(None if shape[dim] == 1 else 0 for shape in filled)
        if all(a is None for a in in_axes):
            unmapped.append(dim)
        else:
            func = vmap(func, in_axes=in_axes)
    result = func(*squeezed)
    if not unmapped:
        return result
    leaves, tree = pytree.flatten(result)
    return pytree.unflatten(tree, [expand_dims(r, tuple(sorted(unmapped))) for r in leaves])


def _core_sizes(signature, values, in_cores, shown) -> dict:
    """The size of every core dimension name, checked to agree between the arguments."""
    sizes: dict = {}
    for position, (v, core) in enumerate(zip(values, in_cores)):
        if v.ndim < len(core):
            fail(ShapeError, "vectorize", f"argument {position} has shape {tuple(v.shape)}, fewer dimensions than "
                                          f"its core dimensions {_shown(core)} in signature {signature!r} "
                                          f"(argument shapes {shown})")
        for name, n in zip(core, v.shape[v.ndim - len(core):]):
            if sizes.setdefault(name, n) != n:
                fail(ShapeError, "vectorize", f"core dimension {name!r} is {sizes[name]} in one argument and {n} "
                                              f"in argument {position} (signature {signature!r}, argument shapes "
                                              f"{shown})")
    return sizes


def _shown(core: tuple) -> str:
    return "(" + ",".join(core) + ")"


def _checked(call, signature, cores, sizes, shown):
    """call, whose results are checked against the signature's output core dimensions (one example each)."""
    if cores is None:
        return call
    out_cores = cores[1]

    def checked(*values):
        result = call(*values)
        if isinstance(result, tuple) != (len(out_cores) > 1) or isinstance(result, tuple) and len(result) != len(
                out_cores):
            fail(ShapeError, "vectorize", f"signature {signature!r} has {len(out_cores)} outputs, the function "
                                          f"returned {_describe(result)} (argument shapes {shown})")
        outputs = [as_tensor(o, "vectorize") for o in (result if len(out_cores) > 1 else (result,))]
        known = dict(sizes)
        for position, (o, core) in enumerate(zip(outputs, out_cores)):
            if o.ndim != len(core) or any(known.setdefault(name, n) != n for name, n in zip(core, o.shape)):
                fail(ShapeError, "vectorize", f"output {position} has shape {tuple(o.shape)} per example, not the "
                                              f"core dimensions {_shown(core)} of signature {signature!r} "
                                              f"(sizes {known}; argument shapes {shown})")
        return tuple(outputs) if len(out_cores) > 1 else outputs[0]
    return checked


def _describe(result) -> str:
    if isinstance(result, Tensor):
        return f"one array of shape {tuple(result.shape)}"
    if isinstance(result, tuple):
        return f"a tuple of {len(result)}"
    return type(result).__name__
