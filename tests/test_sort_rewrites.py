"""pipeline/sort_rewrites.py: stable sorts become unstable ones with a tie-break by position on llvm-cpu and vmvx
(IREE's sorts ignore is_stable), before and after (golden text), which targets get it, and their numbers against
the reference backend and numpy for `from_mlir` modules, JAX's stable argsort among them."""
from __future__ import annotations

import numpy as np
import pytest

import hlojit as hj
from hlojit import ops
from hlojit.pipeline import sort_rewrites

from legalize_runs import on_target_and_reference
from test_legalize import rewritten, target_rewritten

def _stable_sort(n: int) -> str:
    t = f"tensor<2x{n}xi32>"
    return f"""func.func @main(%k: {t}, %p: {t}, %z: tensor<6xf32>) -> ({t}, {t}, tensor<6xf32>) {{
  %0:2 = "stablehlo.sort"(%k, %p) ({{
  ^bb0(%a: tensor<i32>, %b: tensor<i32>, %c: tensor<i32>, %d: tensor<i32>):
    %r = stablehlo.compare LT, %a, %b, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %r : tensor<i1>
  }}) {{dimension = 1 : i64, is_stable = true}} : ({t}, {t}) -> ({t}, {t})
  %1 = "stablehlo.sort"(%z) ({{
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %r = stablehlo.compare GT, %a, %b, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %r : tensor<i1>
  }}) {{dimension = 0 : i64, is_stable = true}} : (tensor<6xf32>) -> tensor<6xf32>
  return %0#0, %0#1, %1 : {t}, {t}, tensor<6xf32>
}}"""


def test_stable_sort_sorts_positions_too_golden():
    one = _stable_sort(3).split("  %1 = ")[0] + "  return %0#0, %0#1 : tensor<2x3xi32>, tensor<2x3xi32>\n}"
    one = one.replace(", %z: tensor<6xf32>) -> (tensor<2x3xi32>, tensor<2x3xi32>, tensor<6xf32>)",
                      ") -> (tensor<2x3xi32>, tensor<2x3xi32>)")
    count, text = rewritten(one, sort_rewrites.stable_sort_by_position)
    assert count == 1
    assert text == """module {
  func.func @main(%arg0: tensor<2x3xi32>, %arg1: tensor<2x3xi32>) -> (tensor<2x3xi32>, tensor<2x3xi32>) {
    %0 = stablehlo.iota dim = 1 : tensor<2x3xi32>
    %1 = stablehlo.optimization_barrier %0 : tensor<2x3xi32>
    %2:3 = "stablehlo.sort"(%arg0, %arg1, %1) <{dimension = 1 : i64, is_stable = false}> ({
    ^bb0(%arg2: tensor<i32>, %arg3: tensor<i32>, %arg4: tensor<i32>, %arg5: tensor<i32>, %arg6: tensor<i32>, \
%arg7: tensor<i32>):
      %3 = stablehlo.compare LT, %arg2, %arg3, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %4 = stablehlo.compare LT, %arg3, %arg2, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %5 = stablehlo.not %4 : tensor<i1>
      %6 = stablehlo.compare LT, %arg6, %arg7, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %7 = stablehlo.and %5, %6 : tensor<i1>
      %8 = stablehlo.or %3, %7 : tensor<i1>
      stablehlo.return %8 : tensor<i1>
    }) : (tensor<2x3xi32>, tensor<2x3xi32>, tensor<2x3xi32>) -> (tensor<2x3xi32>, tensor<2x3xi32>, tensor<2x3xi32>)
    return %2#0, %2#1 : tensor<2x3xi32>, tensor<2x3xi32>
  }
}
"""
    unstable = one.replace("is_stable = true", "is_stable = false")
    assert rewritten(unstable, sort_rewrites.stable_sort_by_position)[0] == 0


@pytest.mark.parametrize("backend", ["iree:cpu", "iree:vmvx"])
def test_stable_sorts_keep_equal_keys_in_order(backend):
    """Keys 0..4 along 1000 elements with their positions as payload (IREE's own sort put them out of order), and
    -0.0 before 0.0 where the input has it so (a descending sort: they are equal keys)."""
    keys = np.random.default_rng(1).integers(0, 5, (2, 1000)).astype(np.int32)
    positions = np.broadcast_to(np.arange(1000, dtype=np.int32), (2, 1000)).copy()
    zeros = np.array([0.0, -0.0, 1.0, -0.0, 0.0, 2.0], np.float32)
    (k, ek), (p, ep), (z, ez) = on_target_and_reference(_stable_sort(1000), [keys, positions, zeros], backend)
    np.testing.assert_array_equal(ep, np.take_along_axis(positions, np.argsort(keys, axis=1, kind="stable"), 1))
    np.testing.assert_array_equal(p, ep)
    np.testing.assert_array_equal(k, ek)
    np.testing.assert_array_equal(np.signbit(z), np.signbit(ez))
    np.testing.assert_array_equal(np.signbit(ez), [False, False, False, True, True, False])


