"""Complex math ops of a `hj.from_mlir` module (which never goes through the frontend's composites), on every
target: pipeline/complex_math_pairs.py writes them out on real pairs before IREE, whose own complex lowering
crashed the process (a complex<f64> tan of a constant: SIGFPE in the compiler) or did not link."""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import hlojit as hj
from hlojit import ops
from hlojit.errors import CompileError
from conftest import assert_close

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# stablehlo op -> numpy's value of it
UNARY = {
    "exponential": np.exp, "log": np.log, "sqrt": np.sqrt, "sine": np.sin, "cosine": np.cos, "tan": np.tan,
    "tanh": np.tanh, "abs": np.abs, "sign": lambda z: z / np.abs(z), "log_plus_one": np.log1p,
    "exponential_minus_one": np.expm1, "rsqrt": lambda z: 1 / np.sqrt(z), "logistic": lambda z: 1 / (1 + np.exp(-z)),
}
# moderate values, small ones (log1p, expm1 keep their digits), a large real part (tanh's far branch) and a
# large imaginary part (tan's, sine's)
X = np.array([1.5 + 2.5j, -0.3 + 0.4j, 3.5 - 4.5j, 1e-5 + 2e-5j, -2 + 0.5j, 25 + 1j, 0.3 - 25j, 0.7 - 0.2j])
Y = np.array([0.5 + 0.25j, 2 + 0j, -1.5 + 0.5j, 0.3 - 0.1j, 3 + 0j, 0.5 + 0j, 1 + 1j, -0.5 - 2j])
DTYPES = {"c64": ("complex<f32>", np.complex64), "c128": ("complex<f64>", np.complex128)}
# the ops also applied to a constant: pipeline/constant_folding.py folds it with the reference's op before IREE
# (whose const-eval JIT-compiled it, ~30 s of this test on each target, and whose own complex lowering crashed
# there; c128 tan: the test in a child below), so this checks the folded constant; the ops on x check IREE's code
ON_A_CONSTANT = {"c64": ("tan",), "c128": ()}


def _literal(values) -> str:
    return "[" + ", ".join(f"({v.real:.17e}, {v.imag:.17e})" for v in values) + "]"


def _module(tags) -> tuple[str, list]:
    """One function: every op of UNARY on argument x (and those of ON_A_CONSTANT on a constant), and
    power(x, y), for each dtype of `tags` (DTYPES' keys); and the numpy values of its results, in order."""
    n = len(X)
    args, lines, results, expected = [], [], [], []
    for tag in tags:
        mlir, dtype = DTYPES[tag]
        t = f"tensor<{n}x{mlir}>"
        real_t = t.replace(mlir, mlir[8:-1])
        args += [f"%x_{tag}: {t}", f"%y_{tag}: {t}"]
        lines.append(f"%k_{tag} = stablehlo.constant dense<{_literal(X)}> : {t}")
        x = X.astype(dtype)
        for source in ("x", "k"):
            for op, numpy_op in UNARY.items():
                if source == "k" and op not in ON_A_CONSTANT[tag]:
                    continue
                name = f"%{op}_{source}_{tag}"
                out_t = real_t if op == "abs" else t
                lines.append(f"{name} = stablehlo.{op} %{source}_{tag} : ({t}) -> {out_t}")
                results.append((name, out_t))
                value = numpy_op(x.astype(np.complex128))      # in c128, rounded once to the result's dtype
                expected.append(value.astype(np.real(x).dtype if op == "abs" else dtype))
        lines.append(f"%power_{tag} = stablehlo.power %x_{tag}, %y_{tag} : {t}")
        results.append((f"%power_{tag}", t))
        expected.append((X.astype(np.complex128) ** Y.astype(np.complex128)).astype(dtype))
    body = "\n    ".join(lines)
    names, types = ", ".join(r[0] for r in results), ", ".join(r[1] for r in results)
    text = f"""module {{
  func.func @main({", ".join(args)}) -> ({types}) {{
    {body}
    return {names} : {types}
  }}
}}"""
    return text, expected


