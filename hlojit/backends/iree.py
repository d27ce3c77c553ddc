"""Running vmfbs with the IREE runtime: devices, loaded executables and the call fast path.

Devices live in one process-wide registry (a device dropped before the modules that ran on it
segfaults at exit). On the CPU each executable picks its driver by the work it does: `local-sync` runs
inline (p50 3-4 us per call, steady) and wins for small functions; `local-task` uses every core and is
~2x faster on big kernels but costs ~10-110 us per call on 2 vCPUs (../shared/IREE_NOTES.md).
`hj.jit(f, driver=...)` overrides that choice; local-task's thread count is process-wide (set_cpu_threads).

Calls are synchronous: IREE 3.13 can return early (functions compiled with
`--iree-execution-model=async-external` take wait/signal fences, and `invoke` returns at once on
local-task), but a chain of ten 16M-element kernels ran no faster that way on 2 cores (README, Speed).
"""
from __future__ import annotations

import threading

import numpy as np
import iree.runtime as rt

from ..errors import BackendError
from . import cpu_threads
from ..pipeline import Compiled, Program, Target, compile_cached
from .array import Array

_INSTANCE = None
_DEVICES: dict[str, object] = {}
_HAL_MODULES: dict[str, object] = {}
_LOCAL_TASK_THREADS: list = []   # [the thread count local-task was created with (None: IREE's default)]
_REGISTRY_LOCK = threading.Lock()

_LOCAL_DRIVERS = frozenset({"local-sync", "local-task"})

# Below this many elements touched (summed over all op results) a CPU function runs on local-sync:
# measured crossover for relu(2x+1) on 2 vCPUs is between 256K (sync 56 us, task 72 us) and 1M elements.
SMALL_WORK = 1 << 19

_ELEMENT_TYPES = {
    np.dtype(np.bool_): rt.HalElementType.BOOL_8,
    np.dtype(np.int8): rt.HalElementType.SINT_8, np.dtype(np.int16): rt.HalElementType.SINT_16,
    np.dtype(np.int32): rt.HalElementType.SINT_32, np.dtype(np.int64): rt.HalElementType.SINT_64,
    np.dtype(np.uint8): rt.HalElementType.UINT_8, np.dtype(np.uint16): rt.HalElementType.UINT_16,
    np.dtype(np.uint32): rt.HalElementType.UINT_32, np.dtype(np.uint64): rt.HalElementType.UINT_64,
    np.dtype(np.float16): rt.HalElementType.FLOAT_16, np.dtype(np.float32): rt.HalElementType.FLOAT_32,
    np.dtype(np.float64): rt.HalElementType.FLOAT_64,
    np.dtype(np.complex64): rt.HalElementType.COMPLEX_64, np.dtype(np.complex128): rt.HalElementType.COMPLEX_128,
}
try:
    import ml_dtypes
    _ELEMENT_TYPES[np.dtype(ml_dtypes.bfloat16)] = rt.HalElementType.BFLOAT_16
except ImportError:  # pragma: no cover
    pass
# Uploaded as they are; anything else (Python scalars, hj.Arrays of another device, ndarray subclasses, other
# array types) goes through np.asarray first. One set lookup: cheaper than isinstance on the call path.
_DIRECT_TYPES = frozenset({np.ndarray, *(dtype.type for dtype in _ELEMENT_TYPES)})


def instance():
    global _INSTANCE
    if _INSTANCE is None:
        _INSTANCE = rt.VmInstance()
    return _INSTANCE


def device(driver: str):
    """The process-wide device for a driver (created once, kept until exit)."""
    with _REGISTRY_LOCK:
        if driver not in _DEVICES:
            threads = cpu_threads() if driver == "local-task" else None
            if threads is not None:  # read by IREE when it creates the driver (cached by name: only once)
                rt.flags.parse_flags(f"--task_topology_group_count={threads}")
            try:
                # the caching allocator reuses freed blocks: no page faults or heap calls per result
                dev = rt.get_driver(driver).create_default_device(allocators=["caching"])
            except Exception as e:
                raise BackendError(f"IREE driver {driver!r} has no usable device here: {e}") from None
            _DEVICES[driver] = dev
            if driver == "local-task":
                _LOCAL_TASK_THREADS[:] = [threads]
            _HAL_MODULES[driver] = rt.create_hal_module(instance(), dev)
        return _DEVICES[driver]


def local_task_threads():
    """The worker threads local-task was created with (None: IREE's default), or False if not created yet."""
    return _LOCAL_TASK_THREADS[0] if _LOCAL_TASK_THREADS else False


def available_drivers() -> list[str]:
    return list(rt.query_available_drivers())


