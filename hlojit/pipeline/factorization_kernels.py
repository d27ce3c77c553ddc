"""The bodies of pipeline/kernels.py's factorization and solve kernels (llvm-cpu): MLIR text of one workgroup's
function, row-major, every inner loop along a contiguous row in vectors of `lanes` (16 f32, 8 f64). kernels.py
wraps each in its executable and claims the composites they serve; QR's are in qr_kernels.py, eigh's in
eigh_kernel.py, svd's in svd_kernel.py.
"""
from __future__ import annotations

from .register_tiles import Operand, copied_out, padded_work, tiled_update

CHOLESKY_BLOCK = 8   # rows of U the trailing rows take at once (register tiles, padded: 256² 0.15 ms by 8, 0.17 by
                     # 16 and 32; 1024² 6.5, 5.9, 5.7; 2-vCPU Xeon 2026-12-06)


def cholesky_body(batch: int, n: int, element: str, lanes: int, nan: str) -> str:
    """The kernel's function body: L of each matrix's lower triangle (JAX's NaN triangle where a pivot fails).

    A padded working copy (register_tiles.padded_row) holds U = L^T row by row while it factors (right-looking:
    row j of U is scaled by its pivot, then the rows of its block take the axpy that row j gives them, along
    contiguous columns in vectors of `lanes`); once a block of CHOLESKY_BLOCK rows is finished the rows below
    take all of its rows by register tiles (register_tiles.tiled_update). U is transposed into L at the end. Both
    transposing copies walk the padded copy's columns (256² with the input's or output's columns walked: 0.30 ms
    a call, 4 KiB-apart rows thrashing L1; 257² 0.13)."""
    io = f"memref<{batch}x{n}x{n}x{element}>"
    work, t = padded_work(batch, n, n, element, 2, "%w")
    v = f"vector<{lanes}x{element}>"
    block = CHOLESKY_BLOCK
    # a tile's rows start at its first row's column: the few elements left of a later row's diagonal are never read
    trailing = tiled_update(Operand("%w", t), Operand("%w", t), "%j0", Operand("%w", t, transposed=True), "%j0",
                            ("%next", "%n"), lambda first: first, "%n", block, element, lanes, "%t")
    return f"""{prologue(element, lanes, [("%in", io), ("%out", io)])}
{work}
        %n = arith.constant {n} : index
        %block = arith.constant {block} : index
        %nan = arith.constant {nan} : {element}
        scf.for %k = %c0 to %n step %c1 {{
          scf.for %i = %c0 to %n step %c1 {{
            %a = memref.load %in[%b, %k, %i] : {io}
            memref.store %a, %w[%b, %i, %k] : {t}
          }}
        }}
        scf.for %j0 = %c0 to %n step %block {{
          %next = arith.addi %j0, %block : index
          %end = arith.minui %next, %n : index
          scf.for %j = %j0 to %end step %c1 {{
            %j1 = arith.addi %j, %c1 : index
            %ajj = memref.load %w[%b, %j, %j] : {t}
            %d = math.sqrt %ajj : {element}
            memref.store %d, %w[%b, %j, %j] : {t}
            %dv = vector.broadcast %d : {element} to {v}
            scf.for %k = %j1 to %n step %lanes {{
              %r = vector.transfer_read %w[%b, %j, %k], %zero : {t}, {v}
              %q = arith.divf %r, %dv : {v}
              vector.transfer_write %q, %w[%b, %j, %k] : {v}, {t}
            }}
            scf.for %i = %j1 to %end step %c1 {{
              %m = memref.load %w[%b, %j, %i] : {t}
              %mv = vector.broadcast %m : {element} to {v}
              scf.for %k = %i to %n step %lanes {{
                %u = vector.transfer_read %w[%b, %j, %k], %zero : {t}, {v}
                %x = vector.transfer_read %w[%b, %i, %k], %zero : {t}, {v}
                %p = arith.mulf %mv, %u : {v}
                %y = arith.subf %x, %p : {v}
                vector.transfer_write %y, %w[%b, %i, %k] : {v}, {t}
              }}
            }}
          }}
          %whole = arith.cmpi ule, %next, %n : index
          scf.if %whole {{
{trailing}
          }}
        }}
        %failed = scf.for %i = %c0 to %n step %c1 iter_args(%f = %c0) -> (index) {{
          %dii = memref.load %w[%b, %i, %i] : {t}
          %bad = arith.cmpf une, %dii, %dii : {element}
          %fi = arith.select %bad, %c1, %f : index
          scf.yield %fi : index
        }}
        %isfailed = arith.cmpi ne, %failed, %c0 : index
        scf.for %i = %c0 to %n step %c1 {{
          %i1 = arith.addi %i, %c1 : index
          scf.for %k = %c0 to %i1 step %c1 {{
            %u = memref.load %w[%b, %k, %i] : {t}
            %l = arith.select %isfailed, %nan, %u : {element}
            memref.store %l, %out[%b, %i, %k] : {io}
          }}
          scf.for %k = %i1 to %n step %c1 {{
            memref.store %zero, %out[%b, %i, %k] : {io}
          }}
        }}
        return"""


