"""The candidate digest is the digest of the shapes sorted by ``repr``, however it is computed.

``candidate_digest`` joins each candidate's kept shape JSON and orders by the ids'
``repr`` when that decides; these properties hold it to the plain definition,
with ids that tie, ids whose ``repr`` is a prefix of another's and ids that need
quoting, so cache keys and decision records stay what they were.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from codelibrarian.composer import Candidate, candidate_digest
from codelibrarian.composer.determinism import canonical_json, digest

from .strategies import candidate_lists, candidates_with

#: ids that tie, prefix one another (``id`` / ``id0`` / ``id01``) or need escaping
AWKWARD_IDS = ("id", "id0", "id01", "id01'", 'a"b', "a'b", "a\\", "a\\'", "ü", "id01 ")

awkward = st.lists(candidates_with(AWKWARD_IDS), max_size=12)


def _reference(candidates: list[Candidate]) -> str:
    return digest(sorted((c.shape() for c in candidates), key=repr))


@settings(max_examples=200, deadline=None)
@given(candidate_lists)
def test_digest_matches_the_definition(candidates: list[Candidate]) -> None:
    assert candidate_digest(candidates) == _reference(candidates)
    # asked again (the shape JSON is kept on each candidate): the same answer
    assert candidate_digest(reversed(candidates)) == _reference(candidates)


@settings(max_examples=200, deadline=None)
@given(awkward)
def test_digest_matches_the_definition_with_awkward_ids(candidates: list[Candidate]) -> None:
    assert candidate_digest(candidates) == _reference(candidates)


@given(candidate_lists)
def test_shape_json_is_the_canonical_json_of_the_shape(candidates: list[Candidate]) -> None:
    for c in candidates:
        assert c.shape_json() == canonical_json(c.shape())
        assert c.shape_json() is c.shape_json()


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.tuples(st.integers(1, 10**6), st.text(max_size=20)), max_size=8),
    st.one_of(st.none(), st.tuples(st.integers(1, 50), st.integers(50, 99))),
)
def test_shape_json_of_an_excerpt_is_the_canonical_json_of_the_shape(
    lines: list[tuple[int, str]], span: tuple[int, int] | None
) -> None:
    excerpt = tuple(sorted(dict(lines).items()))
    cand = Candidate(
        id="x1",
        kind="semantic_match",
        lane="retrieved",
        token_estimate=3,
        path="a.py",
        content="body",
        title="a.py",
        lines=span,
        excerpt=excerpt,
    )
    assert cand.shape_json() == canonical_json(cand.shape())
