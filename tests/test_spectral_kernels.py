"""The eigh and svd kernels (pipeline/eigh_kernel.py, svd_kernel.py, their rotations by rotation_buffer.py) against
numpy and the reference backend: values, vectors, degenerate and NaN matrices, the buffers' full and flushed
paths, scales far from 1, and the rewrite, gradients and vmap through the composites. The other kernels:
tests/test_kernels.py."""
from __future__ import annotations

import numpy as np
import pytest
from iree.compiler import ir

import hlojit as hj
from hlojit import ops
from hlojit.pipeline import quirks, targets
from test_kernels import on_each


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_eigh_kernel_gives_numpy_eigenvalues_and_orthonormal_eigenvectors(dtype):
    rng = np.random.default_rng(13)
    inputs = [rng.standard_normal(shape) for shape in [(1, 1), (2, 2), (9, 9), (3, 2, 17, 17), (70, 70)]]
    inputs = [(a + np.swapaxes(a, -1, -2)).astype(dtype) for a in inputs]
    both = lambda x: (ops.linalg.eigh(x), ops.linalg.eigvalsh(x))   # noqa: E731
    tolerance = 1e-5 if dtype == np.float32 else 1e-13
    for a, ((w, v), values_only), reference in zip(inputs, on_each(both, inputs, "iree:cpu"),
                                                   on_each(ops.linalg.eigvalsh, inputs, "reference")):
        w, v = np.asarray(w), np.asarray(v)
        expected = np.linalg.eigvalsh(a.astype(np.float64))
        scale = max(1.0, np.abs(expected).max())
        assert w.dtype == v.dtype == dtype and v.shape == a.shape
        for got in (w, values_only, reference):
            np.testing.assert_allclose(np.asarray(got), expected, atol=tolerance * scale)
        a64 = a.astype(np.float64)
        np.testing.assert_allclose(a64 @ v, v * w[..., None, :], atol=tolerance * scale)   # eigenvectors: any signs
        np.testing.assert_allclose(np.swapaxes(v, -1, -2) @ v, np.broadcast_to(np.eye(a.shape[-1]), v.shape),
                                   atol=tolerance * a.shape[-1])


def test_eigh_kernel_on_repeated_and_zero_eigenvalues():
    q, _ = np.linalg.qr(np.random.default_rng(14).standard_normal((6, 6)))
    a = (q @ np.diag([2.0, 2.0, 2.0, 0.0, 0.0, -1.0]) @ q.T)
    for matrix in (a, np.zeros((6, 6)), np.diag([3.0, 1.0, 2.0, 1.0, 0.5, 7.0])):
        w, v = (np.asarray(x) for x in hj.jit(ops.linalg.eigh, backend="iree:cpu")(matrix))
        np.testing.assert_allclose(w, np.linalg.eigvalsh(matrix), atol=1e-13)
        np.testing.assert_allclose(matrix @ v, v * w, atol=1e-13)
        np.testing.assert_allclose(v.T @ v, np.eye(6), atol=1e-13)


@pytest.mark.parametrize("dtype", [np.float32])   # f64: the same text at 8 lanes (the kernel tests above)
def test_eigh_accumulates_its_reflections_through_the_qr_kernels_orgqr(dtype):
    """eigh's vectors in four dispatches (tred2's reduction, orgqr of its reflections under reversed coordinates,
    tql2, its rotations): blocks that leave some reduction steps nothing to reflect (tau 0 among reflections: a block diagonal,
    a zero last row and column), and a size whose n - 1 reflections fill panels and leave a tail."""
    rng = np.random.default_rng(16)
    def symmetric(n):
        x = rng.standard_normal((n, n))
        return x + x.T
    blocks = np.zeros((40, 40))
    blocks[:25, :25], blocks[25:, 25:] = symmetric(25), symmetric(15)
    zero_edge = np.pad(symmetric(30), ((0, 1), (0, 1)))
    inputs = [a.astype(dtype) for a in (blocks, zero_edge, symmetric(83))]
    module = hj.jit(lambda x: ops.linalg.eigh(x)).lower(inputs[0]).program.module
    with ir.Context() as context:
        context.load_all_available_dialects()
        rewritten = ir.Module.parse(str(module))
        quirks.apply(rewritten, targets.get("cpu"))
        parts = ("tridiagonal", "form_q", "ql", "rotations")
        names = [name for name in parts if f"_{name}_executable::" in str(rewritten)]
    assert names == list(parts)
    tolerance = 2e-5 if dtype == np.float32 else 1e-13
    for a, (w, v) in zip(inputs, on_each(ops.linalg.eigh, inputs, "iree:cpu")):
        w, v, a64 = np.asarray(w, np.float64), np.asarray(v, np.float64), a.astype(np.float64)
        scale = np.abs(a64).max()
        np.testing.assert_allclose(w, np.linalg.eigvalsh(a64), atol=tolerance * scale)
        np.testing.assert_allclose(a64 @ v, v * w, atol=tolerance * scale * 2)
        np.testing.assert_allclose(v.T @ v, np.eye(len(a)), atol=tolerance * 2)