def lu_body(batch: int, n: int, element: str, lanes: int) -> str:
    """getrf with partial pivoting (LAPACK's pivots: the first largest magnitude, NaN before any number; a zero
    pivot is not divided by), row-major, blocked right-looking: a panel of `lanes` columns is factored on its
    own columns (whole rows swapped; each row's part of the panel one masked vector), then its U rows right of
    the panel are finished by forward substitution with the panel's unit lower block, and the rows below take
    all the panel's rows by register tiles (register_tiles.py). Also the row order (a[order] = L U) and the
    number of real swaps. It factors a padded working copy (register_tiles.padded_row), copied out at the end.
    The panel is a vector wide (a panel row is one masked vector): 16 columns in f32, 8 in f64 (f32 by 16 rather
    than 8 on the 2-vCPU Xeon, 2026-12-05: solve 256² 0.67 -> 0.54 ms, 1024² 22.6 -> 19.7; JAX 0.81, 19.2)."""
    io = f"memref<{batch}x{n}x{n}x{element}>"
    work, t = padded_work(batch, n, n, element, 5, "%lu")
    v = f"vector<{lanes}x{element}>"
    block = lanes
    trailing = tiled_update(Operand("%lu", t), Operand("%lu", t), "%j0", Operand("%lu", t), "%j0", ("%next", "%n"),
                            lambda first: "%next", "%n", block, element, lanes, "%t")
    indices = f"memref<{batch}x{n}xi32>"
    bindings = [("%in", io), ("%out", io), ("%piv", indices), ("%ord", indices), ("%sw", f"memref<{batch}xi32>")]
    return f"""{prologue(element, lanes, bindings)}
{work}
        %n = arith.constant {n} : index
        %block = arith.constant {block} : index
        %none = arith.constant -1.0 : {element}
        %true = arith.constant true
        scf.for %i = %c0 to %n step %c1 {{
          %ii = arith.index_cast %i : index to i32
          memref.store %ii, %ord[%b, %i] : memref<{batch}x{n}xi32>
          scf.for %k = %c0 to %n step %lanes {{
            %r = vector.transfer_read %in[%b, %i, %k], %zero : {io}, {v}
            vector.transfer_write %r, %lu[%b, %i, %k] : {v}, {t}
          }}
        }}
        %c0i = arith.constant 0 : i32
        %c1i = arith.constant 1 : i32
        %swaps = scf.for %j0 = %c0 to %n step %block iter_args(%sw0 = %c0i) -> (i32) {{
          %next = arith.addi %j0, %block : index
          %end = arith.minui %next, %n : index
          %swj = scf.for %j = %j0 to %end step %c1 iter_args(%swa = %sw0) -> (i32) {{
            %j1 = arith.addi %j, %c1 : index
            %best:2 = scf.for %i = %j to %n step %c1 iter_args(%bv = %none, %bi = %j) -> ({element}, index) {{
              %a = memref.load %lu[%b, %i, %j] : {t}
              %mag = math.absf %a : {element}
              %gt = arith.cmpf ogt, %mag, %bv : {element}
              %isnan = arith.cmpf uno, %mag, %mag : {element}
              %bestnan = arith.cmpf uno, %bv, %bv : {element}
              %notbestnan = arith.xori %bestnan, %true : i1
              %nanfirst = arith.andi %isnan, %notbestnan : i1
              %take = arith.ori %gt, %nanfirst : i1
              %nv = arith.select %take, %mag, %bv : {element}
              %ni = arith.select %take, %i, %bi : index
              scf.yield %nv, %ni : {element}, index
            }}
            %p = arith.index_cast %best#1 : index to i32
            memref.store %p, %piv[%b, %j] : memref<{batch}x{n}xi32>
            %moved = arith.cmpi ne, %best#1, %j : index
            %swn = scf.if %moved -> (i32) {{
              scf.for %k = %c0 to %n step %lanes {{
                %x = vector.transfer_read %lu[%b, %j, %k], %zero : {t}, {v}
                %y = vector.transfer_read %lu[%b, %best#1, %k], %zero : {t}, {v}
                vector.transfer_write %y, %lu[%b, %j, %k] : {v}, {t}
                vector.transfer_write %x, %lu[%b, %best#1, %k] : {v}, {t}
              }}
              %oj = memref.load %ord[%b, %j] : memref<{batch}x{n}xi32>
              %op = memref.load %ord[%b, %best#1] : memref<{batch}x{n}xi32>
              memref.store %op, %ord[%b, %j] : memref<{batch}x{n}xi32>
              memref.store %oj, %ord[%b, %best#1] : memref<{batch}x{n}xi32>
              %s1 = arith.addi %swa, %c1i : i32
              scf.yield %s1 : i32
            }} else {{
              scf.yield %swa : i32
            }}
            %d = memref.load %lu[%b, %j, %j] : {t}
            %nonzero = arith.cmpf une, %d, %zero : {element}
            %width = arith.subi %end, %j1 : index
            %panel = vector.create_mask %width : vector<{lanes}xi1>
            %pivot_row = vector.transfer_read %lu[%b, %j, %j1], %zero, %panel : {t}, {v}
            scf.for %i = %j1 to %n step %c1 {{
              %a = memref.load %lu[%b, %i, %j] : {t}
              %q = arith.divf %a, %d : {element}
              %l = arith.select %nonzero, %q, %a : {element}
              memref.store %l, %lu[%b, %i, %j] : {t}
              %lv = vector.broadcast %l : {element} to {v}
              %x = vector.transfer_read %lu[%b, %i, %j1], %zero, %panel : {t}, {v}
              %pr = arith.mulf %lv, %pivot_row : {v}
              %y = arith.subf %x, %pr : {v}
              vector.transfer_write %y, %lu[%b, %i, %j1], %panel : {v}, {t}
            }}
            scf.yield %swn : i32
          }}
          %whole = arith.cmpi ult, %next, %n : index
          scf.if %whole {{
            scf.for %r = %j0 to %next step %c1 {{
              scf.for %s = %j0 to %r step %c1 {{
                %l = memref.load %lu[%b, %r, %s] : {t}
                %lv = vector.broadcast %l : {element} to {v}
                scf.for %k = %next to %n step %lanes {{
                  %u = vector.transfer_read %lu[%b, %s, %k], %zero : {t}, {v}
                  %x = vector.transfer_read %lu[%b, %r, %k], %zero : {t}, {v}
                  %pr = arith.mulf %lv, %u : {v}
                  %y = arith.subf %x, %pr : {v}
                  vector.transfer_write %y, %lu[%b, %r, %k] : {v}, {t}
                }}
              }}
            }}
{trailing}
          }}
          scf.yield %swj : i32
        }}
        memref.store %swaps, %sw[%b] : memref<{batch}xi32>
{copied_out("%lu", t, "%out", io, "%n", "%n", v)}
        return"""


