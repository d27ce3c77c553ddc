"""The singular value decomposition kernels of pipeline/kernels.py (`hlojit.svd` on llvm-cpu): Golub and
Reinsch's algorithm as LINPACK's dsvdc writes it (Householder bidiagonalization, then implicitly shifted QR steps
on the bidiagonal, their rotations accumulated), where the decomposition in StableHLO (QDWH's polar
decomposition, then eigh) is a loop of matmul dispatches (256 x 256 f32: ~23 ms). Singular values alone: one
dispatch. With vectors five: the bidiagonalization, orgqr (the QR kernels' form_q) forming U and V from its
reflections, the QR steps (svd_body's parts), the steps' rotations applied on every core (rotations_body,
rotation_buffer.py). Exported f32, the 2-vCPU Xeon, 2026-12-06, local-sync: 256² 9.9-10.2 -> 8.1-8.2 ms, 1024²
687-747 -> 576-588 against dsvdc's accumulation one reflection at a time; 7.4-7.6 and 541-571 with the
bidiagonalization ROWS rows at a time; then on local-task 1024² 446 -> 297 with the rotations buffered, 207 with
the bidiagonalization one pass a step (256² 5.7 on local-sync).

Every array lives transposed, as eigh_kernel's W does: a's columns, U's and V's columns are rows of `ut` and
`vh`, so every inner loop (dot products, reflections, rotations) runs along a contiguous row as vectors of
`lanes`, masked at the ends. vh is V^T, the kernel's result; rotations_body writes U from ut transposed.
The text is built by kernel_text.KernelText.
"""
from __future__ import annotations

from .kernel_text import KernelText
from .register_tiles import padded_row
from .rotation_buffer import U_PAIR, V_PAIR, RotationBuffer, chunk_columns

ITERATIONS_PER_VALUE = 75   # QR steps allowed per singular value; past it (NaN input) everything is NaN
ROWS = 4                    # rows of ut the bidiagonalization's passes take at once (each shared vector loaded once)


def reflector_counts(m: int, n: int) -> tuple[int, int]:
    """(U's column reflections, V's row reflections) of an m x n bidiagonalization (LINPACK's nct, nrt), at least
    one each (a reflection with tau 0 where there is none: orgqr's identity)."""
    return max(1, min(m - 1, n)), max(1, min(n - 2, m))


