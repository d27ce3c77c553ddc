"""Winograd convolution (Lavin & Gray, F(m x m, 3 x 3)) as a StableHLO -> StableHLO rewrite.

Why: a 3x3 stride-1 convolution as a direct or im2col product costs 9 multiplies per output and input
channel; Winograd's F(2x2, 3x3) costs 16/4 = 4, F(4x4, 3x3) 36/16 = 2.25, and leaves all of them in ONE
batched matmul over the tile positions ([positions, tiles, Cin] x [positions, Cin, Cout]), which IREE
data-tiles well. The transforms around it are cheap elementwise sums of strided slices that IREE fuses.

Steps for each eligible convolution (2-D, 3x3 window, stride 1, no dilation, one group, f32 operands and
result, padding >= 0): input and kernel moved to NHWC / HWIO whatever the dimension numbers say; the
input padded (the convolution's padding, plus high padding up to whole tiles); the kernel transformed
(G g G^T, two small dot_generals); the input cut into overlapping (m+2)^2 windows with stride m and
transformed (B^T d B) by strided slices and sums along rows, then columns; the batched matmul; the output
transform (A^T M A); the m x m pieces put back side by side, cropped to the convolution's size, and
moved to its output layout.

f32 error: the computed result differs from the exact one by at most about (Cin + 8) * eps times the same
algorithm run on |x|, |w| and the transforms' absolute values (tests/test_winograd.py checks this bound);
against (Cin + 24) * eps * sum |x||w| (a direct convolution's) that bound is 7.5-20x larger for F(2,3) and 16-383x
for F(4,3) (measured on the test's cases): F(4,3)'s transform constants (up to 8 and 1/24) cost f32 digits.
"""
from __future__ import annotations

import functools
import os

import numpy as np
from iree.compiler import ir

from ..dialects import stablehlo as hlo
from ..dialects.types import conv_labels, dtype_of, shape_of
from ..errors import ConfigError
from .legalize import walk

# HLOJIT_WINOGRAD forces one choice on every eligible convolution: "0" none, "2" or "1" F(2x2, 3x3), "4" F(4x4, 3x3).
# Unset, each convolution gets the choice its CHOICE_ATTRIBUTE holds, which autotuning (tuning.py) marks per shape
# from measurements on this machine, and no Winograd where it holds none (on a loaded 2-core Zen 3 it won on some
# ResNet-18 layers and lost 1.5-42x on others, benchmarks/winograd.py). cpu target only.
MODES = {"0": 0, "1": 2, "2": 2, "4": 4}
CHOICE_ATTRIBUTE = "hlojit.winograd"   # on a convolution: the tile size chosen for it, 0 for none


def forced() -> int | None:
    """The tile size HLOJIT_WINOGRAD forces on every convolution (2 or 4, 0 for none), or None when it is unset."""
    value = os.environ.get("HLOJIT_WINOGRAD", "").strip()
    if not value:
        return None
    if value not in MODES:
        raise ConfigError(f"HLOJIT_WINOGRAD={value!r}: use 0 (off), 1 or 2 (F(2x2,3x3)) or 4 (F(4x4,3x3)), or leave "
                          "it unset (each convolution's tuned choice, where autotuning made one)")
    return MODES[value]


def mode() -> int:
    """The tile size HLOJIT_WINOGRAD forces (2 or 4), or 0 (none forced: the compile cache's key part; a
    convolution's own choice is in the program text, which the key hashes)."""
    return forced() or 0


# F(2x2, 3x3): tile input 4x4, output 2x2.
F2 = {"BT": np.array([[1, 0, -1, 0], [0, 1, 1, 0], [0, -1, 1, 0], [0, 1, 0, -1]], np.float64),
      "G": np.array([[1, 0, 0], [.5, .5, .5], [.5, -.5, .5], [0, 0, 1]], np.float64),
      "AT": np.array([[1, 1, 1, 0], [0, 1, -1, -1]], np.float64)}
