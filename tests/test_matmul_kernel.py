"""pipeline/matmul_kernel.py: f32 products and channels-last convolutions as hand-written llvm-cpu dispatches (the
cpu flag set "data-tiling+matmul-kernels"), against numpy and the reference backend, with every tail of the tile
(rows past a multiple of MR, columns past a multiple of a vector, K past a multiple of the unroll)."""
from __future__ import annotations

import re

import numpy as np
import pytest
from iree.compiler import ir

import hlojit as hj
from hlojit import ops
from hlojit.pipeline import cache, legalize, matmul_kernel, quirks, targets, tuning

KERNELS = "data-tiling+matmul-kernels"


@pytest.fixture
def kernels_everywhere(monkeypatch):
    """iree:cpu with the kernels' flag set, every product and convolution claimed however small (compiled in this
    process, where MIN_WORK is patched; nothing cached)."""
    monkeypatch.setattr(matmul_kernel, "MIN_WORK", 1)
    monkeypatch.setenv("HLOJIT_COMPILE_WORKER", "0")
    monkeypatch.setenv("HLOJIT_CACHE", "0")
    backend = hj.backends.get("iree:cpu")
    monkeypatch.setattr(backend, "_target", targets.cpu(flag_set=KERNELS), raising=True)
    monkeypatch.setattr(backend, "_tune_machine", False)


def rewritten(fn, *args) -> tuple[dict, str]:
    program = hj.jit(fn).lower(*args).program
    with ir.Context() as context:
        context.load_all_available_dialects()
        module = ir.Module.parse(str(program.module))
        counts = quirks.apply(module, targets.cpu(flag_set=KERNELS))
        return counts, str(module)


# (m, k, n): rows of one tile and of a tile and a tail, one vector and a tail, K below, at and past the unroll
PRODUCTS = [(1, 1, 1), (5, 3, 7), (12, 8, 32), (13, 9, 33), (25, 17, 16), (30, 300, 70), (97, 64, 130)]


def test_products_in_every_layout_agree_with_numpy(kernels_everywhere):
    """A stored [m, k] or [k, m], B [k, n] or [n, k]: the dot_general's contracted dimensions, as given."""
    rng = np.random.default_rng(0)
    layouts = [(1, 0), (0, 0), (1, 1), (0, 1)]          # (lhs's contracted dimension, rhs's)
    args, wanted = [], []
    for m, k, n in PRODUCTS:
        a, b = rng.standard_normal((m, k), dtype=np.float32), rng.standard_normal((k, n), dtype=np.float32)
        for lc, rc in layouts:
            args += [a if lc == 1 else a.T.copy(), b if rc == 0 else b.T.copy()]
            wanted.append((a.astype(np.float64) @ b, k))

    def products(*xs):
        return tuple(ops.dot_general(x, y, (([lc], [rc])))
                     for x, y, (lc, rc) in zip(xs[0::2], xs[1::2], layouts * len(PRODUCTS)))

    counts, _ = rewritten(products, *args)
    # a product with one free dimension of 1 is a reduction before this (quirks.vector_products_as_reductions)
    assert counts["matmuls_by_kernel"] == len(layouts) * sum(m > 1 and n > 1 for m, _, n in PRODUCTS)
    for got, (want, k) in zip(hj.jit(products)(*args), wanted):
        np.testing.assert_allclose(np.asarray(got), want, rtol=2e-5, atol=2e-5 * np.sqrt(k))


def test_products_in_blocks_of_k_agree_with_numpy(kernels_everywhere, monkeypatch):
    """k past K_BLOCK goes in blocks, each tile's sums read back from the result (masked past n): blocks of 16
    with a short last one, below and past the unroll."""
    monkeypatch.setattr(matmul_kernel, "K_BLOCK", 16)
    rng = np.random.default_rng(3)
    shapes = [(13, 45, 33), (25, 17, 16), (12, 100, 64), (5, 39, 7)]
    args = [rng.standard_normal(s, dtype=np.float32) for m, k, n in shapes for s in ((m, k), (k, n))]
    got = hj.jit(lambda *xs: tuple(a @ b for a, b in zip(xs[0::2], xs[1::2])))(*args)
    for g, a, b in zip(got, args[0::2], args[1::2]):
        np.testing.assert_allclose(np.asarray(g), a.astype(np.float64) @ b, rtol=2e-5, atol=1e-4)


