"""hlojit's composites (frontend/composites.py) and the llvm-cpu kernels that take them (pipeline/kernels.py):
the traced op, the rewrite on each target, and the kernel's numbers against numpy and the reference backend
(which runs the decomposition), with gradients and vmap going through the composite. eigh's and svd's:
tests/test_spectral_kernels.py."""
from __future__ import annotations

import re

import numpy as np
import pytest
from iree.compiler import ir

import hlojit as hj
from hlojit import ops
from hlojit.pipeline import kernels, quirks, register_tiles, targets
from conftest import line_in


def spd(shape, dtype, seed=0):
    """Symmetric positive definite matrices (..., n, n) whose upper triangle is garbage (never read)."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    out = a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])
    n = shape[-1]
    out[..., np.triu_indices(n, 1)[0], np.triu_indices(n, 1)[1]] = 7.0
    return out.astype(dtype)


def numpy_cholesky(a):
    lower = np.tril(a.astype(np.float64))
    return np.linalg.cholesky(lower + np.swapaxes(np.tril(lower, -1), -1, -2))


def on_each(fn, inputs: list, backend: str) -> list:
    """fn of each input, as one compiled program (one compile for all the shapes of a test)."""
    return hj.jit(lambda *xs: tuple(fn(x) for x in xs), backend=backend)(*inputs)


def rewritten_for(target: str, x) -> tuple[dict, str]:
    program = hj.jit(ops.linalg.cholesky).lower(x).program
    with ir.Context() as context:
        context.load_all_available_dialects()
        module = ir.Module.parse(str(program.module))
        counts = quirks.apply(module, targets.get(target))
        assert module.operation.verify()
        return counts, str(module)


def test_cholesky_traces_to_one_composite_and_its_decomposition():
    text = str(hj.jit(ops.linalg.cholesky).lower(np.eye(4, dtype=np.float32)).program.module)
    assert text.count('stablehlo.composite "hlojit.cholesky" %arg0 {decomposition = @hlojit_cholesky_0}') == 1
    assert "func.func private @hlojit_cholesky_0(%arg0: tensor<4x4xf32>) -> tensor<4x4xf32>" in text


def test_every_op_of_the_decomposition_names_the_users_line():
    """The decomposition's ops are built at the user's line found once (trace.at_location), as the walk of
    each op's frames found it."""
    def solve(a, b):
        return ops.linalg.solve(a, b)   # the line
    module = hj.jit(solve).lower(np.eye(3, dtype=np.float32), np.ones(3, np.float32)).program.module
    text = module.operation.get_asm(enable_debug_info=True)
    line = line_in(__file__, "ops.linalg.solve(a, b)   # the line")
    private = text[text.index("func.func private"):]
    locations = set(re.findall(r'loc\("([^"]+)":(\d+):\d+\)', private))
    assert locations == {(__file__, str(line))}, locations


def test_the_decomposition_is_traced_once_per_operand_type():
    def two(a, b, c):
        return ops.linalg.cholesky(a), ops.linalg.cholesky(b), ops.linalg.cholesky(c)
    eye = np.eye(3, dtype=np.float32)
    text = str(hj.jit(two).lower(eye, eye, np.eye(3)).program.module)
    assert text.count("stablehlo.composite") == 3 and text.count("func.func private") == 2


def test_cpu_takes_the_kernel_and_other_targets_the_decomposition():
    x = np.eye(8, dtype=np.float32)
    counts, text = rewritten_for("cpu", x)
    assert counts["kernel_dispatches"] == 1
    assert "hal.executable.source private @hlojit_cholesky_kernel_8x8_float32_executable" in text
    assert "flow.dispatch @hlojit_cholesky_kernel_8x8_float32_executable::@hlojit_cholesky_kernel_8x8_float32" in text
    assert "stablehlo.composite" not in text and "func.func private @hlojit_cholesky_0" not in text
    for target in ("vmvx", "cuda"):
        counts, text = rewritten_for(target, x)
        assert "kernel_dispatches" not in counts and counts["calls_inlined"] == 1
        assert "stablehlo.composite" not in text and "flow.dispatch" not in text and "stablehlo.while" in text


@pytest.mark.parametrize("dtype, expected", [(np.float32, True), (np.float64, True), (np.float16, False)])
def test_the_kernel_claims_only_what_it_was_written_for(dtype, expected):
    counts, text = rewritten_for("cpu", np.eye(5, dtype=dtype))
    assert ("kernel_dispatches" in counts) is expected and "stablehlo.composite" not in text


