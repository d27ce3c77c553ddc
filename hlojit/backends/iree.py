"""Running vmfbs with the IREE runtime: devices, loaded executables and the call fast path.

Devices live in one process-wide registry and, with the VM instance and their HAL modules, are never freed: a buffer
freed after its device segfaults, and Python's exit frees globals in no promised order (teardown.py, which also stops
daemon threads' calls at exit). On the CPU each executable picks its driver by the work it does: `local-sync` runs
inline (p50 3-4 us per call, steady) and wins for small functions; `local-task` uses every core and is ~2x faster on
big kernels but costs ~10-110 us per call on 2 vCPUs, and loses to local-sync on a loaded machine, so big functions
race the two per call (iree_drivers.py). `hj.jit(f, driver=...)` pins a driver; local-task's thread count is
process-wide (set_cpu_threads).

Calls are synchronous. What runs on local-task is compiled with `--iree-execution-model=async-external`
(FENCED_FLAGS): its functions take wait/signal fences, `invoke` returns once the work is queued, and the call sleeps
through most of the wait its recent calls had (PACE), then polls the signal fence (POLL_SECONDS between looks) before
it returns. Why: IREE 3.13's own wait keeps the calling thread busy, 2.0-2.8 ms of CPU per MLP 784-512-512-10 forward
(b256) beside the workers' ~4, which on a shared VM takes a core's share from the workers; polled, that forward ran
4.26 ms a call against 6.72 at load ~12 (0.68x -> 1.07x JAX), its fastest calls unchanged (docs/speed_history.md).
Executables tell the ABI from the function's reflection (`iree.abi.model`), so sync-model vmfbs (local-sync's,
tuning's) run as before.
"""
from __future__ import annotations

import contextlib
import functools
import math
import os
import threading
import time

import numpy as np
import iree.runtime as rt

from ..dialects import registry
from ..dialects.types import conv_labels
from ..errors import BackendError, CompileError
from . import check_donations, cpu_threads, iree_drivers
from .teardown import COMPILING, Gate, keep_until_process_end
from ..pipeline import Compiled, Program, Target, compile_cached, compile_worker, halves, targets, tiered, tuning
from ..pipeline.legalize import walk
from .array import Array

_INSTANCE = None
_DEVICES: dict[str, object] = {}
_HAL_MODULES: dict[str, object] = {}
_LOCAL_TASK_THREADS: list = []   # [the thread count local-task was created with (None: IREE's default)]
_REGISTRY_LOCK = threading.Lock()
_PUT_GATE = Gate()  # around device_put's copies

_LOCAL_DRIVERS = frozenset({"local-sync", "local-task"})

# Below this many elements touched (summed over all op results) a CPU function runs on local-sync:
# measured crossover for relu(2x+1) on 2 vCPUs is between 256K (sync 56 us, task 72 us) and 1M elements.
SMALL_WORK = 1 << 19

# local-task's functions take fences (module doc); a call polls its signal fence this often. 100 us measured best
# on the MLP forward at load ~12 (4.26 ms a call; every 20 us: 4.89, the wake-ups cost more than they save)
FENCED_FLAGS = ("--iree-execution-model=async-external",)
POLL_SECONDS = 1e-4
# ... after first sleeping PACE of the wait its recent calls had (Executable._run_lines; growing by PACE_GROWTH a
# call at most): a transformer block's forward (~9 ms on local-task) polled every 100 us from its start woke its
# thread ~70 times a call, each waking taking a core from a worker: 10.2-10.5 ms a call and 19 ms of CPU, against
# 9.0-9.2 ms and 17 with IREE's own wait (idle 2-vCPU Xeon, 2026-12-06)
PACE = 0.8
PACE_GROWTH = 1.1

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
        rt._binding.disable_leak_checker()  # nanobind would list the objects kept alive as leaks at exit
        _INSTANCE = keep_until_process_end(rt.VmInstance())
    return _INSTANCE


