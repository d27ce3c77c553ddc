"""Write docs/support_matrix.md: every op of the op table (tests/test_ops.py) on every target, at a glance.

    python tools/support_matrix.py                  # runs the op tests (a few minutes) and writes the doc
    python tools/support_matrix.py --junit run.xml  # from a finished `pytest --junitxml=run.xml` run

A cell says what the op's cases (every dtype and shape the table samples) did on that target: all pass,
or which input dtypes fail and why, with IREE's own error in the footnote (the reasons come from the
known-failure tables the tests keep, so the doc and the tests cannot disagree). `lowering` says whether
hlojit hands the op to IREE as the StableHLO op of its name, or decomposes it itself (and into which ops).
iree:cuda is compiled here (no GPU on this machine): one module per op, then per case where one fails.
The op families with test files of their own (convolutions, indexing, control flow ...) get a line each.
"""
from __future__ import annotations

import argparse
import collections
import os
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [ROOT, os.path.join(ROOT, "tests")]

import numpy as np  # noqa: E402

import hlojit as hj  # noqa: E402
from hlojit.errors import CompileError  # noqa: E402
from hlojit.pipeline import compile_program, targets  # noqa: E402
import test_ops  # noqa: E402  (the op table: tests/test_ops.py)

FAMILY_FILES = {  # op families tested in files of their own, beside the op table
    "convolutions and pools": "tests/test_ops_nn.py", "shape and joining": "tests/test_ops_shape.py",
    "indexing, gather, scatter, .at": "tests/test_ops_indexing.py",
    "math family, statistics, sort": "tests/test_ops_math.py", "control flow": "tests/test_control.py",
    "random": "tests/test_random.py",
}
STRUCTURAL = {"constant", "broadcast_in_dim", "reshape", "convert", "return", "transpose", "iota"}


def run_tests(files, junit):
    print(f"running {' '.join(files)} (a few minutes) ...", flush=True)
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={junit}", *files],
                   cwd=ROOT, stdout=subprocess.DEVNULL)


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
    native = "compare" if cases[0].op in test_ops.COMPARISONS else row.hlo if row is not None else None
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
    def __init__(self):
        self.reasons: dict[str, int] = {}

    def ref(self, reason: str) -> str:
        number = self.reasons.setdefault(reason.replace("|", "\\|").replace("\n", " "), len(self.reasons) + 1)
        return f"[{number}]"

    def __str__(self):
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
    parser.add_argument("--out", default=os.path.join(ROOT, "docs", "support_matrix.md"))
    parser.add_argument("--no-cuda", action="store_true", help="skip compiling each op for iree:cuda")
    args = parser.parse_args()
    junit = args.junit
    if junit is None:
        junit = os.path.join(tempfile.mkdtemp(prefix="hlojit-matrix-"), "run.xml")
        run_tests(["tests/test_ops.py", *FAMILY_FILES.values()], junit)
    results = outcomes(junit)
    by_op = collections.defaultdict(list)
    for group, cases in test_ops.GROUPS.items():
        for case in cases:
            by_op[case.op].append(case)
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
            "\n\n## Families tested in files of their own\n\n" + "\n".join(family_lines(results)) + "\n")
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        f.write(text)
    print(f"wrote {args.out}")


def _iree_version() -> str:
    from importlib.metadata import version
    return version("iree-base-compiler")


if __name__ == "__main__":
    main()
