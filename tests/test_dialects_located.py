"""The StableHLO builders' locations and insertion points, the result types they compute, and their errors:
bad operands, unknown names and bodies that disagree with the op's types raise and leave no op behind.

The golden text of each builder is tests/test_dialects.py's and test_dialects_regions.py's; `build` is
dialect_golden.py's.
"""
from __future__ import annotations

import re

import numpy as np
import pytest
from iree.compiler import ir

from hlojit.dialects import stablehlo as hlo
from dialect_golden import SPELLINGS, build
from test_dialects import GENERATED, public_builders
from test_dialects_regions import argmax_body

# --- locations and insertion points -----------------------------------------------------------------

LOCATED = {  # builder -> (argument types, call with loc=)
    "constant": ([], lambda loc: hlo.constant(np.float32(1), loc=loc)),
    "iota": ([], lambda loc: hlo.iota([3], 0, np.int32, loc=loc)),
    "convert": (["3xf32"], lambda loc, x: hlo.convert(x, np.int32, loc=loc)),
    "broadcast_in_dim": (["3xf32"], lambda loc, x: hlo.broadcast_in_dim(x, [2, 3], [1], loc=loc)),
    "reshape": (["3xf32"], lambda loc, x: hlo.reshape(x, [3, 1], loc=loc)),
    "transpose": (["2x3xf32"], lambda loc, x: hlo.transpose(x, [1, 0], loc=loc)),
    "compare": (["3xf32"], lambda loc, x: hlo.compare(x, x, "LT", loc=loc)),
    "select": (["3xi1", "3xf32"], lambda loc, p, x: hlo.select(p, x, x, loc=loc)),
    "is_finite": (["3xf32"], lambda loc, x: hlo.is_finite(x, loc=loc)),
    "real": (["3xcomplex<f32>"], lambda loc, x: hlo.real(x, loc=loc)),
    "imag": (["3xcomplex<f32>"], lambda loc, x: hlo.imag(x, loc=loc)),
    "complex": (["3xf32"], lambda loc, x: hlo.complex(x, x, loc=loc)),
    "fft": (["4xcomplex<f32>"], lambda loc, x: hlo.fft(x, "FFT", [4], loc=loc)),
    "unary": (["3xf32"], lambda loc, x: hlo.unary("exponential", x, loc=loc)),
    "binary": (["3xf32"], lambda loc, x: hlo.binary("add", x, x, loc=loc)),
    "reduce": (["3xf32", "f32"], lambda loc, x, init: hlo.reduce([x], [init], [0], "add", loc=loc)),
    "dot_general": (["3xf32"], lambda loc, x: hlo.dot_general(x, x, lhs_contract=[0], rhs_contract=[0], loc=loc)),
    "concatenate": (["3xf32"], lambda loc, x: hlo.concatenate([x, x], 0, loc=loc)),
    "slice": (["3xf32"], lambda loc, x: hlo.slice(x, [1], [3], loc=loc)),
    "pad": (["3xf32", "f32"], lambda loc, x, v: hlo.pad(x, v, [1], [0], loc=loc)),
    "reverse": (["3xf32"], lambda loc, x: hlo.reverse(x, [0], loc=loc)),
    "convolution": (["1x1x4xf32", "1x1x2xf32"], lambda loc, x, w: hlo.convolution(
        x, w, dimension_numbers="[b, f, 0]x[o, i, 0]->[b, f, 0]", strides=[1], padding=[[0, 0]], lhs_dilation=[1],
        rhs_dilation=[1], loc=loc)),
    "reduce_window": (["4xf32", "f32"], lambda loc, x, init: hlo.reduce_window(
        [x], [init], window=[2], strides=[2], padding=[[0, 0]], body="add", loc=loc)),
    "select_and_scatter": (["4xf32", "2xf32", "f32"], lambda loc, x, g, init: hlo.select_and_scatter(
        x, g, init, window=[2], strides=[2], padding=[[0, 0]], select="GE", scatter="add", loc=loc)),
    "if_": (["i1", "3xf32"], lambda loc, p, x: hlo.if_(p, lambda: [x], lambda: [x], loc=loc)),
    "case": (["i32", "3xf32"], lambda loc, k, x: hlo.case(k, [lambda: [x]], loc=loc)),
    "while_": (["i1"], lambda loc, p: hlo.while_([p], lambda a: [a], lambda a: [a], loc=loc)),
    "dynamic_slice": (["3xf32", "i32"], lambda loc, x, i: hlo.dynamic_slice(x, [i], [2], loc=loc)),
    "dynamic_update_slice": (["3xf32", "i32"], lambda loc, x, i: hlo.dynamic_update_slice(x, x, [i], loc=loc)),
    "optimization_barrier": (["3xf32"], lambda loc, x: hlo.optimization_barrier([x], loc=loc)),
    "composite": (["3xf32"], lambda loc, x: hlo.composite("hlojit.cholesky", [x], [x.type], "main", loc=loc)),
    "map": (["3xf32"], lambda loc, x: hlo.map([x], lambda v: v, loc=loc)),
    "bitcast_convert": (["3xf32"], lambda loc, x: hlo.bitcast_convert(x, np.int32, loc=loc)),
    "sort": (["3xf32"], lambda loc, x: hlo.sort([x], 0, lambda a, b: hlo.compare(a, b, "LT"), loc=loc)),
    "gather": (["3xf32", "1xi32"], lambda loc, x, i: hlo.gather(
        x, i, offset_dims=[], collapsed_slice_dims=[0], start_index_map=[0], index_vector_dim=1, slice_sizes=[1],
        loc=loc)),
    "scatter": (["3xf32", "1x1xi32", "1xf32"], lambda loc, x, i, u: hlo.scatter(
        x, i, u, "add", update_window_dims=[], inserted_window_dims=[0], scatter_dims_to_operand_dims=[0],
        index_vector_dim=1, loc=loc)),
}