def prologue(element: str, lanes: int, bindings: list[tuple[str, str]], parts: int = 1) -> str:
    """The lines every kernel body starts with: %c0, %c1, %lanes, %zero, %one, %zv (a zero vector), %b (the
    workgroup's matrix of the batch; with `parts` workgroups a matrix, %wg the workgroup and %part its part of
    the matrix) and a subspan per binding [(name, memref type)], in binding order."""
    lines = [f"""        %c0 = arith.constant 0 : index
        %c1 = arith.constant 1 : index
        %lanes = arith.constant {lanes} : index
        %zero = arith.constant 0.0 : {element}
        %one = arith.constant 1.0 : {element}
        %zv = arith.constant dense<0.0> : vector<{lanes}x{element}>"""]
    if parts == 1:
        lines.append("        %b = hal.interface.workgroup.id[0] : index")
    else:
        lines.append(f"""        %wg = hal.interface.workgroup.id[0] : index
        %parts = arith.constant {parts} : index
        %b = arith.divui %wg, %parts : index
        %part = arith.remui %wg, %parts : index""")
    lines += [f"        {name} = hal.interface.binding.subspan layout(#layout) binding({i}) alignment(64) offset(%c0) : "
              f"{type_}" for i, (name, type_) in enumerate(bindings)]
    return "\n".join(lines)