def test_products_of_a_stack_on_the_left_agree_with_numpy(kernels_everywhere):
    """A left operand of more dimensions, contracted in the middle, first or last (autodiff's im2col kernel
    gradients are [taps, pixels, channels] contracted over the pixels): its free dimensions are the rows."""
    rng = np.random.default_rng(2)
    cases = [((3, 20, 7), 1), ((2, 3, 17, 5), 2), ((20, 4, 5), 0), ((4, 5, 20), 2)]
    args = [rng.standard_normal(shape, dtype=np.float32) for shape, _ in cases]
    b = rng.standard_normal((20, 33), dtype=np.float32)
    b17 = rng.standard_normal((17, 33), dtype=np.float32)

    def products(*xs):
        return tuple(ops.dot_general(x, b17 if shape[c] == 17 else b, (([c], [0]))) for x, (shape, c) in zip(xs, cases))

    counts, _ = rewritten(products, *args)
    assert counts["matmuls_by_kernel"] == len(cases)
    for got, x, (shape, c) in zip(hj.jit(products)(*args), args, cases):
        want = np.tensordot(x.astype(np.float64), b17 if shape[c] == 17 else b, axes=([c], [0]))
        np.testing.assert_allclose(np.asarray(got), want, rtol=2e-5, atol=1e-4)


def test_products_reading_packed_columns_agree_with_numpy(kernels_everywhere, monkeypatch):
    """An A stored [k, m] whose stride along k aliases in L1 is packed by row tiles first (_packed_columns: zeros
    past m): every A of that layout here (ALIASING_BYTES 4), with every tail, B either way, k in blocks or not."""
    monkeypatch.setattr(matmul_kernel, "ALIASING_BYTES", 4)
    rng = np.random.default_rng(4)
    args, wanted = [], []
    shapes = PRODUCTS + [(13, 45, 33), (25, 600, 40)]
    for m, k, n in shapes:
        a, b = rng.standard_normal((k, m), dtype=np.float32), rng.standard_normal((k, n), dtype=np.float32)
        args += [a, b, b.T.copy()]
        wanted.append((a.T.astype(np.float64) @ b, k))

    def products(*xs):
        return tuple(ops.dot_general(a, b, (([0], [c]))) for a, b, bt in zip(xs[0::3], xs[1::3], xs[2::3])
                     for b, c in ((b, 0), (bt, 1)))

    counts, text = rewritten(products, *args)
    assert counts["matmuls_by_kernel"] == 2 * sum(m > 1 and n > 1 for m, _, n in shapes)
    assert "flow.dispatch @hlojit_pack_columns_" in text     # the packing of A
    got = hj.jit(products)(*args)
    for g, (want, k) in zip(got, [w for w in wanted for _ in range(2)]):
        np.testing.assert_allclose(np.asarray(g), want, rtol=2e-5, atol=2e-5 * np.sqrt(k))


def test_only_aliasing_columns_are_packed():
    """A [k, m] is packed where 4 m bytes are a multiple of ALIASING_BYTES (autodiff's x^T dy at m = 512: the kernel
    1.20 -> 0.87 ms in the MLP's training step, 2026-12-07); not at m = 784, nor a row-major A."""
    for m, packed in ((512, True), (768, True), (784, False)):
        counts, text = rewritten(lambda a, b: ops.dot_general(a, b, (([0], [0]))), np.ones((256, m), np.float32),
                                 np.ones((256, 512), np.float32))
        assert counts["matmuls_by_kernel"] == 1 and ("@hlojit_pack_columns_" in text) == packed, m
    _, text = rewritten(lambda a, b: a @ b, np.ones((512, 512), np.float32), np.ones((512, 512), np.float32))
    assert "@hlojit_pack_columns_" not in text


def test_the_rewrite_dispatches_the_kernels_and_leaves_no_product():
    a, b = np.ones((300, 256), np.float32), np.ones((256, 1024), np.float32)
    counts, text = rewritten(lambda a, b: a @ b, a, b)
    assert counts["matmuls_by_kernel"] == 1
    assert "stablehlo.dot_general" not in text
    assert text.count("flow.dispatch @hlojit_matmul_kernel_300x256_256x1024_c10") == 2    # the packing, the tile
    x, w = np.ones((8, 14, 14, 256), np.float32), np.ones((3, 3, 256, 256), np.float32)
    counts, text = rewritten(lambda x, w: ops.conv(x, w, padding=1, layout="NHWC"), x, w)
    assert counts["matmuls_by_kernel"] == 1 and "stablehlo.convolution" not in text
    assert "flow.dispatch @hlojit_conv_kernel_8x14x14x256_3x3x256x256_1x1_1x1x1x1" in text


