"""The symmetric eigendecomposition kernels of pipeline/kernels.py (`hlojit.eigh` on llvm-cpu), where the
decomposition (tridiagonalization, then divide and conquer, in StableHLO) is thousands of small dispatches
(256 x 256 f32: ~4 ms against ~32). EISPACK's tred2 and tql2 as JAMA writes them, on W = V^T (every inner loop
along a contiguous row, a vector of `lanes` masked at the ends).

Eigenvalues alone: one dispatch (eigenvalues_body). With vectors four: tridiagonal_body (the reduction), the QR
kernels' orgqr of its reflections (compact WY panels, where tred2 applied them one at a time), ql_body (tql2, its
rotations buffered: rotation_buffer.py), rotations_body (the buffered rotations applied to W's columns, a
workgroup per chunk of them: every core on one matrix). Measured (f32, exported, the 2-vCPU Xeon, 2026-12-06),
1024²: one dispatch 349 ms; orgqr 271; W's rows padded 195-203; the reduction four rows at a time 182-195
(local-sync); the rotations on both cores 145-156 on local-task (181-184 before), 121-125 an hour later; two
sweeps at once (rotation_buffer's chains) 105; the reduction's update and next product in one pass 96 (the
reduction 50 -> 36). 256²: 5.1 -> 3.5 ms (local-sync; local-task 4.3-5.5); 2.7.

The text is built by kernel_text.KernelText.
"""
from __future__ import annotations

from .kernel_text import KernelText
from .register_tiles import padded_row
from .rotation_buffer import RotationBuffer, chunk_columns

ROWS = 4       # W's rows the reduction's two passes take at once (each vector of u and e loaded once for them)