# The reference backend both dtypes; iree:cpu complex64: the frontend emits these same ops, so test_complex's table
# runs each on iree:cpu in complex128 and on vmvx in complex64, and test_complex_special_values their special
# values there (this module's vmvx run and iree:cpu's complex128 half took ~17 s of the suite, 2026-12-06). What
# is this file's own, a from_mlir module and ops of constants, is the same code on every target.
@pytest.mark.parametrize("backend", ["reference", "iree:cpu"])
def test_complex_math_ops_of_a_from_mlir_module(backend):
    tags = ("c64",) if backend == "iree:cpu" else tuple(DTYPES)
    text, expected = _module(tags)
    f = hj.from_mlir(text, entry="main", backend=backend)
    inputs = [a.astype(DTYPES[tag][1]) for tag in tags for a in (X, Y)]
    outputs = f(*inputs)
    assert len(outputs) == len(expected)
    for i, (actual, want) in enumerate(zip(outputs, expected)):
        scale = 100 if want.dtype in (np.complex64, np.float32) else 10
        try:
            assert_close(actual, want, scale=scale)
        except AssertionError as e:
            raise AssertionError(f"result {i}: {e}") from None


TAN_C64 = """module {
  func.func @tan_op_test_c64() -> tensor<2xcomplex<f64>> {
    %cst = stablehlo.constant dense<[(1.5, 2.5), (3.5, 4.5)]> : tensor<2xcomplex<f64>>
    %0 = stablehlo.tan %cst : tensor<2xcomplex<f64>>
    return %0 : tensor<2xcomplex<f64>>
  }
}"""

_IN_A_CHILD = """
import sys, numpy as np, hlojit as hj
z = np.asarray(hj.from_mlir(sys.stdin.read(), entry="tan_op_test_c64", backend="iree:cpu")())
np.testing.assert_allclose(z, np.tan(np.array([1.5 + 2.5j, 3.5 + 4.5j])), rtol=1e-12)
print("ok")
"""


def test_complex_f64_tan_of_a_constant_does_not_kill_the_process():
    """It died with SIGFPE inside IREE's compiler (rc -8): run in a child so that fails this test only. The tan is
    now folded before IREE (pipeline/constant_folding.py), so IREE compiles only its constant."""
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    child = subprocess.run([sys.executable, "-c", _IN_A_CHILD], input=TAN_C64, capture_output=True, text=True,
                           env=env, cwd=ROOT, timeout=300)
    assert child.returncode == 0 and child.stdout.strip() == "ok", (child.returncode, child.stderr[-2000:])


@pytest.mark.parametrize("backend", ["iree:cpu"])
def test_a_known_compiler_crasher_is_a_compile_error(backend):
    """A 1-D complex<f64> stablehlo.fft killed IREE's compiler with SIGFPE: refused before IREE sees it where
    pipeline/fft_rewrites.py leaves it (longer than its MAX_LENGTH)."""
    text = """module {
  func.func @main(%x: tensor<300xcomplex<f64>>) -> tensor<300xcomplex<f64>> {
    %0 = stablehlo.fft %x, type = FFT, length = [300] : (tensor<300xcomplex<f64>>) -> tensor<300xcomplex<f64>>
    return %0 : tensor<300xcomplex<f64>>
  }
}"""
    with pytest.raises(CompileError, match="stablehlo.fft"):
        hj.from_mlir(text, entry="main", backend=backend)(np.zeros(300, np.complex128))


def test_a_complex_math_op_beside_a_complex_sort_is_written_out_where_it_stands():
    """A complex sort keeps its function from the pairs rewrite; the tan beside it was refused (IREE's own complex
    tan would reach llvm-cpu), and is now written out on its operand's parts alone (complex_math_by_parts)."""
    text = """module {
  func.func @main(%x: tensor<2xcomplex<f64>>) -> (tensor<2xcomplex<f64>>, tensor<2xcomplex<f64>>) {
    %0 = "stablehlo.sort"(%x) ({
    ^bb0(%a: tensor<complex<f64>>, %b: tensor<complex<f64>>):
      %r = stablehlo.real %a : (tensor<complex<f64>>) -> tensor<f64>
      %s = stablehlo.real %b : (tensor<complex<f64>>) -> tensor<f64>
      %c = stablehlo.compare LT, %r, %s : (tensor<f64>, tensor<f64>) -> tensor<i1>
      stablehlo.return %c : tensor<i1>
    }) {dimension = 0 : i64} : (tensor<2xcomplex<f64>>) -> tensor<2xcomplex<f64>>
    %1 = stablehlo.tan %x : tensor<2xcomplex<f64>>
    return %0, %1 : tensor<2xcomplex<f64>>, tensor<2xcomplex<f64>>
  }
}"""
    x = np.array([3 - 4j, 1 + 2j])
    ordered, tan = hj.from_mlir(text, entry="main", backend="iree:cpu")(x)
    assert_close(ordered, x[::-1])
    assert_close(tan, np.tan(x), scale=10)


