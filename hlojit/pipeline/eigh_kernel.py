"""The symmetric eigendecomposition kernel of pipeline/kernels.py (`hlojit.eigh` on llvm-cpu): one dispatch per
matrix where the decomposition (tridiagonalization, then divide and conquer, in StableHLO) is thousands of small
dispatches (256 x 256 f32: ~4 ms against ~32).

The text is built by kernel_text.KernelText.
"""
from __future__ import annotations

from .kernel_text import KernelText


SWEEPS = 32    # QL sweeps buffered before their rotations reach W (flush)
CHUNK = 64     # W's columns a flush takes through the buffered sweeps at once


def eigh_body(batch: int, n: int, element: str, lanes: int, vectors: bool) -> str:
    """EISPACK's tred2 (Householder tridiagonalization, its reflections accumulated) and tql2 (implicit QL, the
    rotations accumulated: buffered by sweeps, see flush), as JAMA writes them, on W = V^T: every inner loop of
    both then runs along a contiguous row (a vector of `lanes`, masked at the ends). Eigenvalues ascending (a
    selection sort carries W's rows along); the eigenvectors are W's rows, transposed into v's columns at the end.
    Without `vectors` no reflection or rotation is accumulated. tql2's iterations per eigenvalue stop at 30 n + 30
    (NaN input)."""
    eps = float(2.0 ** -23 if element == "f32" else 2.0 ** -52)
    t = f"memref<{batch}x{n}x{n}x{element}>"
    dt = f"memref<{batch}x{n}x{element}>"
    et = f"memref<{n}x{element}>"
    b = KernelText(element, lanes)
    E = element
    c0, c1 = b.c(0), b.c(1)
    N = b.c(n); N1 = b.c(n - 1)
    zero, one, two = b.c("0.0", E), b.c("1.0", E), b.c("2.0", E)
    epsc = b.c(f"{eps:.17e}", E)
    zv = b.op(f"arith.constant dense<0.0> : {b.v}")
    bi = b.op("hal.interface.workgroup.id[0] : index", "b")
    A = b.op(f"hal.interface.binding.subspan layout(#layout) binding(0) alignment(64) offset({c0}) : {t}", "in")
    D = b.op(f"hal.interface.binding.subspan layout(#layout) binding(1) alignment(64) offset({c0}) : {dt}", "w")
    W = b.op(f"hal.interface.binding.subspan layout(#layout) binding(2) alignment(64) offset({c0}) : {t}", "v")
    Em = b.op(f"memref.alloca() : {et}", "e")
    def get_index(memref, at, size):
        return b.op(f"arith.index_cast {b.load(memref, [at], f'memref<{size}xi32>')} : i32 to index")

    def set_index(value, memref, at, size):
        b.store(b.op(f"arith.index_cast {value} : index to i32"), memref, [at], f"memref<{size}xi32>")

    def set_count(value):
        set_index(value, Count, c0, 1)

    rt = f"memref<{batch}x{SWEEPS}x{n}x{element}>"   # a buffered sweep's cosines / sines, by its rotations' rows
    if vectors:
        Rc = b.op(f"hal.interface.binding.subspan layout(#layout) binding(3) alignment(64) offset({c0}) : {rt}", "rc")
        Rs = b.op(f"hal.interface.binding.subspan layout(#layout) binding(4) alignment(64) offset({c0}) : {rt}", "rs")
        # each buffered sweep's rows l .. m, and how many sweeps wait: i32 (IREE 3.13's stack-size check crashes
        # on an alloca of index)
        Bl = b.op(f"memref.alloca() : memref<{SWEEPS}xi32>", "bl")
        Bm = b.op(f"memref.alloca() : memref<{SWEEPS}xi32>", "bm")
        Count = b.op("memref.alloca() : memref<1xi32>", "count")
        set_count(c0)
    def d_(k): return b.load(D, [bi, k], dt)
    def sd(v, k): b.store(v, D, [bi, k], dt)
    def e_(k): return b.load(Em, [k], et)
    def se(v, k): b.store(v, Em, [k], et)
    def w_(r, k): return b.load(W, [bi, r, k], t)
    def sw(v, r, k): b.store(v, W, [bi, r, k], t)
    # W = A (symmetric: W = A^T = A)
    def copy_row(r):
        b.vfor(c0, N, lambda k, m: b.vwrite(b.vread(A, [bi, r, k], t, m), W, [bi, r, k], t, m))
    b.for_(c0, N, c1, lambda r: copy_row(r))
    b.for_(c0, N, c1, lambda j: sd(w_(j, N1), j))
    # tred2: i = n-1 .. 1
    def tred_step(ii):
        i = b.i("subi", N1, ii)
        im1 = b.i("subi", i, c1)
        scale = b.for_(c0, i, c1, lambda k, s: [b.f("addf", s, b.op(f"math.absf {d_(k)} : {E}"))], [(zero, E)])[0]
        is0 = b.cmpf("oeq", scale, zero)
        def zero_branch():
            se(d_(im1), i)
            def body(j):
                sd(w_(j, im1), j); sw(zero, j, i); sw(zero, i, j)
            b.for_(c0, i, c1, body)
            return [zero]
        def main_branch():
            def sc(k, h):
                dk = b.f("divf", d_(k), scale); sd(dk, k)
                return [b.f("addf", h, b.f("mulf", dk, dk))]
            h = b.for_(c0, i, c1, sc, [(zero, E)])[0]
            f = d_(im1)
            g = b.op(f"math.sqrt {h} : {E}")
            fpos = b.cmpf("ogt", f, zero)
            g = b.select(fpos, b.f("negf", g), g)
            se(b.f("mulf", scale, g), i)
            h = b.f("subf", h, b.f("mulf", f, g))
            sd(b.f("subf", f, g), im1)
            b.vfor(c0, i, lambda k, m: b.vwrite(zv, Em, [k], et, m))
            def col(j):
                f = d_(j); sw(f, i, j)
                g = b.f("addf", e_(j), b.f("mulf", w_(j, j), f))
                j1 = b.i("addi", j, c1)
                fv = b.splat(f)
                def inner(k, m, acc):
                    wv = b.vread(W, [bi, j, k], t, m)
                    dv = b.vread(D, [bi, k], dt, m)
                    ev = b.vread(Em, [k], et, m)
                    b.vwrite(b.vf("addf", ev, b.vf("mulf", wv, fv)), Em, [k], et, m)
                    return [b.vf("addf", acc, b.vf("mulf", wv, dv))]
                acc = b.vfor(j1, i, inner, [(zv, b.v)])[0]
                se(b.f("addf", g, b.vsum(acc)), j)
            b.for_(c0, i, c1, col)
            def ediv(j, fa):
                ej = b.f("divf", e_(j), h); se(ej, j)
                return [b.f("addf", fa, b.f("mulf", ej, d_(j)))]
            f = b.for_(c0, i, c1, ediv, [(zero, E)])[0]
            hh = b.f("divf", f, b.f("addf", h, h))
            b.for_(c0, i, c1, lambda j: se(b.f("subf", e_(j), b.f("mulf", hh, d_(j))), j))
            def upd(j):
                fv, gv = b.splat(d_(j)), b.splat(e_(j))
                def inner(k, m):
                    wv = b.vread(W, [bi, j, k], t, m)
                    ev = b.vread(Em, [k], et, m); dv = b.vread(D, [bi, k], dt, m)
                    change = b.vf("addf", b.vf("mulf", fv, ev), b.vf("mulf", gv, dv))
                    b.vwrite(b.vf("subf", wv, change), W, [bi, j, k], t, m)
                b.vfor(j, i, inner)
                sd(w_(j, im1), j); sw(zero, j, i)
            b.for_(c0, i, c1, upd)
            return [h]
        h = b.if_(is0, zero_branch, main_branch, types=[E])
        sd(h, i)
    b.for_(c0, N1, c1, tred_step)
    # accumulate transformations
    def acc_step(i):
        i1 = b.i("addi", i, c1)
        sw(w_(i, i), i, N1); sw(one, i, i)
        h = d_(i1)
        nz = b.cmpf("une", h, zero)
        def then():
            if vectors:
                hv = b.splat(h)
                def scaled(k, m):
                    b.vwrite(b.vf("divf", b.vread(W, [bi, i1, k], t, m), hv), D, [bi, k], dt, m)
                b.vfor(c0, i1, scaled)
                def jloop(j):
                    def dot(k, m, acc):
                        product = b.vf("mulf", b.vread(W, [bi, i1, k], t, m), b.vread(W, [bi, j, k], t, m))
                        return [b.vf("addf", acc, product)]
                    g = b.vsum(b.vfor(c0, i1, dot, [(zv, b.v)])[0])
                    gv = b.splat(g)
                    def reflected(k, m):
                        change = b.vf("mulf", gv, b.vread(D, [bi, k], dt, m))
                        b.vwrite(b.vf("subf", b.vread(W, [bi, j, k], t, m), change), W, [bi, j, k], t, m)
                    b.vfor(c0, i1, reflected)
                b.for_(c0, i1, c1, jloop)
        b.if_(nz, then)
        b.vfor(c0, i1, lambda k, m: b.vwrite(zv, W, [bi, i1, k], t, m))
    b.for_(c0, N1, c1, acc_step)
    def last(j):
        sd(w_(j, N1), j); sw(zero, j, N1)
    b.for_(c0, N, c1, last)
    sw(one, N1, N1)
    def flush(count):
        """The `count` buffered sweeps applied to W's rows, CHUNK columns at a time: that chunk of the rows stays in
        cache through all of them, and each sweep carries the row it rotates next in registers (one load and one
        store a row and sweep, not two of each a rotation)."""
        chunk = b.c(CHUNK)
        width = CHUNK // lanes
        def columns(k0):
            ks = [b.i("addi", k0, b.c(j * lanes)) for j in range(width)]
            masks = [b.op(f"vector.create_mask {b.i('subi', N, k)} : {b.mask_type}") for k in ks]
            def sweep(slot):
                l, m = get_index(Bl, slot, SWEEPS), get_index(Bm, slot, SWEEPS)
                first = [b.vread(W, [bi, m, k], t, mask) for k, mask in zip(ks, masks)]
                def rotation(q, *carried):
                    i = b.i("subi", b.i("subi", m, c1), q)
                    i1 = b.i("addi", i, c1)
                    cv, sv = b.splat(b.load(Rc, [bi, slot, i], rt)), b.splat(b.load(Rs, [bi, slot, i], rt))
                    out = []
                    for x1, k, mask in zip(carried, ks, masks):
                        x0 = b.vread(W, [bi, i, k], t, mask)
                        b.vwrite(b.vf("addf", b.vf("mulf", sv, x0), b.vf("mulf", cv, x1)), W, [bi, i1, k], t, mask)
                        out.append(b.vf("subf", b.vf("mulf", cv, x0), b.vf("mulf", sv, x1)))
                    return out
                last = b.for_(c0, b.i("subi", m, l), c1, rotation, [(x, b.v) for x in first])
                for x, k, mask in zip(last, ks, masks):
                    b.vwrite(x, W, [bi, l, k], t, mask)
            b.for_(c0, count, c1, sweep)
        b.for_(c0, N, chunk, columns)
        set_count(c0)

    # tql2
    b.for_(c1, N, c1, lambda i: se(e_(i), b.i("subi", i, c1)))
    se(zero, N1)
    maxit = b.c(30 * n + 30)
    def ql(l, f, tst1):
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
            slot = get_index(Count, c0, 1) if vectors else None
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
                    b.store(cn, Rc, [bi, slot, i], rt); b.store(sn, Rs, [bi, slot, i], rt)
                return [pn, cn, c2n, c3, sn, s2n]
            # carry: p, c, c2, c3, s, s2
            outs = b.for_(c0, ml, c1, lambda q, p_, c_, c2_, c3_, s_, s2_: rot(q, p_, c_, c2_, s_, s2_),
                          [(d_(m), E), (one, E), (one, E), (one, E), (zero, E), (zero, E)])
            p, c, c2, c3, s, s2 = outs
            if vectors:   # the sweep's rotations wait in the buffer until it is full (flush)
                set_index(l, Bl, slot, SWEEPS); set_index(m, Bm, slot, SWEEPS)
                filled = b.i("addi", slot, c1)
                set_count(filled)
                b.if_(b.cmpi("eq", filled, b.c(SWEEPS)), lambda: flush(filled))
            pp = b.f("mulf", b.f("mulf", b.f("negf", s), s2), c3)
            pp = b.f("divf", b.f("mulf", b.f("mulf", pp, el1), e_(l)), dl1)
            se(b.f("mulf", s, pp), l); sd(b.f("mulf", c, pp), l)
            return [fn, b.i("addi", ca, c1)]
        fnew = b.if_(more, iterate, lambda: [f], types=[E])
        sd(b.f("addf", d_(l), fnew), l); se(zero, l)
        return [fnew, tst1]
    b.for_(c0, N, c1, ql, [(zero, E), (zero, E)])
    if vectors:
        flush(get_index(Count, c0, 1))
    # sort ascending (selection), rows of W with it
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
                def vs(k, m):
                    x = b.vread(W, [bi, i, k], t, m); y = b.vread(W, [bi, bk, k], t, m)
                    b.vwrite(y, W, [bi, i, k], t, m); b.vwrite(x, W, [bi, bk, k], t, m)
                b.vfor(c0, N, vs)
        b.if_(moved, swap)
    b.for_(c0, N, c1, sel)
    if vectors:   # v = W^T in place, by tiles of 16 x 16 (a column walked whole thrashes L1 where rows lie 4 KiB apart)
        tile = b.c(16)
        def tiles(i0):
            def pair(k0):
                def tr(i):
                    i1 = b.i("addi", i, c1)
                    first = b.op(f"arith.maxui {k0}, {i1} : index")
                    last = b.op(f"arith.minui {b.i('addi', k0, tile)}, {N} : index")
                    def sw2(k):
                        x = w_(i, k); y = w_(k, i); sw(y, i, k); sw(x, k, i)
                    b.for_(first, last, c1, sw2)
                b.for_(i0, b.op(f"arith.minui {b.i('addi', i0, tile)}, {N} : index"), c1, tr)
            b.for_(i0, N, tile, pair)
        b.for_(c0, N, tile, tiles)
    b.emit("return")
    return "\n".join(b.lines)


