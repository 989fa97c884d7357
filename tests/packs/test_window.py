"""WindowComposer: the seed's tests, the total-budget fix, and property tests."""

from __future__ import annotations

import copy
import json
import warnings
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from codelibrarian.errors import UsageError
from codelibrarian.packs.window import (
    MAX_RECENT_ENVELOPES,
    ComposedWindow,
    ComposedWindowSlot,
    SaopEnvelope,
    WindowBudget,
    WindowComposer,
    truncate_to_tokens,
)
from codelibrarian.tokens import get_tokenizer
from tests.helpers import make_repo, run_cli

TOK = get_tokenizer("gpt-4o")
# bpe-openai 0.1.4 calls the deprecated importlib.resources.open_binary on first use;
# load it once here so pytest's filterwarnings=error does not turn that into a failure.
with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    TOK.count("warm up")


class WordTokenizer:
    """One token per whitespace-separated word: makes expected values obvious."""

    name = "words"

    def count(self, text: str) -> int:
        return len(text.split())


WORDS = WordTokenizer()


def words(n: int, stem: str = "w") -> str:
    return " ".join(f"{stem}{i}" for i in range(n))


def env(i: int, content: str | None = None, ts: int | None = None) -> SaopEnvelope:
    return SaopEnvelope(
        id=f"e{i:02d}",
        content=content or f"envelope {i}",
        timestamp_ms=1000 + i if ts is None else ts,
    )


BIG = WindowBudget(
    total_budget=100_000, goal_budget=10_000, map_budget=50_000, recent_past_budget=40_000
)


# ---- the seed's tests -------------------------------------------------------------------


def test_zero_envelopes_and_empty_inputs_give_an_empty_window() -> None:
    window = WindowComposer(BIG).compose("", "", [])
    assert window == ComposedWindow(slots=(), total_tokens_used=0, budget_exceeded=False)


def test_goal_over_its_budget_is_truncated_and_flagged() -> None:
    budget = WindowBudget(total_budget=1000, goal_budget=5, map_budget=100, recent_past_budget=100)
    goal = words(12)
    window = WindowComposer(budget, tokenizer=WORDS).compose(goal, "", [])
    (slot,) = window.slots
    assert slot.kind == "goal"
    assert slot.truncated is True
    assert slot.content == "w0 w1 w2 w3 w4"  # cut at the last whitespace that fits
    assert slot.token_count == 5
    assert window.budget_exceeded is False


def test_goal_truncation_with_the_real_tokenizer_keeps_whole_words() -> None:
    goal = "Refactor the payment retry logic so that idempotency keys survive restarts " * 20
    budget = WindowBudget(total_budget=1000, goal_budget=37, map_budget=0, recent_past_budget=0)
    (slot,) = WindowComposer(budget, tokenizer=TOK).compose(goal, "", []).slots
    assert slot.truncated
    assert 0 < slot.token_count <= 37
    assert slot.token_count == TOK.count(slot.content)
    assert goal.startswith(slot.content)
    assert goal[len(slot.content)] == " "  # the cut is at a word boundary
    # and it is the longest such cut: the next word would not fit
    next_space = goal.index(" ", len(slot.content) + 1)
    assert TOK.count(goal[:next_space]) > 37


def test_map_over_its_budget_is_truncated_similarly() -> None:
    budget = WindowBudget(total_budget=1000, goal_budget=100, map_budget=4, recent_past_budget=100)
    repo_map = "src/a.py:\n  def f()\nsrc/b.py:\n  class B"
    window = WindowComposer(budget, tokenizer=WORDS).compose("fix it", repo_map, [])
    goal_slot, map_slot = window.slots
    assert (goal_slot.kind, goal_slot.truncated) == ("goal", False)
    assert map_slot.kind == "map"
    assert map_slot.truncated
    assert map_slot.content == "src/a.py:\n  def f()\nsrc/b.py:"
    assert map_slot.token_count == 4


def test_fifteen_envelopes_keep_the_ten_newest_newest_first_within_budget() -> None:
    envelopes = [env(i, words(3, f"e{i}_")) for i in range(15)]
    budget = WindowBudget(total_budget=1000, goal_budget=10, map_budget=10, recent_past_budget=1000)
    window = WindowComposer(budget, tokenizer=WORDS).compose("g", "m", envelopes)
    recent = window.slots_of("recent_past")
    assert [s.id for s in recent] == [f"e{i:02d}" for i in range(14, 4, -1)]
    assert sum(s.token_count for s in recent) <= budget.recent_past_budget
    assert window.dropped_envelope_ids == ("e04", "e03", "e02", "e01", "e00")


