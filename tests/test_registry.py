"""The op registry (hlojit/dialects/registry.py) against every table of an op's facets.

Each table must have every recorded op but its deliberate gaps, listed here with the reason. The lists are
exact: a table that gains an op fails too until the op leaves its gap list, so the lists stay true.
"""
from __future__ import annotations

import ast
import pathlib
import re

import pytest
from iree.compiler import ir

import hlojit  # noqa: F401  (fills every table)
from hlojit.backends import iree as iree_backend
from hlojit.interpreter import OPS as REFERENCE
from hlojit.dialects import registry, stablehlo as hlo
from hlojit.frontend import donation
from hlojit.frontend.autodiff import RULES as VJP
from hlojit.frontend.batching import NEVER_BATCHED, RULES as BATCHING

LIBRARY = pathlib.Path(hlojit.__file__).parent


def _gaps(reason: str, names: str, dialect: str = "stablehlo") -> dict:
    return {f"{dialect}.{name}": reason for name in names.split()}


COLLECTIVES = "all_gather all_reduce all_to_all collective_broadcast collective_permute reduce_scatter"
HOST = "infeed outfeed send recv after_all create_token"
DYNAMIC = ("dynamic_broadcast_in_dim dynamic_conv dynamic_gather dynamic_iota dynamic_pad dynamic_reshape "
           "real_dynamic_slice get_dimension_size")
DEPRECATED = "broadcast dot einsum unary_einsum rng torch_index_select"
QUANTIZED = "uniform_quantize uniform_dequantize"
CHLO = " ".join(r.short for r in registry.RECORDS.values() if r.dialect == "chlo")

_ONE_DEVICE = "hlojit's programs run on one device, with no host channels (hj.distributed works between steps)"
_STATIC = "hlojit's shapes are static: these come only in from_mlir modules"
_OLD = "deprecated in the spec; hlojit emits broadcast_in_dim, dot_general and its own random bits"
_QUANT = "quantized element types are not among hlojit's dtypes"
_FOREIGN = "hlojit emits StableHLO only: CHLO ops come in from_mlir modules"
_FROM_MLIR = "no frontend op emits it: it comes only in from_mlir modules"

GAPS = {
    "builders": {
        **_gaps(_FOREIGN, CHLO, "chlo"), **_gaps(_ONE_DEVICE, COLLECTIVES + " " + HOST), **_gaps(_STATIC, DYNAMIC),
        **_gaps(_OLD, DEPRECATED), **_gaps(_QUANT, QUANTIZED),
        **_gaps("hlojit's programs take and return flat lists of tensors", "tuple get_tuple_element"),
        **_gaps("one replica, one partition: a constant 0", "replica_id partition_id"),
        **_gaps("implementation-defined bits: hlojit.random hashes with integer ops so every backend agrees",
                "rng_bit_generator"),
        **_gaps("nn computes batch norm from reductions and elementwise ops",
                "batch_norm_grad batch_norm_inference batch_norm_training"),
        **_gaps("ops.linalg computes them from dot_general and elementwise ops in loops", "cholesky triangular_solve"),
        **_gaps(_FROM_MLIR, "custom_call reduce_precision"),
    },
    "reference": {
        **_gaps(_QUANT, QUANTIZED),
        **_gaps("implementation-defined results: no oracle can say what a compiler must give", "rng rng_bit_generator"),
    },
    "vjp": {
        **_gaps("reverse mode covers the ops hlojit emits; CHLO comes only from from_mlir modules", CHLO, "chlo"),
        **_gaps(_ONE_DEVICE, COLLECTIVES + " " + HOST), **_gaps(_STATIC, DYNAMIC), **_gaps(_OLD, DEPRECATED),
        **_gaps(_QUANT, QUANTIZED),
        **_gaps("tuples hold no tensor to differentiate (hlojit's programs never make one)", "tuple get_tuple_element"),
        **_gaps("integer ids without inputs: nothing to differentiate", "replica_id partition_id"),
        **_gaps("frontend fft is a composite of dot_general and elementwise ops (IREE lowers no f64 fft)", "fft"),
        **_gaps("emitted only by hlojit.random's integer hash, which has no gradient", "map"),
        **_gaps(_FROM_MLIR + " (their frontend forms differentiate through their own ops)",
                "batch_norm_grad batch_norm_inference batch_norm_training cholesky triangular_solve "
                "custom_call reduce_precision"),
        **_gaps("hlojit's composites carry a derivative region, the vjp of their implementation "
                "(frontend/composites.py); a from_mlir module's are inlined where it is called", "composite"),
    },
    "batching": {
        **_gaps("implementation-defined results: no oracle to batch against", "rng"),
        **_gaps("no batching rule yet: they come only in from_mlir modules (the reference backend runs them)",
                "dynamic_conv torch_index_select"),
        **_gaps("no batching rule yet: they come only in from_mlir modules (the reference backend runs them)",
                "scan ragged_dot constant", "chlo"),
        **_gaps(_QUANT, QUANTIZED),
    },
}

