"""Write docs/support_matrix.md: every op of the op table (tests/test_ops.py) on every target, at a glance, and
every public name of hlojit.ops, ops.linalg, ops.fft and hlojit.random with what its tests did per target.

    python tools/support_matrix.py                  # runs the op tests (recorded, see below) and writes the doc
    python tools/support_matrix.py --junit run.xml --records names.json   # from a finished recorded run
    python tools/support_matrix.py --record-only DIR  # only the run: DIR/run.xml and DIR/names.json

A cell says what the op's cases (every dtype and shape the table samples) did on that target: all pass,
or which input dtypes fail and why, with IREE's own error in the footnote (the reasons come from the
known-failure tables the tests keep, so the doc and the tests cannot disagree). `lowering` says whether
hlojit hands the op to IREE as the StableHLO op of its name, or decomposes it itself (and into which ops).
iree:cuda is compiled here (no GPU on this machine): one module per op, then per case where one fails.
The op families with test files of their own (convolutions, indexing, control flow ...) get a line each.
The sections of public names come from the same run, recorded by tools/support_names.py (which names each
test calls, measured while it runs).
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import re
import sys
import tempfile
import xml.etree.ElementTree as ET

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [ROOT, os.path.join(ROOT, "tests")]

import numpy as np  # noqa: E402

import hlojit as hj  # noqa: E402
from hlojit.errors import CompileError  # noqa: E402
from hlojit.frontend.ops.elementwise import COMPARISONS  # noqa: E402
from hlojit.pipeline import compile_program, targets  # noqa: E402
import test_ops  # noqa: E402  (the op table: tests/test_ops.py)
sys.path.insert(0, os.path.join(ROOT, "tools"))
import support_names  # noqa: E402

FAMILY_FILES = {  # op families tested in files of their own, beside the op table
    "convolutions and pools": "tests/test_ops_nn.py", "shape and joining": "tests/test_ops_shape.py",
    "indexing, gather, scatter, .at": "tests/test_ops_indexing.py",
    "math family, statistics, sort": "tests/test_ops_math.py", "control flow": "tests/test_control.py",
    "random": "tests/test_random.py",
}
NAME_FILES = [  # the other tests of public names (the sections of names)
    "tests/test_ops_numpy.py", "tests/test_linalg.py", "tests/test_linalg_eig.py", "tests/test_fft.py",
    "tests/test_complex.py", "tests/test_random_distributions.py", "tests/test_functional.py",
    "tests/test_eager_namespaces.py", "tests/test_linalg_complex.py", "tests/test_linalg_complex_svd.py",
    "tests/test_linalg_complex_grad.py", "tests/test_linalg_empty.py", "tests/test_numpy_edge_cases.py",
    "tests/test_complex_special_values.py",
]
STRUCTURAL = {"constant", "broadcast_in_dim", "reshape", "convert", "return", "transpose", "iota"}


def run_tests(folder: str) -> tuple[str, str]:
    """(junit XML, names records) of one recorded run of the op tests, in this process (-n 0: 2 loaded cores)."""
    files = ["tests/test_ops.py", *FAMILY_FILES.values(), *NAME_FILES]
    print(f"running {' '.join(files)} (many minutes) ...", flush=True)
    junit, records = os.path.join(folder, "run.xml"), os.path.join(folder, "names.json")
    os.chdir(ROOT)
    support_names.record(files, records, junit)
    return junit, records


def outcomes(junit) -> dict:
    """test id -> ("pass" | "fail", why) for every test case of the run."""
    result = {}
    for case in ET.parse(junit).iter("testcase"):
        name = f"{case.get('classname', '').split('.')[-1]}::{case.get('name')}"
        problem = next(iter(case), None)
        if problem is None or problem.tag in ("system-out", "system-err", "properties"):
            result[name] = ("pass", "")
        elif problem.tag == "skipped" and problem.get("type") != "pytest.xfail":
            result[name] = ("skip", problem.get("message", ""))
        else:
            result[name] = ("fail", _why(problem))
    return result


def _why(problem) -> str:
    """The reason of an expected failure, else the first error line of the test's report."""
    message = problem.get("message", "")
    if problem.tag == "skipped" and not message.startswith("open:"):
        return message.removeprefix("reason: ").removeprefix("[NOTRUN] ").removeprefix("not compiled: ")
    for line in (problem.text or "").splitlines():
        if line.startswith("E  ") and line[1:].strip():
            return line[1:].strip()
    return message or problem.tag


