"""Run StableHLO test files in the style of openxla/stablehlo's interpreter tests on hlojit's backends.

Two styles are read:
- the interpreter's own tests: `// -----`-separated chunks of `func.func @name()` test functions that end in
  check-dialect ops (`check.expect_eq %a, %b : T`, `check.expect_eq_const %a, dense<...> : T`,
  `check.expect_almost_eq[_const]`, `check.expect_close %a, %b, max_ulp_difference = N`);
- the generated `testdata/` files: an `@main` that compares with `stablehlo.custom_call @check.expect_*`
  (or `@check.eq`) against an `@expected()` function.

Each test function becomes a module whose entry returns every checked value beside what it is checked
against; `hj.from_mlir` runs it on a backend, and the pairs are compared here: `eq` exactly (NaN equals NaN),
`almost_eq` within 1e-4 (the interpreter's tolerance), `close` within the ULP distance (default 3).
`python tools/stablehlo_conformance.py FOLDER` prints a per-op pass/fail table.
"""
from __future__ import annotations

import collections
import dataclasses
import os
import re

import numpy as np
from iree.compiler import ir

from .backends import target_named
from .errors import HlojitError
from .frontend.from_mlir import from_mlir, parse
from .pipeline import compile_program
from .frontend.upgrade import upgrade

# check.expect_xxx_const %v, dense<...> : T [{tolerance = X : f64} | , tolerance = X]
# check.expect_xxx %a, %b[, max_ulp_difference = N][, tolerance = X] : T[, T]
_NUMBER = r"([-+]?[\d.]+(?:[eE][-+]?\d+)?)"
_CONST_CHECK = re.compile(r"^(\s*)check\.expect_(\w+?)_const\s*(%[\w#]+)\s*,\s*(.+?)\s*:\s*(\S.*?)"
                          r"(?:\s*\{\s*tolerance\s*=\s*" + _NUMBER + r"\s*(?::\s*\w+)?\s*\}|\s*,\s*tolerance\s*=\s*"
                          + _NUMBER + r")?\s*$")
_PAIR_CHECK = re.compile(r"^(\s*)check\.expect_(\w+?)\s*(%[\w#]+)\s*,\s*(%[\w#]+)\s*(?:,\s*max_ulp_difference\s*="
                         r"\s*(\d+))?\s*(?:,\s*tolerance\s*=\s*" + _NUMBER + r")?\s*:\s*([^,]+?)(?:\s*,\s*\S.*)?\s*$")
_CHECK_CALL = re.compile(r"stablehlo\.custom_call\s+@check\.(\w+)\(")
ALMOST_EQ_TOLERANCE = 1e-4
DEFAULT_MAX_ULP = 3


@dataclasses.dataclass
class Check:
    kind: str              # "eq", "almost_eq" or "close"
    max_ulp: int = DEFAULT_MAX_ULP
    tolerance: float = ALMOST_EQ_TOLERANCE   # almost_eq's (a `tolerance = X` of the check op replaces it)


@dataclasses.dataclass
class Case:
    name: str              # the test function
    module: str            # the rewritten module text: its entry returns (value, expected) per check
    entry: str
    checks: list
    ops: list              # the StableHLO/CHLO ops the test exercises (not constants, calls or checks)


def _kind(name: str) -> str:
    name = name.removeprefix("expect_")
    return {"eq": "eq", "almost_eq": "almost_eq", "close": "close"}.get(name, name)


# `stablehlo.dynamic_conv(%a, %b, %p) dim_numbers = [..]x[..]->[..], window = {...} {attrs} :` (IREE 3.13's
# parser has no custom form for it): the generic form's attributes, as stablehlo.convolution spells them
_PRETTY_DYNAMIC_CONV = re.compile(r"stablehlo\.dynamic_conv\(([^)]*)\)\s*dim_numbers\s*=\s*(\[[^\]]*\]x\[[^\]]*\]->"
                                  r"\[[^\]]*\])\s*,\s*window\s*=\s*\{([^}]*)\}\s*(?:\{([^}]*)\})?\s*:", re.S)
