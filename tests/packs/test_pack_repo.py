"""Packs on a real git repository: every role and scope validates, fits, and refreshes."""

from __future__ import annotations

import itertools
import json
import warnings
from pathlib import Path

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codelibrarian.api import Librarian
from codelibrarian.packs.budgets import budget_for
from codelibrarian.packs.ladder import RUNG_NAMES
from codelibrarian.packs.lcp import AGENTS, ANCHOR_KINDS, SCOPE_CLASSES, LocalContextPack
from codelibrarian.tokens import get_tokenizer
from codelibrarian.workspace.files import content_hash
from tests.helpers import make_repo, write_files
from tests.packs.conftest import CRITERIA, TASK, fix_secret
from tests.sources.repo_fixture import SECRETS

SCHEMA = json.loads(
    (Path(__file__).resolve().parents[2] / "schemas" / "lcp.schema.json").read_text("utf-8")
)
AS_OF = 1_800_000_000
RAN_REASONS = {"first_rung", "required_for_role", "criteria_uncovered"}
SKIP_REASONS = {"criteria_covered", "budget_spent", "anchor_limit"}


def _count(text: str, model: str = "gpt-4o") -> int:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return get_tokenizer(model).count(text)


def check_pack(root: Path, path: Path, pack: LocalContextPack) -> None:
    """Everything a pack promises, measured from the file on disk."""
    text = path.read_text(encoding="utf-8")
    jsonschema.Draft202012Validator(SCHEMA).validate(json.loads(text))
    assert pack.token_estimate == _count(text, pack.model)
    assert pack.token_estimate <= pack.budget_tokens
    assert pack.budget_tokens == budget_for(pack.scope_class, pack.model_capability)
    assert all(pack.bloat_checks.model_dump().values()), pack.bloat_checks
    kinds = [ANCHOR_KINDS.index(a.kind) for a in pack.anchors]
    assert kinds == sorted(kinds)
    assert len(pack.anchors) <= 24
    assert len({(a.path, a.ref) for a in pack.anchors}) == len(pack.anchors)
    for a in pack.anchors:
        start, end = a.span
        assert end - start + 1 <= 60
        assert a.rev == content_hash((root / a.path).read_bytes())
        assert not a.path.startswith("deploy/")  # the private key file is never anchored
    for s in pack.micro_summaries:
        assert s.summary.count("\n") <= 2
    for secret in SECRETS:
        assert secret not in text
    ladder = pack.ladder
    assert [r.name for r in ladder.rungs] == list(RUNG_NAMES)
    assert ladder.rungs[0].ran and ladder.rungs[0].reason == "first_rung"
    for r in ladder.rungs:
        assert r.reason in (RAN_REASONS if r.ran else SKIP_REASONS)
        assert r.ran or r.anchors_added == 0
    assert ladder.stopped_after == max(r.rung for r in ladder.rungs if r.ran)
    removed = ladder.dropped_over_budget + ladder.removed_on_refresh
    assert sum(r.anchors_added for r in ladder.rungs) - removed == len(pack.anchors)
    if ladder.stop_reason == "criteria_covered":
        assert ladder.criteria_covered == ladder.criteria_total
        assert not any(q.startswith("not covered") for q in pack.open_questions)
    else:
        assert sum(q.startswith("not covered") for q in pack.open_questions) == (
            ladder.criteria_total - ladder.criteria_covered
        )


@pytest.mark.parametrize("scope", SCOPE_CLASSES)
@pytest.mark.parametrize("agent", AGENTS)
def test_every_role_and_scope_validates_and_fits(
    shared_lib: Librarian, shared_repo: Path, agent: str, scope: str
) -> None:
    result = shared_lib.pack(
        agent, TASK, acceptance=CRITERIA, scope=scope, run_id=f"matrix-{scope}", as_of=AS_OF
    )
    assert not result.reused
    assert result.path == (
        shared_repo / ".librarian" / "runs" / f"matrix-{scope}" / "context" / f"{agent}.lcp.json"
    )
    assert result.uri == f"resources://runs/matrix-{scope}/context/{agent}.lcp.json"
    assert shared_lib.resource(result.uri) == result.path
    check_pack(shared_repo, result.path, result.pack)
    assert result.pack.scope_class == scope and result.pack.agent == agent
    assert result.pack.anchors[0].path == "src/app/http_client.py"  # nearest the change first
    memory = json.loads(result.path.parents[1].joinpath("memory.json").read_text("utf-8"))
    assert memory["context_pack_uri"][agent] == result.uri


@pytest.mark.parametrize(
    "capability", ["fast_code", "reasoning_ultra", "long_context", "cheap_batch"]
)
def test_capabilities_scale_the_budget(
    shared_lib: Librarian, shared_repo: Path, capability: str
) -> None:
    result = shared_lib.pack(
        "Critical", TASK, scope="Small", capability=capability, run_id="caps", as_of=AS_OF
    )
    check_pack(shared_repo, result.path, result.pack)
    assert result.pack.budget_tokens == budget_for("Small", capability)