TABLES = {
    "builders": lambda: {f"stablehlo.{name.rstrip('_')}" for name in hlo.__all__
                         if callable(getattr(hlo, name)) and name not in ("unary", "binary")},
    "reference": lambda: set(REFERENCE),
    "vjp": lambda: set(VJP),
    "batching": lambda: set(BATCHING) | set(NEVER_BATCHED),
}


@pytest.mark.parametrize("table", sorted(TABLES))
def test_every_table_has_every_op_but_its_listed_gaps(table):
    present = TABLES[table]()
    assert present - set(registry.RECORDS) == set(), f"{table} has ops without a record"
    missing = set(registry.RECORDS) - present
    assert sorted(missing - set(GAPS[table])) == [], f"{table} lacks these ops (add them, or list them as gaps)"
    assert sorted(set(GAPS[table]) - missing) == [], f"{table} has these ops: take them off its gap list"
    assert all(GAPS[table].values())


def test_never_batched_and_batching_rules_do_not_overlap():
    assert set(NEVER_BATCHED) & set(BATCHING) == set()


def test_donation_takes_exactly_the_elementwise_records_and_the_barrier():
    elementwise = {r.name for r in registry.RECORDS.values() if r.elementwise}
    assert donation._ELEMENTWISE == elementwise | {"stablehlo.optimization_barrier"}


def test_iree_in_place_ops_are_records():
    assert iree_backend._IN_PLACE_OPS <= set(registry.RECORDS)
    assert {"stablehlo.sort", "stablehlo.scatter", "stablehlo.dynamic_update_slice"} <= iree_backend._IN_PLACE_OPS


def test_every_elementwise_op_batches_by_the_one_elementwise_rule():
    from hlojit.frontend.batching.rules_elementwise import _elementwise
    for name in registry.names(elementwise=True):
        assert BATCHING[name] is _elementwise, name


def test_every_generated_builder_matches_its_record():
    for short, build in hlo.BUILDERS.items():
        record = registry.lookup(f"stablehlo.{short}")
        assert record.elementwise and record.result_type.infer is not None and not record.attributes
        assert getattr(hlo, build.__name__) is build


# --- op names spelled anywhere in the library are records ----------------------------------------

_OP_NAME = re.compile(r"^(stablehlo|chlo)\.[a-z0-9_]*[a-z0-9]$")
NOT_OPS_OF_A_COMPUTATION = {"stablehlo.return": "a region's terminator: each op with a region handles it"}


def _library_sources():
    return sorted(LIBRARY.rglob("*.py"))


def _string_constants(tree):
    """String literals that are whole (not the fixed parts of an f-string)."""
    in_fstrings = {id(v) for node in ast.walk(tree) if isinstance(node, ast.JoinedStr) for v in node.values}
    return [n for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
            and id(n) not in in_fstrings]


def test_op_names_in_the_library_have_records():
    """Target rewrites (pipeline/), the frontend and the backends name ops by string: each name is a record
    (a typo, or an op some table handles that the registry lacks, fails here)."""
    unknown = {}
    for path in _library_sources():
        for node in _string_constants(ast.parse(path.read_text())):
            name = node.value
            if _OP_NAME.match(name) and name not in registry.RECORDS and name not in NOT_OPS_OF_A_COMPUTATION:
                unknown.setdefault(name, []).append(f"{path.relative_to(LIBRARY)}:{node.lineno}")
    assert unknown == {}


def _builder_name_calls(tree):
    """(builder, op name) of each `hlo.unary("ceil", x)` / `emit(hlo.binary, "add", a, b)` in a module."""
    def is_dispatcher(node):
        return (isinstance(node, ast.Attribute) and node.attr in ("unary", "binary")
                and isinstance(node.value, ast.Name) and node.value.id in ("hlo", "_hlo"))
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        if is_dispatcher(node.func) and node.args:
            name = node.args[0]
            builder = node.func.attr
        elif len(node.args) > 1 and is_dispatcher(node.args[0]):
            name, builder = node.args[1], node.args[0].attr
        else:
            continue
        if isinstance(name, ast.Constant):
            yield builder, name.value, node.lineno


