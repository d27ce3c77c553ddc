"""The dtype promotion lattice (hlojit.frontend.dtypes), directly and through tracing.

Nodes are written as short names: b (bool), u8..u64, i8..i64, bf16, f16, f32, f64, and the weakly typed
Python scalars i* (int) and f* (float). A weak result materialises as the default dtype (i* -> int32,
f* -> float32) and stays weak.
"""
from __future__ import annotations

import itertools
import os
import subprocess
import sys

import ml_dtypes
import numpy as np
import pytest

import hlojit as hj
from hlojit.errors import DTypeError
from hlojit.frontend import dtypes

BF16 = np.dtype(ml_dtypes.bfloat16)

DTYPE = {"b": np.bool_, "u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64, "i8": np.int8,
         "i16": np.int16, "i32": np.int32, "i64": np.int64, "bf16": BF16, "f16": np.float16,
         "f32": np.float32, "f64": np.float64}
DTYPE = {k: np.dtype(v) for k, v in DTYPE.items()}
NAME = {d: n for n, d in DTYPE.items()}
NODES = [*DTYPE, "i*", "f*"]


def operand(node: str) -> tuple:
    """(dtype, weak) as result_type takes it."""
    return {"i*": (np.dtype(np.int32), True), "f*": (np.dtype(np.float32), True)}.get(node, (DTYPE.get(node), False))


def node(result: tuple) -> str:
    dtype, weak = result
    if weak:
        assert dtype in (np.int32, np.float32), f"a weak result materialises as int32/float32, not {dtype}"
        return "i*" if dtype == np.int32 else "f*"
    return NAME[dtype]


def promote(*nodes: str) -> str:
    return node(dtypes.result_type(*map(operand, nodes)))


# --- the named cases -------------------------------------------------------------------------------

CASES = [  # a, b, expected
    ("b", "b", "b"),
    ("b", "i8", "i8"), ("b", "u8", "u8"), ("b", "i32", "i32"), ("b", "bf16", "bf16"),
    ("b", "i*", "i*"), ("b", "f*", "f*"),
    ("i8", "u8", "i16"), ("u8", "i16", "i16"), ("u16", "i16", "i32"), ("u32", "i32", "i64"),
    ("u8", "u32", "u32"), ("i8", "i64", "i64"),
    ("i64", "u64", "f*"), ("u64", "i8", "f*"),  # no integer holds both: the default float, weakly typed
    ("bf16", "f16", "f32"), ("f16", "f32", "f32"), ("f32", "f64", "f64"), ("bf16", "f64", "f64"),
    ("i32", "f16", "f16"), ("i64", "bf16", "bf16"), ("u64", "f16", "f16"),  # ints never widen a float
    ("i*", "f32", "f32"), ("i*", "i8", "i8"), ("i*", "u8", "u8"), ("i*", "i64", "i64"), ("i*", "bf16", "bf16"),
    ("f*", "i32", "f*"), ("f*", "u8", "f*"), ("f*", "bf16", "bf16"), ("f*", "f16", "f16"), ("f*", "f64", "f64"),
    ("i*", "i*", "i*"), ("f*", "f*", "f*"), ("i*", "f*", "f*"),
]


@pytest.mark.parametrize("a, b, expected", CASES, ids=[f"{a}+{b}" for a, b, _ in CASES])
def test_named_cases(a, b, expected):
    assert promote(a, b) == expected
    assert promote(b, a) == expected


def test_weak_results_materialise_as_default_dtypes():
    assert dtypes.result_type((dtypes.int64, False), (dtypes.uint64, False)) == (np.dtype(np.float32), True)
    assert dtypes.result_type((dtypes.int32, False), (dtypes.float32, True)) == (np.dtype(np.float32), True)
    assert dtypes.result_type((dtypes.int32, True), (dtypes.int32, True)) == (np.dtype(np.int32), True)
    assert dtypes.result_type((dtypes.float32, False), (dtypes.int32, True)) == (np.dtype(np.float32), False)
    assert dtypes.DEFAULT_INT == np.int32 and dtypes.DEFAULT_FLOAT == np.float32


def test_one_operand_and_many():
    for n in NODES:
        assert promote(n) == n
    assert promote("i8", "u8", "i*") == "i16"
    assert promote("i8", "u8", "f16") == "f16"
    assert promote("b", "i*", "f*") == "f*"
    assert promote("bf16", "f*", "f16") == "f32"


