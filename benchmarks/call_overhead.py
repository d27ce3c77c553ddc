"""Per-call overhead: f(x) = x**4 + 1 on a float32 scalar, 100,000 calls, side by side in one run.

    python benchmarks/call_overhead.py [--calls N]

Each row is the best of 10 timed batches (this 2-vCPU VM is noisy; the best batch is the machine's
speed). hlojit calls take a numpy scalar in and give an `hj.Array` out; `jax.jit` gets the same numpy
scalar and is not blocked on (its best case); numpy runs the expression directly.
"""
import argparse

import numpy as np

import hlojit as hj
from hlojit.tour import calls_per_second


def f(x):
    return x**4 + 1


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=100_000)
    args = parser.parse_args()
    x = np.float32(3.0)
    contenders = {
        "hlojit iree:cpu": hj.jit(f, backend="iree:cpu"),
        "hlojit reference": hj.jit(f, backend="reference"),
        "numpy": f,
    }
    try:
        import jax
        jax.config.update("jax_platforms", "cpu")
        contenders["jax.jit (cpu)"] = jax.jit(f)
    except ImportError:
        print("(jax is not installed: pip install -e '.[bench]' to compare with it)")
    rates = {}
    for name, fn in contenders.items():
        assert float(np.asarray(fn(x))) == 82.0
        rates[name] = calls_per_second(fn, x, args.calls, repeats=10)
    base = rates.get("jax.jit (cpu)")
    print(f"f(x) = x**4 + 1 on a float32 scalar, {args.calls:,} calls each")
    print(f"| {'contender':18s} | {'calls/s':>10s} | {'us/call':>7s} | {'vs jax.jit':>10s} |")
    print(f"|{'-' * 20}|{'-' * 12}|{'-' * 9}|{'-' * 12}|")
    for name, rate in rates.items():
        ratio = f"{rate / base:.2f}x" if base else "-"
        print(f"| {name:18s} | {rate:>10,.0f} | {1e6 / rate:7.2f} | {ratio:>10s} |")


if __name__ == "__main__":
    main()
