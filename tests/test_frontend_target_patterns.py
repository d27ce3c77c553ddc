"""The frontend's remaining target-specific patterns, each with its reason: the code that builds a traced graph
(hlojit/frontend/ops, batching, autodiff) should emit the StableHLO that means what the user asked, and a target's
workaround belongs in hlojit/pipeline (a rewrite that `hj.from_mlir` modules get too). Every line of those packages
that names IREE or one of its targets, or builds an optimization barrier, is listed here by file and top-level
function, as one of:
- "note": a comment or docstring that names IREE while the graph is the op's meaning (or says the pipeline
  handles the target);
- "meaning": a pattern that IREE motivated but that is exact on every target (the reference backend included);
- "gap": an IREE workaround still in the graph, deliberately left, with why.
A new pattern fails the first test (move it to a pipeline rewrite, or list it with its reason); an entry whose
pattern is gone fails the second (delete the entry)."""
from __future__ import annotations

import ast
import pathlib
import re

import hlojit

FRONTEND = pathlib.Path(hlojit.__file__).parent / "frontend"
GRAPH_PACKAGES = ("ops", "batching", "autodiff")
PATTERN = re.compile(r"IREE|iree:|vmvx|llvm-cpu|cuda|optimization_barrier|\bbarrier\(")
IMPORT = re.compile(r"\s*(from|import) iree\b")

_FFT = "gap: FFTs built from real matmuls, planned for IREE's speed (it lowers stablehlo.fft for power-of-two c64 " \
       "on llvm-cpu only); moving the plan into pipeline/fft_rewrites.py (which does f64 unplanned) is a speed project"
_BLOCKED = "gap: the blocked factorizations are built from matmuls (IREE has no LAPACK; pipeline/linalg_rewrites.py " \
           "legalises stablehlo.cholesky/triangular_solve row by row, far slower): shapes kept equal per panel so " \
           "IREE compiles each loop once; moving the blocked algorithms to the pipeline is a speed project"
