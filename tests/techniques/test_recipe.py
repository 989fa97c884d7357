"""Context recipes: expressible in the composer's and the packs' own terms, rendered purely."""

from __future__ import annotations

from codelibrarian.config import LANES
from codelibrarian.packs.budgets import ROLE_SCOPE
from codelibrarian.packs.lcp import AGENTS, SCOPE_CLASSES
from codelibrarian.techniques.recipe import ContextRecipe, parse_template, render_template
from codelibrarian.techniques.registry import default_library
from codelibrarian.techniques.vocabulary import AGENT_ROLES, SCOPES

LIB = default_library()


def test_vocabularies_mirror_the_packs() -> None:
    assert AGENT_ROLES == AGENTS
    assert SCOPES == SCOPE_CLASSES
    assert set(ROLE_SCOPE) == set(AGENT_ROLES)


def test_every_recipe_names_real_lanes_and_roles() -> None:
    for p in LIB.primitives.values():
        assert set(p.context.all_lanes) <= set(LANES)
        assert p.context.all_lanes[0] == "policy"
        assert p.context.role in AGENT_ROLES


def test_render_query_and_pinned_files() -> None:
    recipe = LIB.primitive("tp_root_cause").context
    env = {
        "task": "login fails for SSO users",
        "steps": {
            "tp_bisect": {"output": {"culprit": {"kind": "file", "ref": "src/auth/sso.py"}}},
            "tp_hypothesis": {
                "output": {
                    "hypotheses": [{"statement": "token expiry"}, {"statement": "clock skew"}]
                }
            },
        },
    }
    assert recipe.render_query(env) == (
        "login fails for SSO users src/auth/sso.py token expiry clock skew"
    )
    assert recipe.pinned_files(env) == ("src/auth/sso.py",)
    assert recipe.render_query({"task": "x"}) == "x"  # missing steps render as nothing


def test_templates_escape_and_report_problems() -> None:
    parts, problems = parse_template("{{literal}} {task} {bad path} {")
    assert [p for p, _ in problems] == [19, 30]
    assert render_template(parts, {"task": "t"}).startswith("{literal} t")
    r = ContextRecipe(lanes=("local",), query="{change.files_changed} files: {task}")
    assert r.render_query({"task": "x", "change": {"files_changed": 3}}) == "3 files: x"
    assert r.excluded_lanes == ("rules", "structure", "retrieved", "history")
