"""Data flows one way (README, Layout): user function -> frontend -> dialects -> ir.Module -> backend (pipeline ->
vmfb -> runtime, or the interpreter) -> arrays, and a lower stage never imports a higher one. This reads every
module's imports (relative ones resolved, those inside functions too) and fails on an import that goes up."""
from __future__ import annotations

import ast
import pathlib

import hlojit

# stage -> rank; a module may import its own stage and lower ranks. Everything else under hlojit/ (nn, optim,
# random, distributed, the command, testing helpers ...) builds on the stages: rank TOP.
RANK = {"errors": 0, "dialects": 1, "interpreter": 2, "pipeline": 3, "backends": 4, "frontend": 5}
TOP = 6
ROOT = pathlib.Path(hlojit.__file__).parent


def _stage(parts: list[str]) -> str:
    return parts[0] if parts else "__init__"


def _imports(path: pathlib.Path):
    """(line, imported hlojit module as a dotted path) for each import in `path`."""
    package = ["hlojit", *path.relative_to(ROOT).parent.parts]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join(base + ([node.module] if node.module else []))
            if node.module:
                yield node.lineno, module
            else:                                   # from . import x: x is a module of that package
                for alias in node.names:
                    yield node.lineno, f"{module}.{alias.name}"


def test_no_stage_imports_a_higher_one():
    upward = []
    for path in sorted(ROOT.rglob("*.py")):
        mine = _stage(list(path.relative_to(ROOT).with_suffix("").parts))
        for line, module in _imports(path):
            parts = module.split(".")
            if parts[0] != "hlojit" or len(parts) < 2:
                continue
            theirs = parts[1]
            if RANK.get(theirs, TOP) > RANK.get(mine, TOP):
                upward.append(f"{path.relative_to(ROOT.parent)}:{line} ({mine}) imports {module} ({theirs})")
    assert not upward, "imports against the data's flow:\n" + "\n".join(upward)


def test_the_scan_resolves_relative_imports():
    """The scan itself: relative imports resolve to dotted modules (pipeline/constant_folding.py imported the
    backends for the reference's op tables before they moved to hlojit/interpreter/, which this test catches)."""
    lines = list(_imports(ROOT / "backends" / "reference.py"))
    assert any(module == "hlojit.interpreter" for _, module in lines)
    assert any(module == "hlojit.backends.array" for _, module in lines)
    assert RANK["backends"] > RANK["pipeline"] > RANK["interpreter"]
