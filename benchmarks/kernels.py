"""Big kernels side by side: elementwise chains on 16M float32, square matmuls and ResNet-18's backward kernels,
hlojit against numpy and JAX.

    python benchmarks/kernels.py [--size 16777216] [--repeats 7] [--only elementwise|matmul|gradients]

Each row is the best of `--repeats` runs (this 2-vCPU VM is noisy: the best run is the machine's speed),
every contender in the same process. Elementwise rows also give GB/s (bytes read + written once) against
the bandwidth numpy's own copy reaches in the same run (hlojit also from an input placed once with
`hj.device_put`: from numpy, each call first copies its input into an IREE buffer); matmuls give GFLOP/s.
hlojit results are waited for (`np.asarray`), JAX's with `block_until_ready()`. The gradient rows (the input
gradient of ResNet-18's stride-2 convolutions and two stride-1 ones, its max pool's backward) alternate
hlojit and jax.grad of the same function round by round and give medians of the rounds' wall-clock and
process CPU times and of their ratios: on a loaded machine the ratios are the figures to read.
"""
import argparse
import time

import numpy as np

import hlojit as hj
from hlojit import ops


def relu_2x_plus_1(xp):
    return lambda x: xp.maximum(2 * x + 1, 0)


def chain6(xp):   # six elementwise ops: numpy makes a temporary per op, a fusing compiler one pass
    return lambda x: xp.tanh(xp.abs(x * 0.5 + 1.0) - 0.25) * 3.0


def best_seconds(fn, wait, repeats) -> float:
    wait(fn())  # warm: compiles, page-faults the result buffers
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        wait(fn())
        best = min(best, time.perf_counter() - start)
    return best


def contenders(name):
    """name -> (numpy fn, hlojit fn, jax fn or None)."""
    build = {"relu(2x+1)": relu_2x_plus_1, "6-op chain": chain6}[name]
    rows = {"numpy": (build(np), np.asarray), "hlojit iree:cpu": (hj.jit(build(ops)), np.asarray)}
    try:
        import jax
        import jax.numpy as jnp
        jax.config.update("jax_platforms", "cpu")
        rows["jax.jit (cpu)"] = (jax.jit(build(jnp)), lambda r: r.block_until_ready())
    except ImportError:
        pass
    return rows


def elementwise(size, repeats) -> list[str]:
    x = np.random.default_rng(0).standard_normal(size).astype(np.float32)
    out = np.empty_like(x)
    copy = best_seconds(lambda: np.copyto(out, x) or out, np.asarray, repeats)
    copy_gbs = 2 * x.nbytes / copy / 1e9
    lines = [f"numpy copy of {size:,} float32: {copy * 1e3:.2f} ms, {copy_gbs:.1f} GB/s (read + write)", "",
             "| kernel | contender | ms | GB/s | of copy bandwidth | vs numpy | vs jax |",
             "|---|---|---|---|---|---|---|"]
    placed = hj.device_put(x)   # uploaded once: the call reads it where it is
    for name in ("relu(2x+1)", "6-op chain"):
        rows = contenders(name)
        times = {who: best_seconds(lambda f=f: f(x), wait, repeats) for who, (f, wait) in rows.items()}
        times["hlojit, hj.device_put input"] = best_seconds(lambda: rows["hlojit iree:cpu"][0](placed), np.asarray,
                                                            repeats)
        for who, seconds in times.items():
            gbs = 2 * x.nbytes / seconds / 1e9
            jax_ratio = f"{times['jax.jit (cpu)'] / seconds:.2f}x" if "jax.jit (cpu)" in times else "-"
            lines.append(f"| {name} | {who} | {seconds * 1e3:.2f} | {gbs:.1f} | {gbs / copy_gbs:.0%} | "
                         f"{times['numpy'] / seconds:.2f}x | {jax_ratio} |")
    return lines


def matmuls(repeats) -> list[str]:
    lines = ["| matmul f32 | contender | ms | GFLOP/s | vs numpy |", "|---|---|---|---|---|"]
    for n in (1024, 2048):
        a = np.random.default_rng(n).standard_normal((n, n)).astype(np.float32)
        rows = {"numpy (OpenBLAS)": (lambda: a @ a, np.asarray),
                "hlojit iree:cpu": (lambda f=hj.jit(lambda x, y: x @ y): f(a, a), np.asarray)}
        try:
            import jax
            f = jax.jit(lambda x, y: x @ y)
            rows["jax.jit (cpu)"] = (lambda: f(a, a), lambda r: r.block_until_ready())
        except ImportError:
            pass
        times = {who: best_seconds(fn, wait, repeats) for who, (fn, wait) in rows.items()}
        for who, seconds in times.items():
            lines.append(f"| {n}² | {who} | {seconds * 1e3:.2f} | {2 * n ** 3 / seconds / 1e9:.1f} | "
                         f"{times['numpy (OpenBLAS)'] / seconds:.2f}x |")
    return lines