def svd_body(batch: int, m: int, n: int, columns: int, element: str, lanes: int, nan: str, part: str) -> str:
    """a (batch, m, n) with m >= n >= 1: `part` "values": s (batch, n) descending, one dispatch. With vectors
    (m >= n >= 2) the first and fourth of five dispatches, orgqr (qr_kernels.form_q_body) forming U and V between
    them from the reflections where dsvdc accumulated them one at a time (f32, the 2-vCPU Xeon, 2026-12-06: ~2.5
    of 9.6 ms at 256², 150-185 of ~720 at 1024²), rotations_body after them:
    "bidiagonal": a -> s, e (n: the superdiagonal), U's reflections (m x nct) and taus (1 x nct), V's (n-1 x nrt:
    on coordinates 1..n-1) and taus, in orgqr's form (reflector_counts); scratch ut (n x m: a^T, reduced in
    place), work (2 x m: the work vectors of two steps), vh (n x n: the row reflections as they are made).
    "steps": s, e, U (m x columns, orgqr's: columns n or m, an orthonormal completion past n) and V's trailing
    block (n-1 x n-1) -> s, ut (columns x m: U^T), vh (n x n: V^T), each as far as the rotations applied here
    went (rotations_body applies the rest, the buffer's chains, and the rows' order and signs), e (n: scratch),
    then the buffer and record of rotation_buffer at bindings 8 and 9."""
    eps, tiny = (2.0 ** -23, 2.0 ** -120) if element == "f32" else (2.0 ** -52, 2.0 ** -966)
    E = element
    vectors = part != "values"
    ku, kv = reflector_counts(m, n)
    types = {"a": (m, n), "s": (n,), "u": (m, columns), "vh": (n, n), "ut": (columns if part == "steps" else n, m),
             "e": (n,), "work": (2, m), "s_in": (n,), "e_in": (n,), "uv": (m, ku), "utau": (1, ku),
             "vv": (n - 1, kv), "vtau": (1, kv), "qu": (m, columns), "qv": (n - 1, n - 1)}
    names = {"values": ["a", "s", "ut", "e", "work"],
             "bidiagonal": ["a", "s", "e", "uv", "utau", "vv", "vtau", "ut", "work", "vh"],
             "steps": ["s_in", "e_in", "qu", "qv", "s", "ut", "vh", "e"]}[part]
    b = KernelText(E, lanes)
    c0, c1 = b.c(0), b.c(1)
    M, N = b.c(m), b.c(n)
    zero, one = b.c("0.0", E), b.c("1.0", E)
    zv = b.op(f"arith.constant dense<0.0> : {b.v}")
    bi = b.op("hal.interface.workgroup.id[0] : index", "b")
    memref = {}
    for binding, name in enumerate(names):
        type_ = f"memref<{batch}x{'x'.join(map(str, types[name]))}x{E}>"
        memref[name] = (b.binding(binding, type_, name), type_)
    buffered = (RotationBuffer(b, bi, batch, n, len(names), pairs=2, chunk=chunk_columns(lanes, (m, n)))
                if part == "steps" else None)

    def row(name, *index):
        """A contiguous row: (memref, leading indices, type); vector helpers append the column index."""
        value, type_ = memref[name]
        return value, [bi, *index], type_

    def get(name, *index):
        value, type_ = memref[name]
        return b.load(value, [bi, *index], type_)

    def put(x, name, *index):
        value, type_ = memref[name]
        b.store(x, value, [bi, *index], type_)

    absf = lambda x: b.op(f"math.absf {x} : {E}")                         # noqa: E731
    sqrt = lambda x: b.op(f"math.sqrt {x} : {E}")                         # noqa: E731
    maxf = lambda x, y: b.op(f"arith.maximumf {x}, {y} : {E}")            # noqa: E731
    both = lambda x, y: b.op(f"arith.andi {x}, {y} : i1")                 # noqa: E731
    either = lambda x, y: b.op(f"arith.ori {x}, {y} : i1")                # noqa: E731
    negated = lambda x: b.op(f"arith.xori {x}, {b.op('arith.constant true')} : i1")  # noqa: E731

    # --- row helpers, over [lo, hi) ---
    def rd(r, k, mask):
        return b.vread(r[0], r[1] + [k], r[2], mask)

    def wr(x, r, k, mask):
        b.vwrite(x, r[0], r[1] + [k], r[2], mask)

    def divide(x, by, lo, hi):
        bv = b.splat(by)
        b.vfor(lo, hi, lambda k, mask: wr(b.vf("divf", rd(x, k, mask), bv), x, k, mask))

    def fill(x, value, lo, hi):
        v = b.splat(value)
        b.vfor(lo, hi, lambda k, mask: wr(v, x, k, mask))

    def rotate(x, y, cs, sn, lo, hi):
        """(x, y) <- (cs x + sn y, cs y - sn x)"""
        cv, sv = b.splat(cs), b.splat(sn)

        def step(k, mask):
            xv, yv = rd(x, k, mask), rd(y, k, mask)
            wr(b.vf("addf", b.vf("mulf", cv, xv), b.vf("mulf", sv, yv)), x, k, mask)
            wr(b.vf("subf", b.vf("mulf", cv, yv), b.vf("mulf", sv, xv)), y, k, mask)
        b.vfor(lo, hi, step)

    def norm(x, lo, hi):
        """The 2-norm of x[lo:hi], scaled by its largest magnitude (no overflow of the squares)."""
        def largest(k, mask, acc):
            return [b.op(f"arith.maximumf {acc}, {b.op(f'math.absf {rd(x, k, mask)} : {b.v}')} : {b.v}")]
        big = b.op(f"vector.reduction <maximumf>, {b.vfor(lo, hi, largest, [(zv, b.v)])[0]} : {b.v} into {E}")
        inverse = b.splat(b.f("divf", one, b.select(b.cmpf("oeq", big, zero), one, big)))

        def squares(k, mask, acc):
            scaled = b.vf("mulf", rd(x, k, mask), inverse)
            return [b.vf("addf", acc, b.vf("mulf", scaled, scaled))]
        return b.f("mulf", big, sqrt(b.vsum(b.vfor(lo, hi, squares, [(zv, b.v)])[0])))

    def rotation(f, g):
        """(cs, sn, r) with r = hypot(f, g), cs = f / r, sn = g / r; (1, 0, 0) when both are 0."""
        fa, ga = absf(f), absf(g)
        big, small = maxf(fa, ga), b.op(f"arith.minimumf {fa}, {ga} : {E}")
        is0 = b.cmpf("oeq", big, zero)
        ratio = b.f("divf", small, b.select(is0, one, big))
        r = b.f("mulf", big, sqrt(b.f("addf", one, b.f("mulf", ratio, ratio))))
        safe = b.select(is0, one, r)
        return b.select(is0, one, b.f("divf", f, safe)), b.f("divf", g, safe), r

    if part == "steps":   # s, e; ut = U^T; vh = V^T = diag(1, V'^T)
        b.vfor(c0, N, lambda k, mask: wr(rd(row("s_in"), k, mask), row("s"), k, mask))
        b.vfor(c0, N, lambda k, mask: wr(rd(row("e_in"), k, mask), row("e"), k, mask))
        b.tiles(b.c(columns), M, lambda j, i: put(get("qu", i, j), "ut", j, i))
        def first_row_and_column(j):
            put(zero, "vh", j, c0)
            put(zero, "vh", c0, j)
        b.for_(c0, N, c1, first_row_and_column)
        put(one, "vh", c0, c0)
        b.tiles(b.c(n - 1), b.c(n - 1), lambda j, i: put(get("qv", i, j), "vh", b.i("addi", j, c1), b.i("addi", i, c1)))
        buffered.start()
    else:
        # --- a^T into ut ---
        def copy_column(i):
            b.for_(c0, N, c1, lambda j: put(get("a", i, j), "ut", j, i))
        b.for_(c0, M, c1, copy_column)

        # --- bidiagonalization: s the diagonal, e the superdiagonal ---
        nct, nrt = min(m - 1, n), max(0, min(n - 2, m))
        NCT, NRT = b.c(nct), b.c(nrt)

        assert nct > nrt or nct == 0   # m >= n: the last step reflects no row, none is left pending after the loop
        for parity in (c0, c1):   # finite: a step without a pending reflection multiplies its work vector by 0
            fill(row("work", parity), zero, c0, M)
        # The work vector's sum takes e_j / (largest |a| m n): sum_j e_j ut[j] is of the matrix's scale squared,
        # which over- or underflows where the matrix is far from 1 (f32 entries ~1e30: NaN; ~1e-30: 35% off); so
        # scaled it stays below the largest |a|, and what underflows is below rounding of the largest. By a
        # reciprocal (not two divisions a row and step), kept normal: from largest |a| m n >=
        # 2^126 (f32; 2^1022 f64) the scale stops there, so entries past ~1e33 / (m n) in f32 may still overflow.
        def largest_in_row(j, acc):
            def step(q, mask, acc):
                magnitude = b.op(f"math.absf {rd(row('ut', j), q, mask)} : {b.v}")
                return [b.op(f"arith.maximumf {acc}, {magnitude} : {b.v}")]
            return b.vfor(c0, M, step, [(acc, b.v)])
        largest = b.op(f"vector.reduction <maximumf>, {b.for_(c0, N, c1, largest_in_row, [(zv, b.v)])[0]} : {b.v} "
                       f"into {E}")
        largest = b.select(b.cmpf("ogt", largest, zero), largest, one)
        ceiling = b.c(f"{2.0 ** (126 if E == 'f32' else 1022):.17e}", E)
        denominator = b.f("mulf", largest, b.c(f"{float(m * n):.17e}", E))
        denominator = b.select(b.cmpf("olt", denominator, ceiling), denominator, ceiling)
        reciprocal = b.f("divf", one, denominator)

        def bidiagonal_step(k, pending):
            """Step k: row k finished, its column reflection; one pass over rows k+1 .. n-1, ROWS at a time, that
            applies step k-1's row reflection (`pending`: its work vector and pivot), step k's column reflection,
            and sums step k's work vector (the rows loaded once from memory for all three: the passes of the
            trailing matrix are what the bidiagonalization spends its time on); then step k's row reflection,
            pending for step k+1. With e' the normalized e, e'_j1 its pivot (1 + e_j1 / ek):
            work = sum_j e'_j ut[j] = (sum_j e_j ut[j]) / ek + ut[j1], each row then ut[j] -= e'_j / e'_j1 work."""
            k1 = b.i("addi", k, c1)
            parity = b.op(f"arith.remui {k}, {b.c(2)} : index")
            previous = row("work", parity)                       # step k-1's work vector
            current = row("work", b.i("subi", c1, parity))       # step k's
            e1 = get("e", k)                                     # step k-1's pivot e'_k
            in_nct = b.cmpi("ult", k, NCT)
            uk = row("ut", k)
            b.if_(pending, lambda: b.vfor(k, M, lambda q, mask: wr(
                b.vf("subf", rd(uk, q, mask), rd(previous, q, mask)), uk, q, mask)))

            def column_reflector():
                size = norm(uk, k, M)

                def nonzero():
                    sk = b.select(b.cmpf("olt", get("ut", k, k), zero), b.f("negf", size), size)
                    divide(uk, sk, k, M)
                    put(b.f("addf", get("ut", k, k), one), "ut", k, k)
                    return [sk]
                sk = b.if_(b.cmpf("une", size, zero), nonzero, lambda: [size], types=[E])
                put(b.f("negf", sk), "s", k)
            b.if_(in_nct, column_reflector)
            reflect_columns = both(in_nct, b.cmpf("une", get("s", k), zero))
            fill(current, zero, k, M)

            def rows_in_groups(j0, count):   # rows j0 .. j0 + count of ut; uk and the work vectors loaded once for them
                js = [b.i("addi", j0, b.c(r)) for r in range(count)]
                rows = [row("ut", j) for j in js]
                ukk = get("ut", k, k)
                betas = [b.splat(b.select(pending, b.f("negf", b.f("divf", get("e", j), e1)), zero)) for j in js]
                def finish_and_dot(q, mask, *accs):   # step k-1's row reflection, then the dot products with uk
                    x, w = rd(uk, q, mask), rd(previous, q, mask)
                    out = []
                    for acc, beta, y in zip(accs, betas, rows):
                        v = b.vf("addf", rd(y, q, mask), b.vf("mulf", beta, w))
                        wr(v, y, q, mask)
                        out.append(b.vf("addf", acc, b.vf("mulf", x, v)))
                    return out
                sums = b.vfor(k, M, finish_and_dot, [(zv, b.v)] * count)
                alphas = [b.select(reflect_columns, b.f("negf", b.f("divf", b.vsum(total), ukk)), zero) for total in sums]
                es = []
                for j, alpha in zip(js, alphas):   # e_j: ut[j, k] after the column reflection
                    e_j = b.f("addf", get("ut", j, k), b.f("mulf", alpha, ukk))
                    put(e_j, "e", j)
                    es.append(b.splat(b.f("mulf", e_j, reciprocal)))
                alphas = [b.splat(alpha) for alpha in alphas]
                def reflect_and_sum(q, mask):   # the rows are in L1 now
                    x, total = rd(uk, q, mask), rd(current, q, mask)
                    for alpha, e_j, y in zip(alphas, es, rows):
                        v = b.vf("addf", rd(y, q, mask), b.vf("mulf", alpha, x))
                        wr(v, y, q, mask)
                        total = b.vf("addf", total, b.vf("mulf", e_j, v))
                    wr(total, current, q, mask)
                b.vfor(k, M, reflect_and_sum)
            grouped = b.i("addi", k1, b.i("muli", b.op(f"arith.divui {b.i('subi', N, k1)}, {b.c(ROWS)} : index"),
                                            b.c(ROWS)))
            b.for_(k1, grouped, b.c(ROWS), lambda j0: rows_in_groups(j0, ROWS))
            b.for_(grouped, N, c1, lambda j: rows_in_groups(j, 1))

            def row_reflector():
                e = row("e")
                size = norm(e, k1, N)

                def nonzero():
                    ek = b.select(b.cmpf("olt", get("e", k1), zero), b.f("negf", size), size)
                    divide(e, ek, k1, N)
                    put(b.f("addf", get("e", k1), one), "e", k1)
                    return [ek]
                ek = b.if_(b.cmpf("une", size, zero), nonzero, lambda: [size], types=[E])
                put(b.f("negf", ek), "e", k)
                reflects = b.cmpf("une", ek, zero)
                def work():   # sum_j e_j ut[j] / ek + ut[k1], the sum scaled back after the division
                    ekv, after = b.splat(ek), row("ut", k1)
                    denominator_v = b.splat(denominator)
                    def unscaled(q, mask):
                        x = b.vf("mulf", b.vf("divf", rd(current, q, mask), ekv), denominator_v)
                        wr(b.vf("addf", x, rd(after, q, mask)), current, q, mask)
                    b.vfor(k1, M, unscaled)
                b.if_(reflects, work)
                if vectors:
                    vk = row("vh", k)
                    b.vfor(k1, N, lambda i, mask: wr(rd(e, i, mask), vk, i, mask))
                return [reflects]
            return [b.if_(b.cmpi("ult", k, NRT), row_reflector, lambda: [b.op("arith.constant false")], types=["i1"])]
        b.for_(c0, b.c(max(nct, nrt)), c1, bidiagonal_step, [(b.op("arith.constant false"), "i1")])
        if nct < n:
            put(get("ut", NCT, NCT), "s", NCT)
        if nrt + 1 < n:
            put(get("ut", b.c(n - 1), NRT), "e", NRT)
        put(zero, "e", b.c(n - 1))

    if part == "bidiagonal":   # the reflections in orgqr's form: v = u / u[k] (v[k] = 1), tau = u[k]
        def in_orgqr_form(source, offset, count, limit, nonzero, length, rows, reflectors, taus):
            """Reflection k < count (none at k >= limit or where `nonzero`[k] is 0) of `source`'s row k, its pivot
            at column k + offset: scaled by the pivot in place, then column k of `reflectors` (row i: the entry
            at column i + offset, 1 at i = k, 0 above), the pivot its tau."""
            def reflector(k):
                start = b.i("addi", k, b.c(offset))
                after = b.i("addi", start, c1)
                pivot = get(source, k, start)
                reflects = both(b.cmpi("ult", k, limit), b.cmpf("une", get(nonzero, k), zero))
                def scaled():
                    divide(row(source, k), pivot, after, length)
                    return [pivot]
                def identity():
                    fill(row(source, k), zero, after, length)
                    return [zero]
                put(b.if_(reflects, scaled, identity, types=[E]), taus, c0, k)
            b.for_(c0, b.c(count), c1, reflector)
            def entry(i, k):
                below = b.if_(b.cmpi("ugt", i, k), lambda: [get(source, k, b.i("addi", i, b.c(offset)))],
                              lambda: [b.select(b.cmpi("eq", i, k), one, zero)], types=[E])
                put(below, reflectors, i, k)
            b.tiles(rows, b.c(count), entry)
        in_orgqr_form("ut", 0, ku, NCT, "s", M, M, "uv", "utau")
        in_orgqr_form("vh", 1, kv, NRT, "e", N, b.c(n - 1), "vv", "vtau")   # V's act on coordinates 1..n-1
        b.emit("return")
        return "\n".join(b.lines)

    # --- QR steps on the bidiagonal until every superdiagonal entry is negligible ---
    epsc, tinyc = b.c(f"{eps:.17e}", E), b.c(f"{tiny:.17e}", E)
    negligible = lambda x, near: b.cmpf("ole", absf(x), b.f("addf", tinyc, b.f("mulf", epsc, near)))  # noqa: E731
    last = b.c(n - 1)
    limit = b.c(ITERATIONS_PER_VALUE)

    def going(p, iterations):
        return both(b.cmpi("ugt", p, c0), b.cmpi("ult", iterations, limit))

    def first_match(count, test):
        """The first q in [0, count) with test(q) (an i1) and whether there is one."""
        def step(q, found_at, found):
            hit = test(q)
            return [b.select(both(hit, negated(found)), q, found_at, "index"), either(found, hit)]
        return b.for_(c0, count, c1, step, [(c0, "index"), (b.op("arith.constant false"), "i1")])

    def flush():
        """The buffered chains applied here, on this core (the buffer is full, or a deflation is to rotate rows
        out of chain order), and the buffer emptied."""
        buffered.flush([(*memref["vh"], V_PAIR, N), (*memref["ut"], U_PAIR, M)])

    def iteration(p, iterations):
        p1 = b.i("subi", p, c1)
        # k + 1: past the last negligible e[k] below p - 1 (e[k] set to 0), or 0
        split_at = lambda q: b.i("subi", p1, b.i("addi", q, c1))                 # noqa: E731
        q, found = first_match(p1, lambda q: negligible(get("e", split_at(q)), b.f(
            "addf", absf(get("s", split_at(q))), absf(get("s", b.i("addi", split_at(q), c1))))))
        k = b.select(found, b.i("addi", split_at(q), c1), c0, "index")
        b.if_(found, lambda: put(zero, "e", split_at(q)))

        def converged():
            sk = get("s", k)

            def flip():
                put(b.select(b.cmpf("olt", sk, zero), b.f("negf", sk), zero), "s", k)
                if vectors:   # V's row k negated as it is written out (rotation_buffer's flip)
                    buffered.set(c1, "flip", k)
            b.if_(b.cmpf("ole", sk, zero), flip)

            def out_of_order(at):
                inside = b.cmpi("ult", at, last)
                below = get("s", b.select(inside, b.i("addi", at, c1), at, "index"))
                return both(inside, b.cmpf("olt", get("s", at), below))

            def sink(at):
                at1 = b.i("addi", at, c1)
                x, y = get("s", at), get("s", at1)
                put(y, "s", at); put(x, "s", at1)
                if vectors:   # the rows change places as they are written out (rotation_buffer's order)
                    x, y = buffered.get("order", at), buffered.get("order", at1)
                    buffered.set(y, "order", at)
                    buffered.set(x, "order", at1)
                return [at1]
            b.while_([(k, "index")], out_of_order, sink)
            return [p1, c0]

        def not_converged():
            # the last negligible s[ks] for ks in [k, p - 1], from the top (set to 0)
            ks_at = lambda q: b.i("subi", p1, q)                                  # noqa: E731

            def small_s(q):
                ks = ks_at(q)
                above = b.select(b.cmpi("ne", ks, p1), absf(get("e", ks)), zero)
                below_at = b.select(b.cmpi("ne", ks, k), b.i("subi", ks, c1), ks, "index")
                below = b.select(b.cmpi("ne", ks, k), absf(get("e", below_at)), zero)
                return negligible(get("s", ks), b.f("addf", above, below))
            q, found = first_match(b.i("subi", p, k), small_s)
            ks = ks_at(q)
            b.if_(found, lambda: put(zero, "s", ks))

            def qr_step():
                p2 = b.i("subi", p, b.c(2))
                scale = maxf(maxf(maxf(absf(get("s", p1)), absf(get("s", p2))), maxf(absf(get("e", p2)),
                             absf(get("s", k)))), absf(get("e", k)))
                sp, sp1, ep1 = (b.f("divf", get(name, at), scale) for name, at in (("s", p1), ("s", p2), ("e", p2)))
                sk, ek = b.f("divf", get("s", k), scale), b.f("divf", get("e", k), scale)
                half = b.c("0.5", E)
                bb = b.f("mulf", half, b.f("addf", b.f("mulf", b.f("addf", sp1, sp), b.f("subf", sp1, sp)),
                                           b.f("mulf", ep1, ep1)))
                cc = b.f("mulf", b.f("mulf", sp, ep1), b.f("mulf", sp, ep1))
                root = sqrt(b.f("addf", b.f("mulf", bb, bb), cc))
                root = b.select(b.cmpf("olt", bb, zero), b.f("negf", root), root)
                shifted = either(b.cmpf("une", bb, zero), b.cmpf("une", cc, zero))
                shift = b.select(shifted, b.f("divf", cc, b.f("addf", bb, root)), zero)
                f0 = b.f("addf", b.f("mulf", b.f("addf", sk, sp), b.f("subf", sk, sp)), shift)
                g0 = b.f("mulf", sk, ek)

                if vectors:   # the chain's rotations are buffered: rotations_body applies them
                    offset, used = buffered.chain(k, p1, flush)

                def chase(j, f, g):
                    j1 = b.i("addi", j, c1)
                    cs, sn, r = rotation(f, g)
                    b.if_(b.cmpi("ne", j, k), lambda: put(r, "e", b.i("subi", j, c1)))
                    sj, ej, sj1 = get("s", j), get("e", j), get("s", j1)
                    f = b.f("addf", b.f("mulf", cs, sj), b.f("mulf", sn, ej))
                    ej = b.f("subf", b.f("mulf", cs, ej), b.f("mulf", sn, sj))
                    g = b.f("mulf", sn, sj1)
                    sj1 = b.f("mulf", cs, sj1)
                    if vectors:
                        buffered.store(b.i("addi", offset, b.i("subi", j, k)), V_PAIR, cs, sn)
                    cs, sn, r = rotation(f, g)
                    put(r, "s", j)
                    f = b.f("addf", b.f("mulf", cs, ej), b.f("mulf", sn, sj1))
                    put(b.f("subf", b.f("mulf", cs, sj1), b.f("mulf", sn, ej)), "s", j1)
                    ej1 = get("e", j1)
                    g = b.f("mulf", sn, ej1)
                    put(b.f("mulf", cs, ej1), "e", j1)
                    if vectors:
                        buffered.store(b.i("addi", offset, b.i("subi", j, k)), U_PAIR, cs, sn)
                    return [f, g]
                f, _ = b.for_(k, p1, c1, chase, [(f0, E), (g0, E)])
                if vectors:
                    buffered.close(used)
                put(f, "e", p2)
                return [p, b.i("addi", iterations, c1)]

            def deflate_bottom():
                # s[p - 1] negligible: chase e[p - 2] up the columns with rotations of V
                p2 = b.i("subi", p, b.c(2))
                if vectors:
                    flush()

                def step(q, f):
                    j = b.i("subi", p2, q)
                    cs, sn, r = rotation(get("s", j), f)
                    put(r, "s", j)
                    inside = b.cmpi("ne", j, k)
                    before = b.select(inside, b.i("subi", j, c1), j, "index")
                    e_before = get("e", before)
                    f = b.select(inside, b.f("negf", b.f("mulf", sn, e_before)), f)
                    put(b.select(inside, b.f("mulf", cs, e_before), e_before), "e", before)
                    if vectors:
                        rotate(row("vh", j), row("vh", p1), cs, sn, c0, N)
                    return [f]
                f = get("e", p2)
                put(zero, "e", p2)
                b.for_(c0, b.i("subi", p1, k), c1, step, [(f, E)])
                return [p, iterations]

            def split():
                # s[ks] negligible, ks > k: chase e[ks] along the rows with rotations of U
                if vectors:
                    flush()
                def step(j, f):
                    cs, sn, r = rotation(get("s", j), f)
                    put(r, "s", j)
                    ej = get("e", j)
                    put(b.f("mulf", cs, ej), "e", j)
                    if vectors:
                        rotate(row("ut", j), row("ut", ks), cs, sn, c0, M)
                    return [b.f("negf", b.f("mulf", sn, ej))]
                f = get("e", ks)
                put(zero, "e", ks)
                b.for_(b.i("addi", ks, c1), p, c1, step, [(f, E)])
                return [p, iterations]

            at_bottom = b.cmpi("eq", ks, p1)
            return b.if_(negated(found), qr_step,
                         lambda: b.if_(at_bottom, deflate_bottom, split, types=["index", "index"]),
                         types=["index", "index"])
        return b.if_(b.cmpi("eq", k, p1), converged, not_converged, types=["index", "index"])

    p, _ = b.while_([(N, "index"), (c0, "index")], going, iteration)

    def failed():   # no convergence (NaN or infinite input): NaN everywhere, as LAPACK's failure in JAX
        nanc = b.c(nan, E)
        fill(row("s"), nanc, c0, N)
        if vectors:
            b.for_(c0, b.c(columns), c1, lambda j: fill(row("ut", j), nanc, c0, M))
            b.for_(c0, N, c1, lambda j: fill(row("vh", j), nanc, c0, N))
            buffered.close(c0)
    b.if_(b.cmpi("ugt", p, c0), failed)
    b.emit("return")
    return "\n".join(b.lines)


