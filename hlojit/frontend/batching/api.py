"""`vmap(fn, in_axes=0, out_axes=0, axis_size=None)`: JAX's vmap, as a transformation of the traced StableHLO.

Inside a trace, vmap traces `fn` once on one example of each mapped input (into a scratch block, see
core.py) and emits the batched program through the batching rules. Outside a trace it jits itself on the
default backend and runs, as grad does. `in_axes` and `out_axes` are an int (negative counts from the
end), None (not mapped) or pytrees of them: `in_axes` a tuple with one entry per positional argument,
each entry a prefix of that argument's tree; keyword arguments are mapped along axis 0.
"""
from __future__ import annotations

import functools
import inspect

from iree.compiler import ir

from ... import errors
from .. import pytree, trace as _trace
from ..autodiff.api import _LazyJit
from ..ops._core import as_tensor, describe, wrap
from ..tensor import Tensor
from . import core

__all__ = ["vmap"]


def vmap(fn, in_axes=0, out_axes=0, axis_size: int | None = None):
    """fn mapped over a new axis of its inputs: `vmap(f)(xs)[i] == f(xs[i])`, computed as one batched
    program (no Python loop). in_axes/out_axes say which axis of each input/output holds the batch (None:
    the input is the same for every example; an output must then be too); axis_size gives the size when no
    input is mapped."""
    if isinstance(in_axes, list):
        in_axes = tuple(in_axes)

    @functools.wraps(fn)
    def run(*args, **kwargs):
        if _trace.current() is None:
            return run.eager(*args, **kwargs)
        return _batched_call(fn, in_axes, out_axes, axis_size, args, kwargs)
    run.eager = _LazyJit(run)
    return run


# --- in_axes / out_axes against the arguments' trees -----------------------------------------------

def _is_axis(spec) -> bool:
    return spec is None or (isinstance(spec, int) and not isinstance(spec, bool))


def _prefix_axes(spec, value, what: str) -> list:
    """One axis (int or None) per leaf of `value`, from `spec`, a tree prefix of it."""
    if _is_axis(spec):
        return [spec] * len(pytree.flatten(value)[0])
    if isinstance(spec, (tuple, list)) and isinstance(value, (tuple, list)) and len(spec) == len(value):
        return [a for s, v in zip(spec, value) for a in _prefix_axes(s, v, what)]
    if isinstance(spec, dict) and isinstance(value, dict) and set(spec) == set(value):
        return [a for k in sorted(value, key=repr) for a in _prefix_axes(spec[k], value[k], what)]
    raise errors.TracingError(f"vmap: {what} {spec!r} does not match the structure of "
                              f"{pytree.describe(pytree.flatten(value)[1])} (at {_trace.user_site()}); give an "
                              "int, None, or a tree of them with the same structure")


