"""Intent decomposition: vocabulary words only, integer weights, the seed's example."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from codelibrarian.planning.intent import CATEGORY, decompose, normalize_text
from codelibrarian.planning.lexicon import SCOPES, URGENCIES
from codelibrarian.techniques.vocabulary import ACTIONS, DOMAINS


def test_seed_example_is_investigation_about_auth_and_security() -> None:
    d = decompose("Debug the auth issue")
    assert d.action == "debug"
    assert d.category == "investigate"
    assert {"auth", "security"} <= set(d.domain_words)
    assert d.actions[0].cues == ("debug",)
    assert d.source == "vocabulary"


def test_urgency_scope_and_constraints_are_read() -> None:
    d = decompose(
        "Production is down after the deploy, customers affected: roll back without "
        "touching the database schema"
    )
    assert d.action == "respond"
    assert d.urgency == "critical"
    assert d.urgency_cues
    assert any(c.startswith("without touching the database schema") for c in d.constraints)
    quiet = decompose("When you have time, document every option in the config module")
    assert (quiet.action, quiet.urgency) == ("document", "low")
    assert quiet.scope in ("cross-cutting", "module")


def test_defaults_when_nothing_is_said() -> None:
    d = decompose("fix the bug")
    assert (d.urgency, d.scope) == ("normal", "local")
    vague = decompose("hmm")
    assert vague.action == "analyze" and vague.confidence == 0
    assert vague.domains[0].word == "general"


def test_nearest_examples_decide_when_no_cue_matches() -> None:
    d = decompose("the widget thing again please", nearest=[("optimize", 640), ("debug", 500)])
    assert d.source == "nearest_examples"
    assert d.action == "optimize"
    assert d.confidence <= 450
    assert d.notes


def test_keyword_fallback_lowers_the_confidence() -> None:
    text = "Review this pull request for race conditions"
    assert decompose(text, embeddings=False).confidence < decompose(text).confidence


def test_negative_cues_take_evidence_away() -> None:
    failing = decompose("the integration tests fail on CI since the merge")
    assert failing.action == "debug"
    assert failing.action_weight("test") == 0
    asked = decompose("add integration tests for the export command")
    assert asked.action == "test"


def test_normalize_text_plain_quotes_dashes_spaces() -> None:
    assert normalize_text("It\u2019s  SLOW \u2014 really") == "it's slow - really"


@given(st.text(max_size=300))
def test_decompose_is_total_and_stays_in_the_vocabulary(text: str) -> None:
    d = decompose(text)
    assert d.action in ACTIONS and d.category in set(CATEGORY.values())
    assert all(a.word in ACTIONS and 0 <= a.weight <= 1000 for a in d.actions)
    assert all(x.word in DOMAINS and 0 <= x.weight <= 1000 for x in d.domains)
    assert d.urgency in URGENCIES and d.scope in SCOPES
    assert 0 <= d.confidence <= 1000
    assert d == decompose(text)  # same text, same decomposition
