"""Which CPU driver runs a big function's next call: local-task or local-sync, raced on the calls themselves.

Why race: the same vmfb runs on both drivers with identical results (the dispatches and their workgroups are
the same; only which thread runs a workgroup differs), and which is faster depends on the moment, not only on
the program. When both vCPUs are free, local-task's two workers run the MLP 784-512-512-10 forward (b256) in
~2.1 ms against local-sync's 3.5 (fastest calls); with the VM shared by other jobs (load 6-9) its fork-join per
dispatch (workers waking, waiting for each other) costs more than the second core gives, and local-sync wins:
that forward 4.3 against 6.4 ms, the MLP's Adam step (45 dispatches) 33 against 45 ms, where local-task also
burnt 1.5x the CPU time (2026-12-01 evening, interleaved, medians). No fixed choice is right in both regimes, so
a function whose work is big enough for local-task (iree.SMALL_WORK) tries both for its first 15 calls (10 where
every call on one driver was faster than every call on the other), then runs on the one whose recent calls
typically took less (`typical`: their mean less the slowest), and gives the other PROBE_CALLS calls in
PROBE_EVERY to notice when the machine's load changes (an interval that doubles up to MAX_PROBE_EVERY while the
probes lose, so a clearly slower driver costs ~1.5% of the calls). Not counted: a driver's first call (it loads
the executable there and touches fresh memory: ~1.5x the next calls' time on the MLP forward), and a call right
after calls on the other driver: local-task's workers then wake from idle, and its first call after a run of
local-sync calls took ~10 ms on the MLP Adam step against ~5 in a run of its own (2026-12-05, idle 2-vCPU EPYC).
Counted, those one-call probes always lost, and a race that had started on local-sync (9.3 ms) stayed there; a
probe is now two calls, the second counted. The warm-up is not an even alternation: the driver the machine's
load favours (`favoured_by_load`: local-sync where the 1-minute load average, less this process's own share of
it, already fills the CPUs, else local-task), and after the first timed calls the faster so far, runs three
calls in five (WARM_UP). Why: a short run (a benchmark's 7 rounds, a script's few calls) is all warm-up, and
alternating evenly gave it the mean of the two drivers; at load ~8 on the 2-vCPU VM the MLP forward's 7-call
medians were 1.09x JAX on local-sync and 0.64x on local-task, 0.86-0.96x alternating. Why less its own share: a
process that has just compiled for 20 s on both cores, or a benchmark that runs JAX and hlojit in turn, raises
the load average itself, and its own threads do not compete with the call (they are the ones making it).
Counted whole, that load started the ResNet-18 b8 training step on local-sync after its cold compile (~1.8 s a
call against local-task's ~1.1 on the idle 2-vCPU VM), where a short run spent its warm-up: 0.65x JAX in that
benchmark, 0.88x since (2026-12-02). Tried and left: IREE's `--task_worker_spin_us` (workers spin for new work
instead of sleeping): 100 us and 1000 us were within the noise of 0 on the MLP step and forward, 1000 us burnt
~20% more CPU (2026-12-05).
Timing a call costs two clock reads (~0.1 us) on calls of 100 us and more.
`hj.jit(f, driver=...)` pins a driver and races nothing.
"""
from __future__ import annotations

import collections
import math
import os
import statistics
import threading
import time

from ..pipeline import compile_worker

WINDOW = 8          # recent wall times kept per driver; the decision compares their typical times (`typical`)
PROBE_EVERY = 16    # after the warm-up, every this many calls a probe runs PROBE_CALLS calls on the other driver ...
MAX_PROBE_EVERY = 128  # ... an interval that doubles each time a probe loses, up to this (a probe's cost is bounded)
PROBE_CALLS = 2     # a probe's calls: the first follows a call on the other driver and is not counted (module doc)
SEPARATED_AFTER = 2  # the warm-up ends early once this many calls each have every call of one driver faster
WARM_UP = ("chosen", "chosen", "chosen", "other", "other")   # the warm-up's pattern, repeated ...
WARM_UP_CALLS = 3 * len(WARM_UP)                            # ... for at most this many calls