def test_short_names_given_to_unary_and_binary_are_their_ops():
    """`hlo.unary("ceil", x)` in a rewrite or a frontend op: the name is an op of UNARY_OPS (BINARY_OPS)."""
    wrong, seen = [], 0
    for path in _library_sources():
        for builder, name, line in _builder_name_calls(ast.parse(path.read_text())):
            seen += 1
            if name not in (hlo.UNARY_OPS if builder == "unary" else hlo.BINARY_OPS):
                wrong.append(f"{path.relative_to(LIBRARY)}:{line}: {builder}({name!r})")
    assert wrong == [] and seen > 20



def test_the_frontend_elementwise_tables_name_ops_of_the_registry():
    """hj.ops' rows (numpy name -> StableHLO op) name unary and binary elementwise ops the builders have."""
    from hlojit.frontend.ops import elementwise as rows
    for table, ops in ((rows.UNARY, hlo.UNARY_OPS), (rows.BINARY, hlo.BINARY_OPS)):
        named = {row.hlo for row in table.values() if row.hlo is not None}
        assert named and named <= set(ops), named - set(ops)


# --- the records themselves -------------------------------------------------------------------------

def test_dialects_import_nothing_of_the_layers_that_register_against_them():
    """Data flows one way: dialects/ (the registry and the builders) imports only itself, numpy and MLIR."""
    allowed = ("numpy", "ml_dtypes", "iree.compiler", "typing", "keyword", "re", "collections", "functools",
               "__future__")
    found = []
    for path in sorted((LIBRARY / "dialects").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 0:
                modules = [node.module]
            elif isinstance(node, ast.Import):
                modules = [a.name for a in node.names]
            else:
                continue
            found += [f"{path.name}: {m}" for m in modules if not m.startswith(allowed)]
            if isinstance(node, ast.ImportFrom) and node.level > 1:
                found.append(f"{path.name}: {'.' * node.level}{node.module or ''}")
    assert found == []


def test_facets_refuse_names_without_a_record():
    table = registry.Facet("a test's table")
    table["stablehlo.add"] = 1
    for bad in ("stablehlo.frobnicate", "add", "chlo.broadcast_"):
        with pytest.raises(KeyError, match=f"a test's table: '{re.escape(bad)}' is no StableHLO/CHLO op"):
            table[bad] = 2
        with pytest.raises(KeyError):
            table.update({bad: 2})
    assert dict(table) == {"stablehlo.add": 1}
    with pytest.raises(KeyError, match="IREE's"):
        registry.op_set({"stablehlo.sort", "stablehlo.sorted"}, "IREE's in-place ops")


def test_every_record_names_an_op_irees_mlir_knows():
    with ir.Context() as context:
        assert [name for name in registry.RECORDS if not context.is_registered_operation(name)] == []


def test_records_are_consistent():
    for record in registry.RECORDS.values():
        assert record.dialect in ("stablehlo", "chlo") and record.name == f"{record.dialect}.{record.short}"
        assert record.arity is registry.VARIADIC or record.arity >= 0
        if record.elementwise:
            assert record.arity is not registry.VARIADIC and record.arity >= 1, record.name
        else:
            assert not record.attributes, record.name   # attributes are listed for elementwise ops only


@pytest.mark.parametrize("name, operands, result", [
    ("stablehlo.add", ["3xf32", "3xf32"], "3xf32"),
    ("stablehlo.abs", ["3xcomplex<f64>"], "3xf64"),
    ("stablehlo.abs", ["2xi8"], "2xi8"),
    ("stablehlo.compare", ["2x2xui8", "2x2xui8"], "2x2xi1"),
    ("stablehlo.real", ["4xcomplex<f32>"], "4xf32"),
    ("stablehlo.complex", ["4xf32", "4xf32"], "4xcomplex<f32>"),
    ("stablehlo.select", ["i1", "3xbf16", "3xbf16"], "3xbf16"),
    ("stablehlo.clamp", ["f32", "5xf32", "f32"], "5xf32"),
    ("chlo.is_inf", ["3xf16"], "3xi1"),
])
def test_result_type_rules(name, operands, result):
    with ir.Context(), ir.Location.unknown():
        types = [ir.Type.parse(f"tensor<{t}>") for t in operands]
        assert str(registry.lookup(name).result_type.infer(types)) == f"tensor<{result}>"


def test_structured_ops_leave_their_result_type_to_their_builder():
    assert registry.lookup("stablehlo.dot_general").result_type.infer is None
    assert registry.lookup("chlo.broadcast_add").result_type is registry.BROADCAST
    convert = registry.lookup("stablehlo.convert")
    assert convert.elementwise and convert.result_type.infer is None   # its dtype argument decides
