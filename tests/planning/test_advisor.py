"""The advisor: typed evidence, absence as a normal answer, 3-5 suggestions."""

from __future__ import annotations

from codelibrarian.planning.advisor import FEATURES, PRESENT, IndexView, advise
from codelibrarian.techniques.registry import default_library


def _comps() -> dict[str, tuple[str, tuple[str, ...]]]:
    return {cid: (c.name, c.primitives) for cid, c in default_library().compositions.items()}


WEB = IndexView(
    files=(
        ("app/auth/login.py", "python"),
        ("app/auth/tokens.py", "python"),
        ("app/routes/users.py", "python"),
        ("app/db/models.py", "python"),
        ("app/db/migrations/0001_init.sql", "sql"),
        ("tests/test_login.py", "python"),
        ("docs/auth.md", "text"),
    ),
    imports=(
        ("app/auth/login.py", "jwt"),
        ("app/auth/tokens.py", "jwt"),
        ("app/routes/users.py", "flask"),
        ("app/db/models.py", "sqlalchemy.orm"),
        ("tests/test_login.py", "pytest"),
        ("tests/test_login.py", "requests"),
    ),
    symbols=(
        ("app/auth/login.py", "authenticate"),
        ("app/routes/users.py", "list_users"),
        ("app/db/models.py", "User"),
    ),
)


def test_features_with_evidence_files() -> None:
    a = advise(WEB, _comps())
    assert [f.id for f in a.features] == list(FEATURES)
    auth = a.feature("auth")
    assert auth.present and auth.confidence >= 700
    assert auth.evidence[:2] == ("app/auth/login.py", "app/auth/tokens.py")
    assert {s.kind for s in auth.signals} == {"import", "path", "symbols"}
    assert a.feature("database").present and a.feature("api").present
    assert a.feature("testing").present
    # a test file importing an HTTP client is not an integration
    assert not a.feature("integrations").present


def test_absence_is_possible() -> None:
    a = advise(WEB, _comps())
    for fid in ("ui", "observability", "performance", "async"):
        f = a.feature(fid)
        assert not f.present and f.confidence < PRESENT, fid
    names_only = IndexView(
        files=(("lib/core.py", "python"),),
        imports=(),
        symbols=tuple(("lib/core.py", n) for n in ("cache_get", "CacheEntry", "LruCache")),
    )
    perf = advise(names_only, _comps()).feature("performance")
    assert perf.signals and not perf.present  # names alone never reach the threshold


def test_suggestions_follow_the_features_and_priorities() -> None:
    a = advise(WEB, _comps())
    ids = [s.composition for s in a.suggestions]
    assert 3 <= len(ids) <= 5
    assert set(ids[:2]) == {"tc_api_change_review", "tc_auth_security_review"}  # high first
    first = a.suggestions[0]
    assert first.priority == "high" and first.evidence and first.reason


def test_no_tests_asks_for_tests_and_pads_to_three() -> None:
    bare = IndexView(files=(("src/main.go", "go"), ("README.md", "text")), imports=(), symbols=())
    a = advise(bare, _comps())
    assert a.suggestions[0].composition == "tc_test_backfill"
    assert a.suggestions[0].priority == "high"
    assert len(a.suggestions) == 3
    assert any("general-purpose" in n for n in a.notes)


def test_deterministic_and_order_independent() -> None:
    shuffled = IndexView(
        tuple(reversed(WEB.files)), tuple(reversed(WEB.imports)), tuple(reversed(WEB.symbols))
    )
    assert advise(WEB, _comps()).to_dict() == advise(shuffled, _comps()).to_dict()
