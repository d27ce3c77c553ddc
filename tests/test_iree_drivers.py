"""Big CPU functions race local-task against local-sync per call (backends/iree_drivers.py)."""
import math
import threading
import time

import numpy as np
import pytest

import hlojit as hj
from hlojit import ops
from hlojit.backends import iree
from hlojit.backends.iree_drivers import (MAX_PROBE_EVERY, PROBE_CALLS, PROBE_EVERY, SEPARATED_AFTER, WARM_UP,
                                          WARM_UP_CALLS, WINDOW, DriverRace, OwnLoad, favoured_by_load, typical)
from hlojit.pipeline import targets

BIG = 1 << 20   # elements: above iree.SMALL_WORK, so the default driver is local-task, raced


def _runs(picks, driver):
    """(first call number, length) of each run of consecutive calls on `driver`."""
    runs = []
    for number, pick in enumerate(picks, 1):
        if pick == driver:
            if runs and runs[-1][0] + runs[-1][1] == number:
                runs[-1][1] += 1
            else:
                runs.append([number, 1])
    return [tuple(run) for run in runs]


def test_the_race_tries_both_then_keeps_the_faster_and_probes_the_other():
    race = DriverRace(("local-task", "local-sync"), first="local-task")
    noise = {d: iter([0.0, 0.003, -0.003] * 10) for d in race.drivers}   # overlapping times: all 15 calls warm up
    seconds = {"local-task": 0.006, "local-sync": 0.004}
    warm_up = []
    for _ in range(WARM_UP_CALLS):
        driver = race.next()
        warm_up.append(driver)
        race.record(driver, seconds[driver] + next(noise[driver]))
    assert race.warming and min(len(race.times["local-task"]), len(race.times["local-sync"])) >= SEPARATED_AFTER
    assert race.chosen == "local-sync"
    picks = []
    for _ in range(800):
        driver = race.next()
        picks.append(driver)
        race.record(driver, seconds[driver])
    probes = _runs(picks, "local-task")
    assert {length for _, length in probes} == {PROBE_CALLS}   # the first call of each not counted
    gaps = [b - a for (a, _), (b, _) in zip(probes, probes[1:])]
    step = PROBE_CALLS - 1   # from the probe's counted call to the next probe's first
    assert gaps[:4] == [2 * PROBE_EVERY + step, 4 * PROBE_EVERY + step, MAX_PROBE_EVERY + step,
                        MAX_PROBE_EVERY + step]                # each losing probe: twice as far
    assert set(gaps[4:]) == {MAX_PROBE_EVERY + step}
    seconds = {"local-task": 0.002, "local-sync": 0.004}   # the machine went idle: the probes notice
    for _ in range(MAX_PROBE_EVERY + 6 * (PROBE_EVERY + PROBE_CALLS)):
        driver = race.next()
        race.record(driver, seconds[driver])
    assert race.chosen == "local-task"
    assert "local-task (typical 2.00 ms; local-sync 4.00 ms" in race.describe()


def test_the_warm_up_ends_early_where_the_drivers_differ_clearly():
    race = DriverRace(("local-task", "local-sync"), first="local-task")
    seconds = {"local-task": 0.002, "local-sync": 0.004}
    picks = []
    for _ in range(10 + 3 * PROBE_EVERY + 3):
        driver = race.next()
        picks.append(driver)
        race.record(driver, seconds[driver])
    pattern = ["local-task" if slot == "chosen" else "local-sync" for slot in WARM_UP]
    assert picks[:10] == pattern * 2   # three calls in five on the started driver
    assert not race.warming and race.chosen == "local-task"
    assert _runs(picks[10:], "local-sync") == [(17, 2), (50, 2)]   # probes: 16 calls after the first, then 32


def test_a_drivers_first_call_and_a_call_after_a_switch_are_not_counted():
    """Its first call loads the executable there; right after calls on local-sync, local-task's workers wake
    from idle (the MLP step: ~10 ms against ~5 in a run of local-task calls, 2026-12-05), and a one-call probe
    of it always lost."""
    race = DriverRace(("local-task", "local-sync"), first="local-task")
    for seconds in (0.050, 0.002, 0.003, 0.090, 0.004, 0.070, 0.002):   # WARM_UP's pattern, then a switch back
        race.record(race.next(), seconds)
    assert list(race.times["local-task"]) == [0.002, 0.003, 0.002] and list(race.times["local-sync"]) == [0.004]
    assert race.chosen == "local-task"


