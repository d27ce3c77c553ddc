"""What each llvm-cpu compiler flag does to speed: the same workloads compiled with one flag set after another.

    python benchmarks/compiler_flags.py [--repeats 5] [--out docs/compiler_flags.md]

Workloads: f32 matmuls 1024² and 2048² (GFLOP/s), a 3x3 convolution of 64 channels at 56x56 (batch 1,
channels last), a 6-op elementwise chain on 16M floats (GB/s, read + write), and ResNet-18's forward pass
at batch 1 (ms). The first row is `iree:cpu`'s default, which falls back to the second's flags for a
module IREE cannot compile with its own; every row gets the cpu target's quirks (a vector times a
matrix becomes a reduction: inner tiling cannot compile it).
Every figure is the best of `--rounds` x `--repeats` calls after a warm-up, all in this one process, the
rounds interleaved over every cell so that rows compare.
A flag set IREE cannot compile for a workload shows the start of IREE's error instead.
"""
import argparse
import datetime
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "samples"))

import hlojit as hj  # noqa: E402
from hlojit import ops  # noqa: E402
from hlojit.backends.iree import IreeBackend  # noqa: E402
from hlojit.pipeline import targets  # noqa: E402
import resnet18  # noqa: E402  (samples/)

HOST, GENERIC = "--iree-llvmcpu-target-cpu=host", "--iree-llvmcpu-target-cpu=generic"
TILING, INNER = ("--iree-opt-data-tiling",), ("--iree-global-opt-data-tiling", "--iree-llvmcpu-enable-inner-tiled")


def flags(*extra) -> targets.Target:
    return targets.Target("cpu", "local-task", targets.LLVM_CPU_FLAGS + extra)


FLAG_SETS = [  # (the flags, as a row label; the target)
    ("default: `host`, global-opt data tiling, inner-tiled; else the next row", targets.cpu()),
    ("`host` + `--iree-opt-data-tiling` (the fallback)", targets.cpu().fallback),
    ("`generic` CPU, no data tiling (IREE's defaults)", flags(GENERIC)),
    ("`host` CPU, no data tiling", flags(HOST)),
    ("`host` + data tiling + `--iree-llvmcpu-enable-ukernels=mmt4d`",
     flags(HOST, *TILING, "--iree-llvmcpu-enable-ukernels=mmt4d")),
    ("`host` + data tiling + `--iree-opt-level=O3`", flags(HOST, *TILING, "--iree-opt-level=O3")),
    ("`host` + global-opt data tiling + `--iree-llvmcpu-enable-inner-tiled`, no fallback", flags(HOST, *INNER)),
]
LEGEND = """What the flags do:
- `--iree-llvmcpu-target-cpu=host`: code for this CPU's features (AVX-512 here); `generic` is baseline x86-64.
- `--iree-opt-data-tiling`: matmul operands are packed into the tiles the CPU kernel reads contiguously (a pack
  dispatch per operand, the tiled matmul, an unpack that the matmul's elementwise consumers fuse into).
  `--iree-global-opt-data-tiling` takes the same decision in global optimisation, the path inner tiling needs.
- `--iree-llvmcpu-enable-inner-tiled`: the data-tiled matmul lowered through `iree_codegen.inner_tiled`, a 29x16
  register tile on AVX-512 (29 accumulators, one vector load and 29 broadcast FMAs per step) instead of mmt4d's
  16x16. IREE 3.13 cannot compile it for a vector times a matrix (ResNet-18's classifier at batch 1), which
  hlojit's cpu quirk turns into a reduction first; the fallback catches what else may fail.
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
    args = parser.parse_args()
    os.environ.setdefault("HLOJIT_CACHE", "0")   # time what each flag set compiles, never an older vmfb
    loads = workloads()
    header = ["flags (iree:cpu)"] + [f"{name} ({unit})" for name, (_, _, unit, _) in loads.items()]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    runs = {(label, name): compiled(IreeBackend("iree:cpu", target), fn, inputs)
            for label, target in FLAG_SETS for name, (fn, inputs, _, _) in loads.items()}
    best = {cell: run if isinstance(run, str) else float("inf") for cell, run in runs.items()}
    for _ in range(args.rounds):
        for (label, name), run in runs.items():
            if not isinstance(run, str):
                best[label, name] = min(best[label, name], best_seconds(run, loads[name][1], args.repeats))
    for label, _ in FLAG_SETS:
        cells = [figure(best[label, name], unit, amount) for name, (_, _, unit, amount) in loads.items()]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    print("\n".join(lines), flush=True)
    if args.out:
        with open(args.out, "w") as out:
            out.write(f"# What each llvm-cpu compiler flag does\n\n`python benchmarks/compiler_flags.py --out "
                      f"{args.out}`, {datetime.datetime.now():%Y-%m-%d %H:%M}, {os.cpu_count()} CPUs, load average "
                      f"{os.getloadavg()[0]:.1f} at the end. Higher is better except for ms.\n\n")
            out.write("\n".join(lines) + "\n\n" + LEGEND)


if __name__ == "__main__":
    main()
