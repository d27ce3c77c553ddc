"""The world of processes: who launched us (mpiexec, mpirun, srun), this process's rank, and what happens
when one rank fails.

MPI is initialised only when a launcher says there is more than this process: a plain `python train.py`
is a valid world of size 1 that never imports mpi4py, so it needs neither mpi4py nor an MPI library.

Faults. A rank that dies (a signal, `os._exit`) is seen by the launcher, which ends the others (mpich's
hydra: "BAD TERMINATION ... CLEANING UP REMAINING PROCESSES"). A rank that raises would leave the others
blocked forever in their next collective, so `initialize` chains an excepthook that prints the traceback
and then calls `MPI_Abort`, which ends every rank. A rank that hangs (a deadlock, a rank that skipped a
collective, or leaves with `sys.exit` while the others wait: its MPI_Finalize then waits for them) is
caught by a watchdog thread: a collective that has not returned after `timeout` seconds prints which one
and aborts the world. mpi4py has no timeouts of its own on blocking collectives.
"""
from __future__ import annotations

import os
import sys
import threading
import time

from ..errors import ConfigError

# Environment variables each launcher sets in every process it starts: (rank, size).
_LAUNCHERS = (
    ("PMI_RANK", "PMI_SIZE"),                              # mpich's hydra, Intel MPI, srun --mpi=pmi2
    ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"),      # Open MPI's mpirun
    ("SLURM_PROCID", "SLURM_STEP_NUM_TASKS"),              # srun, any --mpi= (a batch script sets no STEP_NUM_TASKS)
)
DEFAULT_TIMEOUT = 600.0


class World:
    """This process's view of the job: `comm` is an mpi4py communicator (hlojit's own duplicate of
    COMM_WORLD, so its messages never match the user's), or None in a world of one process."""

    def __init__(self, comm, rank: int, size: int, timeout: float | None, mpi=None):
        self.comm, self.rank, self.size, self.timeout = comm, rank, size, timeout
        self.MPI = mpi                   # the mpi4py.MPI module (its ops, IN_PLACE), None without MPI
        self.watchdog = _Watchdog(self) if comm is not None and timeout is not None else None

    def __repr__(self):
        mpi = "mpi4py" if self.comm is not None else "no MPI"
        return f"<hj.distributed world: rank {self.rank} of {self.size}, {mpi}, timeout {self.timeout} s>"


_WORLD: list[World] = []


def launcher_world() -> tuple[int, int] | None:
    """(rank, size) as the launcher's environment says, or None when no launcher started this process."""
    for rank_name, size_name in _LAUNCHERS:
        rank, size = os.environ.get(rank_name), os.environ.get(size_name)
        if rank is not None and size is not None:
            try:
                return int(rank), int(size)
            except ValueError:
                raise ConfigError(f"hj.distributed: {rank_name}={rank!r} and {size_name}={size!r} are not "
                                  "whole numbers") from None
    return None


def initialize(timeout: float | None = DEFAULT_TIMEOUT) -> World:
    """Join the job the launcher started (idempotent: later calls return the same world).

    `timeout`: seconds one collective may wait for the other ranks before the watchdog aborts the whole job
    with a message naming the collective (None: wait forever). Every rank must pass the same value."""
    if _WORLD:
        if timeout != _WORLD[0].timeout:
            raise ConfigError(f"hj.distributed.initialize(timeout={timeout!r}): this process already joined with "
                              f"timeout={_WORLD[0].timeout!r} (the first hj.distributed call initialises); call "
                              "initialize(timeout=...) before any other hj.distributed function")
        return _WORLD[0]
    if timeout is not None and not timeout > 0:
        raise ConfigError(f"hj.distributed.initialize: timeout must be a positive number of seconds or None, "
                          f"not {timeout!r}")
    launched = launcher_world()
    if launched is None or launched[1] == 1:
        world = World(None, 0, 1, timeout)
    else:
        world = _join_mpi(launched, timeout)
    _WORLD.append(world)
    return world


def _join_mpi(launched: tuple[int, int], timeout: float | None) -> World:
    try:
        from mpi4py import MPI        # importing it initialises MPI: done only when a launcher asked for it
    except ImportError:
        raise ConfigError(f"hj.distributed: this process was launched as rank {launched[0]} of {launched[1]}, "
                          "but mpi4py is not installed: `pip install mpi4py mpich` (or build mpi4py against "
                          "your cluster's MPI)") from None
    comm = MPI.COMM_WORLD.Dup()
    if comm.size != launched[1]:
        raise ConfigError(f"hj.distributed: the launcher says {launched[1]} processes but MPI sees {comm.size}: "
                          "is mpi4py built against the MPI library whose mpiexec started this job?")
    world = World(comm, comm.rank, comm.size, timeout, MPI)
    _install_abort_on_uncaught(world)
    if world.watchdog is not None:
        world.watchdog.start()
    return world


def current() -> World:
    return initialize() if not _WORLD else _WORLD[0]


def rank() -> int:
    """This process's index in the job, 0 .. size() - 1."""
    return current().rank


def size() -> int:
    """How many processes the job has (1 without a launcher)."""
    return current().size


def barrier():
    """Wait until every rank has called barrier()."""
    world = current()
    if world.comm is not None:
        with guarded(world, "barrier"):
            world.comm.Barrier()


def abort(world: World, message: str, code: int = 1):
    """Print `message` (naming this rank) and end every rank of the job now."""
    sys.stderr.write(f"hlojit.distributed: rank {world.rank} of {world.size}: {message}\n")
    sys.stderr.flush()
    world.comm.Abort(code)


def _install_abort_on_uncaught(world: World):
    previous = sys.excepthook

    def abort_on_uncaught(kind, value, traceback):
        previous(kind, value, traceback)
        abort(world, f"uncaught {kind.__name__}: ending all {world.size} ranks (MPI_Abort) so that none waits "
                     "for this one forever")
    sys.excepthook = abort_on_uncaught


class guarded:
    """`with guarded(world, "all_reduce"):` around a blocking collective: the watchdog aborts the job if it
    is still inside after world.timeout seconds. Two attribute writes: nothing on the fast path."""
    __slots__ = ("watchdog", "name")

    def __init__(self, world: World, name: str):
        self.watchdog, self.name = world.watchdog, name

    def __enter__(self):
        if self.watchdog is not None:
            self.watchdog.inside = (self.name, time.monotonic())

    def __exit__(self, *exc):
        if self.watchdog is not None:
            self.watchdog.inside = None


class _Watchdog(threading.Thread):
    """Wakes a few times per timeout; if one collective has been waiting longer than the timeout, aborts.
    mpi4py initialises MPI with MPI_THREAD_MULTIPLE, so calling MPI_Abort from this thread is allowed."""

    def __init__(self, world: World):
        super().__init__(name="hlojit.distributed watchdog", daemon=True)
        self.world = world
        self.inside: tuple[str, float] | None = None

    def run(self):
        timeout = self.world.timeout
        while True:
            time.sleep(min(1.0, timeout / 4))
            inside = self.inside
            if inside is not None and time.monotonic() - inside[1] > timeout:
                abort(self.world, f"{inside[0]} waited more than {timeout:g} s for the other ranks (one is stuck, "
                                  "dead, or calls a different collective); ending the job. Raise "
                                  "hj.distributed.initialize(timeout=...) if the other ranks legitimately take "
                                  "longer to get there", code=2)
                return
