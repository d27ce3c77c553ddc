"""Op-table driven numeric tests: every row of the UNARY, BINARY, COMPARISONS and REDUCTIONS tables, plus
matmul/dot, where, astype, the shape ops and array creation, on every backend in `conftest.BACKENDS`,
compared with numpy (each elementwise row's own `numpy` reference) within `conftest.TOLERANCES`.

How it is organised
- A `Case` is one op applied to one set of inputs: a traced function, the numpy inputs, numpy's answer and
  hlojit's result dtype. Cases are built once, at collection, into *groups* ("unary-f32": every unary row
  that takes f32, plus the nan/inf specials; "binary-i8"; "reduce-bool"; "contract-f64"; "astype" ...).
- Compiling costs ~0.4 s per IREE module and more per dispatch, so a group is ONE jitted function that
  takes the inputs of all its cases and returns all their results: the file compiles a few dozen modules
  per IREE backend. A group runs once per backend (lazily, cached in `_RESULTS`); each case is still its
  own pytest item, so a failure names the op, dtype, shapes and backend, and a known problem is xfailed
  case by case (`KNOWN_*` below; strict, so a fix shows up as XPASS).
- The cases themselves (shapes rotating over the rows, numpy's answers in the result dtype): op_cases.py.
"""
from __future__ import annotations

import os
import pickle
import subprocess
import sys
import traceback
import warnings

import numpy as np
import pytest

import hlojit as hj
from hlojit import ops
from hlojit.frontend.ops.elementwise import BINARY, UNARY

from conftest import BACKENDS, TOLERANCES, assert_close
from op_cases import (BF16, BOOL, EXTRA_DTYPES, F16, F32, F64, FLOATS, I8, I32, MAIN_DTYPES, SHORT, astype_cases,
                      binary_cases, contraction_cases, creation_cases, promotion_cases, reduction_cases, shape_cases,
                      takes, unary_cases, where_cases)

# --- groups: one compiled module per (backend, group) -----------------------------------------------

def _groups():
    """14 modules per backend: each costs a fixed ~0.4 s plus its dispatches (a few are costly: sin's
    argument reduction, erf, lgamma), so the narrow dtypes share modules."""
    groups = {"unary-narrow": [], "binary-narrow": [], "reduce": [], "contract": []}
    for offset, dtype in enumerate(MAIN_DTYPES + EXTRA_DTYPES):
        suffix = SHORT[dtype] if dtype in MAIN_DTYPES else "narrow"
        groups.setdefault(f"unary-{suffix}", []).extend(unary_cases(dtype, offset))
        groups.setdefault(f"binary-{suffix}", []).extend(binary_cases(dtype, offset))
        groups["reduce"] += reduction_cases(dtype, offset)
    for dtype in (F32, F64, I32, BOOL, F16, BF16, I8):
        groups["contract"] += contraction_cases(dtype)
    groups["astype"] = astype_cases()
    groups["misc"] = where_cases() + promotion_cases() + creation_cases() + shape_cases()
    for name, cases in groups.items():
        ids = [c.id for c in cases]
        assert len(ids) == len(set(ids)), f"duplicate case ids in {name}"
    return groups


with warnings.catch_warnings(), np.errstate(all="ignore"):  # numpy's answers for x / 0, means of nothing ...
    warnings.simplefilter("ignore")
    GROUPS = _groups()


# --- known problems ------------------------------------------------------------------------------
# Each entry: (backends, predicate on (group, case), reason). Found by this file; see the bug list in the
# commit that added it. They are strict xfails: when the library fixes one, the test XPASSes and fails.

def _dtypes_of(case):
    return {np.asarray(a).dtype for a in case.args} | {case.dtype}


HALF = (F16, BF16)