def test_rewrites_walk_past_the_kernels_code():
    """legalize.walk lists a kernel's executable but not its code (vector, scf, memref ops), which no StableHLO
    rewrite reads: walked into, ResNet-18's training step's rewrites took 0.77 s against 0.61 (2026-12-07)."""
    a = np.ones((300, 256), np.float32)
    program = hj.jit(lambda a, b: ops.relu(a @ b)).lower(a, a.T.copy()).program
    with ir.Context() as context:
        context.load_all_available_dialects()
        module = ir.Module.parse(str(program.module))
        quirks.apply(module, targets.cpu(flag_set=KERNELS))
        names = [op.name for op in legalize.walk(module.operation)]
        assert names.count("hal.executable.source") == 2 and "flow.dispatch" in names     # the packing, the tile
        assert not [name for name in names if name.split(".")[0] in ("vector", "scf", "memref", "hal")
                    and name != "hal.executable.source"]
        assert "vector.fma" in str(module)


def test_what_the_kernels_leave_to_iree():
    """Small, batched, f64, grouped and dilated ones stay IREE's (and the flag set's other targets get no kernel)."""
    big = np.ones((512, 512), np.float32)
    cases = [(lambda a, b: a @ b, (np.ones((64, 64), np.float32),) * 2),                       # below MIN_WORK
             (lambda a, b: a @ b, (np.ones((4, 256, 256), np.float32),) * 2),                  # batched
             (lambda a, b: a @ b, (big.astype(np.float64),) * 2),                                # f64
             (lambda x, w: ops.conv(x, w, padding=1, groups=2, layout="NHWC"),
              (np.ones((8, 28, 28, 256), np.float32), np.ones((3, 3, 128, 256), np.float32))),
             (lambda x, w: ops.conv(x, w, padding=2, dilation=2, layout="NHWC"),
              (np.ones((8, 28, 28, 256), np.float32), np.ones((3, 3, 256, 256), np.float32))),
             (lambda x, w: ops.conv(x, w, padding=1, layout="NHWC"),                           # 3 channels in
              (np.ones((8, 224, 224, 3), np.float32), np.ones((3, 3, 3, 256), np.float32)))]
    for fn, args in cases:
        counts, _ = rewritten(fn, *args)
        assert "matmuls_by_kernel" not in counts, fn
    counts, _ = rewritten(lambda a, b: a @ b, big, big)
    assert counts["matmuls_by_kernel"] == 1
    # narrow: a dense layer's logits (2^20 multiply-adds, 10 columns) are the kernels'; k = 10 or 64 columns are not
    logits = (np.ones((256, 512), np.float32), np.ones((512, 10), np.float32))
    for args, claimed in ((logits, True), ((np.ones((256, 10), np.float32), np.ones((10, 512), np.float32)), False),
                          ((np.ones((256, 64), np.float32), np.ones((64, 64), np.float32)), False)):
        counts, _ = rewritten(lambda a, b: a @ b, *args)
        assert ("matmuls_by_kernel" in counts) == claimed, [a.shape for a in args]
    # more workgroups than a dispatch takes (a product of 10^7 rows)
    assert matmul_kernel._dispatchable(2048, 2048, 2048, True) and not matmul_kernel._dispatchable(10**7, 64, 64, True)
    # ... the packing of an A stored [k, m] too: 2^17 rows of A by 2^17 of k is (2^17 / 6 / 16) x 512 workgroups
    assert matmul_kernel._dispatchable(1 << 17, 1 << 17, 16, 1) and \
        not matmul_kernel._dispatchable(1 << 17, 1 << 17, 16, 1, packs_a=True)
    assert matmul_kernel.matmuls_by_kernel not in quirks.QUIRKS["vmvx"] + quirks.QUIRKS["cuda"]


CONVOLUTIONS = [  # (batch, height, width, in, out, window, stride, padding)
    (2, 14, 14, 16, 40, (3, 3), 1, 1), (1, 15, 13, 32, 33, (3, 3), 2, 1), (1, 9, 9, 24, 70, (1, 1), 1, 0),
    (3, 8, 8, 17, 96, (3, 3), 1, 0), (1, 20, 20, 16, 32, (5, 3), 2, 2), (1, 7, 7, 64, 16, (3, 3), 1, 1)]


