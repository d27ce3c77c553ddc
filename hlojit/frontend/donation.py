"""Buffer donation: which donated arguments IREE may write a result into.

IREE 3.13 honours `{tf.aliasing_output = N : i32}` (JAX's donation attribute; `iree.abi.output` works too,
`jax.buffer_donor` is ignored): result N is written into that argument's buffer. But it does no hazard
analysis: measured, `transpose(p) + g`, `p[::-1] + g` and `(p + g, sum(p))` with p aliased to result 0 all
came out wrong, since a dispatch read p after (or while) another wrote into it. So hlojit asks for the alias
only where it is provably safe: everything computed from the argument is elementwise (each element read at
the index it is written, in dispatches ordered by their data) and flows only into that one result, as in an
optimizer's `p - lr * g`. Other donations still free the argument (same semantics), without the reuse.
"""
from __future__ import annotations

from iree.compiler import ir

from ..dialects import registry

# Ops that read each operand element at the index of the result element they compute: the registry's
# elementwise records, and the barrier (the identity).
_ELEMENTWISE = frozenset(registry.names(elementwise=True)) | registry.op_set({"stablehlo.optimization_barrier"},
                                                                            "the donation analysis")


def _uses(value):
    return [use.owner.operation for use in value.uses]


def _shape(value) -> tuple:
    return tuple(ir.RankedTensorType(value.type).shape)


def safe_alias(main, arg_index: int, used_outputs: set) -> int | None:
    """The result that argument `arg_index` of `main` may be aliased to, or None when no alias is safe."""
    arg = main.regions[0].blocks[0].arguments[arg_index]
    derived, frontier = {arg}, [arg]  # the argument and every value computed elementwise from it
    returned = None
    while frontier:
        value = frontier.pop()
        for owner in _uses(value):
            name = owner.name
            if name in ("func.return", "stablehlo.return"):
                if name == "stablehlo.return" or returned is not None or value == arg:
                    return None
                positions = [i for i, operand in enumerate(owner.operands) if operand == value]
                if len(positions) != 1 or positions[0] in used_outputs or value.type != arg.type:
                    return None
                returned = positions[0]
            elif name in _ELEMENTWISE and all(_shape(r) == _shape(arg) for r in owner.results):
                for result in owner.results:
                    if result not in derived:
                        derived.add(result)
                        frontier.append(result)
            else:
                return None
    return returned


def mark_donated(module: ir.Module, donated: tuple[int, ...]) -> dict[int, int]:
    """Set `tf.aliasing_output` on the donated arguments of @main that can safely hold a result.
    Returns {argument index: result index}."""
    main = module.body.operations[0]
    aliases: dict[int, int] = {}
    with module.context:
        arg_attrs = list(main.attributes["arg_attrs"]) if "arg_attrs" in main.attributes else \
            [ir.DictAttr.get({}) for _ in main.regions[0].blocks[0].arguments]
        for index in donated:
            result = safe_alias(main, index, set(aliases.values()))
            if result is None:
                continue
            aliases[index] = result
            attrs = {a.name: a.attr for a in ir.DictAttr(arg_attrs[index])}
            attrs["tf.aliasing_output"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(32), result)
            arg_attrs[index] = ir.DictAttr.get(attrs)
        if aliases:
            main.attributes["arg_attrs"] = ir.ArrayAttr.get(arg_attrs)
    return aliases