def located(make):
    """A builder call for build(): `make(loc, *args)` with loc = user.py:42:7."""
    def call(*args):
        return make(ir.Location.file("user.py", 42, 7), *args)
    return call


def location_of_line(asm: str, needle: str) -> str:
    """The location printed for the first op whose line contains `needle`, #loc aliases resolved (an op
    with a region prints its location after the region's closing brace)."""
    aliases = dict(re.findall(r"^(#loc\d*) = (loc\(.*\))$", asm, re.M))
    lines = asm.splitlines()
    i = next(i for i, line in enumerate(lines) if needle in line)
    if not lines[i].endswith(")") or "loc(" not in lines[i]:
        indent = len(lines[i]) - len(lines[i].lstrip())
        i = next(j for j in range(i + 1, len(lines))  # the brace closing the last region: `}) ... loc(...)`
                 if lines[j].startswith(" " * indent + "}") and "loc(" in lines[j])
    loc = re.search(r"(loc\((?:#loc\d*|\".*)\))$", lines[i]).group(1)
    while (alias := re.search(r"#loc\d*", loc)) is not None:  # nested aliases: loc("op"(#loc1))
        loc = loc.replace(alias.group(0), aliases[alias.group(0)][4:-1], 1)
    return loc


@pytest.mark.parametrize("name, op", [("not_", "not"), ("and_", "and"), ("or_", "or"), ("sine", "sine"),
                                      ("clamp", "clamp")])
def test_generated_builders_take_python_names_and_loc(name, op):
    fn = getattr(hlo, name)
    assert name in hlo.__all__ and fn.__name__ == name
    args = {"clamp": ["3xi32"] * 3, "sine": ["3xf32"]}.get(name, ["3xi32"] * (1 if op == "not" else 2))
    built = build(args, located(lambda loc, *xs: fn(*xs, loc=loc)))
    assert location_of_line(built.asm, f"= stablehlo.{op}") == f'loc("stablehlo.{op}"("user.py":42:7))'


def test_located_covers_every_builder():
    assert set(LOCATED) - GENERATED == public_builders()


# ops MLIR prints in the generic "stablehlo.op"(...) form
GENERIC_FORM = {"reduce_window", "select_and_scatter", "if", "case", "sort", "gather", "scatter", "map"}
OP_NAMES = {"unary": "exponential", "binary": "add", "if_": "if", "while_": "while"}  # builder -> op name


