"""How matmul_kernel.py's tile reads its left operand, A, and walks K: one class per kind of A, each giving the
per-tile lines (`tile_rows`), the loops over a block of K carrying the tile's accumulators (`loops`) and the load of
one scalar of A (`load`), and the k loops they share (`_k_loops`: `unroll` steps of k a loop step, each adding A's
scalars times two vectors of the packed B). The plan (matmul_kernel.Plan) gives the tile's shape."""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .matmul_kernel import Plan

VECTORS = 2                 # a tile's width in vectors
# steps of k a loop step takes (the rest one at a time), products' and convolutions' (one core, exported): 2048²
# 111 ms with 8 against 127 with 4; ResNet's 64- and 512-channel convolutions alike with either, and with 4 its
# b8 forward's first call compiled in 3.5 s against 4.0-5.0
PRODUCT_UNROLL, CONVOLUTION_UNROLL = 8, 4


def memref_of(shape) -> str:
    return f"memref<{'x'.join(map(str, shape))}xf32>"


class ProductRows:
    """A product's A as the tile reads it, reshaped to [outer, k, inner] (its free dimensions before and after the
    contracted one): row p of the result is (p / inner, p % inner). [m, k] is [m, k, 1]; [k, m] is [1, k, m]."""

    def __init__(self, outer: int, k: int, inner: int):
        self.type, self.outer, self.inner = memref_of((outer, k, inner)), outer, inner

    def tile_rows(self, plan: Plan) -> list[str]:
        if self.outer == 1 or self.inner == 1:
            return []
        lines = [f"%inner = arith.constant {self.inner} : index"]
        for r in range(plan.mr):
            lines += [f"%outer{r} = arith.divui %row{r}, %inner : index",
                      f"%inner{r} = arith.remui %row{r}, %inner : index"]
        return lines

    def loops(self, plan: Plan, initial: list[str]) -> tuple[list[str], str]:
        """The loops over this block of k (kernel_body's %k_start to %k_stop)."""
        return _k_loops(plan, "%c0", "%k_start", "%k_stop", initial, self.load, "product", PRODUCT_UNROLL)

    def load(self, r: int, k: str) -> list[str]:
        if self.inner == 1:
            index = f"%row{r}, {k}, %c0"
        elif self.outer == 1:
            index = f"%c0, {k}, %row{r}"
        else:
            index = f"%outer{r}, {k}, %inner{r}"
        return [f"memref.load %a[{index}] : {self.type}"]


class PackedRows:
    """A product's A packed by row tiles, [row panels, k, mr] (matmul_kernel._packed_columns): a tile's mr scalars at a
    step of k are adjacent, one stream through memory whatever A's own strides."""

    def __init__(self, panels: int, k: int, mr: int):
        self.type = memref_of((panels, k, mr))

    def tile_rows(self, plan: Plan) -> list[str]:
        return []

    def loops(self, plan: Plan, initial: list[str]) -> tuple[list[str], str]:
        return _k_loops(plan, "%c0", "%k_start", "%k_stop", initial, self.load, "product", PRODUCT_UNROLL)

    def load(self, r: int, k: str) -> list[str]:
        return [f"memref.load %a[%ip, {k}, %q{r}] : {self.type}"]


class ConvolutionRows:
    """A channels-last convolution's zero-padded input [batch, height, width, channels] as the tile reads it:
    row p of the result is output pixel p (batch, y, x in order), its k = (tap, channel)."""

    def __init__(self, padded_shape, out_spatial, strides, window):
        self.type, self.shape = memref_of(padded_shape), padded_shape
        self.out_spatial, self.strides, self.window = out_spatial, strides, window

    def tile_rows(self, plan: Plan) -> list[str]:
        (ho, wo), (sy, sx) = self.out_spatial, self.strides
        lines = [f"%pixels = arith.constant {ho * wo} : index", f"%out_width = arith.constant {wo} : index",
                 f"%stride_y = arith.constant {sy} : index", f"%stride_x = arith.constant {sx} : index"]
        for r in range(plan.mr):
            lines += [f"%image{r} = arith.divui %row{r}, %pixels : index",
                      f"%pixel{r} = arith.remui %row{r}, %pixels : index",
                      f"%oy{r} = arith.divui %pixel{r}, %out_width : index",
                      f"%ox{r} = arith.remui %pixel{r}, %out_width : index",
                      f"%y{r} = arith.muli %oy{r}, %stride_y : index",
                      f"%x{r} = arith.muli %ox{r}, %stride_x : index"]
        return lines

    def loops(self, plan: Plan, initial: list[str]) -> tuple[list[str], str]:
        """A loop over the window's taps carrying the tile, in it the loops over the input channels."""
        channels, (_, kw) = self.shape[-1], self.window
        head = [f"%window_width = arith.constant {kw} : index", f"%channels = arith.constant {channels} : index",
                "%tap_start = arith.divui %k_start, %channels : index",
                "%tap_stop = arith.divui %k_stop, %channels : index"]
        body = ["%dy = arith.divui %tap, %window_width : index", "%dx = arith.remui %tap, %window_width : index",
                "%k_tap = arith.muli %tap, %channels : index"]
        for r in range(plan.mr):
            body += [f"%iy{r} = arith.addi %y{r}, %dy : index", f"%ix{r} = arith.addi %x{r}, %dx : index"]

        def inner(accumulators):
            return _k_loops(plan, "%k_tap", "%c0", "%channels", accumulators, self.load, "channel",
                            CONVOLUTION_UNROLL)
        return _tile_loop(plan, "tap", "%tap_start", "%tap_stop", initial, head, body, inner)

    def load(self, r: int, channel: str) -> list[str]:
        return [f"memref.load %a[%image{r}, %iy{r}, %ix{r}, {channel}] : {self.type}"]


