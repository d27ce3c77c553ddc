"""The QR kernels of pipeline/kernels.py (llvm-cpu): geqrf's reflectors (`hlojit.householder`) and orgqr's Q from
them (`hlojit.form_q`), as MLIR text of one workgroup's function, blocked as LAPACK's.

Each panel of `lanes` reflectors (16 in f32, 8 in f64) is made column by column, its reflectors reaching only the
panel's columns (two passes along contiguous rows a reflector: w = v^T r, then r -= tau v w^T); the rest of the
matrix then takes the panel's product in compact WY form, I - V T V^T (T by LAPACK's larft), as two register-tiled
products (register_tiles.py): W = V^T C, then C -= V (T^T W) for geqrf, C -= V (T W) for orgqr. The reflectors
left after the whole panels (and orgqr's first, from the last) go one at a time.

Measured (f32, geqrf + orgqr, pinned to local-sync, the 2-vCPU AVX-512 Xeon, 2026-12-06) against the unblocked
kernels (each reflector in two passes over the whole rest) and the blocked forms around them that this replaced
(matmuls between kernel calls, on both cores): 256² 2.6 / 1.9-2.4 -> 0.96 ms, 1024² 220 / 55 -> 49 (1008²: 42.6
before the padded copy, 1024² 65.9: rows 4 KiB apart), 2048² 458 (blocked, a 38 s first call) -> 464 (7 s).
"""
from __future__ import annotations

from .factorization_kernels import prologue
from .register_tiles import TILE_VECTORS, Operand, copied_out, padded_work, tiled_transposed_product, tiled_update

SPLIT_FROM = 512   # orgqr of this many columns or more takes PARTS workgroups a matrix
PARTS = 4


def _reflector_pass(t: str, v: str, vt: str, scratch: str, element: str, rows: str, column: str, start: str,
                    end: str, tau: str) -> str:
    """Apply H = I - tau u u^T (u: column `column` of the reflectors %v, rows `rows`..m) to the columns
    start..end of the memref %q: w = u^T q (one pass of axpys along contiguous rows into the scratch %w), then
    q -= tau u w^T (a second pass, masked at `end`: a panel's columns end where the rest of the matrix begins)."""
    return f"""            scf.for %k = {start} to {end} step %lanes {{
              vector.transfer_write %zv, %w[%k] : {v}, memref<{scratch}>
            }}
            scf.for %i = {rows} to %m step %c1 {{
              %ui = memref.load %v[%b, %i, {column}] : {vt}
              %uv = vector.broadcast %ui : {element} to {v}
              scf.for %k = {start} to {end} step %lanes {{
                %x = vector.transfer_read %q[%b, %i, %k], %zero : {t}, {v}
                %acc = vector.transfer_read %w[%k], %zero : memref<{scratch}>, {v}
                %p = arith.mulf %uv, %x : {v}
                %y = arith.addf %acc, %p : {v}
                vector.transfer_write %y, %w[%k] : {v}, memref<{scratch}>
              }}
            }}
            scf.for %i = {rows} to %m step %c1 {{
              %ui = memref.load %v[%b, %i, {column}] : {vt}
              %c = arith.mulf {tau}, %ui : {element}
              %cv = vector.broadcast %c : {element} to {v}
              scf.for %k = {start} to {end} step %lanes {{
                %left = arith.subi {end}, %k : index
                %mask = vector.create_mask %left : {v.replace(element, "i1")}
                %x = vector.transfer_read %q[%b, %i, %k], %zero : {t}, {v}
                %wk = vector.transfer_read %w[%k], %zero : memref<{scratch}>, {v}
                %p = arith.mulf %cv, %wk : {v}
                %y = arith.subf %x, %p : {v}
                vector.transfer_write %y, %q[%b, %i, %k], %mask : {v}, {t}
              }}
            }}"""