# F(4x4, 3x3): tile input 6x6, output 4x4.
F4 = {"BT": np.array([[4, 0, -5, 0, 1, 0], [0, -4, -4, 1, 1, 0], [0, 4, -4, -1, 1, 0], [0, -2, -1, 2, 1, 0],
                      [0, 2, -1, -2, 1, 0], [0, 4, 0, -5, 0, 1]], np.float64),
      "G": np.array([[1 / 4, 0, 0], [-1 / 6, -1 / 6, -1 / 6], [-1 / 6, 1 / 6, -1 / 6], [1 / 24, 1 / 12, 1 / 6],
                     [1 / 24, -1 / 12, 1 / 6], [0, 0, 1]], np.float64),
      "AT": np.array([[1, 1, 1, 1, 1, 0], [0, 1, -1, 2, -2, 0], [0, 1, 1, 4, 4, 0], [0, 1, -1, 8, -8, 1]],
                     np.float64)}
TRANSFORMS = {2: F2, 4: F4}


def conv_dimensions(op) -> dict:
    """A stablehlo.convolution's dimension numbers read from its attribute's text
    (`#stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>`): {"lhs": {"b": 0, "f": 3, 0: 1, 1: 2},
    "rhs": {...}, "out": {...}}, each letter or spatial number -> its axis."""
    labels = conv_labels(str(op.attributes["dimension_numbers"]))
    return {side: {int(t) if t.isdigit() else t: axis for axis, t in enumerate(part)}
            for side, part in zip(("lhs", "rhs", "out"), labels)}


def conv_attribute_ints(op, name, default):
    """A convolution's integer-array attribute (strides, padding, dilations) as ints; `default` where absent."""
    if name not in op.attributes:
        return default
    attr = op.attributes[name]
    try:
        return [int(v) for v in ir.DenseI64ArrayAttr(attr)]
    except (ValueError, TypeError):
        return [int(v) for v in np.array(ir.DenseIntElementsAttr(attr)).reshape(-1)]


def conv_attribute_int(op, name) -> int:
    """A convolution's integer attribute (a group count); 1 where absent."""
    return int(ir.IntegerAttr(op.attributes[name]).value) if name in op.attributes else 1


def eligible(op) -> bool:
    """A 2-D 3x3 stride-1 convolution without dilation or groups, f32 throughout, padding >= 0."""
    if op.name != "stablehlo.convolution":
        return False
    x, w = op.operands
    if len(shape_of(x.type)) != 4 or any(dtype_of(v.type) != np.float32 for v in (x, w, op.results[0])):
        return False
    dims = conv_dimensions(op)
    kernel = shape_of(w.type)
    if [kernel[dims["rhs"][s]] for s in (0, 1)] != [3, 3]:
        return False
    ints = functools.partial(conv_attribute_ints, op)
    padding = ints("padding", [0, 0, 0, 0])
    return (ints("window_strides", [1, 1]) == [1, 1] and ints("lhs_dilation", [1, 1]) == [1, 1]
            and ints("rhs_dilation", [1, 1]) == [1, 1] and conv_attribute_int(op, "feature_group_count") == 1
            and conv_attribute_int(op, "batch_group_count") == 1 and min(padding, default=0) >= 0
            and 0 not in shape_of(x.type) and 0 not in shape_of(op.results[0].type))


def _combine(coefficients, values):
    """sum_k coefficients[k] * values[k], with no op for a zero coefficient and none for a multiply by +-1."""
    total = None
    for c, v in zip(coefficients, values):
        if c == 0:
            continue
        if abs(c) != 1:
            v = hlo.binary("multiply", v, hlo.broadcast_in_dim(hlo.constant(np.float32(abs(c))),
                                                               shape_of(v.type), []))
        if total is None:
            total = v if c > 0 else hlo.unary("negate", v)
        else:
            total = hlo.binary("add" if c > 0 else "subtract", total, v)
    return total


def _strided(x, axis: int, start: int, count: int, step: int):
    shape = shape_of(x.type)
    starts, limits, strides = [0] * len(shape), list(shape), [1] * len(shape)
    starts[axis], limits[axis], strides[axis] = start, start + (count - 1) * step + 1, step
    return hlo.slice(x, starts, limits, strides)