def typical(times) -> float:
    """The time a driver's calls typically take: the mean of its recent calls less the slowest (one call
    preempted by another process does not decide), the mean itself below three calls. A mean, not a median:
    local-task's calls of the MLP step are bimodal (~5 ms, and ~10 ms one call in five), and a median of five
    that caught two slow ones (9.2 ms) ranked it behind local-sync's steady 9.3 ms, where its mean is ~6.5."""
    times = sorted(times)
    return statistics.fmean(times[:-1] if len(times) > 2 else times)


def favoured_by_load(drivers: tuple[str, str], load: float | None = None, cpus: int | None = None,
                     own: float | None = None) -> str:
    """The driver a race starts on: local-sync (one thread, never waits for a preempted worker) where the other
    processes' share of the machine's 1-minute load average (`load` less this process's `own`) is at least the
    CPUs this process may use, else the first (local-task, whose workers have cores to run on). `load`, `cpus` and
    `own` default to the machine's (os.getloadavg, the CPU affinity) and this process's (OWN_LOAD)."""
    if "local-sync" not in drivers:
        return drivers[0]
    if load is None:
        load = _load_average()
    if cpus is None:
        cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    if own is None:
        own = OWN_LOAD.estimate()
    busy = load is not None and load - own >= cpus
    return "local-sync" if busy else next(d for d in drivers if d != "local-sync")


class OwnLoad:
    """This process's share of the kernel's 1-minute load average, from its CPU time: the load average is an
    exponentially weighted mean (time constant LOAD_MINUTE) of the threads running, and between two samples of
    (wall clock, process CPU time) this process ran (cpu1 - cpu0) / (t1 - t0) threads on average, so its share
    now is that rate weighted as the kernel weights the interval. Samples are taken at import, before each
    compile (`sample`, from the backend) and at each estimate; those older than a few time constants no longer
    count and are dropped. It undercounts threads that were runnable but waiting for a CPU (the load counts
    them, CPU time does not): on a busy machine the estimate errs towards 'busy', towards local-sync."""
    LOAD_MINUTE = 60.0
    KEPT = 32

    def __init__(self, clock=time.monotonic, cpu_clock=None):
        """`cpu_clock` (default `own_cpu_seconds`): this process's CPU time, its compile workers' included."""
        self._clock, self._cpu_clock = clock, cpu_clock or own_cpu_seconds
        self._samples = collections.deque(maxlen=self.KEPT)
        self._lock = threading.Lock()
        self.sample()

    def sample(self):
        with self._lock:
            self._samples.append((self._clock(), self._cpu_clock()))
            while len(self._samples) > 2 and self._samples[-1][0] - self._samples[1][0] > 5 * self.LOAD_MINUTE:
                self._samples.popleft()

    def estimate(self) -> float:
        self.sample()
        with self._lock:
            samples = list(self._samples)
        now = samples[-1][0]
        share = 0.0
        for (t0, cpu0), (t1, cpu1) in zip(samples, samples[1:]):
            if t1 > t0:
                rate = (cpu1 - cpu0) / (t1 - t0)
                share += rate * (math.exp((t1 - now) / self.LOAD_MINUTE) - math.exp((t0 - now) / self.LOAD_MINUTE))
        return share


def own_cpu_seconds() -> float:
    """This process's CPU time and its compile workers' (pipeline/compile_worker.py): a compile's load is ours."""
    return time.process_time() + compile_worker.cpu_seconds()


OWN_LOAD = OwnLoad()


def _load_average() -> float | None:
    try:
        return os.getloadavg()[0]
    except (OSError, AttributeError):   # no load average on this platform: no prior, the first driver
        return None