def conv_gradient(rng, k: int, stride: int, c_in: int, c_out: int, size: int, wrt: str):
    """(hlojit function, jax function, arguments) of the gradient of sum(conv(x, w) * g) with respect to x
    (`wrt="input"`) or w ("kernel"), at batch 8, NCHW/OIHW, SAME-style padding k // 2 (ResNet-18's shapes).
    The differentiated operand comes first in the arguments."""
    import jax
    from jax import lax
    pad = k // 2
    x = rng.standard_normal((8, c_in, size, size)).astype(np.float32)
    w = (rng.standard_normal((c_out, c_in, k, k)) * 0.05).astype(np.float32)
    g = rng.standard_normal((8, c_out, size // stride, size // stride)).astype(np.float32)

    def ours(x, w, g):
        return ops.sum(ops.conv(x, w, stride=stride, padding=pad) * g)

    def theirs(x, w, g):
        return (lax.conv_general_dilated(x, w, (stride, stride), [(pad, pad)] * 2,
                                         dimension_numbers=("NCHW", "OIHW", "NCHW")) * g).sum()
    if wrt == "input":
        return hj.jit(hj.grad(ours)), jax.jit(jax.grad(theirs)), (x, w, g)
    return (hj.jit(hj.grad(lambda w, x, g: ours(x, w, g))), jax.jit(jax.grad(lambda w, x, g: theirs(x, w, g))),
            (w, x, g))


def backward_kernels():
    """name -> (hlojit function, jax function, arguments): ResNet-18's (batch 8, NCHW) stride-2 convolutions'
    input gradients and its 3x3/2 max pool's backward, each as the gradient of sum(op(x) * cotangent)."""
    import jax
    from jax import lax
    rng = np.random.default_rng(0)
    rows = {}
    for shape in ((3, 2, 64, 128, 56), (1, 2, 64, 128, 56), (3, 1, 64, 64, 56), (3, 1, 256, 256, 14)):
        k, stride, c_in, c_out, size = shape
        rows[f"conv {k}x{k}/{stride} {c_in}->{c_out} at {size}², input gradient"] = conv_gradient(rng, *shape, "input")
    x = rng.standard_normal((8, 64, 112, 112)).astype(np.float32)
    g = rng.standard_normal((8, 64, 56, 56)).astype(np.float32)
    ours = hj.jit(hj.grad(lambda x, g: ops.sum(ops.max_pool(x, 3, 2, padding=1) * g)))
    theirs = jax.jit(jax.grad(lambda x, g: (lax.reduce_window(
        x, -np.inf, lax.max, (1, 1, 3, 3), (1, 1, 2, 2), [(0, 0), (0, 0), (1, 1), (1, 1)]) * g).sum()))
    rows["max pool 3x3/2 of 64x112², backward"] = (ours, theirs, (x, g))
    return rows


def wall_and_cpu_seconds(fn, wait, repeats) -> tuple[float, float]:
    """The best of `repeats` runs in wall-clock time and in this process's CPU time (every thread's: on a
    loaded machine the CPU time is the work done, the wall time also the waiting for a core)."""
    wait(fn())
    wall, cpu = [], []
    for _ in range(repeats):
        start, start_cpu = time.perf_counter(), time.process_time()
        wait(fn())
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return min(wall), min(cpu)


def gradients(rounds) -> list[str]:
    lines = ["| backward kernel, batch 8 | hlojit ms | jax.grad ms | vs jax (wall) | hlojit CPU ms | jax CPU ms | "
             "vs jax (CPU) | max abs difference |", "|---|---|---|---|---|---|---|---|"]
    for name, (ours, theirs, args) in backward_kernels().items():
        mine, jax_grad = np.asarray(ours(*args)), np.asarray(theirs(*args))   # compiles, and the check
        times = {"ours": [], "theirs": []}
        for _ in range(rounds):   # alternating: each round's ratio sees the same load on both sides
            times["ours"].append(wall_and_cpu_seconds(lambda: ours(*args), np.asarray, 2))
            times["theirs"].append(wall_and_cpu_seconds(lambda: theirs(*args), lambda r: r.block_until_ready(), 2))
        a, b = np.array(times["ours"]), np.array(times["theirs"])
        wall_ratio, cpu_ratio = np.median(b / a, axis=0)
        (wall, cpu), (jax_wall, jax_cpu) = np.median(a, axis=0) * 1e3, np.median(b, axis=0) * 1e3
        lines.append(f"| {name} | {wall:.1f} | {jax_wall:.1f} | {wall_ratio:.2f}x | {cpu:.1f} | {jax_cpu:.1f} | "
                     f"{cpu_ratio:.2f}x | {float(np.max(np.abs(mine - jax_grad))):.1e} |")
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=16 * 1024 * 1024)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--only", choices=("elementwise", "matmul", "gradients"))
    args = parser.parse_args()
    parts = {"elementwise": lambda: elementwise(args.size, args.repeats), "matmul": lambda: matmuls(args.repeats),
             "gradients": lambda: gradients(args.repeats)}
    tables = [make() for name, make in parts.items() if args.only in (None, name)]
    print("\n\n".join("\n".join(table) for table in tables))


if __name__ == "__main__":
    main()