def test_recent_past_stops_at_its_budget() -> None:
    envelopes = [env(i, words(3)) for i in range(15)]
    budget = WindowBudget(total_budget=1000, goal_budget=10, map_budget=10, recent_past_budget=10)
    window = WindowComposer(budget, tokenizer=WORDS).compose("g", "m", envelopes)
    recent = window.slots_of("recent_past")
    assert [s.id for s in recent] == ["e14", "e13", "e12"]  # 9 tokens; a 4th would be 12
    assert sum(s.token_count for s in recent) <= 10
    assert not any(s.truncated for s in recent)


def test_everything_fits_untruncated_and_total_is_the_exact_sum() -> None:
    goal = "Make the retry loop respect the deadline."
    repo_map = "src/retry.py\n  def retry(fn, deadline)\nsrc/clock.py\n  class Clock"
    envelopes = [env(1, "ran tests: 3 failed"), env(2, "edited src/retry.py")]
    window = WindowComposer(BIG, tokenizer=TOK).compose(goal, repo_map, envelopes)
    assert [s.kind for s in window.slots] == ["goal", "map", "recent_past", "recent_past"]
    assert [s.id for s in window.slots] == ["goal", "map", "e02", "e01"]
    assert not any(s.truncated for s in window.slots)
    expected = TOK.count(goal) + TOK.count(repo_map) + sum(TOK.count(e.content) for e in envelopes)
    assert window.total_tokens_used == expected
    assert all(s.token_count == TOK.count(s.content) for s in window.slots)
    assert window.budget_exceeded is False
    assert window.dropped_envelope_ids == ()


@pytest.mark.parametrize(
    ("requested", "effective"), [(0, 1), (-5, 1), (1, 1), (3, 3), (10, 10), (15, 10), (10**9, 10)]
)
def test_max_recent_envelopes_is_clamped_in_the_constructor(requested: int, effective: int) -> None:
    composer = WindowComposer(BIG, max_recent_envelopes=requested, tokenizer=WORDS)
    assert composer.max_recent_envelopes == effective
    window = composer.compose("", "", [env(i) for i in range(20)])
    assert len(window.slots_of("recent_past")) == effective


def test_default_cap_is_ten() -> None:
    assert WindowComposer(BIG).max_recent_envelopes == MAX_RECENT_ENVELOPES == 10


def test_compose_is_deterministic() -> None:
    composer = WindowComposer(BIG, tokenizer=TOK)
    envelopes = [env(i, f"step {i}: looked at file_{i}.py") for i in range(12)]
    assert composer.compose("goal text", "map text", envelopes) == composer.compose(
        "goal text", "map text", envelopes
    )


# ---- the total budget is a hard cap (seed defect fixed) ------------------------------------


def test_slot_budgets_summing_past_the_total_never_exceed_it() -> None:
    # per-slot budgets sum to 30 but the total is 12
    budget = WindowBudget(total_budget=12, goal_budget=10, map_budget=10, recent_past_budget=10)
    envelopes = [env(i, words(2)) for i in range(5)]
    window = WindowComposer(budget, tokenizer=WORDS).compose(words(8), words(8, "m"), envelopes)
    assert window.total_tokens_used <= 12
    goal_slot, map_slot, *recent = window.slots
    assert (goal_slot.token_count, goal_slot.truncated) == (8, False)
    assert (map_slot.token_count, map_slot.truncated) == (4, True)  # only 4 left
    assert recent == []
    assert window.budget_exceeded is False  # the goal itself fitted
    assert window.dropped_envelope_ids == ("e04", "e03", "e02", "e01", "e00")


def test_budget_exceeded_means_the_goal_alone_did_not_fit_the_total() -> None:
    budget = WindowBudget(total_budget=3, goal_budget=10, map_budget=10, recent_past_budget=10)
    window = WindowComposer(budget, tokenizer=WORDS).compose(words(6), "map", [env(1)])
    (goal_slot,) = window.slots
    assert goal_slot.content == "w0 w1 w2"
    assert goal_slot.truncated
    assert window.total_tokens_used == 3
    assert window.budget_exceeded is True


def test_goal_cut_by_its_own_budget_is_not_budget_exceeded() -> None:
    budget = WindowBudget(total_budget=5, goal_budget=5, map_budget=10, recent_past_budget=10)
    window = WindowComposer(budget, tokenizer=WORDS).compose(words(9), "m", [])
    assert window.slots[0].truncated
    assert window.budget_exceeded is False