_WINDOW_ENTRY = re.compile(r"(\w+)\s*=\s*(\[(?:[^\[\]]|\[[^\]]*\])*\])")
_WINDOW_ATTRIBUTES = {"stride": ("window_strides", "i64"), "lhs_dilate": ("lhs_dilation", "i64"),
                      "rhs_dilate": ("rhs_dilation", "i64"), "reverse": ("window_reversal", "i1")}


def _generic_dynamic_conv(match) -> str:
    operands, dims, window, rest = match.groups()
    attributes = [f"dimension_numbers = #stablehlo.conv<{' '.join(dims.split())}>"]
    for key, value in _WINDOW_ENTRY.findall(window):
        if key == "pad":
            rows = re.findall(r"\[([^\[\]]*)\]", value)
            attributes.append(f"padding = dense<{' '.join(value.split())}> : tensor<{len(rows)}x2xi64>")
        else:
            name, element = _WINDOW_ATTRIBUTES[key]
            items = value.strip("[]").replace("true", "1").replace("false", "0").split(",")
            attributes.append(f"{name} = array<{element}: {', '.join(v.strip() for v in items)}>")
    if rest and rest.strip():
        attributes.append(" ".join(rest.split()))
    return f'"stablehlo.dynamic_conv"({operands}) {{{", ".join(attributes)}}} :'


def split_chunks(text: str) -> list[str]:
    return [chunk for chunk in re.split(r"^// -----\s*$", text, flags=re.M) if "func.func" in chunk]


def _check_attributes(ulp, tolerance) -> str:
    attributes = ["has_side_effect = true"]
    attributes += [f"max_ulp_difference = {ulp} : i64"] if ulp else []
    attributes += [f"tolerance = {float(tolerance):.17e} : f64"] if tolerance else []   # (MLIR reads no `1e-12`)
    return ", ".join(attributes)


def _joined_check_lines(lines):
    """Lines, with a check op whose literal spans several lines (`dense<[[\n ...]]>`) joined into one."""
    pending = None
    for line in lines:
        if pending is not None:
            pending += " " + line.strip()
        elif line.lstrip().startswith("check."):
            pending = line
        else:
            yield line
            continue
        if pending.count("[") <= pending.count("]") and pending.count("(") <= pending.count(")") \
                and not pending.rstrip().endswith(","):
            yield pending
            pending = None
    if pending is not None:
        yield pending


def _rewrite_check_dialect(chunk: str) -> str:
    """check-dialect ops as `stablehlo.custom_call @check.*` ops (which the MLIR bindings parse), constants
    of the `_const` forms as stablehlo.constant."""
    out, counter = [], 0
    chunk = _PRETTY_DYNAMIC_CONV.sub(_generic_dynamic_conv, chunk)
    for line in _joined_check_lines(chunk.splitlines()):
        const = _CONST_CHECK.match(line)
        pair = None if const else _PAIR_CHECK.match(line)
        if const:
            indent, kind, value, literal, type_, braced, trailing = const.groups()
            tolerance = braced or trailing
            name = f"%__expected{counter}"
            counter += 1
            out.append(f"{indent}{name} = stablehlo.constant {literal} : {type_}")
            out.append(f"{indent}stablehlo.custom_call @check.expect_{kind}({value}, {name}) "
                       f"{{{_check_attributes(None, tolerance)}}} : ({type_}, {type_}) -> ()")
        elif pair:
            indent, kind, a, b, ulp, tolerance, type_ = pair.groups()
            out.append(f"{indent}stablehlo.custom_call @check.expect_{kind}({a}, {b}) "
                       f"{{{_check_attributes(ulp, tolerance)}}} : ({type_}, {type_}) -> ()")
        else:
            out.append(line)
    return "\n".join(out)


def _function_ops(func) -> list:
    return [op.operation for op in func.regions[0].blocks[0].operations]


def _exercised(func) -> list[str]:
    skip = {"stablehlo.constant", "stablehlo.custom_call", "func.return", "func.call", "stablehlo.return"}
    names = []

    def walk(op):
        for region in op.regions:
            for block in region.blocks:
                for inner in block.operations:
                    name = inner.operation.name
                    if name not in skip and name not in names:
                        names.append(name)
                    walk(inner.operation)
    walk(func.operation)
    return names


def _functions(module) -> list:
    return [op for op in module.body.operations if op.operation.name == "func.func"]


def _name(func) -> str:
    return str(func.attributes["sym_name"]).strip('"')


