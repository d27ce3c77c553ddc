"""`hj.Array`: a result of a compiled function.

It holds either a reference to an IREE buffer view (device-resident; on the CPU `np.asarray` maps it
without a copy) or, for the reference backend, a numpy array. Passed back into a compiled function on
the same kind of device, the buffer is used as it is, not copied.
"""
from __future__ import annotations

import numpy as np


class _Owner:
    """The base of a numpy view of device memory: it holds the IREE buffer (and its mapping) for as long as
    any numpy array looks at that memory. The array IREE's `asarray` gives does not: once the hj.Array
    was gone, views of it (`a, b = hj_array`) read memory the caching allocator had given to later results."""
    __slots__ = ("__array_interface__", "_keep")

    def __init__(self, array: np.ndarray, keep: tuple):
        self.__array_interface__ = array.__array_interface__
        self._keep = (array, *keep)


class Array:
    __slots__ = ("device_ref", "shape", "dtype", "driver", "_host", "__weakref__")
    __array_priority__ = 100

    def __init__(self, device_ref, shape: tuple, dtype: np.dtype, driver: str | None = None,
                 host: np.ndarray | None = None):
        self.device_ref = device_ref     # iree.runtime.VmRef to a HalBufferView, or None for host arrays
        self.shape = shape
        self.dtype = dtype
        self.driver = driver             # the IREE driver whose device holds buffer_view
        self._host = host

    @classmethod
    def from_numpy(cls, array: np.ndarray) -> "Array":
        return cls(None, array.shape, array.dtype, None, array)

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

    def numpy(self) -> np.ndarray:
        """The values as a read-only numpy array; on the CPU a view of the device buffer (no copy)."""
        if self._host is None:
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
        """Calls are synchronous today, so the values are ready; kept for JAX-style code."""
        return self

    def tolist(self):
        return self.numpy().tolist()

    def item(self):
        return self.numpy().item()

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of a 0-d array")
        return self.shape[0]

    def __getitem__(self, index):
        return self.numpy()[index]

    def __iter__(self):
        return iter(self.numpy())

    def __float__(self):
        return float(self.numpy())

    def __int__(self):
        return int(self.numpy())

    def __bool__(self):
        return bool(self.numpy())

    def __index__(self):
        return self.numpy().__index__()

    def __repr__(self):
        body = np.array2string(self.numpy(), separator=", ", prefix="Array(")
        return f"Array({body}, dtype={self.dtype})"
