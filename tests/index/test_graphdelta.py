"""The cached file graphs, brought up to date after edits, equal a full rebuild.

After an edit the combined and ref graphs are re-derived only around the edited files
(``index/graphdelta.py``). These tests index real git repositories, edit them at random
and compare what the cache holds with what a full build of the same index gives.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from codelibrarian.index import graph, graphdelta
from codelibrarian.index.indexer import index_workspace
from codelibrarian.index.sqlite_graphs import SqliteGraphRows
from codelibrarian.index.storage import GraphRecords
from codelibrarian.index.store import open_store
from tests.helpers import git, make_repo, write_files

#: a small vocabulary so that files share names: definers, referrers, crowded names
NAMES = ("load", "save", "parse_header", "render", "Client", "retry_after", "_cache")
FILES = tuple(f"pkg/m{i}.py" for i in range(12))


def _module(defs: frozenset[str], calls: frozenset[str], imports: frozenset[int]) -> str:
    lines = [f"from pkg import m{i}" for i in sorted(imports)]
    for name in sorted(defs):
        if name[0].isupper():
            lines.append(f"class {name}:\n    pass")
        else:
            lines.append(f"def {name}(x):\n    return x")
    body = "\n".join(f"    {c}(1)" for c in sorted(calls)) or "    pass"
    lines.append(f"def main_{len(defs)}_{len(calls)}():\n{body}")
    return "\n\n".join(lines) + "\n"


modules = st.builds(
    _module,
    st.frozensets(st.sampled_from(NAMES), max_size=3),
    st.frozensets(st.sampled_from(NAMES), max_size=4),
    st.frozensets(st.integers(0, len(FILES) - 1), max_size=2),
)
edits = st.lists(st.tuples(st.sampled_from(FILES), modules), min_size=1, max_size=2)
#: a step: files rewritten, then committed or not (a commit brings co-change rows)
steps_ = st.tuples(edits, st.booleans())


def _cached_equals_full(repo: Path) -> None:
    with open_store(repo) as store:
        cached = store.derived_graphs()
        conn = sqlite3.connect(store.path)
        try:
            full = graphdelta.build(SqliteGraphRows(conn, store.path, readonly=True, locked=False))
        finally:
            conn.close()
        assert cached.combined == full.combined
        assert cached.ref == full.ref
        assert cached.basis == full.basis
        assert store.combined_graph() == full.combined


@settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    start=st.lists(modules, min_size=len(FILES), max_size=len(FILES)),
    steps=st.lists(steps_, min_size=1, max_size=4),
    crowded=st.integers(1, 4),
)
def test_graphs_after_edits_equal_a_full_build(
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    start: list[str],
    steps: list[tuple[list[tuple[str, str]], bool]],
    crowded: int,
) -> None:
    # a low limit, so that names cross "defined by too many files" both ways
    monkeypatch.setattr(graph, "MAX_DEFINERS", crowded)
    repo = make_repo(tmp_path_factory.mktemp("g"), dict(zip(FILES, start, strict=True)))
    index_workspace(repo)
    for n, (step, commit) in enumerate(steps):
        write_files(repo, dict(step))
        if commit:  # (the edit may have rewritten a file with what it held)
            git(repo, "add", "-A")
            git(repo, "commit", "-q", "--allow-empty", "-m", f"step {n}")
        index_workspace(repo)
        _cached_equals_full(repo)


def _count_builds(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """A list that grows by one at every full build from now on."""
    builds: list[int] = []
    real_build = graphdelta.build

    def counted(rows: GraphRecords) -> graphdelta.Derived:
        builds.append(1)
        return real_build(rows)

    monkeypatch.setattr(graphdelta, "build", counted)
    return builds


def test_an_edit_is_applied_without_a_full_build(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = {
        path: _module(frozenset({NAMES[i % len(NAMES)]}), frozenset(NAMES[:3]), frozenset())
        for i, path in enumerate(FILES)
    }
    repo = make_repo(tmp_path / "r", files)
    index_workspace(repo)
    builds = _count_builds(monkeypatch)
    write_files(repo, {FILES[3]: files[FILES[3]] + "\n\ndef retry_after_ms(x):\n    return x\n"})
    index_workspace(repo)
    assert builds == []  # the indexer brought the cache up to date incrementally
    monkeypatch.undo()
    _cached_equals_full(repo)


def test_files_that_come_or_go_rebuild_the_graphs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_repo(tmp_path / "r", {"a.py": "def load(x):\n    return x\n", "b.py": "load(1)\n"})
    index_workspace(repo)
    builds = _count_builds(monkeypatch)
    write_files(repo, {"c.py": "load(2)\n"})
    index_workspace(repo)
    assert builds == [1]  # a new file may satisfy other files' imports: rebuilt
    with open_store(repo) as store:
        assert ("c.py", "a.py") in {(a, b) for a, b, _ in store.edges("ref")}


def test_an_unreadable_basis_falls_back_to_a_full_build(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", {"a.py": "def load(x):\n    return x\n", "b.py": "load(1)\n"})
    index_workspace(repo)
    with open_store(repo) as store, store.transaction(bump=False) as conn:
        conn.execute("UPDATE graph_cache SET data = x'00ff' WHERE kind = 'graph.basis'")
    write_files(repo, {"b.py": "load(1)\nload(2)\n"})
    index_workspace(repo)
    _cached_equals_full(repo)


@pytest.mark.parametrize("grow", [True, False])
def test_a_name_crossing_the_definers_limit_moves_its_referrers_edges(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, grow: bool
) -> None:
    """``load`` goes from two defining files to three (over the limit: no edges) or back."""
    monkeypatch.setattr(graph, "MAX_DEFINERS", 2)
    define = "def load(x):\n    return x\n"
    files = {"a.py": define, "b.py": define, "c.py": "load(1)\n", "d.py": "x = 1\n"}
    if not grow:
        files["d.py"] = define
    repo = make_repo(tmp_path / "r", files)
    index_workspace(repo)
    write_files(repo, {"d.py": define if grow else "x = 1\n"})
    index_workspace(repo)
    _cached_equals_full(repo)
    with open_store(repo) as store:
        targets = {b for a, b, _ in store.edges("ref") if a == "c.py"}
    assert targets == (set() if grow else {"a.py", "b.py"})