class DriverRace:
    """The driver for each call of one executable (`next`), from the wall times of its calls (`record`)."""

    def __init__(self, drivers: tuple[str, str], first: str | None = None):
        """`first`: the driver chosen until calls are timed (default: the one the machine's load favours now)."""
        self.drivers = drivers
        self.times = {driver: collections.deque(maxlen=WINDOW) for driver in drivers}
        self.chosen = first or favoured_by_load(drivers)
        self.started_on = self.chosen
        self.unrecorded = set(drivers)   # drivers whose first call is still to come: it is not counted
        self.last = None                 # the driver of the call recorded last: a call after a switch is not counted
        self.calls = 0
        self.warming = True   # trying both: until WARM_UP_CALLS calls, or until the drivers' times separate
        self.probe_every = PROBE_EVERY
        self.next_probe = 0   # the call that starts the next probe of the driver not chosen (set after the warm-up)
        self.probing = 0      # the probe's calls still to run
        self._lock = threading.Lock()   # calls from several threads (each waits at the executable's gate)

    def next(self) -> str:
        """While warming up, WARM_UP's pattern (three calls on the chosen driver, two on the other); then the
        chosen driver, and every `probe_every` calls PROBE_CALLS on the other."""
        with self._lock:
            self.calls += 1
            calls = self.calls
            self.warming = self.warming and calls <= WARM_UP_CALLS
            if self.warming:
                return self.other() if WARM_UP[(calls - 1) % len(WARM_UP)] == "other" else self.chosen
            if not self.next_probe:
                self.next_probe = calls + self.probe_every
            if calls >= self.next_probe and not self.probing:
                self.probing, self.next_probe = PROBE_CALLS, calls + MAX_PROBE_EVERY   # record() sets it sooner
            if self.probing:
                self.probing -= 1
                return self.other()
            return self.chosen

    def other(self) -> str:
        return self.drivers[1] if self.chosen == self.drivers[0] else self.drivers[0]

    def record(self, driver: str, seconds: float):
        """A driver's first call, and a call right after one on the other driver, are not counted. A probe's
        counted call replaces its driver's window: the calls there are as old as the last switch, and a
        window kept from the warm-up (the first calls after a compile, each after a switch of driver) outvoted
        probes for a hundred calls: the MLP Adam step stayed on local-sync at 7.6 ms a call while its probes of
        local-task took 5.2-5.8 (2026-12-06, idle 2-vCPU Xeon). A probe that beat the chosen driver's typical
        time thus switches at once, and brings the next probe near (PROBE_EVERY); one that lost doubles the
        interval (to MAX_PROBE_EVERY); so does a change of choice reset it."""
        with self._lock:
            switched, self.last = self.last is not None and driver != self.last, driver
            if driver in self.unrecorded or switched:
                self.unrecorded.discard(driver)
                return
            probe, before = not self.warming and driver != self.chosen, self.chosen
            if probe:
                won = seconds < typical(self.times[before])
                self.probe_every = PROBE_EVERY if won else min(2 * self.probe_every, MAX_PROBE_EVERY)
                self.times[driver].clear()   # the probe is the news: older calls were at another moment's load
            self.times[driver].append(seconds)
            if all(self.times.values()):
                self.chosen = min(self.drivers, key=lambda d: typical(self.times[d]))
            if self.chosen != before:
                self.probe_every = PROBE_EVERY
            if probe or self.chosen != before:
                self.probing, self.next_probe = 0, self.calls + self.probe_every
            if self.warming and self._separated():
                self.warming = False

    def _separated(self) -> bool:
        """Every call on one driver faster than every call on the other, with SEPARATED_AFTER calls or more each:
        a program whose drivers differ by much stops trying both after 10 calls (2 periods of WARM_UP)."""
        first, second = (self.times[d] for d in self.drivers)
        if min(len(first), len(second)) < SEPARATED_AFTER:
            return False
        return max(first) < min(second) or max(second) < min(first)

    def describe(self) -> str:
        """`local-sync (typical 4.30 ms; local-task 6.40 ms over its last 5 calls)`, for messages."""
        with self._lock:
            return self._describe()

    def _describe(self) -> str:
        if not all(self.times.values()):
            return (f"{self.chosen} (racing {' and '.join(self.drivers)}: no call timed on both yet; started on "
                    f"{self.started_on})")
        other = self.other()
        return (f"{self.chosen} (typical {typical(self.times[self.chosen]) * 1e3:.2f} ms; {other} "
                f"{typical(self.times[other]) * 1e3:.2f} ms over its last {len(self.times[other])} calls)")


def raced(race: DriverRace, calls: dict):
    """One call function over `calls` (driver -> call): each call runs on the race's pick and is timed for it."""
    clock, pick, record = time.perf_counter, race.next, race.record

    def call(leaves):
        driver = pick()
        start = clock()
        result = calls[driver](leaves)
        record(driver, clock() - start)
        return result
    return call
