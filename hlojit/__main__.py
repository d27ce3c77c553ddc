"""The `hlojit` command (also `python -m hlojit`): tour, explain, export, run, cache, targets.

    hlojit explain model.py:layer --arg f32[8,64] --arg f32[64,32] --stage assembly
    hlojit export model.py:layer --arg 8x64xf32 --arg @w.npy --target cpu -o out/layer
    hlojit run out/layer.vmfb --input 8x64xf32=1 --input @w.npy      (also a .mlir file, --target reference)

`--arg` (explain, export) and `--input` (run) are written the same way:
    8x64xf32=1, 2x3xi32=1 2 3 4 5 6, f32=2.5, 4xf32    IREE's syntax: one value fills the shape; none: zeros
    f32[8,64]=1, i32[3]=1,2,3, f32[2,3]                  the same in hlojit's spelling
    @x.npy                                               an array file
    @params.npz                                          a pytree: an hj.save_checkpoint file, else a dict
    3, 2.5, true                                         Python scalars (weakly typed, as in a call)
A user's mistake (a missing file, a wrong shape, a value that does not read) is one line on stderr,
`hlojit: error: ...`, and exit status 2.
"""
from __future__ import annotations

import argparse
import contextlib
import importlib.util
import math
import os
import re
import sys
import threading
import time

import numpy as np

from . import Exec, cache, checkpoint, export, from_mlir, jit, load, tour
from .backends import NAMES
from .dialects.types import SUPPORTED_DTYPES, spelling
from .errors import HlojitError
from .frontend import pytree
from .testing import _can_run

TARGETS = ("cpu", "vmvx", "cuda")       # --target of explain, export and run (run also takes "reference")
DTYPES = {spelling(d): np.dtype(d) for d in SUPPORTED_DTYPES} | {"bool": np.dtype(bool)}
_HLOJIT_ARRAY = re.compile(r"^(\w+)\[([\d, ]*)\](?:=(.*))?$", re.S)    # f32[2,3]=1,2,3,4,5,6
_IREE_ARRAY = re.compile(r"^((?:\d+x)*)([a-z]+\d*)(?:=(.*))?$", re.S)    # 2x3xf32=1 2 3 4 5 6
_BOOLS = {"true": True, "false": False, "1": True, "0": False}


class UsageError(Exception):
    """A mistake on the command line: printed as one line, exit status 2."""


def parse_value(spec: str):
    """An argument or input as the module docstring writes them: an array, a pytree or a Python scalar."""
    spec = spec.strip()
    if spec.startswith("@"):
        return _read_file(spec[1:])
    scalar = _python_scalar(spec)
    if scalar is not None:
        return scalar
    match = _HLOJIT_ARRAY.match(spec)
    if match:
        dtype_name, dims, values = match[1], [d for d in match[2].replace(" ", "").split(",") if d], match[3]
    elif match := _IREE_ARRAY.match(spec):
        dtype_name, dims, values = match[2], match[1].split("x")[:-1], match[3]
    else:
        raise UsageError(f"cannot read {spec!r}: write an array as 2x3xf32=1 2 3 4 5 6, 8x64xf32=1 (filled), "
                         "f32[2,3]=1,2,3,4,5,6 or @x.npy, a pytree as @params.npz, a scalar as 3 or 2.5")
    if dtype_name not in DTYPES:
        raise UsageError(f"{spec!r}: unknown dtype {dtype_name!r} (dtypes: {', '.join(DTYPES)})")
    return _filled(spec, tuple(int(d) for d in dims), DTYPES[dtype_name], values)


def _python_scalar(spec: str):
    if spec.lower() in ("true", "false"):
        return spec.lower() == "true"
    for kind in (int, float):
        try:
            return kind(spec)
        except ValueError:
            pass
    return None


def _filled(spec: str, shape: tuple, dtype: np.dtype, values: str | None) -> np.ndarray:
    """The array of `shape` from `values`: none (zeros), one (fills the shape), all of them, or @raw.bin."""
    if values is None:
        return np.zeros(shape, dtype)
    if values.startswith("@"):  # IREE's 2x3xf32=@raw.bin: the bytes of the array
        flat = np.fromfile(values[1:], dtype)
    else:
        tokens = values.replace(",", " ").split()
        try:
            parse = (lambda t: _BOOLS[t.lower()]) if dtype == np.bool_ else int if dtype.kind in "iu" else float
            flat = np.array([parse(t) for t in tokens], dtype)
        except (KeyError, ValueError, OverflowError) as e:
            raise UsageError(f"{spec!r}: the values do not read as {dtype.name}: {e}") from None
    count = math.prod(shape)
    if flat.size == 1:
        return np.full(shape, flat[0], dtype)
    if flat.size != count:
        raise UsageError(f"{spec!r}: {flat.size} values for shape {shape} ({count} elements; or one value to "
                         "fill it)")
    return flat.reshape(shape)


def _read_file(path: str):
    """@x.npy: the array; @x.npz: the tree hj.save_checkpoint wrote, or a plain npz as a dict of arrays."""
    if not os.path.isfile(path):
        raise UsageError(f"@{path}: no such file")
    if not path.endswith(".npz"):
        return np.load(path, allow_pickle=False)
    with np.load(path, allow_pickle=False) as npz:
        if checkpoint._META in npz.files:
            return checkpoint.load(path)
        return {name: npz[name] for name in npz.files}


