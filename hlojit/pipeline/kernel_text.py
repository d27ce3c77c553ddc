"""A small emitter of MLIR text for the hand-written kernels (eigh_kernel.py, svd_kernel.py): scf/arith/memref/
vector ops with fresh value names, since those algorithms are long enough that hand-numbered names would hide
them; and `executable`, the `hal.executable.source` every hand-written kernel's body is wrapped in (kernels.py's,
matmul_kernel.py's)."""
from __future__ import annotations

import itertools


class KernelText:
    """MLIR text of a kernel function body, line by line, each value a fresh name (sibling regions may reuse
    names in MLIR, nested ones may not shadow: fresh names sidestep both). Scalars are of `element`; vectors
    of `lanes` of them, masked at the ends of their ranges."""

    def __init__(self, element: str, lanes: int):
        self.lines, self.names, self.element, self.lanes = [], itertools.count(), element, lanes
        self.v = f"vector<{lanes}x{element}>"
        self.mask_type = f"vector<{lanes}xi1>"
        self.indent = 8

    def fresh(self, prefix="x") -> str:
        return f"%{prefix}{next(self.names)}"

    def emit(self, line: str):
        self.lines.append(" " * self.indent + line)

    def op(self, text: str, prefix="x") -> str:
        """`%name = text`, the name returned."""
        name = self.fresh(prefix)
        self.emit(f"{name} = {text}")
        return name

    # --- scalars ---
    def c(self, value, type_="index") -> str:
        return self.op(f"arith.constant {value} : {type_}", "c")

    def f(self, name: str, a: str, b: str | None = None) -> str:
        """A float op of one or two scalars."""
        operands = f"{a}, {b}" if b is not None else a
        return self.op(f"arith.{name} {operands} : {self.element}")

    def i(self, name: str, a: str, b: str) -> str:
        return self.op(f"arith.{name} {a}, {b} : index")

    def binding(self, index: int, type_: str, name: str) -> str:
        """The subspan of the executable's binding `index` as a memref of `type_` (kernels.py's layouts)."""
        return self.op(f"hal.interface.binding.subspan layout(#layout) binding({index}) alignment(64) "
                       f"offset({self.c(0)}) : {type_}", name)

    def load(self, memref: str, index: list, type_: str) -> str:
        return self.op(f"memref.load {memref}[{', '.join(index)}] : {type_}")

    def store(self, value: str, memref: str, index: list, type_: str):
        self.emit(f"memref.store {value}, {memref}[{', '.join(index)}] : {type_}")

    def cmpf(self, predicate: str, a: str, b: str) -> str:
        return self.op(f"arith.cmpf {predicate}, {a}, {b} : {self.element}")

    def cmpi(self, predicate: str, a: str, b: str) -> str:
        return self.op(f"arith.cmpi {predicate}, {a}, {b} : index")

    def select(self, condition: str, a: str, b: str, type_: str | None = None) -> str:
        return self.op(f"arith.select {condition}, {a}, {b} : {type_ or self.element}")

    # --- structured ---
    def for_(self, lo: str, hi: str, step: str, body, iters=()) -> list:
        """scf.for over [lo, hi); body(index, *carried values) emits the body and returns the values to yield;
        iters: [(initial value, type)]. Returns the loop's results."""
        index = self.fresh("k")
        args = [self.fresh("it") for _ in iters]
        result = self.fresh("r")
        types = [type_ for _, type_ in iters]
        head = f"scf.for {index} = {lo} to {hi} step {step}"
        if iters:
            carried = ", ".join(f"{a} = {value}" for a, (value, _) in zip(args, iters))
            named = result if len(iters) == 1 else f"{result}:{len(iters)}"
            self.emit(f"{named} = {head} iter_args({carried}) -> ({', '.join(types)}) {{")
        else:
            self.emit(head + " {")
        self.indent += 2
        out = body(index, *args) or []
        if iters:
            self.emit(f"scf.yield {', '.join(out)} : {', '.join(types)}")
        self.indent -= 2
        self.emit("}")
        return [result] if len(iters) == 1 else [f"{result}#{i}" for i in range(len(iters))]

    def if_(self, condition: str, then, else_=None, types=()):
        """scf.if; with `types`, both branches return values of them and the results are returned."""
        result = self.fresh("r")
        if types:
            named = result if len(types) == 1 else f"{result}:{len(types)}"
            self.emit(f"{named} = scf.if {condition} -> ({', '.join(types)}) {{")
        else:
            self.emit(f"scf.if {condition} {{")
        for branch, opening in ((then, None), (else_, "} else {")):
            if branch is None and not types:
                continue
            if opening:
                self.emit(opening)
            self.indent += 2
            out = branch() or []
            if types:
                self.emit(f"scf.yield {', '.join(out)} : {', '.join(types)}")
            self.indent -= 2
        self.emit("}")
        if not types:
            return None
        return result if len(types) == 1 else [f"{result}#{i}" for i in range(len(types))]

    def tiles(self, rows: str, columns: str, body, size: int = 16):
        """body(i, k) for i < rows, k < columns, by tiles of size x size: a copy that reads or writes along
        columns then thrashes L1 no more than along rows (rows 4 KiB apart alias)."""
        c0, c1, tile = self.c(0), self.c(1), self.c(size)

        def row_tile(i0):
            def column_tile(k0):
                last = self.op(f"arith.minui {self.i('addi', k0, tile)}, {columns} : index")
                self.for_(i0, self.op(f"arith.minui {self.i('addi', i0, tile)}, {rows} : index"), c1,
                          lambda i: self.for_(k0, last, c1, lambda k: body(i, k)))
            self.for_(c0, columns, tile, column_tile)
        self.for_(c0, rows, tile, row_tile)

    # --- vectors over [lo, hi), masked at hi ---
    def vfor(self, lo: str, hi: str, body, iters=()) -> list:
        """for_ in steps of `lanes`; body(index, mask, *carried)."""
        lanes = self.c(self.lanes)

        def masked(index, *carried):
            left = self.i("subi", hi, index)
            mask = self.op(f"vector.create_mask {left} : {self.mask_type}")
            return body(index, mask, *carried)
        return self.for_(lo, hi, lanes, masked, iters)

    def vread(self, memref: str, index: list, type_: str, mask: str) -> str:
        zero = self.c("0.0", self.element)
        return self.op(f"vector.transfer_read {memref}[{', '.join(index)}], {zero}, {mask} : {type_}, {self.v}")

    def vwrite(self, value: str, memref: str, index: list, type_: str, mask: str):
        self.emit(f"vector.transfer_write {value}, {memref}[{', '.join(index)}], {mask} : {self.v}, {type_}")

    def vf(self, name: str, a: str, b: str) -> str:
        return self.op(f"arith.{name} {a}, {b} : {self.v}")

    def splat(self, scalar: str) -> str:
        return self.op(f"vector.broadcast {scalar} : {self.element} to {self.v}")

    def vsum(self, vector: str) -> str:
        return self.op(f"vector.reduction <add>, {vector} : {self.v} into {self.element}")

    def while_(self, inits: list, condition, body) -> list:
        """scf.while over carried values inits [(value, type)]: condition(*carried) returns the i1 that keeps
        going, body(*carried) emits the body and returns the next values. Returns the loop's results."""
        types = [type_ for _, type_ in inits]
        before = [self.fresh("w") for _ in inits]
        after = [self.fresh("wa") for _ in inits]
        result = self.fresh("r")
        named = result if len(inits) == 1 else f"{result}:{len(inits)}"
        carried = ", ".join(f"{a} = {value}" for a, (value, _) in zip(before, inits))
        self.emit(f"{named} = scf.while ({carried}) : ({', '.join(types)}) -> ({', '.join(types)}) {{")
        self.indent += 2
        go = condition(*before)
        self.emit(f"scf.condition({go}) {', '.join(before)} : {', '.join(types)}")
        self.indent -= 2
        self.emit("} do {")
        self.emit(f"^bb0({', '.join(f'{a}: {type_}' for a, type_ in zip(after, types))}):")
        self.indent += 2
        out = body(*after)
        self.emit(f"scf.yield {', '.join(out)} : {', '.join(types)}")
        self.indent -= 2
        self.emit("}")
        return [result] if len(inits) == 1 else [f"{result}#{i}" for i in range(len(inits))]


def executable(symbol: str, workgroups: int, operands: int, results: int, body: str) -> tuple[str, str]:
    """(its layout's alias line, the text) of `hal.executable.source @{symbol}_executable`: `workgroups` of them
    (one per matrix of the batch, or per part of one); a storage buffer per operand, read-only, then one per
    result."""
    alias = f"#{symbol}_layout"
    layout = ",\n    ".join(["#hal.pipeline.binding<storage_buffer, ReadOnly>"] * operands
                             + ["#hal.pipeline.binding<storage_buffer>"] * results)
    return f"""{alias} = #hal.pipeline.layout<bindings = [
    {layout}]>""", f"""  hal.executable.source private @{symbol}_executable {{
    hal.executable.export public @{symbol} ordinal(0) layout({alias}) count(%device: !hal.device) -> (index, index, index) {{
      %c1 = arith.constant 1 : index
      %workgroups = arith.constant {workgroups} : index
      hal.return %workgroups, %c1, %c1 : index, index, index
    }}
    builtin.module {{
      func.func @{symbol}() {{
{body.replace("layout(#layout)", f"layout({alias})")}
      }}
    }}
  }}"""
