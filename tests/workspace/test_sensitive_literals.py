"""A path holding none of the default patterns' plain runs is not asked of any spec.

``is_sensitive_path`` answers "no rule" at once for a path holding none of the strings
``_default_literals`` takes from the default patterns; it must answer what asking every
spec answers, for paths built from the patterns' pieces, in any case, at any depth.
"""

from __future__ import annotations

from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st

from codelibrarian.workspace import secrets
from codelibrarian.workspace.secrets import DEFAULT_SENSITIVE_PATTERNS, is_sensitive_path


def every_spec(path: str) -> str | None:
    """The answer with the plain-run check off: every path holds the empty string."""
    with mock.patch.object(secrets, "_default_literals", lambda: ("",)):
        return is_sensitive_path(path)


PIECES = sorted(
    {p.replace("**/", "").replace("*", "") for _, pats in DEFAULT_SENSITIVE_PATTERNS for p in pats}
    | {".example", "src", "a.py", "x", ".", "_", "-", "sk", "json", "config"}
)
component = st.lists(st.sampled_from(PIECES) | st.text("ab.-_", max_size=4), min_size=1, max_size=3)
paths = st.lists(component.map("".join), min_size=1, max_size=4).map("/".join)


@settings(max_examples=100, deadline=None)
@given(st.lists(paths, min_size=1, max_size=3))
def test_plain_run_check_answers_what_every_spec_answers(batch: list[str]) -> None:
    # as written, upper-cased and title-cased: the specs and the runs are case-sensitive
    for path in (p for base in batch for p in (base, base.upper(), base.title())):
        assert is_sensitive_path(path) == every_spec(path)


def test_each_default_pattern_still_matches() -> None:
    for name, patterns in DEFAULT_SENSITIVE_PATTERNS:
        for pattern in patterns:
            plain = pattern.replace("**/", "").replace("*", "x")
            found = [is_sensitive_path(p) for p in (plain, "deep/dir/" + plain)]
            assert found == [every_spec(p) for p in (plain, "deep/dir/" + plain)]
            assert any(f is not None for f in found), (name, pattern)
