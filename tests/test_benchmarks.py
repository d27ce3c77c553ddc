"""benchmarks/run_all.py end to end on its smallest part (the MLP forward, one round), and its README rewrite.

Contenders that are not installed (JAX, PyTorch) are skipped by the benchmark itself with a note; the part
checks every contender's output against hlojit's before timing, so a row in the table means they agreed.
"""
import os
import re
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks"))

import run_all  # noqa: E402  (benchmarks/)

README_TEXT = "# x\n\n## Speed\n\nHow it was measured.\n\n### Older tables\n\n| a |\n"


def test_quick_run_writes_one_table_naming_the_machine_and_versions(tmp_path):
    out = tmp_path / "RESULTS.md"
    run_all.main(["--quick", "--only", "mlp_forward", "--out", str(out)])
    text = out.read_text()
    assert run_all.machine() in text and "iree-base-runtime 3." in text and "jax " in text and "torch " in text
    row = next(line for line in text.splitlines() if line.startswith("| MLP 784-512-512-10 forward, batch 256 |"))
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    assert float(cells[1]) > 0                          # hlojit ms
    for cell, who in ((cells[2], "JAX"), (cells[3], "PyTorch")):
        assert re.fullmatch(r"\d+\.\d\d", cell) or f"{who} not installed" in text, (who, row)
    assert "failed" not in text


def test_a_partial_run_replaces_the_record_of_the_whole_only_when_told(tmp_path, monkeypatch):
    """`--only` or `--quick` without `--out` wrote benchmarks/RESULTS.md, replacing a full run's tables."""
    monkeypatch.setattr(run_all, "HERE", str(tmp_path))
    monkeypatch.setattr(run_all, "run_part", lambda name, rounds, quick: [])
    run_all.main(["--only", "mlp_forward"])
    assert not (tmp_path / "RESULTS.md").exists()
    run_all.main(["--only", "mlp_forward", "--out", str(tmp_path / "part.md")])
    assert "## Models: one table" in (tmp_path / "part.md").read_text()


def test_machine_names_the_cpu_model_and_count():
    with open("/proc/cpuinfo") as f:
        model = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    assert run_all.machine().startswith(f"{model}, {os.cpu_count()} logical CPUs")


def test_readme_section_is_inserted_after_the_speed_paragraph_then_replaced():
    first = run_all.rewrite_readme(README_TEXT, "table one")
    assert first == README_TEXT.replace("How it was measured.\n\n", "How it was measured.\n\n"
                                        f"{run_all.START}\ntable one\n{run_all.END}\n\n")
    second = run_all.rewrite_readme(first, "table two\n")
    assert second == first.replace("table one", "table two")


def test_readme_rewrite_refuses_a_quick_run():
    with pytest.raises(SystemExit):
        run_all.main(["--quick", "--readme"])