def load_function(where: str):
    """`path/to/file.py:function` -> the function (an hj.jit function or a plain one)."""
    path, _, name = where.rpartition(":")
    if not path or not name:
        raise UsageError(f"{where!r} is not FILE.py:FUNCTION")
    if not os.path.isfile(path):
        raise UsageError(f"{path}: no such file (in {where!r})")
    spec = importlib.util.spec_from_file_location(os.path.splitext(os.path.basename(path))[0], path)
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    spec.loader.exec_module(module)
    if not hasattr(module, name):
        raise UsageError(f"{path} has no function {name!r}")
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


def cmd_tour(args):
    tour.main(calls=args.calls, **({"backends": tuple(args.backend)} if args.backend else {}))


def cmd_explain(args):
    fn = load_function(args.function)
    fn = fn if isinstance(fn, Exec) else jit(fn)
    values = [parse_value(a) for a in args.arg]
    with progress(f"compiling {fn.name} for {args.target}"):
        explanation = fn.explain(*values, target=args.target)
    print(explanation.stage(args.stage) if args.stage else explanation)


def cmd_export(args):
    fn = load_function(args.function)
    values = [parse_value(a) for a in args.arg]
    with progress(f"compiling for {args.target}"):
        export(fn, *values, target=args.target, path=args.output)
    print(f"wrote {args.output}.vmfb, {args.output}.mlir and {args.output}.json")


def cmd_run(args):
    inputs = [parse_value(a) for a in args.input]
    if args.path.endswith(".mlir"):
        if not os.path.isfile(args.path):
            raise UsageError(f"{args.path}: no such file")
        backend = "reference" if args.target == "reference" else f"iree:{args.target or 'cpu'}"
        runnable = from_mlir(args.path, entry=args.entry, backend=backend)
    else:
        runnable = load(args.path.removesuffix(".vmfb"))
        compiled_for = runnable.manifest.target["name"]
        if args.target not in (None, compiled_for):
            raise UsageError(f"{args.path} is compiled for {compiled_for}, not {args.target} (export it again "
                             f"with --target {args.target})")
    for i, out in enumerate(pytree.flatten(runnable(*inputs))[0]):
        print(f"out{i} = {np.asarray(out)!r}")


def cmd_cache(args):
    if args.action == "clear":
        cache.clear()
        print("hlojit cache cleared")
    else:
        print(cache.info())


def cmd_targets(args):
    for name in NAMES:
        runs, why = _can_run(name)
        print(f"{name:10s} {'runs here' if runs else 'compiles only: ' + why.splitlines()[0]}")


def _target(name: str) -> str:
    """`cpu` and `iree:cpu` (a backend's name) are the same target."""
    return name.removeprefix("iree:")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="hlojit", description="JIT-compile Python array functions with IREE")
    commands = parser.add_subparsers(dest="command", required=True)
    value_help = "8x64xf32=1 (IREE's syntax), f32[2,3]=1,2,3,4,5,6, @x.npy, @tree.npz or a scalar (repeatable)"

    tour_ = commands.add_parser("tour", help="f(x) = x**4 + 1 on every backend: StableHLO, compile vs cached "
                                             "call, calls/s, and fusion")
    tour_.add_argument("--calls", type=int, default=100_000, help="calls per backend (default 100,000)")
    tour_.add_argument("--backend", action="append", help="a backend to run (repeatable; default: all that run)")
    tour_.set_defaults(run=cmd_tour)

    explain = commands.add_parser("explain", help="every compile stage of FILE:FUNC, and what fused with what")
    explain.add_argument("function", help="FILE.py:FUNCTION")
    explain.add_argument("--arg", action="append", default=[], help="an example argument: " + value_help)
    explain.add_argument("--target", default="cpu", type=_target, choices=TARGETS)
    explain.add_argument("--stage", choices=["stablehlo", "optimized", "dispatches", "llvm_ir", "assembly"])
    explain.set_defaults(run=cmd_explain)

    export_ = commands.add_parser("export", help="write PATH.vmfb, PATH.mlir and PATH.json for FILE:FUNC")
    export_.add_argument("function", help="FILE.py:FUNCTION")
    export_.add_argument("--arg", action="append", default=[], help="an example argument: " + value_help)
    export_.add_argument("--target", default="cpu", type=_target, choices=TARGETS)
    export_.add_argument("-o", "--output", required=True, help="output path without extension")
    export_.set_defaults(run=cmd_export)

    run = commands.add_parser("run", help="run an exported PATH.vmfb (with its .json) or a StableHLO .mlir")
    run.add_argument("path")
    run.add_argument("--input", action="append", default=[], help="an input: " + value_help)
    run.add_argument("--entry", default="main", help="entry function of a .mlir file")
    run.add_argument("--target", "--backend", dest="target", type=_target, choices=TARGETS + ("reference",),
                     help="where a .mlir file runs (default cpu); a .vmfb runs on the target it was exported for")
    run.set_defaults(run=cmd_run)

    cache_ = commands.add_parser("cache", help="the persistent compile cache")
    cache_.add_argument("action", choices=["info", "clear"])
    cache_.set_defaults(run=cmd_cache)

    targets = commands.add_parser("targets", help="which backends run here, and why not")
    targets.set_defaults(run=cmd_targets)
    return parser


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    try:
        args.run(args)
    except BrokenPipeError:  # `hlojit explain ... | head`: the reader left; not an error
        sys.stdout = open(os.devnull, "w")
    except (UsageError, HlojitError, OSError, ValueError) as e:  # the user's mistake: one line, not a traceback
        print(f"hlojit: error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
