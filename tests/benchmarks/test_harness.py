"""The shared benchmark harness (``benchmarks/harness/``): its helpers on real inputs,
and the packs comparison every ranking change is checked with, end to end."""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

import pytest

from codelibrarian.api import Librarian
from tests.helpers import commit_all, make_repo, write_files

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))

from harness.corpus import tasks_for  # noqa: E402
from harness.history import definition_name, read_definitions  # noqa: E402
from harness.stats import markdown_table, p95, percentile  # noqa: E402


def _py(bodies: dict[str, str]) -> str:
    return "".join(
        f"def {name}(value):\n    total = value\n    {body}\n    return total\n\n\n"
        for name, body in bodies.items()
    )


def test_definition_names_are_read_off_function_context_lines() -> None:
    assert definition_name("def render_row(self, row):") == "render_row"
    assert definition_name("class Formatter(Base):") == "Formatter"
    assert definition_name("func (l *Logger) WithField(key string) *Entry {") == "WithField"
    assert definition_name("pub fn search_path(&self) -> io::Result<()> {") == "search_path"
    assert definition_name("app.handle = function handle(req, res, callback) {") == "handle"
    assert definition_name("  async fetchAll(url) {") == "fetchAll"
    assert definition_name("if (x) {") is None
    assert definition_name("") is None


def test_history_names_the_definitions_each_commit_edited(tmp_path: Path) -> None:
    bodies = {f"step_{i}": f"total += {i}" for i in range(6)}
    repo = make_repo(tmp_path / "r", {"pkg/mod.py": _py(bodies), "README.md": "hello\n"})
    bodies["step_4"] = "total *= 4"
    write_files(repo, {"pkg/mod.py": _py(bodies), "README.md": "hello again\n"})
    commit_all(repo, "Multiply in the fourth step", date="2026-01-03T00:00:00+00:00")
    bodies["step_1"] = "total -= 1"
    bodies["step_5"] = "total -= 5"
    write_files(repo, {"pkg/mod.py": _py(bodies)})
    commit_all(repo, "Subtract in two steps", date="2026-01-04T00:00:00+00:00")

    history = read_definitions(repo, limit=10)
    assert [c.message for c in history] == [
        "Subtract in two steps",
        "Multiply in the fourth step",
        "initial",
    ]
    assert [c.order for c in history] == [0, 1, 2]
    # a hunk is named by the definition it is in; prose files are not read
    assert history[0].edits == (("pkg/mod.py", ("step_1", "step_5")),)
    assert history[1].edits == (("pkg/mod.py", ("step_4",)),)
    assert [c.sha for c in read_definitions(repo, rev="HEAD~1", limit=1)] == [history[1].sha]
    assert read_definitions(repo, limit=0) == []


def test_percentiles_take_the_nearest_rank() -> None:
    values = [float(v) for v in range(20, 0, -1)]
    assert p95(values) == 19.0  # the 19th of 20, as every recorded p95 was taken
    assert percentile(values, 0.5) == 11.0
    assert percentile([3.0], 0.95) == 3.0
    with pytest.raises(ValueError):
        percentile([], 0.5)


def test_a_markdown_table_aligns_the_columns_asked_for() -> None:
    table = markdown_table(("goal", "figure"), [("p95", "388 ms")], right=(1,))
    assert table.splitlines() == ["| goal | figure |", "|---|---:|", "| p95 | 388 ms |"]


def test_task_sentences_come_from_folder_names_and_the_seed() -> None:
    files = ["alpha/a.py", "beta/b.py", "gamma/deep/c.py", "top.py"]
    tasks = tasks_for(files, 6, 20)
    assert tasks == tasks_for(files, 6, 20)
    assert tasks != tasks_for(files, 6, 21)
    shape = re.compile(
        r"(?:fix|speed up|add logging to|handle errors in|document) the (\w+) code path for (\w+)"
    )
    for task in tasks:
        found = shape.fullmatch(task)
        assert found is not None, task
        assert {found[1], found[2]} <= {"alpha", "beta", "deep"}


@pytest.mark.slow
def test_the_packs_comparison_finds_equal_packs_equal_and_a_changed_repo_changed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import check_same_packs

    files = {
        "billing/invoice.py": "def total(lines):\n    return sum(l.amount for l in lines)\n"
        + "\n".join(f"# note {i}" for i in range(14))
        + "\n",
        "billing/tax.py": "RATE = 20\n\n\ndef tax(amount):\n    return amount * RATE // 100\n"
        + "\n".join(f"# rule {i}" for i in range(14))
        + "\n",
        "shipping/label.py": "def label(order):\n    return f'{order.id}: {order.address}'\n",
    }
    repo = make_repo(tmp_path / "repo", files)
    other = tmp_path / "other"
    shutil.copytree(repo, other)
    write_files(other, {"billing/tax.py": "RATE = 25\n\n\ndef tax(amount):\n    return 0\n"})
    commit_all(other, "Another rate")
    for root in (repo, other):
        with Librarian(root) as lib:
            lib.index()
    src = str(BENCHMARKS.parent / "src")
    args = ["--repo", str(repo), "--baseline-src", src, "--tasks", "2", "--diffs", "1"]
    args += ["--budgets", "2000"]

    assert check_same_packs.main(args) == 0
    assert "packs (1 diff mode): 0 differ" in capsys.readouterr().out
    assert check_same_packs.main([*args, "--baseline-repo", str(other)]) == 1
    assert "differs:" in capsys.readouterr().out