@pytest.mark.parametrize("target, n", [("cpu", 2), ("vmvx", 2), ("cuda", None)])
def test_stable_sorts_are_rewritten_on_the_cpus_only(target, n):
    """cuda gets no position operand: whether IREE's cuda sort keeps ties in order is untested here (no GPU)."""
    applied, _ = target_rewritten(_stable_sort(8), target)
    assert applied.get("stable_sort_by_position") == n


def test_the_frontends_sorts_need_no_positions_added():
    """argsort's and top_k's comparators break ties by position themselves, sort's ties are equal values: none asks
    for a stable sort, so the rewrite leaves them as they are (no extra operand, no slower sort)."""
    x = np.array([[3.0, 1.0, 3.0, 0.0]], np.float32)
    rewrites = hj.jit(lambda x: (ops.sort(x), ops.argsort(x), ops.argsort(x.astype(np.float64)))).explain(
        x, target="cpu").rewrites
    assert "stable_sort_by_position" not in rewrites, rewrites




def _argsort_as_jax_exports(n: int, iota_dimension: int = 1, key_type: str = "f32", index_type: str = "i32") -> str:
    """jnp.argsort(-x, stable=True)'s module as JAX writes it: a stable sort of (x, iota) by a total order of x,
    descending here (NaN first, -NaN last), returning both."""
    x, i = f"tensor<2x{n}x{key_type}>", f"tensor<2x{n}x{index_type}>"
    return f"""func.func @main(%x: {x}) -> ({x}, {i}) {{
  %i = stablehlo.iota dim = {iota_dimension} : {i}
  %s:2 = "stablehlo.sort"(%x, %i) <{{dimension = 1 : i64, is_stable = true}}> ({{
  ^bb0(%a: tensor<{key_type}>, %b: tensor<{key_type}>, %c: tensor<{index_type}>, %d: tensor<{index_type}>):
    %r = stablehlo.compare GT, %a, %b, TOTALORDER : (tensor<{key_type}>, tensor<{key_type}>) -> tensor<i1>
    stablehlo.return %r : tensor<i1>
  }}) : ({x}, {i}) -> ({x}, {i})
  return %s#0, %s#1 : {x}, {i}
}}"""


def test_a_sort_carrying_positions_breaks_ties_on_them_golden():
    count, text = rewritten(_argsort_as_jax_exports(4), sort_rewrites.stable_sort_by_position)
    assert count == 1
    assert text == """module {
  func.func @main(%arg0: tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xi32>) {
    %0 = stablehlo.iota dim = 1 : tensor<2x4xi32>
    %1:2 = "stablehlo.sort"(%arg0, %0) <{dimension = 1 : i64, is_stable = false}> ({
    ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>, %arg3: tensor<i32>, %arg4: tensor<i32>):
      %2 = stablehlo.compare GT, %arg1, %arg2, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %3 = stablehlo.compare GT, %arg2, %arg1, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %4 = stablehlo.not %3 : tensor<i1>
      %5 = stablehlo.compare LT, %arg3, %arg4, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %6 = stablehlo.and %4, %5 : tensor<i1>
      %7 = stablehlo.or %2, %6 : tensor<i1>
      stablehlo.return %7 : tensor<i1>
    }) : (tensor<2x4xf32>, tensor<2x4xi32>) -> (tensor<2x4xf32>, tensor<2x4xi32>)
    return %1#0, %1#1 : tensor<2x4xf32>, tensor<2x4xi32>
  }
}
"""


@pytest.mark.parametrize("iota_dimension, index_type, added", [(1, "i32", 0), (1, "ui8", 0), (0, "i32", 1),
                                                               (1, "i8", 1)])
def test_only_an_integer_iota_along_the_sort_counts_as_positions(iota_dimension, index_type, added):
    """An iota along the other axis, or one too narrow to count 200 positions, is the user's payload: positions
    are added beside it."""
    text = _argsort_as_jax_exports(200, iota_dimension, index_type=index_type)
    _, after = rewritten(text, sort_rewrites.stable_sort_by_position)
    assert after.count("stablehlo.iota") == 1 + added
    assert after.count("stablehlo.optimization_barrier") == added


