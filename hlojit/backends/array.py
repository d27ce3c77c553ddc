"""`hj.Array`: a result of a compiled function.

It holds either a reference to an IREE buffer view (device-resident; on the CPU `np.asarray` maps it
without a copy) or, for the reference backend, a numpy array. Passed back into a compiled function on
the same kind of device, the buffer is used as it is, not copied.

It behaves like a numpy/JAX array: operators, `.sum() .reshape() .T ...`, indexing, `.at[]` and numpy's
protocols come from `ArrayOperators` (backends/operators.py), shared with the traced Tensor; outside a
trace they run hlojit's ops eagerly (frontend/eager.py), on this array's backend, and give hj.Arrays.

Donated to a function (`hj.jit(f, donate_argnums=...)`), an Array gives up its buffer: IREE may have written
a result into it, so every later use raises a `BackendError` that names the function it went to.
"""
from __future__ import annotations

import numpy as np

from ..errors import BackendError
from .operators import ArrayOperators


class _Owner:
    """The base of a numpy view of device memory: it holds the IREE buffer (and its mapping) for as long as
    any numpy array looks at that memory. The array IREE's `asarray` gives does not: once the hj.Array
    was gone, views of it (`a, b = hj_array`) read memory the caching allocator had given to later results."""
    __slots__ = ("__array_interface__", "_keep")

    def __init__(self, array: np.ndarray, keep: tuple):
        self.__array_interface__ = array.__array_interface__
        self._keep = (array, *keep)


class Array(ArrayOperators):
    __slots__ = ("device_ref", "shape", "dtype", "driver", "_host", "_donated_to", "__weakref__")
    __array_priority__ = 100

    def __init__(self, device_ref, shape: tuple, dtype: np.dtype, driver: str | None = None,
                 host: np.ndarray | None = None):
        self.device_ref = device_ref     # iree.runtime.VmRef to a HalBufferView, or None for host arrays
        self.shape = shape
        self.dtype = dtype
        self.driver = driver             # the IREE driver whose device holds buffer_view
        self._host = host
        self._donated_to = None          # the name of the function this Array was donated to

    @classmethod
    def from_numpy(cls, array: np.ndarray, driver: str | None = None) -> "Array":
        """A host Array; `driver="reference"` marks the reference backend's (eager ops on it run there)."""
        return cls(None, array.shape, array.dtype, driver, array)

    @property
    def buffer_view(self):
        """The IREE HalBufferView (None for host arrays); dereferenced on demand, saving it per call."""
        if self.device_ref is None:
            return None
        import iree.runtime as rt
        return self.device_ref.deref(rt.HalBufferView)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    @property
    def is_donated(self) -> bool:
        return self._donated_to is not None

    def donate(self, to: str):
        """Give up the buffer (a call donated it). A donated Array has no driver, so the call path's
        `asarray(a)` reaches `numpy()` and its error: no check on the fast path of a normal call."""
        if self._donated_to is not None:
            raise self._donated_error()
        self._donated_to = to
        self.device_ref = self.driver = self._host = None

    def exclusive_ref(self, shares):
        """The device buffer, if it may be handed to IREE to write a result into: on a device of `shares` and
        never viewed from numpy (a numpy view the caller may still hold would see the result appear)."""
        return self.device_ref if self._host is None and self.driver in shares else None

    def _donated_error(self) -> BackendError:
        return BackendError(f"this hj.Array ({self.dtype}{list(self.shape)}) was donated to {self._donated_to}() "
                            "(donate_argnums/donate_argnames): its buffer may hold that call's result now; use "
                            "the result instead, or do not donate an array you use again")

    def numpy(self) -> np.ndarray:
        """The values as a read-only numpy array; on the CPU a view of the device buffer (no copy)."""
        if self._host is None:
            if self.device_ref is None:
                raise self._donated_error()
            view = self.buffer_view
            mapping = view.map()
            owner = _Owner(mapping.asarray(self.shape, self.dtype), (mapping, view, self.device_ref))
            mapped = np.asarray(owner).view(self.dtype)  # (bfloat16's array interface says only 'V2')
            mapped.flags.writeable = False
            self._host = mapped
        return self._host

    def __array__(self, dtype=None, copy=None):
        array = self.numpy()
        if dtype is not None and np.dtype(dtype) != array.dtype:
            return array.astype(dtype)
        return array.copy() if copy else array

    def block_until_ready(self) -> "Array":
        """Waits until the values are computed; returns self (JAX's name). hlojit's calls are synchronous
        (docs/speed_history.md: an asynchronous IREE call measured no faster here), so they are ready already."""
        if self._donated_to is not None:
            raise self._donated_error()
        return self

    def tolist(self):
        return self.numpy().tolist()

    def item(self):
        return self.numpy().item()

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of a 0-d array")
        return self.shape[0]

    # --- numpy-like behaviour beyond ArrayOperators' (values read from the buffer) ---
    def copy(self) -> "Array":
        """A new Array of the same values, in host memory (calls upload it; eager ops run it on the default
        backend, or on the reference backend for one of its Arrays)."""
        return Array.from_numpy(np.array(self.numpy()), "reference" if self.driver == "reference" else None)

    def __iter__(self):
        """The rows, as hj.Arrays: `a[i]` for each i (one eager program for every row)."""
        if not self.shape:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.shape[0]))

    def __float__(self):
        return float(self.numpy())

    def __int__(self):
        return int(self.numpy())

    def __bool__(self):
        return bool(self.numpy())

    def __index__(self):
        return self.numpy().__index__()

    def __reduce__(self):
        """pickle and copy.deepcopy (of a parameter tree, say) take the values: a host Array comes back, as from
        `copy()` (a device buffer cannot be pickled: "cannot pickle 'VmRef' object")."""
        return Array.from_numpy, (np.array(self.numpy()), "reference" if self.driver == "reference" else None)

    def __format__(self, spec: str) -> str:
        """f"{loss:.4f}" of a 0-d Array, as numpy's and JAX's; an empty spec formats any Array as str()."""
        return format(self.numpy(), spec)

    def __repr__(self):
        body = np.array2string(self.numpy(), separator=", ", prefix="Array(")
        return f"Array({body}, dtype={self.dtype})"
