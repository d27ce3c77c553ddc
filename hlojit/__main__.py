"""The `hlojit` command (also `python -m hlojit`): tour, explain, export, run, cache, targets.

    hlojit explain model.py:layer --arg f32[8,64] --arg f32[64,32] --arg f32[32] --stage assembly
    hlojit export model.py:layer --arg f32[8,64] ... --target cuda -o out/layer
    hlojit run out/layer.vmfb --input f32[2]=1,2     (also a .mlir file; --input @x.npy)
"""
from __future__ import annotations

import argparse
import contextlib
import importlib.util
import os
import re
import sys
import threading
import time

import numpy as np

_ARG = re.compile(r"^(\w+)\[([\d, ]*)\](?:=(.*))?$")


def parse_array(spec: str) -> np.ndarray:
    """`f32[2,3]` (zeros), `i32[3]=1,2,3` (values), `f32[]=2.5`, or `@file.npy`."""
    from .dialects.types import SUPPORTED_DTYPES, spelling
    if spec.startswith("@"):
        return np.load(spec[1:])
    match = _ARG.match(spec.strip())
    names = {spelling(d): d for d in SUPPORTED_DTYPES} | {"bool": np.dtype(bool)}
    if not match or match.group(1) not in names:
        raise SystemExit(f"hlojit: cannot read array {spec!r}: write it like f32[2,3], i32[3]=1,2,3 or @x.npy "
                         f"(dtypes: {', '.join(names)})")
    dtype = names[match.group(1)]
    shape = tuple(int(d) for d in match.group(2).replace(" ", "").split(",") if d)
    if match.group(3) is None:
        return np.zeros(shape, dtype)
    values = np.array([float(v) for v in match.group(3).split(",") if v.strip()], dtype=np.float64)
    return values.astype(dtype).reshape(shape)


def load_function(where: str):
    """`path/to/file.py:function` -> the function (an hj.jit function or a plain one)."""
    path, _, name = where.rpartition(":")
    if not path or not name or not os.path.exists(path):
        raise SystemExit(f"hlojit: {where!r} must be FILE.py:FUNCTION with an existing file")
    spec = importlib.util.spec_from_file_location(os.path.splitext(os.path.basename(path))[0], path)
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    spec.loader.exec_module(module)
    if not hasattr(module, name):
        raise SystemExit(f"hlojit: {path} has no function {name!r}")
    return getattr(module, name)


@contextlib.contextmanager
def progress(what: str):
    """On a terminal, show that a long compile is alive (seconds so far); silent otherwise."""
    if not sys.stderr.isatty():
        yield
        return
    done = threading.Event()
    start = time.perf_counter()

    def tick():
        while not done.wait(0.5):
            sys.stderr.write(f"\r{what} ... {time.perf_counter() - start:.1f} s")
            sys.stderr.flush()
    thread = threading.Thread(target=tick, daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()
        sys.stderr.write("\r" + " " * (len(what) + 16) + "\r")


def _jit(fn):
    from . import Exec, jit
    return fn if isinstance(fn, Exec) else jit(fn)


def cmd_tour(args):
    from . import tour
    tour.main(calls=args.calls, **({"backends": tuple(args.backend)} if args.backend else {}))


def cmd_explain(args):
    fn = _jit(load_function(args.function))
    with progress(f"compiling {fn.name} for {args.target}"):
        explanation = fn.explain(*[parse_array(a) for a in args.arg], target=args.target)
    print(explanation.stage(args.stage) if args.stage else explanation)


def cmd_export(args):
    from . import export
    fn = load_function(args.function)
    with progress(f"compiling for {args.target}"):
        export(fn, *[parse_array(a) for a in args.arg], target=args.target, path=args.output)
    print(f"wrote {args.output}.vmfb, {args.output}.mlir and {args.output}.json")


def cmd_run(args):
    from . import from_mlir, load
    inputs = [parse_array(a) for a in args.input]
    if args.path.endswith(".mlir"):
        runnable = from_mlir(args.path, entry=args.entry, backend=args.backend)
    else:
        runnable = load(args.path[:-5] if args.path.endswith(".vmfb") else args.path)
    outputs = runnable(*inputs)
    for i, out in enumerate(outputs if isinstance(outputs, (tuple, list)) else [outputs]):
        print(f"out{i} = {np.asarray(out)!r}")


def cmd_cache(args):
    from . import cache
    if args.action == "clear":
        cache.clear()
        print("hlojit cache cleared")
    else:
        print(cache.info())


def cmd_targets(args):
    from .backends import NAMES
    from .testing import _can_run
    for name in NAMES:
        runs, why = _can_run(name)
        print(f"{name:10s} {'runs here' if runs else 'compiles only: ' + why.splitlines()[0]}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="hlojit", description="JIT-compile Python array functions with IREE")
    commands = parser.add_subparsers(dest="command", required=True)

    tour = commands.add_parser("tour", help="f(x) = x**4 + 1 on every backend: StableHLO, compile vs cached "
                                            "call, calls/s, and fusion")
    tour.add_argument("--calls", type=int, default=100_000, help="calls per backend (default 100,000)")
    tour.add_argument("--backend", action="append", help="a backend to run (repeatable; default: all that run here)")
    tour.set_defaults(run=cmd_tour)

    explain = commands.add_parser("explain", help="every compile stage of FILE:FUNC, and what fused with what")
    explain.add_argument("function", help="FILE.py:FUNCTION")
    explain.add_argument("--arg", action="append", default=[], help="an example argument, e.g. f32[2,3]")
    explain.add_argument("--target", default="cpu", choices=["cpu", "cuda", "vmvx"])
    explain.add_argument("--stage", choices=["stablehlo", "optimized", "dispatches", "llvm_ir", "assembly"])
    explain.set_defaults(run=cmd_explain)

    export = commands.add_parser("export", help="write PATH.vmfb, PATH.mlir and PATH.json for FILE:FUNC")
    export.add_argument("function", help="FILE.py:FUNCTION")
    export.add_argument("--arg", action="append", default=[], help="an example argument, e.g. f32[2,3]")
    export.add_argument("--target", default="cpu", choices=["cpu", "cuda", "vmvx"])
    export.add_argument("-o", "--output", required=True, help="output path without extension")
    export.set_defaults(run=cmd_export)

    run = commands.add_parser("run", help="run an exported PATH.vmfb (with its .json) or a StableHLO .mlir")
    run.add_argument("path")
    run.add_argument("--input", action="append", default=[], help="f32[2]=1,2 or @x.npy (repeatable)")
    run.add_argument("--entry", default="main", help="entry function of a .mlir file")
    run.add_argument("--backend", default=None, help="backend for a .mlir file (default iree:cpu)")
    run.set_defaults(run=cmd_run)

    cache = commands.add_parser("cache", help="the persistent compile cache")
    cache.add_argument("action", choices=["info", "clear"])
    cache.set_defaults(run=cmd_cache)

    targets = commands.add_parser("targets", help="which backends run here, and why not")
    targets.set_defaults(run=cmd_targets)

    args = parser.parse_args(argv)
    try:
        args.run(args)
    except BrokenPipeError:  # `hlojit explain ... | head`: the reader left; not an error
        sys.stdout = open(os.devnull, "w")
    return 0


if __name__ == "__main__":
    sys.exit(main())