def _kernel_transform(w, G):
    """w [3, 3, Cin, Cout] -> U [t*t, Cin, Cout] = G g G^T for each channel pair."""
    t = G.shape[0]
    g = hlo.constant(G.astype(np.float32))
    rows = hlo.dot_general(g, w, lhs_contract=[1], rhs_contract=[0])          # [t(p), 3(kw), Cin, Cout]
    both = hlo.dot_general(g, rows, lhs_contract=[1], rhs_contract=[1])      # [t(q), t(p), Cin, Cout]
    both = hlo.transpose(both, [1, 0, 2, 3])
    _, _, cin, cout = shape_of(w.type)
    return hlo.reshape(both, [t * t, cin, cout])


def _input_transform(x, BT, m: int, tiles_h: int, tiles_w: int):
    """x [N, Hp, Wp, C] (padded to whole tiles) -> V [t*t, N*th*tw, C]: B^T d B over every tile d."""
    t = BT.shape[0]
    n, _, _, c = shape_of(x.type)
    row_slices = [_strided(x, 1, a, tiles_h, m) for a in range(t)]            # [N, th, Wp, C] each
    rows = [_combine(BT[p], row_slices) for p in range(t)]
    pieces = []
    for r in rows:
        col_slices = [_strided(r, 2, b, tiles_w, m) for b in range(t)]       # [N, th, tw, C] each
        for q in range(t):
            pieces.append(hlo.reshape(_combine(BT[q], col_slices), [1, n * tiles_h * tiles_w, c]))
    return hlo.concatenate(pieces, 0)


def _output_transform(product, AT, n: int, tiles_h: int, tiles_w: int):
    """M [t*t, N*th*tw, Cout] -> [N, th*m, tw*m, Cout]: A^T M A per tile, the m x m pieces side by side."""
    m, t = AT.shape
    cout = shape_of(product.type)[-1]
    tile = [n, tiles_h, tiles_w, cout]
    parts = [hlo.reshape(hlo.slice(product, [k, 0, 0], [k + 1, *shape_of(product.type)[1:]]), tile)
             for k in range(t * t)]
    rows = [[_combine(AT[i], [parts[p * t + q] for p in range(t)]) for q in range(t)] for i in range(m)]
    out_rows = []
    for i in range(m):
        cols = [hlo.reshape(_combine(AT[j], rows[i]), [n, tiles_h, 1, tiles_w, 1, cout]) for j in range(m)]
        out_rows.append(hlo.concatenate(cols, 4))                            # [N, th, 1, tw, m, Cout]
    whole = hlo.concatenate(out_rows, 2)                                      # [N, th, m, tw, m, Cout]
    return hlo.reshape(whole, [n, tiles_h * m, tiles_w * m, cout])


def transposed(x, permutation):
    """x transposed by `permutation`; x itself where that is the identity (no op built)."""
    return x if list(permutation) == list(range(len(permutation))) else hlo.transpose(x, permutation)


