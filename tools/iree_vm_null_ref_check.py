"""Static check of a disassembled VM function: refs read after a MOVE/discard nulled their register.
State: register -> offset of the op that nulled it (a may-analysis; first reason kept)."""
import re, sys
lines = open(sys.argv[1]).read().splitlines()
blocks = {}; order = []; cur = None
for ln in lines:
    m = re.match(r"\[([0-9A-F]+)\]\^(bb\d+):", ln)
    if m:
        cur = m.group(2); blocks[cur] = []; order.append(cur); continue
    m = re.match(r"\[([0-9A-F]+)\]  (.*)", ln)
    if m:
        if cur is None:
            cur = "bb0"; blocks[cur] = []; order.append(cur)
        blocks[cur].append((m.group(1), m.group(2)))
REG = re.compile(r"%([rR])(\d+)")
state_in = {order[0]: {}}
work = [order[0]]; reports = {}
while work:
    b = work.pop()
    nulled = dict(state_in[b])
    for off, text in blocks[b]:
        is_def = re.match(r"%[\w:]+(, %[\w:]+)* = ", text)
        lhs, rhs = (text.split(" = ", 1) if is_def else ("", text))
        if text.startswith("vm.discard.refs"):
            for kind, n in REG.findall(text): nulled.setdefault(int(n), off + " discard")
            continue
        succs = re.findall(r"\^(bb\d+)\(([^()]*)\)", rhs) if "^bb" in rhs else []
        head = rhs.split("^bb")[0] if succs else rhs
        for kind, n in REG.findall(head):
            if int(n) in nulled: reports[(off, b, n)] = (text[:140], nulled[int(n)])
        for kind, n in REG.findall(head):
            if kind == "R": nulled.setdefault(int(n), off + " move")
        for kind, n in REG.findall(lhs): nulled.pop(int(n), None)
        for target, remap in succs:
            out = dict(nulled)
            for src, dst in re.findall(r"%([rR]\d+)->%(r\d+)", remap):
                s, d = int(src[1:]), int(dst[1:])
                if s in out: out[d] = out[s] + f" via {off} {src}->{dst}"
                else: out.pop(d, None)
                if src[0] == "R" and s != d: out.setdefault(s, off + f" remap-move {src}->{dst}")
            old = state_in.get(target)
            if old is None:
                state_in[target] = out; work.append(target)
            else:
                new = dict(out); new.update(old)
                if new.keys() != old.keys():
                    state_in[target] = new; work.append(target)
for k, v in sorted(reports.items()): print("READ OF NULLED REF", k, v)
print(len(reports), "reports")
