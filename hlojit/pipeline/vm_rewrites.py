"""Rewrites of IREE's own VM-phase module (after `--compile-to=vm`, before bytecode), on every target.

IREE 3.13's VM register allocator (`remapSuccessorRegisters`) nulls a ref that one branch passes twice to the
same successor: it drops the (src == dst) move of the block argument coalesced with the operand, yet marks
the *last* occurrence of that register in the successor's list as a MOVE, so the register the successor reads
is null afterwards. A null !hal.buffer then reaches `hal.command_buffer.copy_buffer` and the call fails at run
time ("OUT_OF_RANGE; indirect buffer reference slot 0 ..."): two 2x2 `eigvals` in one module did. Repeated
refs come from StableHLO while loops whose initial values repeat a value and from IREE's own shared fences and
packed slabs, so any module with loops can meet it. The memoization flags only move the hazard, and splitting
the edge through a new block is worse (docs/iree_vm_branch_move.md has the bytecode and the checks).

`distinct_branch_refs` gives each repeat its own SSA value, `vm.select.ref (vm.cmp.nz.ref %v), %v, null`: the
same ref (or null where it is null), which the allocator cannot coalesce with the first occurrence.
"""
from __future__ import annotations

from iree.compiler import ir

from .legalize import walk


def _successor_operands(op) -> list[range]:
    """The operand positions each successor of a VM branch receives, one range per successor."""
    count = len(op.operands)
    if op.name == "vm.br":
        return [range(count)]
    if op.name == "vm.cond_br":   # operands: the condition, then the true successor's, then the false one's
        _, true_count, _ = ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"])
        return [range(1, 1 + true_count), range(1 + true_count, count)]
    return []


def _is_ref(value: ir.Value) -> bool:
    return str(value.type).startswith("!vm.ref")


def _copy_of(ref: ir.Value) -> ir.Value:
    i32 = ir.IntegerType.get_signless(32)
    not_null = ir.Operation.create("vm.cmp.nz.ref", results=[i32], operands=[ref]).result
    null = ir.Operation.create("vm.const.ref.zero", results=[ref.type]).result
    return ir.Operation.create("vm.select.ref", results=[ref.type], operands=[not_null, ref, null]).result


def distinct_branch_refs(module_op: ir.Operation) -> int:
    """Give every ref a branch passes to one successor more than once a distinct value; returns how many."""
    count = 0
    for op in [op for op in walk(module_op) if op.name in ("vm.br", "vm.cond_br")]:
        for positions in _successor_operands(op):
            seen = set()
            for i in positions:
                value = op.operands[i]
                if not _is_ref(value):
                    continue
                if value in seen:
                    with ir.InsertionPoint(op), op.location:
                        op.operands[i] = _copy_of(value)
                    count += 1
                seen.add(value)
    return count
