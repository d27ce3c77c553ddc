"""cholesky, solve, qr, eigh, svd of n x n float32 and a 4-operand einsum (a chain n x n, n x n, n x n/8, n/8 x n,
whose best order does 3/10 of left to right's work): hlojit (iree:cpu) against numpy (LAPACK) and jax.numpy.

    python benchmarks/linalg.py [--sizes 256 1024] [--rounds 5] [--ops cholesky ...]

On a shared or loaded machine run it with OPENBLAS_NUM_THREADS=1: numpy's threaded OpenBLAS then stops
fighting the load (on the 2-vCPU VM at load 3-8 its threads made it 10-300x slower and erratic).

All contenders run in the same process, in interleaved rounds (one call of each per round, after a first call
that compiles and a warm-up: see `measure`); a row is the median over the rounds. hlojit's input is placed once
with hj.device_put and results are waited for (np.asarray); JAX's with block_until_ready(). On iree:cpu every op
here runs hlojit's llvm-cpu kernels (pipeline/kernels.py; LU, Cholesky and QR blocked inside, their updates
register-tiled: pipeline/register_tiles.py); the other targets run the StableHLO decompositions. The first call's column
includes the compile: set HLOJIT_CACHE=0 to measure a cold one (otherwise a warm persistent cache answers).
"""
import argparse
import statistics
import time

import numpy as np

import hlojit as hj
from hlojit import ops

def problems(n: int):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, n)).astype(np.float32)
    spd = (a @ a.T / n + np.eye(n)).astype(np.float32)
    b = rng.standard_normal((n, 4)).astype(np.float32)
    sym = (a + a.T).astype(np.float32)
    # a chain of four whose order matters: left to right 5/4 n^3 multiply-adds, the best order (b c d first) 3/8 n^3
    chain = [rng.standard_normal(shape).astype(np.float32) for shape in ((n, n), (n, n), (n, n // 8), (n // 8, n))]
    spec = "ab,bc,cd,de->ae"
    return {  # name -> (inputs, numpy fn, hlojit fn, jax fn builder)
        "cholesky": ((spd,), np.linalg.cholesky, ops.linalg.cholesky, lambda jnp: jnp.linalg.cholesky),
        "solve": ((a, b), np.linalg.solve, ops.linalg.solve, lambda jnp: jnp.linalg.solve),
        "qr": ((a,), np.linalg.qr, ops.linalg.qr, lambda jnp: jnp.linalg.qr),
        "eigh": ((sym,), np.linalg.eigh, ops.linalg.eigh, lambda jnp: jnp.linalg.eigh),
        "svd": ((a,), lambda x: np.linalg.svd(x, full_matrices=False), lambda x: ops.linalg.svd(x, full_matrices=False),
                lambda jnp: lambda x: jnp.linalg.svd(x, full_matrices=False)),
        "einsum": (tuple(chain), lambda *xs: np.einsum(spec, *xs, optimize=True), lambda *xs: ops.einsum(spec, *xs),
                   lambda jnp: lambda *xs: jnp.einsum(spec, *xs)),
    }


def contenders(inputs, numpy_fn, hlojit_fn, jax_builder):
    import jax
    import jax.numpy as jnp
    placed = [hj.device_put(x) for x in inputs]
    hlojit_jit = hj.jit(hlojit_fn)
    jax_jit = jax.jit(jax_builder(jnp))
    jax_inputs = [jnp.asarray(x) for x in inputs]
    wait_tree = lambda r: [np.asarray(x) for x in (r if isinstance(r, tuple) else (r,))]  # noqa: E731
    return {
        "numpy (LAPACK)": lambda: numpy_fn(*inputs),
        "hlojit iree:cpu": lambda: wait_tree(hlojit_jit(*placed)),
        "jax.jit (cpu)": lambda: jax.block_until_ready(jax_jit(*jax_inputs)),
    }


WARM_UP_CALLS, WARM_UP_SECONDS = 20, 2.0


def measure(runs: dict, rounds: int) -> dict:
    """Medians of `rounds` interleaved rounds, after each contender's first call (timed: the compile) and a warm-up
    of up to WARM_UP_CALLS calls or WARM_UP_SECONDS: hlojit races its two CPU drivers on a big function's first
    ~15 calls (backends/iree_drivers.py), and a short run timed only that race."""
    compile_seconds = {}
    for name, run in runs.items():
        start = time.perf_counter()
        run()
        compile_seconds[name] = time.perf_counter() - start
        warm_up_end = time.perf_counter() + WARM_UP_SECONDS
        for _ in range(WARM_UP_CALLS):
            run()
            if time.perf_counter() > warm_up_end:
                break
    times = {name: [] for name in runs}
    for _ in range(rounds):
        for name, run in runs.items():
            start = time.perf_counter()
            run()
            times[name].append(time.perf_counter() - start)
    return {name: (statistics.median(t), compile_seconds[name]) for name, t in times.items()}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[256, 1024])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--ops", nargs="+", default=["cholesky", "solve", "qr", "eigh", "svd", "einsum"])
    args = parser.parse_args()
    import jax
    jax.config.update("jax_platforms", "cpu")
    import os
    print(f"load average {os.getloadavg()[0]:.1f} at the start; {args.rounds} interleaved rounds, medians\n")
    print("| op | n | contender | ms | first call (compile) s | vs numpy | vs jax |")
    print("|---|---|---|---|---|---|---|")
    for n in args.sizes:
        for op, (inputs, numpy_fn, hlojit_fn, jax_builder) in problems(n).items():
            if op not in args.ops:
                continue
            results = measure(contenders(inputs, numpy_fn, hlojit_fn, jax_builder), args.rounds)
            numpy_ms, jax_ms = results["numpy (LAPACK)"][0], results["jax.jit (cpu)"][0]
            for name, (seconds, first) in results.items():
                print(f"| {op} | {n} | {name} | {seconds * 1e3:.2f} | {first:.1f} | {numpy_ms / seconds:.2f}x | "
                      f"{jax_ms / seconds:.2f}x |", flush=True)


if __name__ == "__main__":
    main()
