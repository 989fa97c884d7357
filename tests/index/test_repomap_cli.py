"""The repository map under a hard budget, the CLI commands, and --watch's helpers."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

from codelibrarian.index.indexer import UpdateResult, index_workspace
from codelibrarian.index.repomap import ranked_entries, render_map
from codelibrarian.index.store import open_store
from codelibrarian.index.watch import append_events, file_id, relevant_paths, watch_workspace
from codelibrarian.tokens import get_tokenizer
from codelibrarian.workspace.state import State
from tests.helpers import make_repo, run_cli

from .samples import PYTHON, TYPESCRIPT


def test_map_never_exceeds_the_budget(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", {**PYTHON, **TYPESCRIPT})
    index_workspace(repo)
    tok = get_tokenizer("gpt-4o")
    with open_store(repo, readonly=True) as store:
        full = render_map(store, tok, 100_000)
        entries = ranked_entries(store)
        previous = ""
        for budget in (1, 5, 12, 30, 64, 100, 250, 1000):
            text = render_map(store, tok, budget)
            assert tok.count(text) <= budget
            assert len(text) >= len(previous) or not previous
            previous = text
        assert render_map(store, tok, 0) == ""
    # the full map lists every file, with signatures nested under their class
    assert full.count(":\n") >= len({e.path for e in entries})
    assert "\n  class ShoppingCart:\n    def __init__(self) -> None:\n" in full
    assert "\n    def add_item(self, name: str) -> None:\n" in full
    assert entries[0].symbol is None  # a file header comes first


def test_cli_index_json_and_quiet_when_piped(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", {**PYTHON, "bin.dat": b"\x00\x01binary"})
    res = run_cli("index", str(repo), "--json")
    assert res.returncode == 0, res.stderr
    data = json.loads(res.stdout)
    assert data["ok"] is True
    assert data["files_by_language"]["python"] == 3
    assert data["skipped"] == {"binary": 1}
    assert data["edges"]["import"] == 1 and data["edges"]["ref"] >= 1
    assert set(data) >= {"symbols", "chunks", "parse_errors", "seconds", "imports"}
    assert res.stderr == ""  # no progress bar when not on a TTY
    res = run_cli("index", str(repo))
    assert res.returncode == 0
    assert res.stdout.startswith("indexed 4 files (0 parsed")
    m = run_cli("map", "--budget", "40", "--json", "-C", str(repo))
    payload = json.loads(m.stdout)
    assert payload["tokens"] <= 40 and payload["files"][0] == "src/shop/models.py"


def test_cli_map_without_an_index_explains(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", PYTHON)
    res = run_cli("map", "-C", str(repo))
    assert res.returncode == 10
    assert "librarian index" in res.stderr


def test_save_events_carry_ids_not_paths(tmp_path: Path) -> None:
    events = tmp_path / "events.jsonl"
    secret = b"s" * 32
    n = append_events(
        events, secret, UpdateResult(("src/secret_plan.py",), ("old.py",)), now=1_700_000_000
    )
    assert n == 2
    text = events.read_text()
    assert "secret_plan" not in text and "old.py" not in text
    rows = [json.loads(line) for line in text.splitlines()]
    assert rows[0] == {
        "ts": 1_700_000_000,
        "event": "save",
        "file": file_id(secret, "src/secret_plan.py"),
    }
    assert file_id(secret, "a.py") != file_id(b"t" * 32, "a.py")
    root = tmp_path / "repo"
    assert relevant_paths(root, [str(root / "a.py"), str(root / ".git/index"), "/elsewhere/x"]) == [
        "a.py"
    ]


def test_watch_reindexes_a_saved_file(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", PYTHON)
    index_workspace(repo)
    stop = threading.Event()
    seen: list[UpdateResult] = []

    def on_update(result: UpdateResult) -> None:
        seen.append(result)
        if result.changed:
            stop.set()

    thread = threading.Thread(
        target=watch_workspace,
        args=(repo,),
        kwargs={"debounce_ms": 100, "stop_event": stop, "on_update": on_update},
        daemon=True,
    )
    thread.start()
    # the watcher starts at some point after the thread does: save until it sees one
    deadline = time.monotonic() + 60
    n = 0
    while not stop.is_set() and time.monotonic() < deadline:
        (repo / "src/shop/models.py").write_text(
            PYTHON["src/shop/models.py"] + "\ndef saved():\n    pass\n" + "\n" * n
        )
        n += 1
        stop.wait(1.0)
    stop.set()
    thread.join(timeout=60)
    assert not thread.is_alive()
    assert any("src/shop/models.py" in r.changed for r in seen)
    with open_store(repo, readonly=True) as store:
        assert store.symbols(name="saved")
    events = State(repo).events_path.read_text().splitlines()
    assert events and "models" not in events[-1]


def test_map_covers_the_central_files_not_only_the_largest(tmp_path: Path) -> None:
    """A framework's routing module with hundreds of definitions ranked first and
    its symbols filled the whole map, which then listed that one file. Every central
    file gets its header and best definitions before any file gets its long tail."""
    router = "".join(f"def route_{i}(path):\n    return path + '{i}'\n\n" for i in range(300))
    helpers = {
        f"app/{name}.py": (
            f"from app.router import route_1, route_2\n\n\ndef {name}_handler(path):\n"
            f"    return route_1(path) + route_2(path)\n"
        )
        for name in ("users", "orders", "billing", "search", "admin")
    }
    repo = make_repo(tmp_path / "r", {"app/__init__.py": "", "app/router.py": router, **helpers})
    index_workspace(repo)
    tok = get_tokenizer("gpt-4o")
    with open_store(repo, readonly=True) as store:
        text = render_map(store, tok, 400)
    listed = [line[:-1] for line in text.splitlines() if line.endswith(":") and "/" in line]
    assert tok.count(text) <= 400
    assert "app/router.py" in listed
    assert len(listed) >= 5, listed
