"""The numpy-style face that `hj.Array` and the frontend's traced `Tensor` share: operators (with reflected
forms), `.T .reshape .sum ...`, indexing, `.at[]` and numpy's protocols, each a one-line call of the
`hlojit.ops` function of numpy's name.

Why a mixin here, with its ops registered: hj.Array lives in backends/, which never imports frontend/ (a
lower stage knows nothing of tracing), yet `a + 1` must run `ops.add`. So the methods are written once, on
`ArrayOperators`, which both classes inherit, and they call through one hook: `register(...)`, which
`hlojit.frontend` calls once when it is imported, hands over the ops namespace and the numpy-protocol
handlers. On a Tensor the ops trace; on an hj.Array outside a trace they run eagerly (frontend/eager.py).
One table of methods serves both, so a Tensor and an Array never disagree on what `x.std(axis=0)` means.
"""
from __future__ import annotations

from ..errors import BackendError


class _Unregistered:
    def __getattr__(self, name):
        raise BackendError("hj.Array's operators run hlojit.ops, which hlojit.frontend registers when it is "
                           "imported (import hlojit)")


_ops = _Unregistered()     # hlojit.ops
_hooks = _Unregistered()   # .array_ufunc(ufunc, method, inputs, kwargs), .array_function(func, args, kwargs),
#                            .at(x): the frontend's numpy protocols and `x.at`


def register(ops, hooks):
    """The frontend's ops namespace and protocol handlers (called once, by hlojit.frontend)."""
    global _ops, _hooks
    _ops, _hooks = ops, hooks


def _shape_arg(shape):
    return shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape


class ArrayOperators:
    """Operators and array methods as numpy spells them, forwarded to hlojit.ops (see the module's doc)."""
    __slots__ = ()
    __hash__ = None  # == gives an array of bools, so arrays cannot be dict keys (numpy's and JAX's rule)

    # --- numpy's protocols: np.sin(x), np.concatenate([x, y]), np.sum(x, axis=0) run hlojit's op ---
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        return _hooks.array_ufunc(ufunc, method, inputs, kwargs)

    def __array_function__(self, func, types, args, kwargs):
        return _hooks.array_function(func, args, kwargs)

    # --- indexing ---
    def __getitem__(self, index):
        return _ops.getitem(self, index)

    @property
    def at(self):
        """`x.at[index].set(v)` (or .add/.multiply/.min/.max/.get): x with x[index] updated, as a new value."""
        return _hooks.at(self)

    # --- methods ---
    @property
    def T(self):
        return _ops.transpose(self)

    def reshape(self, *shape):
        return _ops.reshape(self, _shape_arg(shape))

    def astype(self, dtype):
        return _ops.astype(self, dtype)

    def transpose(self, *axes):
        return _ops.transpose(self, _shape_arg(axes) if axes else None)

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

    def all(self, axis=None, keepdims=False):
        return _ops.all(self, axis=axis, keepdims=keepdims)

    def any(self, axis=None, keepdims=False):
        return _ops.any(self, axis=axis, keepdims=keepdims)

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
    def real(self):
        return _ops.real(self)

    @property
    def imag(self):
        return _ops.imag(self)

    def conj(self):
        return _ops.conj(self)

    conjugate = conj

    # --- operators ---
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
    def __divmod__(self, other): return _ops.divmod(self, other)
    def __rdivmod__(self, other): return _ops.divmod(other, self)
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
    def __rlshift__(self, other): return _ops.left_shift(other, self)
    def __rshift__(self, other): return _ops.right_shift(self, other)
    def __rrshift__(self, other): return _ops.right_shift(other, self)
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
