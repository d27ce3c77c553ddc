"""Plane rotations of a matrix's rows recorded by one kernel dispatch and applied by the next on every core, as
MLIR text on a kernel_text.KernelText (svd_kernel.py's QR steps, eigh_kernel.py's QL sweeps).

An implicitly shifted QR step on a bidiagonal computes its rotations from two vectors (one core's work, scalar
and sequential) and applies each to two adjacent rows of U^T and of V^T (n x m and n x n: the bulk of the
flops). Applying them as they come streams both matrices through the cache once a step; recorded, they are
applied later a chunk of columns at a time, that chunk of every row staying in cache through all of them, with a
workgroup per chunk (every core on one matrix), GROUP chains at once so that each row is loaded and stored once
for them (svd 1024² f32, the 2-vCPU Xeon, 2026-12-06: the rotations 150 ms on one core one chain at a time, 99
two at a time; three or four no faster). tql2's sweeps are chains of W's rows in reverse order.

A step's rotations form a chain: rotation j of rows (j, j+1) for j = l .. m-1 in turn, (x, y) <- (c x + s y,
c y - s x), each rotated matrix with its own (c, s). The buffer holds a batch's rotations, a (c, s) pair for each
matrix (svd: V's, then U's; eigh: W's), the record (i32) each chain's first and last rows in order; a chain's
rotations start where the previous chain's end. Where the buffer fills, the recording dispatch applies it itself and
starts again (`flush`).

The record also carries the permutation and the sign flips the QR steps decide for converged rows: those rows
are final (no later rotation touches them), so the recording dispatch keeps row order[r] of its matrices for
result row r, negated where flip[order[r]] is 1, and the applying dispatch writes them so.
"""
from __future__ import annotations

from .kernel_text import KernelText

CHUNK_VECTORS = 8         # vectors of a row a workgroup takes through the buffered chains at once (chunk_columns)
MIN_WORKGROUPS = 16       # a matrix's workgroups at least, where it is big enough for every core (SPREAD_FROM)
SPREAD_FROM = 512         # rows this long or longer: the rotations run on local-task's workers
BUFFER_BYTES = 64 << 20   # a batch's buffered rotations at most
HEADER = 2                # the record's chains used, rotations used
V_PAIR, U_PAIR = 0, 1     # where a rotation's (c, s) of V^T and of U^T lie among its four values
GROUP = 2                 # chains applied at once (each row loaded and stored once for them)


