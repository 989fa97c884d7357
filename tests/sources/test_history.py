from __future__ import annotations

from pathlib import Path

from codelibrarian.sources.history import HistorySource
from codelibrarian.sources.sessions import append_learning, append_session_entry
from codelibrarian.workspace.state import State
from tests.helpers import make_repo
from tests.sources.conftest import MakeCtx
from tests.sources.repo_fixture import AS_OF


def test_sessions_and_learnings(tmp_path: Path, make_ctx: MakeCtx) -> None:
    root = make_repo(tmp_path / "r", {"a.py": "x = 1\n"})
    d = State(root).ensure().sessions_dir
    for i in range(25):
        append_session_entry(
            d, session="s1", text=f"step {i} on retry", recorded_at=AS_OF - 100 + i
        )
    append_session_entry(d, session="s2", text="later", recorded_at=AS_OF + 50)  # after as_of
    append_learning(d, trigger="retry loops", action="use backoff", recorded_at=AS_OF - 10)
    append_learning(d, trigger="css", action="use grid", recorded_at=AS_OF - 10)
    cands = HistorySource().gather(make_ctx(root, "fix the retry loop"))
    sessions = [c for c in cands if c.kind == "session_history"]
    learnings = [c for c in cands if c.kind == "learning"]
    assert len(sessions) == 1 and len(sessions[0].entries) == 20
    assert sessions[0].entries[0].text == "[agent] step 5 on retry"  # oldest kept entry first
    assert sessions[0].recency_bucket == 4
    assert [c.text() for c in learnings] == ["When retry loops: use backoff"]
    assert learnings[0].relevance > 200


def test_decision_snapshots_come_from_earlier_compositions(tmp_path: Path) -> None:
    from codelibrarian.api import Librarian

    root = make_repo(
        tmp_path / "s",
        {"retry.py": "def backoff(attempt):\n    return 2 ** attempt\n", "other.py": "x = 1\n"},
    )
    with Librarian(root) as lib:
        lib.compose("make backoff retry exponential", budget=3000, as_of=AS_OF - 600)
        later = lib.compose("retry backoff jitter", budget=3000, as_of=AS_OF)
        same_time = lib.compose("another retry task", budget=3000, as_of=AS_OF - 600)
    snaps = [a for a in later.artifacts if a.kind == "session_history"]
    assert len(snaps) == 1
    assert "Earlier task: make backoff retry exponential" in later.text
    assert "retry.py" in later.text.split("Earlier task:")[1]
    # only strictly earlier compositions count, so a replay sees what the original saw
    assert not any(a.kind == "session_history" for a in same_time.artifacts)