def work_estimate(program: Program) -> int:
    """Elements produced by all ops of @main (plus multiply-adds of contractions): picks the driver."""
    total = 0
    for op in program.module.body.operations[0].regions[0].blocks[0].operations:
        for result in op.results:
            t = result.type
            shape = getattr(t.maybe_downcast(), "shape", None) if hasattr(t, "maybe_downcast") else None
            if shape is not None:
                total += int(np.prod(shape, dtype=np.int64))
        if op.operation.name == "stablehlo.dot_general":
            k = np.prod(op.operands[0].type.maybe_downcast().shape, dtype=np.int64)
            total += int(k * np.prod(op.results[0].type.maybe_downcast().shape[-1:] or [1]))
        elif op.operation.name == "stablehlo.convolution":  # each output: a window x input channels of MACs
            kernel = op.operands[1].type.maybe_downcast().shape
            kernel_spec = str(op.attributes["dimension_numbers"]).split("x[", 1)[1].split("]", 1)[0]
            out_features = kernel[[d.strip() for d in kernel_spec.split(",")].index("o")]
            outputs = np.prod(op.results[0].type.maybe_downcast().shape, dtype=np.int64)
            total += int(outputs * (np.prod(kernel, dtype=np.int64) // max(out_features, 1)))
    return total


def choose_driver(target: Target, work: int) -> str:
    """local-sync for small CPU work (steady, inline), the target's driver otherwise."""
    return "local-sync" if target.driver == "local-task" and work < SMALL_WORK else target.driver


class Executable:
    """A loaded vmfb: `executable(leaves) -> [Array]`, leaves matching `inputs` [(shape, dtype)]."""

    def __init__(self, compiled: Compiled, inputs, outputs, driver: str, function: str = "main",
                 donated=(), aliases=None, name: str = "main"):
        self.compiled = compiled
        self.donated, self.aliases, self.name = tuple(donated), dict(aliases or {}), name
        self._inputs = [(tuple(shape), np.dtype(dtype), _ELEMENT_TYPES[np.dtype(dtype)]) for shape, dtype in inputs]
        self._outputs = [(tuple(shape), np.dtype(dtype)) for shape, dtype in outputs]
        self.driver = driver
        self.device = device(driver)
        # CPU drivers share host memory, so their buffers pass between them as they are
        self._shares_memory_with = _LOCAL_DRIVERS if driver in _LOCAL_DRIVERS else frozenset({driver})
        self._module = rt.VmModule.copy_buffer(instance(), self.compiled.vmfb)
        self._context = rt.VmContext(instance(), modules=[_HAL_MODULES[driver], self._module])
        self._function = self._module.lookup_function(function)
        if self._function is None:
            raise BackendError(f"the vmfb has no function {function!r}")
        self._invoke = self._context.invoke
        self._lock = threading.Lock()
        self.call = self._make_call(single=False)
        self.call_single = self._make_call(single=True) if len(self._outputs) == 1 else None

    @property
    def vmfb(self) -> bytes:
        return self.compiled.vmfb

    def __call__(self, leaves) -> list[Array]:
        return self.call(leaves)

    def _make_call(self, single: bool):
        """Generate the per-call path for this signature: unrolled over the arguments, every name a
        local. When the whole call is a few microseconds, each attribute lookup and loop saved counts.
        `single`: return the only result itself rather than a list of one."""
        namespace = {
            "VmVariantList": rt.VmVariantList, "asarray": np.asarray, "ascontiguousarray": np.ascontiguousarray,
            "Array": Array, "shares": self._shares_memory_with,
            "driver": self.driver, "invoke": self._invoke, "function": self._function, "name": self.name,
            "acquire": self._lock.acquire, "release": self._lock.release,
            "alloc": self.device.allocator.allocate_buffer_copy, "device": self.device,
            "LOCAL": rt.MemoryType.DEVICE_LOCAL, "USAGE": rt.BufferUsage.DEFAULT, "direct": _DIRECT_TYPES,
        }
        lines = ["def call(leaves):", f"    args = VmVariantList({len(self._inputs)})", "    push = args.push_ref"]
        if self._inputs:
            lines.append(f"    {''.join(f'a{i}, ' for i in range(len(self._inputs)))}= leaves")
        for i, (_, dtype, element_type) in enumerate(self._inputs):
            namespace[f"dtype{i}"], namespace[f"element_type{i}"] = dtype, element_type
            upload_lines = [
                f"    if type(a{i}) is Array and a{i}.driver in shares:",
                f"        push(a{i}.device_ref)  # device-resident: no copy",
                f"        r{i} = a{i}.device_ref",
                "    else:",
                f"        r{i} = None",
                f"        if type(a{i}) not in direct:",
                f"            a{i} = asarray(a{i}, dtype{i})  # Python scalars, host Arrays, other array types",
                "        try:",
                f"            push(alloc(LOCAL, USAGE, device, a{i}, element_type{i}))  # a copy: the caller may "
                "change its array later",
                "        except ValueError:  # not C-contiguous (a transposed or broadcast view): copy it first",
                f"            push(alloc(LOCAL, USAGE, device, ascontiguousarray(a{i}), element_type{i}))",
            ]
            if i in self.aliases:  # IREE writes a result into this buffer: hand it over only if nothing else sees it
                others = "".join(f" and a{i} is not a{j}" for j in range(len(self._inputs)) if j != i)
                upload_lines = [
                    f"    if type(a{i}) is Array{others} and a{i}.exclusive_ref(shares) is not None:",
                    f"        push(a{i}.device_ref)  # donated: the result lands in this buffer",
                    f"        r{i} = None",
                    "    else:  # IREE writes into whatever comes here: a copy (a view of it may be alive, or it",
                    f"        r{i} = None  # is passed twice, or it is numpy). No reuse, but nothing else changes",
                    *upload_lines[5:]]
            lines += upload_lines
        lines += [f"    if type(a{i}) is Array: a{i}.donate(name)" for i in self.donated]
        lines += [f"    results = VmVariantList({len(self._outputs)})",
                  "    acquire()  # a VM context is not re-entrant across threads (invoke releases the GIL)",
                  "    try:",
                  "        invoke(function, args, results)",
                  "    finally:",
                  "        release()",
                  "    get = results.get_as_ref"]
        for i, (shape, dtype) in enumerate(self._outputs):
            namespace[f"shape{i}"], namespace[f"out_dtype{i}"] = shape, dtype
            lines += [f"    o{i} = get({i})", f"    A{i} = Array(o{i}, shape{i}, out_dtype{i}, driver)"]
        lines += self._sharing_checks()
        outs = [f"A{i}" for i in range(len(self._outputs))]
        lines.append(f"    return {outs[0]}" if single else f"    return [{', '.join(outs)}]")
        namespace.update(same_buffer=_same_buffer, shared=_mark_shared)
        exec(compile("\n".join(lines) + "\n", f"<hlojit call {self.driver}>", "exec"), namespace)
        return namespace["call"]


    def _sharing_checks(self) -> list[str]:
        """IREE returns an input's buffer as an output when the function passes it through (or reshapes it, or
        folds `x * 1` to x), and one buffer for equal outputs. Two Arrays then share memory: donating one
        would let IREE write into the other. Lines that find such pairs (only those of equal byte size can
        be) and mark both as viewed, so a donation copies them. Numpy inputs were copies: nothing to check."""
        def nbytes(shape, dtype):
            return int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        lines = []
        for k, (shape, dtype) in enumerate(self._outputs):
            size = nbytes(shape, dtype)
            lines += [f"    if r{i} is not None and same_buffer(o{k}, r{i}): shared(A{k}, a{i})"
                      for i, (in_shape, in_dtype, _) in enumerate(self._inputs)
                      if i not in self.donated and nbytes(in_shape, in_dtype) == size]
            lines += [f"    if same_buffer(o{k}, o{j}): shared(A{k}, A{j})"
                      for j, (other_shape, other_dtype) in enumerate(self._outputs[:k])
                      if nbytes(other_shape, other_dtype) == size]
        return lines


def _same_buffer(ref, other) -> bool:
    return ref == other or ref.deref(rt.HalBufferView).get_buffer() == other.deref(rt.HalBufferView).get_buffer()


def _mark_shared(*arrays):
    """Arrays that share one buffer: map each to numpy, which makes it non-exclusive (Array.exclusive_ref)."""
    for array in arrays:
        array.numpy()


class IreeBackend:
    def __init__(self, name: str, target: Target):
        self.name = name
        self.target = target

    def load(self, program: Program, driver: str | None = None) -> Executable:
        driver = driver or choose_driver(self.target, work_estimate(program))  # before compiling: that consumes it
        inputs, outputs = program.inputs, program.outputs
        return Executable(compile_cached(program, self.target), inputs, outputs, driver,
                          donated=program.donated, aliases=program.aliases, name=program.name)

    def put(self, array: np.ndarray) -> Array:
        """One copy of `array` in a buffer of this backend's device: calls take it as it is, with no upload.
        CPU drivers share host memory, so the Array serves local-sync and local-task calls alike."""
        driver = self.target.driver
        dev = device(driver)
        view = dev.allocator.allocate_buffer_copy(memory_type=rt.MemoryType.DEVICE_LOCAL,
                                                  allowed_usage=rt.BufferUsage.DEFAULT, device=dev,
                                                  buffer=np.array(array, order="C"),  # keeps 0-d 0-d
                                                  element_type=_ELEMENT_TYPES[array.dtype])
        return Array(view.ref, array.shape, array.dtype, driver)

    def __repr__(self):
        return f"<backend {self.name}>"
