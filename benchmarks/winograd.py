"""hlojit's Winograd rewrite (pipeline/winograd.py) against IREE's own lowering of the same 3x3 convolution,
per ResNet-18 layer shape, on iree:cpu.

    python benchmarks/winograd.py [--rounds 5] [--batches 1 8]

Per shape (channels-last, SAME padding, f32) four programs: IREE's convolution (`conv`), hlojit's im2col
matmul (`im2col`, what hj's conv builds at 128 channels or more), Winograd F(2x2,3x3) (`wino2`) and
F(4x4,3x3) (`wino4`). Timed interleaved over `--rounds` rounds (one call of each per round, after a
warm-up), the best call counts (a loaded machine only adds time); printed as times and ratios to `conv`.
"""
import argparse
import time

import numpy as np
from iree.compiler import ir

import hlojit as hj
from hlojit import ops
from hlojit.pipeline import winograd

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


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--batches", type=int, nargs="+", default=[1, 8])
    args = parser.parse_args()
    print(f"{'layer':<18}{'conv ms':>9}{'im2col':>9}{'wino2':>9}{'wino4':>9}   ratios to conv (lower is faster)")
    for batch in args.batches:
        for channels, size in LAYERS:
            best = measure(batch, channels, size, args.rounds)
            ratios = " ".join(f"{name} {best[name] / best['conv']:.2f}" for name in ("im2col", "wino2", "wino4"))
            print(f"{channels}ch {size}x{size} b{batch:<4}" + "".join(f"{best[n] * 1e3:9.1f}" for n in best)
                  + f"   {ratios}", flush=True)


if __name__ == "__main__":
    main()
