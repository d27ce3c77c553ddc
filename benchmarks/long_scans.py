"""Long scans: a scalar f32 recurrence c = 0.5 c + x, its carries stacked, over 4,096 and 65,536 steps, on iree:cpu
in blocks (hlojit's default from control.BLOCKED_FROM steps) and as one loop, against jax.lax.scan and a Python loop.

    python benchmarks/long_scans.py [--sizes 4096 65536] [--rounds 5]

Why: IREE 3.13 copies a loop's whole stacked-output buffer every step, so one loop of n steps copies n² elements;
control.scan runs n >= BLOCKED_FROM steps as blocks of ~sqrt(n) (control._blocked_scan). Each row is the median of
interleaved rounds (each contender once a round), the first call (compile) apart; every contender's ys are checked
against the Python loop's, bit for bit.
"""
import argparse
import statistics
import time

import numpy as np

import hlojit as hj
from hlojit import ops
from hlojit.frontend import control


def recurrence(xs):
    return control.scan(lambda c, x: (c * 0.5 + x, c), ops.zeros((), "float32"), xs)


def python_loop(xs):
    c, ys = np.float32(0), np.empty_like(xs)
    for i, x in enumerate(xs):
        ys[i] = c
        c = np.float32(c * np.float32(0.5) + x)
    return c, ys


def contenders(n: int) -> dict:
    threshold = control.BLOCKED_FROM
    name = "hlojit iree:cpu (blocked)" if n >= threshold else "hlojit iree:cpu"
    found = {name: hj.jit(recurrence, backend="iree:cpu")}
    if n >= threshold:
        one_loop = hj.jit(recurrence, backend="iree:cpu")
        control.BLOCKED_FROM = n + 1          # traced now, while the threshold is past n: one loop
        try:
            one_loop.compile(np.zeros(n, np.float32))
        finally:
            control.BLOCKED_FROM = threshold
        found["hlojit iree:cpu, one loop"] = one_loop
    try:
        import jax
        jax.config.update("jax_platforms", "cpu")
        found["jax.jit(lax.scan)"] = jax.jit(lambda xs: jax.lax.scan(lambda c, x: (c * 0.5 + x, c), np.float32(0), xs))
    except ImportError:
        print("(jax is not installed: pip install -e '.[bench]' to compare with it)")
    found["python loop"] = python_loop
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[4096, 65536])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    print("| steps | contender | first call (s) | call (ms) | vs jax |\n|---|---|---|---|---|")
    for n in args.sizes:
        xs = np.random.default_rng(0).standard_normal(n).astype(np.float32)
        want = python_loop(xs)[1]
        runs = contenders(n)
        first, times = {}, {name: [] for name in runs}
        for name, fn in runs.items():
            start = time.perf_counter()
            got = np.asarray(fn(xs)[1])
            first[name] = time.perf_counter() - start
            assert np.array_equal(got, want), f"{name} differs from the Python loop at {n} steps"
        for _ in range(args.rounds):
            for name, fn in runs.items():
                start = time.perf_counter()
                np.asarray(fn(xs)[1])
                times[name].append(time.perf_counter() - start)
        medians = {name: statistics.median(t) for name, t in times.items()}
        base = medians.get("jax.jit(lax.scan)")
        for name, median in medians.items():
            ratio = f"{base / median:.3g}x" if base else "-"
            print(f"| {n:,} | {name} | {first[name]:.2f} | {median * 1e3:.1f} | {ratio} |", flush=True)


if __name__ == "__main__":
    main()