def test_weak_flag_of_other_dtypes_means_python_scalar_kind():
    # a weakly typed int8/float64 operand counts as i*/f*: its own width does not matter
    assert dtypes.result_type((dtypes.int8, True), (dtypes.uint8, False)) == (dtypes.uint8, False)
    assert dtypes.result_type((dtypes.float64, True), (dtypes.float16, False)) == (dtypes.float16, False)
    assert dtypes.result_type((dtypes.bool_, True), (dtypes.int8, False)) == (dtypes.int8, False)


# --- the whole table ---------------------------------------------------------------------------------

# JAX's binary promotion table restricted to hlojit's dtypes (no complex); rows and columns in NODES order.
TABLE = """
       b    u8   u16  u32  u64  i8   i16  i32  i64  bf16 f16  f32  f64  i*   f*
b      b    u8   u16  u32  u64  i8   i16  i32  i64  bf16 f16  f32  f64  i*   f*
u8     u8   u8   u16  u32  u64  i16  i16  i32  i64  bf16 f16  f32  f64  u8   f*
u16    u16  u16  u16  u32  u64  i32  i32  i32  i64  bf16 f16  f32  f64  u16  f*
u32    u32  u32  u32  u32  u64  i64  i64  i64  i64  bf16 f16  f32  f64  u32  f*
u64    u64  u64  u64  u64  u64  f*   f*   f*   f*   bf16 f16  f32  f64  u64  f*
i8     i8   i16  i32  i64  f*   i8   i16  i32  i64  bf16 f16  f32  f64  i8   f*
i16    i16  i16  i32  i64  f*   i16  i16  i32  i64  bf16 f16  f32  f64  i16  f*
i32    i32  i32  i32  i64  f*   i32  i32  i32  i64  bf16 f16  f32  f64  i32  f*
i64    i64  i64  i64  i64  f*   i64  i64  i64  i64  bf16 f16  f32  f64  i64  f*
bf16   bf16 bf16 bf16 bf16 bf16 bf16 bf16 bf16 bf16 bf16 f32  f32  f64  bf16 bf16
f16    f16  f16  f16  f16  f16  f16  f16  f16  f16  f32  f16  f32  f64  f16  f16
f32    f32  f32  f32  f32  f32  f32  f32  f32  f32  f32  f32  f32  f64  f32  f32
f64    f64  f64  f64  f64  f64  f64  f64  f64  f64  f64  f64  f64  f64  f64  f64
i*     i*   u8   u16  u32  u64  i8   i16  i32  i64  bf16 f16  f32  f64  i*   f*
f*     f*   f*   f*   f*   f*   f*   f*   f*   f*   bf16 f16  f32  f64  f*   f*
"""


def table() -> dict:
    header, *rows = [line.split() for line in TABLE.strip().splitlines()]
    assert header == NODES and [r[0] for r in rows] == NODES
    return {(a, b): cell for a, *cells in rows for b, cell in zip(header, cells)}


def test_table_is_symmetric():
    t = table()
    assert all(t[a, b] == t[b, a] for a, b in t)


@pytest.mark.parametrize("a", NODES)
def test_every_pair_matches_the_table(a):
    t = table()
    assert {b: promote(a, b) for b in NODES} == {b: t[a, b] for b in NODES}


def test_commutative_over_all_pairs():
    for a, b in itertools.product(NODES, repeat=2):
        assert dtypes.result_type(operand(a), operand(b)) == dtypes.result_type(operand(b), operand(a)), (a, b)


def test_associative_over_all_triples():
    for a, b, c in itertools.product(NODES, repeat=3):
        left = dtypes.result_type(dtypes.result_type(operand(a), operand(b)), operand(c))
        right = dtypes.result_type(operand(a), dtypes.result_type(operand(b), operand(c)))
        assert left == right == dtypes.result_type(operand(a), operand(b), operand(c)), (a, b, c)


def test_python_scalars():
    assert dtypes.python_scalar_dtype(True) == (dtypes.bool_, False)  # bool is concrete
    assert dtypes.python_scalar_dtype(3) == (dtypes.int32, True)
    assert dtypes.python_scalar_dtype(2.5) == (dtypes.float32, True)
    with pytest.raises(DTypeError):
        dtypes.python_scalar_dtype("3")


