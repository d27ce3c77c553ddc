"""What each llvm-cpu compiler flag does to speed: the same workloads compiled with one flag set after another.

    python benchmarks/compiler_flags.py [--repeats 5] [--out docs/compiler_flags.md]
    python benchmarks/compiler_flags.py --resnet-batch 8 [--rounds 5]

The second form times only ResNet-18's forward pass at that batch with each cpu candidate flag set
(targets.CPU_FLAG_SETS), the one tuning.py chose for this machine, and jax.jit, interleaved round by round;
medians.

Workloads: f32 matmuls 1024² and 2048² (GFLOP/s), a 3x3 convolution of 64 channels at 56x56 (batch 1,
channels last), a 6-op elementwise chain on 16M floats (GB/s, read + write), and ResNet-18's forward pass
at batch 1 (ms). The first rows are the cpu target's candidate flag sets (the first: the one tuning.py measured
fastest on this machine, `iree:cpu`'s default); a set falls back to plain data tiling for a module IREE
cannot compile with its own, and every row gets the cpu target's quirks (a vector times a
matrix becomes a reduction: inner tiling cannot compile it).
Every figure is the best of `--rounds` x `--repeats` calls after a warm-up, all in this one process, the
rounds interleaved over every cell so that rows compare.
A flag set IREE cannot compile for a workload shows the start of IREE's error instead.
"""
import argparse
import datetime
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "samples"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))   # models.py: ResNet-18 in JAX

import hlojit as hj  # noqa: E402
from hlojit import ops  # noqa: E402
from hlojit.backends.iree import IreeBackend, call_timer  # noqa: E402
from hlojit.pipeline import targets, tuning  # noqa: E402
import resnet18  # noqa: E402  (samples/)

HOST, GENERIC = "--iree-llvmcpu-target-cpu=host", "--iree-llvmcpu-target-cpu=generic"
TILING, INNER = ("--iree-opt-data-tiling",), ("--iree-global-opt-data-tiling", "--iree-llvmcpu-enable-inner-tiled")


def flags(*extra) -> targets.Target:
    return targets.Target("cpu", "local-task", targets.LLVM_CPU_FLAGS + extra)


def flag_sets():
    """(row label, target): this machine's choice, every candidate, then other flags for comparison."""
    chosen = tuning.machine_target(call_timer)
    rows = [(f"this machine's choice (tuning.py): {chosen.flag_set}", chosen)]
    rows += [(f"candidate `{name}`: `host` + {' '.join(f'`{f}`' for f in extra)}", targets.cpu(flag_set=name))
             for name, extra in targets.CPU_FLAG_SETS.items()]
    return rows + [
        ("`generic` CPU, no data tiling (IREE's defaults)", flags(GENERIC)),
        ("`host` CPU, no data tiling", flags(HOST)),
        ("`host` + data tiling + `--iree-llvmcpu-enable-ukernels=mmt4d`",
         flags(HOST, *TILING, "--iree-llvmcpu-enable-ukernels=mmt4d")),
        ("`host` + data tiling + `--iree-opt-level=O3`", flags(HOST, *TILING, "--iree-opt-level=O3")),
    ]


LEGEND = """What the flags do:
- `--iree-llvmcpu-target-cpu=host`: code for this CPU's features; `generic` is baseline x86-64.
- `--iree-opt-data-tiling`: matmul operands are packed into the tiles the CPU kernel reads contiguously (a pack
  dispatch per operand, the tiled matmul, an unpack that the matmul's elementwise consumers fuse into).
  `--iree-global-opt-data-tiling` takes the same decision in global optimisation, the path inner tiling needs.
- `--iree-llvmcpu-enable-inner-tiled`: the data-tiled matmul lowered through `iree_codegen.inner_tiled` (on
  AVX-512 a 29x16 register tile, instead of mmt4d's 16x16). IREE 3.13 cannot compile it for a vector times a
  matrix (ResNet-18's classifier at batch 1), which hlojit's cpu quirk turns into a reduction first; the fallback
  catches what else may fail.
- `--iree-preprocessing-pass-pipeline=...convert-conv2d-to-winograd{replace-all-convs=true}`: IREE's Winograd
  rewrite of 3x3 stride-1 channels-last convolutions (input, filter and output transforms around a batch matmul);
  hlojit leaves convolutions below 128 channels as convolutions, so it reaches those. It does not compile with the
  inner-tiled flags.
- `--iree-llvmcpu-enable-ukernels=mmt4d`: IREE's hand-written mmt4d microkernel instead of generated code.
- `--iree-opt-level=O3`: IREE's global optimisation level (default O2).
"""
# Not a row: `--iree-opt-data-tiling` with `--iree-llvmcpu-enable-inner-tiled` (the dispatch-creation data-tiling
# path) cannot compile a matmul with a fused bias ("failed to legalize operation 'linalg.generic'"), and IREE
# 3.13's compiler dies of a segmentation fault on ResNet-18 with it.


def workloads():
    """name -> (function, arguments, unit, amount per call: flops, bytes or None for ms)."""
    rng = np.random.default_rng(0)
    found = {}
    for n in (1024, 2048):
        a, b = (rng.standard_normal((n, n)).astype(np.float32) for _ in range(2))
        found[f"matmul {n}²"] = (lambda a, b: a @ b, (a, b), "GFLOP/s", 2 * n ** 3)
    x = rng.standard_normal((1, 56, 56, 64)).astype(np.float32)
    w = (rng.standard_normal((3, 3, 64, 64)) * 0.05).astype(np.float32)
    found["conv 3x3, 64 ch, 56x56"] = (lambda x, w: ops.conv(x, w, padding=1, layout="NHWC"), (x, w), "GFLOP/s",
                                       2 * 56 * 56 * 64 * 64 * 9)
    big = rng.standard_normal(1 << 24).astype(np.float32)
    found["6-op chain, 16M"] = (lambda x: ops.tanh(ops.abs(x * 0.5 + 1.0) - 0.25) * 3.0, (big,), "GB/s",
                                2 * big.nbytes)
    images = rng.standard_normal((1, 3, 224, 224)).astype(np.float32)
    found["ResNet-18 batch 1"] = (resnet18.resnet18, (resnet18.init_params(), images), "ms", None)
    return found


