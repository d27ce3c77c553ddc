"""The support matrix's sections of public names: every name of hlojit.ops, ops.linalg, ops.fft and hlojit.random,
per target, from what the tests that call it did (tools/support_matrix.py writes them into the doc).

Which names a test exercises is measured, not guessed: a pytest plugin (`Recorder`) watches the calls of every
public function (cProfile's record of the code objects called, nothing is patched) while each test
runs, and keeps, per test, the names called, the target (its `backend` parameter; `cuda` in a test's name: the
iree:cuda compile) and the outcome (known failures with the reason the test's known-failure table gives).
A table test whose cases share one compiled module calls every case's function in its group's first test; its
other tests call nothing, so a test whose id names public functions (the case ids: "cholesky-not-pd-nan") counts
for those names only.
"""
from __future__ import annotations

import collections
import cProfile
import inspect
import json
import os
import re

import pytest

import hlojit as hj
from hlojit import ops

TARGETS = ["reference", "iree:cpu", "iree:vmvx", "iree:cuda", "other"]
TARGET_TITLES = {"iree:cuda": "iree:cuda (compile)", "other": "tests without a target parameter"}


def namespaces() -> dict:
    """namespace title -> {name: function} of its public names (ops: its public functions, not its tables)."""
    main = {n: f for n, f in vars(ops).items() if not n.startswith("_") and callable(f)
            and not isinstance(f, type) and type(f).__name__ != "module"}
    return {"hlojit.ops": main,
            "hlojit.ops.linalg": {n: getattr(ops.linalg, n) for n in ops.linalg.__all__},
            "hlojit.ops.fft": {n: getattr(ops.fft, n) for n in ops.fft.__all__},
            "hlojit.random": {n: getattr(hj.random, n) for n in hj.random.__all__}}


def qualified(title: str, name: str) -> str:
    return name if title == "hlojit.ops" else f"{title.removeprefix('hlojit.').removeprefix('ops.')}.{name}"


def _watched() -> dict:
    """code object -> [(qualified name, function)] of every public function (eager ops: the traced function)."""
    codes = collections.defaultdict(list)
    for title, names in namespaces().items():
        for name, fn in names.items():
            inner = inspect.unwrap(getattr(fn, "eager_fn", fn))   # past wrappers (linalg's empty-input rules)
            code = getattr(inner, "__code__", None)
            if code is not None:
                codes[code].append((qualified(title, name), inner))
    return codes


class Recorder:
    """pytest plugin: per test, the public names it called, its target and its outcome. The calls are seen by
    cProfile (in C: a Python profile hook doubled the run); ops generated from one code object (the
    elementwise table's) are not told apart, so they count only where a test's id names them."""

    def __init__(self, path: str):
        self.codes = {code: [n for n, _ in entries] for code, entries in _watched().items()
                      if len({id(fn) for _, fn in entries}) == 1}
        self.current: set | None = None
        self.records: dict = {}
        self.path = path   # written every 20 tests too: a run cut short still leaves what it found

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(self, item):
        profile = cProfile.Profile(builtins=False)
        profile.enable()
        try:
            yield
        finally:
            profile.disable()
            self.current = {n for entry in profile.getstats() for n in self.codes.get(entry.code, ())}

    def pytest_runtest_teardown(self, item):
        names, self.current = self.current or set(), None
        params = getattr(getattr(item, "callspec", None), "params", {})
        target = params.get("backend")
        if not isinstance(target, str):
            target = "iree:cuda" if "cuda" in item.name else next((b for b in TARGETS[:3] if b in item.name), "other")
        record = self.records.setdefault(item.nodeid, {"outcome": "skip", "why": ""})
        record.update(target=target, called=sorted(names))
        if len(self.records) % 20 == 0:
            self.save()

    def pytest_runtest_logreport(self, report):
        record = self.records.setdefault(report.nodeid, {"outcome": "skip", "why": ""})
        if hasattr(report, "wasxfail"):
            record.update(outcome="known", why=report.wasxfail.removeprefix("reason: "))
        elif report.failed:
            record.update(outcome="fail", why=str(report.longrepr).splitlines()[-1][:200])
        elif report.skipped and report.when == "setup":
            record.update(outcome="skip", why=str(report.longrepr[-1]) if isinstance(report.longrepr, tuple) else "")
        elif report.passed and report.when == "call":
            record.update(outcome="pass")

    def save(self):
        with open(self.path + ".tmp", "w") as f:
            json.dump(self.records, f, indent=0, sort_keys=True)
        os.replace(self.path + ".tmp", self.path)


def record(files, path: str, junit: str | None = None):
    """Run the test files in this process with the Recorder; write its records (and a junit XML) to path."""
    recorder = Recorder(path)
    args = ["-q", "-p", "no:cacheprovider", "-n", "0", *files] + ([f"--junitxml={junit}"] if junit else [])
    pytest.main(args, plugins=[recorder])
    recorder.save()


