"""complex64 FFTs of 2**20, 1000 (mixed radix) and 997 (prime) points: hlojit against numpy (pocketfft) and
jax.numpy.fft, in one process.

    python benchmarks/fft.py [--repeats 9]

Rounds are interleaved (each round runs every contender once, in turn) so that the noise of this shared
2-vCPU VM falls on all of them alike; the table gives each one's median. hlojit results are waited for
(`np.asarray`), JAX's with `block_until_ready()`. Inputs are placed on the device once (`hj.device_put`,
`jax.device_put`), so the rows time the transform, not the upload. The errors are max |x - numpy| over
max |numpy|, numpy's in float64.
"""
import argparse
import statistics
import time

import numpy as np

import hlojit as hj
from hlojit import ops
from harness import WARM_UP_ROUNDS   # benchmarks/

SIZES = (1 << 20, 1000, 997)


def contenders(x):
    """name -> (call, wait)."""
    placed = hj.device_put(x)
    f = hj.jit(ops.fft.fft)
    rows = {"numpy (pocketfft)": (lambda: np.fft.fft(x), np.asarray),
            "hlojit iree:cpu": (lambda: f(placed), np.asarray)}
    try:
        import jax
        import jax.numpy as jnp
        jax.config.update("jax_platforms", "cpu")
        xj = jax.device_put(x)
        g = jax.jit(jnp.fft.fft)
        rows["jax.jit (cpu)"] = (lambda: g(xj), lambda r: r.block_until_ready())
    except ImportError:
        pass
    return rows


def medians(rows, repeats) -> tuple[dict, dict]:
    """Each contender's first call (timed: the compile), WARM_UP_ROUNDS untimed interleaved rounds, then `repeats`
    timed ones: hlojit's first ~15 calls of a big function try both CPU drivers (backends/iree_drivers.py), and
    the timed rounds without a warm-up measured that (2026-12-06, 2**20: 23.2 ms, where the steady call on
    local-task takes ~15)."""
    first = {}
    for name, (call, wait) in rows.items():
        start = time.perf_counter()
        wait(call())                       # compiles / plans
        first[name] = time.perf_counter() - start
    for _ in range(WARM_UP_ROUNDS):
        for call, wait in rows.values():
            wait(call())
    times = {name: [] for name in rows}
    for _ in range(repeats):
        for name, (call, wait) in rows.items():
            start = time.perf_counter()
            wait(call())
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(t) for name, t in times.items()}, first


def run(repeats) -> list[str]:
    lines = ["| n | contender | first call (s) | median ms | vs numpy | vs jax | error vs numpy (f64) |",
             "|---|---|---|---|---|---|---|"]
    rng = np.random.default_rng(0)
    for n in SIZES:
        x = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(np.complex64)
        exact = np.fft.fft(x.astype(np.complex128))
        rows = contenders(x)
        med, first = medians(rows, repeats if n < SIZES[0] else max(3, repeats // 2))
        for name, (call, wait) in rows.items():
            err = np.max(np.abs(np.asarray(call()) - exact)) / np.max(np.abs(exact))
            jax_ratio = f"{med['jax.jit (cpu)'] / med[name]:.2f}x" if "jax.jit (cpu)" in med else "-"
            lines.append(f"| {n:,} | {name} | {first[name]:.2f} | {med[name] * 1e3:.3f} | "
                         f"{med['numpy (pocketfft)'] / med[name]:.2f}x | {jax_ratio} | {err:.1e} |")
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=9)
    args = parser.parse_args()
    print("\n".join(run(args.repeats)))


if __name__ == "__main__":
    main()
