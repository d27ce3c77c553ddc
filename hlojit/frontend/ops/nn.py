"""Convolutions and pooling: `conv` (1-D/2-D/3-D, channels first or last, strides, padding, dilation,
feature groups), `conv_transpose`, `max_pool`, `avg_pool`.

Layouts follow lax.conv: channels first ("NCW", "NCHW", "NCDHW": the default, by rank) with an OI...
kernel, or channels last ("NWC", "NHWC", "NDHWC") with a ...IO kernel; the output has the input's layout.
Padding is "VALID", "SAME" (output = ceil(input / stride)), an int, or a
(low, high) pair per spatial dimension. 16-bit floats accumulate in float32 (a convolution's result type,
avg_pool's window sums) and are rounded once, as dot_general does.
"""
from __future__ import annotations

import numpy as np

from ...dialects import stablehlo as hlo
from ...dialects.types import shape_of
from ...errors import ShapeError
from .. import dtypes
from ..tensor import Tensor
from . import _core
from ._core import as_tensor, constant, emit, fail, promote, wrap
from .reductions import computation_dtype, widened

_LAYOUTS = {"NCW": 1, "NCHW": 2, "NCDHW": 3, "NWC": 1, "NHWC": 2, "NDHWC": 3}


def _specs(layout: str, n: int) -> tuple[str, str, str]:
    digits = ", ".join(str(i) for i in range(n))
    if layout[1] == "C":  # channels first
        return f"[b, f, {digits}]", f"[o, i, {digits}]", f"[b, f, {digits}]"
    return f"[b, {digits}, f]", f"[{digits}, i, o]", f"[b, {digits}, f]"


def _tuple(op: str, value, n: int, what: str) -> tuple:
    values = (value,) * n if isinstance(value, (int, np.integer)) else tuple(value)
    if len(values) != n or any(int(v) < 1 for v in values):
        fail(ShapeError, op, f"{what} must be a positive int or {n} of them, not {value!r}")
    return tuple(int(v) for v in values)