def test_eigh_rotations_that_fill_the_buffer_are_applied_by_the_ql_dispatch(monkeypatch):
    """The QL dispatch applies a full buffer of sweeps itself and goes on (rotations_body applies the rest): a
    buffer of one sweep's rotations (rotation_buffer.sizes' least) fills many times over on a batch of 70 x 70
    matrices (~1.5 sweeps a value), three sweeps applied at once (GROUP 3), and NaN input runs every value to
    its iteration limit (NaN everywhere, as LAPACK's failure in JAX)."""
    from hlojit.pipeline import rotation_buffer
    monkeypatch.setattr(rotation_buffer, "BUFFER_BYTES", 0)
    monkeypatch.setattr(rotation_buffer, "GROUP", 3)
    monkeypatch.setenv("HLOJIT_COMPILE_WORKER", "0")           # the patched text compiles in this process
    monkeypatch.setenv("HLOJIT_CACHE", "0")
    x = np.random.default_rng(18).standard_normal((3, 70, 70))
    a = x + np.swapaxes(x, -1, -2)
    a[2, 5, 7] = a[2, 7, 5] = np.nan
    w, v = (np.asarray(r) for r in hj.jit(ops.linalg.eigh, backend="iree:cpu")(a))
    for i in range(2):
        np.testing.assert_allclose(w[i], np.linalg.eigvalsh(a[i]), atol=1e-12)
        np.testing.assert_allclose(a[i] @ v[i], v[i] * w[i], atol=1e-12)
        np.testing.assert_allclose(v[i].T @ v[i], np.eye(70), atol=1e-13)
    assert np.isnan(w[2]).all() and np.isnan(v[2]).all()


def test_eigh_gradient_goes_through_the_kernel():
    a = np.random.default_rng(15).standard_normal((5, 5))
    a = a + a.T
    def loss(x):
        return ops.sum(ops.linalg.eigvalsh(x) ** 2)   # |a|_F^2, a read from its lower triangle
    grad = np.asarray(hj.jit(hj.grad(loss), backend="iree:cpu")(a))
    np.testing.assert_allclose(grad, np.tril(4 * a) - 2 * np.diag(np.diag(a)), atol=1e-12)
    np.testing.assert_allclose(grad, np.asarray(hj.jit(hj.grad(loss), backend="reference")(a)), atol=1e-12)


def svd_errors(a, u, s, vh):
    """(s against numpy's, the reconstruction's error, u's and vh's distance from orthonormal), relative to s's
    largest; u and vh as numpy.linalg.svd returns them (full or reduced)."""
    k = min(a.shape[-2:])
    expected = np.linalg.svd(a.astype(np.float64), compute_uv=False)
    scale = max(1.0, np.abs(expected).max())
    eye = lambda x: np.abs(x - np.eye(x.shape[-1])).max()   # noqa: E731
    rebuilt = (u[..., :, :k] * s[..., None, :]) @ vh[..., :k, :]
    return (np.abs(s - expected).max() / scale, np.abs(rebuilt - a).max() / scale,
            eye(np.swapaxes(u, -1, -2) @ u), eye(vh @ np.swapaxes(vh, -1, -2)))


