"""Large f32 matrix products and convolutions as hand-written llvm-cpu dispatches: the target rewrite of the cpu
flag set "data-tiling+matmul-kernels", which tuning.py chooses where it measures faster than IREE's own.

Why: IREE 3.13's data-tiled f32 matmul is a 16 x 16 x 1 tile (16 accumulators; each step of K loads one vector
of B and broadcasts 16 scalars of A: 17 loads for 16 multiply-adds), and its channels-last convolutions lose
more the more channels they have. On the 2-vCPU AVX-512 Xeon (2026-12-06, one core): 2048² in 161-169 ms
(inner-tiled 142-147, OpenBLAS ~113), and ResNet's 3x3 convolutions at batch 8 ran 137 GFLOP/s at 64 channels,
59 at 256 (14 x 14) and 33 at 512 (7 x 7). The tile here is MR = 12 rows x 2 vectors (24 accumulators; a step of
K loads 2 vectors and broadcasts 12 scalars: 14 loads for 24 multiply-adds, bound by the FMA ports), carried in
registers through all of K: 162-176 GFLOP/s on products of 256 to 2048 on a side (OpenBLAS on one core 142-158).

How: B (a product's right operand, a convolution's kernel as [taps x in-channels, out-channels]) is packed into
panels of NR = 2 vectors of columns, [N/NR, K, NR] (pack_body's dispatch, or a StableHLO transpose where B is
stored [N, K]); A is read where it is: a product's left operand of any rank contracted once (its free dimensions
before and after the contracted one are the rows), a convolution's zero-padded channels-last input at each tap (an
implicit GEMM: no im2col copy), or the im2col patches of a kernel gradient (conv_gradients.py: [taps, pixels,
channels], contracted over the pixels) read from the padded input they were sliced from (PatchRows: never written).
A workgroup per block of rows x columns of the result walks its tiles, each written out once (rows past M not
written, columns past N masked); K past K_BLOCK goes in blocks (a convolution's of whole taps), each block through
every tile of the workgroup while its rows of A stay in L2, the tiles' sums kept in the result between blocks
(ResNet-18's 9 x 25088 x 64 kernel gradient 40.9 -> 23.6 ms on one core). Products with batch dimensions, other
dtypes, dilated or grouped convolutions, and small ones (below MIN_WORK multiply-adds; MIN_NARROW_WORK for one at
most two panels wide, _worth_a_kernel) stay IREE's. An A stored [k, m] whose lines alias in L1 is packed by row tiles
first (_reads_aliasing_columns, pack_columns_body)."""
from __future__ import annotations

import functools
import hashlib
import math

import numpy as np
from iree.compiler import ir

from ..dialects.types import attr_ints, dot_dimensions, dtype_of, shape_of
from . import cache, kernel_epilogues
from .kernel_rows import (CONVOLUTION_UNROLL, PRODUCT_UNROLL, VECTORS, ConvolutionRows, PackedRows, PatchRows,
                          ProductRows, memref_of)
from .kernel_text import executable
from .legalize import call_of_source, erase_unused, inline_calls, producer, walk
from .winograd import conv_attribute_int, conv_attribute_ints, conv_dimensions

MIN_WORK = 1 << 24          # multiply-adds: a 256 x 256 x 256 product and up (as fast as IREE's there, faster past)
MIN_NARROW_WORK = 1 << 20   # ... and a product at most two panels wide (_worth_a_kernel)
MIN_CHANNELS = 16           # a convolution's input channels (its innermost loop) at least
BLOCK_BYTES = 1 << 20       # a workgroup's rows of A: at most this much of K, so that they stay in L2
MAX_BLOCK_PANELS = 8        # ... and at most this many tiles of rows, or panels of columns
MIN_WORKGROUPS = 8          # fewer tiles a block where a result would have fewer workgroups (both cores busy)
K_BLOCK = 512               # k past this goes in blocks of it (of whole taps: about it), the sums kept in the result
PACK_ROWS = 256             # rows of B (of A: pack_columns_body) a workgroup of the packing dispatch copies
PACK_PANELS = 16            # row tiles of A a workgroup of pack_columns_body copies
ALIASING_BYTES = 512        # A's stride along k, a multiple of which packs it (_reads_aliasing_columns)
MAX_WORKGROUPS = 65535      # a dispatch's workgroups at most (kernels.py's bound too); bigger ones stay IREE's


@functools.cache
def tile() -> tuple[int, int]:
    """(MR rows, lanes): 12 rows x 2 vectors of 16 floats where the CPU has 32 vector registers (AVX-512: 24
    accumulators, 2 vectors of B, a broadcast); 6 x 2 of 8 elsewhere (16 registers)."""
    return (12, 16) if "avx512f" in cache.host_cpu_features() else (6, 8)


def _tensor(shape) -> str:
    return f"tensor<{'x'.join(map(str, shape))}xf32>"


