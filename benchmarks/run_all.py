"""Run every benchmark in this folder, one after another, into one markdown file with one table of the models.

    python benchmarks/run_all.py [--rounds 10] [--quick] [--only PART ...] [--skip SCRIPT ...] [--readme]

The table: the MLP and ResNet-18 forward passes, their training steps and the transformer block (forward,
training step), each compared in one process of its own (benchmarks/harness.py: hlojit, JAX, PyTorch eager
and torch.compile timed interleaved, medians of `--rounds`; a contender that is not installed is skipped with
a note). The other benchmarks (SCRIPTS) follow, each in its own process with its own markdown. The file names
the machine (CPU model and count from /proc/cpuinfo), the date and the versions. `--readme` also rewrites
README.md's speed table (between its speed-table markers) from this run; `--quick` (one round, no
torch.compile, no other scripts) is a smoke test and cannot write the README. Run it on an idle machine:
figures on a 2-vCPU VM fall 3-5x under load; the default run takes about 10 minutes on 2 idle cores.
"""
import argparse
import dataclasses
import datetime
import json
import os
import subprocess
import sys
import tempfile
from importlib.metadata import PackageNotFoundError, version

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import harness  # noqa: E402  (benchmarks/)
import models  # noqa: E402
import train_step  # noqa: E402
import transformer  # noqa: E402

README = os.path.join(os.path.dirname(HERE), "README.md")
START, END = "<!-- speed-table:start -->", "<!-- speed-table:end -->"
PARTS = {  # part -> the rows it measures (each part runs in a process of its own)
    "mlp_forward": lambda rounds, quick: models.rows(rounds, quick, only="mlp"),
    "resnet18_forward": lambda rounds, quick: models.rows(rounds, quick, only="resnet18"),
    "mlp_step": lambda rounds, quick: train_step.rows(rounds, quick, only="mlp"),
    "resnet18_step": lambda rounds, quick: train_step.rows(rounds, quick, only="resnet18"),
    "transformer": lambda rounds, quick: transformer.rows(rounds, quick),
}
SCRIPTS = {  # script -> what it measures (run after the table, each prints its own markdown)
    "call_overhead": "per-call overhead: x**4+1 on a scalar, 100,000 calls",
    "eager_dispatch": "eager ops outside jit (a + 1, ops.sin(a), 64x64 a @ b) against JAX's eager jax.numpy",
    "kernels": "elementwise chains on 16M float32 (GB/s), 1024²/2048² matmuls (GFLOP/s), ResNet-18 backward kernels",
    "resnet_backward": "ResNet-18 b8 value_and_grad on each pinned CPU driver and its kernel gradients against JAX",
    "compiler_flags": "each llvm-cpu compiler flag set on matmuls, a convolution, an elementwise chain and ResNet-18",
    "compile_cache": "cold IREE compiles against the persistent compile cache (x**4+1, MLP, ResNet-18)",
    "per_example_grads": "per-example gradients of the MLP loss (vmap of grad, batch 256) against JAX",
    "distributed": "data-parallel MLP training step on 1 and 2 MPI processes; all_reduce against raw mpi4py",
    "fft": "complex64 FFTs of 2**20, 1000 and 997 points against numpy (pocketfft) and jax.numpy.fft",
    "linalg": "cholesky, solve, qr, eigh, svd of 256x256 and 1024x1024 f32 against numpy (LAPACK) and JAX",
    "long_scans": "a scalar recurrence scanned over 4,096 and 65,536 steps (blocked and one loop) against lax.scan",
}


def _version(package: str) -> str:
    try:
        return version(package)
    except PackageNotFoundError:
        return "not installed"


def machine() -> str:
    """'<CPU model>, N logical CPUs (M cores)' from /proc/cpuinfo (the platform's name where it is absent)."""
    model, cores = None, None
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key.strip() == "model name" and model is None:
                    model = value.strip()
                if key.strip() == "cpu cores" and cores is None:
                    cores = value.strip()
    except OSError:
        pass
    import platform
    cores_note = f" ({cores} cores a socket)" if cores else ""
    return f"{model or platform.processor() or platform.machine()}, {os.cpu_count()} logical CPUs{cores_note}"


def versions() -> str:
    names = ("hlojit", "iree-base-compiler", "iree-base-runtime", "jax", "torch", "numpy")
    return ", ".join(f"{name} {_version(name)}" for name in names)


