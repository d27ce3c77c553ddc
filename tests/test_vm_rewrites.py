"""pipeline/vm_rewrites.py: IREE's VM-phase module gets a distinct value for each ref a branch passes twice to one
successor (IREE 3.13's register allocator nulled the repeat's register; docs/iree_vm_branch_move.md)."""
from __future__ import annotations

import numpy as np
from iree.compiler import ir

import hlojit as hj
from hlojit import ops
from hlojit.pipeline import cache, sessions, targets, vm_rewrites

BRANCHES = """vm.module @m {
  vm.func @f(%a: !vm.ref<?>, %b: !vm.ref<?>, %c: i32) -> !vm.ref<?> {
    vm.cond_br %c, ^bb1(%a, %a, %b : !vm.ref<?>, !vm.ref<?>, !vm.ref<?>), ^bb1(%b, %a, %b : !vm.ref<?>, !vm.ref<?>, !vm.ref<?>)
  ^bb1(%x: !vm.ref<?>, %y: !vm.ref<?>, %z: !vm.ref<?>):
    vm.br ^bb2(%c, %c, %x : i32, i32, !vm.ref<?>)
  ^bb2(%i: i32, %j: i32, %w: !vm.ref<?>):
    vm.return %w : !vm.ref<?>
  }
}"""


def test_repeated_refs_of_one_successor_get_their_own_values_golden():
    """A repeat within one successor's operands gets a copy; the same ref sent to two successors, repeated
    integers and the first occurrence stay as they are."""
    module = ir.Module.parse(BRANCHES, context=sessions.session_for(targets.get("cpu").flags).context)
    assert vm_rewrites.distinct_branch_refs(module.operation) == 2
    assert module.operation.verify()
    text = str(module)
    for line in ("%rnz = vm.cmp.nz.ref %arg0 : !vm.ref<?>", "%null = vm.const.ref.zero : !vm.ref<?>",
                 "%ref = vm.select.ref %rnz, %arg0, %null : !vm.ref<?>",
                 "%ref_2 = vm.select.ref %rnz_0, %arg1, %null_1 : !vm.ref<?>",
                 "vm.cond_br %arg2, ^bb1(%arg0, %ref, %arg1 : !vm.ref<?>, !vm.ref<?>, !vm.ref<?>), "
                 "^bb1(%arg1, %arg0, %ref_2 : !vm.ref<?>, !vm.ref<?>, !vm.ref<?>)",
                 "vm.br ^bb2(%arg2, %arg2, %0 : i32, i32, !vm.ref<?>)"):
        assert line in text, line
    assert vm_rewrites.distinct_branch_refs(module.operation) == 0     # nothing repeats any more


def _doubling(x):
    """A loop whose initial values repeat one buffer: its branch into the loop passes that ref twice."""
    return ops.fori_loop(0, 3, lambda i, c: (c[0] * 2, c[1] + c[0]), (x, x))


def test_compiled_loops_get_it_explain_lists_it_and_the_cache_key_reads_it():
    """(test_linalg_eig's two 2x2 eigvals are the module that failed without it.)"""
    x = np.arange(8, dtype=np.float32)
    assert hj.jit(_doubling).explain(x, target="cpu").rewrites == {"distinct_branch_refs": 1}
    for result in hj.jit(_doubling, backend="iree:cpu")(x):
        np.testing.assert_array_equal(np.asarray(result), 8 * x)
    assert vm_rewrites in cache.fingerprinted_modules()