def device(driver: str):
    """The process-wide device for a driver (created once, never freed: teardown.py)."""
    with _REGISTRY_LOCK:
        if driver not in _DEVICES:
            threads = cpu_threads() if driver == "local-task" else None
            if threads is not None:  # read by IREE when it creates the driver (cached by name: only once)
                rt.flags.parse_flags(f"--task_topology_group_count={threads}")
            try:
                # the caching allocator reuses freed blocks: no page faults or heap calls per result
                with _mpi_environment_hidden():
                    dev = rt.get_driver(driver).create_default_device(allocators=["caching"])
            except Exception as e:
                raise BackendError(f"IREE driver {driver!r} has no usable device here: {e}") from None
            _DEVICES[driver] = keep_until_process_end(dev)
            if driver == "local-task":
                _LOCAL_TASK_THREADS[:] = [threads]
            _HAL_MODULES[driver] = keep_until_process_end(rt.create_hal_module(instance(), dev))
        return _DEVICES[driver]


# IREE 3.13 gives a device an MPI channel provider (for IREE's own collective ops) when it sees one of these,
# which dlopens libmpi and calls MPI_Init and, later, MPI_Finalize itself: under mpiexec that fails ("MPI runtime
# library not available") or fights mpi4py over MPI's one initialisation. hlojit's programs hold no collective
# ops (hj.distributed runs them on mpi4py between calls), so devices are created without the provider.
_IREE_MPI_VARIABLES = ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "MPIEXEC_HOSTNAME")


@contextlib.contextmanager
def _mpi_environment_hidden():
    saved = {name: os.environ.pop(name) for name in _IREE_MPI_VARIABLES if name in os.environ}
    try:
        yield
    finally:
        os.environ.update(saved)


def local_task_threads():
    """The worker threads local-task was created with (None: IREE's default), or False if not created yet."""
    return _LOCAL_TASK_THREADS[0] if _LOCAL_TASK_THREADS else False


def available_drivers() -> list[str]:
    return list(rt.query_available_drivers())


# IREE 3.13 may compute these in their operand's buffer, and does so in an argument's buffer too, donated or
# not (iree-org/iree#16168, #24665): `jit(lambda x: x.at[1].set(9.0))(a)` changed the Array a
_IN_PLACE_OPS = registry.op_set({"stablehlo.sort", "stablehlo.scatter", "stablehlo.dynamic_update_slice"},
                                "IREE's in-place ops")


