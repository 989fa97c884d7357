"""An index parsed by another parser version is parsed again; ES5-style JavaScript
definitions are symbols."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from codelibrarian.index.indexer import index_workspace
from codelibrarian.index.parse import parser_version
from codelibrarian.index.store import open_store
from codelibrarian.workspace.state import State
from tests.helpers import make_repo

ES5 = {
    "lib/response.js": (
        "'use strict';\n"
        "var res = module.exports = {};\n\n"
        "/** Send a response. */\n"
        "res.send = function send(body) {\n  return this.end(body);\n};\n\n"
        "var helper = function (a) {\n  return a + 1;\n};\n\n"
        "Router.prototype.handle = (req) => {\n  return helper(req);\n};\n\n"
        "function outer() {\n  res.inner = function () {};\n}\n"
    ),
}


def _meta(repo: Path, value: str | None) -> None:
    with sqlite3.connect(State(repo).index_path) as conn:
        if value is None:
            conn.execute("DELETE FROM meta WHERE key = 'parser_version'")
        else:
            conn.execute(
                "INSERT OR REPLACE INTO meta(key, value) VALUES ('parser_version', ?)", (value,)
            )


def test_es5_definitions_are_symbols(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", ES5)
    index_workspace(repo)
    with open_store(repo, readonly=True) as store:
        found = {(s.name, s.kind, s.start_line, s.end_line) for s in store.symbols()}
    assert ("send", "function", 5, 7) in found
    assert ("helper", "function", 9, 11) in found
    assert ("handle", "function", 13, 15) in found
    assert ("outer", "function", 17, 19) in found
    # only assignments at the top of the file are definitions
    assert not any(name == "inner" for name, *_ in found)


def test_index_records_its_parser(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", ES5)
    index_workspace(repo)
    with open_store(repo, readonly=True) as store:
        assert store.meta("parser_version") == parser_version()
    again = index_workspace(repo)
    assert again.parsed == 0 and not again.rebuilt


@pytest.mark.parametrize("held", ["0.0.1.1.000000000000", None])
def test_other_parser_version_is_parsed_again(tmp_path: Path, held: str | None) -> None:
    repo = make_repo(tmp_path / "r", {**ES5, "b.py": "def b():\n    return 1\n"})
    index_workspace(repo)
    _meta(repo, held)  # what an index from an older release holds
    with sqlite3.connect(State(repo).index_path) as conn:
        conn.execute("DELETE FROM symbols WHERE name = 'send'")  # what it did not find
    stats = index_workspace(repo)
    assert stats.parsed == 2
    assert any("another version of the parser" in n for n in stats.notes)
    with open_store(repo, readonly=True) as store:
        assert store.meta("parser_version") == parser_version()
        assert "send" in {s.name for s in store.symbols()}
    assert index_workspace(repo).parsed == 0