def every_svd(x):   # one program: one compile for the three forms
    return (ops.linalg.svd(x, full_matrices=False), ops.linalg.svd(x, full_matrices=True),
            ops.linalg.svd(x, compute_uv=False))


# (1, 1): n = 1 (the decomposition with vectors); (3, 2): V has no reflection; (4, 9): wide, transposed. f32 takes
# the shapes that reach the kernel's blocks and batches: the edge shapes' paths are the same code in either dtype
# (~8 s of the suite's compiles, 2026-12-06)
SVD_SHAPES = {np.float64: [(1, 1), (3, 2), (6, 6), (4, 9), (2, 3, 7, 5), (140, 140)],
              np.float32: [(6, 6), (2, 3, 7, 5), (140, 140)]}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_svd_kernel_gives_numpy_singular_values_and_orthonormal_vectors(dtype):
    rng = np.random.default_rng(19)
    inputs = [rng.standard_normal(shape).astype(dtype) for shape in SVD_SHAPES[dtype]]
    for a, (reduced, full, values) in zip(inputs, on_each(every_svd, inputs, "iree:cpu")):
        tolerance = (1e-5 if dtype == np.float32 else 1e-13) * max(a.shape[-2:])
        m, n = a.shape[-2:]
        for (u, s, vh), columns in ((reduced, min(m, n)), (full, None)):
            u, s, vh = (np.asarray(x) for x in (u, s, vh))
            assert u.dtype == s.dtype == vh.dtype == dtype
            assert u.shape[-2:] == (m, columns or m) and vh.shape[-2:] == (columns or n, n)
            assert np.all(np.diff(s, axis=-1) <= 0)
            assert max(svd_errors(a, u, s, vh)) < tolerance, a.shape
        np.testing.assert_allclose(np.asarray(values), np.asarray(reduced[1]), atol=tolerance)


def test_svd_kernel_on_zero_repeated_rank_deficient_and_nan_matrices():
    """One program (a module each took ~10 s of the suite's compiles, 2026-12-06): the zero and the repeated
    diagonal matrix as a batch, the tall and wide low-rank ones, and the NaN one's svd."""
    rng = np.random.default_rng(20)
    low_rank = rng.standard_normal((7, 2)) @ rng.standard_normal((2, 5))
    nan = rng.standard_normal((5, 5))
    nan[2, 3] = np.nan
    square = np.stack([np.zeros((5, 5)), np.diag([3.0, 1.0, 1.0, 2.0, 0.0])])
    *edges, with_nan = hj.jit(lambda *xs: (*(every_svd(x) for x in xs[:-1]), ops.linalg.svd(xs[-1])),
                              backend="iree:cpu")(square, low_rank, low_rank.T, nan)
    for matrices, (reduced, full, values) in zip((square, low_rank, low_rank.T), edges):
        for u, s, vh in (reduced, full):
            assert max(svd_errors(matrices, *(np.asarray(x) for x in (u, s, vh)))) < 1e-13
        np.testing.assert_allclose(np.asarray(values), np.linalg.svd(matrices, compute_uv=False), atol=1e-13)
    u, s, vh = (np.asarray(x) for x in with_nan)
    assert np.isnan(s).all() and np.isnan(u).all() and np.isnan(vh).all()   # as JAX's LAPACK failure


def test_svd_kernel_flushes_a_full_rotation_buffer(monkeypatch):
    """A buffer that holds one chain's rotations (BUFFER_BYTES 0: rotation_buffer.sizes' least) makes the QR steps'
    dispatch apply it each time it fills, rotations_body the rest, three chains at once (GROUP 3, or one where
    their rows span fewer); a rank-deficient matrix (its deflations apply the buffer too) and NaN in the batch."""
    from hlojit.pipeline import rotation_buffer
    monkeypatch.setattr(rotation_buffer, "BUFFER_BYTES", 0)
    monkeypatch.setattr(rotation_buffer, "GROUP", 3)
    monkeypatch.setenv("HLOJIT_COMPILE_WORKER", "0")           # the patched text compiles in this process
    monkeypatch.setenv("HLOJIT_CACHE", "0")
    rng = np.random.default_rng(23)
    a = rng.standard_normal((3, 90, 70))
    a[1] = a[1, :, :5] @ rng.standard_normal((5, 70))          # rank 5
    a[2, 4, 6] = np.nan
    u, s, vh = (np.asarray(x) for x in hj.jit(lambda x: ops.linalg.svd(x, full_matrices=True),
                                               backend="iree:cpu")(a))
    for i in range(2):
        assert max(svd_errors(a[i], u[i], s[i], vh[i])) < 1e-12
    assert np.isnan(s[2]).all() and np.isnan(u[2]).all() and np.isnan(vh[2]).all()


