"""Golden plans: three intents on the fixture repository, JSON and Markdown.

Regenerate after an intended change with
``LIBRARIAN_UPDATE_GOLDEN=1 pytest tests/planning/test_plan_golden.py`` and review
the diff. The provider registry holds one fake Claude model (no network); the
embedding model is the bundled one, so these need the ``semantic`` extra.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from codelibrarian.api import Librarian
from codelibrarian.planning.outgoing import outgoing
from codelibrarian.planning.plan import EnrichedPlan
from codelibrarian.planning.render import plan_markdown, plan_text
from codelibrarian.providers import FakeProvider
from codelibrarian.providers.registry import ProviderRegistry
from tests.planning.repo_fixture import AS_OF, build_repo
from tests.sources.repo_fixture import warm_tokenizers

pytest.importorskip("static_model")

GOLDEN = Path(__file__).parent / "golden"
UPDATE = os.environ.get("LIBRARIAN_UPDATE_GOLDEN") == "1"
INTENTS = {
    "export_crash": "The CSV export crashes when a report has no rows",
    "review_login": "Review my staged change to the login handler before I commit",
    "rate_limit": "Add rate limiting to the public API endpoints",
}


def registry() -> ProviderRegistry:
    reg = ProviderRegistry(env={})
    reg.register(FakeProvider(id="claude", name="Claude (fake)", priority=10,
                              default_model="claude-sonnet-4-5",
                              models=("claude-sonnet-4-5",)))  # fmt: skip
    return reg


@pytest.fixture(scope="module")
def plans(tmp_path_factory: pytest.TempPathFactory) -> dict[str, EnrichedPlan]:
    warm_tokenizers()
    root = build_repo(tmp_path_factory.mktemp("plans") / "service")
    with Librarian(root) as lib:
        return {k: lib.plan(v, as_of=AS_OF, registry=registry()) for k, v in INTENTS.items()}


def _check(name: str, text: str) -> None:
    path = GOLDEN / name
    if UPDATE:
        path.write_text(text, encoding="utf-8")
    assert path.read_text(encoding="utf-8") == text, f"{name} changed (see module docstring)"


@pytest.mark.parametrize("key", sorted(INTENTS))
def test_golden_plan(plans: dict[str, EnrichedPlan], key: str) -> None:
    doc = outgoing(plans[key].to_dict())
    _check(f"plan_{key}.json", json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    _check(f"plan_{key}.md", plan_markdown(doc))


def test_the_plans_choose_what_a_senior_engineer_would(plans: dict[str, EnrichedPlan]) -> None:
    got = {k: (p.selection.pattern.id, p.chosen.id) for k, p in plans.items()}
    assert got == {
        "export_crash": ("pattern_bug_investigation", "tc_root_cause_recovery"),
        "review_login": ("pattern_change_verification", "tc_change_verification"),
        "rate_limit": ("pattern_feature_construction", "tc_feature_delivery"),
    }


def test_every_step_is_measured_within_its_budget(plans: dict[str, EnrichedPlan]) -> None:
    for plan in plans.values():
        for s in plan.steps:
            assert 0 < s.context.tokens <= s.context.budget
        assert plan.total_tokens == sum(s.context.tokens * s.runs for s in plan.steps)


def test_snapshot_provider_and_models(plans: dict[str, EnrichedPlan]) -> None:
    plan = plans["review_login"]
    assert plan.snapshot.modified_files == ("app/auth/login.py",)
    assert plan.snapshot.commit is not None and len(plan.snapshot.commit) == 40
    assert plan.providers.available == ("claude",) and plan.providers.preferred == "claude"
    llm = [s for s in plan.steps if s.executor == "llm"]
    assert llm and all(s.model is not None and s.model.provider == "claude" for s in llm)
    assert "the current change" in " ".join(plan.rationale["assumptions"])


def test_text_rendering_names_steps_and_alternatives(plans: dict[str, EnrichedPlan]) -> None:
    text = plan_text(outgoing(plans["export_crash"].to_dict()))
    assert "tp_hypothesis" in text and "alternative " in text
    assert "unverified_by_trace(no_run_history)" in text