def cases_of(text: str) -> list[Case]:
    """Every test function of a file's text, each in a module of its own (with the helpers it calls, without the
    other tests, which IREE would compile too) rewritten to return what it checks."""
    cases = []
    for chunk in split_chunks(text):
        source = upgrade(_rewrite_check_dialect(chunk))
        with ir.Context() as context:
            context.allow_unregistered_dialects = True
            whole = ir.Module.parse(source)          # (held: its ops die with it)
            tests = [_name(f) for f in _functions(whole) if _CHECK_CALL.search(str(f))]
            for test in tests:
                module = ir.Module.parse(source)
                for func in _functions(module):
                    if _name(func) != test and _CHECK_CALL.search(str(func)):
                        func.operation.erase()
                cases.append(_case(module, next(f for f in _functions(module) if _name(f) == test)))
    return cases


def _case(module, func) -> Case:
    name = _name(func)
    checks, returned, types = [], [], []
    block = func.regions[0].blocks[0]
    for op in _function_ops(func):
        if op.name == "stablehlo.custom_call":
            target = str(ir.StringAttr(op.attributes["call_target_name"]).value)
            if target.startswith("check."):
                ulp = op.attributes["max_ulp_difference"] if "max_ulp_difference" in op.attributes else None
                tolerance = op.attributes["tolerance"] if "tolerance" in op.attributes else None
                checks.append(Check(_kind(target.removeprefix("check.")),
                                    int(ir.IntegerAttr(ulp).value) if ulp is not None else DEFAULT_MAX_ULP,
                                    ir.FloatAttr(tolerance).value if tolerance is not None else ALMOST_EQ_TOLERANCE))
                returned += list(op.operands)
                types += [v.type for v in op.operands]
                if op.results and list(op.results[0].uses):
                    raise HlojitError(f"{name}: the result of {target} is used; only its comparison is supported")
                op.erase()
    terminator = _function_ops(func)[-1]
    with ir.InsertionPoint(block), terminator.location:
        terminator.erase()
        ir.Operation.create("func.return", operands=returned)
    func.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get([], types))
    for attr in ("res_attrs", "arg_attrs"):
        if attr in func.attributes:
            del func.attributes[attr]
    exercised = _exercised(func)
    for f in _functions(module):
        _hide_constants(f)
    return Case(name, str(module), name, checks, exercised)


# ops whose operands give a static result shape: their constants stay constants
_NEEDS_CONSTANT_OPERANDS = frozenset(f"stablehlo.{n}" for n in (
    "dynamic_broadcast_in_dim", "dynamic_iota", "dynamic_reshape", "dynamic_pad", "real_dynamic_slice",
    "dynamic_conv", "dynamic_gather"))


def _hide_constants(func) -> None:
    """Pass each constant of the function's body through a `stablehlo.optimization_barrier`, so that a compiler
    computes the case's ops at run time, on the target, as it does for a user's data. Without it IREE folds
    the whole case at compile time: its constant evaluator runs llvm-cpu code on the host whatever the target
    (testing the host, not the target, and compiling each case twice), and with that evaluator off, LLVM
    folds its own approximations (f32 exp of a constant NaN came out 0; at run time it is NaN)."""
    block = func.regions[0].blocks[0]
    for op in _function_ops(func):
        if op.name != "stablehlo.constant":
            continue
        value = op.results[0]
        if any(use.owner.name in _NEEDS_CONSTANT_OPERANDS for use in value.uses):
            continue
        with ir.InsertionPoint.at_block_terminator(block), op.location:
            barrier = ir.Operation.create("stablehlo.optimization_barrier", results=[value.type], operands=[value])
        barrier.move_after(op)
        value.replace_all_uses_except(barrier.results[0], barrier)