# --- strict mode -------------------------------------------------------------------------------------

STRICT_REJECTS = [("i32", "f32"), ("i8", "u8"), ("bf16", "f16"), ("f32", "f64"), ("b", "i32"), ("u32", "u64"),
                  ("i8", "u8", "i*")]
STRICT_ALLOWS = [  # a different concrete dtype is needed for an error; weak scalars still adapt
    (("i32", "i32"), "i32"), (("i32", "i*"), "i32"), (("f32", "f*"), "f32"), (("bf16", "i*"), "bf16"),
    (("u8", "i*"), "u8"), (("i8", "f*"), "f*"), (("f16", "f*", "i*"), "f16"), (("i*", "f*"), "f*"),
]


@pytest.mark.parametrize("nodes", STRICT_REJECTS, ids="+".join)
def test_strict_mode_rejects_two_concrete_dtypes(nodes):
    assert promote(*nodes)  # fine in the standard mode
    with dtypes.promotion("strict"):
        with pytest.raises(DTypeError, match="not allowed in strict mode") as info:
            promote(*nodes)
    assert isinstance(info.value, TypeError)
    for n in nodes:
        if n not in ("i*", "f*"):
            assert str(DTYPE[n]) in str(info.value)


@pytest.mark.parametrize("nodes, expected", STRICT_ALLOWS, ids=["+".join(n) for n, _ in STRICT_ALLOWS])
def test_strict_mode_lets_weak_scalars_adapt(nodes, expected):
    with dtypes.promotion("strict"):
        assert promote(*nodes) == expected


def test_strict_mode_ends_with_its_block_even_on_error():
    with pytest.raises(DTypeError):
        with hj.promotion("strict"):
            promote("i32", "f32")
    assert promote("i32", "f32") == "f32"
    with hj.promotion("strict"):
        with hj.promotion("standard"):
            assert promote("i32", "f32") == "f32"
        with pytest.raises(DTypeError):
            promote("i32", "f32")


def test_promotion_is_exported_and_checks_its_mode():
    assert hj.promotion is dtypes.promotion
    with pytest.raises(ValueError, match="'standard' or 'strict'"):
        with hj.promotion("loose"):
            pass


def test_strict_mode_from_the_environment():
    code = ("from hlojit.frontend import dtypes as d\n"
            "try:\n    d.result_type((d.int32, False), (d.float32, False))\n"
            "except d.DTypeError:\n    print('strict')\n")
    env = dict(os.environ, HLOJIT_PROMOTION="strict",
               PYTHONPATH=os.pathsep.join([os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                           os.environ.get("PYTHONPATH", "")]))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == "strict", out.stderr


# --- through tracing (reference backend: no compiler) ------------------------------------------------

def run(fn, *args):
    return np.asarray(hj.jit(fn, backend="reference")(*args))


def test_float32_times_python_int_stays_float32():
    f = hj.jit(lambda x: x * 2, backend="reference")
    y = np.asarray(f(np.float32(1)))
    assert y.dtype == np.float32 and y == 2
    mlir = f.lower(np.float32(1)).mlir
    assert "%cst = stablehlo.constant dense<2.000000e+00> : tensor<f32>" in mlir
    assert "stablehlo.multiply %arg0, %cst : tensor<f32>" in mlir
    assert "f64" not in mlir and "convert" not in mlir


def test_int32_plus_python_float_is_float32():
    y = run(lambda x: x + 1.5, np.int32(1))
    assert y.dtype == np.float32 and y == 2.5


def test_bf16_plus_f16_arrays_is_float32():
    y = run(lambda x, y: x + y, np.full(3, 1.5, BF16), np.full(3, 0.25, np.float16))
    assert y.dtype == np.float32
    np.testing.assert_array_equal(y, np.full(3, 1.75, np.float32))