class PatchRows:
    """A kernel gradient's im2col patches [taps, pixels, channels] (conv_gradients.py, matmul_kernel._patches) read
    from the padded channels-last input they were sliced from, flattened: row p of the result is (tap p / channels,
    channel p % channels), its k an output pixel (batch, y, x in order), taken a line of output pixels at a time (so
    k goes in blocks of whole lines)."""

    def __init__(self, patches: dict):
        self.patches = patches
        self.type = memref_of((math.prod(patches["source_shape"]),))

    def tile_rows(self, plan: Plan) -> list[str]:
        """Each row's offset in the input from the pixel its k reads: (tap's y * width + tap's x) * channels +
        channel."""
        q = self.patches
        _, _, width, channels = q["source_shape"]
        (y0, x0), (ry, rx), (_, kw) = q["first_tap"], q["tap_step"], q["window"]
        lines = [f"%patch_channels = arith.constant {channels} : index",
                 f"%patch_window_width = arith.constant {kw} : index",
                 f"%padded_width = arith.constant {width} : index", f"%first_tap_y = arith.constant {y0} : index",
                 f"%first_tap_x = arith.constant {x0} : index", f"%tap_ry = arith.constant {ry} : index",
                 f"%tap_rx = arith.constant {rx} : index"]
        for r in range(plan.mr):
            lines += [f"%tap{r} = arith.divui %row{r}, %patch_channels : index",
                      f"%channel{r} = arith.remui %row{r}, %patch_channels : index",
                      f"%tap_row{r} = arith.divui %tap{r}, %patch_window_width : index",
                      f"%tap_column{r} = arith.remui %tap{r}, %patch_window_width : index",
                      f"%tap_dy{r} = arith.muli %tap_row{r}, %tap_ry : index",
                      f"%tap_dx{r} = arith.muli %tap_column{r}, %tap_rx : index",
                      f"%tap_y{r} = arith.addi %tap_dy{r}, %first_tap_y : index",
                      f"%tap_x{r} = arith.addi %tap_dx{r}, %first_tap_x : index",
                      f"%tap_yw{r} = arith.muli %tap_y{r}, %padded_width : index",
                      f"%tap_pixel{r} = arith.addi %tap_yw{r}, %tap_x{r} : index",
                      f"%tap_at{r} = arith.muli %tap_pixel{r}, %patch_channels : index",
                      f"%offset{r} = arith.addi %tap_at{r}, %channel{r} : index"]
        return lines

    def loops(self, plan: Plan, initial: list[str]) -> tuple[list[str], str]:
        """A loop over the lines of output pixels carrying the tile, in it the loops along each line."""
        q = self.patches
        _, height, width, channels = q["source_shape"]
        (out_height, out_width), (sy, sx) = q["out"], q["strides"]
        head = [f"%out_width = arith.constant {out_width} : index",
                f"%out_height = arith.constant {out_height} : index",
                f"%image_stride = arith.constant {height * width * channels} : index",
                f"%line_stride = arith.constant {sy * width * channels} : index",
                f"%pixel_step = arith.constant {sx * channels} : index",
                "%line_start = arith.divui %k_start, %out_width : index",
                "%line_stop = arith.divui %k_stop, %out_width : index"]
        body = ["%line_image = arith.divui %line, %out_height : index",
                "%line_y = arith.remui %line, %out_height : index",
                "%line_image_at = arith.muli %line_image, %image_stride : index",
                "%line_y_at = arith.muli %line_y, %line_stride : index",
                "%line_at = arith.addi %line_image_at, %line_y_at : index",
                "%k_line = arith.muli %line, %out_width : index"]
        body += [f"%base{r} = arith.addi %line_at, %offset{r} : index" for r in range(plan.mr)]

        def inner(accumulators):
            return _k_loops(plan, "%k_line", "%c0", "%out_width", accumulators, self.load, "pixel", PRODUCT_UNROLL)
        return _tile_loop(plan, "line", "%line_start", "%line_stop", initial, head, body, inner)

    def load(self, r: int, pixel: str) -> list[str]:
        return [f"{pixel}_x{r} = arith.muli {pixel}, %pixel_step : index",
                f"{pixel}_at{r} = arith.addi %base{r}, {pixel}_x{r} : index",
                f"memref.load %a[{pixel}_at{r}] : {self.type}"]