def test_zero_total_omits_everything_and_reports_a_nonempty_goal() -> None:
    budget = WindowBudget(total_budget=0, goal_budget=10, map_budget=10, recent_past_budget=10)
    window = WindowComposer(budget, tokenizer=WORDS).compose("goal", "map", [env(1)])
    assert window.slots == ()
    assert window.total_tokens_used == 0
    assert window.budget_exceeded is True
    assert window.dropped_envelope_ids == ("e01",)


def test_newest_envelope_too_big_stops_the_walk_contiguously() -> None:
    envelopes = [env(1, "small"), env(2, words(50)), env(3, "tiny")]
    budget = WindowBudget(total_budget=100, goal_budget=10, map_budget=10, recent_past_budget=10)
    window = WindowComposer(budget, tokenizer=WORDS).compose("", "", envelopes)
    # e03 fits, e02 does not: e01 is not taken out of order even though it would fit
    assert [s.id for s in window.slots] == ["e03"]
    assert window.dropped_envelope_ids == ("e02", "e01")


def test_equal_timestamps_break_ties_by_id_whatever_the_input_order() -> None:
    envelopes = [env(i, ts=5) for i in (3, 1, 2)]
    composer = WindowComposer(BIG, tokenizer=WORDS)
    a = composer.compose("", "", envelopes)
    b = composer.compose("", "", list(reversed(envelopes)))
    assert [s.id for s in a.slots] == ["e01", "e02", "e03"]
    assert a == b


def test_empty_envelopes_are_omitted_without_counting_as_dropped() -> None:
    envelopes = [env(1), SaopEnvelope("blank", "", 5000)]
    window = WindowComposer(BIG, tokenizer=WORDS).compose("", "", envelopes)
    assert [s.id for s in window.slots] == ["e01"]
    assert window.dropped_envelope_ids == ()


def test_a_single_word_longer_than_the_allowance_is_cut_inside_the_word() -> None:
    long_word = "x" * 400
    out = truncate_to_tokens(TOK, long_word + " tail", 5)
    assert out
    assert long_word.startswith(out)
    assert TOK.count(out) <= 5


def test_truncate_edge_cases() -> None:
    assert truncate_to_tokens(TOK, "anything", 0) == ""
    assert truncate_to_tokens(TOK, "", 10) == ""
    assert truncate_to_tokens(TOK, "short", 10) == "short"
    assert truncate_to_tokens(WORDS, "a  b\tc\nd", 2) == "a  b"


def test_budget_and_envelope_validation() -> None:
    with pytest.raises(UsageError, match="goal_budget"):
        WindowBudget(total_budget=10, goal_budget=-1, map_budget=1, recent_past_budget=1)
    with pytest.raises(UsageError, match="total_budget"):
        WindowBudget(total_budget=True, goal_budget=1, map_budget=1, recent_past_budget=1)
    with pytest.raises(UsageError, match="timestamp_ms"):
        SaopEnvelope("a", "b", 1.5)  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="strings"):
        SaopEnvelope("a", None, 1)  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="WindowBudget"):
        WindowComposer({"total_budget": 1})  # type: ignore[arg-type]


def test_accessors() -> None:
    composer = WindowComposer(BIG, max_recent_envelopes=4, tokenizer=WORDS)
    assert composer.budget is BIG
    assert composer.tokenizer is WORDS
    slot = ComposedWindowSlot("goal", "goal", "x", 1, False)
    window = ComposedWindow((slot,), 1, False)
    assert window.slots_of("goal") == (slot,)
    assert window.slots_of("map") == ()


# ---- properties -------------------------------------------------------------------------

text_st = st.text(alphabet=st.sampled_from("ab cd\nef\t.;é中"), max_size=120)
env_st = st.builds(
    SaopEnvelope,
    id=st.text(alphabet="abcxyz0123", min_size=1, max_size=4),
    content=text_st,
    timestamp_ms=st.integers(min_value=0, max_value=50),
)
budget_st = st.builds(
    WindowBudget,
    total_budget=st.integers(0, 80),
    goal_budget=st.integers(0, 60),
    map_budget=st.integers(0, 60),
    recent_past_budget=st.integers(0, 60),
)