class _Eigh:
    """The pieces of the eigh kernels, on one KernelText: W (V^T, every inner loop along a contiguous row; n x n,
    or its rows padded: padded_w), D (the diagonal), each a binding the body subspans, and Em (the off-diagonal,
    on the stack)."""

    def __init__(self, batch: int, n: int, element: str, lanes: int, chunks: int = 1):
        self.batch, self.n, self.element = batch, n, element
        self.eps = float(2.0 ** -23 if element == "f32" else 2.0 ** -52)
        self.t = f"memref<{batch}x{n}x{n}x{element}>"
        self.wt = self.t    # W's type (ql_body and rotations_body pad its rows)
        self.padded_w = f"memref<{batch}x{n}x{padded_row(n, element)}x{element}>"
        self.dt = f"memref<{batch}x{n}x{element}>"
        self.et = f"memref<{n}x{element}>"
        b = self.b = KernelText(element, lanes)
        self.c0, self.c1 = b.c(0), b.c(1)
        self.N, self.N1 = b.c(n), b.c(n - 1)
        self.zero, self.one, self.two = b.c("0.0", element), b.c("1.0", element), b.c("2.0", element)
        self.zv = b.op(f"arith.constant dense<0.0> : {b.v}")
        workgroup = b.op("hal.interface.workgroup.id[0] : index", "b")
        if chunks == 1:     # a workgroup per matrix
            self.bi, self.chunk = workgroup, self.c0
        else:               # a workgroup per chunk_columns of a matrix
            self.bi = b.op(f"arith.divui {workgroup}, {b.c(chunks)} : index", "b")
            self.chunk = b.op(f"arith.remui {workgroup}, {b.c(chunks)} : index", "chunk")
        self.Em = b.op(f"memref.alloca() : {self.et}", "e")

    def binding(self, index: int, type_: str, name: str) -> str:
        return self.b.binding(index, type_, name)

    def d_(self, k): return self.b.load(self.D, [self.bi, k], self.dt)
    def sd(self, v, k): self.b.store(v, self.D, [self.bi, k], self.dt)
    def e_(self, k): return self.b.load(self.Em, [k], self.et)
    def se(self, v, k): self.b.store(v, self.Em, [k], self.et)
    def w_(self, r, k): return self.b.load(self.W, [self.bi, r, k], self.wt)
    def sw(self, v, r, k): self.b.store(v, self.W, [self.bi, r, k], self.wt)

    def reduce(self, A: str, vectors: str):
        """tred2's Householder reduction of W = A to tridiagonal: afterwards W's diagonal is d, Em[1:] is e, W's row
        i holds step i's reflector u (its first i entries) and D[i] its h (0: no reflection).

        Step i (n-1 down to 1) takes u from column i of the leading i x i block (kept in its upper triangle),
        p = A u / h, then the rank-2 update A -= u q^T + q u^T. Its update and step i-1's product A u' go through
        the block's rows in one pass (`rows_pass`: each row loaded and stored once for both, where tred2 reads
        the block twice a step), u' taken beforehand from column i-1 as the update will leave it. `vectors`: a
        binding of 3 x n per matrix (A u of two steps, the next u; on the stack they would pass IREE's 32 KiB at
        n = 2048 in f64)."""
        b, E = self.b, self.element
        c0, c1, N, N1, zero = self.c0, self.c1, self.N, self.N1, self.zero
        d_, sd, se, w_, sw = self.d_, self.sd, self.se, self.w_, self.sw
        t, dt, bi, W, D, zv = self.wt, self.dt, self.bi, self.W, self.D, self.zv
        n = self.n
        at = vectors_type(self.batch, n, E)
        Acc = vectors                                       # rows 0 and 1: A u of two steps (p, then q); 2: next u
        c2 = b.c(2)
        acc_ = lambda p, k: b.load(Acc, [bi, p, k], at)                # noqa: E731
        sacc = lambda v, p, k: b.store(v, Acc, [bi, p, k], at)         # noqa: E731

        def copy_row(r):
            b.vfor(c0, N, lambda k, m: b.vwrite(b.vread(A, [bi, r, k], self.t, m), W, [bi, r, k], t, m))
        b.for_(c0, N, c1, lambda r: copy_row(r))   # W = A (symmetric: W = A^T = A)
        if n < 2:
            return
        b.for_(c0, N, c1, lambda j: sd(w_(j, N1), j))

        def prepare(i, get, put):
            """Step i's u from column i (its first i entries, by get/put): scaled, h, Em[i]. (h, whether it
            reflects: a zero column does not)."""
            im1 = b.i("subi", i, c1)
            scale = b.for_(c0, i, c1, lambda k, s: [b.f("addf", s, b.op(f"math.absf {get(k)} : {E}"))], [(zero, E)])[0]
            def reflects():
                def sc(k, h):
                    dk = b.f("divf", get(k), scale); put(dk, k)
                    return [b.f("addf", h, b.f("mulf", dk, dk))]
                h = b.for_(c0, i, c1, sc, [(zero, E)])[0]
                f = get(im1)
                g = b.op(f"math.sqrt {h} : {E}")
                g = b.select(b.cmpf("ogt", f, zero), b.f("negf", g), g)
                se(b.f("mulf", scale, g), i)
                put(b.f("subf", f, g), im1)
                return [b.f("subf", h, b.f("mulf", f, g))]
            def zero_column():
                se(get(im1), i)
                return [zero]
            h = b.if_(b.cmpf("oeq", scale, zero), zero_column, reflects, types=[E])
            return h, b.cmpf("une", h, zero)

        def rows_pass(R, update, u_get, u, target, p, q):
            """Rows j < R of the block, columns j .. R-1: with `update`, step R's rank-2 update (u = D, its A u /
            h less its correction in Acc[p]) and W[j, R] = 0; then Acc[q] += A u' (u' by u_get / the memref u,
            0 from index target on) and W[target, j] = u'[j] for j < target."""
            def group(j0, count):
                rows = [b.i("addi", j0, b.c(r)) for r in range(count)]
                if update:
                    fs, gs = [d_(row) for row in rows], [acc_(p, row) for row in rows]
                    for r in range(count):          # the group's own triangle, scalar
                        for s_ in range(r, count):
                            change = b.f("addf", b.f("mulf", fs[r], acc_(p, rows[s_])),
                                         b.f("mulf", gs[r], d_(rows[s_])))
                            sw(b.f("subf", w_(rows[r], rows[s_]), change), rows[r], rows[s_])
                    fvs, gvs = [b.splat(f) for f in fs], [b.splat(g) for g in gs]
                us = [u_get(row) for row in rows]
                corner = [None] * count
                for r in range(count):              # the product's own triangle, with the updated entries
                    for s_ in range(r + 1, count):
                        x = w_(rows[r], rows[s_])
                        term = b.f("mulf", x, us[s_])
                        corner[r] = term if corner[r] is None else b.f("addf", corner[r], term)
                        sacc(b.f("addf", acc_(q, rows[s_]), b.f("mulf", x, us[r])), q, rows[s_])
                uvs = [b.splat(x) for x in us]
                def inner(k, m, *accs):
                    if update:
                        ev, dv = b.vread(Acc, [bi, p, k], at, m), b.vread(D, [bi, k], dt, m)
                    uv = b.vread(u[0], u[1](k), u[2], m)
                    total = b.vread(Acc, [bi, q, k], at, m)
                    out = []
                    for r, (row, acc) in enumerate(zip(rows, accs)):
                        wv = b.vread(W, [bi, row, k], t, m)
                        if update:
                            wv = b.vf("subf", wv, b.vf("addf", b.vf("mulf", fvs[r], ev), b.vf("mulf", gvs[r], dv)))
                            b.vwrite(wv, W, [bi, row, k], t, m)
                        total = b.vf("addf", total, b.vf("mulf", wv, uvs[r]))
                        out.append(b.vf("addf", acc, b.vf("mulf", wv, uv)))
                    b.vwrite(total, Acc, [bi, q, k], at, m)
                    return out
                accs = b.vfor(b.i("addi", j0, b.c(count)), R, inner, [(zv, b.v)] * count)
                for r, row in enumerate(rows):
                    g = b.f("addf", acc_(q, row), b.f("mulf", w_(row, row), us[r]))
                    if corner[r] is not None:
                        g = b.f("addf", g, corner[r])
                    sacc(b.f("addf", g, b.vsum(accs[r])), q, row)
                    if update:
                        sw(zero, row, R)
                    b.if_(b.cmpi("ult", row, target), lambda: sw(us[r], target, row))
            rows_c = b.c(ROWS)
            grouped = b.i("muli", b.op(f"arith.divui {R}, {rows_c} : index"), rows_c)
            b.for_(c0, grouped, rows_c, lambda j0: group(j0, ROWS))
            b.for_(grouped, R, c1, lambda j: group(j, 1))

        def zero_acc(p, length):
            b.vfor(c0, length, lambda k, m: b.vwrite(zv, Acc, [bi, p, k], at, m))

        # step n-1's u and A u (its product alone)
        h, reflecting = prepare(N1, d_, sd)
        zero_acc(c0, N1)
        rows_pass(N1, False, d_, (D, lambda k: [bi, k], dt), N1, None, c0)

        def tred_step(ii, h, reflecting):   # i = n-1 .. 1; Acc[p] holds step i's A u
            i = b.i("subi", N1, ii)
            im1 = b.i("subi", i, c1)
            p = b.op(f"arith.remui {ii}, {b.c(2)} : index")
            q = b.i("subi", c1, p)
            def correction():   # Acc[p] = A u / h - (u^T A u / 2h^2) u
                def ediv(j, fa):
                    ej = b.f("divf", acc_(p, j), h); sacc(ej, p, j)
                    return [b.f("addf", fa, b.f("mulf", ej, d_(j)))]
                f = b.for_(c0, i, c1, ediv, [(zero, E)])[0]
                hh = b.f("divf", f, b.f("addf", h, h))
                b.for_(c0, i, c1, lambda j: sacc(b.f("subf", acc_(p, j), b.f("mulf", hh, d_(j))), p, j))
            b.if_(reflecting, correction, lambda: zero_acc(p, i))   # no reflection: an update by zeros
            # u' = column i-1 as the update leaves it (its entries below i-1), 0 at i-1
            e_last, d_last = acc_(p, im1), d_(im1)
            b.for_(c0, im1, c1, lambda j: b.store(b.f("subf", w_(j, im1), b.f(
                "addf", b.f("mulf", d_(j), e_last), b.f("mulf", acc_(p, j), d_last))), Acc, [bi, c2, j], at))
            un_ = lambda k: acc_(c2, k)                                     # noqa: E731
            put_un = lambda v, k: sacc(v, c2, k)                            # noqa: E731
            h2, reflecting2 = b.if_(b.cmpi("ugt", i, c1), lambda: list(prepare(im1, un_, put_un)),
                                    lambda: [zero, b.op("arith.constant false")], types=[E, "i1"])
            put_un(zero, im1)
            zero_acc(q, im1)
            rows_pass(i, True, un_, (Acc, lambda k: [bi, c2, k], at), im1, p, q)
            b.for_(c0, im1, c1, lambda j: sd(un_(j), j))
            sd(h, i)
            return [h2, reflecting2]
        b.for_(c0, N1, c1, tred_step, [(h, E), (reflecting, "i1")])

    def diagonal_to_d(self):
        self.b.for_(self.c0, self.N, self.c1, lambda j: self.sd(self.w_(j, j), j))

    def ql(self, vectors: bool):
        """tql2 on (D, Em) (Em as reduce left it); with `vectors` its rotations buffered (self.buffered, a
        rotation_buffer.RotationBuffer: each sweep a chain of W's rows in reverse order, W stored so), applied to W
        here only when the buffer is full (rotations_body applies the rest on every core); then the eigenvalues
        sorted ascending, with `vectors` their order in the record's order (W's rows, not reversed)."""
        b, E, n = self.b, self.element, self.n
        c0, c1, N, N1, zero, one, two = self.c0, self.c1, self.N, self.N1, self.zero, self.one, self.two
        d_, sd, e_, se = self.d_, self.sd, self.e_, self.se
        bi = self.bi
        epsc = b.c(f"{self.eps:.17e}", E)
        if vectors:
            buffered = self.buffered
            buffered.start()

        def flush():
            buffered.flush([(self.W, self.wt, 0, N)])

        b.for_(c1, N, c1, lambda i: se(e_(i), b.i("subi", i, c1)))
        se(zero, N1)
        back = self._scaled_to_one()
        maxit = b.c(30 * n + 30)
        def ql_value(l, f, tst1):
            size = b.f("addf", b.op(f"math.absf {d_(l)} : {E}"), b.op(f"math.absf {e_(l)} : {E}"))
            tst1 = b.op(f"arith.maximumf {tst1}, {size} : {E}")
            tol = b.f("mulf", epsc, tst1)
            # m = first index >= l with |e[m]| <= tol (at most n-1)
            def mfind(k, mm, found):
                small = b.cmpf("ole", b.op(f"math.absf {e_(k)} : {E}"), tol)
                nf = b.op(f"arith.xori {found}, {b.op('arith.constant true')} : i1")
                take = b.op(f"arith.andi {small}, {nf} : i1")
                return [b.select(take, k, mm, "index"), b.op(f"arith.ori {found}, {small} : i1")]
            m = b.for_(l, N, c1, mfind, [(N1, "index"), (b.op("arith.constant false"), "i1")])[0]
            more = b.cmpi("ugt", m, l)
            def iterate():
                # carried (f, count); going while count == 0 or (|e[l]| > tol and count < maxit)
                def going(fi, ci):
                    first = b.cmpi("eq", ci, c0)
                    big = b.cmpf("ogt", b.op(f"math.absf {e_(l)} : {E}"), tol)
                    under = b.cmpi("ult", ci, maxit)
                    return b.op(f"arith.ori {first}, {b.op(f'arith.andi {big}, {under} : i1')} : i1")
                return [b.while_([(f, E), (c0, "index")], going, step)[0]]

            def step(fa, ca):
                l1 = b.i("addi", l, c1)
                g = d_(l)
                el = e_(l)
                p = b.f("divf", b.f("subf", d_(l1), g), b.f("mulf", two, el))
                r = b.op(f"math.sqrt {b.f('addf', b.f('mulf', p, p), one)} : {E}")
                r = b.select(b.cmpf("olt", p, zero), b.f("negf", r), r)
                pr = b.f("addf", p, r)
                sd(b.f("divf", el, pr), l)
                dl1 = b.f("mulf", el, pr); sd(dl1, l1)
                h = b.f("subf", g, d_(l))
                l2 = b.i("addi", l, b.c(2))
                b.for_(l2, N, c1, lambda i: sd(b.f("subf", d_(i), h), i))
                fn = b.f("addf", fa, h)
                el1 = e_(l1)
                ml = b.i("subi", m, l)
                if vectors:   # the sweep i = m-1 .. l, on the reversed rows n-1-m .. n-1-l (rotation_buffer's chain)
                    offset, used = buffered.chain(b.i("subi", N1, m), b.i("subi", N1, l), flush)
                def rot(q, p, c, c2, s, s2):
                    i = b.i("subi", b.i("subi", m, c1), q)   # i = m-1-q
                    c3 = c2; c2n = c; s2n = s
                    ei = e_(i)
                    g = b.f("mulf", c, ei); hh = b.f("mulf", c, p)
                    r = b.op(f"math.sqrt {b.f('addf', b.f('mulf', p, p), b.f('mulf', ei, ei))} : {E}")
                    i1 = b.i("addi", i, c1)
                    se(b.f("mulf", s, r), i1)
                    sn = b.f("divf", ei, r); cn = b.f("divf", p, r)
                    di = d_(i)
                    pn = b.f("subf", b.f("mulf", cn, di), b.f("mulf", sn, g))
                    sd(b.f("addf", hh, b.f("mulf", sn, b.f("addf", b.f("mulf", cn, g), b.f("mulf", sn, di)))), i1)
                    if vectors:
                        buffered.store(b.i("addi", offset, q), 0, cn, sn)
                    return [pn, cn, c2n, c3, sn, s2n]
                # carry: p, c, c2, c3, s, s2
                outs = b.for_(c0, ml, c1, lambda q, p_, c_, c2_, c3_, s_, s2_: rot(q, p_, c_, c2_, s_, s2_),
                              [(d_(m), E), (one, E), (one, E), (one, E), (zero, E), (zero, E)])
                p, c, c2, c3, s, s2 = outs
                if vectors:
                    buffered.close(used)
                pp = b.f("mulf", b.f("mulf", b.f("negf", s), s2), c3)
                pp = b.f("divf", b.f("mulf", b.f("mulf", pp, el1), e_(l)), dl1)
                se(b.f("mulf", s, pp), l); sd(b.f("mulf", c, pp), l)
                return [fn, b.i("addi", ca, c1)]
            fnew = b.if_(more, iterate, lambda: [f], types=[E])
            sd(b.f("addf", d_(l), fnew), l); se(zero, l)
            return [fnew, tst1]
        b.for_(c0, N, c1, ql_value, [(zero, E), (zero, E)])
        b.for_(c0, N, c1, lambda j: sd(b.f("mulf", d_(j), back), j))
        # sort ascending (selection), the order of W's rows with it
        def sel(i):
            i1 = b.i("addi", i, c1)
            def best(k, bk, bv):
                dk = d_(k); lt = b.cmpf("olt", dk, bv)
                return [b.select(lt, k, bk, "index"), b.select(lt, dk, bv)]
            bk, bv = b.for_(i1, N, c1, best, [(i, "index"), (d_(i), E)])
            moved = b.cmpi("ne", bk, i)
            def swap():
                di = d_(i); sd(bv, i); sd(di, bk)
                if vectors:
                    oi, ok = buffered.get("order", i), buffered.get("order", bk)
                    buffered.set(ok, "order", i)
                    buffered.set(oi, "order", bk)
            b.if_(moved, swap)
        b.for_(c0, N, c1, sel)

    def _scaled_to_one(self) -> str:
        """D and Em multiplied by the power of two that brings their largest magnitude to [1, 2) (LAPACK's dsyev
        scales likewise): tql2's p^2 + e^2 overflowed from ~1e19 in f32 and underflowed below ~1e-19 (eigh of a
        matrix of 1e30 or 1e-30 was NaN). Exact, as is the power that scales the eigenvalues back (returned; 1
        where the largest is 0, subnormal or not finite)."""
        b, E, c0, c1, N = self.b, self.element, self.c0, self.c1, self.N
        def largest(k, acc):
            both = b.op(f"arith.maximumf {b.op(f'math.absf {self.d_(k)} : {E}')}, "
                        f"{b.op(f'math.absf {self.e_(k)} : {E}')} : {E}")
            return [b.op(f"arith.maximumf {acc}, {both} : {E}")]
        big = b.for_(c0, N, c1, largest, [(self.zero, E)])[0]
        integer, exponent_bits = ("i32", "0x7F800000") if E == "f32" else ("i64", "0x7FF0000000000000")
        bits = b.op(f"arith.bitcast {big} : {E} to {integer}")
        power = b.op(f"arith.bitcast {b.op(f'arith.andi {bits}, {b.c(exponent_bits, integer)} : {integer}')} : "
                     f"{integer} to {E}")                  # 2^floor(log2 big), exactly
        normal = b.c(f"{2.0 ** (-126 if E == 'f32' else -1022):.17e}", E)
        scalable = b.op(f"arith.andi {b.cmpf('oge', big, normal)}, "
                        f"{b.cmpf('olt', big, b.c('0x7F800000' if E == 'f32' else '0x7FF0000000000000', E))} : i1")
        back = b.select(scalable, power, self.one)
        factor = b.f("divf", self.one, back)
        def scale(k):
            self.sd(b.f("mulf", self.d_(k), factor), k)
            self.se(b.f("mulf", self.e_(k), factor), k)
        b.for_(c0, N, c1, scale)
        return back

    def text(self) -> str:
        self.b.emit("return")
        return "\n".join(self.b.lines)


