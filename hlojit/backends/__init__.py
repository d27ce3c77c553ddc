"""Execution backends, chosen by name: `iree:cpu` (default), `iree:vmvx`, `iree:cuda`, `reference`.

A backend's `load(program, driver=None)` returns an executable: `executable(flat_leaves) -> [hj.Array]`.
Runtime options: `check_driver` (per function) and `set_cpu_threads` (per process: see its docstring).
"""
from __future__ import annotations

import os

import numpy as np

from ..errors import BackendError, ConfigError
from ..pipeline import targets
from .array import Array
from .donations import check_donations
from .reference import ReferenceBackend

DEFAULT = "iree:cpu"
NAMES = ("iree:cpu", "iree:vmvx", "iree:cuda", "reference")
_CACHE: dict[str, object] = {}


def get(name: str | None = None):
    """The backend called `name`, else $HLOJIT_BACKEND, else iree:cpu."""
    name = name or os.environ.get("HLOJIT_BACKEND") or DEFAULT
    if name not in _CACHE:
        if name == "reference":
            _CACHE[name] = ReferenceBackend()
        elif name.startswith("iree:") and name[5:] in targets.TARGETS:
            from .iree import IreeBackend
            # iree:cpu compiles with the flag set measured fastest on this machine (pipeline/tuning.py)
            _CACHE[name] = IreeBackend(name, targets.get(name[5:]), tune_machine=name == "iree:cpu")
        else:
            raise BackendError(f"unknown backend {name!r}; known backends: {', '.join(NAMES)}")
    return _CACHE[name]


def target_named(name: str, program=None):
    """The target `name` ("cpu", "vmvx", "cuda", or "iree:" before one) as its IREE backend compiles for it (`program`
    where given: IreeBackend.target_for): "cpu" is this machine's measured flag set (pipeline/tuning.py;
    HLOJIT_CPU_FLAGS pins one), so what `explain` and `export` compile is what a call runs. ValueError for a name
    that is no target."""
    bare = name.removeprefix("iree:")
    if bare not in targets.TARGETS:
        targets.get(bare)   # raises ValueError naming the known targets
    backend = get("iree:" + bare)
    return backend.target if program is None else backend.target_for(program)


def device_put(x, backend: str | None = None) -> Array:
    """x (a numpy array or scalar, or an hj.Array) copied once onto `backend`'s device (default: as `get`)
    as an hj.Array, JAX's `device_put`: calls that take it use its buffer as it is, where a numpy argument
    is copied into a new buffer on every call (IREE imports host memory only at 64-byte alignment, and
    numpy's is 16)."""
    array = np.asarray(x)
    if array.dtype.kind not in "biufc" and array.dtype.name != "bfloat16" or array.dtype.itemsize > 16 or \
            array.dtype.kind == "f" and array.dtype.itemsize > 8:
        raise BackendError(f"device_put: {array.dtype} is not a dtype hlojit computes with")
    if not array.dtype.isnative:  # big-endian data (`>f4`): the same values in the machine's byte order
        array = array.astype(array.dtype.newbyteorder("="))
    return get(backend).put(array)


CPU_DRIVERS = ("local-sync", "local-task")
MAX_CPU_THREADS = 256          # IREE's task system caps its workers there (silently)
_cpu_threads: list = []        # [n] once set by set_cpu_threads


def check_driver(backend, driver: str | None) -> str | None:
    """A valid `driver=` for this backend, else ConfigError. The reference backend has no drivers: it
    accepts and ignores the option, so one piece of code runs on every backend."""
    if driver is None:
        return None
    if driver not in CPU_DRIVERS:
        raise ConfigError(f"driver={driver!r} is not an IREE CPU driver; use one of {', '.join(CPU_DRIVERS)}, or "
                          "None to pick by the work done")
    runs_on = getattr(backend, "driver", None)   # not `.target`: iree:cpu would measure its flag sets now
    if runs_on is not None and runs_on not in CPU_DRIVERS:
        raise ConfigError(f"driver={driver!r} is a CPU driver, but {backend.name} runs on {runs_on}")
    return driver


def _parse_threads(value, where: str) -> int:
    try:
        n = int(value)
        if isinstance(value, float) or isinstance(value, bool) or str(n) != str(value).strip():
            raise ValueError
    except (TypeError, ValueError):
        raise ConfigError(f"{where} must be a whole number of threads, not {value!r}") from None
    if not 1 <= n <= MAX_CPU_THREADS:
        raise ConfigError(f"{where} must be between 1 and {MAX_CPU_THREADS}, not {n}")
    return n


def cpu_threads() -> int | None:
    """The worker threads local-task will use: set_cpu_threads, else $HLOJIT_CPU_THREADS, else None (IREE's
    default topology: one worker per physical core it detects)."""
    if _cpu_threads:
        return _cpu_threads[0]
    value = os.environ.get("HLOJIT_CPU_THREADS", "").strip()
    return _parse_threads(value, "HLOJIT_CPU_THREADS") if value else None


def set_cpu_threads(n: int):
    """Worker threads of the local-task driver, for the whole process. IREE 3.13's Python API fixes them when
    the driver is first created (`iree.runtime.flags.parse_flags("--task_topology_group_count=N")`, read
    then; `get_driver` caches drivers by name and there is no uncached constructor), so this must come
    before the first call that runs on local-task; changing it later raises ConfigError."""
    n = _parse_threads(n, "hj.set_cpu_threads(n)")
    from . import iree
    created = iree.local_task_threads()
    if created is not False and created != n:
        raise ConfigError(f"the local-task driver already runs with {created or 'the default number of'} worker "
                          "threads: "
                          "IREE fixes them when the driver is created; call hj.set_cpu_threads before the first "
                          "call that runs on local-task, or set HLOJIT_CPU_THREADS")
    _cpu_threads[:] = [n]


__all__ = ["Array", "CPU_DRIVERS", "DEFAULT", "NAMES", "check_donations", "check_driver", "cpu_threads", "get",
           "set_cpu_threads"]