FRONTEND_PATTERNS = {
    "ops/_core.py::barrier": "gap: the frontend's barrier builder, used by the gap fft_plan.py::_const",
    "ops/complex_math.py::<module>": "note: exp, log, sin ... of complex operands are StableHLO's ops; "
                                     "pipeline/complex_math_pairs.py writes them out on real parts for IREE",
    "ops/elementwise.py::<module>": "note: sin & co. are stablehlo.sine...; pipeline/accurate_math.py mends IREE's",
    "ops/elementwise.py::binary": "note: emits the spec's power and i1 arithmetic; pipeline/legalize.py mends IREE's",
    "ops/fft_plan.py::<module>": _FFT,
    "ops/fft_plan.py::stage_cost": _FFT + " (the cost model is IREE's timings)",
    "ops/fft_plan.py::_const": _FFT + " (the DFT matrices behind barriers: IREE would fold and pack them when it "
                                      "compiles, slowly)",
    "ops/fft_plan.py::_complex_multiply": _FFT,
    "ops/fft_plan.py::_planar": _FFT,
    "ops/fft_plan.py::_bluestein": _FFT,
    "ops/indexing.py::<module>": "meaning: traced indices are clamped by JAX's rule (IREE's missing clamp is "
                                 "pipeline/legalize.py's gather_clamped_starts for from_mlir modules)",
    "ops/indexing.py::_traced_index": "meaning: JAX's clamp of traced indices (negative ones wrap first)",
    "ops/indexing.py::_cut": "meaning: one reverse and one slice, the direct form of a numpy slice (the comment "
                             "says llvm-cpu failed on the other order; a from_mlir reverse of a 4x6 -> 4x3 slice "
                             "compiles on cpu and vmvx now, so no pipeline rewrite was made)",
    "ops/indexing.py::_gather": "meaning: one gather straight from x, the direct form of numpy's advanced index (a "
                                "from_mlir gather of a slice of the last axis compiles on cpu and vmvx now)",
    "ops/linalg/__init__.py::<module>": _BLOCKED,
    "ops/linalg/_util.py::pad_identity": _BLOCKED + " (concatenation, not a loop: IREE's runtime rejected some "
                                                    "loops over a padded identity with OUT_OF_RANGE)",
    "ops/linalg/_util.py::column_loop": _BLOCKED + " (always a loop: cpu fails on QR's panels unrolled)",
    "ops/linalg/cholesky.py::<module>": _BLOCKED,
    "ops/linalg/divide_conquer.py::_stack": "meaning: several sums as one reduction of stacked terms (exact on every "
                                            "target; fewer IREE dispatches)",
    "ops/linalg/divide_conquer.py::symmetric_eigen": "meaning: the scale max(|a|, tiny) rather than where(|a| > 0, |a|, "
                                                     "1), exact either way; the 1 shared a constant with Jacobi svd's "
                                                     "loop start, on which cpu then failed (scf.while operands)",
    "ops/linalg/tridiagonal.py::<module>": _BLOCKED,
    "ops/linalg/tridiagonal.py::tridiagonalize": _BLOCKED + " (at least two panels, zero-padded, exact: with one, "
                                                            "cpu's compiler crashed)",
    "ops/linalg/eig.py::<module>": _BLOCKED + " (the QR iterations carry real pairs, parts last: as complex values "
                                    "complex_pairs.py splits each slice and update in two, 25 dispatches per "
                                    "rotation against 14)",
    "ops/linalg/eig.py::_schur": _BLOCKED + " (one flat loop of rotations, not sweeps in a loop of windows: cpu fails "
                                 "at run time, OUT_OF_RANGE in copy_buffer, on a shift passed to the inner loop; the "
                                 "window's cond takes operands, not captures: 'operand does not dominate this use')",
    "ops/linalg/jacobi.py::sort_by": "gap: eigenvalues reordered by a one-hot sum, not a gather. The gather "
                                     "beside the sort that made its indices inside eigh compiles on cpu now "
                                     "(2026-12-07: n = 8 to 256, f32/f64, both data-tiled flag sets), but on cuda "
                                     "eigh and eigvalsh then fail ('LLVM Translation failed for operation: "
                                     "builtin.unrealized_conversion_cast', n = 8 and 64, f32/f64), and a "
                                     "take_along_axis of an argsort alone compiles there: not isolated, no rewrite",
    "ops/linalg/lu.py::_factor_subpanel": _BLOCKED,
    "ops/linalg/lu.py::_gather_rows": "meaning: whole rows by a gather of slices, the natural form (also ~10x "
                                      "faster on IREE than a gather of elements)",
    "ops/linalg/lu.py::_as_index": "note: a plain convert (vmvx's f64 -> int is compile_rewrites.f64_to_int_by_bits)",
    "ops/linalg/lu.py::_factor_panel": _BLOCKED,
    "ops/linalg/lu.py::_unit_lower_inverse": _BLOCKED,
    "ops/linalg/lu.py::_factor": _BLOCKED + " (panels concatenated: captured by the loop, cpu fails to compile them)",
    "ops/linalg/polar.py::<module>": "note: why QDWH suits IREE (matmuls and factorizations: few, big dispatches)",
    "ops/linalg/polar.py::polar": _BLOCKED + " (on stacks of matrices the two QR steps are unrolled, not a "
                                  "fori_loop: cpu fails to compile the loop there once the QR has more than one "
                                  "panel, 'failed to solve for timepoint coverage')",
    "ops/linalg/polar.py::_cholesky_step": "gap: its triangular solves are the StableHLO substitution, not the "
                                           "hlojit.triangular_solve composite, whose llvm-cpu kernel inside polar's "
                                           "while loop made IREE 3.13 fail on the loop (a pipeline rewrite would have to "
                                           "tell that loop from the ones where the kernel compiles)",
    "ops/linalg/qr.py::_reflect_columns": _BLOCKED,
    "ops/linalg/qr.py::unblocked_qr": "meaning: a single row's Q is the identity (LAPACK's tau = 0), exact on every "
                                      "target; IREE's while-loop bug on the one-step loop motivated it",
    "ops/linalg/spectral.py::<module>": "note: svd's threshold comment says why QDWH was not measured at n = 64",
    "ops/linalg/spectral.py::_running_product": "meaning: the Hermitian eigh's running product of phases as log2(n) "
                                                "shifted products, exact on every target (vmvx fails on a complex128 "
                                                "reduce_window, which ops.cumprod builds; a pipeline rewrite of that "
                                                "would serve from_mlir modules too)",
    "ops/linalg/triangular.py::<module>": _BLOCKED,
    "ops/math.py::<module>": "note: what the helpers avoid (nothing relies on IEEE rounding of intermediates) and "
                             "where the pipeline mends IREE's ops; half floats compute in f32 (the accuracy of one "
                             "rounding)",
    "ops/math.py::_copysign": "meaning: copysign from the bits is its definition (the sign of -0.0 and NaN carry)",
    "ops/matmul.py::<module>": "meaning: 16-bit contractions accumulate in f32 (JAX's and XLA's semantics); the "
                               "comment adds IREE's timings",
    "ops/nn.py::conv": "note: the user's layout; pipeline/layout.py lays convolutions out per target",
    "ops/numeric.py::frexp": "meaning: frexp from the bits, exact on every target",
    "ops/reductions.py::<module>": "note: accumulation precision and order",
    "ops/shape.py::linspace": "meaning: numpy's own samples as a constant (numpy computes them in f64)",
    "ops/shape.py::_ones_where": "meaning: a select of two constants, the same value as a convert of the mask (which "
                                 "vmvx could not lower to f64)",
    "ops/special.py::<module>": "meaning: erf, lgamma, digamma have no StableHLO op",
    "ops/statistics.py::<module>": "note: the scan's rounds are dispatches on IREE; argsort and top_k sort one "
                                   "packed u64 key on every target (exact positions; faster than a sort of value "
                                   "and position on iree:cpu, the comment's figures; cuda's failure on the latter "
                                   "was a dead result, pipeline/sort_rewrites.py's sorts_on_their_own_buffers)",
    "ops/statistics.py::_wide_var": "meaning: total * inf is numpy's total / 0 (inf, NaN for 0/0); vmvx rejects a "
                                    "division by a constant 0",
    "ops/linalg/jacobi.py::_rotate_rows": "note: speed on every target: a Jacobi round as one elementwise pass "
                                          "(reverses of the pair view), not concatenated halves",
    "ops/linalg/jacobi.py::_permute": "note: speed on every target: static slices, not a gather by a constant "
                                      "permutation",
    "ops/math.py::_gelu_backward": "note: why the slope is recomputed from x, and where the tanh form's barrier went "
                                   "(targets.rescue)",
    "ops/trig.py::<module>": "note: sin, cos, tan, arctan2 are the spec's ops; pipeline/accurate_math.py mends IREE's",
    "ops/updates.py::_combine": "note: the spec's i1 ops; pipeline/legalize.py mends IREE's",
    "ops/updates.py::_update_scatter": "gap: the one scatter form IREE lowers for every index (indexed axes in "
                                       "front, whole axes as windows); pipeline/scatter_rewrites.py legalises the "
                                       "other forms (partial windows, batching), by points (slower)",
    "ops/updates.py::_without_dropped": "meaning: JAX drops out-of-range updates; the spec leaves them to the "
                                        "implementation",
    "batching/rules_elementwise.py::<module>": "meaning: the batching rule of the spec's optimization_barrier",
    "batching/rules_elementwise.py::_barrier": "meaning: the batching rule of the spec's optimization_barrier",
    "batching/rules_shape.py::_dynamic_update_slice": "gap: a batched dynamic_update_slice scatters single elements "
                                                      "(IREE lowers windows only along dimensions not indexed); "
                                                      "as windows with batching dims, scatter_rewrites.py's points "
                                                      "took 2x the time (278 against 134 us at 64 x 4096, "
                                                      "2026-12-07: its bounds checks and the operand's extra row)",
    "autodiff/core.py::<module>": "note: forward and backward in one module",
    "autodiff/rules_elementwise.py::_barrier": "meaning: the VJP of the spec's optimization_barrier",
}