def _vmvx_compiles_half(case) -> bool:
    """The f16/bf16 cases IREE vmvx does compile (each compiled alone): all but f64 -> f16/bf16 (the pipeline's
    vmvx rewrites compute both in f32, f16 <-> f32 by the bits: pipeline/vmvx_rewrites.py)."""
    if case.op in ("where", "ones", "full", "isnan", "isfinite"):
        return True
    return not (case.op == "astype" and case.args[0].dtype == F64)

# IREE cannot compile these: the cases go into a module of their own, so the rest of their group runs.
KNOWN_COMPILE_FAILURES = [
    (("iree:vmvx",), lambda g, c: bool(_dtypes_of(c) & set(HALF)) and not _vmvx_compiles_half(c),
     "IREE vmvx cannot convert f64 to f16/bf16 (it truncates no f64; its f16/bf16 arithmetic is computed in f32 "
     "by pipeline/vmvx_rewrites.py)"),
    (("iree:vmvx",), lambda g, c: c.id == "matmul-bool-3,3x4",
     "IREE vmvx: a bool vector-matrix product fuses the i1->i32 convert into linalg.vecmat and fails "
     "('linalg.vecmat' op expected type of bb argument #0 ('i1') to match element type ('i8'))"),
    (("iree:vmvx",), lambda g, c: c.op == "astype" and c.args[0].dtype == F64 and c.dtype == F32,
     "IREE vmvx cannot convert f64 to f32: failed to legalize 'arith.truncf' (f64) -> f32 (f64 -> int is a "
     "pipeline rewrite, compile_rewrites.f64_to_int_by_bits)"),
]

# Cases that kill the Python process (IREE's compiler once died with SIGFPE on a 0-long contraction; hlojit
# now emits zeros for it): each runs in a subprocess, so the crash fails its test, not the session. None now.
KNOWN_CRASHES: list = []

# Wrong answers (f64 fmod past 2**53, vmvx's ui8 division and shifts were: pipeline/accurate_math.py,
# vmvx_rewrites.py). None now.
KNOWN_WRONG: list = []


def _known(table, backend, group, case):
    for backends, predicate, reason in table:
        if backend in backends and predicate(group, case):
            return reason
    return None


def _compile_failure_probes() -> set:
    """(backend, case id) of the first case of each known compile failure in each group: compiling one
    shows the failure is still there (a strict xfail turns into a failure when IREE or hlojit fixes it);
    compiling every case that hits it (all f16 arithmetic on vmvx ...) would cost seconds for nothing."""
    probes = {}
    for backend in BACKENDS:
        for group, cases in GROUPS.items():
            for case in cases:
                reason = _known(KNOWN_COMPILE_FAILURES, backend, group, case)
                if reason:
                    probes.setdefault((backend, group, reason), case.id)
    return {(backend, case_id) for (backend, _, _), case_id in probes.items()}


COMPILE_FAILURE_PROBES = _compile_failure_probes()


# --- running ---------------------------------------------------------------------------------------

def run_cases(backend, cases):
    """Compile one module computing every case; returns {case id: numpy result, or the exception}."""
    fn = hj.jit(lambda inputs: [c.fn(*args) for c, args in zip(cases, inputs)], backend=backend)
    try:
        outputs = fn([c.args for c in cases])
        # copies: a view of an IREE buffer outliving the device at interpreter exit segfaults
        return {c.id: np.array(out, copy=True) for c, out in zip(cases, outputs)}
    except Exception as e:  # every case of the module reports the error (with where it came from)
        e.add_note("raised at:\n" + "".join(traceback.format_tb(e.__traceback__)[-3:]))
        return {c.id: e for c in cases}


def _module_of(backend, group, case):
    """Which module computes a case: the group's main one, one of its own (a known compile failure's probe),
    or a subprocess (a known crash); None for a known compile failure that is not its probe (not run)."""
    if _known(KNOWN_CRASHES, backend, group, case):
        return f"crash:{case.id}"
    if _known(KNOWN_COMPILE_FAILURES, backend, group, case):
        return f"probe:{case.id}" if (backend, case.id) in COMPILE_FAILURE_PROBES else None
    return "main"


