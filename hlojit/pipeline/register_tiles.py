"""Register-tiled matrix updates for the llvm-cpu kernels (factorization_kernels.py), as MLIR text: the BLAS-3 part
of a blocked factorization, written so that LLVM keeps a tile of accumulators in vector registers.

A row-at-a-time update loads one vector per multiply-add (from L2 once the matrix outgrows L1); a tile of
tile_rows() rows x TILE_VECTORS vectors loads each vector of the streaming operand once for all its rows. Rows a
multiple of 4 KiB apart defeat it (the CPU takes a load after a store to another such row as depending on it:
4K aliasing), so the kernels factor a padded working copy (padded_row).

Measured on the 2-vCPU AVX-512 Xeon, 2026-12-06, f32, local-sync: LU 1024² 18.4 -> 13.0 ms with tiles and 10.2
with the padded copy (1008² 9.2 unpadded); the Cholesky kernel 256² 0.36 -> 0.15, 1024² 14.6 -> 6.5.
"""
from __future__ import annotations

import functools
from typing import Callable

from . import cache

TILE_VECTORS = 2     # a register tile's width in vectors
UNROLL = 4           # tiled_update's rows of u a loop step takes


@functools.cache
def tile_rows() -> int:
    """A register tile's height: 8 rows x TILE_VECTORS vectors of accumulators where the CPU has 32 vector
    registers of 16 floats (AVX-512), 2 elsewhere (16 registers of 8 floats: AVX2 keeps a 16-float vector in
    two). LU 1024² f32 on the AVX-512 Xeon: 8 rows 14.3 ms, 4 14.6, 2 16.0, 2 by 1 vector 17.7; untiled 18.4."""
    return 8 if "avx512f" in cache.host_cpu_features() else 2