@pytest.mark.parametrize("dtype, scale", [(np.float32, 1e30), (np.float64, 1e200)])
def test_svd_and_eigh_kernels_of_matrices_far_from_one(dtype, scale):
    """Matrices of `scale` and 1 / `scale`: the bidiagonalization's unnormalized work sums (the matrix's scale
    squared) and tql2's p^2 + e^2 over- and underflowed (NaN, or 35% off), where LAPACK's answer is as good as at
    scale 1; values relative to the largest."""
    rng = np.random.default_rng(24)
    x, y = rng.standard_normal((40, 30)), rng.standard_normal((40, 40))
    a = np.stack([x * scale, x / scale]).astype(dtype)
    sym = np.stack([(y + y.T) * scale, (y + y.T) / scale]).astype(dtype)
    def decompositions(a, sym):
        return ops.linalg.svd(a, full_matrices=False), ops.linalg.eigh(sym), ops.linalg.eigvalsh(sym)
    (u, sv, vh), (w, v), w_alone = as_numpy(hj.jit(decompositions, backend="iree:cpu")(a, sym))
    tolerance = 1e-5 if dtype == np.float32 else 1e-13
    for i in range(2):
        expected = np.linalg.svd(a[i].astype(np.float64), compute_uv=False)
        largest = expected.max()
        assert np.abs(sv[i] - expected).max() < tolerance * largest
        assert np.abs((u[i] * sv[i]) @ vh[i] - a[i]).max() < tolerance * largest
        expected = np.linalg.eigvalsh(sym[i].astype(np.float64))
        largest = np.abs(expected).max()
        assert np.abs(w[i] - expected).max() < tolerance * largest and np.abs(w_alone[i] - w[i]).max() < tolerance * largest
        assert np.abs(sym[i] @ v[i] - v[i] * w[i]).max() < 4 * tolerance * largest


def as_numpy(tree):
    return tuple(as_numpy(x) for x in tree) if isinstance(tree, tuple) else np.asarray(tree)


def test_svd_rewrites_to_the_kernel_on_cpu_and_its_gradient_and_vmap_match_the_reference():
    a = np.random.default_rng(21).standard_normal((3, 6, 4))
    text = str(hj.jit(ops.linalg.svd).lower(a[0]).program.module)
    assert 'stablehlo.composite "hlojit.svd"' in text and "columns = 6 : i64" in text
    with ir.Context() as context:
        context.load_all_available_dialects()
        module = ir.Module.parse(text)
        counts = quirks.apply(module, targets.get("cpu"))
        assert counts.get("kernel_dispatches") == 1 and "hlojit_svd_kernel" in str(module)
        # the bidiagonalization, orgqr forming U and V from its reflections, the QR steps, their rotations
        assert all(f"_{part}_executable::" in str(module)
                   for part in ("bidiagonal", "form_u", "form_v", "steps", "rotations"))

    def loss(x):
        u, s, vh = ops.linalg.svd(x, full_matrices=False)
        return ops.sum(s ** 3) + ops.sum(ops.abs(u[:, 0]) * ops.arange(6.0))
    program = hj.vmap(hj.grad(loss))
    got = np.asarray(hj.jit(program, backend="iree:cpu")(a))
    np.testing.assert_allclose(got, np.asarray(hj.jit(program, backend="reference")(a)), atol=1e-10)
    epsilon, direction = 1e-6, np.random.default_rng(22).standard_normal((6, 4))
    numeric = (float(hj.jit(loss)(a[0] + epsilon * direction)) - float(hj.jit(loss)(a[0] - epsilon * direction)))
    np.testing.assert_allclose(np.sum(got[0] * direction), numeric / (2 * epsilon), rtol=1e-6)