def test_a_probe_that_wins_switches_however_slow_its_drivers_old_calls_were():
    """The warm-up's first calls of local-task (cold buffers, each after a switch) took 10-16 ms on the MLP Adam
    step, local-sync 8; afterwards local-task's probes ran 5.2-5.8 ms, and the window kept from the warm-up
    outvoted them for a hundred calls (2026-12-06). A probe's counted call is now its driver's whole window."""
    race = DriverRace(("local-task", "local-sync"), first="local-task")
    seconds = {"local-task": 0.014, "local-sync": 0.008}
    for _ in range(WARM_UP_CALLS):
        driver = race.next()
        race.record(driver, seconds[driver])
    assert race.chosen == "local-sync"
    seconds["local-task"] = 0.005   # warm now
    picks = []
    for _ in range(PROBE_EVERY + PROBE_CALLS + 4):
        driver = race.next()
        picks.append(driver)
        race.record(driver, seconds[driver])
    assert _runs(picks, "local-task")[0][0] <= PROBE_EVERY + 1 and race.chosen == "local-task"
    assert picks[-4:] == ["local-task"] * 4


def test_the_typical_time_is_a_mean_that_one_slow_call_does_not_decide():
    assert typical([0.005]) == 0.005 and typical([0.004, 0.006]) == pytest.approx(0.005)
    assert typical([0.005, 0.005, 0.5]) == pytest.approx(0.005)           # one preempted call
    bimodal = [0.005, 0.010, 0.005, 0.010, 0.005]                           # local-task's MLP step: 5 ms and 10
    assert typical(bimodal) < 0.0093                                         # beats local-sync's steady 9.3 ms


def test_a_short_run_is_mostly_on_the_faster_driver_whichever_it_started_on():
    seconds = {"local-task": 0.002, "local-sync": 0.004}
    for first in ("local-task", "local-sync"):
        race = DriverRace(("local-task", "local-sync"), first=first)
        picks = []
        for _ in range(8):   # a benchmark's first call and 7 rounds: all warm-up
            driver = race.next()
            picks.append(driver)
            race.record(driver, seconds[driver])
        assert picks[1:].count("local-task") >= 4, (first, picks)   # the median of the 7 timed calls: local-task's


def test_the_race_starts_on_the_driver_the_load_favours():
    drivers = ("local-task", "local-sync")
    assert favoured_by_load(drivers, load=7.9, cpus=2, own=0) == "local-sync"   # the cores are busy: one thread
    assert favoured_by_load(drivers, load=2.0, cpus=2, own=0) == "local-sync"
    assert favoured_by_load(drivers, load=1.2, cpus=2, own=0) == "local-task"   # a core to spare: the workers
    assert favoured_by_load(("cuda",), load=9.0, cpus=2) == "cuda"
    assert DriverRace(drivers, first="local-sync").chosen == "local-sync"
    assert "started on local-sync" in DriverRace(drivers, first="local-sync").describe()
    assert DriverRace(drivers).chosen == favoured_by_load(drivers)


def test_the_load_this_process_made_itself_does_not_count_as_busy():
    """A cold compile on both cores, or a benchmark's own JAX rounds, raise the load average; those threads do
    not run beside the call. Before, a load of 2.1 on 2 CPUs started the race on local-sync whatever made it."""
    drivers = ("local-task", "local-sync")
    assert favoured_by_load(drivers, load=2.1, cpus=2, own=1.8) == "local-task"
    assert favoured_by_load(drivers, load=4.1, cpus=2, own=1.8) == "local-sync"   # others fill the CPUs
    assert favoured_by_load(drivers, load=0.4, cpus=2, own=1.0) == "local-task"


def test_own_load_weights_cpu_time_as_the_kernel_weights_the_load_average():
    wall, cpu = [0.0], [0.0]
    own = OwnLoad(clock=lambda: wall[0], cpu_clock=lambda: cpu[0])
    wall[0], cpu[0] = 20.0, 40.0   # 20 s on two cores (a compile) just now, from an idle start
    assert own.estimate() == pytest.approx(2 * (1 - math.exp(-20 / 60)))
    own.sample()
    wall[0] += 60.0                 # then a minute idle: the share decays by e
    assert own.estimate() == pytest.approx(2 * (1 - math.exp(-20 / 60)) * math.exp(-1))
    real = OwnLoad()
    end = time.process_time() + 0.2
    while time.process_time() < end:   # busy for 0.2 s of CPU
        pass
    assert real.estimate() > 0.9 * (1 - math.exp(-0.2 / 60))


def test_a_raced_call_runs_on_both_drivers_with_identical_results():
    x = np.linspace(-1, 1, BIG, dtype=np.float32)
    f = hj.jit(lambda x: hj.ops.tanh(x * 3.0) + x)
    outs = [np.asarray(f(x)) for _ in range(WARM_UP_CALLS + 2)]
    race = f.compile(x).race
    # both drivers ran: each has calls in its window (a probe after an early end of the warm-up, which a loaded
    # machine brings, empties its driver's window to that one call: not SEPARATED_AFTER calls each)
    assert race is not None and all(race.times.values())
    for out in outs:
        np.testing.assert_array_equal(out, outs[0])
    np.testing.assert_allclose(outs[0], np.tanh(x * 3.0) + x, rtol=1e-6, atol=1e-6)
    assert f.compile(x).driver in ("local-task", "local-sync")