# Ties (equal keys, -0.0 and 0.0 among them) and NaNs of both signs: a stable descending sort by total order puts
# NaN first, -NaN last, 0.0 before -0.0 and equal keys in their order.
KEYS = np.array([[1.0, np.nan, 3.0, 2.0, -1.0, 3.0, -np.nan, 0.5, 0.0, -0.0, 3.0, 1.0],
                 [-0.0, 0.0, 2.0, 2.0, 2.0, -np.inf, np.inf, np.nan, 5.0, -0.0, 1.0, 2.0]], np.float32)


def _numpys_descending_total_order(keys: np.ndarray) -> np.ndarray:
    """Stable argsort of `keys` as JAX's TOTALORDER descending: by the bits' order of -x (NaN's sign flips)."""
    bits = keys.view(np.int32).astype(np.int64)
    total = np.where(bits < 0, -(bits & 0x7FFFFFFF) - 1, bits)    # negatives below every positive, in order
    return np.argsort(-total, axis=1, kind="stable")


@pytest.mark.parametrize("backend", ["reference", "iree:cpu", "iree:vmvx"])
@pytest.mark.parametrize("iota_dimension", [1, 0])
def test_jax_stable_argsort_compiles_and_keeps_ties_in_order(backend, iota_dimension):
    """llvm-cpu failed to compile this module ("write affecting operations on global resources are restricted to
    workgroup distributed contexts"): the added positions were a second iota beside JAX's own."""
    text = _argsort_as_jax_exports(KEYS.shape[1], iota_dimension)
    values, indices = hj.from_mlir(text, backend=backend)(KEYS)
    order = _numpys_descending_total_order(KEYS)
    np.testing.assert_array_equal(np.asarray(values).view(np.int32), np.take_along_axis(KEYS, order, 1).view(np.int32))
    payload = np.indices(KEYS.shape)[iota_dimension]
    np.testing.assert_array_equal(np.asarray(indices), np.take_along_axis(payload, order, 1))


def test_sliced_sorts_pass_a_barrier_golden():
    """chlo.top_k's expansion: IREE turned the sort and its slices into its own top-k, which ignores TOTALORDER."""
    text = """func.func @main(%x: tensor<2x4xf32>) -> (tensor<2x2xf32>, tensor<2x4xi32>) {
  %i = stablehlo.iota dim = 1 : tensor<2x4xi32>
  %s:2 = "stablehlo.sort"(%x, %i) <{dimension = 1 : i64, is_stable = false}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<i32>, %d: tensor<i32>):
    %r = stablehlo.compare GT, %a, %b, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %r : tensor<i1>
  }) : (tensor<2x4xf32>, tensor<2x4xi32>) -> (tensor<2x4xf32>, tensor<2x4xi32>)
  %v = stablehlo.slice %s#0 [0:2, 0:2] : (tensor<2x4xf32>) -> tensor<2x2xf32>
  return %v, %s#1 : tensor<2x2xf32>, tensor<2x4xi32>
}"""
    count, after = rewritten(text, sort_rewrites.sorts_apart_from_slices)
    assert count == 1
    assert after.split("}) : (tensor<2x4xf32>, tensor<2x4xi32>) -> (tensor<2x4xf32>, tensor<2x4xi32>)\n")[1] == """\
    %2:2 = stablehlo.optimization_barrier %1#0, %1#1 : tensor<2x4xf32>, tensor<2x4xi32>
    %3 = stablehlo.slice %2#0 [0:2, 0:2] : (tensor<2x4xf32>) -> tensor<2x2xf32>
    return %3, %2#1 : tensor<2x2xf32>, tensor<2x4xi32>
  }
}
"""
    unsliced = text.replace("%v = stablehlo.slice %s#0 [0:2, 0:2] : (tensor<2x4xf32>) -> tensor<2x2xf32>\n", "")
    unsliced = unsliced.replace("return %v, %s#1 : tensor<2x2xf32>", "return %s#0, %s#1 : tensor<2x4xf32>")
    unsliced = unsliced.replace("-> (tensor<2x2xf32>, tensor<2x4xi32>) {", "-> (tensor<2x4xf32>, tensor<2x4xi32>) {")
    assert rewritten(unsliced, sort_rewrites.sorts_apart_from_slices)[0] == 0