def _reflector_column(t: str, vt: str, element: str, batch: int, k: int, update: str) -> str:
    """The loop body (index %j) that makes column j's reflector: LAPACK's v[j] = 1, R's diagonal -sign(a_jj) |x|,
    tau 0 where nothing is below the diagonal; `update` applies it to the columns right of it."""
    return f"""            %j1 = arith.addi %j, %c1 : index
            %below = scf.for %i = %j1 to %m step %c1 iter_args(%sum = %zero) -> ({element}) {{
              %x = memref.load %q[%b, %i, %j] : {t}
              %x2 = arith.mulf %x, %x : {element}
              %s = arith.addf %sum, %x2 : {element}
              scf.yield %s : {element}
            }}
            %alpha = memref.load %q[%b, %j, %j] : {t}
            %a2 = arith.mulf %alpha, %alpha : {element}
            %n2 = arith.addf %a2, %below : {element}
            %norm = math.sqrt %n2 : {element}
            %negnorm = arith.negf %norm : {element}
            %nonneg = arith.cmpf oge, %alpha, %zero : {element}
            %beta = arith.select %nonneg, %negnorm, %norm : {element}
            %trivial = arith.cmpf oeq, %below, %zero : {element}
            %bma = arith.subf %beta, %alpha : {element}
            %safe = arith.select %trivial, %one, %beta : {element}
            %tq = arith.divf %bma, %safe : {element}
            %tau = arith.select %trivial, %zero, %tq : {element}
            %amb = arith.subf %alpha, %beta : {element}
            %scale = arith.select %trivial, %one, %amb : {element}
            memref.store %one, %v[%b, %j, %j] : {vt}
            scf.for %i = %j1 to %m step %c1 {{
              %x = memref.load %q[%b, %i, %j] : {t}
              %u = arith.divf %x, %scale : {element}
              memref.store %u, %v[%b, %i, %j] : {vt}
            }}
            memref.store %tau, %taus[%b, %c0, %j] : memref<{batch}x1x{k}x{element}>
{update}
            %diagonal = arith.select %trivial, %alpha, %beta : {element}
            memref.store %diagonal, %q[%b, %j, %j] : {t}
            scf.for %i = %j1 to %m step %c1 {{
              memref.store %zero, %q[%b, %i, %j] : {t}
            }}
"""


def _panel_of_reflectors(vt: str, pt: str, element: str, lanes: int) -> str:
    """%vp[r, c] = the reflector j0 + c at row r (rows j0 .. m - 1): 1 on its diagonal, 0 above, v below (whatever
    v holds above its diagonal: orgqr's v may come from elsewhere)."""
    iota = ", ".join(str(i) for i in range(lanes))
    return f"""            %pl_iota = arith.constant dense<[{iota}]> : vector<{lanes}xindex>
            %pl_ones = arith.constant dense<1.0> : vector<{lanes}x{element}>
            scf.for %pl_r = %j0 to %m step %c1 {{
              %pl_d = arith.subi %pl_r, %j0 : index
              %pl_dv = vector.broadcast %pl_d : index to vector<{lanes}xindex>
              %pl_row = vector.transfer_read %v[%b, %pl_r, %j0], %zero : {vt}, vector<{lanes}x{element}>
              %pl_below = arith.cmpi ugt, %pl_dv, %pl_iota : vector<{lanes}xindex>
              %pl_on = arith.cmpi eq, %pl_dv, %pl_iota : vector<{lanes}xindex>
              %pl_kept = arith.select %pl_below, %pl_row, %zv : vector<{lanes}xi1>, vector<{lanes}x{element}>
              %pl_value = arith.select %pl_on, %pl_ones, %pl_kept : vector<{lanes}xi1>, vector<{lanes}x{element}>
              vector.transfer_write %pl_value, %vp[%b, %pl_r, %c0] : vector<{lanes}x{element}>, {pt}
            }}"""