def test_role_rungs_are_visited(shared_lib: Librarian) -> None:
    reviewer = shared_lib.pack("Reviewer", TASK, acceptance=CRITERIA, run_id="roles", as_of=AS_OF)
    kb = reviewer.pack.ladder.rungs[3]
    assert kb.ran and kb.reason == "required_for_role" and kb.anchors_added > 0
    assert any(a.kind == "kb" for a in reviewer.pack.anchors)
    verifier = shared_lib.pack("Verifier", TASK, acceptance=CRITERIA, run_id="roles", as_of=AS_OF)
    assert verifier.pack.ladder.rungs[2].ran
    assert any(a.kind == "test" for a in verifier.pack.anchors)


def test_scope_defaults_to_the_change_class(shared_lib: Librarian) -> None:
    result = shared_lib.pack("Supervisor", TASK, run_id="scope-default", as_of=AS_OF)
    assert result.pack.scope_class == "Tiny"  # one file, three lines changed
    assert result.pack.model_capability == "reasoning_high"
    assert result.pack.budget_tokens == 1500


def test_a_remembered_pack_is_reused_not_reassembled(repo: Path) -> None:
    with Librarian(repo) as lib:
        first = lib.pack("Implementer", TASK, acceptance=CRITERIA, run_id="reuse", as_of=AS_OF)
        before = first.path.read_bytes()
        again = lib.pack("Implementer", TASK, acceptance=CRITERIA, run_id="reuse", as_of=AS_OF + 60)
        assert again.reused and again.pack == first.pack
        assert first.path.read_bytes() == before
        other = lib.pack(
            "Implementer", TASK + " quickly", acceptance=CRITERIA, run_id="reuse", as_of=AS_OF
        )
        assert not other.reused
    journal = (repo / ".librarian/runs/reuse/journal.md").read_text("utf-8")
    assert "**Implementer** reused pack" in journal


def test_refresh_updates_exactly_the_edited_anchor(repo: Path) -> None:
    with Librarian(repo) as lib:
        first = lib.pack("Planner", TASK, acceptance=CRITERIA, run_id="fresh", as_of=AS_OF)
        anchors = first.pack.anchors
        target = next(a for a in anchors if a.ref == "src/app/retry.py#backoff")
        assert [a.path for a in anchors].count(target.path) == 1
        assert target.lines == "1-3"
        # move the definition down two lines and change its file hash
        path = repo / target.path
        path.write_text("# retry helpers\n\n" + path.read_text("utf-8"), encoding="utf-8")
        refreshed = lib.pack("Planner", TASK, run_id="fresh", refresh=True, as_of=AS_OF + 60)
    assert refreshed.refreshed == (target.ref,)
    assert refreshed.missing == ()
    new = {a.ref: a for a in refreshed.pack.anchors}
    for a in anchors:
        if a.ref == target.ref:
            assert new[a.ref].rev == content_hash(path.read_bytes()) != a.rev
            assert new[a.ref].lines == "3-5"  # the anchor followed its definition
        else:
            assert new[a.ref] == a
    old_summaries = {s.ref: s for s in first.pack.micro_summaries}
    for s in refreshed.pack.micro_summaries:
        if s.ref != target.ref:
            assert s == old_summaries[s.ref]
    check_pack(repo, refreshed.path, refreshed.pack)
    journal = (repo / ".librarian/runs/fresh/journal.md").read_text("utf-8")
    assert "refreshed 1 anchor(s)" in journal


def test_refresh_without_changes_refreshes_nothing(repo: Path) -> None:
    with Librarian(repo) as lib:
        first = lib.pack("Thinker", TASK, run_id="still", as_of=AS_OF)
        again = lib.pack("Thinker", TASK, run_id="still", refresh=True, as_of=AS_OF)
    assert again.refreshed == () and again.pack.anchors == first.pack.anchors


def _big_repo(root: Path) -> Path:
    files: dict[str, str | bytes] = {
        "src/shop/core.py": (
            "def retry_backoff(attempt: int) -> float:\n"
            '    """Delay before the next retry."""\n'
            "    return 0.5 * 2 ** attempt\n"
        ),
        "logs/build.log": "".join(f"retry backoff attempt {i} failed\n" for i in range(150)),
        "assets/logo.bin": b"\x00\x01retry backoff\x00" * 50,
        "CONTRIBUTING.md": "# Contributing\n\n## Retries\n\nEvery retry uses backoff.\n",
    }
    for i in range(30):
        files[f"src/shop/mod{i:02d}.py"] = (
            "from .core import retry_backoff\n\n\n"
            f"class RetryPolicy{i:02d}:\n"
            f'    """Retry policy {i} with backoff for the payment client."""\n\n'
            "    def delay(self, attempt: int) -> float:\n"
            "        return retry_backoff(attempt)\n"
        )
        files[f"tests/test_mod{i:02d}.py"] = (
            f"from shop.mod{i:02d} import RetryPolicy{i:02d}\n\n\n"
            f"def test_delay_{i:02d}():\n"
            f"    assert RetryPolicy{i:02d}().delay(1) == 1.0\n"
        )
    make_repo(root, files)
    write_files(
        root,
        {
            "src/shop/core.py": files["src/shop/core.py"]  # type: ignore[operator]
            + "\n\ndef max_retries() -> int:\n    return 5\n"
        },
    )
    fix_secret(root)
    return root