def writes_arguments(program: Program) -> bool:
    """Whether IREE may write into @main's argument buffers: then device-resident Arrays are copied per call."""
    return any(op.name in _IN_PLACE_OPS for op in walk(program.module.operation))


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
            out_features = kernel[conv_labels(str(op.attributes["dimension_numbers"]))[1].index("o")]
            outputs = np.prod(op.results[0].type.maybe_downcast().shape, dtype=np.int64)
            total += int(outputs * (np.prod(kernel, dtype=np.int64) // max(out_features, 1)))
    return total


def choose_driver(target: Target, work: int) -> str:
    """local-sync for small CPU work (steady, inline), the target's driver otherwise (which `load` races against
    local-sync per call on the CPU: iree_drivers.py)."""
    return "local-sync" if target.driver == "local-task" and work < SMALL_WORK else target.driver


class Executable:
    """A loaded vmfb: `executable(leaves) -> [Array]`, leaves matching `inputs` [(shape, dtype)] (native byte
    order: IREE would take a big-endian array's bytes as they are)."""

    def __init__(self, compiled: Compiled, inputs, outputs, driver: str, function: str = "main",
                 donated=(), aliases=None, name: str = "main", copies_arrays: bool = False, race: bool = False):
        """`race`: `driver` is local-task and each call may run on local-sync instead, whichever the recent calls
        ran faster on (iree_drivers.py)."""
        self.compiled = compiled
        self.pending = None   # a quick build's tiered.Background, compiling the optimised build that replaces it
        self.copies_arrays = copies_arrays   # IREE may write into the arguments: Arrays go in as copies
        self.donated, self.aliases, self.name = tuple(donated), dict(aliases or {}), name
        self._inputs = [(tuple(shape), np.dtype(dtype), _ELEMENT_TYPES[np.dtype(dtype)]) for shape, dtype in inputs]
        self._outputs = [(tuple(shape), np.dtype(dtype)) for shape, dtype in outputs]
        self._driver = driver
        drivers = (driver, "local-sync") if race and driver == "local-task" else (driver,)
        # CPU drivers share host memory, so their buffers pass between them as they are
        self._shares_memory_with = _LOCAL_DRIVERS if driver in _LOCAL_DRIVERS else frozenset({driver})
        self._module = rt.VmModule.copy_buffer(instance(), self.compiled.vmfb)
        self._function = self._module.lookup_function(function)
        if self._function is None:
            raise BackendError(f"the vmfb has no function {function!r}")
        self._fenced = self._function.reflection.get("iree.abi.model") == "coarse-fences"   # FENCED_FLAGS'
        self._gate = Gate()  # one call at a time: a VM context is not re-entrant across threads
        calls = {d: self._make_call(d, single=False) for d in drivers}
        singles = {d: self._make_call(d, single=True) for d in drivers} if len(self._outputs) == 1 else None
        self.race = iree_drivers.DriverRace(drivers) if len(drivers) > 1 else None
        if self.race is None:
            self.call, self.call_single = calls[driver], singles[driver] if singles else None
        else:
            self.call = iree_drivers.raced(self.race, calls)
            self.call_single = iree_drivers.raced(self.race, singles) if singles else None

    @property
    def driver(self) -> str:
        """The driver calls run on (a raced executable: the one its recent calls ran fastest on, now)."""
        return self.race.chosen if self.race is not None else self._driver

    @property
    def fenced(self) -> bool:
        """Whether the vmfb's function takes fences (FENCED_FLAGS) and calls poll their signal fence."""
        return self._fenced

    @property
    def vmfb(self) -> bytes:
        return self.compiled.vmfb

    @property
    def tier(self) -> str:
        """"quick" for tiered compilation's first build, else "optimised"."""
        return "quick" if self.compiled.target.flag_set == targets.QUICK else "optimised"

    def __call__(self, leaves) -> list[Array]:
        return self.call(leaves)

    def _make_call(self, driver: str, single: bool):
        """Generate the per-call path for this signature: unrolled over the arguments, every name a
        local. When the whole call is a few microseconds, each attribute lookup and loop saved counts.
        `single`: return the only result itself rather than a list of one. The whole call holds the gate:
        uploads and `invoke` both release the GIL (teardown.py). Each driver has its own VM context."""
        dev = device(driver)
        context = rt.VmContext(instance(), modules=[_HAL_MODULES[driver], self._module])
        namespace = {
            "VmVariantList": rt.VmVariantList, "asarray": np.asarray,
            "Array": Array, "shares": self._shares_memory_with,
            "driver": driver, "invoke": context.invoke, "function": self._function, "name": self.name,
            "alloc": dev.allocator.allocate_buffer_copy, "device": dev,
            "LOCAL": rt.MemoryType.DEVICE_LOCAL, "USAGE": rt.BufferUsage.DEFAULT, "direct": _DIRECT_TYPES,
            "check_donations": check_donations, "donated": self.donated,
            "buffer_of": _buffer_of, "shared": _mark_shared,
            "no_wait": rt.HalFence(1).ref, "fence_at": rt.HalFence.create_at, "sleep": time.sleep,
            "clock": time.perf_counter, "PACE": PACE, "GROWTH": PACE_GROWTH,
            "pace": [0.0, False],   # [seconds slept before polling, whether a (first) call has waited already]
            "poll_seconds": POLL_SECONDS, "timeline": [dev.create_semaphore(0), 0] if self._fenced else None,
            "renew": _renew_timeline,
        }
        self._gate.bind(namespace)
        body = [f"args = VmVariantList({len(self._inputs)})", "push = args.push_ref"]
        for i, (_, dtype, element_type) in enumerate(self._inputs):
            namespace[f"dtype{i}"], namespace[f"element_type{i}"] = dtype, element_type
            body += self._upload_lines(i)
        body += [f"results = VmVariantList({len(self._outputs)})"] + self._fence_lines()
        run = self._run_lines()
        if self.aliases:  # IREE stopped mid-run: a buffer handed over for a result may be half written now
            body += ["try:", *[f"    {line}" for line in run],
                     "except BaseException:",
                     *[f"    if type(a{i}) is Array: a{i}.donate(name)" for i in self.aliases],
                     "    raise"]
        else:
            body += run
        # consumed only once the call ran: a call that fails before consumes nothing
        body += [f"if type(leaves[{i}]) is Array: leaves[{i}].donate(name)" for i in self.donated]
        body.append("get = results.get_as_ref")
        for i, (shape, dtype) in enumerate(self._outputs):
            namespace[f"shape{i}"], namespace[f"out_dtype{i}"] = shape, dtype
            body += [f"o{i} = get({i})", f"A{i} = Array(o{i}, shape{i}, out_dtype{i}, driver)"]
        body += self._sharing_checks()
        outs = [f"A{i}" for i in range(len(self._outputs))]
        body.append(f"return {outs[0]}" if single else f"return [{', '.join(outs)}]")
        lines = ["def call(leaves):"]
        if self._inputs:
            lines.append(f"    {''.join(f'a{i}, ' for i in range(len(self._inputs)))}= leaves")
        lines += self._donation_check()
        lines += ["    acquire()", "    try:", *[f"        {line}" for line in body],
                  "    finally:", "        release()"]
        exec(compile("\n".join(lines) + "\n", f"<hlojit call {driver}>", "exec"), namespace)
        return namespace["call"]

    def _fence_lines(self) -> list[str]:
        """A fenced function's last two arguments: nothing to wait for, and its timeline's next value to signal
        (`timeline` is [semaphore, last value])."""
        if not self._fenced:
            return []
        return ["timeline[1] += 1", "signal = fence_at(timeline[0], timeline[1])", "push(no_wait)",
                "push(signal.ref)"]

    def _run_lines(self) -> list[str]:
        """The invocation. A fenced call returns once its signal fence is reached: looked at at once (local-sync ran
        the work inline), then after sleeping `pace[0]`, then every POLL_SECONDS (IREE's own wait would keep this
        thread busy). The pace is PACE of the time from `invoke`'s return to the signal: a call that had to poll
        after its pace sets it to PACE of its own wait, at most PACE_GROWTH times the last (a slower machine is
        followed within a few calls); one whose work was done by the end of its pace (it slept too long, by how
        much unknown) halves it. Not from a first call (it loads the executable and touches fresh memory: as slow
        as several later calls, and a pace from it made the next calls sleep for it, shrinking by PACE a call: the
        test suite, whose functions run a few calls each, took 1081 s against 851). From invoke's return, not its
        start: a function that awaits its own work midway (the MLP Adam step's three command buffers: `invoke`
        returns after 4.2 of its 4.4 ms) has little left to wait for. A failure raises from `invoke` or `wait` and
        leaves the semaphore failed for good: the next call gets a new one."""
        if not self._fenced:
            return ["invoke(function, args, results)"]
        return ["try:",
                "    invoke(function, args, results)",
                "    if not signal.wait(timeout=0):",
                "        queued = clock()",
                "        sleep(pace[0])",
                "        overslept = signal.wait(timeout=0)",
                "        while not overslept and not signal.wait(timeout=0):",
                "            sleep(poll_seconds)",
                "        if not pace[1]:",
                "            pace[1] = True",
                "        elif overslept:",
                "            pace[0] *= 0.5",
                "        else:",
                "            took = PACE * (clock() - queued)",
                "            pace[0] = min(took, GROWTH * pace[0]) if pace[0] else took",
                "except BaseException:",
                "    renew(timeline, device)",
                "    raise"]

    def _donation_check(self) -> list[str]:
        """An Array donated and passed again is refused before anything is uploaded or consumed. For a few
        arguments the generated `is` tests find a candidate (check_donations then decides) without a call."""
        if not self.donated:
            return []
        n = len(self._inputs)
        if n > 8:
            return ["    check_donations(leaves, donated, name)"]
        pairs = sorted({tuple(sorted((i, j))) for i in self.donated for j in range(n) if j != i})
        if not pairs:
            return []
        return [f"    if {' or '.join(f'a{i} is a{j}' for i, j in pairs)}:",
                "        check_donations(leaves, donated, name)"]

    def _upload_lines(self, i: int) -> list[str]:
        """Argument i pushed onto the call's argument list. An hj.Array on this device goes as it is; anything
        else is copied into a new buffer (the caller may change its array later): C-contiguous arrays directly,
        others (transposed or broadcast views, Fortran order) after IREE refused them, so the common case pays
        nothing for them. IREE copies the bytes of a big-endian array as they are: callers convert those
        (hj.jit does, on its slow path: such an array never matches a fast key)."""
        copy = [f"    r{i} = None",
                f"    if type(a{i}) not in direct:",
                f"        a{i} = asarray(a{i}, dtype{i})  # Python scalars, host Arrays, other array types",
                "    try:",
                f"        push(alloc(LOCAL, USAGE, device, a{i}, element_type{i}))",
                "    except ValueError:  # not C-contiguous: a C-ordered copy first",
                f"        push(alloc(LOCAL, USAGE, device, asarray(a{i}, dtype{i}, order='C'), element_type{i}))"]
        if i in self.aliases:  # IREE writes a result into this buffer: hand it over only if nothing else sees it
            return [f"if type(a{i}) is Array and a{i}.exclusive_ref(shares) is not None:",
                    f"    push(a{i}.device_ref)  # donated: the result lands in this buffer",
                    f"    r{i} = None",
                    "else:  # IREE writes into what comes here: a copy (a numpy view of it may be alive, or it is",
                    "    # numpy). No reuse, but nothing else changes", *copy]
        if self.copies_arrays:   # IREE would write into the argument's buffer (writes_arguments)
            return [line[4:] for line in copy]
        return [f"if type(a{i}) is Array and a{i}.driver in shares:",
                f"    push(a{i}.device_ref)  # device-resident: no copy",
                f"    r{i} = a{i}.device_ref",
                "else:", *copy]

    def _sharing_checks(self) -> list[str]:
        """IREE returns an input's buffer as an output when the function passes it through (or reshapes it, or
        folds `x * 1` to x), and one buffer for equal outputs. Two Arrays then share memory: donating one
        would let IREE write into the other. Lines that find such pairs (only those of equal byte size can
        be) and mark both as viewed, so a donation copies them. Numpy inputs were copies (r{i} is None): an
        output whose only candidates are inputs looks its buffer up only where one of them is device-resident."""
        def nbytes(shape, dtype):
            return math.prod(shape) * dtype.itemsize
        inputs_of_size: dict[int, list[int]] = {}     # (computed once: a training step has hundreds of each)
        for i, (shape, dtype, _) in enumerate(self._inputs):
            if i not in self.donated:
                inputs_of_size.setdefault(nbytes(shape, dtype), []).append(i)
        sizes = [nbytes(shape, dtype) for shape, dtype in self._outputs]
        outputs_of_size: dict[int, list[int]] = {}
        for k, size in enumerate(sizes):
            outputs_of_size.setdefault(size, []).append(k)
        candidates = {k: inputs_of_size.get(size, []) for k, size in enumerate(sizes)}   # inputs output k may share
        paired = {k for same in outputs_of_size.values() if len(same) > 1 for k in same}  # ... or other outputs
        # each buffer looked up once (0.6 us each: x**4 + 1's call on numpy was ~7 us), and only where it can matter
        lines = [f"b_r{i} = buffer_of(r{i}) if r{i} is not None else None"
                 for i in sorted({i for inputs in candidates.values() for i in inputs})]
        for k in sorted(paired | {k for k in candidates if candidates[k]}):
            resident = " or ".join(f"b_r{i} is not None" for i in candidates[k])   # a device-resident candidate
            lines.append(f"b_o{k} = buffer_of(o{k})" if k in paired or len(candidates[k]) > 8 else
                         f"b_o{k} = buffer_of(o{k}) if {resident} else None")
        for k in sorted(candidates):
            lines += [f"if b_r{i} is not None and b_o{k} == b_r{i}: shared(A{k}, a{i})" for i in candidates[k]]
            lines += [f"if b_o{k} == b_o{j}: shared(A{k}, A{j})" for j in outputs_of_size[sizes[k]] if j < k]
        return lines


def _buffer_of(ref):
    """The HalBuffer under a buffer view's ref: two refs share memory where theirs are equal."""
    return ref.deref(rt.HalBufferView).get_buffer()


def _renew_timeline(timeline: list, device):
    """A fenced executable's [semaphore, value] after a failed call: a fresh semaphore (IREE's stays failed)."""
    timeline[:] = [device.create_semaphore(0), 0]


def _mark_shared(*arrays):
    """Arrays that share one buffer: map each to numpy, which makes it non-exclusive (Array.exclusive_ref)."""
    for array in arrays:
        array.numpy()


def call_timer(compiled: Compiled, function: str, arguments, outputs):
    """A function that calls `function` of `compiled` once on local-task, its arguments already on the device,
    and returns the seconds that took: how tuning.py compares flag sets. Called once here (a warm-up)."""
    executable = Executable(compiled, [(a.shape, a.dtype) for a in arguments], outputs, "local-task",
                            function=function, name=function)
    resident = [_on_device(np.array(a, order="C"), "local-task") for a in arguments]
    executable(resident)

    def seconds() -> float:
        start = time.perf_counter()
        executable(resident)
        return time.perf_counter() - start
    return seconds


def _on_device(array: np.ndarray, driver: str) -> Array:
    """A copy of the C-ordered `array` in a buffer of `driver`'s device, as an Array."""
    dev = device(driver)
    view = dev.allocator.allocate_buffer_copy(memory_type=rt.MemoryType.DEVICE_LOCAL, device=dev,
                                              allowed_usage=rt.BufferUsage.DEFAULT, buffer=array,
                                              element_type=_ELEMENT_TYPES[array.dtype])
    return Array(view.ref, array.shape, array.dtype, driver)


def _upgrade(quick: Executable, make, optimised: Compiled, on_upgrade):
    """In the background thread: load the optimised build and hand it to the caller in place of `quick`."""
    with COMPILING:
        executable = make(optimised)
    on_upgrade(quick, executable)


class Chain:
    """A program compiled as two halves (pipeline/halves.py), called as one: the first half takes its arguments
    (`first_arguments` of the program's), and its results, the values that cross the cut, follow the program's
    arguments into the second, whose results, donations and aliases are the program's. What crosses stays on the
    device. `compiled` tells both compiles (halves.CompiledHalves); `parts` are the two Executables."""

    pending = None      # interim halves: the Background compiling the whole program that replaces them

    def __init__(self, first: Executable, second: Executable, first_arguments, compiled):
        self.parts, self.compiled, self.name = (first, second), compiled, second.name
        run_first, run_second, run_single = first.call, second.call, second.call_single
        taken = tuple(first_arguments)

        def with_crossing(leaves):   # the program's arguments, then the first half's results
            return [*leaves, *run_first([leaves[i] for i in taken])]
        self.call = lambda leaves: run_second(with_crossing(leaves))
        self.call_single = None if run_single is None else lambda leaves: run_single(with_crossing(leaves))

    @property
    def driver(self) -> str:
        """The second half's driver (each half races its own)."""
        return self.parts[1].driver

    @property
    def tier(self) -> str:
        """"quick" for interim halves, the first build of tiered compilation (pipeline/halves.py): those wait for
        the whole program's build (`pending`); else "optimised"."""
        return "quick" if self.pending is not None else "optimised"

    def __call__(self, leaves) -> list[Array]:
        return self.call(leaves)


class IreeBackend:
    """`tune_machine`: the target is the cpu target with this machine's measured flag set (tuning.py),
    chosen when first needed; a program the flag sets compile alike takes the default set (`target_for`)."""

    def __init__(self, name: str, target: Target, tune_machine: bool = False):
        self.name = name
        self.driver = target.driver    # the same for every flag set: known without tuning
        self._target = target
        self._untuned = tuning.default_set(target) if tune_machine else None   # for programs no set changes
        self._tune_machine = tune_machine

    @property
    def target(self) -> Target:
        if self._tune_machine:
            self._target = tuning.machine_target(call_timer, targets.cpu_name_of(self._target))
            self._tune_machine = False
        return self._target

    def target_for(self, program: Program) -> Target:
        """`target`, but the default set (no measuring, one cache entry) for a program the sets compile alike, with
        no product, convolution or FFT (tuning.flag_set_matters), where the set is measured (not pinned)."""
        if self._untuned is not None and tuning.pinned() is None and not tuning.flag_set_matters(program):
            return self._untuned
        return self.target

    def expect_compile(self):
        """A program is about to be traced for this backend: start a compile worker now, so its start-up runs
        beside the trace (pipeline/compile_worker.py); two where big programs compile as halves, which take one
        each. Measured (ResNet-18 b8 forward, a second between jit and the call, 2026-12-05, a worker's start ~0.9 s
        then): compile and load 2.24-2.55 s against 2.7-3.1 with one; a two-op function's first call right after jit
        1.09-1.11 s against 1.05-1.09. An idle worker holds ~107 MB."""
        compile_worker.prestart(2 if halves.enabled() else 1)

    def load(self, program: Program, driver: str | None = None, autotune: bool = False,
             on_upgrade=None) -> Executable:
        """`autotune`: compile with each cpu flag set and keep the one this program runs fastest with.
        `on_upgrade(quick, optimised)`: the caller swaps executables, so a big program may start on a quick build
        (tiered compilation, pipeline/tiered.py); it is called from a background thread when the optimised
        Executable is loaded. A big program compiles as two halves at once and loads as their Chain."""
        background = None
        with COMPILING:  # MLIR's and IREE's compiler C++ (teardown.py)
            iree_drivers.OWN_LOAD.sample()   # a compile's CPU time is this process's load, not the machine's
            work, target = work_estimate(program), self.target_for(program)
            as_halves = None if autotune else self._halves(program, driver, work, target, on_upgrade)
        if as_halves is not None:
            return as_halves()
        with COMPILING:
            target, chosen, race = self._plan(target, driver, work)
            if autotune and target.name == "cpu":
                compiled = tuning.autotune(program, target, call_timer)
            elif on_upgrade is not None:
                compiled, background = tiered.first_build(program, target)
            else:
                compiled = compile_cached(program, target)
            make = functools.partial(self._executable, program, driver=chosen, race=race)
        executable = make(compiled)
        if background is not None:
            executable.pending = background
            background.start(lambda optimised: _upgrade(executable, make, optimised, on_upgrade))
        return executable

    def _halves(self, program: Program, driver: str | None, work: int, target: Target, on_upgrade=None):
        """A big program (`work`: its work_estimate) compiled as two halves at once (pipeline/halves.py), each half
        with its own driver race: a function that makes their Chain; None where it compiles whole (small, control
        flow, or a half that IREE does not compile: the whole program decides then). Interim halves (a training
        step's) only under tiered compilation (HLOJIT_TIERED=1, whose quick build they are, where tiering applies):
        they run until the whole program, compiled in the background, replaces them through `on_upgrade`; where the
        caller cannot swap, or the persistent cache has the whole program, it loads whole. Other halves compile where
        tiering does not apply (where it does, its quick build goes first)."""
        split = halves.halves(program, work) if halves.enabled() else None
        if split is None or split.interim != tiered.applies(program, target):
            return None
        background = None
        if split.interim:
            if on_upgrade is None:
                return None
            whole_target, whole_driver, whole_race = self._plan(target, driver, work)
            background = tiered.optimised_later(program, whole_target)
            if background is None:
                return None
        plans = [self._plan(self.target_for(part), driver, work_estimate(part)) for part in (split.first, split.second)]
        try:
            compiled = halves.compile_at_once(split, tuple(target for target, _, _ in plans))
        except CompileError:
            return None

        def make():
            chain = Chain(*[self._executable(part, c, d, race) for part, c, (_, d, race)
                            in zip((split.first, split.second), compiled.parts, plans)],
                          split.first_arguments, compiled)
            if background is not None:     # started now: the halves had both cores to compile
                make_whole = functools.partial(self._executable, program, driver=whole_driver, race=whole_race)
                chain.pending = background
                background.start(lambda optimised: _upgrade(chain, make_whole, optimised, on_upgrade))
            return chain
        return make

    @staticmethod
    def _plan(target: Target, driver: str | None, work: int) -> tuple[Target, str, bool]:
        """(target, driver, race) of a program for `target` (target_for's): the driver given, or by its `work`
        (work_estimate), raced unless given; local-task's cpu builds take polled fences (module doc)."""
        race = driver is None   # not pinned: big CPU work races local-task against local-sync
        driver = driver or choose_driver(target, work)
        if driver == "local-task" and target.name == "cpu":
            target = target.with_flags(*FENCED_FLAGS)
        return target, driver, race

    @staticmethod
    def _executable(program: Program, compiled, driver: str, race: bool) -> "Executable":
        return Executable(compiled, program.inputs, program.outputs, driver=driver, donated=program.donated,
                          aliases=program.aliases, name=program.name, copies_arrays=writes_arguments(program),
                          race=race)

    def put(self, array: np.ndarray) -> Array:
        """One copy of `array` in a buffer of this backend's device: calls take it as it is, with no upload.
        CPU drivers share host memory, so the Array serves local-sync and local-task calls alike."""
        buffer = np.array(array, order="C")  # (keeps 0-d 0-d)
        _PUT_GATE.acquire()  # the copy releases the GIL (teardown.py)
        try:
            return _on_device(buffer, self.driver)
        finally:
            _PUT_GATE.release()

    def __repr__(self):
        return f"<backend {self.name}>"