def lowering(cases) -> str:
    """The StableHLO ops the op's cases become (all of them: a scalar `dot` is a multiply, a matrix one not)."""
    names = set()
    for case in cases:
        try:
            text = hj.jit(case.fn, backend="reference").lower(*case.args).mlir
        except Exception as e:  # noqa: BLE001 - shown in the doc
            return f"does not trace: {type(e).__name__}"
        names |= set(re.findall(r'"?(?:stablehlo|chlo)\.([a-z_]+)', text))
    names = sorted(names - STRUCTURAL)
    row = test_ops.UNARY.get(cases[0].op) or test_ops.BINARY.get(cases[0].op)
    native = "compare" if cases[0].op in COMPARISONS else row.hlo if row is not None else None
    if native is not None and names in ([native], []):
        return f"native `{native}`"
    if not names:
        return "data movement only"
    shown = ", ".join(names[:6]) + (", ..." if len(names) > 6 else "")
    return f"{'decomposed' if native is not None or row is not None else 'built'}: {shown}"


def cuda_status(cases) -> tuple[str, str]:
    """("compiles", "") or ("fails", first diagnostic) for the op's cases compiled for iree:cuda."""
    target = targets.get("cuda")

    def compile_cases(group):
        fn = hj.jit(lambda inputs: [c.fn(*a) for c, a in zip(group, inputs)], backend="reference")
        try:
            compile_program(fn.lower([c.args for c in group]).program, target)
            return None
        except CompileError as e:
            return str(e).splitlines()[0].split(": ", 1)[-1]
        except Exception as e:  # noqa: BLE001 - a trace-time failure is reported like a compile failure
            return f"{type(e).__name__}: {e}".splitlines()[0]
    if compile_cases(cases) is None:
        return "compiles", ""
    failing = [(c, compile_cases([c])) for c in cases]
    failing = [(c, why) for c, why in failing if why]
    return "fails", "; ".join(sorted({why for _, why in failing})) + f" ({_dtypes([c for c, _ in failing])})"


def _dtypes(cases) -> str:
    return ", ".join(sorted({test_ops.SHORT.get(np.asarray(c.args[0]).dtype if c.args else c.dtype, "?")
                             for c in cases}))


class Footnotes:
    def __init__(self, prefix: str = ""):
        self.reasons: dict[str, int] = {}
        self.prefix = prefix   # the section of names numbers its own: [N1], [N2] ...

    def ref(self, reason: str) -> str:
        number = self.reasons.setdefault(reason.replace("|", "\\|").replace("\n", " "), len(self.reasons) + 1)
        return f"[{self.prefix}{number}]"

    def __str__(self):
        if self.prefix:
            return "\n".join(f"- [{self.prefix}{n}] {reason}" for reason, n in self.reasons.items())
        return "\n".join(f"{n}. {reason}" for reason, n in self.reasons.items())


def cell(results, notes: Footnotes) -> str:
    """results: [(case, (outcome, why))] of one op on one backend."""
    ran = [(c, r) for c, r in results if r is not None]
    if not ran:
        return "not run"
    failing = [(c, r[1]) for c, r in ran if r[0] == "fail"]
    if not failing:
        return f"pass ({len(ran)})"
    by_reason = collections.defaultdict(list)
    for case, why in failing:
        by_reason[why].append(case)
    parts = [f"{_dtypes(cases)} {notes.ref(why)}" for why, cases in by_reason.items()]
    return f"{len(ran) - len(failing)}/{len(ran)} pass; fail: " + ", ".join(parts)