def run_part(name: str, rounds: int, quick: bool) -> list:
    """One part in a child process (its compiled programs and thread pools do not weigh on the next)."""
    with tempfile.TemporaryDirectory() as folder:
        out = os.path.join(folder, "rows.json")
        command = [sys.executable, os.path.abspath(__file__), "--part", name, "--rows-json", out,
                   "--rounds", str(rounds)] + (["--quick"] if quick else [])
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:
            return [harness.Row(name, {}, {}, [f"failed (exit {done.returncode}): {done.stderr.strip()[-600:]}"])]
        with open(out) as f:
            return [harness.Row(**row) for row in json.load(f)]


def table(rows: list) -> str:
    """harness.markdown for the rows that ran; a failed part is listed under the table."""
    ran = [row for row in rows if harness.HLOJIT in row.ms]
    failed = [f"- {row.name}: {note}" for row in rows if harness.HLOJIT not in row.ms for note in row.notes]
    return harness.markdown(ran) + ("\n\n" + "\n".join(failed) if failed else "")


def header(rounds: int, quick: bool) -> str:
    how = ("`--quick` smoke run (one round: not a measurement)" if quick
           else f"medians of {rounds} interleaved rounds after {harness.WARM_UP_ROUNDS} untimed ones")
    return (f"`python benchmarks/run_all.py`, {datetime.datetime.now():%Y-%m-%d %H:%M}, on {machine()}; "
            f"{versions()}; {how}. ms per call (training: per step); vs = the contender's time / hlojit's "
            f"(above 1: hlojit faster).")


def scripts_sections(skip: list) -> list:
    parts = []
    for name, what in SCRIPTS.items():
        if name in skip:
            continue
        load = os.getloadavg()[0]
        print(f"running {name} ({what}) ...", flush=True)
        done = subprocess.run([sys.executable, os.path.join(HERE, f"{name}.py")], capture_output=True, text=True)
        output = done.stdout.strip() if done.returncode == 0 else f"failed (exit {done.returncode}):\n\n```\n" \
            f"{done.stderr.strip()[-2000:]}\n```"
        parts.append(f"## {name}: {what}\n\n(load average {load:.1f} when it started)\n\n{output}\n")
        print(output, flush=True)
    return parts


def rewrite_readme(text: str, section: str) -> str:
    """README text with the speed-table markers' contents replaced by `section` (the markers are added right
    after the '## Speed' heading's first paragraph where they are missing)."""
    block = f"{START}\n{section.strip()}\n{END}"
    if START in text and END in text:
        before, rest = text.split(START, 1)
        return before + block + rest.split(END, 1)[1]
    heading = text.index("\n## Speed\n")
    paragraph_end = text.index("\n\n", text.index("\n\n", heading + 1) + 2)
    return text[:paragraph_end] + "\n\n" + block + text[paragraph_end:]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", help="the markdown file written (default: benchmarks/RESULTS.md for a full run; a "
                        "--quick or --only run writes it only when named here, so that a part does not replace the "
                        "record of the whole)")
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--quick", action="store_true", help="one round each, no torch.compile, no other scripts")
    parser.add_argument("--only", nargs="*", choices=list(PARTS), help="these parts of the table only, no scripts")
    parser.add_argument("--skip", nargs="*", default=[], choices=list(SCRIPTS))
    parser.add_argument("--readme", action="store_true", help="rewrite README.md's speed table from this run")
    parser.add_argument("--part", choices=list(PARTS), help=argparse.SUPPRESS)       # a child's one part
    parser.add_argument("--rows-json", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    rounds = 1 if args.quick else args.rounds
    if args.part:
        with open(args.rows_json, "w") as f:
            json.dump([dataclasses.asdict(row) for row in PARTS[args.part](rounds, args.quick)], f)
        return
    if args.readme and (args.quick or args.only):
        parser.error("--readme takes a full run (no --quick, no --only)")
    rows = []
    for name in args.only or PARTS:
        print(f"running {name} ...", flush=True)
        rows += run_part(name, rounds, args.quick)
    section = f"{header(rounds, args.quick)}\n\n{table(rows)}\n"
    print(section, flush=True)
    partial = args.quick or args.only
    others = [] if partial else scripts_sections(args.skip)
    out = args.out or (None if partial else os.path.join(HERE, "RESULTS.md"))
    if out is not None:
        with open(out, "w") as f:
            f.write("\n".join([f"# hlojit benchmarks\n\n## Models: one table\n\n{section}"] + others))
        print(f"wrote {out}")
    if args.readme:
        with open(README) as f:
            text = f.read()
        with open(README, "w") as f:
            f.write(rewrite_readme(text, f"### One run of `benchmarks/run_all.py`\n\n{section}"))
        print(f"rewrote the speed table in {README}")


if __name__ == "__main__":
    main()
