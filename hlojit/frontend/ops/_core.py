"""What every op shares: turning operands into Tensors, promotion, broadcasting, errors, emitting.

Every op checks its operands here, in Python, and raises errors that name the op, the shapes/dtypes and
the user's line before any MLIR is built.
"""
from __future__ import annotations

import numbers

import numpy as np

from ...dialects import stablehlo as hlo, types as _types
from ...errors import DTypeError, ShapeError, TracingError
from .. import dtypes, trace
from ..tensor import Tensor


def fail(error: type, op: str, message: str):
    raise error(f"{op}: {message} at {trace.user_site()}")


def describe(x) -> str:
    if isinstance(x, Tensor):
        return f"{x.dtype}{list(x.shape)}"
    return repr(x)


def emit(builder, *args, **kwargs):
    """Call a dialect builder with the user's source line as the op's location."""
    return builder(*args, loc=trace.user_location(), **kwargs)


def wrap(value, shape, dtype, weak=False) -> Tensor:
    return Tensor(value, shape, dtype, weak)


def barrier(t: Tensor) -> Tensor:
    """t, opaque to the compiler: nothing folds or fuses across it (IREE's llvm-cpu would contract a multiply
    and an add into an fma, fold two converts into one it cannot link, fold constants for a minute)."""
    return wrap(emit(hlo.optimization_barrier, [t.value])[0], t.shape, t.dtype, t.weak)


def _current_trace(op: str):
    """The trace being built. The public `hlojit.ops` functions never get here without one (outside a trace
    they run eagerly, frontend/eager.py); the building blocks under them, called directly, do."""
    t = trace.current()
    if t is None:
        fail(TracingError, op, "this building block builds a graph and runs only inside a function traced by "
                               "hj.jit; call the hlojit.ops function instead, which also runs outside hj.jit")
    return t


def constant(value, dtype, weak: bool = False, op: str = "constant") -> Tensor:
    _current_trace(op)
    dtype = dtypes.canonical(dtype)
    array = np.asarray(value)
    if isinstance(value, numbers.Integral) and dtypes.is_int(dtype):
        info = np.iinfo(dtype)
        if not info.min <= int(value) <= info.max:
            fail(DTypeError, op, f"Python int {value} does not fit in {dtype}")
    array = _types.astype(array, dtype)     # a float for a bfloat16 constant: rounded once
    return wrap(emit(hlo.constant, array), array.shape, dtype, weak)


def is_scalar(x) -> bool:
    """A weakly typed Python scalar (np.float64 subclasses float but has a dtype of its own)."""
    return isinstance(x, (bool, int, float, complex)) and not isinstance(x, (Tensor, np.generic))


def as_tensor(x, op: str) -> Tensor:
    """A Tensor of this trace from a Tensor, a numpy array/scalar, or a Python scalar (weakly typed)."""
    if isinstance(x, Tensor):
        if x.trace is not trace.current():
            fail(TracingError, op, "this Tensor belongs to another trace (it leaked out of a traced function, "
                                   "e.g. through a global or a closure); pass it as an argument instead")
        return x
    if is_scalar(x):
        dtype, weak = dtypes.python_scalar_dtype(x)
        return constant(x, dtype, weak, op)
    if isinstance(x, (np.ndarray, np.generic)) or hasattr(x, "__array__"):
        array = np.asarray(x)
        return constant(array, dtypes.canonical(array.dtype), False, op)
    fail(DTypeError, op, f"cannot use a {type(x).__name__} as an operand")


def convert(x: Tensor, dtype, weak: bool = False) -> Tensor:
    """x as `dtype`. Never complex to real: an op that would silently keep the real part of a complex operand
    (a float-only helper) says so instead; `astype` takes the real part where the user asks for it."""
    dtype = dtypes.canonical(dtype)
    if dtypes.is_complex(x.dtype) and not dtypes.is_complex(dtype):
        raise DTypeError(f"{describe(x)} cannot become {dtype} here: that would drop the imaginary part "
                         f"(use .real, abs() or .astype() to say which real value is meant) at {trace.user_site()}")
    if x.dtype == dtype:
        return x if x.weak == weak else wrap(x.value, x.shape, dtype, weak)
    return wrap(emit(hlo.convert, x.value, dtype), x.shape, dtype, weak)