def winograd_conv(op, m: int = 2):
    """The Winograd value replacing the eligible convolution `op` (built before it)."""
    T = TRANSFORMS[m]
    dims = conv_dimensions(op)
    lhs, rhs, out = dims["lhs"], dims["rhs"], dims["out"]
    x = transposed(op.operands[0], [lhs["b"], lhs[0], lhs[1], lhs["f"]])
    w = transposed(op.operands[1], [rhs[0], rhs[1], rhs["i"], rhs["o"]])
    n, h, wd, _ = shape_of(x.type)
    (top, bottom), (left, right) = np.array(conv_attribute_ints(op, "padding", [0, 0, 0, 0])).reshape(2, 2).tolist()
    out_h, out_w = h + top + bottom - 2, wd + left + right - 2
    tiles_h, tiles_w = -(-out_h // m), -(-out_w // m)
    high_h, high_w = tiles_h * m + 2 - h - top, tiles_w * m + 2 - wd - left
    if top or left or high_h or high_w:
        x = hlo.pad(x, hlo.constant(np.float32(0)), [0, top, left, 0], [0, high_h, high_w, 0], [0, 0, 0, 0])
    v = _input_transform(x, T["BT"], m, tiles_h, tiles_w)
    u = _kernel_transform(w, T["G"])
    product = hlo.dot_general(v, u, lhs_batch=[0], rhs_batch=[0], lhs_contract=[2], rhs_contract=[1])
    y = _output_transform(product, T["AT"], n, tiles_h, tiles_w)
    cout = shape_of(y.type)[-1]
    if (tiles_h * m, tiles_w * m) != (out_h, out_w):
        y = hlo.slice(y, [0, 0, 0, 0], [n, out_h, out_w, cout])
    order = sorted(("b", 0, 1, "f"), key=lambda name: out[name])            # output axis k holds order[k]
    nhwc = {"b": 0, 0: 1, 1: 2, "f": 3}
    return transposed(y, [nhwc[name] for name in order])


def signature(op) -> tuple:
    """What a Winograd choice depends on for the eligible convolution `op`: (N, H, W, Cin, Cout, padding top,
    bottom, left, right), whatever its layout (the rewrite makes every one the same NHWC product)."""
    dims = conv_dimensions(op)
    x, w = (shape_of(v.type) for v in op.operands)
    lhs, rhs = dims["lhs"], dims["rhs"]
    return (x[lhs["b"]], x[lhs[0]], x[lhs[1]], x[lhs["f"]], w[rhs["o"]], *conv_attribute_ints(op, "padding", [0, 0, 0, 0]))


def describe(shape: tuple) -> str:
    """`64->64ch 56x56 b8` (padding only where it is not 1 on every side)."""
    n, h, w, cin, cout, *padding = shape
    pad = "" if padding == [1, 1, 1, 1] else f" pad {','.join(map(str, padding))}"
    return f"{cin}->{cout}ch {h}x{w} b{n}{pad}"


def signatures(module: ir.Module) -> list:
    """The distinct signatures of the module's eligible convolutions, in program order."""
    return list(dict.fromkeys(signature(op) for op in walk(module.operation) if eligible(op)))


def mark(module: ir.Module, choices: dict) -> int:
    """Give each eligible convolution its signature's tile size from `choices` (0: none) as CHOICE_ATTRIBUTE,
    which requested_winograd follows; the count marked."""
    count = 0
    for op in walk(module.operation):
        if eligible(op) and signature(op) in choices:
            op.attributes[CHOICE_ATTRIBUTE] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64),
                                                                 choices[signature(op)])
            count += 1
    return count


def _take_choice(op) -> int:
    """The tile size `op` is marked with (0 where none), the mark removed (IREE is not to see it)."""
    if CHOICE_ATTRIBUTE not in op.attributes:
        return 0
    m = int(ir.IntegerAttr(op.attributes[CHOICE_ATTRIBUTE]).value)
    del op.attributes[CHOICE_ATTRIBUTE]
    return m if m in TRANSFORMS else 0


def requested_winograd(module: ir.Module) -> int:
    """The quirk-list entry: each eligible convolution in HLOJIT_WINOGRAD's forced tile size, else in the one its
    mark chose (none where unmarked); the count rewritten. Every mark is removed."""
    m = forced()
    count = 0
    for op in list(walk(module.operation)):
        if op.name != "stablehlo.convolution":
            continue
        chosen = _take_choice(op)
        chosen = chosen if m is None else m
        if chosen and eligible(op):
            _replace(op, chosen)
            count += 1
    return count


def winograd_convolutions(module: ir.Module, m: int = 2) -> int:
    """Every eligible convolution of the module replaced by its F(m x m, 3 x 3) Winograd form; the count."""
    eligible_ops = [op for op in walk(module.operation) if eligible(op)]
    for op in eligible_ops:
        _replace(op, m)
    return len(eligible_ops)


def _replace(op, m: int):
    with ir.InsertionPoint(op), op.location:
        new = winograd_conv(op, m)
    op.results[0].replace_all_uses_with(new)
    op.erase()
