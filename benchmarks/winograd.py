"""hlojit's Winograd rewrite (pipeline/winograd.py) against IREE's own lowering of the same 3x3 convolution,
per ResNet-18 layer shape, on iree:cpu.

    python benchmarks/winograd.py [--rounds 5] [--batches 1 8]
    python benchmarks/winograd.py --resnet [--rounds 5] [--batches 8]


Per shape (channels-last, SAME padding, f32) four programs: IREE's convolution (`conv`), hlojit's im2col
matmul (`im2col`, what hj's conv builds at 128 channels or more), Winograd F(2x2,3x3) (`wino2`) and
F(4x4,3x3) (`wino4`). Timed interleaved over `--rounds` rounds (one call of each per round, after a
warm-up), the best call counts (a loaded machine only adds time); printed as times and ratios to `conv`.

`--resnet`: ResNet-18 forward (samples/resnet18.py) with each convolution's Winograd choice tuned on this
machine (pipeline/tuning.py's winograd_plan, what `autotune=True` does before its flag-set search) against
the same program untuned, in a fresh cache folder: what was chosen per layer shape, what tuning cost once,
and both forwards timed interleaved (best and median of --rounds), their results compared.
"""
import argparse
import os
import statistics
import sys
import tempfile
import time

import numpy as np
from iree.compiler import ir

import hlojit as hj
from hlojit import ops
from hlojit.backends.iree import call_timer
from hlojit.pipeline import tuning, winograd

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "samples"))
import resnet18  # noqa: E402  (samples/)

LAYERS = [(64, 56), (128, 28), (256, 14), (512, 7)]   # ResNet-18's 3x3 stride-1 convolutions: channels, size


def conv_text(batch: int, channels: int, size: int) -> str:
    t = f"tensor<{batch}x{size}x{size}x{channels}xf32>"
    k = f"tensor<3x3x{channels}x{channels}xf32>"
    return (f"func.func @main(%a: {t}, %b: {k}) -> {t} {{\n  %0 = stablehlo.convolution(%a, %b) dim_numbers = "
            "[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 1], pad = [[1, 1], [1, 1]]} "
            f"{{batch_group_count = 1 : i64, feature_group_count = 1 : i64}} : ({t}, {k}) -> {t}\n"
            f"  return %0 : {t}\n}}")


def rewritten(text: str, m: int) -> str:
    with ir.Context() as context:
        context.load_all_available_dialects()
        module = ir.Module.parse(text)
        assert winograd.winograd_convolutions(module, m) == 1
        return str(module)


def programs(batch: int, channels: int, size: int) -> dict:
    text = conv_text(batch, channels, size)
    im2col = hj.jit(lambda x, w: ops.conv(x, w, padding="SAME", layout="NHWC"), backend="iree:cpu")
    return {"conv": hj.from_mlir(text, backend="iree:cpu"), "im2col": im2col,
            "wino2": hj.from_mlir(rewritten(text, 2), backend="iree:cpu"),
            "wino4": hj.from_mlir(rewritten(text, 4), backend="iree:cpu")}


def measure(batch: int, channels: int, size: int, rounds: int) -> dict:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((batch, size, size, channels)).astype(np.float32)
    w = (rng.standard_normal((3, 3, channels, channels)) / np.sqrt(9 * channels)).astype(np.float32)
    runs = programs(batch, channels, size)
    expected = np.asarray(runs["conv"](x, w))
    for name, run in runs.items():   # warm-up, and the answers agree
        np.testing.assert_allclose(np.asarray(run(x, w)), expected, rtol=1e-3, atol=1e-3, err_msg=name)
    best = {name: float("inf") for name in runs}
    for _ in range(rounds):
        for name, run in runs.items():
            start = time.perf_counter()
            np.asarray(run(x, w))
            best[name] = min(best[name], time.perf_counter() - start)
    return best


def tuned_resnet(batch: int, rounds: int):
    """ResNet-18 forward untuned and with per-layer Winograd tuning, timed interleaved; printed."""
    rng = np.random.default_rng(0)
    params = resnet18.init_params()
    images = rng.standard_normal((batch, 3, 224, 224)).astype(np.float32)
    leaves = hj.tree_util.tree_leaves((params, images))
    program = hj.jit(resnet18.resnet18).lower(params, images).program
    assert [tuple(shape) for shape, _ in program.inputs] == [leaf.shape for leaf in leaves]
    target = hj.backends.get("iree:cpu").target
    start = time.perf_counter()
    marked, note = tuning.winograd_plan(program, target, call_timer)
    print(f"ResNet-18 b{batch} on {target.label}: tuning took {time.perf_counter() - start:.1f} s; {note}; "
          f"{marked.mlir.count(winograd.CHOICE_ATTRIBUTE + ' = 0')} of "
          f"{marked.mlir.count(winograd.CHOICE_ATTRIBUTE)} 3x3 stride-1 convolutions left plain", flush=True)
    runs, results = {}, {}
    for name, text in (("untuned", program.mlir), ("tuned", marked.mlir)):
        start = time.perf_counter()
        runs[name] = hj.from_mlir(text, backend="iree:cpu")     # compiles (or reads the cache folder)
        results[name] = np.asarray(runs[name](*leaves))
        print(f"  {name}: compile and first call {time.perf_counter() - start:.1f} s", flush=True)
    scale = np.abs(results["untuned"]).max()
    print(f"  largest difference tuned - untuned: {np.abs(results['tuned'] - results['untuned']).max() / scale:.2e}"
          " of the largest output", flush=True)
    seconds = {name: [] for name in runs}
    for _ in range(rounds):
        for name, run in runs.items():
            start = time.perf_counter()
            np.asarray(run(*leaves))
            seconds[name].append(time.perf_counter() - start)
    for name, times in seconds.items():
        print(f"  {name}: best {min(times) * 1e3:.0f} ms, median {statistics.median(times) * 1e3:.0f} ms")
    ratios = [t / u for t, u in zip(seconds["tuned"], seconds["untuned"])]
    print(f"  tuned / untuned per round: {' '.join(f'{r:.2f}' for r in ratios)} "
          f"(median {statistics.median(ratios):.2f})", flush=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--batches", type=int, nargs="+", default=[1, 8])
    parser.add_argument("--resnet", action="store_true", help="ResNet-18 forward tuned per layer against untuned")
    args = parser.parse_args()
    if args.resnet:
        os.environ.setdefault("HLOJIT_CACHE_DIR", tempfile.mkdtemp(prefix="hlojit-winograd-bench-"))
        for batch in args.batches:
            tuned_resnet(batch, args.rounds)
        return
    print(f"{'layer':<18}{'conv ms':>9}{'im2col':>9}{'wino2':>9}{'wino4':>9}   ratios to conv (lower is faster)")
    for batch in args.batches:
        for channels, size in LAYERS:
            best = measure(batch, channels, size, args.rounds)
            ratios = " ".join(f"{name} {best[name] / best['conv']:.2f}" for name in ("im2col", "wino2", "wino4"))
            print(f"{channels}ch {size}x{size} b{batch:<4}" + "".join(f"{best[n] * 1e3:9.1f}" for n in best)
                  + f"   {ratios}", flush=True)


if __name__ == "__main__":
    main()