def compiled(backend, fn, args):
    """fn compiled for `backend` and called once; or the error's first line when IREE cannot compile it."""
    run = hj.jit(fn)
    run.backend = backend
    try:
        np.asarray(run(*args))
    except hj.CompileError as error:
        return str(error).splitlines()[0].split(": error: ")[-1][:60]
    return run


def best_seconds(run, args, repeats) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        np.asarray(run(*args))
        best = min(best, time.perf_counter() - start)
    return best


def figure(seconds, unit, amount) -> str:
    if isinstance(seconds, str):
        return f"fails: {seconds}"
    if unit == "ms":
        return f"{seconds * 1e3:.1f}"
    return f"{amount / seconds / 1e9:.1f}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="calls per cell in each round")
    parser.add_argument("--rounds", type=int, default=4, help="rounds over every cell (this VM's speed drifts: "
                        "interleaving keeps a slow minute from landing on one flag set)")
    parser.add_argument("--out", help="also write the table (with this run's date and machine) here")
    parser.add_argument("--resnet-batch", type=int, help="only ResNet-18's forward at this batch, against JAX")
    args = parser.parse_args()
    if args.resnet_batch:
        return resnet_against_jax(args.resnet_batch, args.rounds)
    os.environ.setdefault("HLOJIT_CACHE", "0")   # time what each flag set compiles, never an older vmfb
    rows = flag_sets()
    loads = workloads()
    header = ["flags (iree:cpu)"] + [f"{name} ({unit})" for name, (_, _, unit, _) in loads.items()]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    runs = {(label, name): compiled(IreeBackend("iree:cpu", target), fn, inputs)
            for label, target in rows for name, (fn, inputs, _, _) in loads.items()}
    best = {cell: run if isinstance(run, str) else float("inf") for cell, run in runs.items()}
    for _ in range(args.rounds):
        for (label, name), run in runs.items():
            if not isinstance(run, str):
                best[label, name] = min(best[label, name], best_seconds(run, loads[name][1], args.repeats))
    for label, _ in rows:
        cells = [figure(best[label, name], unit, amount) for name, (_, _, unit, amount) in loads.items()]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    print("\n".join(lines), flush=True)
    if args.out:
        with open(args.out, "w") as out:
            out.write(f"# What each llvm-cpu compiler flag does\n\n`python benchmarks/compiler_flags.py --out "
                      f"{args.out}`, {datetime.datetime.now():%Y-%m-%d %H:%M}, {os.cpu_count()} CPUs, load average "
                      f"{os.getloadavg()[0]:.1f} at the end. Higher is better except for ms.\n\n")
            out.write("\n".join(lines) + "\n\n" + LEGEND)


def resnet_against_jax(batch: int, rounds: int):
    """ResNet-18 forward at `batch`: each candidate flag set and jax.jit, one call each per round; medians."""
    import jax
    jax.config.update("jax_platforms", "cpu")
    from models import jax_resnet18
    images = np.random.default_rng(0).standard_normal((batch, 3, 224, 224)).astype(np.float32)
    inputs = (resnet18.init_params(), images)
    chosen = tuning.machine_target(call_timer)
    print(f"this machine's choice: {chosen.flag_set} ({chosen.note})", flush=True)
    contenders = {}
    for name in targets.CPU_FLAG_SETS:
        start = time.perf_counter()
        run = compiled(IreeBackend("iree:cpu", targets.cpu(flag_set=name)), resnet18.resnet18, inputs)
        contenders[name] = run
        print(f"{name}: first call {time.perf_counter() - start:.1f} s", flush=True)
    reference = np.asarray(jax.jit(jax_resnet18())(*inputs))
    contenders["jax.jit"] = jax.jit(jax_resnet18())
    for name, run in contenders.items():
        if not isinstance(run, str):
            out = np.asarray(run(*inputs))
            assert np.abs(out - reference).max() <= 1e-3 * np.abs(reference).max(), f"{name} disagrees with JAX"
    times = {name: [] for name, run in contenders.items() if not isinstance(run, str)}
    for _ in range(rounds):
        for name in times:
            start = time.perf_counter()
            np.asarray(contenders[name](*inputs))
            times[name].append(time.perf_counter() - start)
    jax_ms = statistics.median(times["jax.jit"]) * 1e3
    print(f"\nResNet-18 forward, batch {batch}, medians of {rounds} interleaved rounds, {os.cpu_count()} CPUs, "
          f"load average {os.getloadavg()[0]:.1f}")
    print("| flag set | ms | vs jax.jit |\n|---|---|---|")
    for name, run in contenders.items():
        if isinstance(run, str):
            print(f"| {name} | fails: {run} | |")
            continue
        ms = statistics.median(times[name]) * 1e3
        mark = " (this machine's choice)" if name == chosen.flag_set else ""
        print(f"| {name}{mark} | {ms:.0f} | {jax_ms / ms:.2f}x |", flush=True)


if __name__ == "__main__":
    main()
