"""What models.py, train_step.py and transformer.py share: contenders timed interleaved in one process.

A contender is a zero-argument callable that runs one call (or one training step, feeding its own state
back) to completion and returns host numpy values to check. `compare` times each contender's first call
(trace + compile) apart, checks every output against hlojit's, runs WARM_UP_ROUNDS untimed rounds, then
`rounds` rounds in which every contender makes one call, so a busy moment of the machine lands on all of
them; figures are the medians. Why untimed rounds: a training loop runs thousands of steps, and the steady
step is what the table compares; hlojit's first 10-15 calls of a big function try both CPU drivers
(backends/iree_drivers.py), so 10 timed rounds from the first call measured that warm-up (the MLP Adam step,
2026-12-05: 4 of its 10 rounds on local-sync, at 9 ms against local-task's 5). Every contender gets them.

Two things keep one contender's threads from taxing the next one's call. The order rotates each round, so no
contender always follows the same other one. And PyTorch's OpenMP workers are made to sleep when idle
(OMP_WAIT_POLICY=PASSIVE, unless set already; set before torch loads): by default they spin after each call, and
on 2 shared vCPUs that taxed every call in the process, PyTorch's own too. MLP forward, 2026-12-01, load 5-7:
hlojit 20-28 ms right after a torch call against 6-7 ms otherwise (JAX 13 against 4.6); models.py --only mlp
without PASSIVE: hlojit 9.8 ms, JAX 7.0, PyTorch eager 82, torch.compile 66; with it, minutes apart: 4.2, 5.9,
5.7, 5.8. PyTorch alone in a process (medians, three runs each way, alternating): with PASSIVE 2.59 ms against
2.77 and 7.20 against 7.62 (no cost), and once 4.30 against 2.64 (1.6x).
"""
import dataclasses
import os
import statistics
import time
from typing import Callable, Optional

import numpy as np

HLOJIT, JAX, TORCH, TORCH_COMPILE = "hlojit", "jax", "torch", "torch.compile"
WARM_UP_ROUNDS = 15   # untimed rounds before the timed ones (module doc): the driver race's warm-up


@dataclasses.dataclass
class Contender:
    call: Callable[[], object]                  # one call, waited for; returns what `check` compares
    settle: Optional[Callable[[], None]] = None  # after the first call (hlojit's tiered build: wait for it)


@dataclasses.dataclass
class Row:
    """One comparison: medians (ms) and first calls (s) per contender; notes say who was skipped and why."""
    name: str
    ms: dict
    first_s: dict
    notes: list


def load_torch():
    """torch, or None where it is not installed (`pip install -e '.[bench-torch]'`). One thread pool each side."""
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")   # see the module doc: read when torch loads libgomp
    try:
        import torch
    except ImportError:
        return None
    return torch


def torch_compiled(torch, fn, quick: bool):
    """torch.compile(fn), or None where compiling is skipped (--quick: its compile takes seconds to minutes)."""
    if torch is None or quick:
        return None
    return torch.compile(fn)


def hlojit_contender(fn, args, host):
    """hlojit's call as a contender: synchronous run, outputs to host; waits for a tiered optimised build."""
    settle = fn.wait_for_optimised if hasattr(fn, "wait_for_optimised") else None
    return Contender(lambda: host(fn(*args)), settle)


def first_calls(contenders: dict, check, notes: list):
    """Each contender's first call timed; those whose output `check` rejects are dropped (with a note)."""
    first_s, reference = {}, None
    for who, contender in list(contenders.items()):
        start = time.perf_counter()
        try:
            out = contender.call()
        except Exception as error:   # noqa: BLE001  (a contender that cannot run is skipped, said in the notes)
            if who == HLOJIT:
                raise
            notes.append(f"{who} failed: {type(error).__name__}: {str(error).splitlines()[0][:120]}")
            del contenders[who]
            continue
        first_s[who] = time.perf_counter() - start
        if contender.settle is not None:
            contender.settle()
        if who == HLOJIT:
            reference = out
        else:
            check(reference, out, who)
    return first_s


def compare(name: str, contenders: dict, notes: list, check, rounds: int) -> Row:
    """`contenders`: who -> Contender, hlojit first; `notes`: on contenders left out; `check(hlojit_out,
    other_out, who)` raises on disagreement."""
    notes = list(notes)
    contenders = dict(contenders)
    first_s = first_calls(contenders, check, notes)
    times = {who: [] for who in contenders}
    order = list(contenders)
    warm_up = WARM_UP_ROUNDS if rounds > 1 else 0   # a one-round smoke run (--quick) measures nothing
    for round_ in range(warm_up + rounds):
        shift = round_ % len(order)
        for who in order[shift:] + order[:shift]:   # rotated: see the module doc
            start = time.perf_counter()
            contenders[who].call()
            if round_ >= warm_up:
                times[who].append(time.perf_counter() - start)
    return Row(name, {who: statistics.median(t) * 1e3 for who, t in times.items()}, first_s, notes)


def check_close(rtol: float, atol: float = 0.0):
    """A check: every array of the other's output within rtol of the largest magnitude of hlojit's (plus atol,
    for arrays that are rounding noise around zero: the key bias's gradient, which softmax cancels)."""
    def check(ours, theirs, who):
        ours, theirs = _leaves(ours), _leaves(theirs)
        if len(ours) != len(theirs):
            raise AssertionError(f"{who} returns {len(theirs)} arrays, hlojit {len(ours)}")
        for a, b in zip(ours, theirs):
            scale = float(np.abs(a).max()) or 1.0
            error = float(np.abs(a - b).max())
            if not error <= rtol * scale + atol:
                raise AssertionError(f"{who} disagrees with hlojit: max error {error:.3g}, scale {scale:.3g}")
    return check


def _leaves(value):
    if isinstance(value, (list, tuple)):
        return [leaf for item in value for leaf in _leaves(item)]
    return [np.asarray(value, dtype=np.float64)]


def markdown(rows: list) -> str:
    """The table: hlojit / JAX / PyTorch medians, first calls and hlojit's speed against each."""
    lines = ["| comparison | hlojit ms | JAX ms | PyTorch eager ms | torch.compile ms | vs JAX | vs PyTorch best "
             "| first call s (hlojit / JAX / PyTorch) |", "|---|---|---|---|---|---|---|---|"]
    for row in rows:
        ms = row.ms
        ours = ms[HLOJIT]
        torch_best = min((ms[w] for w in (TORCH, TORCH_COMPILE) if w in ms), default=None)
        cells = [row.name, f"{ours:.2f}"] + [f"{ms[w]:.2f}" if w in ms else "-" for w in (JAX, TORCH, TORCH_COMPILE)]
        cells += [f"{ms[JAX] / ours:.2f}x" if JAX in ms else "-",
                  f"{torch_best / ours:.2f}x" if torch_best is not None else "-",
                  " / ".join(f"{row.first_s[w]:.2f}" if w in row.first_s else "-" for w in (HLOJIT, JAX, TORCH))]
        lines.append("| " + " | ".join(cells) + " |")
    notes = [f"- {row.name}: {note}" for row in rows for note in row.notes]
    return "\n".join(lines + ([""] + notes if notes else []))