def sizes(batch: int, n: int, element: str, pairs: int) -> tuple[int, int]:
    """(chains, rotations) a buffer holds: QR on the bidiagonal of a random n x n f32 matrix took ~1.5 steps a
    value, 0.75-0.76 n^2 rotations of each matrix in all (n = 256, 1024; 2026-12-06), so 5/4 n^2 leaves room; at
    most BUFFER_BYTES for the batch, at least one longest chain (n - 1)."""
    size = 4 if element == "f32" else 8
    rotations = max(n, min(5 * n * n // 4, BUFFER_BYTES // (batch * 2 * pairs * size)))
    return max(32, min(4 * n, rotations)), rotations


class RotationBuffer:
    """The buffer and record of a batch at two bindings of the kernel `b` (workgroup's matrix `bi`), rotations of
    `pairs` matrices (each its own (c, s))."""

    def __init__(self, b: KernelText, bi: str, batch: int, n: int, first_binding: int, pairs: int, chunk: int):
        self.b, self.bi, self.n, self.chunk = b, bi, n, chunk
        self.chains, self.capacity = sizes(batch, n, b.element, pairs)
        buffer_dims, record_dims = buffer_shapes(batch, n, b.element, pairs)
        self.buffer_type = f"memref<{'x'.join(map(str, buffer_dims))}x{b.element}>"
        self.record_type = f"memref<{'x'.join(map(str, record_dims))}xi32>"
        self.buffer = b.binding(first_binding, self.buffer_type, "rotations")
        self.record = b.binding(first_binding + 1, self.record_type, "record")

    # --- the record: [chains used, rotations used, first rows (chains), last rows (chains), order (n), flip (n)]
    def _at(self, field: str, index: str | None = None) -> str:
        b = self.b
        base = {"chains": 0, "rotations": 1, "first": HEADER, "last": HEADER + self.chains,
                "order": HEADER + 2 * self.chains, "flip": HEADER + 2 * self.chains + self.n}[field]
        return b.c(base) if index is None else b.i("addi", index, b.c(base))

    def get(self, field: str, index: str | None = None) -> str:
        value = self.b.load(self.record, [self.bi, self._at(field, index)], self.record_type)
        return self.b.op(f"arith.index_cast {value} : i32 to index")

    def set(self, value: str, field: str, index: str | None = None):
        cast = self.b.op(f"arith.index_cast {value} : index to i32")
        self.b.store(cast, self.record, [self.bi, self._at(field, index)], self.record_type)

    def start(self):
        """An empty buffer, order the identity, no flips."""
        b, c0, c1 = self.b, self.b.c(0), self.b.c(1)
        self.set(c0, "chains")
        self.set(c0, "rotations")
        def identity(r):
            self.set(r, "order", r)
            self.set(c0, "flip", r)
        b.for_(c0, b.c(self.n), c1, identity)

    # --- recording ---
    def chain(self, l: str, m: str, flush) -> tuple[str, str]:
        """Opens the chain of rows l .. m (flush() first where it would not fit): (the buffer's index of its first
        rotation, the chains used with it); store() its rotations, then close() with the second value."""
        b, c0 = self.b, self.b.c(0)
        used, rotations = self.get("chains"), self.get("rotations")
        full = b.op(f"arith.ori {b.cmpi('eq', used, b.c(self.chains))}, "
                    f"{b.cmpi('ugt', b.i('addi', rotations, b.i('subi', m, l)), b.c(self.capacity))} : i1")
        def emptied():
            flush()
            return [c0, c0]
        used, offset = b.if_(full, emptied, lambda: [used, rotations], types=["index", "index"])
        self.set(l, "first", used)
        self.set(m, "last", used)
        self.set(b.i("addi", offset, b.i("subi", m, l)), "rotations")
        return offset, b.i("addi", used, b.c(1))

    def close(self, used: str):
        self.set(used, "chains")

    def store(self, at: str, pair: int, c: str, s: str):
        b = self.b
        b.store(c, self.buffer, [self.bi, at, b.c(2 * pair)], self.buffer_type)
        b.store(s, self.buffer, [self.bi, at, b.c(2 * pair + 1)], self.buffer_type)

    def flush(self, matrices: list):
        """The buffered chains applied here to every column of `matrices` [(memref, type, pair, row width as an
        index value)], a chain at a time (rare: a full buffer or a deflation), and the buffer emptied."""
        b, c0 = self.b, self.b.c(0)
        for matrix, type_, pair, width in matrices:
            b.for_(c0, width, b.c(self.chunk), lambda k0: self.apply(matrix, type_, pair, k0, width, group=1))
        self.close(c0)
        self.set(c0, "rotations")

    # --- applying ---
    def apply(self, matrix: str, type_: str, pair: int, k0: str, width: str, group: int | None = None):
        """The buffered chains applied to `matrix`'s rows (of `width`) at columns k0 .. k0 + self.chunk, `group`
        (GROUP) chains at a time, a chain alone where fewer are left or their rows span fewer than `group`: one
        loop with two bodies (four, one for each case, took ~2x the compile)."""
        b, c0 = self.b, self.b.c(0)
        group = GROUP if group is None else group
        ks = [b.i("addi", k0, b.c(j * b.lanes)) for j in range(self.chunk // b.lanes)]
        masks = [b.op(f"vector.create_mask {b.i('subi', width, k)} : {b.mask_type}") for k in ks]
        rows = _Rows(b, self.bi, matrix, type_, ks, masks)
        used = self.get("chains")

        def chains_from(index, offset, count):
            """[(first row, last row, offset of its rotations)] of `count` chains from `index`, the offset past
            them, and the rows they span (lo, hi)."""
            out = []
            for g in range(count):
                at = b.i("addi", index, b.c(g)) if g else index
                l, m = self.get("first", at), self.get("last", at)
                out.append((l, m, offset))
                offset = b.i("addi", offset, b.i("subi", m, l))
            lo, hi = out[0][0], out[0][1]
            for l, m, _ in out[1:]:
                lo, hi = b.op(f"arith.minui {lo}, {l} : index"), b.op(f"arith.maxui {hi}, {m} : index")
            return out, offset, (lo, hi)

        def applied(index, offset, count):
            chains, past, (lo, hi) = chains_from(index, offset, count)
            self._wavefront(rows, pair, chains, lo, hi)
            return [b.i("addi", index, b.c(count)), past]

        def step(index, offset):
            if group == 1:
                return applied(index, offset, 1)
            def spans():   # the next `group` chains exist and span `group` rows or more
                _, _, (lo, hi) = chains_from(index, offset, group)
                return [b.cmpi("uge", b.i("subi", hi, lo), b.c(group - 1))]
            together = b.if_(b.cmpi("ule", b.i("addi", index, b.c(group)), used), spans,
                             lambda: [b.op("arith.constant false")], types=["i1"])
            return b.if_(together, lambda: applied(index, offset, group), lambda: applied(index, offset, 1),
                         types=["index", "index"])
        b.while_([(c0, "index"), (c0, "index")], lambda index, offset: b.cmpi("ult", index, used), step)

    def _rotation(self, pair: int, chain, j: str) -> tuple[str, str]:
        """Splats of (c, s) of `chain`'s rotation of rows (j, j + 1): the identity's (1, 0) outside its rows."""
        b, (l, m, offset) = self.b, chain
        inside = b.op(f"arith.andi {b.cmpi('uge', j, l)}, {b.cmpi('ult', j, m)} : i1")
        at = b.i("addi", offset, b.select(inside, b.i("subi", j, l), b.c(0), "index"))
        c = b.load(self.buffer, [self.bi, at, b.c(2 * pair)], self.buffer_type)
        s = b.load(self.buffer, [self.bi, at, b.c(2 * pair + 1)], self.buffer_type)
        one, zero = b.c("1.0", b.element), b.c("0.0", b.element)
        return b.splat(b.select(inside, c, one)), b.splat(b.select(inside, s, zero))

    def _wavefront(self, rows, pair: int, chains: list, lo: str, hi: str):
        """`chains` (G of them, rows within lo .. hi, hi - lo >= G - 1) applied at once: at step t the row t + 1
        is loaded, chain g rotates rows (t - g, t - g + 1), each handing the row it finished to the next, and
        row t - G + 1 is stored, finished by all (G loads and stores of a row, not one each a chain)."""
        b, G = self.b, len(chains)
        def rotate(g, t, carried, y):   # (the finished row t - g, chain g's new carried row)
            j = b.i("subi", t, b.c(g)) if g else t
            cv, sv = self._rotation(pair, chains[g], j)
            out = [b.vf("addf", b.vf("mulf", cv, x), b.vf("mulf", sv, v)) for x, v in zip(carried, y)]
            return out, [b.vf("subf", b.vf("mulf", cv, v), b.vf("mulf", sv, x)) for x, v in zip(carried, y)]

        carried = [rows.read(lo)] + [None] * (G - 1)
        for p in range(G - 1):                        # chain p + 1 starts at step lo + p
            t = b.i("addi", lo, b.c(p))
            y = rows.read(b.i("addi", t, b.c(1)))
            for g in range(p + 1):
                y, carried[g] = rotate(g, t, carried[g], y)
            carried[p + 1] = y

        def step(t, *flat):
            state = [list(flat[g * rows.count:(g + 1) * rows.count]) for g in range(G)]
            y = rows.read(b.i("addi", t, b.c(1)))
            for g in range(G):
                y, state[g] = rotate(g, t, state[g], y)
            rows.write(y, b.i("subi", t, b.c(G - 1)))
            return [x for xs in state for x in xs]
        flat = b.for_(b.i("addi", lo, b.c(G - 1)), hi, b.c(1), step, [(x, b.v) for xs in carried for x in xs])
        carried = [flat[g * rows.count:(g + 1) * rows.count] for g in range(G)]

        for p in range(G - 1):                        # chain p finished at step hi - 1
            t = b.i("addi", hi, b.c(p))
            y = carried[p]
            for g in range(p + 1, G):
                y, carried[g] = rotate(g, t, carried[g], y)
            rows.write(y, b.i("subi", t, b.c(G - 1)))
        rows.write(carried[G - 1], hi)


class _Rows:
    """Columns ks (vectors, masked) of a matrix's rows."""

    def __init__(self, b: KernelText, bi: str, matrix: str, type_: str, ks: list, masks: list):
        self.b, self.bi, self.matrix, self.type_, self.ks, self.masks = b, bi, matrix, type_, ks, masks
        self.count = len(ks)

    def read(self, r: str) -> list:
        return [self.b.vread(self.matrix, [self.bi, r, k], self.type_, mask) for k, mask in zip(self.ks, self.masks)]

    def write(self, xs: list, r: str):
        for x, k, mask in zip(xs, self.ks, self.masks):
            self.b.vwrite(x, self.matrix, [self.bi, r, k], self.type_, mask)


def chunk_columns(lanes: int, widths: tuple[int, ...]) -> int:
    """The columns of the rotated matrices (rows of `widths`) a workgroup takes: CHUNK_VECTORS vectors, or half as
    many where that leaves a matrix fewer than MIN_WORKGROUPS and its rows are SPREAD_FROM or longer. f32 on the
    2-vCPU Xeon (2026-12-06): eigh 1024² (8 chunks of 8 vectors) 120 -> 105 ms on local-task with 4 vectors,
    where 8 vectors ran 1.6x the CPU time on two cores as on one; 256² (local-sync) 2.88 -> 2.69 ms with 8; svd
    1024² (16 chunks) about the same with either."""
    wide = CHUNK_VECTORS * lanes
    if max(widths) >= SPREAD_FROM and sum(-(-width // wide) for width in widths) < MIN_WORKGROUPS:
        return wide // 2
    return wide


def buffer_shapes(batch: int, n: int, element: str, pairs: int) -> tuple[tuple, tuple]:
    """The dimensions of a batch's buffer and record (batch first)."""
    chains, capacity = sizes(batch, n, element, pairs)
    return (batch, capacity, 2 * pairs), (batch, HEADER + 2 * chains + 2 * n)