@pytest.mark.parametrize("name", sorted(LOCATED))
def test_loc_puts_a_file_location_on_the_op(name):
    args, make = LOCATED[name]
    op_name = OP_NAMES.get(name, name)
    built = build(args, located(make))
    # the op's name wraps the user's line, so the name survives IREE's fusion for explain()
    needle = f'= "stablehlo.{op_name}"' if op_name in GENERIC_FORM else f"= stablehlo.{op_name}"
    assert location_of_line(built.asm, needle) == f'loc("stablehlo.{op_name}"("user.py":42:7))'


@pytest.mark.parametrize("name", ["constant", "binary", "reduce"])
def test_without_loc_the_op_takes_the_ambient_location(name):
    args, make = LOCATED[name]
    op_name = {"binary": "add"}.get(name, name)
    built = build(args, lambda *a: make(None, *a), location=("ambient.py", 3, 1))
    assert location_of_line(built.asm, f"= stablehlo.{op_name}") == 'loc("ambient.py":3:1)'


def test_loc_of_reduce_also_marks_its_body():
    def make(values, indices):
        inits = [hlo.constant(np.float32(0)), hlo.constant(np.int32(0))]
        return hlo.reduce([values, indices], inits, [0], argmax_body, loc=ir.Location.file("user.py", 9, 1))
    built = build(["3xf32", "3xi32"], make)
    assert location_of_line(built.asm, "stablehlo.reduce") == 'loc("stablehlo.reduce"("user.py":9:1))'
    for needle in ("stablehlo.compare", "stablehlo.select", "stablehlo.return"):
        assert location_of_line(built.asm, needle) == 'loc("user.py":9:1)', needle


def test_ip_places_the_op_at_the_given_insertion_point():
    def make():
        first = hlo.constant(np.int32(1))
        before_first = ir.InsertionPoint(first.owner)  # inserts before `first`
        second = hlo.iota([2], 0, np.int32, ip=before_first)
        return [first, second]
    built = build([], make)
    assert built.lines == ["%0 = stablehlo.iota dim = 0 : tensor<2xi32>",
                           "%c = stablehlo.constant dense<1> : tensor<i32>"]


# --- result types computed by the builders, read back from the values -------------------------------

def test_result_types_are_ranked_tensors_of_the_right_element_type():
    def make(x):
        values = [hlo.convert(x, d) for d in SPELLINGS.values()]
        values += [hlo.iota([2, 3], 1, d) for d in SPELLINGS.values() if d.kind != "b"]
        return values
    built = build(["2x3xf32"], make)
    expected = [((2, 3), elt, d) for elt, d in SPELLINGS.items()]
    expected += [((2, 3), elt, d) for elt, d in SPELLINGS.items() if d.kind != "b"]
    assert built.results == expected


# --- errors ----------------------------------------------------------------------------------------

def test_generated_builders_check_their_operands():
    def make(x, y):
        with pytest.raises(TypeError, match="stablehlo.negate takes 1 operands, not 2"):
            hlo.negate(x, y)
        with pytest.raises(ValueError, match="stablehlo.and: operand types differ"):
            hlo.and_(x, y)
        return [x]
    assert build(["3xi32", "3xi8"], make).lines == []


def raises_without_emitting(args, make, error, match):
    """`make` raises `error` and leaves the function body empty (no half-built op)."""
    def call(*a):
        with pytest.raises(error, match=match):
            make(*a)
        return list(a[:1])
    built = build(args, call)
    assert built.lines == []


@pytest.mark.parametrize("name", ["frobnicate", "add", "Negate", ""])
def test_unknown_unary_op(name):
    raises_without_emitting(["3xf32"], lambda x: hlo.unary(name, x), ValueError, "unknown StableHLO unary op")


@pytest.mark.parametrize("name", ["frobnicate", "negate", "ADD", "compare"])
def test_unknown_binary_op(name):
    raises_without_emitting(["3xf32"], lambda x: hlo.binary(name, x, x), ValueError, "unknown StableHLO binary op")


@pytest.mark.parametrize("lhs, rhs", [("3xf32", "3xi32"), ("3xf32", "3xf64"), ("2x3xf32", "3x2xf32"),
                                      ("3xf32", "f32"), ("3xi32", "3xui32")])
