"""`Tensor`: a traced value. It holds an `ir.Value` plus the shape, dtype and weak-typedness the op rules
need, so every check runs in Python before MLIR sees anything. Operators forward to `hlojit.ops`.
"""
from __future__ import annotations

from ..errors import TracingError
from . import trace as _trace


class Tensor:
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

    @property
    def T(self) -> "Tensor":
        return _ops.transpose(self)

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

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        """numpy ufuncs on Tensors (np.exp(t), np.abs(t), np.maximum(t, 0)) trace the op of the same name."""
        op = getattr(_ops, ufunc.__name__, None) if method == "__call__" and not kwargs else None
        if op is None:
            raise TracingError(f"numpy's {ufunc.__name__}{'.' + method if method != '__call__' else ''} cannot "
                               f"run on a traced Tensor at {_trace.user_site()}; use hlojit.ops")
        return op(*inputs)

    def __iter__(self):
        """The slices along the leading axis (its size is static): `key, sub = hj.random.split(key)`."""
        if not self.shape:
            raise TypeError(f"iteration over a 0-d tensor at {_trace.user_site()}")
        return (self[i] for i in range(self.shape[0]))

    # --- indexing (ops/indexing.py) ---
    def __getitem__(self, index):
        return _ops.getitem(self, index)

    def __setitem__(self, index, value):
        raise TracingError(f"a traced Tensor cannot be assigned to in place at {_trace.user_site()}: "
                           "write x = x.at[index].set(value) (also .add, .multiply, .min, .max)")

    @property
    def at(self):
        """`x.at[index].set(v)` (or .add/.multiply/.min/.max/.get): x with x[index] updated, as a new value."""
        return _ops.updates.IndexUpdates(self)

    # --- methods ---
    def reshape(self, *shape):
        return _ops.reshape(self, shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape)

    def astype(self, dtype):
        return _ops.astype(self, dtype)

    def transpose(self, *axes):
        return _ops.transpose(self, axes[0] if len(axes) == 1 and isinstance(axes[0], (tuple, list))
                              else (axes or None))

    def sum(self, axis=None, keepdims=False):
        return _ops.sum(self, axis=axis, keepdims=keepdims)

    def mean(self, axis=None, keepdims=False):
        return _ops.mean(self, axis=axis, keepdims=keepdims)

    def max(self, axis=None, keepdims=False):
        return _ops.max(self, axis=axis, keepdims=keepdims)

    def min(self, axis=None, keepdims=False):
        return _ops.min(self, axis=axis, keepdims=keepdims)

    def prod(self, axis=None, keepdims=False):
        return _ops.prod(self, axis=axis, keepdims=keepdims)

    # --- statistics and math (ops/statistics.py, ops/math.py) ---
    def var(self, axis=None, ddof=0, keepdims=False):
        return _ops.var(self, axis=axis, ddof=ddof, keepdims=keepdims)

    def std(self, axis=None, ddof=0, keepdims=False):
        return _ops.std(self, axis=axis, ddof=ddof, keepdims=keepdims)

    def argmax(self, axis=None, keepdims=False):
        return _ops.argmax(self, axis=axis, keepdims=keepdims)

    def argmin(self, axis=None, keepdims=False):
        return _ops.argmin(self, axis=axis, keepdims=keepdims)

    def cumsum(self, axis=None, dtype=None):
        return _ops.cumsum(self, axis=axis, dtype=dtype)

    def cumprod(self, axis=None, dtype=None):
        return _ops.cumprod(self, axis=axis, dtype=dtype)

    def clip(self, min=None, max=None):  # noqa: A002  (numpy's names)
        return _ops.clip(self, min, max)

    def flatten(self):
        return _ops.ravel(self)

    def ravel(self):
        return _ops.ravel(self)

    def squeeze(self, axis=None):
        return _ops.squeeze(self, axis)

    def swapaxes(self, axis1, axis2):
        return _ops.swapaxes(self, axis1, axis2)

    def repeat(self, repeats, axis=None):
        return _ops.repeat(self, repeats, axis)

    def diagonal(self, offset=0, axis1=0, axis2=1):
        return _ops.diagonal(self, offset, axis1, axis2)

    # --- complex parts (ops/complex_math.py) ---
    @property
    def real(self) -> "Tensor":
        return _ops.real(self)

    @property
    def imag(self) -> "Tensor":
        return _ops.imag(self)

    def conj(self) -> "Tensor":
        return _ops.conj(self)

    conjugate = conj

    # --- operators ---
    __hash__ = None  # == builds a comparison, so tensors cannot be dict keys

    def __add__(self, other): return _ops.add(self, other)
    def __radd__(self, other): return _ops.add(other, self)
    def __sub__(self, other): return _ops.subtract(self, other)
    def __rsub__(self, other): return _ops.subtract(other, self)
    def __mul__(self, other): return _ops.multiply(self, other)
    def __rmul__(self, other): return _ops.multiply(other, self)
    def __truediv__(self, other): return _ops.divide(self, other)
    def __rtruediv__(self, other): return _ops.divide(other, self)
    def __floordiv__(self, other): return _ops.floor_divide(self, other)
    def __rfloordiv__(self, other): return _ops.floor_divide(other, self)
    def __mod__(self, other): return _ops.remainder(self, other)
    def __rmod__(self, other): return _ops.remainder(other, self)
    def __pow__(self, other): return _ops.power(self, other)
    def __rpow__(self, other): return _ops.power(other, self)
    def __matmul__(self, other): return _ops.matmul(self, other)
    def __rmatmul__(self, other): return _ops.matmul(other, self)
    def __and__(self, other): return _ops.bitwise_and(self, other)
    def __rand__(self, other): return _ops.bitwise_and(other, self)
    def __or__(self, other): return _ops.bitwise_or(self, other)
    def __ror__(self, other): return _ops.bitwise_or(other, self)
    def __xor__(self, other): return _ops.bitwise_xor(self, other)
    def __rxor__(self, other): return _ops.bitwise_xor(other, self)
    def __lshift__(self, other): return _ops.left_shift(self, other)
    def __rshift__(self, other): return _ops.right_shift(self, other)
    def __neg__(self): return _ops.negative(self)
    def __pos__(self): return self
    def __abs__(self): return _ops.abs(self)
    def __invert__(self): return _ops.invert(self)
    def __eq__(self, other): return _ops.equal(self, other)
    def __ne__(self, other): return _ops.not_equal(self, other)
    def __lt__(self, other): return _ops.less(self, other)
    def __le__(self, other): return _ops.less_equal(self, other)
    def __gt__(self, other): return _ops.greater(self, other)
    def __ge__(self, other): return _ops.greater_equal(self, other)


from . import ops as _ops  # noqa: E402  (ops builds Tensors; Tensor methods forward to ops)
