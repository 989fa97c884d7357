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


def test_earlier_packs_do_not_bias_a_later_identical_compose(tmp_path: Path) -> None:
    """Packs must not change with use: what earlier compositions showed is our own
    choice echoed back, not evidence. The agent's recorded work still counts."""
    from codelibrarian.api import Librarian

    root = make_repo(
        tmp_path / "s",
        {
            "retry.py": "def backoff(attempt):\n    return 2 ** attempt\n",
            "jitter.py": "def jitter(delay):\n    return delay / 2\n",
            "other.py": "x = 1\n",
        },
    )
    task = "retry backoff jitter"
    with Librarian(root) as lib:
        before = lib.compose(task, budget=3000, as_of=AS_OF, record=False)
        lib.compose("make backoff retry exponential", budget=3000, as_of=AS_OF - 600)
        lib.compose("jitter the retry delay", budget=3000, as_of=AS_OF - 300)
        after = lib.compose(task, budget=3000, as_of=AS_OF, record=False)
        assert after.text == before.text
        assert not any(a.kind == "session_history" for a in after.artifacts)
        lib.record_session("s1", "tried jitter in retry.py; backoff still linear", as_of=AS_OF - 60)
        worked = lib.compose(task, budget=3000, as_of=AS_OF, record=False)
    assert "tried jitter in retry.py" in worked.text
