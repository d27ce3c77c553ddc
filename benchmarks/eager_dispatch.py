"""Eager dispatch: the per-call time of one op outside any jit, hlojit's eager ops against JAX's jax.numpy.

    python benchmarks/eager_dispatch.py [--rounds 15] [--calls 2000]

Cases: `a + 1` and `ops.sin(a)` on 1,000 float32 elements, `a @ b` on 64x64 float32. hlojit's operands are
hj.Arrays made with hj.device_put, JAX's are jax Arrays on its CPU device; both ops are compiled before
timing (hlojit caches one program per signature, JAX one per primitive and shape). Rounds interleave the
contenders (case by case, contender by contender), so a load spike on this shared 2-vCPU VM hits both; each
round times a batch of calls, and the table gives the median over rounds of the time per call. JAX
dispatches asynchronously: its batch is blocked on once at the end (its best case); hlojit's calls are
synchronous, their results computed when the call returns. The middle column calls each compiled program
through its executable directly: what the eager dispatch adds is the difference to the first.
"""
import argparse
import statistics
import time

import numpy as np

import hlojit as hj
from hlojit import ops


def _hlojit_cases():
    rng = np.random.default_rng(0)
    a = hj.device_put(rng.standard_normal(1000).astype(np.float32))
    m = hj.device_put(rng.standard_normal((64, 64)).astype(np.float32))
    return {"a + 1": lambda: a + 1, "ops.sin(a)": lambda: ops.sin(a), "a @ b (64x64)": lambda: m @ m}


def _program_cases():
    """The same programs called directly through their executables: eager minus this is the dispatch."""
    rng = np.random.default_rng(0)
    a = hj.device_put(rng.standard_normal(1000).astype(np.float32))
    m = hj.device_put(rng.standard_normal((64, 64)).astype(np.float32))
    add = hj.jit(lambda x: x + 1).compile(a).call_single
    sin = hj.jit(ops.sin).compile(a).call_single
    matmul = hj.jit(lambda x, y: x @ y).compile(m, m).call_single
    return {"a + 1": lambda: add((a,)), "ops.sin(a)": lambda: sin((a,)), "a @ b (64x64)": lambda: matmul((m, m))}


def _jax_cases():
    import jax
    jax.config.update("jax_platforms", "cpu")
    import jax.numpy as jnp
    rng = np.random.default_rng(0)
    a = jnp.asarray(rng.standard_normal(1000).astype(np.float32))
    m = jnp.asarray(rng.standard_normal((64, 64)).astype(np.float32))
    return {"a + 1": lambda: a + 1, "ops.sin(a)": lambda: jnp.sin(a), "a @ b (64x64)": lambda: m @ m}


def _time_batch(fn, calls: int) -> float:
    """Seconds per call over one batch (the last result is waited for: JAX's calls return early)."""
    start = time.perf_counter()
    for _ in range(calls):
        out = fn()
    getattr(out, "block_until_ready", lambda: None)()
    return (time.perf_counter() - start) / calls


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--calls", type=int, default=2000)
    args = parser.parse_args()
    contenders = {"hlojit eager": _hlojit_cases(), "hlojit program": _program_cases()}
    try:
        contenders["jax eager"] = _jax_cases()
    except ImportError:
        print("(jax is not installed: pip install -e '.[bench]' to compare with it)")
    for cases in contenders.values():   # compile and warm up every op first
        for fn in cases.values():
            for _ in range(100):
                fn()
    times = {(who, case): [] for who, cases in contenders.items() for case in cases}
    for _ in range(args.rounds):
        for case in contenders["hlojit eager"]:
            for who, cases in contenders.items():
                times[who, case].append(_time_batch(cases[case], args.calls))
    info = hj.eager.cache_info()
    print(f"Eager dispatch, median of {args.rounds} interleaved rounds of {args.calls:,} calls "
          f"(hlojit's eager cache: {info.currsize} programs, {info.misses} compiles)")
    print("(hlojit program: the compiled program called through its executable, no eager dispatch)")
    print(f"| {'op':14s} | {'hlojit eager us':>15s} | {'hlojit program us':>17s} | {'jax eager us':>12s} | "
          f"{'jax / hlojit':>12s} |")
    print(f"|{'-' * 16}|{'-' * 17}|{'-' * 19}|{'-' * 14}|{'-' * 14}|")
    for case in contenders["hlojit eager"]:
        mine, program = (statistics.median(times[who, case]) * 1e6 for who in ("hlojit eager", "hlojit program"))
        theirs = statistics.median(times["jax eager", case]) * 1e6 if "jax eager" in contenders else float("nan")
        print(f"| {case:14s} | {mine:15.2f} | {program:17.2f} | {theirs:12.2f} | {theirs / mine:11.2f}x |")


if __name__ == "__main__":
    main()
