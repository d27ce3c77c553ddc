"""Run every benchmark in this folder, one after another, and write their tables to one markdown file.

    python benchmarks/run_all.py [--out benchmarks/RESULTS.md] [--skip compile_cache ...]

Each benchmark runs in a process of its own (so one's compiled programs and threads do not weigh on the
next) and prints its own markdown; this script adds when, where (CPU count, load average before each) and
with which versions they ran. Run it on a quiet machine: figures on this 2-vCPU VM fall 3-5x under load.
"""
import argparse
import datetime
import os
import platform
import subprocess
import sys
from importlib.metadata import PackageNotFoundError, version

HERE = os.path.dirname(os.path.abspath(__file__))
BENCHMARKS = {  # script -> what it measures
    "call_overhead": "per-call overhead: x**4+1 on a scalar, 100,000 calls",
    "eager_dispatch": "eager ops outside jit (a + 1, ops.sin(a), 64x64 a @ b) against JAX's eager jax.numpy",
    "kernels": "elementwise chains on 16M float32 (GB/s), 1024²/2048² matmuls (GFLOP/s), ResNet-18 backward kernels",
    "models": "MLP and ResNet-18 forward passes (batch 1 and 8) against JAX",
    "train_step": "training steps against JAX: MLP batch 256 (Adam), ResNet-18 batch 8 (SGD)",
    "transformer": "a transformer encoder block (seq 128, d 256, 4 heads) forward and training step against JAX",
    "compiler_flags": "each llvm-cpu compiler flag set on matmuls, a convolution, an elementwise chain and ResNet-18",
    "compile_cache": "cold IREE compiles against the persistent compile cache (x**4+1, MLP, ResNet-18)",
    "per_example_grads": "per-example gradients of the MLP loss (vmap of grad, batch 256) against JAX",
    "distributed": "data-parallel MLP training step on 1 and 2 MPI processes; all_reduce against raw mpi4py",
    "fft": "complex64 FFTs of 2**20, 1000 and 997 points against numpy (pocketfft) and jax.numpy.fft",
    "linalg": "cholesky, solve, qr, eigh, svd of 256x256 and 1024x1024 f32 against numpy (LAPACK) and JAX",
}


def _version(package: str) -> str:
    try:
        return version(package)
    except PackageNotFoundError:
        return "not installed"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=os.path.join(HERE, "RESULTS.md"))
    parser.add_argument("--skip", nargs="*", default=[], choices=list(BENCHMARKS))
    args = parser.parse_args()
    parts = [f"# hlojit benchmarks\n\n`python benchmarks/run_all.py`, {datetime.datetime.now():%Y-%m-%d %H:%M}, "
             f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs; hlojit "
             f"{_version('hlojit')}, IREE {_version('iree-base-runtime')}, numpy {_version('numpy')}, jax "
             f"{_version('jax')}.\n"]
    for name, what in BENCHMARKS.items():
        if name in args.skip:
            continue
        load = os.getloadavg()[0]
        print(f"running {name} ({what}) ...", flush=True)
        done = subprocess.run([sys.executable, os.path.join(HERE, f"{name}.py")], capture_output=True, text=True)
        output = done.stdout.strip() if done.returncode == 0 else f"failed (exit {done.returncode}):\n\n```\n" \
            f"{done.stderr.strip()[-2000:]}\n```"
        parts.append(f"## {name}: {what}\n\n(load average {load:.1f} when it started)\n\n{output}\n")
        print(output, flush=True)
    with open(args.out, "w") as f:
        f.write("\n".join(parts))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