@given(
    budget=budget_st,
    goal=text_st,
    repo_map=text_st,
    envelopes=st.lists(env_st, max_size=14),
    cap=st.integers(-3, 14),
)
def test_property_never_over_total_never_mutates_deterministic(
    budget: WindowBudget, goal: str, repo_map: str, envelopes: list[SaopEnvelope], cap: int
) -> None:
    before = copy.deepcopy(envelopes)
    composer = WindowComposer(budget, max_recent_envelopes=cap, tokenizer=TOK)
    window = composer.compose(goal, repo_map, envelopes)
    assert envelopes == before  # never mutates (and frozen values cannot be mutated)
    assert window.total_tokens_used <= budget.total_budget
    assert window.total_tokens_used == sum(s.token_count for s in window.slots)
    for slot in window.slots:
        assert slot.content
        assert slot.token_count == TOK.count(slot.content)
    goal_slots = window.slots_of("goal")
    map_slots = window.slots_of("map")
    recent = window.slots_of("recent_past")
    assert sum(s.token_count for s in goal_slots) <= budget.goal_budget
    assert sum(s.token_count for s in map_slots) <= budget.map_budget
    assert sum(s.token_count for s in recent) <= budget.recent_past_budget
    assert len(recent) <= composer.max_recent_envelopes
    assert [s.kind for s in window.slots] == sorted(
        (s.kind for s in window.slots), key=["goal", "map", "recent_past"].index
    )
    for slot in (*goal_slots, *map_slots):
        source = goal if slot.kind == "goal" else repo_map
        assert source.startswith(slot.content)
        assert slot.truncated == (slot.content != source)
    # deterministic, and independent of input order
    assert composer.compose(goal, repo_map, list(reversed(envelopes))) == window


# ---- CLI --------------------------------------------------------------------------------


def _write_envelopes(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n\n", encoding="utf-8")
    return path


def test_cli_window_json(tmp_path: Path) -> None:
    map_file = tmp_path / "map.txt"
    map_file.write_text("src/app.py\n  def main()\n", encoding="utf-8")
    env_file = _write_envelopes(
        tmp_path / "env.jsonl",
        [
            {"id": f"s{i}", "content": f"step {i} observed output", "timestamp_ms": i}
            for i in range(12)
        ],
    )
    result = run_cli(
        "window", "--goal", "ship the fix", "--map-file", str(map_file),
        "--envelopes", str(env_file), "--total", "60", "--json",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["total_tokens_used"] <= 60
    assert data["budget_exceeded"] is False
    kinds = [s["kind"] for s in data["slots"]]
    assert kinds[:2] == ["goal", "map"]
    recent_ids = [s["id"] for s in data["slots"] if s["kind"] == "recent_past"]
    assert recent_ids == [f"s{i}" for i in range(11, 11 - len(recent_ids), -1)]
    assert 0 < len(recent_ids) <= 10


def test_cli_window_text_and_errors(tmp_path: Path) -> None:
    map_file = tmp_path / "map.txt"
    map_file.write_text("src/app.py", encoding="utf-8")
    env_file = _write_envelopes(
        tmp_path / "env.jsonl", [{"id": "a", "content": "did a", "timestamp_ms": 1}]
    )
    ok = run_cli("window", "--goal", "g", "--map-file", str(map_file), "--envelopes", str(env_file))
    assert ok.returncode == 0, ok.stderr
    assert "did a" in ok.stdout
    assert "src/app.py" in ok.stdout

    bad = _write_envelopes(tmp_path / "bad.jsonl", [{"id": "a", "content": "x"}])
    res = run_cli(
        "window", "--goal", "g", "--map-file", str(map_file), "--envelopes", str(bad), "--json"
    )
    assert res.returncode == 2
    err = json.loads(res.stdout)
    assert err["error"] == "usage_error"
    assert "line 1" in err["message"]
    assert "timestamp_ms" in err["message"]


@pytest.mark.slow
def test_cli_window_builds_the_map_from_the_index(tmp_path: Path) -> None:
    repo = make_repo(
        tmp_path / "repo",
        {
            "shop/cart.py": "class Cart:\n    def add(self, item: str) -> None:\n        pass\n",
            "shop/app.py": (
                "from shop.cart import Cart\n\ndef main() -> None:\n    Cart().add('x')\n"
            ),
        },
    )
    missing = run_cli("window", "--goal", "g", "--repo", str(repo), "--json")
    assert missing.returncode == 10, missing.stderr
    assert "librarian index" in json.loads(missing.stdout)["hint"]

    indexed = run_cli("index", str(repo), "--json")
    assert indexed.returncode == 0, indexed.stderr
    res = run_cli(
        "window", "--goal", "add a discount to the cart", "--repo", str(repo),
        "--map-budget", "200", "--total", "300", "--json",
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    data = json.loads(res.stdout)
    (map_slot,) = [s for s in data["slots"] if s["kind"] == "map"]
    assert "shop/cart.py" in map_slot["content"]
    assert data["total_tokens_used"] <= 300

    both = run_cli(
        "window", "--goal", "g", "--repo", str(repo), "--map-budget", "5",
        "--map-file", str(repo / "shop" / "app.py"),
    )  # fmt: skip
    assert both.returncode == 2
