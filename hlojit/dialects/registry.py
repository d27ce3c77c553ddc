"""One record per StableHLO/CHLO op name: its arity, whether it is elementwise, and its result-type rule.

Every other table of an op's facets is keyed by these names and checked against them: the dialect builders
(elementwise.py generates the elementwise ones from the records), the reference backend's implementations
(`interpreter/interpreter.OPS`), autodiff's VJP rules and vmap's batching rules
(`frontend/autodiff/core.RULES`, `frontend/batching/core.RULES`, `NEVER_BATCHED`), the donation analysis
(`frontend/donation.py`, from `elementwise`) and the ops IREE computes in place (`backends/iree.py`). Those
tables are `Facet`s or `op_set`s: a name no record has raises where the table is filled. tests/test_registry.py
fails when a table lacks an op that has a record, unless the op is in that table's list of deliberate gaps
with the reason, and when an op name spelled in the library (the target rewrites of `pipeline/` name the
ops they take) has no record.
Data flows one way: this module knows nothing of the layers that register against it.

Adding a unary elementwise StableHLO op `foo` (same type in and out) touches three library files:
- hlojit/dialects/registry.py: "foo" in the `_SAME_TYPE_UNARY` row. That gives the builder `hlo.foo(x)` and
  `hlo.unary("foo", x)`, `UNARY_OPS`, vmap's batching rule (the generic elementwise one), the donation
  analysis's elementwise class and the reference's vectorised `stablehlo.map` bodies.
- hlojit/interpreter/elementwise.py: `"foo": <numpy function>` in `_UNARY`.
- hlojit/frontend/autodiff/rules_elementwise.py: its VJP, `_unary("foo")(lambda x, y, g: ...)`, or the name
  in `no_gradient(...)`.
Tests: its dtypes in tests/test_dialects.py's UNARY_DTYPES and a case in tests/data/stablehlo. (A user-facing
`hj.ops` function for it is one more row, in frontend/ops/elementwise.py's `UNARY`.)
"""
from __future__ import annotations

from typing import Callable, NamedTuple

from iree.compiler import ir

from .types import shape_of


class TypeRule(NamedTuple):
    """How an op's result type follows from its operands: `infer(operand types) -> result type`, or None
    where attributes or arguments decide it (the op's builder in stablehlo.py computes it from them)."""
    describe: str
    infer: Callable[[list], ir.Type] | None


def _element(t: ir.Type) -> ir.Type:
    return ir.RankedTensorType(t).element_type


def _like(t: ir.Type, element: ir.Type) -> ir.Type:
    return ir.RankedTensorType.get(list(shape_of(t)), element)


def _real_part(element: ir.Type) -> ir.Type:
    element = element.maybe_downcast()
    return element.element_type if isinstance(element, ir.ComplexType) else element


def _same_as(index: int) -> TypeRule:
    return TypeRule(f"operand {index}'s type", lambda types: types[index])


SAME = _same_as(0)
PICKED = _same_as(1)   # select(pred, on_true, on_false), clamp(low, x, high)
MAGNITUDE = TypeRule("operand 0's type; of a complex operand, its parts' type",
                     lambda types: _like(types[0], _real_part(_element(types[0]))))
PREDICATE = TypeRule("i1 of operand 0's shape", lambda types: _like(types[0], ir.IntegerType.get_signless(1)))
PART = TypeRule("the parts' type of operand 0 (complex)", lambda types: _like(types[0], _real_part(_element(types[0]))))
COMPLEX = TypeRule("complex of operand 0's type", lambda types: _like(types[0], ir.ComplexType.get(_element(types[0]))))
FROM_ATTRIBUTES = TypeRule("from its attributes and operand shapes (computed by its builder)", None)
BROADCAST = TypeRule("the operands' shapes broadcast (CHLO's implicit broadcasting)", None)

VARIADIC = None   # the arity of an op that takes any number of operands


class OpRecord(NamedTuple):
    name: str                  # "stablehlo.add", "chlo.erf"
    arity: int | None          # operands; VARIADIC (None) for any number
    elementwise: bool          # result element i from operand elements i alone; one shape (0-d operands where
    #                            the spec allows), no regions
    result_type: TypeRule
    attributes: tuple = ()     # attributes the op needs besides its operands (elementwise ops only)

    @property
    def short(self) -> str:
        return self.name.split(".", 1)[1]

    @property
    def dialect(self) -> str:
        return self.name.split(".", 1)[0]


# --- the records ---------------------------------------------------------------------------------

_SAME_TYPE_UNARY = """negate sign not exponential exponential_minus_one log log_plus_one sqrt rsqrt cbrt tanh
    logistic sine cosine tan floor ceil round_nearest_even round_nearest_afz popcnt count_leading_zeros"""
_SAME_TYPE_BINARY = """add subtract multiply divide remainder power maximum minimum and or xor shift_left
    shift_right_arithmetic shift_right_logical atan2"""

_ELEMENTWISE = [  # (names, arity, result type, attributes)
    (_SAME_TYPE_UNARY, 1, SAME, ()),
    ("abs", 1, MAGNITUDE, ()),
    (_SAME_TYPE_BINARY, 2, SAME, ()),
    ("is_finite", 1, PREDICATE, ()),
    ("real imag", 1, PART, ()),
    ("complex", 2, COMPLEX, ()),
    ("select clamp", 3, PICKED, ()),
    ("compare", 2, PREDICATE, ("comparison_direction", "compare_type")),
    ("convert", 1, FROM_ATTRIBUTES, ()),            # the result's element type is the builder's dtype argument
    ("reduce_precision", 1, SAME, ("exponent_bits", "mantissa_bits")),
]