def padded_row(n: int, element: str) -> int:
    """The row length of a kernel's padded working copy: n rounded up to whole 64-byte lines, an odd number of
    them, so rows 1 to 63 apart never lie a multiple of 4 KiB apart (LU 1024² f32 ran 13.0 ms where 1008² ran
    9.2 and 1040² 9.5; the Cholesky kernel 256² 0.30 ms where 257² ran 0.13)."""
    size = 8 if element == "f64" else 4
    lines = -(-n * size // 64)
    return (lines + 1 - lines % 2) * 64 // size


def padded_work(batch: int, rows: int, columns: int, element: str, binding: int, name: str) -> tuple[str, str]:
    """(the lines, the memref type) of `name`: a rows x columns view with padded_row(columns) strides into the
    scratch buffer at `binding` (batch x rows x padded_row(columns))."""
    row = padded_row(columns, element)
    padded = f"memref<{batch}x{rows}x{row}x{element}>"
    strided = f"memref<{batch}x{rows}x{columns}x{element}, strided<[{rows * row}, {row}, 1]>>"
    return (f"""        {name}_padded = hal.interface.binding.subspan layout(#layout) binding({binding}) alignment(64) offset(%c0) : {padded}
        {name} = memref.subview {name}_padded[0, 0, 0] [{batch}, {rows}, {columns}] [1, 1, 1] : {padded} to {strided}""",
            strided)


def copied_out(work: str, work_type: str, out: str, out_type: str, rows: str, columns: str, v: str,
               first: str = "%c0") -> str:
    """The lines that copy the padded working copy `work` to the result binding `out` (rows x columns, given as
    index values; the columns from `first`), row by row in vectors."""
    return f"""        scf.for %i = %c0 to {rows} step %c1 {{
          scf.for %k = {first} to {columns} step %lanes {{
            %r = vector.transfer_read {work}[%b, %i, %k], %zero : {work_type}, {v}
            vector.transfer_write %r, {out}[%b, %i, %k] : {v}, {out_type}
          }}
        }}"""


class Operand:
    """A matrix of the batch's workgroup %b as the tiles read it: `memref`[%b, row, column] of memref type `type`
    (`transposed`: its scalars loaded at [%b, column, row]; vectors run along the memref's rows either way)."""

    def __init__(self, memref: str, type_: str, transposed: bool = False):
        self.memref, self.type, self.transposed = memref, type_, transposed

    def read(self, row: str, column: str, v: str) -> str:
        return f"vector.transfer_read {self.memref}[%b, {row}, {column}], %zero : {self.type}, {v}"

    def write(self, value: str, row: str, column: str, v: str) -> str:
        return f"vector.transfer_write {value}, {self.memref}[%b, {row}, {column}] : {v}, {self.type}"

    def load(self, row: str, column: str) -> str:
        row, column = (column, row) if self.transposed else (row, column)
        return f"memref.load {self.memref}[%b, {row}, {column}] : {self.type}"


def _constants(tag: str, count: int, lanes: int) -> list[str]:
    lines = [f"{tag}q{q} = arith.constant {q} : index" for q in range(count)]
    lines += [f"{tag}o{w} = arith.constant {w * lanes} : index" for w in range(TILE_VECTORS)]
    return lines + [f"{tag}w = arith.constant {lanes * TILE_VECTORS} : index",
                    f"{tag}h = arith.constant {tile_rows()} : index"]


def _whole_tiles(tag: str, lo: str, hi: str) -> list[str]:
    """`{tag}tiled`: where the rows lo .. hi - 1 left after whole tiles of tile_rows() begin."""
    return [f"{tag}left = arith.subi {hi}, {lo} : index", f"{tag}rem = arith.remui {tag}left, {tag}h : index",
            f"{tag}tiled = arith.subi {hi}, {tag}rem : index"]


def _multiply_add(name: str, scalar_load: str, vectors: list[str], accumulators: list[str], combine: str,
                  element: str, v: str) -> tuple[list[str], list[str]]:
    """(the lines, the new accumulators) of accumulators[w] `combine` (addf/subf) scalar * vectors[w], the scalar
    loaded once and broadcast; `name` prefixes the names."""
    lines = [f"{name}s = {scalar_load}", f"{name}b = vector.broadcast {name}s : {element} to {v}"]
    sums = []
    for w, (vector, accumulator) in enumerate(zip(vectors, accumulators)):
        lines += [f"{name}p{w} = arith.mulf {name}b, {vector} : {v}",
                  f"{name}y{w} = arith.{combine} {accumulator}, {name}p{w} : {v}"]
        sums.append(f"{name}y{w}")
    return lines, sums


def tiled_update(x: Operand, u: Operand, u_first: str, m: Operand, m_first: str, rows: tuple[str, str],
                 columns_from: Callable[[str], str], columns_end: str, block: int, element: str, lanes: int,
                 tag: str, indent: int = 10) -> str:
    """x[i, k] -= sum_r m[i, m_first + r] u[u_first + r, k], r = 0 .. block - 1 in that order, for the rows i
    of `rows` (lo, hi) and the columns k from columns_from(the tile's first row) to columns_end: tiles of
    tile_rows() rows of x carried in registers through a loop over r while the block's rows of u stream past,
    then the rows left one at a time. (A loop, not r unrolled: the unrolled QR kernels compiled ~1.4 s longer.)
    `tag` prefixes every name (one function may hold several)."""
    v, (lo, hi) = f"vector<{lanes}x{element}>", rows
    unroll = next(u for u in (UNROLL, 2, 1) if block % u == 0)
    lines = _constants(tag, max(tile_rows(), unroll), lanes) + _whole_tiles(tag, lo, hi)
    lines += [f"{tag}block = arith.constant {block} : index", f"{tag}unroll = arith.constant {unroll} : index"]

    def tiles(start: str, stop: str, height: int, step: str):
        p = f"{tag}{height}_"
        names = [(q, w) for q in range(height) for w in range(TILE_VECTORS)]
        vectors = ", ".join([v] * len(names))
        out = [f"scf.for {p}i = {start} to {stop} step {step} {{"]
        out += [f"  {p}i{q} = arith.addi {p}i, {tag}q{q} : index" for q in range(height)]
        out += [f"  scf.for {p}k = {columns_from(p + 'i')} to {columns_end} step {tag}w {{"]
        out += [f"    {p}k{w} = arith.addi {p}k, {tag}o{w} : index" for w in range(TILE_VECTORS)]
        out += [f"    {p}x{q}_{w} = {x.read(f'{p}i{q}', f'{p}k{w}', v)}" for q, w in names]
        carried = ", ".join(f"{p}a{q}_{w} = {p}x{q}_{w}" for q, w in names)
        out += [f"    {p}r:{len(names)} = scf.for {p}j = %c0 to {tag}block step {tag}unroll iter_args({carried}) -> "
                f"({vectors}) {{"]
        acc = {(q, w): f"{p}a{q}_{w}" for q, w in names}
        out += [f"      {p}ur = arith.addi {u_first}, {p}j : index", f"      {p}mr = arith.addi {m_first}, {p}j : index"]
        for r in range(unroll):
            out += [f"      {p}urr{r} = arith.addi {p}ur, {tag}q{r} : index",
                    f"      {p}mrr{r} = arith.addi {p}mr, {tag}q{r} : index"]
            out += [f"      {p}u{r}_{w} = {u.read(f'{p}urr{r}', f'{p}k{w}', v)}" for w in range(TILE_VECTORS)]
            for q in range(height):
                row = [acc[q, w] for w in range(TILE_VECTORS)]
                step, row = _multiply_add(f"{p}{r}_{q}_", m.load(f'{p}i{q}', f'{p}mrr{r}'),
                                          [f"{p}u{r}_{w}" for w in range(TILE_VECTORS)], row, "subf", element, v)
                out += ["      " + line for line in step]
                acc.update({(q, w): sum_ for w, sum_ in enumerate(row)})
        out += [f"      scf.yield {', '.join(acc[q, w] for q, w in names)} : {vectors}", "    }"]
        out += [f"    {x.write(f'{p}r#{j}', f'{p}i{q}', f'{p}k{w}', v)}" for j, (q, w) in enumerate(names)]
        return out + ["  }", "}"]

    lines += tiles(lo, f"{tag}tiled", tile_rows(), f"{tag}h") + tiles(f"{tag}tiled", hi, 1, "%c1")
    return "\n".join(" " * indent + line for line in lines)


def tiled_transposed_product(out: Operand, x: Operand, m: Operand, m_first: str, rows: tuple[str, str],
                             columns: tuple[str, str], block: int, element: str, lanes: int, tag: str,
                             indent: int = 10) -> str:
    """out[c, k] = sum_i m[i, m_first + c] x[i, k] over the rows i of `rows` (lo, hi), for c = 0 .. block - 1
    (a multiple of tile_rows()) and the columns k of `columns`: tiles of tile_rows() rows of `out` carried in
    registers through the loop over i, each row of x loaded once a tile."""
    v, (lo, hi), height = f"vector<{lanes}x{element}>", rows, tile_rows()
    assert block % height == 0
    lines = _constants(tag, block, lanes)
    lines += [f"{tag}m{c} = arith.addi {m_first}, {tag}q{c} : index" for c in range(block)]
    lines += [f"{tag}zv = arith.constant dense<0.0> : {v}"]
    names = [(q, w) for q in range(height) for w in range(TILE_VECTORS)]
    for first in range(0, block, height):
        p = f"{tag}{first}_"
        lines += [f"scf.for {p}k = {columns[0]} to {columns[1]} step {tag}w {{"]
        lines += [f"  {p}k{w} = arith.addi {p}k, {tag}o{w} : index" for w in range(TILE_VECTORS)]
        carried = ", ".join(f"{p}a{q}_{w} = {tag}zv" for q, w in names)
        lines += [f"  {p}r:{len(names)} = scf.for {p}i = {lo} to {hi} step %c1 iter_args({carried}) -> "
                  f"({', '.join([v] * len(names))}) {{"]
        lines += [f"    {p}x{w} = {x.read(p + 'i', f'{p}k{w}', v)}" for w in range(TILE_VECTORS)]
        sums = []
        for q in range(height):
            step, row = _multiply_add(f"{p}{q}_", m.load(p + 'i', f'{tag}m{first + q}'),
                                      [f"{p}x{w}" for w in range(TILE_VECTORS)],
                                      [f"{p}a{q}_{w}" for w in range(TILE_VECTORS)], "addf", element, v)
            lines += ["    " + line for line in step]
            sums += row
        lines += [f"    scf.yield {', '.join(sums)} : {', '.join([v] * len(names))}", "  }"]
        lines += [f"  {out.write(f'{p}r#{j}', f'{tag}q{first + q}', f'{p}k{w}', v)}" for j, (q, w) in enumerate(names)]
        lines += ["}"]
    return "\n".join(" " * indent + line for line in lines)
