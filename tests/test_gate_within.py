"""A text scanned with the terms of a text holding its lines finds what a full scan finds.

A candidate's excerpt is scanned right after its body, whose lines it repeats; the gate
then searches the excerpt only for the scan terms (rule gates, generic needles) the body
holds. No term holds a line break, so every occurrence in the excerpt lies inside one of
its lines, hence inside the body: the derived scan must equal the direct one, on texts
made of secret-bearing lines, in any case, with lines dropped, reordered or changed.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from codelibrarian.gate import RedactionLog, SecretGate
from codelibrarian.workspace import secrets
from codelibrarian.workspace.secrets import scan_terms, scan_text, scan_with_terms
from tests.workspace.test_secrets import CASES

#: lines that hold secrets, secret-like names and needles, and plain code
LINES = sorted(
    {line for _, text, _ in CASES for line in text.split("\n")}
    | {
        "def decode(self, s):",
        "    password = compute_timeout(handler)",
        "    token = 'ghp_' + value",
        "⋮",
        "    ΣΑΣ = 'İstanbul'  # non-ASCII lower-casing",
        "",
    }
)

line = st.sampled_from(LINES) | st.text(max_size=40).map(lambda t: t.replace("\n", " "))
cased = st.sampled_from((str, str.upper, str.swapcase))


@st.composite
def body_and_excerpt(draw: st.DrawFn) -> tuple[str, str]:
    lines = draw(st.lists(line, min_size=1, max_size=12))
    case = draw(cased)
    body = "\n".join(case(x) for x in lines)
    picked = draw(st.lists(st.sampled_from(body.split("\n")), max_size=12))
    if draw(st.booleans()):
        picked.append(draw(line))  # a line the body does not hold: the check must refuse
    return body, "\n".join(picked)


@settings(max_examples=300, deadline=None)
@given(body_and_excerpt())
def test_terms_of_a_text_holding_the_lines_find_the_same(pair: tuple[str, str]) -> None:
    body, excerpt = pair
    found, terms = scan_with_terms(body)
    assert found == scan_text(body)
    assert terms == scan_terms(body)
    if set(excerpt.split("\n")) <= set(body.split("\n")):
        assert scan_terms(excerpt) <= terms
        assert scan_text(excerpt, terms=terms) == scan_text(excerpt)


@settings(max_examples=300, deadline=None)
@given(body_and_excerpt(), st.booleans())
def test_the_gate_cleans_an_excerpt_the_same_with_its_body(
    pair: tuple[str, str], hit_first: bool
) -> None:
    body, excerpt = pair
    plain, derived = SecretGate(), SecretGate()
    if hit_first:
        derived.clean(excerpt, surface="pack")  # a text cached before: still the same
    log_a, log_b = RedactionLog(), RedactionLog()
    assert derived.clean(body, surface="pack", log=log_b) == plain.clean(
        body, surface="pack", log=log_a
    )
    assert derived.clean(excerpt, surface="pack", within=body, log=log_b) == plain.clean(
        excerpt, surface="pack", log=log_a
    )
    assert log_a.summary() == log_b.summary()


def test_only_the_given_terms_are_searched() -> None:
    """With the terms of a text that holds none, a secret line is not searched at all:
    the derivation is what makes the excerpt's scan cheaper (and why it is checked)."""
    secret = next(text for rule, text, _ in CASES if rule == "github_token")
    assert scan_text(secret)
    assert scan_text(secret, terms=frozenset()) == ()
    gate = SecretGate()
    gate.clean("def f():\n    return 1", surface="pack")
    # the excerpt's line is not a line of that text: the gate scans it in full
    assert gate.clean(secret, surface="pack", within="def f():\n    return 1") != secret


def test_the_generic_rule_searches_only_needles_present() -> None:
    """The generic finder, given the needles a text holds, finds what it finds when it
    searches all of them (an absent needle finds nothing)."""
    texts = [text for _, text, _ in CASES] + [t.upper() for _, t, _ in CASES]
    for text in texts:
        low = secrets._lower_aligned(text)
        present = [n for n in secrets._GENERIC_NEEDLES if n in low]
        assert list(secrets._find_generic(text, low, present)) == list(
            secrets._find_generic(text, low)
        )
