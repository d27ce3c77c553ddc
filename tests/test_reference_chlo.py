"""chlo.ragged_dot on the reference backend in its three modes, with batch dimensions, against loops over the
groups (the conformance files check small unbatched cases on every backend)."""
from __future__ import annotations

import numpy as np
import pytest

import hlojit as hj

_RAGGED = """func.func @main(%lhs: tensor<{lhs}xf64>, %rhs: tensor<{rhs}xf64>, %sizes: tensor<{g}xi32>)
    -> tensor<{out}xf64> {{
  %r = "chlo.ragged_dot"(%lhs, %rhs, %sizes) {{ragged_dot_dimension_numbers = #chlo.ragged_dot<
    lhs_batching_dimensions = [0], rhs_batching_dimensions = [{rb}], lhs_contracting_dimensions = [2],
    rhs_contracting_dimensions = [{rc}], lhs_ragged_dimensions = [{ragged}], rhs_group_dimensions = [{groups}]>}}
    : (tensor<{lhs}xf64>, tensor<{rhs}xf64>, tensor<{g}xi32>) -> tensor<{out}xf64>
  return %r : tensor<{out}xf64>
}}"""
RNG = np.random.default_rng(4)
B, M, K, N = 2, 7, 5, 3
SIZES = np.array([3, 0, 2], np.int32)       # 5 of 7 rows (or of K = 5 columns) in groups; an empty group


def _run(lhs, rhs, out_shape, **dims):
    text = _RAGGED.format(lhs="x".join(map(str, lhs.shape)), rhs="x".join(map(str, rhs.shape)), g=len(SIZES),
                          out="x".join(map(str, out_shape)), **dims)
    return np.asarray(hj.from_mlir(text, backend="reference")(lhs, rhs, SIZES))


def _bounds():
    ends = np.cumsum(SIZES)
    return list(zip(ends - SIZES, ends))


def test_ragged_rows_take_their_groups_rhs_and_rows_past_the_groups_are_zero():
    lhs, rhs = RNG.normal(size=(B, M, K)), RNG.normal(size=(len(SIZES), B, K, N))
    expected = np.zeros((B, M, N))
    for g, (start, end) in enumerate(_bounds()):
        expected[:, start:end] = lhs[:, start:end] @ rhs[g]
    actual = _run(lhs, rhs, (B, M, N), rb=1, rc=2, ragged=1, groups=0)
    np.testing.assert_allclose(actual, expected, rtol=1e-13)


def test_ragged_contracting_dimension_gives_one_product_per_group():
    lhs, rhs = RNG.normal(size=(B, M, K)), RNG.normal(size=(B, K, N))
    expected = np.stack([lhs[:, :, start:end] @ rhs[:, start:end] for start, end in _bounds()])
    actual = _run(lhs, rhs, (len(SIZES), B, M, N), rb=0, rc=1, ragged=2, groups="")
    np.testing.assert_allclose(actual, expected, rtol=1e-13, atol=1e-15)


def test_ragged_batch_dimension_is_a_batched_matmul():
    lhs, rhs = RNG.normal(size=(B, M, K)), RNG.normal(size=(B, K, N))
    actual = _run(lhs, rhs, (B, M, N), rb=0, rc=1, ragged=0, groups="")
    np.testing.assert_allclose(actual, lhs @ rhs, rtol=1e-13)


_TOP_K = """func.func @main(%x: tensor<2x9xf32>) -> (tensor<2x{k}xf32>, tensor<2x{k}xi32>) {{
  %values, %indices = chlo.top_k(%x, k = {k}) : tensor<2x9xf32> -> (tensor<2x{k}xf32>, tensor<2x{k}xi32>)
  return %values, %indices : tensor<2x{k}xf32>, tensor<2x{k}xi32>
}}"""


@pytest.mark.parametrize("backend", ["reference", "iree:cpu", "iree:vmvx"])
def test_top_k_orders_floats_as_chlo_and_xla_do(backend):
    """IEEE totalOrder, equal ones by position (JAX's lax.top_k exports as chlo.top_k): the reference backend put
    NaN last, so JAX's top_k of a row holding a NaN came back without it."""
    x = np.array([[1.0, np.nan, 3.0, -np.nan, 0.0, -0.0, np.inf, -np.inf, 3.0],
                  [-0.0, 0.0, 2.0, 2.0, -1.0, 5.0, np.nan, 1.0, -0.0]], np.float32)
    values, indices = hj.from_mlir(_TOP_K.format(k=9), backend=backend)(x)
    expected = np.array([[1, 6, 2, 8, 0, 4, 5, 7, 3], [6, 5, 2, 3, 7, 1, 0, 8, 4]], np.int32)
    np.testing.assert_array_equal(np.asarray(indices), expected)
    np.testing.assert_array_equal(np.asarray(values).view(np.int32), np.take_along_axis(x, expected, 1).view(np.int32))
    values, indices = hj.from_mlir(_TOP_K.format(k=3), backend=backend)(x)
    np.testing.assert_array_equal(np.asarray(indices), expected[:, :3])
