"""Batching rules of reduce, reduce_window, select_and_scatter, sort, dot_general and convolution.

reduce, reduce_window and sort keep the batch where it is and shift their dimensions past it.
dot_general makes a batch shared by both operands one of its batching dimensions, and one operand's
batch a free dimension of that operand. convolution folds the batch into the input's batch dimension
(only the input is batched), into the kernel's output features (only the kernel), or, when both are,
into the feature groups (JAX's rule). Values that differ between examples in a scalar body, and
initial values that do, have no batched form: those ops run lane by lane.
"""
from __future__ import annotations

import numpy as np
from iree.compiler import ir

from ...dialects import stablehlo as hlo
from ...dialects.types import dot_dimensions
from ..autodiff.rules_reduce import _axis_into, _axis_out_of, _parse_spec
from ..ops._core import emit
from .core import Batched, at, i64_array, recreate, register, shift, tensor, with_batch
from .rules_control import lane_by_lane


def _first_batched(args) -> int:
    return next(b.dim for b in args if b.dim is not None)


@register("reduce")
def _reduce(p):
    n = len(p.args) // 2
    inputs, inits = p.args[:n], p.args[n:]
    if p.captures_batched or any(b.dim is not None for b in inits):
        return lane_by_lane(p)
    dims = p.ints("dimensions")
    dim = _first_batched(inputs)
    out_dim = dim - sum(d < dim for d in dims)
    shapes = [with_batch(s, p.size, out_dim) for s in p.result_shapes()]
    results = recreate(p, [at(b, dim, p.size) for b in inputs] + [b.t for b in inits], shapes,
                       {"dimensions": i64_array(shift(dims, dim))})
    return [Batched(t, out_dim) for t in results]


def _window_with_batch(p, dim: int) -> dict:
    """A windowed op's attributes with the batch at `dim` one more window dimension: size, stride and dilations
    1, no padding (reduce_window's and select_and_scatter's)."""
    attrs = {}
    for name in ("window_dimensions", "window_strides", "base_dilations", "window_dilations"):
        if name in p.op.attributes:
            values = p.ints(name)
            values.insert(dim, 1)
            attrs[name] = i64_array(values)
    if "padding" in p.op.attributes:
        padding = np.array(p.op.attributes["padding"], dtype=np.int64).reshape(-1, 2)
        attrs["padding"] = ir.DenseElementsAttr.get(np.insert(padding, dim, [0, 0], axis=0))
    return attrs


@register("reduce_window")
def _reduce_window(p):
    n = len(p.args) // 2
    inputs, inits = p.args[:n], p.args[n:]
    if p.captures_batched or any(b.dim is not None for b in inits):
        return lane_by_lane(p)
    dim = _first_batched(inputs)
    shapes = [with_batch(s, p.size, dim) for s in p.result_shapes()]
    results = recreate(p, [at(b, dim, p.size) for b in inputs] + [b.t for b in inits], shapes,
                       _window_with_batch(p, dim))
    return [Batched(t, dim) for t in results]


@register("select_and_scatter")
def _select_and_scatter(p):
    """The batch one more window dimension of size 1 (each example's windows its own), operand and source both
    batched there; a batched init value, or regions that capture batched values, run lane by lane."""
    operand, source, init = p.args
    if p.captures_batched or init.dim is not None:
        return lane_by_lane(p)
    dim = _first_batched([operand, source])
    shape = with_batch(p.result_shapes()[0], p.size, dim)
    (result,) = recreate(p, [at(operand, dim, p.size), at(source, dim, p.size), init.t], [shape],
                         _window_with_batch(p, dim))
    return [Batched(result, dim)]


@register("sort")
def _sort(p):
    if p.captures_batched:
        return lane_by_lane(p)
    dim = _first_batched(p.args)
    axis = p.int("dimension")
    attrs = {"dimension": ir.IntegerAttr.get(ir.IntegerType.get_signless(64), axis + (axis >= dim))}
    shapes = [with_batch(s, p.size, dim) for s in p.result_shapes()]
    results = recreate(p, [at(b, dim, p.size) for b in p.args], shapes, attrs)
    return [Batched(t, dim) for t in results]


# --- dot_general -----------------------------------------------------------------------------------

def _free(rank: int, *taken) -> list[int]:
    used = {d for dims in taken for d in dims}
    return [d for d in range(rank) if d not in used]


@register("dot_general")
def _dot_general(p):
    lhs, rhs = p.args
    lb, rb, lc, rc = dot_dimensions(p.op)
    if lhs.dim is not None and rhs.dim is not None:
        x, y = at(lhs, 0, p.size), at(rhs, 0, p.size)
        lb, rb, lc, rc = [0] + shift(lb, 0), [0] + shift(rb, 0), shift(lc, 0), shift(rc, 0)
        out_dim = 0
    elif lhs.dim is not None:
        x, y = lhs.t, rhs.t
        lb, lc = shift(lb, lhs.dim), shift(lc, lhs.dim)
        out_dim = len(lb) + _free(x.ndim, lb, lc).index(lhs.dim)
    else:
        x, y = lhs.t, rhs.t
        rb, rc = shift(rb, rhs.dim), shift(rc, rhs.dim)
        out_dim = len(lb) + len(_free(x.ndim, lb, lc)) + _free(y.ndim, rb, rc).index(rhs.dim)
    result = p.op.results[0]
    value = emit(hlo.dot_general, x.value, y.value, lhs_batch=lb, rhs_batch=rb, lhs_contract=lc, rhs_contract=rc,
                 dtype=tensor(result).dtype)
    for name in p.op.attributes:   # precision and algorithm, as the per-example op had them
        if name != "dot_dimension_numbers":
            value.owner.attributes[name] = p.op.attributes[name]
    return [Batched(tensor(value), out_dim)]


# --- convolution -----------------------------------------------------------------------------------

def _group_count(p, name: str) -> int:
    return p.int(name, 1)


@register("convolution")
def _convolution(p):
    lhs, rhs = p.args
    (lhs_spec, rhs_spec, out_spec) = _parse_spec(p.text("dimension_numbers"))
    groups, batch_groups = _group_count(p, "feature_group_count"), _group_count(p, "batch_group_count")
    size = p.size
    out_shape = list(p.result_shapes()[0])
    i64 = ir.IntegerType.get_signless(64)
    if batch_groups != 1 or (lhs.dim is None and groups != 1):
        return lane_by_lane(p)
    if rhs.dim is None:         # the examples become more images of one batch
        x = _axis_into(lhs.dim, lhs_spec[0], lhs.t)
        out_shape[out_spec[0]] *= size
        (out,) = recreate(p, [x, rhs.t], [out_shape])
        return [Batched(_axis_out_of(out_spec[0], size, out), out_spec[0])]
    if lhs.dim is None:         # the examples' kernels become more output features of one kernel
        k = _axis_into(rhs.dim, rhs_spec[0], rhs.t)
        out_shape[out_spec[1]] *= size
        (out,) = recreate(p, [lhs.t, k], [out_shape])
        return [Batched(_axis_out_of(out_spec[1], size, out), out_spec[1])]
    x = _axis_into(lhs.dim, lhs_spec[1], lhs.t)     # each example is a feature group of its own
    k = _axis_into(rhs.dim, rhs_spec[0], rhs.t)
    out_shape[out_spec[1]] *= size
    (out,) = recreate(p, [x, k], [out_shape], {"feature_group_count": ir.IntegerAttr.get(i64, groups * size)})
    return [Batched(_axis_out_of(out_spec[1], size, out), out_spec[1])]


