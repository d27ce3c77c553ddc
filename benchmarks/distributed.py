"""hj.distributed on this machine: data-parallel training throughput on 1 and 2 processes, and all_reduce's
cost against raw mpi4py.

    python benchmarks/distributed.py [--steps 20] [--repeats 10]

1. An MLP 784-512-512-10 (relu, softmax cross-entropy, Adam) at a global batch of 512, one thread per process
   (HLOJIT_CPU_THREADS=1, driver local-sync): samples/s of one process running the whole step as one compiled
   program, of one process running it as the data-parallel split (gradient program, all_reduce, update
   program: what data_parallel does, timed part by part, with a barrier before the all_reduce to tell the
   wait for the slower rank from the transfer), and of `mpiexec -n 2` processes running the
   split on 256 rows each. The median of `--steps` timed steps after three warm-up steps.
2. all_reduce(op="sum") of a 10M-float32 tree (four leaves: 4M, 3M, 2M, 1M) on 2 processes against raw
   mpi4py `Allreduce` on the same leaves: into one preallocated 10M buffer (one message, the lower bound:
   what all_reduce's bucket does minus packing), and leaf by leaf into preallocated buffers (four messages).
   Interleaved rounds; the median of `--repeats`. And the per-call cost on a tree of one float.

The script launches its own workers (`mpiexec -n N python benchmarks/distributed.py --worker ...`) and prints
markdown. Run it on a quiet machine: two processes on 2 vCPUs have no core to spare for anyone else.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SIZES = (784, 512, 512, 10)
GLOBAL_BATCH = 512
TREE = (4_000_000, 3_000_000, 2_000_000, 1_000_000)


def mlp_params(seed=0):
    rng = np.random.default_rng(seed)
    return [{"w": (rng.standard_normal((a, b)) * np.sqrt(2 / a)).astype(np.float32), "b": np.zeros(b, np.float32)}
            for a, b in zip(SIZES[:-1], SIZES[1:])]


def worker_training(steps: int, fused: bool) -> dict:
    import hlojit as hj
    from hlojit import nn, ops
    dist = hj.distributed
    dist.initialize()

    def loss(params, x, y):
        for layer in params[:-1]:
            x = ops.relu(nn.dense(x, layer["w"], layer["b"]))
        return nn.softmax_cross_entropy(nn.dense(x, params[-1]["w"], params[-1]["b"]), y)
    opt = hj.optim.adam(1e-3)
    params = dist.broadcast(mlp_params())
    state = opt.init(params)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((GLOBAL_BATCH, SIZES[0])).astype(np.float32)
    y = rng.integers(0, 10, GLOBAL_BATCH).astype(np.int32)
    if fused:
        def whole(params, state, x, y):
            value, grads = hj.value_and_grad(loss)(params, x, y)
            return (*opt.update(params, grads, state), value)
        whole_step = hj.jit(whole, driver="local-sync")

        def step(params, state):
            params, state, _ = whole_step(params, state, x, y)
            return params, state
    else:
        grads_fn = hj.jit(hj.value_and_grad(loss), driver="local-sync")
        update = hj.jit(opt.update, driver="local-sync")
        x, y = dist.shard((x, y))

        def step(params, state):       # data_parallel(grads_fn)'s work, timed part by part
            marks.append(time.perf_counter())
            local = grads_fn(params, x, y)
            marks.append(time.perf_counter())
            dist.barrier()             # apart: the wait for the slower rank, then the all_reduce itself
            marks.append(time.perf_counter())
            _, grads = dist.all_reduce(local, op="mean")
            marks.append(time.perf_counter())
            return update(params, grads, state)
    marks, times = [], []
    for i in range(steps + 3):
        dist.barrier()
        start = time.perf_counter()
        params, state = step(params, state)
        times.append(time.perf_counter() - start)
    dist.check_identical(params, "the parameters")
    result = {"seconds": float(np.median(times[3:])), "ranks": dist.size()}
    if marks:
        parts = np.diff(np.array(marks).reshape(-1, 4), axis=1)[3:]
        result["gradient"], result["wait"], result["all_reduce"] = (float(v) for v in np.median(parts, axis=0))
    return result


def worker_all_reduce(repeats: int) -> dict:
    import hlojit as hj
    dist = hj.distributed
    world = dist.initialize()
    comm, MPI = world.comm, world.MPI
    rng = np.random.default_rng(world.rank)
    leaves = [rng.standard_normal(n).astype(np.float32) for n in TREE]
    tree = {f"leaf{i}": leaf for i, leaf in enumerate(leaves)}
    one_buffer = np.concatenate(leaves)
    one_out = np.empty_like(one_buffer)
    outs = [np.empty_like(leaf) for leaf in leaves]

    def ours():
        dist.all_reduce(tree)

    def raw_one():
        comm.Allreduce(one_buffer, one_out, op=MPI.SUM)

    def raw_leaves():
        for leaf, out in zip(leaves, outs):
            comm.Allreduce(leaf, out, op=MPI.SUM)
    scalar, scalar_out = np.ones(1, np.float32), np.empty(1, np.float32)

    def ours_small():                  # per-call overhead: a 1-float tree, 100 calls
        for _ in range(100):
            dist.all_reduce(scalar)

    def raw_small():
        for _ in range(100):
            comm.Allreduce(scalar, scalar_out, op=MPI.SUM)
    runs = (("all_reduce", ours), ("raw_one", raw_one), ("raw_leaves", raw_leaves), ("small", ours_small),
            ("raw_small", raw_small))
    results: dict = {name: [] for name, _ in runs}
    for _ in range(repeats + 1):
        for name, fn in runs:
            comm.Barrier()
            start = time.perf_counter()
            fn()
            results[name].append(time.perf_counter() - start)
    return {name: float(np.median(values[1:])) for name, values in results.items()}


def launch(n: int, *args) -> dict:
    env = dict(os.environ, HLOJIT_CPU_THREADS="1", PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    mpiexec = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    command = [sys.executable, __file__, "--worker", *args]
    if n > 1:
        command = [mpiexec if os.path.exists(mpiexec) else shutil.which("mpiexec"), "-n", str(n), *command]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--worker", nargs="*", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker is not None:
        kind = args.worker[0]
        result = worker_all_reduce(args.repeats) if kind == "all_reduce" else \
            worker_training(args.steps, fused=kind == "fused")
        import hlojit as hj
        if hj.distributed.rank() == 0:
            print(json.dumps(result), flush=True)
        return
    load = os.getloadavg()[0]
    fused = launch(1, "fused", "--steps", str(args.steps))
    split = launch(1, "split", "--steps", str(args.steps))
    two = launch(2, "split", "--steps", str(args.steps))
    reduce = launch(2, "all_reduce", "--repeats", str(args.repeats))
    rate = {name: GLOBAL_BATCH / r["seconds"] for name, r in (("fused", fused), ("split", split), ("two", two))}
    print(f"(load average {load:.1f} before the runs, {os.cpu_count()} CPUs)\n")
    print("| MLP 784-512-512-10, Adam, global batch 512, 1 thread per process | ms per step | samples/s "
          "| vs 1 process |")
    print("| --- | ---: | ---: | ---: |")
    for name, label in (("fused", "1 process, one compiled step"), ("split", "1 process, data-parallel split"),
                        ("two", "2 processes (mpiexec -n 2), 256 rows each")):
        seconds = GLOBAL_BATCH / rate[name]
        print(f"| {label} | {seconds * 1e3:.1f} | {rate[name]:.0f} | {rate[name] / rate['fused']:.2f}x |")
    print(f"\nOf the 2-process step (medians): gradient program {two['gradient'] * 1e3:.1f} ms, waiting at a barrier "
          f"for the other rank {two['wait'] * 1e3:.1f} ms, all_reduce of the "
          f"{sum(a * b + b for a, b in zip(SIZES[:-1], SIZES[1:])):,} gradients and the loss "
          f"{two['all_reduce'] * 1e3:.1f} ms, update the rest (1 process split: gradient {split['gradient'] * 1e3:.1f} "
          f"ms, all_reduce {split['all_reduce'] * 1e3:.1f} ms).")
    print("\n| 2 processes, 10M float32 in 4 leaves | ms | vs raw, one buffer |")
    print("| --- | ---: | ---: |")
    for name, label in (("all_reduce", "hj.distributed.all_reduce(tree)"),
                        ("raw_one", "raw Allreduce, one preallocated 10M buffer"),
                        ("raw_leaves", "raw Allreduce leaf by leaf, preallocated")):
        print(f"| {label} | {reduce[name] * 1e3:.1f} | {reduce[name] / reduce['raw_one']:.2f}x |")
    print(f"\nOne float32, 2 processes: all_reduce {reduce['small'] * 1e4:.1f} us per call (its 16-byte signature "
          f"exchange included), raw Allreduce {reduce['raw_small'] * 1e4:.1f} us.")


if __name__ == "__main__":
    main()
