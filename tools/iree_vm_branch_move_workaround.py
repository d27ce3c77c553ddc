import sys, collections
from iree.compiler import ir
from iree.compiler.api import Session

def walk(op):
    yield op
    for r in op.regions:
        for b in r.blocks:
            for o in b.operations:
                yield from walk(o.operation)

def successor_ranges(op):
    n = len(op.operands)
    if op.name == "vm.br":
        return [(0, n)]
    if op.name == "vm.cond_br":
        seg = [int(x) for x in str(op.attributes["operandSegmentSizes"]).split(":")[1].strip(" >").split(",")]
        return [(seg[0], seg[0] + seg[1]), (seg[0] + seg[1], n)]
    return []

def is_ref(v):
    return str(v.type).startswith("!vm.ref")

def distinct_copies(module):
    count = 0
    i32 = ir.IntegerType.get_signless(32, context=module.context)
    for op in list(walk(module.operation)):
        for lo, hi in successor_ranges(op):
            seen = set()
            for i in range(lo, hi):
                v = op.operands[i]
                if not is_ref(v):
                    continue
                if v in seen:
                    with ir.InsertionPoint(op), op.location:
                        nz = ir.Operation.create("vm.cmp.nz.ref", results=[i32], operands=[v]).result
                        null = ir.Operation.create("vm.const.ref.zero", results=[v.type]).result
                        w = ir.Operation.create("vm.select.ref", results=[v.type], operands=[nz, v, null]).result
                    op.operands[i] = w
                    count += 1
                seen.add(v)
    return count

if __name__ == "__main__":
    s = Session(); ctx = s.context; ctx.load_all_available_dialects()
    m = ir.Module.parse(open(sys.argv[1]).read(), context=ctx)
    print("copies", distinct_copies(m))
    assert m.operation.verify()
    open(sys.argv[2], "w").write(m.operation.get_asm())
