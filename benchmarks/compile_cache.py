"""Cold compile against a load from the persistent compile cache: x**4+1, an MLP, ResNet-18, in one run; and
the first call with an empty cache, tiered compilation off and on.

    python benchmarks/compile_cache.py [--repeats N] [--only NAME] [--first-call]

Three views of the same thing, each the best of N (this VM is noisy); none includes running the function
(ResNet-18 takes seconds to run here, which no cache can save):
  IREE vs cache   `Compiled.seconds`: IREE compiling the module, against reading and checking the entry
  fresh jit       `hj.jit(fn).compile(*args)` with an empty in-memory cache: trace, compile or read, load
  new process     `python -c` that starts, imports hlojit and does the same: a second run of a script
The cache lives in a temp folder (the user's ~/.cache/hlojit is not touched); "cold" clears it first.
These views compile with tiered compilation off (HLOJIT_TIERED=0): they time the optimised build.
The MLP (784-512-512-10, batch 32) and ResNet-18 (batch 1, 224x224) are the ones in samples/.

`--first-call` times, in a new process with an empty cache each (best of N), the first call of each workload
(ResNet-18 batch 8 forward and its training step too) until its results are on the host: with HLOJIT_TIERED=0
(the optimised build compiled first) and =1 (a quick build first), and when tiered, how long until the
optimised build replaced it. The cpu flag set is pinned (HLOJIT_CPU_FLAGS, default data-tiling): measuring
the machine's best set (pipeline/tuning.py) is a once-per-machine cost apart.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, REPO)
sys.path.insert(0, os.path.join(REPO, "samples"))
sys.path.insert(0, HERE)

import hlojit as hj  # noqa: E402
import mlp  # noqa: E402  (samples/)
import resnet18  # noqa: E402
import train_step  # noqa: E402  (benchmarks/)


def poly(x):
    return x**4 + 1


def workloads() -> dict:
    """name -> (function, arguments); built on demand: ResNet-18's weights are 45 MB."""
    rng = np.random.default_rng(0)
    return {
        "x**4+1 f32[]": lambda: (poly, (np.float32(3.0),)),
        "MLP 784-512-512-10": lambda: (mlp.mlp, (mlp.init_params(), rng.random((32, 784), dtype=np.float32))),
        "ResNet-18 batch 1": lambda: (resnet18.resnet18, (resnet18.init_params(),
                                      rng.standard_normal((1, 3, 224, 224)).astype(np.float32))),
        "ResNet-18 batch 8": lambda: (resnet18.resnet18, (resnet18.init_params(),
                                      rng.standard_normal((8, 3, 224, 224)).astype(np.float32))),
        "ResNet-18 b8 train step": lambda: resnet18_step(rng),
    }


FIRST_CALL_ONLY = ("ResNet-18 batch 8", "ResNet-18 b8 train step")   # too slow to compile cold N times over


def resnet18_step(rng):
    """train_step.py's ResNet-18 step (clipped SGD with momentum, batch 8) and its arguments."""
    step, init = train_step.hlojit_step(train_step.hlojit_resnet18_loss, hj.optim.sgd(0.01, momentum=0.9), clip=1.0)
    params = resnet18.init_params(classes=10)
    return step.fn, (params, init(params), rng.standard_normal((8, 3, 224, 224)).astype(np.float32),
                     rng.integers(0, 10, 8).astype(np.int32))


def fresh_jit(fn, args):
    """Seconds until a new Exec is ready to run `fn` on `args` (trace, compile or read, load), and its Compiled."""
    f = hj.jit(fn)
    start = time.perf_counter()
    executable = f.compile(*args)
    return time.perf_counter() - start, executable.compiled


CHILD = """
import sys
sys.path.insert(0, {here!r})
import numpy as np, hlojit as hj
from compile_cache import workloads
fn, args = workloads()[{name!r}]()
hj.jit(fn).compile(*args)
"""


def new_process(name: str) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", CHILD.format(here=HERE, name=name)],
                   check=True, env=dict(os.environ, PYTHONPATH=REPO))
    return time.perf_counter() - start


FIRST_CALL = """
import json, resource, sys, time
sys.path.insert(0, {here!r})
import numpy as np, hlojit as hj
from compile_cache import workloads
fn, args = workloads()[{name!r}]()
f = hj.jit(fn)
def cpu():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime
start, start_cpu = time.perf_counter(), cpu()
[np.asarray(leaf) for leaf in hj.tree.leaves(f(*args))]
first, first_cpu = time.perf_counter() - start, cpu() - start_cpu
tier = f.compile(*args).tier
f.wait_for_optimised()
print(json.dumps(dict(first=first, cpu=first_cpu, tier=tier, optimised=time.perf_counter() - start)))
"""