def substitution_body(batch: int, n: int, r: int, element: str, lanes: int, permuted: bool,
                       phases: list[tuple[bool, bool]], by_dots: bool) -> str:
    """X with T X = B for the triangles `phases` [(lower, unit diagonal)] of the matrix (binding 0) in turn, B
    the right-hand sides (n x r; with `permuted`, B's rows in the order of binding 1 first: an LU solve).
    Row updates: x_i -= t_ij x_j along the r columns of X, a vector of `lanes` (most right-hand sides).
    By dots (fewer right-hand sides than lanes): each right-hand side a row of a stack scratch y (r x n),
    x_i = (b_i - T[i, done] . y[done]) / t_ii, the dots along contiguous rows of T in full vectors (an LU solve
    of 256 x 256 with 4 right-hand sides ~4x faster). A zero diagonal divides (inf/nan)."""
    t = f"memref<{batch}x{n}x{n}x{element}>"
    xt = f"memref<{batch}x{n}x{r}x{element}>"
    ot = f"memref<{batch}x{n}xi32>"
    yt = f"memref<{r}x{n}x{element}>"
    v = f"vector<{lanes}x{element}>"
    bindings = ["%t", "%order", "%rhs", "%x"] if permuted else ["%t", "%rhs", "%x"]
    types = [t, ot, xt, xt] if permuted else [t, xt, xt]
    lines = [prologue(element, lanes, list(zip(bindings, types))), f"""        %n = arith.constant {n} : index
        %last = arith.constant {n - 1} : index
        %r = arith.constant {r} : index"""]
    source_row = "%o" if permuted else "%i"
    order = (f"""          %o32 = memref.load %order[%b, %i] : {ot}
          %o = arith.index_cast %o32 : i32 to index
""" if permuted else "")
    if by_dots:
        lines.append(f"""        %ys = memref.alloca() : {yt}
        scf.for %i = %c0 to %n step %c1 {{
{order}          scf.for %c = %c0 to %r step %c1 {{
            %value = memref.load %rhs[%b, {source_row}, %c] : {xt}
            memref.store %value, %ys[%c, %i] : {yt}
          }}
        }}""")
    else:
        lines.append(f"""        scf.for %i = %c0 to %n step %c1 {{
{order}          scf.for %k = %c0 to %r step %lanes {{
            %row = vector.transfer_read %rhs[%b, {source_row}, %k], %zero : {xt}, {v}
            vector.transfer_write %row, %x[%b, %i, %k] : {v}, {xt}
          }}
        }}""")
    for phase, (lower, unit) in enumerate(phases):
        # row i of the phase: i = ii going down (lower), n - 1 - ii going up (upper); done = [0, i) or (i, n)
        index = "%i = arith.addi %ii, %c0 : index" if lower else "%i = arith.subi %last, %ii : index"
        done = ("%c0", "%i") if lower else ("%i1", "%n")
        if by_dots:
            divide = "" if unit else f"""
            %d = memref.load %t[%b, %i, %i] : {t}
            %new = arith.divf %rest, %d : {element}"""
            result = "%rest" if unit else "%new"
            lines.append(f"""        scf.for %c = %c0 to %r step %c1 {{
          scf.for %ii = %c0 to %n step %c1 {{
            {index}
            %i1 = arith.addi %i, %c1 : index
            %dotv = scf.for %k = {done[0]} to {done[1]} step %lanes iter_args(%acc = %zv) -> ({v}) {{
              %left = arith.subi {done[1]}, %k : index
              %mask = vector.create_mask %left : vector<{lanes}xi1>
              %l = vector.transfer_read %t[%b, %i, %k], %zero, %mask : {t}, {v}
              %y = vector.transfer_read %ys[%c, %k], %zero, %mask : {yt}, {v}
              %p = arith.mulf %l, %y : {v}
              %sum = arith.addf %acc, %p : {v}
              scf.yield %sum : {v}
            }}
            %dot = vector.reduction <add>, %dotv : {v} into {element}
            %yi = memref.load %ys[%c, %i] : {yt}
            %rest = arith.subf %yi, %dot : {element}{divide}
            memref.store {result}, %ys[%c, %i] : {yt}
          }}
        }}""")
        else:
            divide = "" if unit else f"""
          %d = memref.load %t[%b, %i, %i] : {t}
          %dv = vector.broadcast %d : {element} to {v}
          scf.for %k = %c0 to %r step %lanes {{
            %xi = vector.transfer_read %x[%b, %i, %k], %zero : {xt}, {v}
            %q = arith.divf %xi, %dv : {v}
            vector.transfer_write %q, %x[%b, %i, %k] : {v}, {xt}
          }}"""
            lines.append(f"""        scf.for %ii = %c0 to %n step %c1 {{
          {index}
          %i1 = arith.addi %i, %c1 : index
          scf.for %j = {done[0]} to {done[1]} step %c1 {{
            %l = memref.load %t[%b, %i, %j] : {t}
            %lv = vector.broadcast %l : {element} to {v}
            scf.for %k = %c0 to %r step %lanes {{
              %xj = vector.transfer_read %x[%b, %j, %k], %zero : {xt}, {v}
              %xi = vector.transfer_read %x[%b, %i, %k], %zero : {xt}, {v}
              %p = arith.mulf %lv, %xj : {v}
              %y = arith.subf %xi, %p : {v}
              vector.transfer_write %y, %x[%b, %i, %k] : {v}, {xt}
            }}
          }}{divide}
        }}""")
    if by_dots:
        lines.append(f"""        scf.for %i = %c0 to %n step %c1 {{
          scf.for %c = %c0 to %r step %c1 {{
            %value = memref.load %ys[%c, %i] : {yt}
            memref.store %value, %x[%b, %i, %c] : {xt}
          }}
        }}""")
    lines.append("        return")
    return "\n".join(lines)