SQUARE_SHAPES = [(1, 1), (2, 2), (9, 9), (3, 2, 17, 17), (64, 64), (130, 130)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_cholesky_kernel_matches_numpy_and_the_reference(dtype):
    inputs = [spd(shape, dtype) for shape in SQUARE_SHAPES]
    tolerance = 2e-6 if dtype == np.float32 else 1e-13
    for a, ours, reference in zip(inputs, on_each(ops.linalg.cholesky, inputs, "iree:cpu"),
                                  on_each(ops.linalg.cholesky, inputs, "reference")):
        ours, reference = np.asarray(ours), np.asarray(reference)
        assert ours.dtype == dtype and ours.shape == a.shape
        scale = np.abs(reference).max()
        np.testing.assert_allclose(ours, numpy_cholesky(a), atol=tolerance * scale, rtol=0)
        np.testing.assert_allclose(ours, reference, atol=tolerance * scale, rtol=0)
        assert np.all(np.triu(ours, 1) == 0)


def test_cholesky_kernel_gives_jax_nan_triangle_where_not_positive_definite():
    a = np.array([[[4.0, 0.0, 0.0], [2.0, 1.0, 0.0], [0.0, 0.0, 1.0]],
                  [[4.0, 0.0, 0.0], [2.0, 2.0, 0.0], [0.0, 0.0, 1.0]]], np.float32)   # the first: pivot 0
    ours = np.asarray(hj.jit(ops.linalg.cholesky, backend="iree:cpu")(a))
    reference = np.asarray(hj.jit(ops.linalg.cholesky, backend="reference")(a))
    lower = np.tril(np.ones((3, 3), bool))
    assert np.isnan(ours[0][lower]).all() and np.all(ours[0][~lower] == 0)
    np.testing.assert_allclose(ours[1], numpy_cholesky(a[1]), atol=1e-6)
    np.testing.assert_array_equal(np.isnan(ours), np.isnan(reference))


def test_big_cholesky_is_one_kernel_on_cpu_with_a_padded_working_copy():
    counts, text = rewritten_for("cpu", np.eye(300, dtype=np.float32))
    assert counts["kernel_dispatches"] == 1 and "stablehlo.composite" not in text
    assert "stablehlo.dot_general" not in text and text.count("flow.dispatch @") == 1
    # rows of 304 floats (19 lines of 64 bytes): no two of the next 63 rows lie a multiple of 4 KiB apart
    assert "memref<1x300x304xf32>" in text and "strided<[91200, 304, 1]>" in text


def test_padded_rows_are_an_odd_number_of_lines():
    for n, element, row in [(1, "f32", 16), (16, "f32", 16), (17, "f32", 48), (256, "f32", 272), (257, "f32", 272),
                            (1024, "f32", 1040), (1008, "f32", 1008), (256, "f64", 264), (2048, "f64", 2056)]:
        assert register_tiles.padded_row(n, element) == row
        size = 8 if element == "f64" else 4
        assert all(distance * row * size % 4096 for distance in range(1, 64))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_cholesky_kernel_matches_numpy_at_sizes_its_tiles_and_padding_meet(dtype):
    """300: tiles of 8 rows and a remainder row by row; 256: rows 4 KiB apart unpadded, a batch of two."""
    inputs = [spd((300, 300), dtype), spd((2, 256, 256), dtype, seed=1)]
    tolerance = 2e-6 if dtype == np.float32 else 1e-13
    for a, ours in zip(inputs, on_each(ops.linalg.cholesky, inputs, "iree:cpu")):
        ours = np.asarray(ours)
        assert ours.dtype == dtype and np.all(np.triu(ours, 1) == 0)
        np.testing.assert_allclose(ours, numpy_cholesky(a), atol=tolerance * np.abs(ours).max(), rtol=0)


def test_cholesky_kernel_gives_the_whole_nan_triangle_where_any_pivot_fails():
    good = spd((300, 300), np.float32)
    late, early, nan = good.copy(), good.copy(), good.copy()
    late[280, 280] = -1e6    # a late pivot fails: the columns before it are finite
    early[3, 3] = -1e6
    nan[200, 7] = np.nan
    lower = np.tril(np.ones((300, 300), bool))
    for bad in on_each(ops.linalg.cholesky, [late, early, nan], "iree:cpu"):
        bad = np.asarray(bad)
        assert np.isnan(bad[lower]).all() and np.all(bad[~lower] == 0)


def test_upper_and_batched_leading_dimensions_take_the_kernel():
    a = spd((2, 3, 6, 6), np.float64)
    full = np.tril(a) + np.swapaxes(np.tril(a, -1), -1, -2)
    upper = np.asarray(hj.jit(lambda x: ops.linalg.cholesky(x, upper=True), backend="iree:cpu")(np.swapaxes(full, -1, -2)))
    np.testing.assert_allclose(upper, np.swapaxes(numpy_cholesky(a), -1, -2), atol=1e-12)


def loss(a, w):
    return ops.sum(ops.linalg.cholesky(a) * w)


@pytest.mark.parametrize("backend", ["reference", "iree:cpu"])
def test_gradient_through_the_composite_matches_central_differences(backend):
    a = spd((5, 5), np.float64, seed=3)
    a = np.tril(a) + np.swapaxes(np.tril(a, -1), -1, -2)
    w = np.random.default_rng(4).standard_normal((5, 5))
    grad = np.asarray(hj.jit(hj.grad(loss), backend=backend)(a, w))
    numeric = np.zeros_like(a)
    for i in range(5):
        for j in range(i + 1):   # only the lower triangle is read
            step = np.zeros_like(a)
            step[i, j] = 1e-6
            plus = np.sum(numpy_cholesky(a + step) * w)
            minus = np.sum(numpy_cholesky(a - step) * w)
            numeric[i, j] = (plus - minus) / 2e-6
    np.testing.assert_allclose(np.tril(grad), numeric, atol=1e-6)


@pytest.mark.parametrize("backend", ["reference", "iree:cpu"])
def test_vmap_batches_the_composite_as_one_op(backend):
    a = spd((4, 7, 7), np.float32, seed=5)
    batched = hj.jit(hj.vmap(ops.linalg.cholesky), backend=backend)
    np.testing.assert_allclose(np.asarray(batched(a)), numpy_cholesky(a), atol=2e-5)
    text = str(hj.jit(hj.vmap(ops.linalg.cholesky)).lower(a).program.module)
    assert 'stablehlo.composite "hlojit.cholesky" %arg0' in text and "(tensor<4x7x7xf32>) -> tensor<4x7x7xf32>" in text


def test_eager_cholesky_runs_the_kernel():
    a = spd((16, 16), np.float32, seed=6)
    np.testing.assert_allclose(np.asarray(ops.linalg.cholesky(a)), numpy_cholesky(a), atol=1e-5)


def test_every_kernel_names_a_composite_of_the_frontend():
    from hlojit.frontend import composites
    assert set(kernels.KERNELS) <= set(composites.IMPLEMENTATIONS)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_lu_kernel_gives_lapack_pivots_and_factors(dtype):
    import scipy.linalg
    rng = np.random.default_rng(7)
    inputs = [rng.standard_normal(shape).astype(dtype) for shape in SQUARE_SHAPES]
    tolerance = 1e-4 if dtype == np.float32 else 1e-12
    for a, ours, reference in zip(inputs, on_each(ops.linalg.lu_factor, inputs, "iree:cpu"),
                                  on_each(ops.linalg.lu_factor, inputs, "reference")):
        (lu, pivots), reference = (np.asarray(r) for r in ours), [np.asarray(r) for r in reference]
        for index in np.ndindex(a.shape[:-2]):
            lapack_lu, lapack_pivots = scipy.linalg.lu_factor(a[index])
            np.testing.assert_array_equal(pivots[index], lapack_pivots)
            np.testing.assert_allclose(lu[index], lapack_lu, atol=tolerance * np.abs(lapack_lu).max())
        np.testing.assert_array_equal(pivots, reference[1])
        np.testing.assert_allclose(lu, reference[0], atol=tolerance * np.abs(reference[0]).max())


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_solve_det_slogdet_inv_through_the_lu_kernel(dtype):
    rng = np.random.default_rng(8)
    a = (rng.standard_normal((2, 40, 40)) + 8 * np.eye(40)).astype(dtype)
    b = rng.standard_normal((2, 40, 3)).astype(dtype)
    tolerance = 1e-4 if dtype == np.float32 else 1e-11
    cpu = {name: hj.jit(getattr(ops.linalg, name), backend="iree:cpu") for name in ("solve", "det", "slogdet", "inv")}
    np.testing.assert_allclose(np.asarray(cpu["solve"](a, b)), np.linalg.solve(a, b), rtol=tolerance, atol=tolerance)
    np.testing.assert_allclose(np.asarray(cpu["det"](a)), np.linalg.det(a), rtol=tolerance)
    sign, logdet = (np.asarray(r) for r in cpu["slogdet"](a))
    want_sign, want_logdet = np.linalg.slogdet(a)
    np.testing.assert_array_equal(sign, want_sign)
    np.testing.assert_allclose(logdet, want_logdet, rtol=tolerance)
    np.testing.assert_allclose(np.asarray(cpu["inv"](a)), np.linalg.inv(a), rtol=tolerance, atol=tolerance)


def test_singular_and_nan_matrices_factor_as_the_decomposition_does():
    singular = np.array([[[1.0, 2.0], [2.0, 4.0]], [[0.0, 0.0], [0.0, 0.0]], [[np.nan, 1.0], [2.0, 3.0]]], np.float32)
    ours = [np.asarray(r) for r in hj.jit(ops.linalg.lu_factor, backend="iree:cpu")(singular)]
    reference = [np.asarray(r) for r in hj.jit(ops.linalg.lu_factor, backend="reference")(singular)]
    for x, y in zip(ours, reference):
        np.testing.assert_array_equal(x, y)
    solved = np.asarray(hj.jit(ops.linalg.solve, backend="iree:cpu")(singular[:1], np.ones((1, 2, 1), np.float32)))
    assert not np.isfinite(solved).any()


def test_lu_gradient_through_the_composite_matches_central_differences():
    a = np.random.default_rng(9).standard_normal((4, 4)) + 3 * np.eye(4)
    w = np.random.default_rng(10).standard_normal((4, 4))

    def lu_loss(x):
        return ops.sum(ops.linalg.lu_factor(x)[0] * w)
    gradient = hj.jit(hj.grad(lu_loss), backend="iree:cpu")
    grad = np.asarray(gradient(a))
    # with its flags, not the fallback's: folded into a bool constant, a row mask of iotas failed to pack with data
    # tiling and the module compiled twice (constant_folding._left_in_place)
    assert gradient.compile(a).compiled.target == hj.backends.get("iree:cpu").target
    numeric = np.zeros_like(a)
    import scipy.linalg
    for index in np.ndindex(a.shape):
        step = np.zeros_like(a)
        step[index] = 1e-6
        numeric[index] = (np.sum(scipy.linalg.lu_factor(a + step)[0] * w)
                          - np.sum(scipy.linalg.lu_factor(a - step)[0] * w)) / 2e-6
    np.testing.assert_allclose(grad, numeric, atol=1e-6)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_qr_kernels_match_lapack_signs_and_the_reference(dtype):
    """Both modes in one program: their factorizations are the same dispatches, compiled once (a module per mode
    took 13.4 s of the suite's compiles for both dtypes, 2026-12-06)."""
    rng = np.random.default_rng(11)
    # panels' tails and edges; test_big_qr_kernels_match_lapack_signs takes many panels (150 x 140 and 140 x 150
    # here took ~10 s of the suite, 2026-12-06)
    shapes = [(1, 1), (3, 3), (5, 3), (3, 5), (2, 17, 17), (64, 40), (40, 64)]
    inputs = [rng.standard_normal(shape).astype(dtype) for shape in shapes]
    tolerance = 2e-5 if dtype == np.float32 else 1e-12
    modes = ("reduced", "complete")
    qr = lambda x: tuple(ops.linalg.qr(x, mode=mode) for mode in modes)   # noqa: E731
    for a, ours, reference in zip(inputs, on_each(qr, inputs, "iree:cpu"), on_each(qr, inputs, "reference")):
        for mode, our_qr, reference_qr in zip(modes, ours, reference):
            q_np, r_np = np.linalg.qr(a.astype(np.float64), mode=mode)   # LAPACK's reflectors: the same signs
            for got, ref, lapack in zip(our_qr, reference_qr, (q_np, r_np)):
                got, ref = np.asarray(got), np.asarray(ref)
                assert got.shape == lapack.shape and got.dtype == dtype, mode
                np.testing.assert_allclose(got, lapack, atol=tolerance * max(1, np.abs(lapack).max()), err_msg=mode)
                np.testing.assert_allclose(got, ref, atol=tolerance * max(1, np.abs(ref).max()), err_msg=mode)


@pytest.mark.parametrize("dtype, cases", [
    (np.float32, [((2, 530, 520), "complete")]),   # a batch, reflectors after the panels, Q's columns in parts
    (np.float64, [((300, 256), "reduced"), ((256, 300), "complete")])])   # tall and wide
def test_big_qr_kernels_match_lapack_signs(dtype, cases):
    """The QR kernels' panels of `lanes` reflectors reach the rest of the matrix in compact WY form by register
    tiles (qr_kernels.py); the reflectors after the last whole panel go one at a time."""
    rng = np.random.default_rng(12)
    inputs = [rng.standard_normal(shape).astype(dtype) for shape, _ in cases]
    tolerance = 5e-5 if dtype == np.float32 else 1e-12
    qr = hj.jit(lambda *xs: tuple(ops.linalg.qr(x, mode=mode) for x, (_, mode) in zip(xs, cases)), backend="iree:cpu")
    for a, (_, mode), factors in zip(inputs, cases, qr(*inputs)):
        for got, lapack in zip(factors, np.linalg.qr(a.astype(np.float64), mode=mode)):
            got = np.asarray(got)
            assert got.shape == lapack.shape and got.dtype == dtype
            np.testing.assert_allclose(got, lapack, atol=tolerance * max(1, np.abs(lapack).max()))


def test_orgqr_parts_share_the_work_from_tile_bounds():
    """qr_kernels.form_q_bounds: from SPLIT_FROM columns a matrix's Q is formed by PARTS workgroups, each from a
    register tile's bound (the tiles write whole tiles past a range's end) with about equal work."""
    from hlojit.pipeline import qr_kernels
    from hlojit.pipeline.register_tiles import TILE_VECTORS
    assert qr_kernels.form_q_bounds(300, 300, 300, 16) == [0, 300]
    for m, k, columns, lanes in ((1024, 1023, 1023, 16), (530, 520, 530, 16), (2048, 2048, 2048, 8), (600, 40, 600, 8)):
        bounds = qr_kernels.form_q_bounds(m, k, columns, lanes)
        assert bounds[0] == 0 and bounds[-1] == columns and bounds == sorted(set(bounds))
        assert len(bounds) - 1 <= qr_kernels.PARTS and all(b % (TILE_VECTORS * lanes) == 0 for b in bounds[1:-1])
        work = np.cumsum([sum(m - i for i in range(min(j, k - 1) + 1)) for j in range(columns)])
        shares = np.diff([0] + [work[b - 1] for b in bounds[1:]]) / work[-1]
        assert len(bounds) - 1 == 1 or shares.max() < 1.5 / (len(bounds) - 1), shares


def test_qr_kernels_of_zero_and_rank_deficient_matrices():
    """Panels whose reflectors are the identity (LAPACK's tau 0: a zero column below the diagonal) leave the rest
    alone: Q of the zero matrix is I and R is zero; zero columns and repeated columns give LAPACK's factors."""
    rng = np.random.default_rng(13)
    deficient = rng.standard_normal((256, 256))
    deficient[:, 70:140] = 0.0
    deficient[:, 200:230] = deficient[:, 10:40]
    inputs = [np.zeros((256, 256), np.float64), deficient]
    for a, (q, r) in zip(inputs, on_each(ops.linalg.qr, inputs, "iree:cpu")):
        q, r = np.asarray(q), np.asarray(r)
        np.testing.assert_allclose(q @ r, a, atol=1e-12 * max(1, np.abs(a).max()))
        np.testing.assert_allclose(q.T @ q, np.eye(a.shape[0]), atol=1e-12)
        assert np.all(np.tril(r, -1) == 0) and np.all(np.isfinite(q))
        if not a.any():
            np.testing.assert_array_equal(q, np.eye(256))
            np.testing.assert_array_equal(r, 0)


def test_qr_rewrites_to_two_kernels_on_cpu_and_an_attribute_tells_form_q_its_columns():
    program = hj.jit(lambda x: ops.linalg.qr(x, mode="complete")).lower(np.ones((6, 4), np.float32)).program
    text = str(program.module)
    assert 'stablehlo.composite "hlojit.householder"' in text
    assert 'stablehlo.composite "hlojit.form_q"' in text and "composite_attributes = {columns = 6 : i64}" in text
    with ir.Context() as context:
        context.load_all_available_dialects()
        module = ir.Module.parse(text)
        assert quirks.apply(module, targets.get("cpu"))["kernel_dispatches"] == 2
        assert "@hlojit_form_q_kernel_6x4_1x4_float32_columns6_executable" in str(module)


def test_vmap_of_qr_batches_both_composites():
    a = np.random.default_rng(12).standard_normal((3, 6, 4)).astype(np.float32)
    q, r = (np.asarray(x) for x in hj.jit(hj.vmap(ops.linalg.qr), backend="iree:cpu")(a))
    q_np, r_np = np.linalg.qr(a)
    np.testing.assert_allclose(q, q_np, atol=1e-5)
    np.testing.assert_allclose(r, r_np, atol=1e-5)


@pytest.mark.parametrize("rhs", [1, 3, 40])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_lu_solve_kernel_matches_numpy(rhs, dtype):
    rng = np.random.default_rng(17)
    a = (rng.standard_normal((2, 33, 33)) + 6 * np.eye(33)).astype(dtype)
    b = rng.standard_normal((2, 33, rhs)).astype(dtype)
    x = np.asarray(hj.jit(ops.linalg.solve, backend="iree:cpu")(a, b))
    tolerance = 1e-4 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(x, np.linalg.solve(a, b), rtol=tolerance, atol=tolerance)
    program = hj.jit(ops.linalg.solve).lower(a, b).program
    assert 'stablehlo.composite "hlojit.lu_solve"' in str(program.module)


FORMS = [(lower, trans, unit) for lower in (True, False) for trans in (0, 1) for unit in (False, True)]


@pytest.mark.parametrize("n, rhs, dtype", [(1, 1, np.float64), (5, 2, np.float32), (33, 3, np.float64),
                                           (33, 40, np.float32)])
def test_triangular_solve_kernel_matches_scipy_in_every_form(n, rhs, dtype):
    import scipy.linalg
    rng = np.random.default_rng(18)
    a = (rng.standard_normal((n, n)) + 4 * np.eye(n)).astype(dtype)
    b = rng.standard_normal((n, rhs)).astype(dtype)
    tolerance = 1e-4 if dtype == np.float32 else 1e-11

    def every_form(x, y):   # one program: one compile for the 8 forms
        return tuple(ops.linalg.solve_triangular(x, y, trans=trans, lower=lower, unit_diagonal=unit)
                     for lower, trans, unit in FORMS)
    for got, (lower, trans, unit) in zip(hj.jit(every_form, backend="iree:cpu")(a, b), FORMS):
        want = scipy.linalg.solve_triangular(a.astype(np.float64), b.astype(np.float64), trans=trans, lower=lower,
                                             unit_diagonal=unit)
        np.testing.assert_allclose(np.asarray(got), want, atol=tolerance * max(1, np.abs(want).max()))
    text = str(hj.jit(lambda x, y: ops.linalg.solve_triangular(x, y, lower=True)).lower(a, b).program.module)
    assert 'stablehlo.composite "hlojit.triangular_solve"' in text and "lower = 1 : i64" in text


# the kernels at their largest claimed size in f64: (name, operand shapes, composite attributes)
LARGEST = [("hlojit.cholesky", [(2048, 2048)], {}), ("hlojit.lu", [(2048, 2048)], {}),
           ("hlojit.lu_solve", [(2048, 2048), (2048,), (2048, 3)], {}),
           ("hlojit.triangular_solve", [(2048, 2048), (2048, 3)], {"lower": 1, "unit": 0}),
           ("hlojit.householder", [(2048, 2048)], {}), ("hlojit.form_q", [(2048, 2048), (1, 2048)], {"columns": 2048}),
           ("hlojit.eigh", [(2048, 2048)], {"vectors": 0}), ("hlojit.eigh", [(2048, 2048)], {"vectors": 1}),
           ("hlojit.svd", [(2048, 2048)], {"vectors": 0, "columns": 2048}),
           ("hlojit.svd", [(2048, 2048)], {"vectors": 1, "columns": 2048})]


@pytest.mark.parametrize("name, shapes, attributes", LARGEST)
def test_every_kernel_stays_within_the_stack_at_its_largest_size(name, shapes, attributes):
    """IREE's llvm-cpu refuses a workgroup more than 32 KiB of stack: eigh's reduction vectors on the stack (3 x n
    more) failed at n = 2048 in f64 ('exceeded stack allocation limit of 32768 bytes'), which nothing compiled."""
    import re
    text = kernels.KERNELS[name].source("k", shapes, np.dtype(np.float64), attributes)
    for body in re.split(r"func\.func @", text)[1:]:
        sizes = [np.prod([int(d) for d in dims.split("x")[:-1]]) * 8
                 for dims in re.findall(r"memref\.alloca\(\) : memref<([0-9x]+f64)>", body)]
        assert sum(sizes) <= 32768, (body[:60], sizes)