def _padding(op: str, padding, sizes, windows, strides) -> list:
    n = len(sizes)
    if isinstance(padding, str):
        if padding.upper() == "VALID":
            return [(0, 0)] * n
        if padding.upper() == "SAME":
            pads = []
            for size, window, stride in zip(sizes, windows, strides):
                total = max((-(-size // stride) - 1) * stride + window - size, 0)
                pads.append((total // 2, total - total // 2))
            return pads
        fail(ValueError, op, f"padding must be 'VALID', 'SAME', an int or (low, high) pairs, not {padding!r}")
    if isinstance(padding, (int, np.integer)):
        return [(int(padding), int(padding))] * n
    pads = [(int(p), int(p)) if isinstance(p, (int, np.integer)) else tuple(int(v) for v in p) for p in padding]
    if len(pads) != n or any(len(p) != 2 for p in pads):
        fail(ShapeError, op, f"padding needs one (low, high) pair per spatial dimension ({n}), got {padding!r}")
    return pads


def _layout(op: str, x: Tensor, layout: str | None) -> tuple[int, int, list, str]:
    """(number of spatial dims, channel axis, spatial axes, layout) of x; None is channels first."""
    if layout is None:
        layout = {3: "NCW", 4: "NCHW", 5: "NCDHW"}.get(x.ndim)
        if layout is None:
            fail(ShapeError, op, "input must have rank 3, 4 or 5 (batch, channels, 1-3 spatial), got "
                                 f"{_core.describe(x)}")
    if layout not in _LAYOUTS:
        fail(ValueError, op, f"layout must be one of {', '.join(_LAYOUTS)}, not {layout!r}")
    n = _LAYOUTS[layout]
    if x.ndim != n + 2:
        fail(ShapeError, op, f"{layout} input must have rank {n + 2}, got {_core.describe(x)}")
    first = layout[1] == "C"
    return n, 1 if first else n + 1, list(range(2, n + 2)) if first else list(range(1, n + 1)), layout


def conv(x, w, stride=1, padding="VALID", dilation=1, groups: int = 1, layout: str | None = None,
         lhs_dilation=1) -> Tensor:
    """N-D convolution (cross-correlation, as in every ML framework), one `stablehlo.convolution` in the user's
    layout. How a target lays it out is the pipeline's choice (iree:cpu: channels last, pipeline/layout.py)."""
    (x, w), dtype, weak = promote("conv", x, w)
    n, channel, spatial, layout = _layout("conv", x, layout)
    if w.ndim != x.ndim:
        fail(ShapeError, "conv", f"kernel rank {w.ndim} differs from input rank {x.ndim}: "
                                 f"{_core.describe(x)} * {_core.describe(w)}")
    first = layout[1] == "C"
    k_in, k_out = (w.shape[1], w.shape[0]) if first else (w.shape[-2], w.shape[-1])
    k_spatial = list(w.shape[2:]) if first else list(w.shape[:-2])
    if x.shape[channel] != k_in * groups or k_out % groups:
        fail(ShapeError, "conv", f"input has {x.shape[channel]} channels but the kernel takes {k_in} per group "
                                 f"x {groups} groups (kernel {w.shape}, {'OIHW' if first else 'HWIO'} layout) with "
                                 f"{k_out} outputs")
    strides, dilations = _tuple("conv", stride, n, "stride"), _tuple("conv", dilation, n, "dilation")
    lhs_dilations = _tuple("conv", lhs_dilation, n, "lhs_dilation")
    windows = [(k - 1) * d + 1 for k, d in zip(k_spatial, dilations)]
    sizes = [(x.shape[a] - 1) * ld + 1 for a, ld in zip(spatial, lhs_dilations)]
    pads = _padding("conv", padding, sizes, windows, strides)
    if any(s + lo + hi < win for s, (lo, hi), win in zip(sizes, pads, windows)):
        fail(ShapeError, "conv", f"the window {tuple(windows)} is larger than the padded input {tuple(sizes)} "
                                 f"(padding {pads})")
    spec = "{}x{}->{}".format(*_specs(layout, n))
    accumulator = computation_dtype(dtype)
    value = emit(hlo.convolution, x.value, w.value, dimension_numbers=spec, strides=strides, padding=pads,
                 lhs_dilation=lhs_dilations, rhs_dilation=dilations, feature_group_count=groups, dtype=accumulator)
    return _core.convert(wrap(value, shape_of(value.type), accumulator, weak), dtype, weak)


IM2COL_MAX_ELEMENTS = 1 << 25   # the patch matrix autodiff's kernel cotangent builds: 128 MB of float32 at most


def conv_transpose(x, w, stride=1, padding="VALID", dilation=1, layout: str | None = None) -> Tensor:
    """The gradient of `conv` with respect to its input (PyTorch's ConvTranspose): the kernel is
    (in_channels, out_channels, *window) for channels-first layouts, (*window, in, out) otherwise.
    Output size per dimension: (in - 1) * stride + (window - 1) * dilation + 1 - pad_low - pad_high."""
    (x, w), _, _ = promote("conv_transpose", x, w)
    n, _, spatial, layout = _layout("conv_transpose", x, layout)
    first = layout[1] == "C"
    k_spatial = list(w.shape[2:]) if first else list(w.shape[:-2])
    strides = _tuple("conv_transpose", stride, n, "stride")
    dilations = _tuple("conv_transpose", dilation, n, "dilation")
    windows = [(k - 1) * d + 1 for k, d in zip(k_spatial, dilations)]
    if isinstance(padding, str) and padding.upper() == "SAME":  # output = input * stride
        pads = [((win + s - 2) // 2, win + s - 2 - (win + s - 2) // 2) for win, s in zip(windows, strides)]
    else:
        given = _padding("conv_transpose", padding, [x.shape[a] for a in spatial], windows, strides)
        pads = [(win - 1 - lo, win - 1 - hi) for win, (lo, hi) in zip(windows, given)]
    from .shape import transpose
    axes = list(range(2, n + 2)) if first else list(range(n))
    flipped = wrap(emit(hlo.reverse, w.value, axes), w.shape, w.dtype, w.weak)  # the window runs backwards
    swapped = transpose(flipped, (1, 0, *range(2, n + 2)) if first else (*range(n), n + 1, n))
    return conv(x, swapped, stride=1, padding=pads, dilation=dilations, layout=layout, lhs_dilation=strides)


def _pool(op: str, x, window, strides, padding, layout: str, body: str, init):
    x = as_tensor(x, op)
    n, channel, spatial, layout = _layout(op, x, layout)
    window = _tuple(op, window, n, "window")
    strides = window if strides is None else _tuple(op, strides, n, "strides")
    sizes = [x.shape[a] for a in spatial]
    pads = _padding(op, padding, sizes, window, strides)
    if any(s + lo + hi < win for s, (lo, hi), win in zip(sizes, pads, window)):
        fail(ShapeError, op, f"the window {window} is larger than the padded input {tuple(sizes)} (padding {pads})")
    full_window, full_strides, full_pads = [1] * x.ndim, [1] * x.ndim, [(0, 0)] * x.ndim
    for a, win, s, p in zip(spatial, window, strides, pads):
        full_window[a], full_strides[a], full_pads[a] = win, s, p
    init_value = constant(init(x.dtype), x.dtype)
    (value,) = emit(hlo.reduce_window, [x.value], [init_value.value], window=full_window, strides=full_strides,
                    padding=full_pads, body=body)
    return wrap(value, shape_of(value.type), x.dtype, x.weak), int(np.prod(window))


def max_pool(x, window, strides=None, padding="VALID", layout: str | None = None) -> Tensor:
    """Maximum over each window of the spatial dimensions (strides default to the window)."""
    lowest = lambda d: -np.inf if dtypes.is_float(d) else (False if d == dtypes.bool_ else np.iinfo(d).min)  # noqa
    return _pool("max_pool", x, window, strides, padding, layout, "maximum", lowest)[0]


def avg_pool(x, window, strides=None, padding="VALID", layout: str | None = None) -> Tensor:
    """Mean over each window; padded positions count as zeros (count_include_pad, as JAX and PyTorch's
    default do)."""
    x = as_tensor(x, "avg_pool")
    if not dtypes.is_float(x.dtype):
        x = _core.convert(x, dtypes.DEFAULT_FLOAT, x.weak)
    total, size = _pool("avg_pool", widened(x), window, strides, padding, layout, "add", lambda d: 0)
    return _core.convert(total / size, x.dtype, x.weak)