def _owners(tree: ast.Module) -> list[tuple[int, int, str]]:
    """(first line, last line, name) of each top-level function and class, decorators included."""
    spans = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            start = min([node.lineno] + [d.lineno for d in node.decorator_list])
            spans.append((start, node.end_lineno, node.name))
    return spans


def found_patterns() -> dict[str, str]:
    """{"file::function": its first matching line} over the graph-building packages."""
    found = {}
    for package in GRAPH_PACKAGES:
        for path in sorted((FRONTEND / package).rglob("*.py")):
            text = path.read_text()
            spans = _owners(ast.parse(text))
            for n, line in enumerate(text.splitlines(), 1):
                if PATTERN.search(line) and not IMPORT.match(line):
                    owner = next((name for start, end, name in spans if start <= n <= end), "<module>")
                    found.setdefault(f"{path.relative_to(FRONTEND).as_posix()}::{owner}", line.strip())
    return found


def test_every_target_pattern_in_the_frontend_is_listed_with_a_reason():
    unlisted = {key: line for key, line in found_patterns().items() if key not in FRONTEND_PATTERNS}
    assert not unlisted, ("target-specific patterns in the frontend: make each a pipeline rewrite, or list it in "
                          f"FRONTEND_PATTERNS with its reason: {unlisted}")


def test_every_listed_pattern_is_still_there():
    stale = sorted(set(FRONTEND_PATTERNS) - set(found_patterns()))
    assert not stale, f"gone from the frontend: delete these entries of FRONTEND_PATTERNS: {stale}"


def test_each_entry_says_what_kind_it_is():
    assert all(reason.split(":")[0] in ("note", "meaning", "gap") for reason in FRONTEND_PATTERNS.values())