def _argument_names(fn, n: int) -> list[str]:
    try:
        params = [p for p in inspect.signature(fn).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    return [params[i].name if i < len(params) else f"args[{i}]" for i in range(n)]


def _mapped_inputs(fn, in_axes, args, kwargs):
    """(leaves, treedef, axes, names) of (args, kwargs): axes normalised (None where not mapped)."""
    if not _is_axis(in_axes) and not (isinstance(in_axes, tuple) and len(in_axes) == len(args)):
        raise errors.TracingError(f"vmap: in_axes {in_axes!r} must be an int, None, or a tuple with one entry per "
                                  f"positional argument ({len(args)} here) (at {_trace.user_site()})")
    specs = in_axes if isinstance(in_axes, tuple) else (in_axes,) * len(args)
    names, axes, leaves = [], [], []
    for name, spec, arg in zip(_argument_names(fn, len(args)), specs, args):
        paths: list = []
        arg_leaves = pytree.flatten(arg, None, name, paths)[0]
        axes += _prefix_axes(spec, arg, "in_axes")
        leaves += arg_leaves
        names += paths
    for key in sorted(kwargs, key=repr):   # pytree.flatten's order of a dict
        paths = []
        arg_leaves = pytree.flatten(kwargs[key], None, key, paths)[0]
        leaves += arg_leaves
        axes += [0] * len(arg_leaves)
        names += paths
    tree = pytree.flatten((tuple(args), kwargs))[1]
    return leaves, tree, axes, names


def _normalized(axis: int, ndim: int, what: str, name: str, shown: str) -> int:
    if not -ndim <= axis < ndim:
        raise errors.ShapeError(f"vmap: {what} {axis} is out of range for {name} of shape {shown} (rank "
                                f"{ndim}) (at {_trace.user_site()})")
    return axis % ndim


def _batch_size(mapped, axis_size) -> int:
    sizes = {t.shape[axis] for t, axis, _ in mapped}
    if len(sizes) > 1:
        shown = ", ".join(f"{name} has size {t.shape[axis]} at axis {axis}" for t, axis, name in mapped)
        raise errors.ShapeError(f"vmap: inconsistent sizes of the mapped axes: {shown} (at {_trace.user_site()})")
    if axis_size is not None:
        if sizes and sizes != {axis_size}:
            raise errors.ShapeError(f"vmap: axis_size={axis_size} but the mapped inputs have size {sizes.pop()} "
                                    f"(at {_trace.user_site()})")
        return int(axis_size)
    if not sizes:
        raise errors.TracingError(f"vmap: no input is mapped (in_axes are all None): give axis_size "
                                  f"(at {_trace.user_site()})")
    return sizes.pop()


# --- the transformation ----------------------------------------------------------------------------

def _batched_call(fn, in_axes, out_axes, axis_size, args, kwargs):
    leaves, tree, axes, names = _mapped_inputs(fn, in_axes, args, kwargs)
    mapped = []
    for leaf, axis, name in zip(leaves, axes, names):
        if axis is None:
            continue
        if not isinstance(leaf, Tensor) and not hasattr(leaf, "shape"):
            raise errors.ShapeError(f"vmap: {name} is {describe(leaf)}, which has no axis {axis} to map "
                                    f"(at {_trace.user_site()}); give it in_axes None")
        t = as_tensor(leaf, "vmap")
        axis = _normalized(axis, t.ndim, "in_axes", name, str(t.shape))
        mapped.append((t, axis, name))
    size = _batch_size(mapped, axis_size)
    examples = [(t.shape[:a] + t.shape[a + 1:], t.dtype) for t, a, _ in mapped]
    tr = _trace.current()
    start = core.region_count()
    scratch = core.Scratch(core.arg_types(examples))
    try:
        walk = core.Walk(size)
        per_example, k = list(leaves), 0
        for i, axis in enumerate(axes):
            if axis is not None:
                t, a, _ = mapped[k]
                arg = scratch.block.arguments[k]
                per_example[i] = wrap(arg, examples[k][0], t.dtype, t.weak)
                walk.env[arg] = core.Batched(t, a)
                k += 1
        call_args, call_kwargs = pytree.unflatten(tree, per_example)
        with ir.InsertionPoint(scratch.block):
            out = fn(*call_args, **call_kwargs)
        mid = core.region_count()
        walk.block(scratch.ops)
        result = _outputs(out, out_axes, walk)
        recorded = list(tr.autodiff_regions.items())[start:mid]
        core.batch_regions([region for _, region in recorded], walk)
        for key, _ in recorded:
            tr.autodiff_regions.pop(key, None)
    except BaseException:
        tr.forget_regions(start)
        scratch.erase()
        raise
    scratch.erase()
    return result


def _outputs(out, out_axes, walk: core.Walk):
    leaves, tree = pytree.flatten(out)
    axes = _prefix_axes(out_axes, out, "out_axes")
    paths = pytree.leaf_paths(tree)
    results = []
    for leaf, axis, path in zip(leaves, axes, paths):
        if isinstance(leaf, Tensor):
            b = walk.get(leaf.value)
            weak = leaf.weak
        else:
            b = core.Batched(as_tensor(leaf, "vmap"), None)
            weak = b.t.weak
        name = f"the output{path}"
        if axis is None:
            if b.dim is not None:
                raise errors.ShapeError(f"vmap: out_axes None for {name}, which differs between examples "
                                        f"(at {_trace.user_site()}); give it an axis")
            results.append(b.t)
            continue
        ndim = len(core.per_example_shape(b)) + 1
        axis = _normalized(axis, ndim, "out_axes", name, str(core.per_example_shape(b)))
        t = core.at(b, axis, walk.size)
        results.append(wrap(t.value, t.shape, t.dtype, weak))
    return pytree.unflatten(tree, results)
