"""A scan runs the rules its text's scan terms call for, looked up per set of terms.

``_plan(present)`` is kept per set of terms a text holds; the findings must be those
of testing every rule's gate strings against the text itself and running the generic
rule with the needles the text holds, on secret-bearing texts in any case.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from codelibrarian.workspace import secrets
from codelibrarian.workspace.secrets import SecretFinding, findings_of, scan_text
from tests.workspace.test_secrets import CASES

LINES = sorted({line for _, text, _ in CASES for line in text.split("\n")} | {"x = 1", ""})


def every_rule(text: str) -> tuple[SecretFinding, ...]:
    """The scan written the long way: each rule's gates tested on the text."""
    low = secrets._lower_aligned(text)
    hits = []
    for rule in secrets._compiled_rules():
        if rule.gate and not any(g in low for g in rule.gate):
            continue
        if rule.find is secrets._find_generic:
            needles = [n for n in secrets._GENERIC_NEEDLES if n in low]
            hits.extend(secrets._find_generic(text, low, needles))
            continue
        hits.extend(rule.find(text, low))
    if not hits:
        return ()
    hits.sort(key=lambda h: (h[1], -h[2], h[0].startswith("generic_"), h[0]))
    return findings_of(text, [(start, end, name) for name, start, end in hits])


texts = st.lists(st.sampled_from(LINES) | st.text(max_size=30), min_size=1, max_size=8).map(
    "\n".join
)


@settings(max_examples=300, deadline=None)
@given(texts, st.sampled_from((str, str.upper, str.swapcase)))
def test_planned_scan_finds_what_every_rule_finds(text: str, case: object) -> None:
    cased = case(text)  # type: ignore[operator]
    assert scan_text(cased) == every_rule(cased)


def test_the_secret_cases_are_found_the_same() -> None:
    for _, text, _ in CASES:
        assert scan_text(text) == every_rule(text)


pieces = st.sampled_from(
    [*secrets._scan_terms(), *secrets._PROBES, "ke", "y", "s", "k", "-", "_", "gh", "x"]
)
lowered = st.lists(pieces | st.text(max_size=6), max_size=12).map("".join)


@settings(max_examples=400, deadline=None)
@given(lowered, st.frozensets(st.sampled_from(secrets._scan_terms())))
def test_terms_found_under_probes_are_the_terms_found(low: str, some: frozenset[str]) -> None:
    every = secrets._scan_terms()
    assert secrets._present(low, every) == frozenset(t for t in every if t in low)
    assert secrets._present(low, some) == frozenset(t for t in some if t in low)