def test_raced_calls_from_two_threads():
    x = np.arange(BIG, dtype=np.float32)
    f = hj.jit(lambda x: x * 2.0 + 1.0)
    results = []

    def calls():
        results.extend(np.asarray(f(x))[-1] for _ in range(WINDOW + 1))
    threads = [threading.Thread(target=calls) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == [np.float32(2.0 * (BIG - 1) + 1.0)] * (2 * WINDOW + 2)
    assert f.compile(x).race.calls == 2 * WINDOW + 2


def test_donation_reuses_the_buffer_on_either_driver():
    f = hj.jit(lambda p, g: p - 0.5 * g, donate_argnums=0)
    g = np.ones(BIG, np.float32)
    p = hj.device_put(np.zeros(BIG, np.float32))
    drivers = set()
    for _ in range(2 * len(WARM_UP)):
        p = f(p, g)
        drivers.add(p.driver)
    assert drivers == {"local-task", "local-sync"}
    np.testing.assert_array_equal(np.asarray(p), np.full(BIG, -0.5 * 2 * len(WARM_UP), np.float32))


def test_local_task_functions_take_fences_and_their_calls_wait_for_them():
    x = np.linspace(-2, 2, BIG, dtype=np.float32)
    y = np.linspace(0, 1, BIG, dtype=np.float32)
    pinned = hj.jit(lambda x, y: (ops.exp(x) * y, x - y), driver="local-task")
    raced = hj.jit(lambda x, y: (ops.exp(x) * y, x - y))
    inline = hj.jit(lambda x, y: (ops.exp(x) * y, x - y), driver="local-sync")
    assert pinned.compile(x, y).fenced and raced.compile(x, y).fenced   # the vmfb serves both racing drivers
    assert not inline.compile(x, y).fenced and "--iree-execution-model=async-external" not in \
        inline.compile(x, y).compiled.target.flags
    want = (np.exp(x) * y, x - y)
    for f in (pinned, raced, inline):
        for _ in range(2 * WINDOW):   # each call returns only once its work is done: the values are final
            got = f(x, y)
            np.testing.assert_allclose(np.asarray(got[0]), want[0], rtol=1e-6)
            np.testing.assert_array_equal(np.asarray(got[1]), want[1])
    chained = hj.jit(lambda x: x * 2.0 + 1.0, driver="local-task")
    z = hj.device_put(np.zeros(BIG, np.float32))
    for _ in range(5):   # results fed back on device: each call waits for the previous one's signal
        z = chained(z)
    np.testing.assert_array_equal(np.asarray(z), np.full(BIG, 31.0, np.float32))


def test_a_fenced_call_sleeps_through_most_of_its_wait_and_halves_a_pace_too_long():
    """The pace (iree.PACE of the recent waits after `invoke` returned) is slept in one go before the polling, not
    taken from a first call; set far too long, a call that waits sleeps it (its result still final) and halves it."""
    x = np.linspace(-2, 2, 8 * BIG, dtype=np.float32)   # ~5 ms of work: invoke returns before it is done
    f = hj.jit(lambda x: ops.exp(x) * 2.0, driver="local-task")
    call_globals = f.compile(x).call_single.__globals__   # a function of one result returns it alone
    pace = call_globals["pace"]
    f(x)
    assert pace[0] == 0.0    # not from the first call: it loads the executable
    for _ in range(3):
        f(x)
    assert 0 <= pace[0] < 0.05
    sleeps = []    # what the call slept, in order: the pace first, then any polls
    call_globals["sleep"] = lambda seconds: (sleeps.append(seconds), time.sleep(seconds))
    for _ in range(5):    # a loaded machine may have the work done at once (nothing to wait for) or past the pace
        pace[0], sleeps[:] = 0.05, []
        np.testing.assert_allclose(np.asarray(f(x)), np.exp(x) * 2, rtol=1e-6)
        if not sleeps:    # done as invoke returned: the pace is kept
            assert pace[0] == 0.05
        elif sleeps == [0.05]:    # its few ms of work done within the pace, with no poll after it: halved
            assert pace[0] == 0.025
            break
        else:    # the pace slept, then polled (the work took over 50 ms): the pace follows that wait
            assert sleeps[0] == 0.05 and all(s == iree.POLL_SECONDS for s in sleeps[1:])
    else:
        pytest.fail(f"no call of five slept the pace alone (the last slept {sleeps})")


def test_a_pinned_driver_is_not_raced():
    x = np.ones(BIG, np.float32)
    pinned = hj.jit(lambda x: x + 1.0, driver="local-task")
    assert pinned.compile(x).race is None and pinned.compile(x).driver == "local-task"
    assert iree.choose_driver(targets.cpu(), BIG) == "local-task"