def test_budget_pressure_drops_and_never_exceeds(tmp_path: Path) -> None:
    root = _big_repo(tmp_path / "big")
    many = tuple(f"RetryPolicy{i:02d} of mod{i:02d} is configurable" for i in range(0, 30, 7))
    with Librarian(root) as lib:
        tiny = lib.pack(
            "Thinker",
            "make retry backoff configurable for every payment client policy",
            acceptance=many,
            scope="Tiny",
            capability="cheap_batch",
            run_id="tight",
            as_of=AS_OF,
        )
        large = lib.pack(
            "Thinker",
            "make retry backoff configurable for every payment client policy",
            acceptance=(*many, "zebra unicorn quasar"),
            scope="Large",
            capability="long_context",
            run_id="roomy",
            as_of=AS_OF,
        )
    assert tiny.pack.budget_tokens == 750
    check_pack(root, tiny.path, tiny.pack)
    assert tiny.pack.ladder.stop_reason in ("budget_spent", "criteria_covered")
    assert sum(r.skipped_over_budget for r in tiny.pack.ladder.rungs) > 0
    check_pack(root, large.path, large.pack)
    # an uncoverable criterion keeps the ladder climbing to the top (or the anchor limit)
    assert large.pack.ladder.stop_reason in ("ladder_exhausted", "anchor_limit")
    assert len(large.pack.anchors) > len(tiny.pack.anchors)
    assert "not covered by any anchor: zebra unicorn quasar" in large.pack.open_questions
    for pack in (tiny.pack, large.pack):
        paths = {a.path for a in pack.anchors}
        assert "logs/build.log" not in paths and "assets/logo.bin" not in paths


def test_refresh_reports_a_vanished_file_as_missing(repo: Path) -> None:
    with Librarian(repo) as lib:
        first = lib.pack("Planner", TASK, run_id="gone", as_of=AS_OF)
        target = next(a for a in first.pack.anchors if a.path == "src/app/retry.py")
        (repo / target.path).unlink()
        again = lib.pack("Planner", TASK, run_id="gone", refresh=True, as_of=AS_OF)
    assert again.missing == (target.ref,) and again.refreshed == ()
    assert again.pack.ladder.removed_on_refresh == 1
    assert list(again.pack.anchors) == [a for a in first.pack.anchors if a != target]
    assert target.ref not in {s.ref for s in again.pack.micro_summaries}
    check_pack(repo, again.path, again.pack)


_RUNS = itertools.count()
WORDS = st.sampled_from(
    ["post", "retry", "backoff", "body", "cache", "size", "client", "url", "zebra", "quasar"]
)


@settings(max_examples=12, deadline=None)
@given(
    request=st.tuples(
        st.sampled_from(AGENTS),
        st.sampled_from(SCOPE_CLASSES),
        st.sampled_from(["fast_code", "reasoning_high", "cheap_batch"]),
        st.lists(st.lists(WORDS, min_size=1, max_size=4).map(" ".join), max_size=4),
    )
)
def test_property_any_request_fits_its_budget(
    shared_lib: Librarian, shared_repo: Path, request: tuple[str, str, str, list[str]]
) -> None:
    agent, scope, capability, criteria = request
    n = next(_RUNS)
    result = shared_lib.pack(
        agent,
        TASK,
        acceptance=criteria,
        scope=scope,
        capability=capability,
        run_id=f"prop-{n}-a",
        as_of=AS_OF,
    )
    check_pack(shared_repo, result.path, result.pack)
    again = shared_lib.pack(
        agent, TASK, acceptance=criteria, scope=scope, capability=capability, run_id=f"prop-{n}-b",
        as_of=AS_OF,
    )  # fmt: skip
    assert again.pack.anchors == result.pack.anchors  # deterministic across runs
    assert again.pack.ladder == result.pack.ladder


def test_role_rungs_keep_room_when_the_repo_view_could_fill_the_pack(tmp_path: Path) -> None:
    root = _big_repo(tmp_path / "big")
    with Librarian(root) as lib:
        res = lib.pack(
            "Reviewer",
            "make retry backoff configurable for every payment client policy",
            acceptance=("zebra unicorn quasar",),  # never covered: every rung runs
            scope="Large",
            run_id="review",
            as_of=AS_OF,
        )
    rungs = res.pack.ladder.rungs
    assert rungs[2].anchors_added <= 24 - 4 - rungs[0].anchors_added - rungs[1].anchors_added
    assert rungs[3].ran and rungs[3].reason == "required_for_role" and rungs[3].anchors_added
    assert any(a.kind == "kb" and a.path == "CONTRIBUTING.md" for a in res.pack.anchors)
    check_pack(root, res.path, res.pack)
