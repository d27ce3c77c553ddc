"""Indexing beyond test_ops_indexing.py's tables: random numpy indexes (ints, slices, None, `...`, arrays, traced
or not) against numpy on the reference backend, where no compile limits how many; and the StableHLO gathers
and scatters JAX emits (batching dimensions, clip modes, a window between inserted dims, other update bodies)
against JAX on every backend.
"""
from __future__ import annotations

import numpy as np
import pytest

import hlojit as hj
from hlojit import ops

from conftest import BACKENDS, assert_close
from test_ops_indexing import I32, X

# --- random indexes on the reference backend (no compiling, so many of them) -----------------------------

class _Traced(int):
    """In a random index: the k-th index array, passed to the traced function as an argument."""


def _random_index(rng, shape):
    """Ints, slices (any step, bounds past the ends), None, one `...` and integer arrays (some traced)."""
    items, traced, axis = [], [], 0
    ellipsis_at = rng.integers(0, len(shape) + 1) if rng.random() < 0.3 else -1
    while axis < len(shape):
        if axis == ellipsis_at and not any(item is Ellipsis for item in items):
            items.append(Ellipsis)
            axis += int(rng.integers(0, len(shape) - axis + 1))
            continue
        n, r = shape[axis], rng.random()
        if r < 0.15:
            items.append(None)
            continue
        if r < 0.35 and n:
            items.append(int(rng.integers(-n, n)))
        elif r < 0.75 or not n:
            bound = lambda: None if rng.random() < 0.4 else int(rng.integers(-n - 2, n + 3))  # noqa: E731
            items.append(slice(bound(), bound(), [None, 1, 2, -1, -2, 3][rng.integers(0, 6)]))
        else:
            array = rng.integers(-n, n, [(), (2,), (3,), (2, 3), (1, 3)][rng.integers(0, 5)])
            if rng.random() < 0.5:
                traced.append(array.astype(I32))
                array = _Traced(len(traced) - 1)
            items.append(array)
        axis += 1
    return items, traced


def _resolve(items, arrays):
    return tuple(arrays[i] if isinstance(i, _Traced) else i for i in items)


def test_random_indexes_agree_with_numpy_on_the_reference():
    """150 random indexes (get, set, add) against numpy: the reference compiles nothing, so it can take
    many; IREE runs the same gathers and scatters in the groups above."""
    rng = np.random.default_rng(11)
    checked = 0
    while checked < 150:
        shape = tuple(int(n) for n in rng.integers(0, 5, rng.integers(0, 4)))
        x = rng.standard_normal(shape).astype(np.float32)
        items, traced = _random_index(rng, shape)
        numpy_index = _resolve(items, traced)
        try:
            view = x[numpy_index]
        except IndexError:
            continue
        mode = ["get", "set", "add"][checked % 3]
        v = rng.standard_normal(view.shape).astype(np.float32)
        want = view if mode == "get" else x.copy()
        if mode == "set":
            if view.size != np.unique(np.arange(x.size).reshape(shape)[numpy_index]).size:
                continue  # an element indexed twice: which value .set keeps is unspecified
            want[numpy_index] = v
        elif mode == "add":
            np.add.at(want, numpy_index, v)

        def f(x, v, *arrays, items=items, mode=mode):
            index = _resolve(items, arrays)
            return x[index] if mode == "get" else getattr(x.at[index], mode)(v)
        got = np.asarray(hj.jit(f, backend="reference")(x, v, *traced))
        assert got.shape == want.shape and np.allclose(got, want), (shape, numpy_index, mode)
        checked += 1


# --- StableHLO gather/scatter from JAX: batching dimensions, clip modes, other update bodies -------------

JAX_I = np.array([[2, 0, 1, 1], [0, 0, 2, 1], [1, 2, 2, 0]], I32)
JAX_V = np.arange(3 * 4 * 5, dtype=np.float32).reshape(3, 4, 5)


def _jax_forms(jax):
    jnp = jax.numpy

    def f(x, i, v):
        rows = jax.vmap(lambda xr, ir: xr[ir])(x, i)                                        # batching dims
        along = jnp.take_along_axis(x, i[:, :, None] + 1, axis=2, mode="promise_in_bounds")
        window = jax.lax.dynamic_slice(x, (i[0, 0], 1, 2), (2, 2, 3))
        scaled = jax.vmap(lambda xr, ir, vr: xr.at[ir].multiply(vr, mode="promise_in_bounds"))(x, i, v)
        maxed = x.at[i[2]].max(v[0], mode="promise_in_bounds")
        return rows, along, window, scaled, maxed

    def split_window(x, i, v):  # two inserted dims with a window between them
        return x.at[i[0], :, i[1]].add(v[0, :, :4], mode="promise_in_bounds")
    return f, split_window


def _agree_with_jax(jax, f, backend):
    text = jax.jit(f, keep_unused=True).lower(X, JAX_I, JAX_V).as_text()
    assert "stablehlo.gather" in text or "stablehlo.scatter" in text
    got = hj.from_mlir(text, backend=backend)(X, JAX_I, JAX_V)
    want = jax.jit(f)(X, JAX_I, JAX_V)
    for a, e in zip(got if isinstance(got, (list, tuple)) else [got], want if isinstance(want, tuple) else [want]):
        assert_close(np.asarray(a), np.asarray(e), scale=4)


def test_jax_gathers_and_scatters_agree_with_jax(backend):
    """JAX writes gather/scatter forms hlojit's frontend does not (operand/input batching dims from vmap
    and take_along_axis, windows with starts): the reference implements the spec's general semantics
    and IREE agrees with it (all indices in bounds: IREE 3.13 neither clamps nor checks them)."""
    jax = pytest.importorskip("jax")
    _agree_with_jax(jax, _jax_forms(jax)[0], backend)


@pytest.mark.parametrize("backend", [pytest.param(b, marks=[pytest.mark.xfail(
    raises=hj.CompileError, strict=True, reason="IREE 3.13 cannot lower a scatter whose inserted dims have a "
    "window between them ('expected indices to be equal to batch rank or batch rank + 1'); hlojit's own "
    "x.at[] never emits that form")] if b.startswith("iree") else []) for b in BACKENDS])
def test_jax_scatter_with_a_window_between_inserted_dims(backend):
    jax = pytest.importorskip("jax")
    _agree_with_jax(jax, _jax_forms(jax)[1], backend)


def test_scatter_runs_any_update_body(backend):
    """A body that is not a single binary op (here current * 2 + update) combines element by element, in
    the order of the updates (the reference's general path); IREE agrees."""
    i = np.array([1, 1, 0], I32)
    x, u = X[0], np.ones((3, 5), np.float32)
    text = """
func.func @main(%x: tensor<4x5xf32>, %i: tensor<3x1xi32>, %u: tensor<3x5xf32>) -> tensor<4x5xf32> {
  %r = "stablehlo.scatter"(%x, %i, %u) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %two = stablehlo.constant dense<2.0> : tensor<f32>
    %t = stablehlo.multiply %a, %two : tensor<f32>
    %s = stablehlo.add %t, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0],
       scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, indices_are_sorted = false,
       unique_indices = false} : (tensor<4x5xf32>, tensor<3x1xi32>, tensor<3x5xf32>) -> tensor<4x5xf32>
  return %r : tensor<4x5xf32>
}"""
    expected = x.copy()
    for row, update in zip(i, u):
        expected[row] = expected[row] * 2 + update
    assert_close(np.asarray(hj.from_mlir(text, backend=backend)(x, i[:, None], u)), expected)
