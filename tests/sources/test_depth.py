"""Context depth: under pressure the pack shows the code a change touches."""

from __future__ import annotations

from pathlib import Path

from codelibrarian.api import Librarian
from codelibrarian.tokens import get_tokenizer
from tests.helpers import make_repo

AS_OF = 1_800_000_000


def _documented() -> str:
    prose = "".join(
        f"    The retry schedule paragraph {i} explains how waiting between attempts works.\n"
        for i in range(45)
    )
    return (
        "import time\n\n\n"
        "def retry_schedule(attempts, base):\n"
        f'    """Compute the retry schedule.\n\n{prose}    """\n'
        "    delays = [base * 2 ** n for n in range(attempts)]\n"
        "    capped_delays = [min(d, 30.0) for d in delays]\n"
        "    return capped_delays\n"
    )


def _filler(i: int) -> str:
    return "".join(
        f"def unrelated_{i}_{j}(x):\n    return x * {j} + {i}  # arithmetic helper\n\n"
        for j in range(25)
    )


def test_bodies_beat_docstrings_when_room_is_short(tmp_path: Path) -> None:
    """A docstring-heavy function at a small budget: the lines an edit would touch
    (the body) are shown, the prose is what gives way."""
    files = {"retry.py": _documented(), **{f"mod{i}.py": _filler(i) for i in range(6)}}
    repo = make_repo(tmp_path / "r", files)
    with Librarian(repo) as lib:
        lib.index()
        pack = lib.compose("cap the retry schedule delays", budget=700, as_of=AS_OF, record=False)
    assert get_tokenizer("gpt-4o").count(pack.text) <= 700
    assert "    capped_delays = [min(d, 30.0) for d in delays]" in pack.text
    assert "    delays = [base * 2 ** n for n in range(attempts)]" in pack.text


def test_small_budgets_get_a_small_map_around_the_task(tmp_path: Path) -> None:
    """The map orients; code is what an edit needs. At 2,000 tokens the map keeps to
    a small share and starts at the task's file; at 8,000 it widens."""
    caller = (
        "from pkg.retry import retry_schedule\n\n\n"
        "def schedule_{i}(n):\n    return retry_schedule(n, {i})\n\n\n"
    )
    files = {f"pkg/mod{i}.py": caller.format(i=i) + _filler(i) for i in range(30)}
    files["pkg/retry.py"] = _documented()
    repo = make_repo(tmp_path / "r", files)
    tok = get_tokenizer("gpt-4o")
    maps = {}
    with Librarian(repo) as lib:
        lib.index()
        for budget in (2000, 8000):
            pack = lib.compose("retry schedule", budget=budget, as_of=AS_OF, record=False)
            found = [a for a in pack.artifacts if a.kind == "dependency_graph"]
            assert found, budget
            text = pack.text.split("[dependency_graph]", 1)[1].split("\n### ", 1)[0]
            maps[budget] = (found[0].tokens, text)
            assert tok.count(pack.text) <= budget
    tokens, text = maps[2000]
    assert tokens <= 2000 * 15 // 100
    assert text.index("pkg/retry.py") < text.index("pkg/mod")
    assert maps[8000][0] > tokens


def test_a_small_budget_offers_code_from_eight_files(tmp_path: Path) -> None:
    """At 2,000 tokens the retrieved lane looks at eight top files, not five: a task
    spread over several small files gets code from each while room is left."""
    files = {
        f"pkg/part{i}.py": (
            f"def retry_backoff_{i}(attempt):\n"
            f"    # retry backoff jitter for part {i}\n"
            f"    return attempt * {i + 2}\n"
        )
        + "".join(f"def other_{i}_{j}(x):\n    return x - {j}\n\n\n" for j in range(3 + i))
        for i in range(9)
    }
    repo = make_repo(tmp_path / "r", files)
    with Librarian(repo) as lib:
        lib.index()
        pack = lib.compose("retry backoff jitter", budget=2000, as_of=AS_OF, record=False)
    assert get_tokenizer("gpt-4o").count(pack.text) <= 2000
    shown = {i for i in range(9) if f"    return attempt * {i + 2}\n" in pack.text}
    assert len(shown) >= 8, sorted(shown)