def test_convolutions_agree_with_the_reference_backend(kernels_everywhere, monkeypatch):
    rng = np.random.default_rng(1)
    args = []
    for b, h, w, c, o, window, _, _ in CONVOLUTIONS:
        args += [rng.standard_normal((b, h, w, c), dtype=np.float32),
                 (rng.standard_normal((*window, c, o)) * 0.2).astype(np.float32)]

    def convolutions(*xs):
        return tuple(ops.conv(x, k, stride=s, padding=p, layout="NHWC")
                     for x, k, (*_, s, p) in zip(xs[0::2], xs[1::2], CONVOLUTIONS))

    counts, _ = rewritten(convolutions, *args)
    assert counts["matmuls_by_kernel"] == len(CONVOLUTIONS)
    want = hj.jit(convolutions, backend="reference")(*args)
    for k_block in (matmul_kernel.K_BLOCK, 40):    # and in blocks of whole taps (one or two of them)
        monkeypatch.setattr(matmul_kernel, "K_BLOCK", k_block)
        got = hj.jit(convolutions)(*args)
        for g, w_ in zip(got, want):
            np.testing.assert_allclose(np.asarray(g), np.asarray(w_), rtol=1e-5, atol=1e-4)


# (batch, height, width, in, out, window, stride, padding, dilation): ResNet's stem (7 x 7 / 2 over 3 channels), a
# 3 x 3 / 2 and its 1 x 1 shortcut, a dilated window, output lines shorter than the unroll
KERNEL_GRADIENTS = [(2, 16, 16, 3, 8, (7, 7), 2, 3, 1), (1, 15, 13, 16, 33, (3, 3), 2, 1, 1),
                    (2, 9, 9, 20, 16, (1, 1), 2, 0, 1), (1, 12, 11, 8, 12, (3, 2), 1, 2, 2),
                    (3, 5, 7, 12, 40, (3, 3), 1, 1, 1)]


def test_kernel_gradients_read_the_patches_from_the_input(kernels_everywhere, monkeypatch):
    """autodiff's im2col kernel gradients (each tap a strided slice of the padded input, stacked, contracted over
    the pixels) become one kernel that reads the input where it is: no slice is left; the gradients match the
    reference backend's, in blocks of whole lines of output pixels (unblocked, the same loops run once)."""
    rng = np.random.default_rng(4)
    args = []
    for b, h, w, c, o, window, *_ in KERNEL_GRADIENTS:
        args += [rng.standard_normal((b, h, w, c), dtype=np.float32),
                 (rng.standard_normal((*window, c, o)) * 0.2).astype(np.float32)]

    def kernel_gradients(*xs):
        def loss(kernels):
            return sum(ops.sum(ops.conv(x, k, stride=s, padding=p, dilation=d, layout="NHWC") ** 2)
                       for x, k, (*_, s, p, d) in zip(xs[0::2], kernels, KERNEL_GRADIENTS))
        return hj.grad(loss)(list(xs[1::2]))

    counts, text = rewritten(kernel_gradients, *args)
    kernels = {name for name in re.findall(r"@(hlojit_patch_kernel_\w+)\(", text) if not name.endswith("_pack")}
    assert len(kernels) == len(KERNEL_GRADIENTS)
    assert "stablehlo.slice" not in text and "stablehlo.concatenate" not in text
    want = hj.jit(kernel_gradients, backend="reference")(*args)
    monkeypatch.setattr(matmul_kernel, "K_BLOCK", 16)      # blocks of one to three lines, and a short last one
    for g, w_ in zip(hj.jit(kernel_gradients)(*args), want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w_), rtol=1e-4, atol=1e-3)


def test_nan_and_inf_stay_in_their_rows_and_columns(kernels_everywhere):
    """Rows past m read row m - 1 and columns past n are zeros times A: neither may reach a written element."""
    a = np.ones((13, 9), np.float32)
    b = np.ones((9, 17), np.float32)
    a[12, 3] = np.inf       # the last row: the tile's rows 13 .. 23 read it again, unwritten
    a[0, 0] = np.nan
    got = np.asarray(hj.jit(lambda a, b: a @ b)(a, b))
    with np.errstate(invalid="ignore"):
        want = a.astype(np.float64) @ b
    np.testing.assert_array_equal(got, want.astype(np.float32))
    assert np.isnan(got[0]).all() and np.isinf(got[12]).all() and np.isfinite(got[1:12]).all()


def test_the_flag_set_is_a_candidate_and_its_own_cache_key():
    assert KERNELS in targets.CPU_FLAG_SETS and targets.uses_matmul_kernels(targets.cpu(flag_set=KERNELS))
    assert not targets.uses_matmul_kernels(targets.cpu())
    sha = "0" * 64
    assert cache.key_of(sha, targets.cpu(flag_set=KERNELS)) != cache.key_of(sha, targets.cpu())
    assert any("256ch" in name for name in tuning.MICROBENCHMARKS)   # the convolutions IREE loses most on


