"""The reference backend: a numpy interpreter of StableHLO, the oracle every IREE target is tested against.

`load` walks @main once and generates a straight-line Python function that calls one numpy closure per
op, so a call does no dispatch on op names. Semantics are StableHLO's (integer division truncates,
remainder takes the dividend's sign ...), computed exactly in numpy; it knows nothing of the frontend.
"""
from __future__ import annotations

import re

import numpy as np
from iree.compiler import ir

from ..dialects.types import dtype_of, shape_of
from ..errors import BackendError
from ..pipeline import Program
from .array import Array


def _quiet_hooks():
    """(enter, exit) that silence numpy's floating-point warnings: IEEE results (inf, nan) come as IREE
    gives them. np.errstate costs ~2 us per use, so set numpy's error-state context variable directly
    when this numpy has it."""
    try:
        from numpy._core._ufunc_config import _extobj_contextvar as var
    except ImportError:  # pragma: no cover  (other numpy versions)
        def enter():
            state = np.errstate(all="ignore")
            state.__enter__()
            return state
        return enter, lambda state: state.__exit__(None, None, None)
    with np.errstate(all="ignore"):
        quiet = var.get()
    return (lambda: var.set(quiet)), var.reset


_QUIET_ENTER, _QUIET_EXIT = _quiet_hooks()


def _attr_ints(op, name) -> list[int]:
    return [int(v) for v in ir.DenseI64ArrayAttr(op.attributes[name])]


def _enum(op, name) -> str:
    """`#stablehlo<comparison_direction LT>` -> "LT"."""
    return str(op.attributes[name]).rstrip(">").split()[-1]


def _constant_from_text(text: str, dtype) -> np.ndarray:
    """Elements of a printed dense attribute whose type the MLIR bindings cannot hand to numpy (bf16):
    `dense<[1.5, 0x7FC0]> : ...` (decimal values, or bit patterns for nan/inf) or `dense<"0x...">`."""
    body = text[text.index("<") + 1:text.rindex("> :")].strip()
    bits = np.dtype(f"u{dtype.itemsize}")
    if body.startswith('"0x'):
        return np.frombuffer(bytes.fromhex(body[3:-1]), dtype=bits).view(dtype)
    tokens = [t for t in body.replace("[", " ").replace("]", " ").replace(",", " ").split() if t]
    return np.array([np.array(int(t, 16), bits).view(dtype) if t.startswith("0x") else np.array(float(t), dtype)
                     for t in tokens], dtype=dtype)


def _constant(op):
    attr, dtype, shape = op.attributes["value"], dtype_of(op.result.type), shape_of(op.result.type)
    try:
        value = np.array(attr)
    except (TypeError, ValueError):  # bf16: the bindings reject it, its printed form does not
        value = _constant_from_text(str(attr), dtype)
    value = value.astype(dtype)
    if value.size == 1 and value.shape != shape:  # a splat
        value = np.broadcast_to(value.reshape(()), shape)
    value = np.ascontiguousarray(value.reshape(shape))
    return lambda: value


def _int_divide(a, b):
    if a.dtype.kind == "u":
        return a // b
    q = np.abs(a) // np.abs(b)
    return np.where((a < 0) != (b < 0), -q, q).astype(a.dtype)


def _shift_right_logical(a, b):
    if a.dtype.kind == "u" or a.dtype == np.bool_:
        return np.right_shift(a, b)
    unsigned = np.dtype(f"u{a.dtype.itemsize}")
    return np.right_shift(a.view(unsigned) if a.ndim else a.astype(unsigned), b.astype(unsigned)).astype(a.dtype)


def _logistic(x):
    return (1 / (1 + np.exp(-x.astype(np.float64) if x.dtype.itemsize < 4 else -x))).astype(x.dtype)


def _round_afz(x):
    return (np.sign(x) * np.floor(np.abs(x) + 0.5)).astype(x.dtype)


def _same_type(fn):
    """Elementwise ops: compute with numpy, keep the result type (numpy scalars upcast otherwise)."""
    def build(op):
        dtype = dtype_of(op.result.type)
        return lambda *xs: np.asarray(fn(*xs), dtype=dtype)
    return build


_UNARY = {
    "negate": np.negative, "abs": np.abs, "sign": np.sign, "exponential": np.exp,
    "exponential_minus_one": np.expm1, "log": np.log, "log_plus_one": np.log1p, "sqrt": np.sqrt,
    "rsqrt": lambda x: 1 / np.sqrt(x), "cbrt": np.cbrt, "tanh": np.tanh, "logistic": _logistic,
    "sine": np.sin, "cosine": np.cos, "tan": np.tan, "floor": np.floor, "ceil": np.ceil,
    "round_nearest_even": np.round, "round_nearest_afz": _round_afz,
    "not": lambda x: np.logical_not(x) if x.dtype == np.bool_ else np.invert(x),
}
_BINARY = {
    "add": np.add, "subtract": np.subtract, "multiply": np.multiply, "maximum": np.maximum,
    "minimum": np.minimum, "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor,
    "atan2": np.arctan2, "shift_left": np.left_shift, "shift_right_arithmetic": np.right_shift,
    "shift_right_logical": _shift_right_logical, "power": np.power,
    "divide": lambda a, b: _int_divide(a, b) if a.dtype.kind in "iu" else np.true_divide(a, b),
    "remainder": np.fmod,
}
_COMPARE = {"EQ": np.equal, "NE": np.not_equal, "LT": np.less, "LE": np.less_equal, "GT": np.greater,
            "GE": np.greater_equal}