@pytest.mark.parametrize("target", ["cpu", "vmvx", "cuda"])
def test_chlo_top_k_is_made_stable_and_kept_apart_from_its_slices(target):
    """On the CPUs CHLO is expanded before the sort rewrites, so chlo.top_k's stable sort gets them both."""
    text = """func.func @main(%x: tensor<2x9xf32>) -> (tensor<2x3xf32>, tensor<2x3xi32>) {
  %values, %indices = chlo.top_k(%x, k = 3) : tensor<2x9xf32> -> (tensor<2x3xf32>, tensor<2x3xi32>)
  return %values, %indices : tensor<2x3xf32>, tensor<2x3xi32>
}"""
    applied, _ = target_rewritten(text, target)
    expected = {"cpu": (1, 1), "vmvx": (1, 1), "cuda": (None, None)}[target]   # cuda: IREE expands CHLO itself
    assert (applied.get("stable_sort_by_position"), applied.get("sorts_apart_from_slices")) == expected, applied


def test_a_sort_with_a_dead_result_passes_a_barrier_golden():
    """JAX's argsort returns the positions alone; IREE 3.13's cuda failed to bufferize that sort."""
    text = _argsort_as_jax_exports(4).replace("-> (tensor<2x4xf32>, tensor<2x4xi32>) {", "-> tensor<2x4xi32> {")
    text = text.replace("return %s#0, %s#1 : tensor<2x4xf32>, tensor<2x4xi32>", "return %s#1 : tensor<2x4xi32>")
    count, after = rewritten(text, sort_rewrites.sorts_on_their_own_buffers)
    assert count == 1
    assert after.split("}) : (tensor<2x4xf32>, tensor<2x4xi32>) -> (tensor<2x4xf32>, tensor<2x4xi32>)\n")[1] == """\
    %2:2 = stablehlo.optimization_barrier %1#0, %1#1 : tensor<2x4xf32>, tensor<2x4xi32>
    return %2#1 : tensor<2x4xi32>
  }
}
"""
    assert rewritten(_argsort_as_jax_exports(4), sort_rewrites.sorts_on_their_own_buffers)[0] == 0
    applied = {target: target_rewritten(text, target)[0].get("sorts_on_their_own_buffers")
               for target in ("cpu", "vmvx", "cuda")}
    assert applied == {"cpu": None, "vmvx": None, "cuda": 1}


def test_jax_argsort_compiles_for_cuda():
    """iree:cuda has no GPU here: JAX's argsort of 200 elements (positions returned alone) must compile."""
    from hlojit.frontend.from_mlir import parse
    from hlojit.pipeline import compile_program, cuda
    text = _argsort_as_jax_exports(200).replace("-> (tensor<2x200xf32>, tensor<2x200xi32>) {",
                                                "-> tensor<2x200xi32> {")
    text = text.replace("return %s#0, %s#1 : tensor<2x200xf32>, tensor<2x200xi32>", "return %s#1 : tensor<2x200xi32>")
    compile_program(parse(text, "main", None), cuda())


def test_a_sort_of_a_slice_reads_it_through_a_barrier_on_cuda():
    """IREE 3.13's cuda failed to bufferize a sort of a slice it fused in: hlojit's f64 eigvalsh (which sorts its
    diagonal by value and position) did not compile for cuda at 8 x 8."""
    text = """func.func @main(%x: tensor<64xf32>) -> (tensor<8xf32>, tensor<8xi32>) {
  %s = stablehlo.slice %x [0:64:9] : (tensor<64xf32>) -> tensor<8xf32>
  %i = stablehlo.iota dim = 0 : tensor<8xi32>
  %r:2 = "stablehlo.sort"(%s, %i) <{dimension = 0 : i64, is_stable = false}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<i32>, %d: tensor<i32>):
    %lt = stablehlo.compare LT, %a, %b, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  }) : (tensor<8xf32>, tensor<8xi32>) -> (tensor<8xf32>, tensor<8xi32>)
  return %r#0, %r#1 : tensor<8xf32>, tensor<8xi32>
}"""
    count, after = rewritten(text, sort_rewrites.sorts_on_their_own_buffers)
    assert count == 1
    assert after.split("\n")[2:5] == [
        "    %0 = stablehlo.slice %arg0 [0:64:9] : (tensor<64xf32>) -> tensor<8xf32>",
        "    %1 = stablehlo.iota dim = 0 : tensor<8xi32>",
        "    %2 = stablehlo.optimization_barrier %0 : tensor<8xf32>"]
    assert '"stablehlo.sort"(%2, %1)' in after


def test_eigvalsh_of_f64_compiles_for_cuda():
    from hlojit.pipeline import compile_program, cuda
    a = np.eye(8)
    compile_program(hj.jit(lambda a: ops.linalg.eigvalsh(a)).lower(a).program, cuda())