def first_call(name: str, tiered: bool) -> dict:
    """A new process's first call of workload `name` with an empty cache: seconds, and which build ran."""
    hj.cache.clear()
    env = dict(os.environ, PYTHONPATH=REPO, HLOJIT_TIERED="1" if tiered else "0")
    env.setdefault("HLOJIT_CPU_FLAGS", "data-tiling")
    out = subprocess.run([sys.executable, "-c", FIRST_CALL.format(here=HERE, name=name)], check=True, env=env,
                         capture_output=True, text=True)
    return json.loads(out.stdout.splitlines()[-1])


def first_calls(names, repeats):
    print(f"first call, empty cache, new process; best of {repeats}")
    print("(s: wall seconds to the first result; cpu: this process's CPU seconds meanwhile, which a loaded machine "
          "inflates less)")
    print(f"| {'workload':24s} | {'off s':>7s} | {'off cpu':>7s} | {'tiered s':>8s} | {'tiered cpu':>10s} | "
          f"{'ran':9s} | {'optimised in s':>14s} |")
    print(f"|{'-' * 26}|{'-' * 9}|{'-' * 9}|{'-' * 10}|{'-' * 12}|{'-' * 11}|{'-' * 16}|")
    for name in names:   # interleaved: off, on, off, on ...
        runs = [(first_call(name, False), first_call(name, True)) for _ in range(repeats)]
        off = min((r[0] for r in runs), key=lambda r: r["first"])
        on = min((r[1] for r in runs), key=lambda r: r["first"])
        print(f"| {name:24s} | {off['first']:7.2f} | {off['cpu']:7.2f} | {on['first']:8.2f} | {on['cpu']:10.2f} | "
              f"{on['tier']:9s} | {on['optimised']:14.2f} |", flush=True)


def best(measure, repeats, before=lambda: None):
    results = []
    for _ in range(repeats):
        before()
        results.append(measure())
    return min(results, key=lambda r: r[0] if isinstance(r, tuple) else r)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--only", action="append", help="run the workloads whose name starts with this")
    parser.add_argument("--first-call", action="store_true", help="time first calls, tiered compilation off and on")
    args = parser.parse_args()
    os.environ["HLOJIT_CACHE_DIR"] = tempfile.mkdtemp(prefix="hlojit-bench-cache-")  # read on every use
    os.environ.pop("HLOJIT_CACHE", None)
    selected = [name for name in workloads() if not args.only or any(name.startswith(p) for p in args.only)]
    if args.first_call:
        first_calls(selected, args.repeats)
        hj.cache.clear()
        os.rmdir(hj.cache.info().folder)
        return
    os.environ["HLOJIT_TIERED"] = "0"   # (and the new processes): these views time the optimised build
    notes = []
    print(f"compile cache in {hj.cache.info().folder}; best of {args.repeats}")
    print(f"| {'workload':24s} | {'view':13s} | {'cold s':>8s} | {'cached s':>8s} | {'ratio':>8s} |")
    print(f"|{'-' * 26}|{'-' * 15}|{'-' * 10}|{'-' * 10}|{'-' * 10}|")
    for name, make in workloads().items():
        if name not in selected or name in FIRST_CALL_ONLY:
            continue
        fn, fn_args = make()
        cold_jit, cold = best(lambda: fresh_jit(fn, fn_args), args.repeats, before=hj.cache.clear)
        warm_jit, warm = best(lambda: fresh_jit(fn, fn_args), args.repeats)
        assert not cold.cache_hit and warm.cache_hit
        np.asarray(hj.jit(fn)(*fn_args))  # and what the cache gave runs
        cold_process = best(lambda: new_process(name), args.repeats, before=hj.cache.clear)
        warm_process = best(lambda: new_process(name), args.repeats)
        rows = [("IREE vs cache", cold.seconds, warm.seconds), ("fresh jit", cold_jit, warm_jit),
                ("new process", cold_process, warm_process)]
        for view, slow, fast in rows:
            print(f"| {name:24s} | {view:13s} | {slow:8.3f} | {fast:8.4f} | {slow / fast:7.1f}x |")
        notes.append(f"{name}: vmfb {len(warm.vmfb) / 1024:.0f} KiB, {warm.dispatch_count} dispatches")
    print("\n".join(notes))
    hj.cache.clear()
    os.rmdir(hj.cache.info().folder)


if __name__ == "__main__":
    main()
