"""The IREE runtime at interpreter exit: the exit status is always the program's.

Two things went wrong there (issue 10, measured):

- A buffer freed after its device segfaults (a device is not retained by the buffers it allocated: its caching
  allocator is gone). Python frees module globals in an order it does not promise: a logging handler whose
  filter is a function of `__main__` keeps `__main__`'s globals (and the hj.Arrays in them) alive until the
  logging module is cleared, after hlojit's device registry: `hj.device_put(...)` then segfaulted at exit,
  5 runs of 5. So the runtime's roots (the VM instance, the devices, their HAL modules) are never freed:
  `keep_until_process_end` takes a reference nothing gives back, and every buffer, module and context,
  freed in any order, finds its device alive. (nanobind would list them as leaks at exit: its leak report
  for the runtime's bindings is turned off, `iree.runtime._binding.disable_leak_checker`.)
- A daemon thread inside an IREE call that releases the GIL (`invoke`, `allocate_buffer_copy`) when the
  interpreter finalizes is ended by pthread_exit as it takes the GIL back, an unwind through IREE's C++ frames
  that aborts: "FATAL: exception not rethrown", 5 runs of 5. So such calls go through a `Gate`, a lock; at
  exit (atexit, which runs once the non-daemon threads are joined) every gate waits for the call in flight,
  then keeps its lock: a daemon thread that calls later stops before IREE, blocked for good (the interpreter
  abandons daemon threads anyway); the main thread (an atexit handler that runs after this one) still calls.
  Tracing and compiling run MLIR's and IREE's C++ throughout (a daemon thread died inside MLIR's operation
  iterator too, 1 run of 5): they pass through `COMPILING`, a `Passage` many threads share, which exit
  drains first (before the gates: a compile ends by loading its executable) and then closes the same way.
"""
from __future__ import annotations

import atexit
import ctypes
import threading
import weakref

_GATES = weakref.WeakSet()   # every gate: closed to daemon threads at exit
_CLOSED = []                 # [True] once exit began
_STATE_LOCK = threading.Lock()
_FOREVER = threading.Lock()  # held from import on: acquiring it blocks for good
_FOREVER.acquire()


def keep_until_process_end(obj):
    """`obj` (a VM instance, a device, a HAL module) is never freed, so it outlives whatever depends on it."""
    ctypes.pythonapi.Py_IncRef(ctypes.py_object(obj))
    return obj


def _daemon_threads_stop_here():
    """A gate's acquire after exit: daemon threads block for good, the main thread goes on alone."""
    if threading.current_thread().daemon:
        _FOREVER.acquire()


def _no_release():
    pass


class Gate:
    """A lock around IREE calls that release the GIL, one call at a time (a VM context is not re-entrant across
    threads). Its `acquire`/`release` are read where it is used, `gate.acquire()`, or bound into the namespace
    of a generated call (`bind`): closing it at exit replaces them in both, at no cost per call before."""

    def __init__(self):
        self._lock = threading.RLock()  # re-entrant: an argument's __array__ may call the same function
        self.acquire, self.release = self._lock.acquire, self._lock.release
        self._namespaces = []
        with _STATE_LOCK:  # a gate made after exit began (a daemon thread's compile finishing) is born closed
            if _CLOSED:
                self.close_to_daemon_threads()
            _GATES.add(self)

    def bind(self, namespace: dict):
        namespace["acquire"], namespace["release"] = self.acquire, self.release
        self._namespaces.append(namespace)

    def close_to_daemon_threads(self):
        """Wait for the call in flight and keep the lock for good (a thread that read the old `acquire` stops
        there), then hand out an acquire that stops daemon threads and lets the main thread through."""
        self._lock.acquire()
        self.acquire, self.release = _daemon_threads_stop_here, _no_release
        for namespace in self._namespaces:
            namespace["acquire"], namespace["release"] = self.acquire, self.release


class Passage:
    """Where many threads may be at once (`with COMPILING:`), re-entrant: at exit, it waits until no thread is
    inside, then daemon threads stop at its entrance (a thread already inside passes: its trace may compile)."""

    def __init__(self):
        self._changed = threading.Condition()
        self._inside = 0
        self._closed = False
        self._depth = threading.local()

    def __enter__(self):
        depth = getattr(self._depth, "n", 0)
        with self._changed:
            stop = self._closed and depth == 0 and threading.current_thread().daemon
            if not stop:
                self._inside += 1
        if stop:
            _FOREVER.acquire()
        self._depth.n = depth + 1

    def __exit__(self, *exc):
        self._depth.n -= 1
        with self._changed:
            self._inside -= 1
            self._changed.notify_all()

    def close_to_daemon_threads(self):
        with self._changed:
            self._closed = True
            self._changed.wait_for(lambda: self._inside == 0)


COMPILING = Passage()  # tracing a function and compiling and loading its module


@atexit.register
def _close_to_daemon_threads():
    COMPILING.close_to_daemon_threads()
    with _STATE_LOCK:
        _CLOSED.append(True)
        gates = list(_GATES)
    for gate in gates:  # (outside the state lock: a daemon thread may make a gate while this waits on another)
        gate.close_to_daemon_threads()