CUDA_BEFORE = """func.func @main(%z: tensor<2xcomplex<f32>>, %w: tensor<2xcomplex<f32>>)
    -> (tensor<2xi1>, tensor<2xcomplex<f32>>) {
  %0 = stablehlo.compare EQ, %z, %w, FLOAT : (tensor<2xcomplex<f32>>, tensor<2xcomplex<f32>>) -> tensor<2xi1>
  %1 = stablehlo.multiply %z, %w : tensor<2xcomplex<f32>>
  return %0, %1 : tensor<2xi1>, tensor<2xcomplex<f32>>
}"""
CUDA_AFTER = [  # the compare on the parts where it stands; the complex product stays IREE's own
    "%0 = stablehlo.real %arg0 : (tensor<2xcomplex<f32>>) -> tensor<2xf32>",
    "%1 = stablehlo.imag %arg0 : (tensor<2xcomplex<f32>>) -> tensor<2xf32>",
    "%2 = stablehlo.real %arg1 : (tensor<2xcomplex<f32>>) -> tensor<2xf32>",
    "%3 = stablehlo.imag %arg1 : (tensor<2xcomplex<f32>>) -> tensor<2xf32>",
    "%4 = stablehlo.compare EQ, %0, %2, FLOAT : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xi1>",
    "%5 = stablehlo.compare EQ, %1, %3, FLOAT : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xi1>",
    "%6 = stablehlo.and %4, %5 : tensor<2xi1>",
    "%7 = stablehlo.multiply %arg0, %arg1 : tensor<2xcomplex<f32>>",
    "return %6, %7 : tensor<2xi1>, tensor<2xcomplex<f32>>",
]


def _rewritten_for_cuda(text):
    from iree.compiler import ir
    from hlojit.pipeline import complex_pairs, sessions, targets
    session = sessions.session_for(targets.cuda().flags)
    module = ir.Module.parse(text, context=session.context)
    with session.context:
        count = complex_pairs.complex_math_by_parts(module)
    lines = [line.strip() for line in str(module).splitlines()]
    return count, lines[lines.index(next(x for x in lines if x.startswith("func.func"))) + 1:-2]


def test_cuda_complex_math_by_parts_golden():
    """cuda keeps complex values and arithmetic; its complex compares and math ops are written out where they
    stand (the frontend emitted part-wise composites for it before it emitted the complex ops)."""
    count, body = _rewritten_for_cuda(CUDA_BEFORE)
    assert count == 1 and body == CUDA_AFTER
    sine = """func.func @main(%z: tensor<2xcomplex<f32>>) -> tensor<2xcomplex<f32>> {
  %0 = stablehlo.sine %z : tensor<2xcomplex<f32>>
  return %0 : tensor<2xcomplex<f32>>
}"""
    count, body = _rewritten_for_cuda(sine)
    assert count == 1 and body[-2].startswith("%") and "stablehlo.complex" in body[-2]
    assert not any("stablehlo.sine" in line and "complex" in line for line in body)
    from hlojit.pipeline import complex_pairs, quirks
    assert complex_pairs.complex_math_by_parts in quirks.QUIRKS["cuda"]


def test_cuda_compiles_complex_math():
    """iree:cuda has no GPU here: the complex math ops, their composites and power compile for it (sm_80)."""
    from hlojit import ops
    from hlojit.pipeline import compile_program, cuda

    def f(a, b):
        return [fn(z) for z in (a, b) for fn in (ops.exp, ops.abs, ops.arcsin)] + \
            [a ** (a + 1), b == b[::-1], a * a / (a + 1)]
    z = np.ones(4, np.complex64)
    compile_program(hj.jit(f).lower(z, z.astype(np.complex128)).program, cuda())