def _ulp_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Distance in representable floats (as integers in the sign-magnitude order of IEEE floats)."""
    bits = np.dtype(f"i{a.dtype.itemsize}")

    def ordered(x):
        i = np.ascontiguousarray(x).view(bits).astype(np.int64)
        return np.where(i < 0, np.iinfo(bits).min - i, i)
    return np.abs(ordered(a) - ordered(b))


def agree(check: Check, actual: np.ndarray, expected: np.ndarray) -> bool:
    actual, expected = np.asarray(actual), np.asarray(expected)
    if actual.shape != expected.shape or actual.dtype != expected.dtype:
        return False
    real = actual.dtype.kind == "f" or actual.dtype.name == "bfloat16"
    if not real and actual.dtype.kind != "c":
        return bool(np.array_equal(actual, expected))
    wide = np.float64 if real else np.complex128
    a, e = actual.astype(wide), expected.astype(wide)
    both_nan = np.isnan(a) & np.isnan(e)
    if check.kind == "eq":
        return bool(np.all((a == e) | both_nan))
    if check.kind == "close" and real:
        return bool(np.all((_ulp_distance(actual, expected) <= check.max_ulp) | both_nan | (a == e)))
    with np.errstate(invalid="ignore"):
        return bool(np.all(np.isclose(a, e, rtol=check.tolerance, atol=check.tolerance) | both_nan))


@dataclasses.dataclass
class Outcome:
    case: Case
    backend: str
    passed: bool
    detail: str = ""


def _failed(case: Case, backend: str, error: Exception) -> Outcome:
    """A failure with the error's first line."""
    return Outcome(case, backend, False, f"{type(error).__name__}: {str(error).splitlines()[0][:200]}")


def run_case(case: Case, backend: str) -> Outcome:
    """Run one case on `backend`: every check must agree; an error is a failure with its first line."""
    try:
        module = from_mlir(case.module, entry=case.entry, backend=backend)
        outputs = module()
    except Exception as e:  # the table reports every failure, whatever raised it
        return _failed(case, backend, e)
    outputs = outputs if isinstance(outputs, tuple) else (outputs,)
    return _outcome(case, backend, [np.asarray(o) for o in outputs])


def bundle(cases: list[Case]) -> str:
    """One module whose `@main` calls every case's test function and returns all their checked pairs, in order.
    One compile then serves a whole file of cases: on IREE a compile costs ~0.4 s however small the module, so a
    file of 40 cases runs ~10x faster."""
    return bundle_modules([(case.module, case.entry) for case in cases])


def bundle_modules(modules: list[tuple[str, str]]) -> str:
    """One module whose `@main` takes the arguments of every (module text, entry function name) of `modules` in
    turn, calls each entry with its own and returns all their results, in order.

    Each module's functions are renamed `case<i>_<name>` (and made private) so that functions of the same name in
    different modules (every `@main`, `@inputs`, `@expected`) do not clash."""
    functions, arguments, calls, returned, types = [], [], [], [], []
    with ir.Context() as context:
        context.allow_unregistered_dialects = True
        for i, (text, entry_name) in enumerate(modules):
            module = ir.Module.parse(text)
            for func in _functions(module):
                old = _name(func)
                ir.SymbolTable.replace_all_symbol_uses(old, f"case{i}_{old}", module.operation)
                ir.SymbolTable.set_symbol_name(func, f"case{i}_{old}")
                func.attributes["sym_visibility"] = ir.StringAttr.get("private")
            functions += [str(func) for func in _functions(module)]   # once every call names its renamed callee
            entry = next(f for f in _functions(module) if _name(f) == f"case{i}_{entry_name}")
            signature = ir.FunctionType(ir.TypeAttr(entry.attributes["function_type"]).value)
            inputs, results = [str(t) for t in signature.inputs], [str(t) for t in signature.results]
            names = [f"%a{i}_{k}" for k in range(len(inputs))]
            arguments += [f"{name}: {t}" for name, t in zip(names, inputs)]
            value = f"%r{i}" + (f":{len(results)}" if len(results) > 1 else "")
            calls.append(f"  {value} = func.call @case{i}_{entry_name}({', '.join(names)}) : "
                         f"({', '.join(inputs)}) -> ({', '.join(results)})")
            returned += [f"%r{i}#{k}" for k in range(len(results))] if len(results) > 1 else [f"%r{i}"]
            types += results
    main = (f"func.func @main({', '.join(arguments)}) -> ({', '.join(types)}) {{\n" + "\n".join(calls) +
            f"\n  func.return {', '.join(returned)} : {', '.join(types)}\n}}")
    return "module {\n" + main + "\n" + "\n".join(functions) + "\n}"


