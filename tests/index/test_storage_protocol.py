"""The SQLite backend satisfies the storage protocol structurally, as mypy sees it.

``store.py`` ends with a function mypy checks on every run of the project's type
check (``SqliteStore`` returned as an ``IndexStore``). This test runs mypy strict on a
file that asks the same of it, and on a case that must fail (records alone are not
a ``Storage``): the check is structural and it bites.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"

SNIPPET = """\
from codelibrarian.index.storage import IndexStore, RecordReader, Storage
from codelibrarian.index.store import SqliteStore


def conforms(store: SqliteStore) -> IndexStore:
    return store


def reads_too(store: SqliteStore) -> Storage:
    return store


def lacks_the_engines(records: RecordReader) -> Storage:
    return records  # the one error expected
"""


@pytest.mark.slow
def test_mypy_accepts_the_sqlite_store_as_the_protocol(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mypy import api

    snippet = tmp_path / "conforms.py"
    snippet.write_text(SNIPPET, encoding="utf-8")
    monkeypatch.setenv("MYPYPATH", str(SRC))
    monkeypatch.chdir(tmp_path)  # no project config: only the flags below
    out, err, status = api.run(
        [
            "--strict",
            "--follow-imports=silent",
            "--cache-dir",
            os.fspath(tmp_path / "cache"),
            "--config-file",
            "",
            os.fspath(snippet),
        ]
    )
    errors = [line for line in out.splitlines() if ": error:" in line]
    assert status == 1, (out, err)
    assert len(errors) == 1, out
    assert errors[0].startswith("conforms.py:14: error: Incompatible return value type")