MATMUL_BESIDE_A_SORT = """module {
  func.func @main(%a: tensor<8x8xcomplex<f32>>, %b: tensor<8x8xcomplex<f32>>)
      -> (tensor<8x8xcomplex<f32>>, tensor<8xcomplex<f32>>) {
    %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0]
        : (tensor<8x8xcomplex<f32>>, tensor<8x8xcomplex<f32>>) -> tensor<8x8xcomplex<f32>>
    %1 = stablehlo.slice %a [0:1, 0:8] : (tensor<8x8xcomplex<f32>>) -> tensor<1x8xcomplex<f32>>
    %2 = stablehlo.reshape %1 : (tensor<1x8xcomplex<f32>>) -> tensor<8xcomplex<f32>>
    %3 = "stablehlo.sort"(%2) ({
    ^bb0(%p: tensor<complex<f32>>, %q: tensor<complex<f32>>):
      %r = stablehlo.real %p : (tensor<complex<f32>>) -> tensor<f32>
      %s = stablehlo.real %q : (tensor<complex<f32>>) -> tensor<f32>
      %c = stablehlo.compare LT, %r, %s : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %c : tensor<i1>
    }) {dimension = 0 : i64} : (tensor<8xcomplex<f32>>) -> tensor<8xcomplex<f32>>
    return %0, %3 : tensor<8x8xcomplex<f32>>, tensor<8xcomplex<f32>>
  }
}"""


@pytest.mark.parametrize("beside_a_sort", [False, True], ids=["pairs", "by-parts"])
def test_complex_matmuls_compile_data_tiled(beside_a_sort):
    """llvm-cpu with data tiling could not compile a complex64 matmul: the join of its parts fused into the
    dispatch unpacking the tiled result ('vector.transfer_read' op requires valid padding vector elemental
    type), and every such module compiled twice, the second time without data tiling (test_complex's c64 table:
    16 s lost). The join now stands behind a barrier, and a function kept complex (a complex sort) gets its
    complex dots written out on the parts too."""
    from hlojit.frontend.from_mlir import parse
    from hlojit.pipeline import compile_program, targets
    rng = np.random.default_rng(3)
    a, b = (rng.standard_normal((2, 8, 8, 2)) @ np.array([1, 1j])).astype(np.complex64)
    if beside_a_sort:
        text, expected = MATMUL_BESIDE_A_SORT, (a @ b, np.sort_complex(a[0]))
    else:
        text = MATMUL_BESIDE_A_SORT.replace(", tensor<8xcomplex<f32>>)", ")").split("%1 =")[0] + \
            "return %0 : tensor<8x8xcomplex<f32>>\n  }\n}"
        expected = (a @ b,)
    target = targets.cpu()
    assert target.flag_set == "data-tiling"
    assert compile_program(parse(text), target).target.flag_set == "data-tiling"   # not its fallback
    results = hj.from_mlir(text, entry="main", backend="iree:cpu")(a, b)
    for actual, wanted in zip(results if beside_a_sort else (results,), expected):
        assert_close(actual, wanted.astype(np.complex64), scale=4)


def test_a_complex_matmul_far_from_its_join_compiles_data_tiled():
    """np.cov of complex rows: z @ z^H, then a complex division written out on the parts (~100 real ops) before
    the join. The barrier's search for a dot stopped four ops deep, so the join fused into the dot's unpacking
    dispatch again and the module compiled twice (test_complex's tables: 10 s a dtype lost to the fallback)."""
    rng = np.random.default_rng(4)
    z = (rng.standard_normal((3, 4)) + 1j * rng.standard_normal((3, 4))).astype(np.complex64)
    f = hj.jit(lambda z: ops.cov(z), backend="iree:cpu")
    assert f.compile(z).compiled.target.flag_set == "data-tiling"   # not its fallback
    assert_close(f(z), np.cov(z).astype(np.complex64), scale=8)
