"""The name parts stored with the index (``symbol_parts``, schema 4).

Ranking asks the index "which files define names with these parts" instead of
splitting every symbol name in every process. The stored rows must say exactly
what splitting the names again says: after a full index, after incremental
edits, after a migration of an older index and after a writer killed mid-run;
and a fresh ``librarian compose`` must read them, never rebuild them.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codelibrarian.index.indexer import index_workspace
from codelibrarian.index.store import SqliteStore, index_path, open_store
from tests.helpers import make_repo, sigkill_index_midway, write_files

#: words that recur across the sample names, so parts are shared between files
_WORDS = ("json", "decoder", "parse", "http", "Response", "line", "column", "trailing")


def _module(i: int, words: tuple[str, ...] = _WORDS) -> str:
    a, b = words[i % len(words)], words[(i * 3 + 1) % len(words)]
    return (
        f"class {a.capitalize()}{b.capitalize()}{i}:\n"
        f"    def {a.lower()}_{b.lower()}(self) -> int:\n        return {i}\n\n\n"
        f"def {b.lower()}{a.capitalize()}(x: int) -> int:\n    return x\n\n\n"
        f"def {a.lower()}_{b.lower()}(y: int) -> int:\n    return y\n"
    )


def _all_parts(store: SqliteStore) -> list[str]:
    conn = store._conn
    return [r[0] for r in conn.execute("SELECT DISTINCT part FROM symbol_parts ORDER BY part")]


def _assert_stored_matches_rebuilt(store: SqliteStore) -> None:
    """Every part's stored counts equal those of splitting every symbol name again."""
    parts = _all_parts(store)
    probes = [*([p] for p in parts), parts, ["json", "decoder", "nothing_here"], []]
    for probe in probes:
        assert store.name_part_counts(probe) == store._name_part_counts_scan(frozenset(probe))
    # no rows of files that are gone or hold no symbols
    orphans = store._conn.execute(
        "SELECT COUNT(*) FROM symbol_parts sp WHERE NOT EXISTS "
        "(SELECT 1 FROM symbols s WHERE s.file_id = sp.file_id)"
    ).fetchone()[0]
    assert orphans == 0


def test_stored_parts_match_a_rebuild_after_full_and_incremental_index(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", {f"pkg/m{i}.py": _module(i) for i in range(12)})
    index_workspace(repo)
    with open_store(repo) as store:
        _assert_stored_matches_rebuilt(store)
        before = store.name_part_counts(["json"])
    assert before  # the sample defines json names

    # edit one file (its names change), delete one, add one
    write_files(repo, {"pkg/m0.py": _module(0, ("zebra", "quokka"))})
    (repo / "pkg/m1.py").unlink()
    write_files(repo, {"pkg/new.py": _module(5, ("json", "walrus"))})
    stats = index_workspace(repo)
    assert stats.parsed == 2 and stats.deleted == 1
    with open_store(repo) as store:
        _assert_stored_matches_rebuilt(store)
        assert "pkg/m1.py" not in store.name_part_counts(["json", "decoder", "parse"])
        assert store.name_part_counts(["zebra", "quokka"]) == {"pkg/m0.py": 4}
        assert "pkg/new.py" in store.name_part_counts(["walrus"])


@settings(max_examples=12, deadline=None)
@given(
    edits=st.lists(
        st.tuples(
            st.integers(0, 5),
            st.sampled_from(["edit", "delete"]),
            st.lists(st.sampled_from(_WORDS), min_size=2, max_size=2),
        ),
        min_size=1,
        max_size=4,
    )
)
def test_any_sequence_of_edits_keeps_stored_parts_equal_to_a_rebuild(
    edits: list[tuple[int, str, list[str]]],
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        repo = make_repo(Path(tmp) / "r", {f"m{i}.py": _module(i) for i in range(6)})
        index_workspace(repo)
        for i, what, words in edits:
            path = repo / f"m{i}.py"
            if what == "delete":
                path.unlink(missing_ok=True)
            else:
                path.write_text(_module(i, tuple(words)), encoding="utf-8")
            index_workspace(repo)
            with open_store(repo) as store:
                _assert_stored_matches_rebuilt(store)


def test_an_index_from_before_the_table_is_migrated_and_backfilled(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", {f"m{i}.py": _module(i) for i in range(8)})
    index_workspace(repo)
    db = index_path(repo)
    with open_store(repo) as store:
        want = {p: store.name_part_counts([p]) for p in _all_parts(store)}
    # what a schema-3 index looks like: no table, no migration 4
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("DROP TABLE symbol_parts")
    conn.execute("DELETE FROM migrations WHERE version >= 4")
    conn.close()
    with open_store(repo, readonly=True) as old:
        # read-only, not migrated: answers by splitting the names, same counts
        assert not old._has_symbol_parts()
        assert {p: old.name_part_counts([p]) for p in want} == want
    with open_store(repo) as store:  # a writer's open migrates and backfills
        assert store._has_symbol_parts()
        assert {p: store.name_part_counts([p]) for p in want} == want
        _assert_stored_matches_rebuilt(store)


_NO_REBUILD = """
import sys
from codelibrarian.index import store as st

def refuse(*a, **k):
    raise AssertionError("the name parts were rebuilt in a fresh process")

real_symbols = st.SqliteStore.symbols
def symbols(self, path=None, name=None):
    if path is None and name is None:
        refuse()  # the whole-table read the in-memory tables were built from
    return real_symbols(self, path, name)

st.SqliteStore._name_part_counts_scan = refuse
st.SqliteStore.symbols = symbols
sys.argv = ["librarian", "compose", "parse the json decoder response line", "--budget", "3000",
            "--no-cache", "--json"]
from codelibrarian.cli.app import main
main()
"""


def test_a_fresh_compose_reads_the_stored_parts_and_rebuilds_nothing(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", {f"pkg/m{i}.py": _module(i) for i in range(12)})
    index_workspace(repo)
    env = {**os.environ, "LIBRARIAN_NO_RESIDENT": "1"}
    done = subprocess.run(
        [sys.executable, "-c", _NO_REBUILD],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert '"schema": "codelibrarian.compose/1"' in done.stdout


@pytest.mark.slow
def test_a_writer_killed_mid_run_leaves_parts_in_step_with_symbols(tmp_path: Path) -> None:
    n = 240
    repo = tmp_path / "repo"
    body = "".join(
        f"def step_{j}_json_value(v: int) -> int:\n    return v + {j}\n\n\n" for j in range(40)
    )
    write_files(repo, {f"pkg/m{i:03d}.py": _module(i) + "\n\n" + body for i in range(n)})
    committed = sigkill_index_midway(repo, 10)
    assert committed > 0, "the run was killed before it committed anything"
    with open_store(repo) as store:
        _assert_stored_matches_rebuilt(store)
    index_workspace(repo)
    with open_store(repo) as store:
        _assert_stored_matches_rebuilt(store)
        assert len(store.name_part_counts(["json"])) == n