_STRUCTURED = {  # name -> arity
    "constant": 0, "iota": 0, "broadcast_in_dim": 1, "reshape": 1, "transpose": 1, "reduce": VARIADIC,
    "dot_general": 2, "convolution": 2, "reduce_window": VARIADIC, "concatenate": VARIADIC, "slice": 1, "pad": 2,
    "reverse": 1, "if": 1, "case": 1, "while": VARIADIC, "dynamic_slice": VARIADIC,
    "dynamic_update_slice": VARIADIC, "gather": 2, "scatter": VARIADIC, "bitcast_convert": 1, "sort": VARIADIC,
    "optimization_barrier": VARIADIC, "map": VARIADIC, "fft": 1, "triangular_solve": 2, "cholesky": 1,
    "select_and_scatter": 3, "batch_norm_inference": 5, "batch_norm_training": 3, "batch_norm_grad": 5,
    "rng_bit_generator": 1, "rng": 3, "composite": VARIADIC, "custom_call": VARIADIC, "tuple": VARIADIC,
    "get_tuple_element": 1, "after_all": VARIADIC, "create_token": 0, "replica_id": 0, "partition_id": 0,
    "get_dimension_size": 1, "dynamic_reshape": 2, "dynamic_broadcast_in_dim": 2, "dynamic_iota": 1,
    "dynamic_pad": 5, "real_dynamic_slice": 4, "dynamic_gather": 3, "dynamic_conv": 3,
    "uniform_quantize": 1, "uniform_dequantize": 1,
    # deprecated ops that older exports still hold
    "dot": 2, "broadcast": 1, "einsum": 2, "unary_einsum": 1, "torch_index_select": 2,
    # collectives and host communication
    "all_gather": VARIADIC, "all_reduce": VARIADIC, "reduce_scatter": 1, "all_to_all": VARIADIC,
    "collective_permute": 1, "collective_broadcast": 1, "infeed": 1, "outfeed": VARIADIC, "send": VARIADIC,
    "recv": 1,
}

_CHLO_ELEMENTWISE = [
    ("acos acosh asin asinh atan atanh bessel_i1e conj cosh digamma erf erf_inv erfc lgamma sinh square tan", 1, SAME),
    ("is_inf is_neg_inf is_pos_inf", 1, PREDICATE),
    ("mulhi next_after polygamma zeta", 2, SAME),
]
_CHLO_BROADCASTING = """add and atan2 compare complex divide maximum minimum multiply next_after or polygamma power
    remainder select shift_left shift_right_arithmetic shift_right_logical subtract xor zeta"""
_CHLO_STRUCTURED = {"top_k": 1, "constant_like": 1, "constant": 0, "ragged_dot": 3, "scan": VARIADIC}


def _records() -> dict[str, OpRecord]:
    records = []
    for names, arity, rule, attributes in _ELEMENTWISE:
        records += [OpRecord(f"stablehlo.{n}", arity, True, rule, attributes) for n in names.split()]
    records += [OpRecord(f"stablehlo.{n}", arity, False, FROM_ATTRIBUTES) for n, arity in _STRUCTURED.items()]
    for names, arity, rule in _CHLO_ELEMENTWISE:
        records += [OpRecord(f"chlo.{n}", arity, True, rule) for n in names.split()]
    records += [OpRecord(f"chlo.broadcast_{n}", 3 if n == "select" else 2, False, BROADCAST)
                for n in _CHLO_BROADCASTING.split()]
    records += [OpRecord(f"chlo.{n}", arity, False, FROM_ATTRIBUTES) for n, arity in _CHLO_STRUCTURED.items()]
    table = {r.name: r for r in records}
    assert len(table) == len(records), "an op has two records"
    return table


RECORDS: dict[str, OpRecord] = _records()


# --- looking records up --------------------------------------------------------------------------

def lookup(name: str, what: str = "the registry") -> OpRecord:
    """The record of `name` ("stablehlo.add"); an unknown name raises KeyError naming `what` asked."""
    try:
        return RECORDS[name]
    except KeyError:
        raise KeyError(f"{what}: {name!r} is no StableHLO/CHLO op of hlojit.dialects.registry") from None


def names(dialect: str | None = None, *, elementwise: bool | None = None, rule: TypeRule | None = None) -> list[str]:
    """The recorded op names, of one dialect ("stablehlo", "chlo"), elementwise or not, of one result-type
    rule, where given."""
    return [r.name for r in RECORDS.values()
            if (dialect is None or r.dialect == dialect) and (elementwise is None or r.elementwise == elementwise)
            and (rule is None or r.result_type is rule)]


def buildable_elementwise() -> list[OpRecord]:
    """The StableHLO elementwise ops whose result type follows from their operands alone and that take no
    attributes: one generated builder each (elementwise.py)."""
    return [r for r in RECORDS.values() if r.dialect == "stablehlo" and r.elementwise and not r.attributes
            and r.result_type.infer is not None]


def op_set(op_names, what: str) -> frozenset:
    """A set of op names some layer treats alike (IREE's in-place ops ...), each checked to have a record."""
    return frozenset(lookup(n, what).name for n in op_names)


class Facet(dict):
    """One layer's table of one facet of the ops (reference implementations, VJP rules, batching rules),
    op name -> entry. Setting a name no record has raises KeyError: a typo, or an op the registry lacks."""

    def __init__(self, what: str):
        super().__init__()
        self.what = what

    def __setitem__(self, name, value):
        lookup(name, self.what)
        super().__setitem__(name, value)

    def update(self, *args, **kwargs):
        for name, value in dict(*args, **kwargs).items():
            self[name] = value

    def setdefault(self, name, value=None):
        lookup(name, self.what)
        return super().setdefault(name, value)