def family_lines(results) -> list[str]:
    lines = ["| family | tests | " + " | ".join(test_ops.BACKENDS) + " |",
             "|---|---|" + "---|" * len(test_ops.BACKENDS)]
    for family, path in FAMILY_FILES.items():
        module = os.path.splitext(os.path.basename(path))[0]
        mine = {k: v for k, v in results.items() if k.startswith(module + "::")}
        cells = []
        for backend in test_ops.BACKENDS:
            hits = [v for k, v in mine.items() if backend in k]
            passed = sum(v[0] == "pass" for v in hits)
            failed = sum(v[0] == "fail" for v in hits)
            known = f", {failed} known failure{'s' * (failed != 1)}" if failed else ""
            cells.append(f"{passed} pass{known}" if hits else "-")
        lines.append(f"| {family} | `{path}` ({len(mine)}) | " + " | ".join(cells) + " |")
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--junit", help="a junit XML of a pytest run of tests/test_ops.py and the family files")
    parser.add_argument("--records", nargs="+", help="names records of the same run (support_names.record)")
    parser.add_argument("--record-only", metavar="DIR", help="only run the tests, recorded, into DIR")
    parser.add_argument("--names-only", action="store_true",
                        help="rewrite only the section of public names of --out, from --records")
    parser.add_argument("--out", default=os.path.join(ROOT, "docs", "support_matrix.md"))
    parser.add_argument("--no-cuda", action="store_true", help="skip compiling each op for iree:cuda")
    args = parser.parse_args()
    if args.record_only:
        os.makedirs(args.record_only, exist_ok=True)
        print("wrote", *run_tests(args.record_only))
        return
    if args.names_only:
        with open(args.out) as f:
            kept = f.read().partition(NAMES_TITLE)[0].rstrip("\n")
        _write(args.out, kept + "\n\n" + names_section(args.records, _op_table_cells(kept)))
        return
    junit, records = args.junit, args.records
    if junit is None or records is None:
        junit, records = run_tests(tempfile.mkdtemp(prefix="hlojit-matrix-"))
        records = [records]
    results = outcomes(junit)
    by_op = _op_table()
    notes, rows = Footnotes(), []
    for op in sorted(by_op):
        cases = by_op[op]
        cells = [cell([(c, results.get(f"test_ops::test_op[{b}-{c.id}]")) for c in cases], notes)
                 for b in test_ops.BACKENDS]
        if args.no_cuda:
            cuda = "not compiled"
        else:
            status, why = cuda_status(cases)
            cuda = status if not why else f"{status}: {notes.ref(why)}"
        rows.append(f"| `{op}` | {lowering(cases)} | {_dtypes(cases)} | " + " | ".join(cells) + f" | {cuda} |")
        print(rows[-1], flush=True)
    header = ("| op | lowering | input dtypes | " + " | ".join(test_ops.BACKENDS) + " | iree:cuda (compile) |\n"
              "|---|---|---|" + "---|" * (len(test_ops.BACKENDS) + 1))
    text = (f"# Op support matrix\n\nGenerated by `python tools/support_matrix.py` from the op table in "
            f"`tests/test_ops.py` with hlojit {hj.__version__} and IREE {_iree_version()}; do not edit by hand.\n\n"
            "Each cell counts the op's cases (dtypes x sampled shapes, specials) that match numpy on that target; "
            "failures name the input dtypes and a footnote with the reason (IREE's error where it is one). "
            "`native` ops reach IREE as the StableHLO op of the same name; `decomposed` ones are composites "
            "hlojit builds (for numpy's semantics or because IREE gets the op wrong); iree:cuda is compiled "
            "only (no GPU here).\n\n" + header + "\n" + "\n".join(rows) + "\n\n## Reasons\n\n" + str(notes) +
            "\n\n## Families tested in files of their own\n\n" + "\n".join(family_lines(results)))
    _write(args.out, text + "\n\n" + names_section(records, _op_table_cells(text)))


def _op_table() -> dict:
    """op -> its cases in the op table of tests/test_ops.py."""
    by_op = collections.defaultdict(list)
    for cases in test_ops.GROUPS.values():
        for case in cases:
            by_op[case.op].append(case)
    return by_op


def _op_table_cells(doc: str) -> dict:
    """op -> its cells (reference, iree:cpu, iree:vmvx, iree:cuda) in the op table of the doc's text."""
    cells = {}
    for line in doc.partition("## Reasons")[0].splitlines():
        parts = [p.strip() for p in line.strip("|").split(" | ")]
        if len(parts) == 7 and parts[0].startswith("`"):
            cells[parts[0].strip("`")] = parts[3:]
    return cells


def names_section(record_files, op_table: dict) -> str:
    """The section of every public name, with reasons of its own, from the records of one or more runs."""
    records = {}
    for path in record_files:
        with open(path) as f:
            records.update(json.load(f))
    notes = Footnotes("N")
    tables = support_names.sections(records, notes, ROOT, op_table)
    files = ", ".join(f"`{f}`" for f in sorted({nodeid.split("::")[0] for nodeid in records}))
    return (f"{NAMES_TITLE}\n\n{NAMES_INTRO}\n\nThe recorded run: {len(records)} tests of {files}.\n\n{tables}"
            f"\n\n### Reasons of the known failures and failures above\n\n{notes}\n")


def _write(path: str, text: str):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
    print(f"wrote {path}")


NAMES_TITLE = "## Every public name"
NAMES_INTRO = (
    "Every public function of `hlojit.ops`, `hlojit.ops.linalg`, `hlojit.ops.fft` and `hlojit.random`, with the "
    "tests that call it (measured while they run: tools/support_names.py) and what they did on each target: "
    "passes, known failures (the reason from the test's known-failure table, in the footnotes below), failures. "
    "A test counts for a name when it calls the name and, if its id names public functions (a table's case ids), "
    "when its id names it. `iree:cuda` counts the tests that compile for cuda (no GPU here); the last column "
    "the tests whose target is not a parameter (gradients, errors, eager calls: most run on the default "
    "target). `-`: no test of that kind calls the name. Names joined by `=` are one function. A name no "
    "recorded test called shows its row of the op table above (`op table:`, footnotes of the op table's "
    "Reasons), else the test files that call it by name outside the recorded run (`?`: not known from it).")


def _iree_version() -> str:
    from importlib.metadata import version
    return version("iree-base-compiler")


if __name__ == "__main__":
    main()