def _outcome(case: Case, backend: str, values: list) -> Outcome:
    for i, check in enumerate(case.checks):
        if not agree(check, values[2 * i], values[2 * i + 1]):
            return Outcome(case, backend, False, f"check {i} ({check.kind}) differs")
    return Outcome(case, backend, True)


def run_cases(cases: list[Case], backend: str) -> list[Outcome]:
    """Every case on `backend` through one bundled module (see `bundle`); where the bundle fails to build,
    compile or run, and for every case that fails in it, each runs on its own, so a verdict is always the one a
    case gets alone."""
    if len(cases) < 2:
        return [run_case(case, backend) for case in cases]
    try:
        outputs = from_mlir(bundle(cases), backend=backend)()
    except Exception:  # noqa: BLE001  (some case fails: find which, one at a time)
        return [run_case(case, backend) for case in cases]
    values, outcomes = [np.asarray(o) for o in outputs], []
    for case in cases:
        n = 2 * len(case.checks)
        outcome = _outcome(case, backend, values[:n])
        # a case that fails among others runs again alone: its verdict is the one it gets by itself
        outcomes.append(outcome if outcome.passed else run_case(case, backend))
        values = values[n:]
    return outcomes


_TEST_NAME = re.compile(r"func\.func\s+(?:public\s+|private\s+)?@([\w.$-]+)")


def read_file_cases(name: str, text: str, backends) -> tuple[list[Case], list[Outcome]]:
    """A file's cases, chunk by chunk: a chunk the tool cannot read fails on every backend alone (named
    `file:function`), and the file's other chunks still run."""
    cases, unreadable = [], []
    for chunk in split_chunks(text):
        try:
            cases += cases_of(chunk)
        except Exception as e:  # noqa: BLE001  (an unreadable chunk fails, whatever raised)
            found = _TEST_NAME.findall(chunk)
            label = f"{name}:{found[-1] if found else '?'}"
            unreadable += [Outcome(Case(label, "", "", [], [name]), backend, False,
                                   f"unreadable: {' '.join(str(e).split())[:200]}") for backend in backends]
    return cases, unreadable


def compile_cases(cases: list[Case], backend: str) -> list[Outcome]:
    """Every case compiled for `backend` alone, not run (iree:cuda where no GPU is): passed where it compiles."""
    outcomes = []
    for case in cases:
        try:
            compile_program(parse(case.module, case.entry, None), target_named(backend))
            outcomes.append(Outcome(case, backend, True))
        except Exception as e:  # the table reports every failure, whatever raised it
            outcomes.append(_failed(case, backend, e))
    return outcomes


def run_folder(folder: str, backends, pattern: str = ".mlir", compile_only=()) -> list[Outcome]:
    """Every .mlir file under `folder` (subfolders too, as the interpreter tests' chlo/) on every backend; on
    those in `compile_only`, each case compiled and not run."""
    outcomes = []
    for root, _, files in sorted(os.walk(folder)):
        for name in sorted(files):
            if not name.endswith(pattern):
                continue
            with open(os.path.join(root, name)) as f:
                cases, unreadable = read_file_cases(name, f.read(), backends)
            outcomes += unreadable
            for backend in backends:
                outcomes += compile_cases(cases, backend) if backend in compile_only else run_cases(cases, backend)
    return outcomes


def table(outcomes: list[Outcome], backends) -> str:
    """A markdown table: per op, passed/total cases on each backend; then the totals."""
    counts = collections.defaultdict(lambda: collections.Counter())
    for o in outcomes:
        for op in o.case.ops or ["(none)"]:
            counts[op][(o.backend, "total")] += 1
            counts[op][(o.backend, "pass")] += o.passed
    lines = ["| op | " + " | ".join(backends) + " |", "|---|" + "---|" * len(backends)]
    for op in sorted(counts):
        c = counts[op]
        lines.append(f"| {op} | " + " | ".join(f"{c[(b, 'pass')]}/{c[(b, 'total')]}" for b in backends) + " |")
    totals = [sum(o.passed for o in outcomes if o.backend == b) for b in backends]
    cases = [sum(1 for o in outcomes if o.backend == b) for b in backends]
    lines.append("| **all cases** | " + " | ".join(f"**{p}/{n}**" for p, n in zip(totals, cases)) + " |")
    return "\n".join(lines)