def test_binary_rejects_mismatched_operand_types(lhs, rhs):
    raises_without_emitting([lhs, rhs], lambda x, y: hlo.binary("add", x, y), ValueError,
                            rf"stablehlo\.add: operand types differ: tensor<{lhs}> vs tensor<{rhs}>")


@pytest.mark.parametrize("direction", ["lt", "GTE", "==", "", "FLOAT"])
def test_compare_rejects_a_bad_direction(direction):
    raises_without_emitting(["3xf32"], lambda x: hlo.compare(x, x, direction), ValueError,
                            r"comparison direction must be one of \('EQ', 'NE', 'LT', 'LE', 'GT', 'GE'\)")


def test_reduce_with_an_unknown_body_name_raises():
    with ir.Context(), ir.Location.unknown():  # not via build(): the module is left invalid (see below)
        module = ir.Module.create()
        with ir.InsertionPoint(module.body):
            x, init = hlo.constant(np.zeros(3, np.float32)), hlo.constant(np.float32(0))
            with pytest.raises(ValueError, match="unknown StableHLO binary op 'frobnicate'"):
                hlo.reduce([x], [init], [0], "frobnicate")


def test_reduce_with_an_unknown_body_name_leaves_no_op_behind():
    raises_without_emitting(["3xf32", "f32"], lambda x, init: hlo.reduce([x], [init], [0], "frobnicate"),
                            ValueError,
                            "unknown StableHLO binary op")


@pytest.mark.parametrize("make", [
    lambda x: hlo.constant(np.zeros(2, np.clongdouble)),
    lambda x: hlo.convert(x, np.longdouble),
    lambda x: hlo.iota([2], 0, np.clongdouble),
    lambda x: hlo.dot_general(x, x, lhs_contract=[0], rhs_contract=[0], dtype=np.longdouble),
], ids=["constant", "convert", "iota", "dot_general"])
def test_unsupported_dtypes_raise_type_error(make):
    raises_without_emitting(["3xf32"], make, TypeError, "is not supported")


# --- control family: bodies that disagree with the op's types leave nothing behind ------------------

class _BodyFailed(Exception):
    pass


def _failing_body(*args):
    raise _BodyFailed()


@pytest.mark.parametrize("args, make, error, match", [
    (["i1", "3xf32", "3xi32"], lambda p, x, y: hlo.if_(p, lambda: [x], lambda: [y]), ValueError,
     r"stablehlo\.if: branch 1 returns \(tensor<3xi32>\) but branch 0 returns \(tensor<3xf32>\)"),
    (["i32", "3xf32"], lambda k, x: hlo.case(k, [lambda: [x], lambda: [x], lambda: [x, x]]), ValueError,
     r"stablehlo\.case: branch 2 returns \(tensor<3xf32>, tensor<3xf32>\) but branch 0 returns"),
    (["i32", "3xf32"], lambda k, x: hlo.case(k, []), ValueError, "at least one body"),
    (["i32", "3xf32"], lambda n, x: hlo.while_([n, x], lambda i, a: [i], lambda i, a: [i, a]), ValueError,
     r"stablehlo\.while: the condition returns \(tensor<i32>\), it must return \(tensor<i1>\)"),
    (["i32", "3xf32"], lambda n, x: hlo.while_([n, x], lambda i, a: [hlo.compare(i, n, "LT")], lambda i, a: [a, i]),
     ValueError, r"the body returns \(tensor<3xf32>, tensor<i32>\), it must return \(tensor<i32>, tensor<3xf32>\)"),
    (["i1", "3xf32"], lambda p, x: hlo.if_(p, lambda: [x], _failing_body), _BodyFailed, None),
    (["i32", "3xf32"], lambda n, x: hlo.while_([n], lambda i: [hlo.compare(i, n, "LT")], _failing_body),
     _BodyFailed, None),
    (["3xf32"], lambda x: hlo.map([x], lambda v: x), ValueError,
     r"stablehlo\.map: the body returns tensor<3xf32>, it must return a 0-d tensor"),
], ids=["if-types-differ", "case-count-differs", "case-no-bodies", "while-cond-not-i1", "while-body-types",
        "if-body-raises", "while-body-raises", "map-body-not-scalar"])
def test_region_builders_leave_no_op_behind(args, make, error, match):
    raises_without_emitting(args, make, error, match)