def _larft(pt: str, taus: str, element: str, lanes: int) -> str:
    """%tt (lanes x lanes, upper triangle) with H_j0 ... H_j0+lanes-1 = I - V T V^T (LAPACK's larft, forward,
    columnwise): T[i, i] = tau_i, T[:i, i] = -tau_i T[:i, :i] (V[:, :i]^T v_i), the dots as one vector a row."""
    v = f"vector<{lanes}x{element}>"
    return f"""            scf.for %lt_i = %c0 to %nb step %c1 {{
              %lt_row = arith.addi %j0, %lt_i : index
              %lt_tau = memref.load %taus[%b, %c0, %lt_row] : {taus}
              %lt_z = scf.for %lt_r = %lt_row to %m step %c1 iter_args(%lt_acc = %zv) -> ({v}) {{
                %lt_x = vector.transfer_read %vp[%b, %lt_r, %c0], %zero : {pt}, {v}
                %lt_s = memref.load %vp[%b, %lt_r, %lt_i] : {pt}
                %lt_sv = vector.broadcast %lt_s : {element} to {v}
                %lt_p = arith.mulf %lt_x, %lt_sv : {v}
                %lt_y = arith.addf %lt_acc, %lt_p : {v}
                scf.yield %lt_y : {v}
              }}
              vector.transfer_write %lt_z, %zs[%c0] : {v}, memref<{lanes}x{element}>
              scf.for %lt_c = %c0 to %lt_i step %c1 {{
                %lt_sum = scf.for %lt_d = %lt_c to %lt_i step %c1 iter_args(%lt_s2 = %zero) -> ({element}) {{
                  %lt_t = memref.load %tt[%lt_c, %lt_d] : memref<{lanes}x{lanes}x{element}>
                  %lt_zd = memref.load %zs[%lt_d] : memref<{lanes}x{element}>
                  %lt_q = arith.mulf %lt_t, %lt_zd : {element}
                  %lt_n = arith.addf %lt_s2, %lt_q : {element}
                  scf.yield %lt_n : {element}
                }}
                %lt_scaled = arith.mulf %lt_tau, %lt_sum : {element}
                %lt_neg = arith.negf %lt_scaled : {element}
                memref.store %lt_neg, %tt[%lt_c, %lt_i] : memref<{lanes}x{lanes}x{element}>
              }}
              memref.store %lt_tau, %tt[%lt_i, %lt_i] : memref<{lanes}x{lanes}x{element}>
            }}"""


def _times_t(wt: str, element: str, lanes: int, transposed: bool, columns: tuple[str, str]) -> str:
    """W = T^T W (geqrf) or T W (orgqr) in place, W the scratch %wsc (lanes rows), a vector of columns at a time:
    row c of the product takes rows d <= c of W (T^T, so c goes down) or d >= c (T, so c goes up), none yet
    overwritten."""
    v = f"vector<{lanes}x{element}>"
    tt = f"memref<{lanes}x{lanes}x{element}>"
    row = ("%tw_c = arith.subi %tw_last, %tw_cc : index" if transposed else "%tw_c = arith.addi %tw_cc, %c0 : index")
    d_range, t_at = (("%c0", "%tw_c1"), "%tw_d, %tw_c") if transposed else (("%tw_c", "%nb"), "%tw_c, %tw_d")
    return f"""            %tw_last = arith.constant {lanes - 1} : index
            scf.for %tw_k = {columns[0]} to {columns[1]} step %lanes {{
              scf.for %tw_cc = %c0 to %nb step %c1 {{
                {row}
                %tw_c1 = arith.addi %tw_c, %c1 : index
                %tw_sum = scf.for %tw_d = {d_range[0]} to {d_range[1]} step %c1 iter_args(%tw_acc = %zv) -> ({v}) {{
                  %tw_t = memref.load %tt[{t_at}] : {tt}
                  %tw_tv = vector.broadcast %tw_t : {element} to {v}
                  %tw_w = vector.transfer_read %wsc[%b, %tw_d, %tw_k], %zero : {wt}, {v}
                  %tw_p = arith.mulf %tw_tv, %tw_w : {v}
                  %tw_s = arith.addf %tw_acc, %tw_p : {v}
                  scf.yield %tw_s : {v}
                }}
                vector.transfer_write %tw_sum, %wsc[%b, %tw_c, %tw_k] : {v}, {wt}
              }}
            }}"""