def rotation_chunks(m: int, n: int, lanes: int) -> tuple[int, int]:
    """rotations_body's workgroups a matrix: (chunks of U^T's m columns, of V^T's n)."""
    chunk = chunk_columns(lanes, (m, n))
    return -(-m // chunk), -(-n // chunk)


def rotations_body(batch: int, m: int, n: int, columns: int, element: str, lanes: int) -> str:
    """The last of svd's five dispatches, a workgroup per chunk_columns of U^T (m of them) and of V^T (n) of each
    matrix (every core on one matrix): the QR steps' buffered chains applied to its columns of a copy of ut or vh
    (rows padded: register_tiles.padded_row), then its part of u (its rows: u[r, c] = ut[order[c], r] for c < n,
    the orthonormal completion's columns as the steps left them) or of vh (its columns: row r is the copy's row
    order[r], negated where flipped). Bindings: ut (columns x m), vh (n x n), the buffer and its record; u (m x
    columns), vh, the two copies."""
    chunks_u, chunks_v = rotation_chunks(m, n, lanes)
    b = KernelText(element, lanes)
    c0, c1, M, N = b.c(0), b.c(1), b.c(m), b.c(n)
    chunk_size = b.c(chunk_columns(lanes, (m, n)))
    workgroup = b.op("hal.interface.workgroup.id[0] : index", "w")
    per_matrix = b.c(chunks_u + chunks_v)
    bi = b.op(f"arith.divui {workgroup}, {per_matrix} : index", "b")
    chunk = b.op(f"arith.remui {workgroup}, {per_matrix} : index", "chunk")

    def binding(index, dims, name):
        type_ = f"memref<{batch}x{'x'.join(map(str, dims))}x{element}>"
        return b.binding(index, type_, name), type_
    ut, ut_t = binding(0, (columns, m), "ut")
    vh_in, vh_in_t = binding(1, (n, n), "vh_in")
    buffered = RotationBuffer(b, bi, batch, n, 2, pairs=2, chunk=chunk_columns(lanes, (m, n)))
    u, u_t = binding(4, (m, columns), "u")
    vh, vh_t = binding(5, (n, n), "vh")
    ut_copy, ut_copy_t = binding(6, (n, padded_row(m, element)), "ut_copy")
    vh_copy, vh_copy_t = binding(7, (n, padded_row(n, element)), "vh_copy")

    def through_chains(source, source_t, copy, copy_t, pair, k0, width):
        """Columns k0 .. k0 + chunk_size of source's first n rows into copy, the chains applied there; their end."""
        end = b.op(f"arith.minui {b.i('addi', k0, chunk_size)}, {width} : index")
        def copy_row(r):
            b.vfor(k0, end, lambda q, mask: b.vwrite(b.vread(source, [bi, r, q], source_t, mask),
                                                     copy, [bi, r, q], copy_t, mask))
        b.for_(c0, N, c1, copy_row)
        buffered.apply(copy, copy_t, pair, k0, width)
        return end

    def u_part():
        k0 = b.i("muli", chunk, chunk_size)
        end = through_chains(ut, ut_t, ut_copy, ut_copy_t, U_PAIR, k0, M)
        tile = b.c(16)
        def columns_of_u(lo, hi, value):   # u[r, c] for r in k0 .. end, 16 of u's columns c at a time
            def row_tile(j0):
                last = b.op(f"arith.minui {b.i('addi', j0, tile)}, {hi} : index")
                b.for_(k0, end, c1, lambda r: b.for_(j0, last, c1, lambda c: b.store(value(r, c), u, [bi, r, c], u_t)))
            b.for_(lo, hi, tile, row_tile)
        columns_of_u(c0, N, lambda r, c: b.load(ut_copy, [bi, buffered.get("order", c), r], ut_copy_t))
        if columns > n:
            columns_of_u(N, b.c(columns), lambda r, c: b.load(ut, [bi, c, r], ut_t))

    def v_part():
        k0 = b.i("muli", b.i("subi", chunk, b.c(chunks_u)), chunk_size)
        end = through_chains(vh_in, vh_in_t, vh_copy, vh_copy_t, V_PAIR, k0, N)
        def row(r):
            source = buffered.get("order", r)
            flipped = b.cmpi("ne", buffered.get("flip", source), c0)
            sign = b.splat(b.select(flipped, b.c("-1.0", element), b.c("1.0", element)))
            b.vfor(k0, end, lambda q, mask: b.vwrite(
                b.vf("mulf", sign, b.vread(vh_copy, [bi, source, q], vh_copy_t, mask)), vh, [bi, r, q], vh_t, mask))
        b.for_(c0, N, c1, row)
    b.if_(b.cmpi("ult", chunk, b.c(chunks_u)), u_part, v_part)
    b.emit("return")
    return "\n".join(b.lines)
