"""`V`: an ir.Value of a ranked tensor with Python's operators, for rewrites that build arithmetic (the exact
trig reduction, atan2, tanh ...): `a * 2.0 + b` instead of nested `hlo.binary` calls. Python numbers become
constants of the other operand's dtype, broadcast to its shape. Rewrites build inside an ir.InsertionPoint
and location, as with the hlo builders."""
from __future__ import annotations

import numpy as np
from iree.compiler import ir

from ..dialects import stablehlo as hlo
from ..dialects.types import dtype_of, shape_of

_UNSIGNED = {"float16": np.uint16, "bfloat16": np.uint16, "float32": np.uint32, "float64": np.uint64}


class V:
    __slots__ = ("value", "dtype", "shape")
    __hash__ = None   # == builds a compare

    def __init__(self, value: ir.Value):
        self.value = value
        self.dtype = dtype_of(value.type)
        self.shape = list(shape_of(value.type))

    def splat(self, value, dtype=None) -> "V":
        """`value` as a tensor of this one's shape (and dtype, unless given)."""
        dtype = self.dtype if dtype is None else np.dtype(dtype)
        return V(hlo.broadcast_in_dim(hlo.constant(np.array(value, dtype)), self.shape, []))

    def _other(self, other) -> ir.Value:
        return other.value if isinstance(other, V) else self.splat(other).value

    def _binary(self, op, other, swapped=False) -> "V":
        a, b = self.value, self._other(other)
        return V(hlo.binary(op, b, a) if swapped else hlo.binary(op, a, b))

    def __add__(self, other): return self._binary("add", other)
    def __radd__(self, other): return self._binary("add", other, True)
    def __sub__(self, other): return self._binary("subtract", other)
    def __rsub__(self, other): return self._binary("subtract", other, True)
    def __mul__(self, other): return self._binary("multiply", other)
    def __rmul__(self, other): return self._binary("multiply", other, True)
    def __truediv__(self, other): return self._binary("divide", other)
    def __rtruediv__(self, other): return self._binary("divide", other, True)
    def __and__(self, other): return self._binary("and", other)
    def __or__(self, other): return self._binary("or", other)
    def __xor__(self, other): return self._binary("xor", other)
    def __lshift__(self, other): return self._binary("shift_left", other)

    def __rshift__(self, other):
        return self._binary("shift_right_logical" if self.dtype.kind == "u" else "shift_right_arithmetic", other)

    def __neg__(self): return V(hlo.unary("negate", self.value))
    def __invert__(self): return V(hlo.unary("not", self.value))

    def _compare(self, other, direction) -> "V":
        return V(hlo.compare(self.value, self._other(other), direction))

    def __lt__(self, other): return self._compare(other, "LT")
    def __le__(self, other): return self._compare(other, "LE")
    def __gt__(self, other): return self._compare(other, "GT")
    def __ge__(self, other): return self._compare(other, "GE")
    def __eq__(self, other): return self._compare(other, "EQ")
    def __ne__(self, other): return self._compare(other, "NE")

    def unary(self, op: str) -> "V":
        return V(hlo.unary(op, self.value))

    def abs(self) -> "V":
        return self.unary("abs")

    def minimum(self, other) -> "V":
        return self._binary("minimum", other)

    def maximum(self, other) -> "V":
        return self._binary("maximum", other)

    def to(self, dtype) -> "V":
        """Converted to dtype (a no-op for the same dtype)."""
        return self if np.dtype(dtype) == self.dtype else V(hlo.convert(self.value, np.dtype(dtype)))

    def bits(self) -> "V":
        """A float's bits as the unsigned int of its width."""
        return V(hlo.bitcast_convert(self.value, np.dtype(_UNSIGNED[self.dtype.name])))

    def signbit(self) -> "V":
        """True for negative floats, -0.0 and NaNs with the sign bit set."""
        return (self.bits() >> (8 * self.dtype.itemsize - 1)) != 0

    def is_finite(self) -> "V":
        return V(hlo.is_finite(self.value))


def where(condition: V, on_true, on_false) -> V:
    """select; a Python number takes the other branch's dtype."""
    like = on_true if isinstance(on_true, V) else on_false
    a = on_true if isinstance(on_true, V) else like.splat(on_true)
    b = on_false if isinstance(on_false, V) else like.splat(on_false)
    return V(hlo.select(condition.value, a.value, b.value))

