"""Graphs an edit made stale are left by the indexer to their first reader, which stores
them once under the index's writer lock; racing readers and a reader killed mid-store
leave an index the next command uses.

Real git repositories, real ``librarian`` processes. A trigger added to the index
counts every row written to ``graph_cache``, so "stored once" is counted, not assumed.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from codelibrarian.index import graphdelta
from codelibrarian.index.indexer import index_workspace
from codelibrarian.index.lock import GRAPHS_COMMAND, WriterLock, read_owner
from codelibrarian.index.sqlite_graphs import SqliteGraphRows
from codelibrarian.index.store import index_path, open_store
from tests.helpers import GIT_ENV, make_repo, run_cli, write_files

N_FILES = 120
TASK = "compute the totals of each service step"
COMPOSE = ("compose", TASK, "--as-of", "1800000000", "--no-cache", "--format", "plain")


def _module(i: int, version: int = 0) -> str:
    helper = (i + 1 + version) % N_FILES
    funcs = "".join(
        f"def step_{i}_{j}_v{version}(value: int) -> int:\n"
        f"    return helper_{helper}(value) * {j} + service_total_{(i + j) % N_FILES}()\n\n\n"
        for j in range(12)
    )
    return (
        f'"""Service {i} computes totals."""\n'
        f"from pkg.mod_{helper:03d} import helper_{helper}\n\n\n"
        f"def helper_{i}(x: int) -> int:\n    return x + {i}\n\n\n"
        f"def service_total_{i}() -> int:\n    return helper_{i}(1)\n\n\n{funcs}"
    )


def _repo(tmp_path: Path) -> Path:
    repo = make_repo(tmp_path / "repo", {f"pkg/mod_{i:03d}.py": _module(i) for i in range(N_FILES)})
    write_files(repo, {"pkg/__init__.py": ""})
    index_workspace(repo, cache=None)
    return repo


def _edit(repo: Path, count: int, version: int) -> None:
    """Rewrite ``count`` files (new names defined and referenced) and re-index."""
    write_files(
        repo, {f"pkg/mod_{i:03d}.py": _module(i, version) for i in range(0, N_FILES, 3)[:count]}
    )
    stats = index_workspace(repo, cache=None)
    assert stats.parsed == count


def _conn(repo: Path) -> sqlite3.Connection:
    return sqlite3.connect(index_path(repo), isolation_level=None)


def _full_build(repo: Path, conn: sqlite3.Connection) -> graphdelta.Derived:
    """The graphs a full build derives from the index on ``conn``."""
    return graphdelta.build(SqliteGraphRows(conn, index_path(repo), readonly=True, locked=False))


def _generations(repo: Path) -> tuple[int, int]:
    """(the generation of the stored combined graph, the index's generation)."""
    conn = _conn(repo)
    try:
        stored = conn.execute("SELECT generation FROM graph_cache WHERE kind = 'combined'")
        current = conn.execute("SELECT value FROM meta WHERE key = 'generation'")
        return int(stored.fetchone()[0]), int(current.fetchone()[0])
    finally:
        conn.close()


def _count_graph_writes(repo: Path) -> None:
    conn = _conn(repo)
    try:
        conn.execute("CREATE TABLE test_graph_writes(kind TEXT)")
        conn.execute(
            "CREATE TRIGGER test_graph_written AFTER INSERT ON graph_cache BEGIN "
            "INSERT INTO test_graph_writes VALUES (NEW.kind); END"
        )
    finally:
        conn.close()


def _graph_writes(repo: Path) -> list[str]:
    conn = _conn(repo)
    try:
        return sorted(r[0] for r in conn.execute("SELECT kind FROM test_graph_writes"))
    finally:
        conn.close()


def _assert_stored_equals_a_full_build(repo: Path) -> None:
    stored, current = _generations(repo)
    assert stored == current
    with open_store(repo) as store:
        cached = store.derived_graphs()
    conn = _conn(repo)
    try:
        full = _full_build(repo, conn)
    finally:
        conn.close()
    assert (cached.combined, cached.ref, cached.basis) == (full.combined, full.ref, full.basis)


def _compose_env() -> dict[str, str]:
    return {
        **os.environ,
        **GIT_ENV,
        "GIT_CONFIG_GLOBAL": os.devnull,
        "LIBRARIAN_NO_RESIDENT": "1",
        "NO_COLOR": "1",
    }


def _start_compose(repo: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "codelibrarian", *COMPOSE, "-C", str(repo)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_compose_env(),
        start_new_session=True,
    )


def _reference_pack(repo: Path) -> str:
    """The pack composed from graphs built from scratch (the stored ones dropped)."""
    conn = _conn(repo)
    try:
        conn.execute("DELETE FROM graph_cache")
    finally:
        conn.close()
    res = run_cli(*COMPOSE, "-C", str(repo))
    assert res.returncode == 0, res.stderr
    return res.stdout


def test_an_edit_leaves_the_graphs_to_the_first_reader_which_stores_them_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = _repo(tmp_path)
    stored, current = _generations(repo)
    assert stored == current  # a first build is done by the indexer
    _count_graph_writes(repo)
    _edit(repo, 6, 1)
    stored, current = _generations(repo)
    assert stored < current  # the delta is left to the first reader
    assert _graph_writes(repo) == []
    res = run_cli("index", str(repo), "--json")
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["edges"]["ref"] is None  # counted without deriving them

    res = run_cli(*COMPOSE, "-C", str(repo))
    assert res.returncode == 0, res.stderr
    assert _graph_writes(repo) == ["combined", "graph.basis", "ref.packed"]
    owner = read_owner(index_path(repo))
    assert owner is not None and owner.command == GRAPHS_COMMAND
    assert owner.state == "released"
    _assert_stored_equals_a_full_build(repo)

    # a second compose reads them: nothing is stored again
    again = run_cli(*COMPOSE, "-C", str(repo))
    assert again.returncode == 0, again.stderr
    assert again.stdout == res.stdout
    assert _graph_writes(repo) == ["combined", "graph.basis", "ref.packed"]

    # nor derived again: here that would fail
    def no_derive(*_args: object) -> None:
        raise AssertionError("graphs derived again")

    with monkeypatch.context() as patch:
        patch.setattr(graphdelta, "update", no_derive)
        patch.setattr(graphdelta, "build", no_derive)
        with open_store(repo) as store:
            assert store.combined_graph().order
            assert store.edge_counts()["ref"]
    assert res.stdout == _reference_pack(repo)


def test_a_reader_that_meets_an_index_run_answers_from_memory_and_stores_nothing(
    tmp_path: Path,
) -> None:
    repo = _repo(tmp_path)
    _edit(repo, 6, 1)
    conn = _conn(repo)
    try:
        full = _full_build(repo, conn)
        conn.execute("DELETE FROM graph_cache")  # nothing stored to start from either
    finally:
        conn.close()
    with WriterLock(index_path(repo), command="index", timeout=0), open_store(repo) as store:
        assert store.combined_graph() == full.combined
        assert store.derived_graphs() == full
    conn = _conn(repo)
    try:
        assert conn.execute("SELECT COUNT(*) FROM graph_cache").fetchone()[0] == 0
    finally:
        conn.close()


def test_racing_readers_get_the_same_pack_and_store_the_graphs_once(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    _edit(repo, 30, 1)
    _count_graph_writes(repo)
    procs = [_start_compose(repo) for _ in range(3)]
    outs = [p.communicate(timeout=240) for p in procs]
    for proc, (_, err) in zip(procs, outs, strict=True):
        assert proc.returncode == 0, err
    packs = {out for out, _ in outs}
    assert len(packs) == 1
    assert _graph_writes(repo) == ["combined", "graph.basis", "ref.packed"]
    _assert_stored_equals_a_full_build(repo)
    assert packs == {_reference_pack(repo)}


def _kill_while_storing(repo: Path) -> bool:
    """Start a compose and SIGKILL it while it holds the lock to store the graphs;
    False when it finished before it could be caught."""
    db = index_path(repo)
    proc = _start_compose(repo)
    caught = False
    try:
        deadline = time.monotonic() + 240
        while proc.poll() is None and time.monotonic() < deadline:
            owner = read_owner(db)
            if (
                owner is not None
                and owner.pid == proc.pid
                and owner.command == GRAPHS_COMMAND
                and owner.state == "held"
            ):
                caught = True
                break
            time.sleep(0.001)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=30)
    return caught and proc.returncode == -signal.SIGKILL


@pytest.mark.slow
def test_a_reader_killed_while_storing_the_graphs_leaves_a_usable_index(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    for version in range(1, 6):  # the store is short: try again until it is caught in it
        _edit(repo, 30, version)
        if _kill_while_storing(repo):
            break
    else:
        raise AssertionError("the reader was never caught holding the lock to store")
    db = index_path(repo)
    owner = read_owner(db)
    assert owner is not None and owner.state == "held" and not owner.alive()

    # the next command uses the index: same pack as from graphs built from scratch
    res = run_cli(*COMPOSE, "-C", str(repo))
    assert res.returncode == 0, res.stderr
    _assert_stored_equals_a_full_build(repo)
    # storing the graphs over the killed record kept it, so the next index run checks
    owner = read_owner(db)
    assert owner is not None and owner.state == "held" and owner.command == GRAPHS_COMMAND
    check = run_cli("index", str(repo), "--json")
    assert check.returncode == 0, check.stderr
    assert json.loads(check.stdout)["rebuilt"] is False
    owner = read_owner(db)
    assert owner is not None and owner.state == "released"
    assert res.stdout == _reference_pack(repo)


def test_a_read_only_reader_has_them_stored_and_one_that_cannot_write_does_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = _repo(tmp_path)
    _edit(repo, 6, 1)
    _count_graph_writes(repo)
    res = run_cli("map", "--budget", "300", "-C", str(repo))  # reads a read-only store
    assert res.returncode == 0, res.stderr
    assert _graph_writes(repo) == ["combined", "graph.basis", "ref.packed"]
    _assert_stored_equals_a_full_build(repo)

    _edit(repo, 6, 2)
    stale = _generations(repo)
    with monkeypatch.context() as patch:
        patch.setattr(os, "access", lambda *_args, **_kw: False)  # a file it cannot write
        with open_store(repo, readonly=True) as store:
            edges = store.edges("ref")
    assert _generations(repo) == stale
    conn = _conn(repo)
    try:
        assert edges == graphdelta.unpack(_full_build(repo, conn).ref)
    finally:
        conn.close()