def vectors_type(batch: int, n: int, element: str) -> str:
    """The reduction's work vectors (_Eigh.reduce): 3 x n a matrix."""
    return f"memref<{batch}x3x{n}x{element}>"


def eigenvalues_body(batch: int, n: int, element: str, lanes: int) -> str:
    """Eigenvalues alone, ascending, in one dispatch: tred2's reduction, then tql2 without vectors. Bindings:
    a (n x n); w (n); W scratch (n x n), the reduction's vectors (3 x n)."""
    k = _Eigh(batch, n, element, lanes)
    A = k.binding(0, k.t, "in")
    k.D = k.binding(1, k.dt, "w")
    k.W = k.binding(2, k.t, "scratch")
    k.reduce(A, k.binding(3, vectors_type(batch, n, element), "vectors"))
    k.diagonal_to_d()
    k.ql(vectors=False)
    return k.text()


def tridiagonal_body(batch: int, n: int, element: str, lanes: int) -> str:
    """The first of eigh's four dispatches: tred2's reduction; then its reflections in orgqr's form for the
    second (qr_kernels.form_q_body), which accumulates them by compact WY panels where tred2 applied them one
    at a time (1024² f32: ~100 ms of eigh's ~340 on the 2-vCPU Xeon, 2026-12-06). Bindings: a (n x n); then d
    (n), e (n: e[i] couples i-1 and i), reflectors (n-1 x n-1), taus (1 x n-1); W scratch (n x n), the
    reduction's vectors (3 x n).

    tred2 accumulates Q = P_{n-2} ... P_0, P_i = I - u u^T / h on the leading i+1 coordinates (u: W's row i+1,
    h: D[i+1]), and Q's last row and column are the identity's. Reversing the first n-1 coordinates turns each
    P_i into a reflection of the trailing coordinates from n-2-i: orgqr's H_j with j = n-2-i, v = reversed u /
    u[i] (v[j] = 1), tau = u[i]^2 / h (0 where h = 0: no reflection)."""
    k = _Eigh(batch, n, element, lanes)
    b, c0, c1, N1, zero, one, bi = k.b, k.c0, k.c1, k.N1, k.zero, k.one, k.bi
    E = element
    A = k.binding(0, k.t, "in")
    d_out = k.binding(1, k.dt, "d")
    e_out = k.binding(2, k.dt, "eout")
    vt = f"memref<{batch}x{n - 1}x{n - 1}x{E}>"
    taus_t = f"memref<{batch}x1x{n - 1}x{E}>"
    V = k.binding(3, vt, "v")
    taus = k.binding(4, taus_t, "taus")
    k.W = k.binding(5, k.t, "scratch")   # unpadded: padding measured no faster here (1024², 2026-12-06)
    k.D = d_out
    k.reduce(A, k.binding(6, vectors_type(batch, n, element), "vectors"))
    b.for_(c0, k.N, c1, lambda j: b.store(k.e_(j), e_out, [bi, j], k.dt))

    def reflector(i):   # u = W[i+1, :i+1] scaled by its last entry in place; tau[n-2-i]
        row = b.i("addi", i, c1)
        h = k.d_(row)
        pivot = k.w_(row, i)
        j = b.i("subi", b.i("subi", N1, c1), i)
        reflects = b.cmpf("une", h, zero)
        def scaled():
            pv = b.splat(pivot)
            b.vfor(c0, i, lambda q, m: b.vwrite(b.vf("divf", b.vread(k.W, [bi, row, q], k.wt, m), pv),
                                                   k.W, [bi, row, q], k.wt, m))
            return [b.f("divf", b.f("mulf", pivot, pivot), h)]
        def identity():
            b.vfor(c0, i, lambda q, m: b.vwrite(k.zv, k.W, [bi, row, q], k.wt, m))
            return [zero]
        tau = b.if_(reflects, scaled, identity, types=[E])
        b.store(tau, taus, [bi, c0, j], taus_t)
        k.sw(one, row, i)
    b.for_(c0, N1, c1, reflector)

    def reversed_copy(r, j):   # V[r, j] = u_{n-2-j}[n-2-r] on and below the diagonal, 0 above
        below = b.cmpi("ule", j, r)
        value = b.if_(below, lambda: [k.w_(b.i("subi", N1, j), b.i("subi", b.i("subi", N1, c1), r))],
                      lambda: [zero], types=[E])
        b.store(value, V, [bi, r, j], vt)
    b.tiles(N1, N1, reversed_copy)
    k.diagonal_to_d()
    return k.text()