_REDUCERS = {"add": np.add, "multiply": np.multiply, "maximum": np.maximum, "minimum": np.minimum,
             "and": np.logical_and, "or": np.logical_or, "xor": np.logical_xor}


def _broadcast_in_dim(op):
    dims, shape = _attr_ints(op, "broadcast_dimensions"), shape_of(op.result.type)
    order = sorted(range(len(dims)), key=lambda i: dims[i])
    view_shape = [1] * len(shape)
    for i in order:
        view_shape[dims[i]] = -1

    def run(x):
        x = np.transpose(x, order) if order != list(range(len(dims))) else x
        sizes = iter(x.shape)
        return np.broadcast_to(x.reshape([next(sizes) if d == -1 else 1 for d in view_shape]), shape)
    return run


def _iota(op):
    shape, dim, dtype = shape_of(op.result.type), int(ir.IntegerAttr(op.attributes["iota_dimension"]).value), \
        dtype_of(op.result.type)
    view = [1] * len(shape)
    view[dim] = shape[dim]
    value = np.ascontiguousarray(np.broadcast_to(np.arange(shape[dim]).astype(dtype).reshape(view), shape))
    return lambda: value


def _dot_general(op):
    text = str(op.attributes["dot_dimension_numbers"])

    def dims(name):
        found = re.search(name + r" = \[([\d, ]*)\]", text)
        return [int(v) for v in found.group(1).split(",") if v.strip()] if found else []
    lb, rb = dims("lhs_batching_dimensions"), dims("rhs_batching_dimensions")
    lc, rc = dims("lhs_contracting_dimensions"), dims("rhs_contracting_dimensions")
    lhs_shape, rhs_shape = shape_of(op.operands[0].type), shape_of(op.operands[1].type)
    lf = [i for i in range(len(lhs_shape)) if i not in lb + lc]
    rf = [i for i in range(len(rhs_shape)) if i not in rb + rc]
    size = lambda shape, axes: int(np.prod([shape[a] for a in axes], dtype=np.int64))  # noqa: E731
    b, m, k, n = size(lhs_shape, lb), size(lhs_shape, lf), size(lhs_shape, lc), size(rhs_shape, rf)
    out_shape, dtype = shape_of(op.result.type), dtype_of(op.result.type)

    def run(x, y):
        if x.dtype.kind == "f" and x.dtype.itemsize < 4 or x.dtype.name == "bfloat16":
            x, y = x.astype(np.float32), y.astype(np.float32)   # accumulate in f32, as IREE does
        x = np.transpose(x, lb + lf + lc).reshape(b, m, k)
        y = np.transpose(y, rb + rc + rf).reshape(b, k, n)
        return np.matmul(x, y).astype(dtype).reshape(out_shape)
    return run


def _reduce(op):
    dims = tuple(_attr_ints(op, "dimensions"))
    n = len(op.results)
    body = op.regions[0].blocks[0]
    body_ops = list(body.operations)
    args = list(body.arguments)
    if n == 1 and len(body_ops) == 2:  # one binary op on (accumulator, element): a numpy ufunc reduce
        name = body_ops[0].operation.name.removeprefix("stablehlo.")
        if name in _REDUCERS and {body_ops[0].operands[0], body_ops[0].operands[1]} == {args[0], args[1]}:
            ufunc = _REDUCERS[name]
            dtype = dtype_of(op.results[0].type)
            if dtype == np.bool_ or name not in ("and", "or", "xor"):
                return lambda x, init: np.asarray(ufunc(ufunc.reduce(x, axis=dims), init), dtype=dtype)
    combine = _compile_block(body, "reduce_body")

    def run(*operands):  # the general case: fold the body over the reduced elements, vectorised
        inputs, acc = operands[:n], list(operands[n:])
        kept = [i for i in range(inputs[0].ndim) if i not in dims]
        moved = [np.moveaxis(x, dims, range(len(kept), x.ndim)).reshape(
            [x.shape[i] for i in kept] + [-1]) for x in inputs]
        acc = [np.broadcast_to(a, moved[0].shape[:-1]) for a in acc]
        for k in range(moved[0].shape[-1]):
            acc = list(combine(*acc, *(x[..., k] for x in moved)))
        return tuple(np.asarray(a, dtype=dtype_of(r.type)) for a, r in zip(acc, op.results))
    return run


