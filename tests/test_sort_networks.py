"""pipeline/sort_networks.py: on llvm-cpu and vmvx a long sort (IREE's takes time quadratic in its length: 32,768
f32 took 5.3 s, a million about an hour and a half) becomes a bitonic network in a while loop; which sorts and
targets get it, and its results against numpy: NaN, -0.0 and infinities in numpy's order, ties kept in order by
stable sorts, lengths that are no power of two, a sort along the middle dimension."""
from __future__ import annotations

import numpy as np
import pytest

import hlojit as hj
from hlojit import numpy as hnp
from hlojit.pipeline import sort_networks

from test_legalize import rewritten, target_rewritten


def _sort(shape: str, dimension: int) -> str:
    t = f"tensor<{shape}xf32>"
    return f"""func.func @main(%x: {t}) -> {t} {{
  %0 = "stablehlo.sort"(%x) ({{
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %r = stablehlo.compare LT, %a, %b, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %r : tensor<i1>
  }}) {{dimension = {dimension} : i64}} : ({t}) -> {t}
  return %0 : {t}
}}"""


def test_a_long_sort_becomes_a_network_in_a_loop():
    count, text = rewritten(_sort("700", 0), sort_networks.sorts_by_network)
    assert count == 1 and "stablehlo.sort" not in text, text
    assert text.count("stablehlo.while") == 1 and text.count("stablehlo.map") == 2, text
    assert "stablehlo.pad" in text and "stablehlo.compare LT, %arg1, %arg2, TOTALORDER" in text, text  # in a map
    # IREE's own sort is faster for short rows: 8 rows of 100 (8 x 100**2 < NETWORK_FROM) stay a sort
    assert rewritten(_sort("8x100", 1), sort_networks.sorts_by_network)[0] == 0
    assert rewritten(_sort("100x8", 0), sort_networks.sorts_by_network)[0] == 0


@pytest.mark.parametrize("target, n", [("cpu", 1), ("vmvx", 1), ("cuda", None)])
def test_long_sorts_become_networks_on_the_cpus_only(target, n):
    assert target_rewritten(_sort("700", 0), target)[0].get("sorts_by_network") == n


def _sorted_many_ways(x, keys, cube):
    return (hnp.sort(x), hnp.argsort(keys, axis=1, stable=True), hnp.sort(cube, axis=1),
            hnp.sort(x)[::-1], hnp.median(cube, axis=1))


def test_long_sorts_match_numpy(backend):
    rng = np.random.default_rng(12)
    x = rng.standard_normal(700).astype(np.float32)
    x[::53], x[3], x[4], x[5], x[6] = np.nan, -0.0, 0.0, np.inf, -np.inf
    keys = rng.integers(0, 6, (2, 700)).astype(np.int32)      # many ties: a stable sort keeps them in order
    cube = rng.standard_normal((3, 900, 2))                   # f64, along the middle dimension
    got = [np.asarray(r) for r in hj.jit(_sorted_many_ways, backend=backend)(x, keys, cube)]
    expected = [np.sort(x), np.argsort(keys, axis=1, kind="stable"), np.sort(cube, axis=1), np.sort(x)[::-1],
                np.median(cube, axis=1)]
    for g, e in zip(got[:4], expected[:4]):
        np.testing.assert_array_equal(g, e)
    np.testing.assert_allclose(got[4], expected[4], rtol=1e-15)
