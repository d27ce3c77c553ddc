"""`python -m hlojit tour`: the seed experiment, f(x) = x**4 + 1, on every backend that runs here.

It shows the three things the library is about: the StableHLO a Python function becomes, the first call
paying for tracing and compiling while later calls go straight to machine code, and fusion: relu(2x+1)
is three StableHLO ops and one IREE dispatch.
"""
from __future__ import annotations

import time

import numpy as np

from . import jit, ops


def x4_plus_1(x):
    return x**4 + 1


def relu_2x_plus_1(x):
    return ops.relu(2 * x + 1)


def calls_per_second(fn, x, calls: int, repeats: int = 5) -> float:
    """Best of `repeats` timed batches (this VM's timing noise is large; the best batch is the
    machine's speed, the others are its neighbours')."""
    batch = max(1, calls // repeats)
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(batch):
            fn(x)
        best = min(best, time.perf_counter() - start)
    return batch / best


def first_and_cached_call(fn, x) -> tuple[float, float]:
    """Seconds for the first call (trace + compile + run) and for one cached call after it."""
    start = time.perf_counter()
    np.asarray(fn(x))
    first = time.perf_counter() - start
    start = time.perf_counter()
    np.asarray(fn(x))
    return first, time.perf_counter() - start


def run_x4_plus_1(f, calls: int = 100_000, out=print) -> float:
    """Call `f` (a jit of x**4 + 1) on a float32 scalar `calls` times; print and return calls/s."""
    x = np.float32(3.0)
    first, cached = first_and_cached_call(f, x)
    value = float(np.asarray(f(x)))
    assert value == 82.0, value
    rate = calls_per_second(f, x, calls)
    out(f"  {f.backend.name:10s} f(3) = {value:g}   first call {first * 1e3:8.1f} ms   cached call "
        f"{cached * 1e6:7.1f} us   {rate:>10,.0f} calls/s ({calls:,} calls)")
    return rate


def main(calls: int = 100_000, backends=("iree:cpu", "iree:vmvx", "reference"), out=print):
    out("hlojit tour: f(x) = x**4 + 1\n")
    out("The StableHLO it builds (x**4 is two squarings, as JAX's integer_pow):")
    out(jit(x4_plus_1).lower(np.float32(3.0)).mlir)
    out(f"Calling it {calls:,} times on each backend (first call traces and compiles; later calls are cached):")
    for backend in backends:
        run_x4_plus_1(jit(x4_plus_1, backend=backend), calls, out)
    g = jit(relu_2x_plus_1)
    x = np.linspace(-2, 2, 1 << 20, dtype=np.float32)
    text = g.lower(x).mlir
    arithmetic = [line.split("= stablehlo.")[1].split()[0] for line in text.splitlines()
                  if "= stablehlo." in line and not any(k in line for k in ("constant", "broadcast_in_dim"))]
    out(f"\nFusion: relu(2x + 1) on 1M float32 is {len(arithmetic)} StableHLO arithmetic ops "
        f"({', '.join(arithmetic)}) plus the constants 2, 1, 0 broadcast to its shape.")
    executable = g.compile(x)
    how = "read from the compile cache" if executable.compiled.cache_hit else "compiled"
    out(f"  IREE fuses them into {executable.compiled.dispatch_count} dispatch "
        f"({how} in {executable.compiled.seconds:.2f} s, runs on {executable.driver})")
    np.testing.assert_allclose(np.asarray(g(x)), np.maximum(2 * x + 1, 0))
    rate = calls_per_second(g, x, 200)
    out(f"  {rate * x.size * 8 / 1e9:.1f} GB/s moved ({1e3 / rate:.2f} ms per call); numpy for the same: "
        f"{_numpy_ms(x):.2f} ms")


def _numpy_ms(x) -> float:
    return 1e3 / calls_per_second(lambda v: np.maximum(2 * v + 1, 0), x, 200)
