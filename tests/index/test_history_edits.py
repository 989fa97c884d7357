"""Past commits' edited files: read from git history, stored by the index."""

from __future__ import annotations

from pathlib import Path

from codelibrarian.api import Librarian
from codelibrarian.index.history_edits import message_words, read_history
from codelibrarian.index.store import open_store
from tests.helpers import commit_all, make_repo, write_files


def _py(bodies: dict[str, str]) -> str:
    return "".join(
        f"def {name}(value):\n    total = value\n    {body}\n    return total\n\n\n"
        for name, body in bodies.items()
    )


def test_message_words_split_identifiers_and_drop_commit_chatter() -> None:
    words = message_words("Fix FlaskClient highlighting (#123), update the docs")
    assert words == ["flaskclient", "flask", "client", "highlighting", "docs"]


def test_history_lists_the_code_files_each_commit_edited(tmp_path: Path) -> None:
    bodies = {f"step_{i}": f"total += {i}" for i in range(6)}
    repo = make_repo(tmp_path / "r", {"pkg/mod.py": _py(bodies), "README.md": "hello\n"})
    bodies["step_4"] = "total *= 4"
    write_files(repo, {"pkg/mod.py": _py(bodies), "README.md": "hello again\n"})
    commit_all(repo, "Multiply in the fourth step", date="2026-01-03T00:00:00+00:00")
    write_files(repo, {"pkg/util.py": _py({"helper": "total -= 1"}), "README.md": "bye\n"})
    commit_all(repo, "Add a helper", date="2026-01-04T00:00:00+00:00")
    write_files(repo, {"README.md": "prose only\n"})
    commit_all(repo, "Reword the readme", date="2026-01-05T00:00:00+00:00")

    history = read_history(repo, limit=10)
    # a commit that edited no code file is not read; prose files are not listed
    assert [c.message for c in history] == [
        "Add a helper",
        "Multiply in the fourth step",
        "initial",
    ]
    assert [c.order for c in history] == [0, 1, 2]
    assert [c.files() for c in history] == [("pkg/util.py",), ("pkg/mod.py",), ("pkg/mod.py",)]
    assert [c.sha for c in read_history(repo, rev="HEAD~2", limit=1)] == [history[1].sha]
    assert read_history(repo, limit=0) == []


def test_a_commit_touching_too_many_files_is_left_out(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", {f"m{i}.py": _py({"f": "total += 1"}) for i in range(5)})
    write_files(repo, {f"m{i}.py": _py({"f": "total += 2"}) for i in range(5)})
    commit_all(repo, "Reformat everything")
    write_files(repo, {"m0.py": _py({"f": "total += 3"})})
    commit_all(repo, "One change", date="2026-01-03T00:00:00+00:00")
    assert [c.message for c in read_history(repo, limit=10, max_files=3)] == ["One change"]


def test_the_index_stores_past_commits_and_finds_the_ones_like_a_task(tmp_path: Path) -> None:
    bodies = {f"step_{i}": f"total += {i}" for i in range(4)}
    repo = make_repo(tmp_path / "r", {"pkg/mod.py": _py(bodies)})
    bodies["step_2"] = "total = total % 7"
    write_files(repo, {"pkg/mod.py": _py(bodies)})
    commit_all(repo, "Wrap the rounding of totals", date="2026-01-03T00:00:00+00:00")
    bodies["step_3"] = "total = -total"
    write_files(repo, {"pkg/mod.py": _py(bodies)})
    commit_all(repo, "Negate the last step", date="2026-01-04T00:00:00+00:00")
    with Librarian(repo) as lib:
        lib.index()
    with open_store(repo, readonly=True) as store:
        similar = store.history.similar_commits(message_words("rounding of totals is off"), 5)
        assert [order for order, _ in similar] == [1]
        assert store.history.past_edits([order for order, _ in similar]) == [(1, "pkg/mod.py")]
        assert store.history.similar_commits([], 5) == []
        assert store.history.past_edits([]) == []


def test_history_is_off_with_the_co_change_graph(tmp_path: Path) -> None:
    from codelibrarian.config import load_config

    repo = make_repo(tmp_path / "r", {"pkg/mod.py": _py({"step_0": "total += 1"})})
    write_files(repo, {"pkg/mod.py": _py({"step_0": "total = round(total)"})})
    commit_all(repo, "Add a rounding step", date="2026-01-02T12:00:00+00:00")
    for n in range(2):  # BM25 needs a few other messages to tell a word apart
        write_files(repo, {"pkg/mod.py": _py({"step_0": f"total = round(total, {n})"})})
        commit_all(repo, f"Digits, take {n}", date=f"2026-01-02T1{n + 3}:00:00+00:00")
    with Librarian(repo) as lib:
        lib.index()
    with open_store(repo, readonly=True) as store:
        assert [order for order, _ in store.history.similar_commits(["rounding"], 5)] == [2]
    config = load_config(repo)
    off = config.model_copy(
        update={"index": config.index.model_copy(update={"cochange_commits": 0})}
    )
    write_files(repo, {"pkg/mod.py": _py({"step_0": "total += 2"})})
    commit_all(repo, "Second", date="2026-01-03T00:00:00+00:00")
    with Librarian(repo, off) as lib:
        lib.index()
    with open_store(repo, readonly=True) as store:
        assert store.history.similar_commits(["rounding"], 5) == []
        assert store.meta("past_edits_key") == ""
