"""What every builder of dialects/ shares: creating an op at the current (or given) insertion point with a
location that names it, and the attribute and type helpers most of them need."""
from __future__ import annotations

from iree.compiler import ir


def create(name, results, operands=(), attributes=None, regions=0, *, loc=None, ip=None) -> ir.Operation:
    """`ir.Operation.create` of op `name`; with `loc`, the location is `"name"(loc)`: the op's name survives
    IREE's fusion, so explain can report it."""
    if loc is not None:
        loc = ir.Location.name(name, childLoc=loc)
    return ir.Operation.create(name, results=list(results), operands=list(operands),
                               attributes=attributes or {}, regions=regions, loc=loc, ip=ip)


def i64_array(values) -> ir.Attribute:
    return ir.DenseI64ArrayAttr.get([int(v) for v in values])


def with_shape(x: ir.Value, shape) -> ir.RankedTensorType:
    """A tensor type of `shape` with x's element type."""
    return ir.RankedTensorType.get(list(shape), ir.RankedTensorType(x.type).element_type)


def scalar_type(x: ir.Value) -> ir.RankedTensorType:
    """The 0-d tensor type of x's element type (a region's block arguments)."""
    return ir.RankedTensorType.get([], ir.RankedTensorType(x.type).element_type)


def dims_attr(kind: str, fields) -> ir.Attribute:
    """`#stablehlo.<kind><name = [..], ..., index_vector_dim = n>`; empty batching lists are left out,
    as MLIR prints them."""
    parts = []
    for name, value in fields:
        if isinstance(value, int):
            parts.append(f"{name} = {value}")
        elif value or "batching" not in name:
            parts.append(f"{name} = [{', '.join(str(int(v)) for v in value)}]")
    return ir.Attribute.parse(f"#stablehlo.{kind}<{', '.join(parts)}>")