class Plan:
    """One kernel's shapes: the result M x N over K, the tile, B's panels and the workgroups' blocks."""

    def __init__(self, symbol: str, m: int, k: int, n: int, k_unit: int = 1):
        """k goes in blocks of whole `k_unit`s (a convolution's: its input channels, a tap) of about K_BLOCK."""
        self.symbol, self.m, self.k, self.n = symbol, m, k, n
        block = max(1, K_BLOCK // k_unit) * k_unit
        self.blocked, self.k_block = k > block, min(block, k)
        self.mr, self.lanes = tile()
        self.nr = VECTORS * self.lanes
        self.row_panels, self.column_panels = -(-m // self.mr), -(-n // self.nr)
        self.b_type = memref_of((self.column_panels, k, self.nr))
        self.block_columns = min(self.column_panels, MAX_BLOCK_PANELS)
        fit = max(1, BLOCK_BYTES // (self.k_block * 4 * self.mr))
        self.block_rows = min(self.row_panels, MAX_BLOCK_PANELS, fit)
        while self.block_rows > 1 and self.workgroups() < MIN_WORKGROUPS:
            self.block_rows -= 1

    def grid(self) -> tuple[int, int]:
        return -(-self.row_panels // self.block_rows), -(-self.column_panels // self.block_columns)

    def workgroups(self) -> int:
        return math.prod(self.grid())


def _mask(name: str, column: str, n: int, lanes: int) -> list[str]:
    """Lines making `name` the mask of a vector of `lanes` from `column` on that lies before column n (explicit
    masked loads and stores: nothing past a buffer's end is touched)."""
    return [f"{name}_n = arith.constant {n} : index", f"{name}_left = arith.subi {name}_n, {column} : index",
            f"{name}_lanes = arith.constant {lanes} : index",
            f"{name}_count = arith.minsi {name}_left, {name}_lanes : index",
            f"{name} = vector.create_mask {name}_count : vector<{lanes}xi1>"]


def kernel_body(plan: Plan, rows, epilogue=None) -> str:
    """The dispatch's body: bindings (A, read by `rows`; packed B; the result [m, n]); workgroup w takes row block
    w / (column blocks) and column block w % (column blocks), and for each column panel of its block, each tile
    of mr rows: mr x nr accumulators through all of k (or, where the plan is blocked, through each block of k in
    turn, starting from the sums written so far), then written out, through the `epilogue`'s chain where there is
    one (kernel_epilogues.py: its operands bound between B and the result; in the last block of k only). Rows past
    m read row m - 1 and are not written."""
    mr, lanes = plan.mr, plan.lanes
    v = f"vector<{lanes}xf32>"
    names = [(r, w) for r in range(mr) for w in range(VECTORS)]
    c = memref_of((plan.m, plan.n))
    whole_panels = plan.n % plan.nr == 0     # else every write is masked to the columns before n
    extra = epilogue.types(plan.m, plan.n) if epilogue else []
    epilogue_bindings = [f"%e{i} = hal.interface.binding.subspan layout(#layout) binding({2 + i}) alignment(64) "
                         f"offset(%c0) : {memref_of(shape)}" for i, shape in enumerate(extra)]
    head = [f"""%c0 = arith.constant 0 : index
%c1 = arith.constant 1 : index
%zero = arith.constant 0.0 : f32
%zv = arith.constant dense<0.0> : {v}
%wg = hal.interface.workgroup.id[0] : index
%column_blocks = arith.constant {plan.grid()[1]} : index
%bi = arith.divui %wg, %column_blocks : index
%bj = arith.remui %wg, %column_blocks : index
%a = hal.interface.binding.subspan layout(#layout) binding(0) alignment(64) offset(%c0) : {rows.type}
%b = hal.interface.binding.subspan layout(#layout) binding(1) alignment(64) offset(%c0) : {plan.b_type}
%c = hal.interface.binding.subspan layout(#layout) binding({2 + len(extra)}) alignment(64) offset(%c0) : {c}
%block_rows = arith.constant {plan.block_rows} : index
%block_columns = arith.constant {plan.block_columns} : index
%row_panels = arith.constant {plan.row_panels} : index
%column_panels = arith.constant {plan.column_panels} : index
%ip0 = arith.muli %bi, %block_rows : index
%jp0 = arith.muli %bj, %block_columns : index
%ip_end = arith.addi %ip0, %block_rows : index
%jp_end = arith.addi %jp0, %block_columns : index
%ip1 = arith.minui %ip_end, %row_panels : index
%jp1 = arith.minui %jp_end, %column_panels : index
%mr = arith.constant {mr} : index
%nr = arith.constant {plan.nr} : index
%m = arith.constant {plan.m} : index
%last_row = arith.constant {plan.m - 1} : index"""] + epilogue_bindings
    head += [f"%q{q} = arith.constant {q} : index"
             for q in range(max(mr, PRODUCT_UNROLL, CONVOLUTION_UNROLL, plan.nr))]
    tile = [f"%i0 = arith.muli %ip, %mr : index"]
    for r in range(mr):
        tile += [f"%tile_row{r} = arith.addi %i0, %q{r} : index",
                 f"%row{r} = arith.minui %tile_row{r}, %last_row : index"]
    tile += rows.tile_rows(plan)
    columns = []
    for w in range(VECTORS):
        column = f"%column{w}"
        columns.append(f"{column} = arith.addi %j0, %q{w * lanes} : index")
        if not whole_panels:
            columns += _mask(f"%mask{w}", column, plan.n, lanes)
    tile += columns
    initial = ["%zv"] * len(names)
    if plan.blocked:    # the block's first k: zeros, else the sums so far
        sums = []
        for r, w in names:
            at = f"%c[%row{r}, %column{w}]"
            sums.append(f"  %sum{r}_{w} = vector.transfer_read {at}, %zero {{in_bounds = [true]}} : {c}, {v}"
                        if whole_panels else
                        f"  %sum{r}_{w} = vector.maskedload {at}, %mask{w}, %zv : {c}, vector<{lanes}xi1>, {v} "
                        f"into {v}")
        vectors = ", ".join([v] * len(names))
        tile += [f"%init:{len(names)} = scf.if %first_block -> ({vectors}) {{",
                 f"  scf.yield {', '.join(initial)} : {vectors}", "} else {", *sums,
                 f"  scf.yield {', '.join(f'%sum{r}_{w}' for r, w in names)} : {vectors}", "}"]
        initial = [f"%init#{j}" for j in range(len(names))]
    loops, result = rows.loops(plan, initial)
    tile += loops
    for r in range(mr):
        writes = []
        for w in range(VECTORS):
            value, at = f"{result}#{names.index((r, w))}", f"%c[%row{r}, %column{w}]"
            if epilogue:
                lines, out = kernel_epilogues.tile_lines(epilogue, value, r, w, lanes, whole_panels, plan.m, plan.n,
                                                         f"%ep{r}_{w}")
                if plan.blocked:    # the chain in the last block of k only
                    tile += [f"%epi{r}_{w} = scf.if %last_block -> ({v}) {{", *["  " + line for line in lines],
                             f"  scf.yield {out} : {v}", "} else {", f"  scf.yield {value} : {v}", "}"]
                    out = f"%epi{r}_{w}"
                else:
                    tile += lines
                value = out
            writes.append(f"vector.transfer_write {value}, {at} {{in_bounds = [true]}} : {v}, {c}" if whole_panels else
                          f"vector.maskedstore {at}, %mask{w}, {value} : {c}, vector<{lanes}xi1>, {v}")
        if plan.m % mr:
            tile += [f"%in{r} = arith.cmpi ult, %tile_row{r}, %m : index", f"scf.if %in{r} {{"]
            tile += ["  " + line for line in writes] + ["}"]
        else:
            tile += writes
    loops = ["scf.for %jp = %jp0 to %jp1 step %c1 {", "  %j0 = arith.muli %jp, %nr : index",
             "  scf.for %ip = %ip0 to %ip1 step %c1 {"] + ["    " + line for line in tile] + ["  }", "}"]
    if plan.blocked:    # blocks of k, each through every tile of the workgroup's block (in L2 meanwhile)
        loops = [f"%k_block = arith.constant {plan.k_block} : index", f"%k_all = arith.constant {plan.k} : index",
                 "scf.for %k_start = %c0 to %k_all step %k_block {",
                 "  %k_end = arith.addi %k_start, %k_block : index",
                 "  %k_stop = arith.minui %k_end, %k_all : index",
                 "  %first_block = arith.cmpi eq, %k_start, %c0 : index",
                 "  %last_block = arith.cmpi eq, %k_stop, %k_all : index"] + ["  " + line for line in loops] + ["}"]
    else:
        loops = [f"%k_start = arith.constant 0 : index", f"%k_stop = arith.constant {plan.k} : index"] + loops
    body = head + loops + ["return"]
    return "\n".join("        " + line for line in body)


def pack_body(plan: Plan) -> str:
    """The packing dispatch of a B stored [k, n]: B_packed[jp, kk, :] = B[kk, jp * nr : (jp + 1) * nr], zeros past
    n (a masked read); workgroup w copies column panel w / (row chunks), rows PACK_ROWS * (w % (row chunks)) on.
    (IREE's transpose of it took 6.1 ms at 2048² on one core, this 5.2.)"""
    k, n, lanes, nr = plan.k, plan.n, plan.lanes, plan.nr
    v = f"vector<{lanes}xf32>"
    b = memref_of((k, n))
    lines = [_packing_head(k, b, plan.b_type, "jp") + f"""
        %zeros = arith.constant dense<0.0> : {v}
        %nr = arith.constant {nr} : index
        %j0 = arith.muli %jp, %nr : index
        scf.for %kk = %k0 to %k1 step %c1 {{"""]
    for w in range(VECTORS):
        lines += [f"          %o{w} = arith.constant {w * lanes} : index",
                  f"          %column{w} = arith.addi %j0, %o{w} : index"]
        if n % nr == 0:
            lines.append(f"          %v{w} = vector.transfer_read %source[%kk, %column{w}], %zero "
                         f"{{in_bounds = [true]}} : {b}, {v}")
        else:    # zeros past n, nothing read there
            lines += ["          " + line for line in _mask(f"%mask{w}", f"%column{w}", n, lanes)]
            lines.append(f"          %v{w} = vector.maskedload %source[%kk, %column{w}], %mask{w}, %zeros : {b}, "
                         f"vector<{lanes}xi1>, {v} into {v}")
        lines.append(f"          vector.transfer_write %v{w}, %packed[%jp, %kk, %o{w}] {{in_bounds = [true]}} : {v}, "
                     f"{plan.b_type}")
    lines += ["        }", "        return"]
    return "\n".join(lines)


def _packing_head(k: int, source_type: str, packed_type: str, outer: str) -> str:
    """The lines both packing dispatches start with: %source (binding 0), %packed (binding 1), and of workgroup w
    its `outer` index w / chunks and its rows of k, %k0 to %k1 (PACK_ROWS of them, chunk w % chunks)."""
    return f"""        %c0 = arith.constant 0 : index
        %c1 = arith.constant 1 : index
        %zero = arith.constant 0.0 : f32
        %wg = hal.interface.workgroup.id[0] : index
        %chunks = arith.constant {-(-k // PACK_ROWS)} : index
        %{outer} = arith.divui %wg, %chunks : index
        %chunk = arith.remui %wg, %chunks : index
        %source = hal.interface.binding.subspan layout(#layout) binding(0) alignment(64) offset(%c0) : {source_type}
        %packed = hal.interface.binding.subspan layout(#layout) binding(1) alignment(64) offset(%c0) : {packed_type}
        %rows = arith.constant {PACK_ROWS} : index
        %k = arith.constant {k} : index
        %k0 = arith.muli %chunk, %rows : index
        %k_end = arith.addi %k0, %rows : index
        %k1 = arith.minui %k_end, %k : index"""


def _packed_b(plan: Plan, b: str, b_shape, stored_nk: bool) -> tuple[list[str], list[tuple[str, str]]]:
    """(lines computing %bp [column panels, k, nr] from the SSA value `b`, the executables they dispatch): a B
    stored [k, n] by pack_body's dispatch; one stored [n, k] (`stored_nk`) by a StableHLO pad and transpose."""
    k, n, nr, panels = plan.k, plan.n, plan.nr, plan.column_panels
    packed = _tensor((panels, k, nr))
    if not stored_nk:
        symbol = f"{plan.symbol.split(EPILOGUE_MARK)[0]}_pack"   # one packing whatever follows the kernel
        return ([f"    %bp = flow.dispatch @{symbol}_executable::@{symbol}({b}) : ({_tensor(b_shape)}) -> {packed}"],
                [executable(symbol, panels * -(-k // PACK_ROWS), 1, 1, pack_body(plan))])
    return [f"    %bz = stablehlo.constant dense<0.0> : tensor<f32>",
            f"    %bpad = stablehlo.pad {b}, %bz, low = [0, 0], high = [{panels * nr - n}, 0], interior = [0, 0] "
            f": ({_tensor(b_shape)}, tensor<f32>) -> {_tensor((panels * nr, k))}",
            f"    %b3 = stablehlo.reshape %bpad : ({_tensor((panels * nr, k))}) -> {_tensor((panels, nr, k))}",
            f"    %bp = stablehlo.transpose %b3, dims = [0, 2, 1] : ({_tensor((panels, nr, k))}) -> {packed}"], []


def _module(plan: Plan, rows, arguments: list[tuple[str, tuple]], prologue: list[str], a: str, a_shape,
            b_lines: list[str], b_executables: list, result_shape, epilogue=None) -> str:
    """A module holding the executables and `func.func private @symbol(arguments, the epilogue's operands) ->
    result`: the prologue's lines, B packed, the kernel's dispatch on (a, %bp, the epilogue's operands as [n] or
    [m, n]) and a reshape of its [m, n] to result_shape (the epilogue's last op's, where there is one)."""
    extra = epilogue.types(plan.m, plan.n) if epilogue else []
    aliases, executables = zip(executable(plan.symbol, plan.workgroups(), 2 + len(extra), 1,
                                          kernel_body(plan, rows, epilogue)), *b_executables)
    product, packed = _tensor((plan.m, plan.n)), _tensor((plan.column_panels, plan.k, plan.nr))
    operands, types = [a, "%bp"], [_tensor(a_shape), packed]
    if epilogue:
        result_shape = shape_of(epilogue.last.results[0].type)
        for i, (value, shape) in enumerate(zip(epilogue.operands, extra)):
            arguments = [*arguments, (f"%e{i}", shape_of(value.type))]
            if shape_of(value.type) != shape:
                prologue = [*prologue, f"    %e{i}_2 = stablehlo.reshape %e{i} : ({_tensor(shape_of(value.type))}) -> "
                                       f"{_tensor(shape)}"]
            operands.append(f"%e{i}_2" if shape_of(value.type) != shape else f"%e{i}")
            types.append(_tensor(shape))
    signature = ", ".join(f"{name}: {_tensor(shape)}" for name, shape in arguments)
    return "\n".join(aliases) + f"""
module {{
{chr(10).join(executables)}
  func.func private @{plan.symbol}({signature}) -> {_tensor(result_shape)} {{
{chr(10).join(prologue + b_lines)}
    %product = flow.dispatch @{plan.symbol}_executable::@{plan.symbol}({', '.join(operands)}) : ({', '.join(types)}) -> {product}
    %result = stablehlo.reshape %product : ({product}) -> {_tensor(result_shape)}
    return %result : {_tensor(result_shape)}
  }}
}}"""


# --- products ---

def _product_sizes(op) -> tuple[int, int, int, int, int] | None:
    """(outer, k, inner, n, rhs's contracted dimension) of an f32 dot_general with one contracted dimension, no
    batch dimensions and a matrix on the right: the left operand [outer..., k, inner...] (its free dimensions
    before and after the contracted one, each flattened), the right [k, n] or [n, k]; else None."""
    if op.name != "stablehlo.dot_general" or len(op.operands) != 2:
        return None
    lhs, rhs = op.operands
    if any(dtype_of(v.type) != np.float32 for v in (lhs, rhs, op.results[0])) or len(shape_of(rhs.type)) != 2:
        return None
    lhs_batch, rhs_batch, lhs_contract, rhs_contract = dot_dimensions(op)
    if lhs_batch or rhs_batch or len(lhs_contract) != 1 or len(rhs_contract) != 1:
        return None
    (lc,), (rc,) = lhs_contract, rhs_contract
    lhs_shape, rhs_shape = shape_of(lhs.type), shape_of(rhs.type)
    return math.prod(lhs_shape[:lc]), lhs_shape[lc], math.prod(lhs_shape[lc + 1:]), rhs_shape[1 - rc], rc


def product_source(symbol: str, lhs_shape, rhs_shape, result_shape, sizes, epilogue=None) -> str:
    outer, k, inner, n, rhs_contracted = sizes
    plan = Plan(symbol, outer * inner, k, n)
    b_lines, b_executables = _packed_b(plan, "%rhs", rhs_shape, stored_nk=rhs_contracted == 1)
    a3 = (outer, k, inner)
    prologue = [f"    %a3 = stablehlo.reshape %lhs : ({_tensor(lhs_shape)}) -> {_tensor(a3)}"]
    if _reads_aliasing_columns(outer, inner):
        packed = (plan.row_panels, k, plan.mr)
        a_lines, a_executables = _packed_columns(plan)
        return _module(plan, PackedRows(*packed), [("%lhs", lhs_shape), ("%rhs", rhs_shape)], prologue + a_lines,
                       "%ap", packed, b_lines, b_executables + a_executables, result_shape, epilogue)
    return _module(plan, ProductRows(*a3), [("%lhs", lhs_shape), ("%rhs", rhs_shape)], prologue, "%a3", a3,
                   b_lines, b_executables, result_shape, epilogue)


def _reads_aliasing_columns(outer: int, inner: int) -> bool:
    """Whether the tile would read A [k, m] (contracted on its first dimension: autodiff's weight gradients, x^T dy)
    a line of memory per step of k at a stride of a multiple of ALIASING_BYTES: those lines fall in a few sets of L1
    (2 of 64 at m = 512, 4 at 768), which drop them and B's panel too. Such an A is packed by row tiles first."""
    return outer == 1 and inner > 1 and (4 * inner) % ALIASING_BYTES == 0


def _packed_columns(plan: Plan) -> tuple[list[str], list]:
    """(lines computing %ap [row panels, k, mr] from %a3 [1, k, m], the executable they dispatch): pack_columns_body's
    dispatch, named by A's shape (kernels reading one A share it). IREE's transpose of a pad took 0.4-0.7 ms for
    1024 x 1024 in the transformer block's step (Zen 3, 2026-12-07)."""
    k, m, panels, mr = plan.k, plan.m, plan.row_panels, plan.mr
    symbol = f"hlojit_pack_columns_{k}x{m}_{mr}"
    groups, chunks = -(-panels // PACK_PANELS), -(-k // PACK_ROWS)
    return ([f"    %am = stablehlo.reshape %a3 : ({_tensor((1, k, m))}) -> {_tensor((k, m))}",
             f"    %ap = flow.dispatch @{symbol}_executable::@{symbol}(%am) : ({_tensor((k, m))}) -> "
             f"{_tensor((panels, k, mr))}"],
            [executable(symbol, groups * chunks, 1, 1, pack_columns_body(k, m, mr))])


def pack_columns_body(k: int, m: int, width: int) -> str:
    """The packing dispatch of an A stored [k, m] by row tiles: A_packed[ip, kk, :] = A[kk, ip * width : (ip + 1) *
    width], zeros past m (a masked read). Workgroup w takes PACK_PANELS panels (w / chunks) over PACK_ROWS rows of A
    (w % chunks), along each row in turn: reads go along A's rows, writes along the panels'."""
    panels = -(-m // width)
    a, packed = memref_of((k, m)), memref_of((panels, k, width))
    v = f"vector<{width}xf32>"
    whole = m // width     # panels read whole; the last one, where m % width, is masked
    head = _packing_head(k, a, packed, "group") + f"""
        %group_panels = arith.constant {PACK_PANELS} : index
        %panels = arith.constant {panels} : index
        %whole = arith.constant {whole} : index
        %width = arith.constant {width} : index
        %p0 = arith.muli %group, %group_panels : index
        %p_end = arith.addi %p0, %group_panels : index
        %p1 = arith.minui %p_end, %panels : index
        %p_whole = arith.minui %p1, %whole : index
        scf.for %kk = %k0 to %k1 step %c1 {{
          scf.for %ip = %p0 to %p_whole step %c1 {{
            %column = arith.muli %ip, %width : index
            %row = vector.transfer_read %source[%kk, %column], %zero {{in_bounds = [true]}} : {a}, {v}
            vector.transfer_write %row, %packed[%ip, %kk, %c0] {{in_bounds = [true]}} : {v}, {packed}
          }}"""
    tail = ""
    if m % width:
        tail = f"""
          %last = arith.cmpi ult, %p_whole, %p1 : index
          scf.if %last {{
            %column = arith.muli %p_whole, %width : index
            %row = vector.transfer_read %source[%kk, %column], %zero : {a}, {v}
            vector.transfer_write %row, %packed[%p_whole, %kk, %c0] {{in_bounds = [true]}} : {v}, {packed}
          }}"""
    return head + tail + """
        }
        return"""


# --- products of im2col patches (autodiff's kernel gradients) ---

_PATCH_OPS = frozenset({"stablehlo.concatenate", "stablehlo.reshape", "stablehlo.slice"})   # what makes them


def _patches(lhs: ir.Value) -> dict | None:
    """What a kernel gradient's im2col patches [taps, pixels, channels] read (conv_gradients.py's: each
    tap's strided slice of one padded channels-last input [batch, height, width, channels], reshaped to [1, pixels,
    channels], concatenated along the taps; the taps a window's grid in order): {"source", "source_shape", "out"
    (output height, width), "strides", "window", "first_tap", "tap_step"}; else None. Read from the input, the
    patches are never written: IREE made each tap's slice an executable of its own (ResNet-18's training step: 108
    of its 348) and wrote the patches out (58 MB for a 64-channel layer at batch 8)."""
    op = producer(lhs)
    pieces = list(op.operands) if op is not None and op.name == "stablehlo.concatenate" \
        and ir.IntegerAttr(op.attributes["dimension"]).value == 0 else [lhs]
    source, taps, geometry = None, [], None
    for piece in pieces:
        shape = shape_of(piece.type)
        while (sliced := producer(piece)) is not None and sliced.name == "stablehlo.reshape":
            piece = sliced.operands[0]
        if sliced is None or sliced.name != "stablehlo.slice" or len(shape) != 3 or shape[0] != 1:
            return None
        x = sliced.operands[0]
        start, limit, strides = (attr_ints(sliced, name) for name in ("start_indices", "limit_indices", "strides"))
        x_shape = shape_of(x.type)
        if source is None:
            source = x
        if x != source or len(x_shape) != 4 or dtype_of(x.type) != np.float32:
            return None
        out = [-(-(hi - lo) // st) for lo, hi, st in zip(start, limit, strides)]
        if (start[0], start[3], strides[0], strides[3]) != (0, 0, 1, 1) or out[0] != x_shape[0] \
                or out[3] != x_shape[3] or shape[1:] != (math.prod(out[:3]), x_shape[3]):
            return None
        if geometry is None:
            geometry = (out[1:3], strides[1:3])
        if geometry != (out[1:3], strides[1:3]):
            return None
        taps.append(tuple(start[1:3]))
    ys, xs = sorted({y for y, _ in taps}), sorted({x for _, x in taps})
    steps = [b[1] - b[0] if len(b) > 1 else 1 for b in (ys, xs)]
    grid = [(y, x) for y in ys for x in xs]
    if taps != grid or any(b != list(range(b[0], b[-1] + 1, st)) for b, st in zip((ys, xs), steps)):
        return None
    return {"source": source, "source_shape": shape_of(source.type), "out": geometry[0], "strides": geometry[1],
            "window": (len(ys), len(xs)), "first_tap": (ys[0], xs[0]), "tap_step": tuple(steps)}


def patches_source(symbol: str, patches: dict, rhs_shape, result_shape, sizes) -> str:
    taps, pixels, channels, n, rhs_contracted = sizes
    plan = Plan(symbol, taps * channels, pixels, n, k_unit=patches["out"][1])
    b_lines, b_executables = _packed_b(plan, "%rhs", rhs_shape, stored_nk=rhs_contracted == 1)
    source_shape, flat = patches["source_shape"], (math.prod(patches["source_shape"]),)
    prologue = [f"    %a1 = stablehlo.reshape %source : ({_tensor(source_shape)}) -> {_tensor(flat)}"]
    return _module(plan, PatchRows(patches), [("%source", source_shape), ("%rhs", rhs_shape)], prologue, "%a1", flat,
                   b_lines, b_executables, result_shape)


# --- convolutions ---

def _convolution_geometry(op) -> dict | None:
    """The shapes of an f32 2-D channels-last convolution ([b, 0, 1, f] x [0, 1, i, o] -> [b, 0, 1, f], layout.py's)
    without dilation or groups, with padding >= 0 and at least MIN_CHANNELS input channels; else None."""
    if op.name != "stablehlo.convolution":
        return None
    x, w = op.operands
    out = op.results[0]
    if len(shape_of(x.type)) != 4 or any(dtype_of(v.type) != np.float32 for v in (x, w, out)):
        return None
    dims = conv_dimensions(op)
    canonical = {"b": 0, 0: 1, 1: 2, "f": 3}
    if dims["lhs"] != canonical or dims["out"] != canonical or dims["rhs"] != {0: 0, 1: 1, "i": 2, "o": 3}:
        return None
    ints = functools.partial(conv_attribute_ints, op)
    padding = ints("padding", [0, 0, 0, 0])
    if (ints("lhs_dilation", [1, 1]) != [1, 1] or ints("rhs_dilation", [1, 1]) != [1, 1] or min(padding) < 0
            or conv_attribute_int(op, "feature_group_count") != 1 or conv_attribute_int(op, "batch_group_count") != 1):
        return None
    x_shape, w_shape, out_shape = shape_of(x.type), shape_of(w.type), shape_of(out.type)
    if x_shape[3] < MIN_CHANNELS or 0 in out_shape:
        return None
    (top, bottom, left, right) = padding
    return {"x": x_shape, "w": w_shape, "out": out_shape, "strides": ints("window_strides", [1, 1]),
            "padded": (x_shape[0], x_shape[1] + top + bottom, x_shape[2] + left + right, x_shape[3]),
            "padding": padding}


def convolution_source(symbol: str, geometry: dict) -> str:
    x_shape, w_shape, out_shape, padded = geometry["x"], geometry["w"], geometry["out"], geometry["padded"]
    kh, kw, channels, features = w_shape
    batch, ho, wo, _ = out_shape
    plan = Plan(symbol, batch * ho * wo, kh * kw * channels, features, k_unit=channels)
    top, bottom, left, right = geometry["padding"]
    prologue = [f"    %xz = stablehlo.constant dense<0.0> : tensor<f32>",
                f"    %xpad = stablehlo.pad %x, %xz, low = [0, {top}, {left}, 0], high = [0, {bottom}, {right}, 0], "
                f"interior = [0, 0, 0, 0] : ({_tensor(x_shape)}, tensor<f32>) -> {_tensor(padded)}",
                f"    %w2 = stablehlo.reshape %w : ({_tensor(w_shape)}) -> {_tensor((plan.k, features))}"]
    b_lines, b_executables = _packed_b(plan, "%w2", (plan.k, features), stored_nk=False)
    rows = ConvolutionRows(padded, (ho, wo), geometry["strides"], (kh, kw))
    return _module(plan, rows, [("%x", x_shape), ("%w", w_shape)], prologue, "%xpad", padded, b_lines, b_executables,
                   out_shape)


# --- the rewrite ---

def _worth_a_kernel(m: int, k: int, n: int) -> bool:
    """A product of MIN_WORK multiply-adds; or a narrow one, at most two panels of columns wide (a dense layer's
    logits) with MIN_NARROW_WORK and k of 64 or more, for which IREE's data tiling packs the whole left operand
    (a dispatch of its own) to read it once: the MLP's 256 x 512 x 10 logits and their weights' gradient (x^T dy)
    as kernels, its Adam step 7.13-7.30 -> 6.90-7.01 ms (exported, interleaved, Zen 3, 2026-12-07), one with k = 10
    (the logits' input gradient) slower than IREE's."""
    work = m * k * n
    return work >= MIN_WORK or work >= MIN_NARROW_WORK and k >= 64 and n <= 2 * VECTORS * tile()[1]


def _dispatchable(m: int, k: int, n: int, k_unit: int, packs_a: bool = False) -> bool:
    """Whether the kernel's and the packings' workgroups fit one dispatch each (IREE counts them in 16 bits here)."""
    plan = Plan("", m, k, n, k_unit)
    chunks = -(-k // PACK_ROWS)
    packing_a = -(-plan.row_panels // PACK_PANELS) * chunks if packs_a else 0
    return max(plan.workgroups(), plan.column_panels * chunks, packing_a) <= MAX_WORKGROUPS


def _claim(op) -> tuple[str, callable, list, int] | None:
    """(the symbol, a function of it and an epilogue (or None) giving the source, the operands to call it with, the
    result's columns n where an epilogue may follow the kernel: a product's; None for the kernel gradients' and
    the convolutions') of the kernel that takes `op`, or None."""
    sizes = _product_sizes(op)
    if sizes is not None:
        outer, k, inner, n, rc = sizes
        lhs_shape, rhs_shape = (shape_of(v.type) for v in op.operands)
        result_shape = shape_of(op.results[0].type)
        lc = dot_dimensions(op)[2][0]
        patches = _patches(op.operands[0]) if lc == 1 else None
        k_unit = patches["out"][1] if patches else 1
        packs_a = patches is None and _reads_aliasing_columns(outer, inner)
        if not _worth_a_kernel(outer * inner, k, n) or not _dispatchable(outer * inner, k, n, k_unit, packs_a):
            return None
        if patches is not None:
            parts = [patches["source_shape"], patches["out"], patches["strides"], patches["window"],
                     patches["first_tap"], patches["tap_step"], rhs_shape]
            symbol = "hlojit_patch_kernel_" + "_".join("x".join(map(str, p)) for p in parts) + f"_c{rc}"
            return (symbol, lambda s, _: patches_source(s, patches, rhs_shape, result_shape, sizes),
                    [patches["source"], op.operands[1]], None)
        symbol = f"hlojit_matmul_kernel_{'x'.join(map(str, lhs_shape))}_{'x'.join(map(str, rhs_shape))}_c{lc}{rc}"
        return (symbol, lambda s, e: product_source(s, lhs_shape, rhs_shape, result_shape, sizes, e),
                list(op.operands), n)
    geometry = _convolution_geometry(op)
    if geometry is not None:
        kh, kw, channels, features = geometry["w"]
        m = math.prod(geometry["out"][:3])
        if m * features * kh * kw * channels < MIN_WORK or not _dispatchable(m, kh * kw * channels, features, channels):
            return None
        parts = [geometry["x"], geometry["w"], geometry["strides"], geometry["padding"]]
        symbol = "hlojit_conv_kernel_" + "_".join("x".join(map(str, p)) for p in parts)
        return symbol, lambda s, _: convolution_source(s, geometry), list(op.operands), None
    return None


EPILOGUE_MARK = "_then_"


def _epilogue_symbol(symbol: str, epilogue) -> str:
    """The kernel's symbol with its epilogue's chain and shapes (a short digest: they make the source)."""
    shapes = [shape_of(v.type) for v in epilogue.operands] + [shape_of(epilogue.last.results[0].type)]
    return f"{symbol}{EPILOGUE_MARK}{hashlib.sha256(repr((epilogue.signature(), shapes)).encode()).hexdigest()[:12]}"


def matmuls_by_kernel(module: ir.Module) -> int:
    """Each product and convolution a kernel claims as a call of the kernel's function (parsed into the module
    once per shape and epilogue), inlined; with the elementwise chain after it where there is one
    (kernel_epilogues.py), whose last op the call then replaces. Claimed as the walk left them: an earlier claim
    replaces values (its chain's last) that a later product may read, and erases its chain's ops."""
    count = 0
    candidates = [op for op in walk(module.operation) if op.name in ("stablehlo.dot_general", "stablehlo.convolution")]
    for op in candidates:
        claim = _claim(op)
        if claim is None:
            continue
        symbol, source, operands, n = claim
        epilogue = kernel_epilogues.find(op, n) if n is not None else None
        left = op.operands[0]
        if epilogue is None:
            call_of_source(module, op, symbol, lambda s: source(s, None), operands)
        else:
            fused = ir.Location.fused([op.location] + [o.location for o in epilogue.ops], context=op.context)
            call_of_source(module, epilogue.last, _epilogue_symbol(symbol, epilogue),
                           lambda s: source(s, epilogue), operands + epilogue.operands, fused)
            for dead in reversed(epilogue.ops[:-1]):
                dead.erase()
            op.erase()
        erase_unused(left, _PATCH_OPS)     # im2col patches read in place: their slices and concatenation
        count += 1
    if count:
        inline_calls(module)
    return count
