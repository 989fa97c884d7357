"""The map's share of the budget is earned per task: it narrows when the ranking's
best file clearly leads and widens when the evidence is spread over many files."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from codelibrarian.api import Librarian
from codelibrarian.sources.structure import MAP_NARROW, MAP_WIDE, map_cap, map_share
from codelibrarian.tokens import get_tokenizer
from tests.helpers import make_repo

AS_OF = 1_800_000_000


def test_a_leading_file_narrows_the_map_and_a_flat_top_widens_it() -> None:
    assert map_share([1000, 0, 0, 0, 0]).permille == MAP_NARROW
    assert map_share([1000, 1000, 1000, 1000, 1000]).permille == MAP_WIDE
    middle = map_share([1000, 600, 400, 300, 200])
    assert MAP_NARROW < middle.permille < MAP_WIDE
    assert middle.lead == 1000 * 1000 // 2500
    assert "400/1000 of the top 5 files' scores" in middle.reason()


def test_without_a_ranking_to_judge_by_the_default_share_holds() -> None:
    assert map_share([]).permille == map_share([900]).permille == 120
    assert map_cap(2000) == map_cap(2000, 120) == 240


scores = st.lists(st.integers(min_value=0, max_value=1000), min_size=2, max_size=8).map(
    lambda xs: sorted(xs, reverse=True)
)


@given(scores, st.integers(min_value=0, max_value=1000))
def test_share_is_bounded_and_never_widens_as_the_lead_grows(xs: list[int], boost: int) -> None:
    share = map_share(xs)
    assert MAP_NARROW <= share.permille <= MAP_WIDE
    assert share.permille == map_share(list(xs)).permille  # a pure function of the scores
    stronger = [xs[0] + boost, *xs[1:]]
    assert map_share(stronger).lead >= share.lead
    assert map_share(stronger).permille <= share.permille


def _module(i: int, words: str) -> str:
    return "".join(
        f"def helper_{i}_{j}(value):\n    # {words}\n    return value + {j}\n\n\n"
        for j in range(12)
    )


def _pack_map(repo: Path, task: str, budget: int) -> tuple[int, tuple[tuple[str, str], ...]]:
    with Librarian(repo) as lib:
        lib.index()
        pack = lib.compose(task, budget=budget, as_of=AS_OF, record=False)
    assert get_tokenizer("gpt-4o").count(pack.text) <= budget
    found = [a for a in pack.artifacts if a.kind == "dependency_graph"]
    return (found[0].tokens if found else 0), tuple(pack.locate)


def test_compose_gives_the_map_less_room_when_one_file_holds_the_task(tmp_path: Path) -> None:
    """Two repositories of 30 similar modules: in one a single module names the task's
    words (the edit is there: code earns the room), in the other every module names
    them alike (orientation earns it). The map's share and its reason follow."""
    spread = {f"pkg/mod{i}.py": _module(i, "retry backoff schedule") for i in range(30)}
    focused = {f"pkg/mod{i}.py": _module(i, "arithmetic helper") for i in range(30)}
    focused["pkg/mod7.py"] = _module(7, "retry backoff schedule jitter")
    narrow_tokens, narrow_stages = _pack_map(
        make_repo(tmp_path / "focused", focused), "retry backoff schedule jitter", 8000
    )
    wide_tokens, wide_stages = _pack_map(
        make_repo(tmp_path / "spread", spread), "retry backoff schedule jitter", 8000
    )
    narrow = dict(narrow_stages)["map"]
    wide = dict(wide_stages)["map"]
    assert narrow.startswith("map share ") and wide.startswith("map share ")
    narrow_share = int(narrow.split()[2].split("/")[0])
    wide_share = int(wide.split()[2].split("/")[0])
    assert narrow_share < wide_share
    assert narrow_tokens <= 8000 * narrow_share // 1000 + 30  # + its heading and fences
    assert wide_tokens > narrow_tokens