# Each module compiles once, on the first test that needs it. Under pytest-xdist (the project's default,
# `-n auto`), conftest.py sends all the tests of one (backend, group) to the same worker.
_RESULTS: dict = {}


def result(backend, group, case):
    module = _module_of(backend, group, case)
    key = (backend, group, module)
    if key not in _RESULTS:
        if module.startswith("crash:"):
            _RESULTS[key] = _run_in_subprocess(backend, group, case)
        else:
            _RESULTS[key] = run_cases(backend, [c for c in GROUPS[group] if _module_of(backend, group, c) == module])
    return _RESULTS[key][case.id]


def _run_in_subprocess(backend, group, case):
    """Run one case in a child Python, so a crash of IREE's compiler fails the test, not the session."""
    code = (f"import sys, pickle; sys.path.insert(0, {os.path.dirname(__file__)!r}); import test_ops as t; "
            f"c = next(c for c in t.GROUPS[{group!r}] if c.id == {case.id!r}); "
            f"r = t.run_cases({backend!r}, [c])[c.id]; "
            f"sys.stdout.buffer.write(pickle.dumps(r if not isinstance(r, Exception) else RuntimeError(str(r))))")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([root, os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, env=env, timeout=300)
    if proc.returncode != 0:
        raise AssertionError(f"{case.id} on {backend}: the Python process died with exit code {proc.returncode}"
                             f"{' (signal ' + str(-proc.returncode) + ')' if proc.returncode < 0 else ''}; "
                             f"stderr: {proc.stderr.decode(errors='replace')[-500:]}")
    return {case.id: pickle.loads(proc.stdout)}


def _params():
    for backend in BACKENDS:
        for group, cases in GROUPS.items():
            for case in cases:
                marks = []
                reason = _known(KNOWN_COMPILE_FAILURES, backend, group, case)
                if reason:  # only the probe compiles; the rest are not run (same failure, same cost)
                    probe = (backend, case.id) in COMPILE_FAILURE_PROBES
                    marks.append(pytest.mark.xfail(reason=reason if probe else f"not compiled: {reason}",
                                                   raises=hj.CompileError, strict=True, run=probe))
                for table in (KNOWN_CRASHES, KNOWN_WRONG):
                    reason = _known(table, backend, group, case)
                    if reason:
                        marks.append(pytest.mark.xfail(reason=reason, raises=AssertionError, strict=True))
                yield pytest.param(backend, group, case, id=f"{backend}-{case.id}", marks=marks)


def mismatches(actual, case, rtol, atol, limit=8) -> str:
    """The first elements out of tolerance, each with its inputs: 'at (1, 2): inputs (-2.0, 3.0) got nan want -8.0'."""
    if actual.shape != case.expected.shape:
        return ""
    a, e = actual.astype(np.float64), case.expected.astype(np.float64)
    with np.errstate(all="ignore"):
        bad = np.argwhere(~np.isclose(a, e, rtol=rtol, atol=atol, equal_nan=True) | (np.isnan(a) != np.isnan(e)))
    lines = []
    for index in (tuple(int(i) for i in b) for b in bad[:limit]):
        inputs = []
        for arg in case.args:
            arg = np.asarray(arg)
            try:
                inputs.append(np.broadcast_to(arg, actual.shape)[index].item())
            except ValueError:  # not elementwise (a reduction or contraction): inputs are shown below
                inputs = None
                break
        where = f"inputs {tuple(inputs)} " if inputs else ""
        lines.append(f"  at {index}: {where}got {actual[index]!r} want {case.expected[index]!r}")
    more = f"\n  ... {len(bad) - limit} more" if len(bad) > limit else ""
    return f"{len(bad)} of {actual.size} elements differ:\n" + "\n".join(lines) + more if lines else ""


def describe_inputs(args) -> str:
    parts = []
    for a in args:
        a = np.asarray(a)
        text = np.array2string(a, threshold=40, max_line_width=160) if a.size <= 40 else "(large)"
        parts.append(f"{a.dtype}{list(a.shape)} {text}")
    return "; ".join(parts)


@pytest.mark.parametrize("backend, group, case", list(_params()))
def test_op(backend, group, case):
    actual = result(backend, group, case)
    if isinstance(actual, Exception):  # shared by the module's cases: drop the traceback the last one grew
        raise actual.with_traceback(None)
    try:
        if case.exact:
            assert actual.shape == case.expected.shape, f"shape {actual.shape} != {case.expected.shape}"
            assert actual.dtype == case.dtype, f"dtype {actual.dtype} != {case.dtype}"
            if case.dtype in FLOATS:  # every bit: equal values, nan where nan is, the sign of zeros
                a, e = actual.astype(F64), case.expected.astype(F64)
                np.testing.assert_array_equal(a, e)
                assert np.array_equal(np.signbit(a), np.signbit(e) | np.isnan(e) & np.signbit(a)), \
                    f"signs of zero differ: {a} vs {e}"
            else:
                np.testing.assert_array_equal(actual, case.expected)
        elif case.relative:
            rtol = TOLERANCES[np.dtype(case.dtype).name][0] * case.scale.get(backend, 1.0)
            assert actual.dtype == case.dtype, f"dtype {actual.dtype} != {case.dtype}"
            np.testing.assert_allclose(actual.astype(F64), case.expected.astype(F64), rtol=rtol, atol=0)
        else:
            assert_close(actual, case.expected, case.dtype, scale=case.scale.get(backend, 1.0))
    except AssertionError as e:
        rtol, atol = TOLERANCES[np.dtype(case.dtype).name]
        scale = 0.0 if case.exact else case.scale.get(backend, 1.0)
        atol = 0.0 if case.relative else atol
        raise AssertionError(f"{case.id} on {backend} (module {group}, result {case.dtype})\n"
                             f"{mismatches(actual, case, rtol * scale, atol * scale)}\n"
                             f"inputs: {describe_inputs(case.args)}\n{e}") from None


# --- trace-time checks (nothing compiles) ----------------------------------------------------------

def _trace(fn, *args):
    return hj.jit(fn, backend="reference").lower(*args)


@pytest.mark.parametrize("name", list(UNARY) + list(BINARY))
def test_rejected_dtypes(name):
    """Every dtype a row's `kinds` leaves out is refused at trace time with a DTypeError naming the op."""
    row = UNARY.get(name) or BINARY[name]
    for dtype in MAIN_DTYPES + EXTRA_DTYPES:
        if takes(row, dtype):
            continue
        x = np.zeros((2,), dtype)
        fn = (lambda x: getattr(ops, name)(x)) if name in UNARY else (lambda x: getattr(ops, name)(x, x))
        with pytest.raises(hj.DTypeError, match=name):
            _trace(fn, x)


def test_integer_to_negative_power_is_refused():
    with pytest.raises(ValueError, match="negative"):
        _trace(lambda x: ops.power(x, -1), np.ones(3, np.int32))


@pytest.mark.parametrize("name", ["max", "min"])
def test_reduction_of_nothing_has_no_identity(name):
    with pytest.raises(hj.ShapeError, match="zero-size"):
        _trace(lambda x: getattr(ops, name)(x, axis=0), np.zeros((0, 3), np.float32))


@pytest.mark.parametrize("op, sx, sy", [("matmul", (2, 3), (4, 3)), ("matmul", (3,), (4,)), ("dot", (2, 3), (2, 3)),
                                        ("add", (2, 1, 3), (2, 4)), ("matmul", (), (3,))])
def test_incompatible_shapes(op, sx, sy):
    with pytest.raises(hj.ShapeError, match=op):
        _trace(lambda x, y: getattr(ops, op)(x, y), np.zeros(sx, np.float32), np.zeros(sy, np.float32))