def test_the_tile_of_cpus_without_avx512(kernels_everywhere, monkeypatch):
    """6 rows x 2 vectors of 8 (16 vector registers): the same tails, a product and a convolution."""
    monkeypatch.setattr(matmul_kernel, "tile", lambda: (6, 8))
    rng = np.random.default_rng(4)
    a, b = rng.standard_normal((13, 45), dtype=np.float32), rng.standard_normal((45, 21), dtype=np.float32)
    x, w = rng.standard_normal((1, 9, 9, 16), dtype=np.float32), rng.standard_normal((3, 3, 16, 20), dtype=np.float32)

    def fn(a, b, x, w):
        return a @ b, ops.conv(x, w, stride=2, padding=1, layout="NHWC")

    counts, text = rewritten(fn, a, b, x, w)
    assert counts["matmuls_by_kernel"] == 2 and "vector<8xf32>" in text and "vector<16xf32>" not in text
    got = hj.jit(fn)(a, b, x, w)
    want = hj.jit(fn, backend="reference")(a, b, x, w)
    for g, w_ in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w_), rtol=1e-5, atol=1e-4)


def test_the_elementwise_chain_after_a_kernel_runs_in_its_tile(kernels_everywhere, monkeypatch):
    """kernel_epilogues.py: a dense layer's bias and ReLU, a residual added (through a reshape of the product), a
    scale and a subtracted bias, the chain in the last of several blocks of k; each against the reference backend,
    and nothing of the chain left outside the kernel."""
    monkeypatch.setattr(matmul_kernel, "K_BLOCK", 16)
    rng = np.random.default_rng(7)

    def normal(*shape):
        return rng.standard_normal(shape, dtype=np.float32)
    x, w, b, r = normal(33, 40), normal(40, 70), normal(70), normal(33, 70)
    x3, r3 = normal(4, 30, 40), normal(4, 30, 70)
    cases = [(lambda x, w, b: ops.relu(x @ w + b), (x, w, b)),
             (lambda x, w, b, r: r + (x @ w + b), (x, w, b, r)),
             (lambda x, w, b: (x @ w) * 0.5 - b, (x, w, b)),
             (lambda x, w, b, r: r + hj.nn.dense(x, w, b), (x3, w, b, r3))]
    for fn, args in cases:
        counts, text = rewritten(fn, *args)
        main = text[text.index("func.func @main"):]
        assert counts["matmuls_by_kernel"] == 1 and not re.search(r"stablehlo\.(add|multiply|subtract|maximum) ", main)
        np.testing.assert_allclose(np.asarray(hj.jit(fn)(*args)), np.asarray(hj.jit(fn, backend="reference")(*args)),
                                   rtol=1e-5, atol=1e-4)
    # a product of the same shapes with no chain, and one with another: three kernels, one packing of B
    counts, text = rewritten(lambda x, w, b: (x @ w, ops.relu(x @ w + b), (x @ w) * 2.0), x, w, b)
    assert counts["matmuls_by_kernel"] == 3 and text.count("hal.executable.source private") == 4


def test_what_stays_outside_a_kernels_tile(kernels_everywhere):
    """A product used twice, an operand computed from the product itself, a division, and a maximum with anything
    but 0 end the chain where they stand; a convolution takes none (the results still right)."""
    rng = np.random.default_rng(8)
    x, w, b = rng.standard_normal((33, 40), dtype=np.float32), rng.standard_normal((40, 70), dtype=np.float32), \
        rng.standard_normal(70, dtype=np.float32)
    def used_twice(x, w, b):
        y = x @ w
        return y + b, y
    cases = [(used_twice, "add"),
             (lambda x, w, b: (x @ w + b) * ops.exp(x @ w + b), "multiply"),
             (lambda x, w, b: (x @ w + b) / 3.0, "divide"),
             (lambda x, w, b: ops.maximum(x @ w + b, 1.0), "maximum")]
    xc, wc, s = rng.standard_normal((2, 9, 9, 16), dtype=np.float32), \
        rng.standard_normal((3, 3, 16, 24), dtype=np.float32), rng.standard_normal(24, dtype=np.float32)
    args = [(x, w, b)] * len(cases) + [(xc, wc, s)]
    cases.append((lambda x, w, s: ops.relu(ops.conv(x, w, padding=1, layout="NHWC") * s), "multiply"))
    for (fn, kept), arguments in zip(cases, args):
        counts, text = rewritten(fn, *arguments)
        assert f"stablehlo.{kept} " in text[text.index("func.func @main"):], kept
        want = hj.jit(fn, backend="reference")(*arguments)
        for g, wt in zip(*(v if isinstance(v, tuple) else (v,) for v in (hj.jit(fn)(*arguments), want))):
            np.testing.assert_allclose(np.asarray(g), np.asarray(wt), rtol=1e-5, atol=1e-4)