_BUILDERS = {
    "stablehlo.constant": _constant,
    "stablehlo.iota": _iota,
    "stablehlo.convert": lambda op: (lambda dtype: lambda x: np.asarray(x).astype(dtype))(dtype_of(op.result.type)),
    "stablehlo.broadcast_in_dim": _broadcast_in_dim,
    "stablehlo.reshape": lambda op: (lambda shape: lambda x: np.reshape(x, shape))(shape_of(op.result.type)),
    "stablehlo.transpose": lambda op: (lambda perm: lambda x: np.transpose(x, perm))(_attr_ints(op, "permutation")),
    "stablehlo.compare": lambda op: _COMPARE[_enum(op, "comparison_direction")],
    "stablehlo.select": lambda op: _same_type(np.where)(op),
    "stablehlo.is_finite": lambda op: np.isfinite,
    "stablehlo.dot_general": _dot_general,
    "stablehlo.reduce": _reduce,
}
_BUILDERS.update({f"stablehlo.{name}": _same_type(fn) for name, fn in {**_UNARY, **_BINARY}.items()})
_RETURNS = ("func.return", "stablehlo.return")


def supported_ops() -> list[str]:
    return sorted(_BUILDERS)


def _call_builder(functions):
    """`func.call @f`: JAX puts helpers like @relu and @_where in private functions."""
    def build(op):
        callee = str(op.attributes["callee"]).lstrip("@")
        run = functions.get(callee)
        if run is None:
            raise BackendError(f"func.call to unknown function @{callee} (at {op.location})")
        if len(op.results) == 1:
            return lambda *args: run(*args)[0]
        return run
    return build


def _compile_block(block, name="block", functions=None):
    """Generate `def block(args...): ...; return (results...)` calling one numpy closure per op.
    `functions` resolves `func.call` callees by name."""
    functions = {} if functions is None else functions
    names, namespace, lines = {}, {"_enter": _QUIET_ENTER, "_exit": _QUIET_EXIT}, []
    for i, arg in enumerate(block.arguments):
        names[arg] = f"a{i}"
    returned = None
    for index, op in enumerate(block.operations):
        op_name = op.operation.name
        if op_name in _RETURNS:
            returned = [names[v] for v in op.operands]
            break
        builder = _BUILDERS.get(op_name) or (_call_builder(functions) if op_name == "func.call" else None)
        if builder is None:
            raise BackendError(f"the reference backend does not implement {op_name} (at {op.location}); "
                               f"it implements: {', '.join(supported_ops())}")
        namespace[f"op{index}"] = builder(op.operation)
        outs = [f"v{index}_{j}" for j in range(len(op.results))]
        for value, out in zip(op.results, outs):
            names[value] = out
        call = f"op{index}({', '.join(names[v] for v in op.operands)})"
        lines.append(f"{', '.join(outs)} = {call}")
    params = ", ".join(names[a] for a in block.arguments)
    body = "\n".join("        " + line for line in lines) or "        pass"
    source = (f"def {name}({params}):\n    _token = _enter()\n    try:\n{body}\n"
              f"        return ({''.join(r + ', ' for r in returned or [])})\n    finally:\n        _exit(_token)\n")
    exec(compile(source, f"<hlojit reference {name}>", "exec"), namespace)
    return namespace[name]


class _Functions(dict):
    """The module's func.func ops by name, each compiled on first use (callees before callers' calls)."""

    def __init__(self, module):
        super().__init__()
        self._ops = {}
        for op in module.body.operations:
            if op.operation.name == "func.func":
                self._ops[str(op.attributes["sym_name"]).strip('"')] = op

    def get(self, name, default=None):
        if name not in self and name in self._ops:
            self[name] = _compile_block(self._ops[name].regions[0].blocks[0], _python_name(name), self)
        return super().get(name, default)

    def __missing__(self, name):
        found = self.get(name)
        if found is None:
            raise BackendError(f"the module has no function @{name}")
        return found


def _python_name(symbol: str) -> str:
    return "f_" + re.sub(r"\W", "_", symbol)


class Executable:
    """`executable(leaves) -> [Array]` by the generated numpy function."""

    def __init__(self, program: Program):
        self.source_name = program.name
        functions = _Functions(program.module)
        self._run = functions["main"]
        self._inputs = [(tuple(shape), np.dtype(dtype)) for shape, dtype in program.inputs]
        self._outputs = [(tuple(shape), np.dtype(dtype)) for shape, dtype in program.outputs]

    def __call__(self, leaves) -> list[Array]:
        args = [np.asarray(x, dtype=dtype) for x, (_, dtype) in zip(leaves, self._inputs)]
        outs = self._run(*args)
        return [Array.from_numpy(np.asarray(o, dtype=dtype).reshape(shape))
                for o, (shape, dtype) in zip(outs, self._outputs)]

    call = __call__

    def call_single(self, leaves) -> Array:
        return self(leaves)[0]


class ReferenceBackend:
    name = "reference"

    def load(self, program: Program) -> Executable:
        return Executable(program)

    def __repr__(self):
        return "<backend reference>"