def ql_body(batch: int, n: int, element: str, lanes: int) -> str:
    """The third of eigh's four dispatches: W = Q^T from orgqr's q (n-1 x n-1, the reversed coordinates of
    tridiagonal_body), its rows stored in reverse order (tql2's sweeps run up the rows: reversed, they are
    rotation_buffer's chains), tql2 with its rotations buffered (rotations_body applies them), the eigenvalues
    sorted ascending and their order. W's rows are padded (register_tiles.padded_row: rows 4 KiB apart made the
    rotations' loads wait on stores to other rows). Bindings: q, d (n), e (n); w (n), W (n x padded), the
    rotation buffer and its record. NaN everywhere (input NaN/inf) where tql2 stops at 30 n + 30 iterations a
    value."""
    k = _Eigh(batch, n, element, lanes)
    b, c0, c1, N, N1, zero, one, bi = k.b, k.c0, k.c1, k.N, k.N1, k.zero, k.one, k.bi
    qt = f"memref<{batch}x{n - 1}x{n - 1}x{element}>"
    Q = k.binding(0, qt, "q")
    d_in = k.binding(1, k.dt, "d")
    e_in = k.binding(2, k.dt, "ein")
    k.D = k.binding(3, k.dt, "w")
    k.wt = k.padded_w
    k.W = k.binding(4, k.wt, "work")
    k.buffered = RotationBuffer(b, bi, batch, n, 5, pairs=1, chunk=chunk_columns(lanes, (n,)))

    def inputs(j):
        k.sd(b.load(d_in, [bi, j], k.dt), j)
        k.se(b.load(e_in, [bi, j], k.dt), j)
        k.sw(zero, c0, j); k.sw(zero, j, N1)
    b.for_(c0, N, c1, inputs)
    k.sw(one, c0, N1)   # reversed row 0: W's row n-1, the identity's
    last = b.i("subi", N1, c1)
    # reversed row r + 1 is W's row n-2-r: W[n-2-r, i] = Q[i, n-2-r] = q[n-2-i, r]
    b.tiles(N1, N1, lambda r, i: k.sw(b.load(Q, [bi, b.i("subi", last, i), r], qt), b.i("addi", r, c1), i))
    k.ql(vectors=True)
    return k.text()