def _tile_loop(plan: Plan, name: str, start: str, stop: str, initial: list[str], head: list[str],
               body: list[str], inner) -> tuple[list[str], str]:
    """(lines, the results' name) of `head`, then scf.for %name from `start` to `stop` carrying the tile's
    accumulators `initial`: `body`, then inner(the accumulators) -> (lines, their results' name), yielded."""
    v = f"vector<{plan.lanes}xf32>"
    vectors = ", ".join([v] * len(initial))
    carried = ", ".join(f"%{name}_acc{j} = {value}" for j, value in enumerate(initial))
    more, result = inner([f"%{name}_acc{j}" for j in range(len(initial))])
    lines = head + [f"%{name}_done:{len(initial)} = scf.for %{name} = {start} to {stop} step %c1 "
                    f"iter_args({carried}) -> ({vectors}) {{"]
    lines += ["  " + line for line in body + more]
    lines += [f"  scf.yield {', '.join(f'{result}#{j}' for j in range(len(initial)))} : {vectors}", "}"]
    return lines, f"%{name}_done"


def _k_loops(plan: Plan, k_first: str, start: str, stop: str, initial: list[str], load, name: str,
             unroll: int) -> tuple[list[str], str]:
    """(lines, the results' name) of loops over i from `start` to `stop` (index values; `unroll` steps a loop step,
    then the rest one at a time) carrying the tile's accumulators `initial` (mr x VECTORS), each step adding A's
    scalars load(r, i) (lines, the last of which loads it) times the two vectors of B's packed row k_first + i."""
    whole = f"%{name}_whole_stop"
    lines = [f"%{name}_count = arith.subi {stop}, {start} : index",
             f"%{name}_unroll = arith.constant {unroll} : index",
             f"%{name}_left = arith.remui %{name}_count, %{name}_unroll : index",
             f"{whole} = arith.subi {stop}, %{name}_left : index"]
    more, result = _k_loop(plan, f"{name}_whole", start, whole, unroll, k_first, initial, load)
    lines += more
    more, result = _k_loop(plan, f"{name}_rest", whole, stop, 1, k_first,
                           [f"{result}#{j}" for j in range(len(initial))], load)
    return lines + more, result


def _k_loop(plan: Plan, name: str, start: str, stop: str, unroll: int, k_first: str, initial: list[str],
            load) -> tuple[list[str], str]:
    """One of _k_loops' loops, `unroll` steps of k a loop step (the caller makes the count a multiple)."""
    mr, lanes = plan.mr, plan.lanes
    v = f"vector<{lanes}xf32>"
    names = [(r, w) for r in range(mr) for w in range(VECTORS)]
    vectors = ", ".join([v] * len(names))
    p = f"%{name}_"
    carried = ", ".join(f"{p}acc{j} = {value}" for j, value in enumerate(initial))
    lines = [f"{p}step = arith.constant {unroll} : index",
             f"%{name}:{len(names)} = scf.for {p}i = {start} to {stop} step {p}step iter_args({carried}) "
             f"-> ({vectors}) {{",
             f"  {p}kb = arith.addi {k_first}, {p}i : index"]
    acc = {name_: f"{p}acc{j}" for j, name_ in enumerate(names)}
    for u in range(unroll):
        i, k = f"{p}i{u}", f"{p}k{u}"
        lines += [f"  {i} = arith.addi {p}i, %q{u} : index", f"  {k} = arith.addi {p}kb, %q{u} : index"]
        lines += [f"  {p}b{u}_{w} = vector.transfer_read %b[%jp, {k}, %q{w * lanes}], %zero {{in_bounds = [true]}} : "
                  f"{plan.b_type}, {v}" for w in range(VECTORS)]
        for r in range(mr):
            *address, loaded = load(r, i)
            lines += [f"  {line}" for line in address]
            lines += [f"  {p}s{u}_{r} = {loaded}", f"  {p}sb{u}_{r} = vector.broadcast {p}s{u}_{r} : f32 to {v}"]
            for w in range(VECTORS):
                lines.append(f"  {p}f{u}_{r}_{w} = vector.fma {p}sb{u}_{r}, {p}b{u}_{w}, {acc[r, w]} : {v}")
                acc[r, w] = f"{p}f{u}_{r}_{w}"
    lines += [f"  scf.yield {', '.join(acc[name_] for name_ in names)} : {vectors}", "}"]
    return lines, f"%{name}"