def _block_update(t: str, vt: str, wt: str, pt: str, taus: str, element: str, lanes: int, transposed: bool,
                  columns: tuple[str, str]) -> str:
    """The panel j0 .. j0 + lanes - 1's product applied to the rows j0 .. m - 1 and `columns` of %q."""
    c = Operand("%q", t)
    w, vp = Operand("%wsc", wt), Operand("%vp", pt)
    return "\n".join([
        _panel_of_reflectors(vt, pt, element, lanes),
        _larft(pt, taus, element, lanes),
        tiled_transposed_product(w, c, vp, "%c0", ("%j0", "%m"), columns, lanes, element, lanes, "%gw", indent=12),
        _times_t(wt, element, lanes, transposed, columns),
        tiled_update(c, w, "%c0", vp, "%c0", ("%j0", "%m"), lambda first: columns[0], columns[1], lanes, element,
                     lanes, "%gu", indent=12)])


def _scratch(batch: int, m: int, columns: int, element: str, lanes: int, first_binding: int,
             parts: int = 1) -> tuple[str, str, str]:
    """(the lines, W's type, V's type): the scratch bindings %wsc (lanes x columns: W) and %vp (m x lanes: the
    panel's reflectors; with `parts`, one a workgroup: %vp[%b] is %wg's), the stack's %w (a reflector's w), %tt
    (T) and %zs (larft's dots)."""
    wt = f"memref<{batch}x{lanes}x{columns}x{element}>"
    pt = f"memref<{batch}x{m}x{lanes}x{element}>"
    npad = -(-columns // lanes) * lanes
    if parts == 1:
        vp = f"%vp = hal.interface.binding.subspan layout(#layout) binding({first_binding + 1}) alignment(64) offset(%c0) : {pt}"
    else:
        every = f"memref<{batch * parts}x{m}x{lanes}x{element}>"
        pt = f"memref<{batch}x{m}x{lanes}x{element}, strided<[{m * lanes}, {lanes}, 1], offset: ?>>"
        vp = (f"""%vp_all = hal.interface.binding.subspan layout(#layout) binding({first_binding + 1}) alignment(64) offset(%c0) : {every}
        %vp_at = arith.subi %wg, %b : index
        %vp = memref.subview %vp_all[%vp_at, 0, 0] [{batch}, {m}, {lanes}] [1, 1, 1] : {every} to {pt}""")
    return (f"""        %wsc = hal.interface.binding.subspan layout(#layout) binding({first_binding}) alignment(64) offset(%c0) : {wt}
        {vp}
        %w = memref.alloca() : memref<{npad}x{element}>
        %tt = memref.alloca() : memref<{lanes}x{lanes}x{element}>
        %zs = memref.alloca() : memref<{lanes}x{element}>
        %nb = arith.constant {lanes} : index""", wt, pt)


def householder_body(batch: int, m: int, n: int, element: str, lanes: int) -> str:
    """geqrf's reflectors as qr.householder's: r (m x n, zero below the diagonal), v (m x k), tau (1 x k); then
    the scratch W (lanes x n), V (m x lanes) and the padded working copy of r (register_tiles.padded_row)."""
    k = min(m, n)
    whole = k // lanes * lanes
    io = f"memref<{batch}x{m}x{n}x{element}>"
    work, t = padded_work(batch, m, n, element, 6, "%q")
    vt = f"memref<{batch}x{m}x{k}x{element}>"
    v = f"vector<{lanes}x{element}>"
    npad = -(-n // lanes) * lanes
    taus = f"memref<{batch}x1x{k}x{element}>"
    scratch, wt, pt = _scratch(batch, m, n, element, lanes, 4)
    in_panel = _reflector_column(t, vt, element, batch, k, _reflector_pass(
        t, v, vt, f"{npad}x{element}", element, "%j", "%j", "%j1", "%pend", "%tau"))
    alone = _reflector_column(t, vt, element, batch, k, _reflector_pass(
        t, v, vt, f"{npad}x{element}", element, "%j", "%j", "%j1", "%n", "%tau"))
    return f"""{prologue(element, lanes, [("%in", io), ("%out", io), ("%v", vt), ("%taus", taus)])}
{scratch}
{work}
        %m = arith.constant {m} : index
        %n = arith.constant {n} : index
        %kk = arith.constant {k} : index
        %whole = arith.constant {whole} : index
        scf.for %i = %c0 to %m step %c1 {{
          scf.for %k = %c0 to %n step %lanes {{
            %r = vector.transfer_read %in[%b, %i, %k], %zero : {io}, {v}
            vector.transfer_write %r, %q[%b, %i, %k] : {v}, {t}
          }}
          scf.for %k = %c0 to %kk step %lanes {{
            vector.transfer_write %zv, %v[%b, %i, %k] : {v}, {vt}
          }}
        }}
        scf.for %j0 = %c0 to %whole step %nb {{
          %pend = arith.addi %j0, %nb : index
          scf.for %j = %j0 to %pend step %c1 {{
{in_panel}
          }}
          %more = arith.cmpi ult, %pend, %n : index
          scf.if %more {{
{_block_update(t, vt, wt, pt, taus, element, lanes, True, ("%pend", "%n"))}
          }}
        }}
        scf.for %j = %whole to %kk step %c1 {{
{alone}
        }}
{copied_out("%q", t, "%out", io, "%m", "%n", v)}
        return"""


def form_q_bounds(m: int, k: int, columns: int, lanes: int) -> list[int]:
    """The first column of each of orgqr's workgroups on a matrix, then `columns`: one below SPLIT_FROM columns,
    else PARTS with equal shares of the work (column j takes reflectors i <= j, each on rows i .. m-1), each
    bound a multiple of a register tile's width (tiled_update writes whole tiles past a range's end)."""
    if columns < SPLIT_FROM:
        return [0, columns]
    align, reflectors = TILE_VECTORS * lanes, min(k, m, columns)
    cost, total = [], 0
    for j in range(columns):
        i = min(j, reflectors - 1)
        total += (i + 1) * m - i * (i + 1) // 2
        cost.append(total)
    bounds = [0]
    for part in range(1, PARTS):
        share = total * part / PARTS
        j = next(j for j, c in enumerate(cost) if c >= share)
        bound = round(j / align) * align
        if bounds[-1] < bound < columns:
            bounds.append(bound)
    return bounds + [columns]


def form_q_body(batch: int, m: int, k: int, columns: int, element: str, lanes: int) -> str:
    """The first `columns` columns of Q = H_0 ... H_{k-1} (orgqr): the identity's columns take the reflectors
    left after the whole panels one at a time from the last, then each panel's product from the last, on the
    rows and columns from the panel's first index on; then the scratch W (lanes x columns), V (m x lanes, one a
    workgroup) and the padded working copy of Q. Past SPLIT_FROM columns a matrix takes a workgroup per part of
    its columns (form_q_bounds): a column of Q needs only the reflectors up to its index (eigh's 1024² f32 on
    the 2-vCPU Xeon, 2026-12-06: 18 -> 12 ms on local-task), a part's range beginning at a tile's bound (the
    columns below a panel take its reflections exactly unchanged: their rows from the panel's on are 0)."""
    reflectors = min(k, m, columns)
    whole = reflectors // lanes * lanes
    npad = -(-columns // lanes) * lanes
    bounds = form_q_bounds(m, k, columns, lanes)
    parts = len(bounds) - 1
    io = f"memref<{batch}x{m}x{columns}x{element}>"
    work, t = padded_work(batch, m, columns, element, 5, "%q")
    vt = f"memref<{batch}x{m}x{k}x{element}>"
    v = f"vector<{lanes}x{element}>"
    taus = f"memref<{batch}x1x{k}x{element}>"
    scratch, wt, pt = _scratch(batch, m, columns, element, lanes, 3, parts)
    if parts == 1:
        span = f"        %lo = arith.constant 0 : index\n        %hi = arith.constant {columns} : index"
        alone_start, panel_start = "%j", "%j0"
    else:   # this part's columns lo .. hi
        lines = []
        for name, values in (("%lo", bounds[:-1]), ("%hi", bounds[1:])):
            lines.append(f"        {name}0 = arith.constant {values[0]} : index")
            for p, value in enumerate(values[1:], 1):
                lines += [f"        {name}c{p} = arith.constant {value} : index",
                          f"        {name}is{p} = arith.cmpi eq, %part, %c{p}_part : index",
                          f"        {name}{p} = arith.select {name}is{p}, {name}c{p}, {name}{p - 1} : index"]
            lines.append(f"        {name} = arith.addi {name}{parts - 1}, %c0 : index")
        span = "\n".join([f"        %c{p}_part = arith.constant {p} : index" for p in range(1, parts)] + lines)
        span += f"\n        %align = arith.constant {TILE_VECTORS * lanes} : index"
        alone_start, panel_start = "%alone_start", "%panel_start"
    update = _reflector_pass(t, v, vt, f"{npad}x{element}", element, "%j", "%j", alone_start, "%hi", "%tau")
    panel = _block_update(t, vt, wt, pt, taus, element, lanes, False, (panel_start, "%hi"))
    alone_start_line = "" if parts == 1 else "          %alone_start = arith.maxui %j, %lo : index"
    panel_start_line = "" if parts == 1 else """          %j0_rem = arith.remui %j0, %align : index
          %j0_tile = arith.subi %j0, %j0_rem : index
          %panel_start = arith.maxui %j0_tile, %lo : index"""
    return f"""{prologue(element, lanes, [("%v", vt), ("%taus", taus), ("%out", io)], parts)}
{scratch}
{work}
        %m = arith.constant {m} : index
        %cols = arith.constant {columns} : index
        %last = arith.constant {reflectors - 1} : index
        %alone = arith.constant {reflectors - whole} : index
        %whole = arith.constant {whole} : index
{span}
        scf.for %i = %c0 to %m step %c1 {{
          scf.for %k = %lo to %hi step %lanes {{
            vector.transfer_write %zv, %q[%b, %i, %k] : {v}, {t}
          }}
          %on_or_past = arith.cmpi uge, %i, %lo : index
          %before = arith.cmpi ult, %i, %hi : index
          %diag = arith.andi %on_or_past, %before : i1
          scf.if %diag {{
            memref.store %one, %q[%b, %i, %i] : {t}
          }}
        }}
        scf.for %jj = %c0 to %alone step %c1 {{
          %j = arith.subi %last, %jj : index
          %reaches = arith.cmpi ult, %j, %hi : index
          scf.if %reaches {{
{alone_start_line}
          %tau = memref.load %taus[%b, %c0, %j] : memref<{batch}x1x{k}x{element}>
{update}
          }}
        }}
        scf.for %jb = %c0 to %whole step %nb {{
          %jfrom = arith.subi %whole, %jb : index
          %j0 = arith.subi %jfrom, %nb : index
          %reaches = arith.cmpi ult, %j0, %hi : index
          scf.if %reaches {{
{panel_start_line}
{panel}
          }}
        }}
{copied_out("%q", t, "%out", io, "%m", "%hi", v, "%lo")}
        return"""