def rotations_body(batch: int, n: int, element: str, lanes: int) -> str:
    """The last of eigh's four dispatches, a workgroup per chunk_columns of each matrix (every core on one
    matrix): the buffered chains applied to its columns of a copy of W (rows reversed), then its rows of v = W^T
    with W's rows in the eigenvalues' order. Bindings: W, the rotation buffer and its record; v (n x n), the copy
    of W."""
    chunk = chunk_columns(lanes, (n,))
    k = _Eigh(batch, n, element, lanes, -(-n // chunk))
    b, c0, c1, N, N1, bi = k.b, k.c0, k.c1, k.N, k.N1, k.bi
    k.wt = k.padded_w
    W = k.binding(0, k.wt, "w")
    buffered = RotationBuffer(b, bi, batch, n, 1, pairs=1, chunk=chunk)
    V = k.binding(3, k.t, "v")
    k.W = k.binding(4, k.wt, "work")
    k0 = b.i("muli", k.chunk, b.c(chunk))
    end = b.op(f"arith.minui {b.i('addi', k0, b.c(chunk))}, {N} : index")
    def copy_row(r):
        b.vfor(k0, end, lambda q, m: b.vwrite(b.vread(W, [bi, r, q], k.wt, m), k.W, [bi, r, q], k.wt, m))
    b.for_(c0, N, c1, copy_row)
    buffered.apply(k.W, k.wt, 0, k0, N)
    tile = b.c(16)
    def rows_of_v(j0):   # v[q, j] = W[order[j], q] (reversed row n-1-order[j]), 16 of v's columns at a time
        last = b.op(f"arith.minui {b.i('addi', j0, tile)}, {N} : index")
        def row(q):
            b.for_(j0, last, c1, lambda j: b.store(k.w_(b.i("subi", N1, buffered.get("order", j)), q), V,
                                                   [bi, q, j], k.t))
        b.for_(k0, end, c1, row)
    b.for_(c0, N, tile, rows_of_v)
    return k.text()
