"""`Tensor`: a traced value. It holds an `ir.Value` plus the shape, dtype and weak-typedness the op rules
need, so every check runs in Python before MLIR sees anything. Operators forward to `hlojit.ops`
(backends/operators.py, shared with hj.Array).
"""
from __future__ import annotations

from ..backends.operators import ArrayOperators
from ..errors import TracingError
from . import trace as _trace


class Tensor(ArrayOperators):
    """A traced value; its operators, methods and numpy protocols (`t + 1`, `t.sum(axis=0)`, `np.exp(t)`) are
    hj.Array's (backends/operators.py), which here trace the ops."""
    __slots__ = ("value", "shape", "dtype", "weak", "trace")
    __array_priority__ = 1000  # numpy defers to our reflected operators: np_array + tensor -> Tensor

    def __init__(self, value, shape: tuple, dtype, weak: bool = False, trace=None):
        self.value = value
        self.shape = tuple(shape)
        self.dtype = dtype
        self.weak = weak
        self.trace = trace if trace is not None else _trace.current()

    # --- properties ---
    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n

    def __repr__(self):
        weak = ", weak" if self.weak else ""
        return f"Tensor(shape={self.shape}, dtype={self.dtype}{weak})"

    def __len__(self):
        if not self.shape:
            raise TypeError(f"len() of a 0-d tensor at {_trace.user_site()}")
        return self.shape[0]

    # --- things a graph cannot do ---
    def __bool__(self):
        raise TracingError(
            f"bool() of a traced Tensor{list(self.shape)} at {_trace.user_site()}: its value is not known while "
            "tracing, so Python `if`/`while`/`and`/`or` cannot branch on it. Use ops.where(cond, a, b) to "
            "select values, or mark the argument static with hj.jit(..., static_argnums=...)")

    def __index__(self):
        raise TracingError(f"a traced Tensor cannot be used as a Python int at {_trace.user_site()}; "
                           "mark the argument static with hj.jit(..., static_argnums=...)")

    __int__ = __float__ = __complex__ = __index__

    def __array__(self, *args, **kwargs):
        raise TracingError(f"np.asarray() of a traced Tensor at {_trace.user_site()}: its value exists only "
                           "when the compiled function runs; use hlojit.ops instead of numpy inside hj.jit")

    def __iter__(self):
        """The slices along the leading axis (its size is static): `key, sub = hj.random.split(key)`."""
        if not self.shape:
            raise TypeError(f"iteration over a 0-d tensor at {_trace.user_site()}")
        return (self[i] for i in range(self.shape[0]))

    def __setitem__(self, index, value):
        raise TracingError(f"a traced Tensor cannot be assigned to in place at {_trace.user_site()}: "
                           "write x = x.at[index].set(value) (also .add, .multiply, .min, .max)")