def result_dtype(op: str, operands) -> tuple:
    """(dtype, weak) of operands (Tensors or Python scalars) combined by the promotion lattice."""
    pairs = [(x.dtype, x.weak) if isinstance(x, Tensor) else
             dtypes.python_scalar_dtype(x) if is_scalar(x) else
             (dtypes.canonical(np.asarray(x).dtype), False) for x in operands]
    try:
        return dtypes.result_type(*pairs)
    except DTypeError as e:
        fail(DTypeError, op, f"{e} (operands {', '.join(describe(x) for x in operands)})")


def promote(op: str, *operands, dtype=None) -> tuple[list[Tensor], object, bool]:
    """Operands as Tensors of one dtype (the promoted one, or `dtype`): returns (tensors, dtype, weak)."""
    common, weak = result_dtype(op, operands)
    if dtype is not None:
        common, weak = dtypes.canonical(dtype), False
    tensors = []
    for x in operands:
        if is_scalar(x):
            tensors.append(constant(x, common, weak, op))
        else:
            tensors.append(convert(as_tensor(x, op), common, weak))
    return tensors, common, weak


def broadcast_shapes(op: str, *shapes) -> tuple:
    ndim = max((len(s) for s in shapes), default=0)
    result = []
    for axis in range(ndim):
        sizes = {s[axis - ndim + len(s)] for s in shapes if axis - ndim + len(s) >= 0}
        sizes.discard(1)
        if len(sizes) > 1:
            fail(ShapeError, op, f"shapes {' and '.join(str(tuple(s)) for s in shapes)} cannot be broadcast "
                                 f"together (dimension {axis} of the result: sizes {sorted(sizes)})")
        result.append(sizes.pop() if sizes else 1)
    return tuple(result)


def broadcast_to(x: Tensor, shape: tuple, op: str = "broadcast_to") -> Tensor:
    """numpy broadcasting as one `broadcast_in_dim` (size-1 dimensions stretch, new ones lead)."""
    shape = tuple(shape)
    if x.shape == shape:
        return x
    if len(x.shape) > len(shape):
        fail(ShapeError, op, f"cannot broadcast {describe(x)} to {shape}: it has more dimensions")
    offset = len(shape) - len(x.shape)
    for i, d in enumerate(x.shape):
        if d != 1 and d != shape[offset + i]:
            fail(ShapeError, op, f"cannot broadcast {describe(x)} to {shape}")
    dims = list(range(offset, len(shape)))  # broadcast_in_dim stretches size-1 operand dimensions itself
    return wrap(emit(hlo.broadcast_in_dim, x.value, shape, dims), shape, x.dtype, x.weak)


def broadcast_all(op: str, tensors: list[Tensor]) -> list[Tensor]:
    shape = broadcast_shapes(op, *(t.shape for t in tensors))
    return [broadcast_to(t, shape, op) for t in tensors]


def normalize_axis(op: str, axis: int, ndim: int) -> int:
    if not isinstance(axis, (int, np.integer)) or isinstance(axis, bool):
        fail(TypeError, op, f"axis must be an int, not {type(axis).__name__}")
    if not -ndim <= axis < max(ndim, 1) or (ndim == 0 and axis not in (0, -1)):
        fail(ShapeError, op, f"axis {axis} is out of range for an array of rank {ndim}")
    return int(axis) % max(ndim, 1)


def normalize_axes(op: str, axis, ndim: int) -> tuple:
    """None -> all axes; int or tuple -> sorted non-negative axes, no repeats."""
    if axis is None:
        return tuple(range(ndim))
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    result = tuple(normalize_axis(op, a, ndim) for a in axes)
    if ndim == 0:
        result = ()
    if len(set(result)) != len(result):
        fail(ShapeError, op, f"repeated axis in {axis}")
    return tuple(sorted(result))