TRACED = [  # function, arguments, result dtype
    ("f16*int", lambda x: x * 2, (np.ones(2, np.float16),), np.float16),
    ("bf16*float", lambda x: x * 0.5, (np.ones(2, BF16),), BF16),
    ("u8+int", lambda x: x + 1, (np.ones(2, np.uint8),), np.uint8),
    ("i8-int", lambda x: x - 100, (np.ones(2, np.int8),), np.int8),
    ("bool+int", lambda x: x + 1, (np.array([True, False]),), np.int32),
    ("bool+float", lambda x: x + 1.0, (np.array([True, False]),), np.float32),
    ("i8+bool-scalar", lambda x: x + True, (np.ones(2, np.int8),), np.int8),
    ("i8+u8", lambda x, y: x + y, (np.ones(2, np.int8), np.ones(2, np.uint8)), np.int16),
    ("u32+i32", lambda x, y: x + y, (np.ones(2, np.uint32), np.ones(2, np.int32)), np.int64),
    ("i64+u64", lambda x, y: x + y, (np.ones(2, np.int64), np.ones(2, np.uint64)), np.float32),
    ("f32+f64", lambda x, y: x + y, (np.ones(2, np.float32), np.ones(2, np.float64)), np.float64),
    ("i32+f16", lambda x, y: x + y, (np.ones(2, np.int32), np.ones(2, np.float16)), np.float16),
    # numpy scalars are concrete (not weak)
    ("f16*np.float32", lambda x: x * np.float32(2), (np.ones(2, np.float16),), np.float32),
    ("weak-result-stays-weak", lambda x, y: (x + 1.5) * y, (np.int32(1), np.ones(2, BF16)), BF16),
    ("int-args", lambda a, b: a + b, (1, 2), np.int32),
    ("int-float-args", lambda a, b: a + b, (1, 2.5), np.float32),
    ("where", lambda c, x: hj.ops.where(c, x, 0), (np.array([True, False]), np.ones(2, np.float16)), np.float16),
]


@pytest.mark.parametrize("fn, args, expected", [pytest.param(*t[1:], id=t[0]) for t in TRACED])
def test_traced_output_dtype(fn, args, expected):
    """The dtype promotion picks, read from the traced program (no backend involved)."""
    [(_, dtype)] = hj.jit(fn, backend="reference").lower(*args).program.outputs
    assert dtype == np.dtype(expected)


@pytest.mark.parametrize("fn, args, expected", [pytest.param(*t[1:], id=t[0]) for t in TRACED])
def test_traced_result_dtype(fn, args, expected):
    assert run(fn, *args).dtype == np.dtype(expected)


@pytest.mark.parametrize("fn, args, expected", [
    pytest.param(lambda x: x * np.float64(2), (np.ones(2, np.float16),), np.float64, id="in-trace"),
    pytest.param(lambda a, b: a * b, (np.float64(1), 2.5), np.float64, id="as-argument"),
])
def test_numpy_float64_scalars_are_concrete(fn, args, expected):
    assert run(fn, *args).dtype == np.dtype(expected)


def test_python_int_that_does_not_fit_the_weak_target():
    def f(x):
        return x + 300
    line = f.__code__.co_firstlineno + 1
    with pytest.raises(DTypeError, match=rf"add: Python int 300 does not fit in int8 at test_promotion\.py:{line}"):
        run(f, np.ones(2, np.int8))


def test_strict_mode_raises_at_trace_time_naming_the_op_and_the_line():
    def f(x, y):
        return x * y
    line = f.__code__.co_firstlineno + 1
    with hj.promotion("strict"):
        with pytest.raises(hj.DTypeError) as info:
            hj.jit(f, backend="reference").lower(np.int32(1), np.float32(2))  # lower() only traces
    message = str(info.value)
    assert isinstance(info.value, TypeError)
    assert message.startswith("multiply: implicit promotion of float32, int32 is not allowed in strict mode")
    assert "(operands int32[], float32[])" in message
    assert message.endswith(f"at test_promotion.py:{line}")


def test_strict_mode_allows_weak_scalars_when_tracing():
    with hj.promotion("strict"):
        assert run(lambda x: x * 2 + 1.5, np.float16(1)).dtype == np.float16
        assert run(lambda x: x + 1, np.ones(2, np.uint8)).dtype == np.uint8
        with pytest.raises(DTypeError, match="add: implicit promotion of int8, uint8"):
            run(lambda x, y: x + y, np.ones(2, np.int8), np.ones(2, np.uint8))


def test_strict_mode_applies_to_already_cached_signatures():
    f = hj.jit(lambda x, y: x * y, backend="reference")
    assert np.asarray(f(np.int32(1), np.float32(2))).dtype == np.float32
    with hj.promotion("strict"):
        with pytest.raises(DTypeError):
            f(np.int32(1), np.float32(2))