def _id_names(nodeid: str, short: dict) -> set:
    """The public names a test's id names (its parameters' words), among those its module's tests call."""
    params = nodeid.partition("[")[2]
    words = set(re.split(r"[\s\-,()=/:\[\]]+", params))   # (not on ".": "fft.rfft" is one name)
    return {q for w in words for q in short.get(w, ())}


def names_by_target(records: dict) -> dict:
    """qualified name -> target -> [(outcome, why)] of the tests that exercise it."""
    called_in_module = collections.defaultdict(set)
    for nodeid, r in records.items():
        called_in_module[nodeid.split("::")[0]].update(r.get("called", ()))
    result: dict = collections.defaultdict(lambda: collections.defaultdict(list))
    for nodeid, r in records.items():
        module_names = called_in_module[nodeid.split("::")[0]]
        short = collections.defaultdict(set)
        for q in module_names:
            short[q.rpartition(".")[2]].add(q)
            short[q].add(q)
        names = _id_names(nodeid, short) or set(r.get("called", ()))
        for q in names:
            result[q][r.get("target", "other")].append((r["outcome"], r["why"], nodeid.split("::")[0]))
    return result


def cell(results, notes) -> str:
    if not results:
        return "-"
    counts = collections.Counter(outcome for outcome, _, _ in results)
    parts = [f"{counts['pass']} pass"] if counts["pass"] else []
    for outcome, word in (("known", "known failure"), ("fail", "failing")):
        reasons = sorted({why for o, why, _ in results if o == outcome})
        if reasons:
            parts.append(f"{counts[outcome]} {word} " + "".join(notes.ref(r) for r in reasons))
    if counts["skip"]:
        parts.append(f"{counts['skip']} skipped")
    return ", ".join(parts)


_PREFIXES = {  # how the test files spell each namespace (for names no recorded test called)
    "hlojit.ops": r"\bops\.", "hlojit.ops.linalg": r"\b(?:L|linalg)\.", "hlojit.ops.fft": r"(?<!np\.)\bfft\.",
    "hlojit.random": r"(?:\bhj\.random|\bhr|(?<!np\.)(?<!\w)random)\.",
}


def mentions(root: str) -> dict:
    """qualified name -> the test files whose source calls it by name (ops.vstack, L.cholesky, hr.gamma)."""
    texts = {}
    folder = os.path.join(root, "tests")
    for file in sorted(os.listdir(folder)):
        if file.startswith("test_") and file.endswith(".py"):
            with open(os.path.join(folder, file)) as f:
                texts[file] = f.read()
    found = collections.defaultdict(list)
    for title, names in namespaces().items():
        for name in names:
            pattern = re.compile(_PREFIXES[title] + re.escape(name) + r"\b(?!\.)")
            found[qualified(title, name)] = [file for file, text in texts.items() if pattern.search(text)]
    return found


def sections(records: dict, notes, root: str, op_table: dict) -> str:
    """The doc's sections of public names, one table per namespace. A name no recorded test called shows its
    op table row (op_table: op -> cells of reference, iree:cpu, iree:vmvx, iree:cuda), else the test files
    that call it by name (and ? for what the recorded run does not know)."""
    by_name = names_by_target(records)
    mentioned = mentions(root)
    out = []
    for title, names in namespaces().items():
        rows = []
        aliases = collections.defaultdict(list)
        for name, fn in names.items():
            aliases[id(getattr(fn, "eager_fn", fn))].append(name)
        for name in sorted(names, key=str.lower):
            same = aliases[id(getattr(names[name], "eager_fn", names[name]))]
            shown = f"`{name}`" + (f" (= {', '.join(f'`{o}`' for o in same if o != name)})" if len(same) > 1 else "")
            rows.append(f"| {shown} | " + _row(title, same, by_name, mentioned, op_table, notes) + " |")
        untested = sum("no test calls it" in r for r in rows)
        out.append(f"### `{title}` ({len(names)} names; {untested} that no test calls)\n\n"
                   "| name | tested in | " + " | ".join(TARGET_TITLES.get(t, t) for t in TARGETS) + " |\n"
                   "|---|---|" + "---|" * len(TARGETS) + "\n" + "\n".join(rows))
    return "\n\n".join(out)


def _row(title, same: list, by_name, mentioned, op_table, notes) -> str:
    """The cells after the name of one function (known by the names in `same`, aliases of each other)."""
    found = collections.defaultdict(list)
    for name in same:
        for target, results in by_name.get(qualified(title, name), {}).items():
            found[target] += results
    files = sorted({m.removeprefix("tests/") for results in found.values() for _, _, m in results})
    if files:
        return ", ".join(files) + " | " + " | ".join(cell(found.get(t, []), notes) for t in TARGETS)
    row = next((op_table[n] for n in same if title == "hlojit.ops" and n in op_table), None)
    if row is not None:
        return "test_ops.py (op table) | " + " | ".join(f"op table: {c}" for c in row) + " | -"
    files = sorted({f for n in same for f in mentioned[qualified(title, n)]})
    where = ", ".join(files) + " (not in the recorded run)" if files else "**no test calls it**"
    return where + " | " + " | ".join(["?"] * len(TARGETS))
