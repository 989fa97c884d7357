"""A damaged index is found, rebuilt from the workspace and said once; doctor tells (#17)."""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from codelibrarian.index.lock import LockOwner, lock_path, read_owner

from .conftest import N_MODULES, assert_sound, fresh_copy, librarian

pytestmark = pytest.mark.reliability

PAGE = 4096


def _indexed(corpus: Path, tmp_path: Path) -> Path:
    repo = fresh_copy(corpus, tmp_path)
    result = librarian(repo, "index", "--json", timeout=60)
    assert result.returncode == 0, result.stderr
    return repo


def _db(repo: Path) -> Path:
    return repo / ".librarian" / "index.db"


def _smash_table(db: Path, table: str, seed: str) -> None:
    """Overwrite the middle of ``table``'s root page with random bytes."""
    conn = sqlite3.connect(db)
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        root = conn.execute(
            "SELECT rootpage FROM sqlite_master WHERE name = ?", (table,)
        ).fetchone()[0]
    finally:
        conn.close()
    rng = random.Random(seed)
    with open(db, "r+b") as fh:
        fh.seek((root - 1) * PAGE + 8)
        fh.write(bytes(rng.randrange(256) for _ in range(PAGE - 16)))


def _index_json(repo: Path) -> dict[str, object]:
    result = librarian(repo, "index", "--json", timeout=60)
    assert result.returncode == 0, result.stderr
    doc: dict[str, object] = json.loads(result.stdout)
    return doc


def _notes(doc: dict[str, object]) -> list[str]:
    notes = doc["notes"]
    assert isinstance(notes, list)
    return [str(n) for n in notes]


@pytest.mark.parametrize("table", ["files", "symbols", "refs"])
def test_damaged_pages_are_rebuilt_and_said_once(corpus: Path, tmp_path: Path, table: str) -> None:
    repo = _indexed(corpus, tmp_path)
    _smash_table(_db(repo), table, table)
    first = _index_json(repo)
    assert first["rebuilt"] is True
    assert any("damaged" in n and "rebuilt" in n for n in _notes(first))
    assert first["files"] == N_MODULES + 2
    assert_sound(repo)
    second = _index_json(repo)  # said once: the next run has nothing to say
    assert second["rebuilt"] is False
    assert not any("damaged" in n for n in _notes(second))


def test_a_file_that_is_not_a_database_is_rebuilt(corpus: Path, tmp_path: Path) -> None:
    repo = _indexed(corpus, tmp_path)
    db = _db(repo)
    for suffix in ("-wal", "-shm"):
        Path(str(db) + suffix).unlink(missing_ok=True)
    db.write_bytes(os.urandom(64 * 1024))
    doc = _index_json(repo)
    assert doc["rebuilt"] is True
    assert_sound(repo)


def test_random_bytes_in_the_middle_never_break_the_next_commands(
    corpus: Path, tmp_path: Path
) -> None:
    """Wherever they land (even in page content SQLite cannot check), the next
    index and compose succeed and leave a sound index."""
    repo = _indexed(corpus, tmp_path)
    db = _db(repo)
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    rng = random.Random("middle")
    size = db.stat().st_size
    with open(db, "r+b") as fh:
        fh.seek(size // 2)
        fh.write(bytes(rng.randrange(256) for _ in range(2 * PAGE)))
    assert librarian(repo, "index", "--json", timeout=60).returncode == 0
    result = librarian(repo, "compose", "scale the value in stage 7", timeout=60)
    assert result.returncode == 0, result.stderr
    assert_sound(repo)


def test_doctor_reports_a_damaged_index_and_never_says_all_passed(
    corpus: Path, tmp_path: Path
) -> None:
    repo = _indexed(corpus, tmp_path)
    healthy = librarian(repo, "doctor", "--json", timeout=60)
    assert json.loads(healthy.stdout)["index"]["integrity"] == "ok"
    _smash_table(_db(repo), "symbols", "doctor")
    text = librarian(repo, "doctor", timeout=60)
    assert text.returncode == 5, text.stdout + text.stderr
    assert "All checks passed" not in text.stdout
    assert "DAMAGED" in text.stdout and "damaged" in text.stderr
    doc = json.loads(librarian(repo, "doctor", "--json", timeout=60).stdout)
    assert doc["ok"] is False
    assert any(p["check"] == "index" and p["level"] == "error" for p in doc["problems"])
    # the fix it names works
    assert _index_json(repo)["rebuilt"] is True
    assert librarian(repo, "doctor", timeout=60).returncode == 0


def test_a_killed_writer_is_noticed_and_its_index_checked(corpus: Path, tmp_path: Path) -> None:
    """The lock record of a writer that died says "held": the next run checks the
    database (quick_check) before trusting it, and rebuilds it if damaged."""
    repo = _indexed(corpus, tmp_path)
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    record = LockOwner(int(dead.stdout), os.uname().nodename, "index", int(time.time()), "held")
    lock_path(_db(repo)).write_bytes(record.to_json())
    _smash_table(_db(repo), "chunks", "unclean")
    doc = _index_json(repo)
    assert doc["rebuilt"] is True
    assert_sound(repo)


def test_sigterm_during_a_transaction_releases_the_lock_cleanly(
    corpus: Path, tmp_path: Path
) -> None:
    repo = fresh_copy(corpus, tmp_path)
    env = {**os.environ, "LIBRARIAN_TRACE": "stages", "LIBRARIAN_NO_RESIDENT": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "codelibrarian", "index"],
        cwd=repo,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None
    try:
        for line in proc.stderr:
            if line.strip() == "stage parse":
                break
        # at once: the workers start parsing before this line (while the listing is
        # written), so what is left after it (the batches' writes, the graphs) takes
        # a few tenths of a second, and a pause here could let the run finish first
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 128 + signal.SIGTERM
    finally:
        proc.kill()
        proc.wait()
        proc.stderr.close()
    owner = read_owner(_db(repo))  # what the stopped writer left in its lock file
    assert owner is not None and owner.state == "released"
    assert_sound(repo, complete=False)
