from __future__ import annotations

from pathlib import Path

from codelibrarian.config import Config, RulesConfig
from codelibrarian.sources.rules import RulesSource, find_rule_files, split_sections
from tests.helpers import make_repo
from tests.sources.conftest import MakeCtx


def test_rule_files_are_found_by_name_and_configuration() -> None:
    files = [
        "AGENTS.md",
        "pkg/AGENTS.md",
        "CLAUDE.md",
        ".cursorrules",
        ".cursor/rules/style.mdc",
        ".github/copilot-instructions.md",
        "CONTRIBUTING.md",
        "ARCHITECTURE.md",
        "STYLE.md",
        "docs/python-style-guide.md",
        "docs/team/conventions.md",
        "README.md",
        "src/main.py",
    ]
    found = dict(find_rule_files(files, ["docs/team/*.md"]))
    assert found == {
        "AGENTS.md": "agent",
        "pkg/AGENTS.md": "agent",
        "CLAUDE.md": "agent",
        ".cursorrules": "agent",
        ".cursor/rules/style.mdc": "agent",
        ".github/copilot-instructions.md": "agent",
        "CONTRIBUTING.md": "guide",
        "ARCHITECTURE.md": "guide",
        "STYLE.md": "guide",
        "docs/python-style-guide.md": "guide",
        "docs/team/conventions.md": "guide",
    }


def test_sections_split_at_headings_outside_fences() -> None:
    text = "# A\nintro\n```\n# not a heading\n```\n## B\nbody\n"
    sections = split_sections(text)
    assert [s.title for s in sections] == ["A", "B"]
    assert sections[0].start == 1 and sections[1].start == 6
    assert "# not a heading" in sections[0].text


def test_rules_lane_candidates_and_scores(tmp_path: Path, make_ctx: MakeCtx) -> None:
    root = make_repo(
        tmp_path / "r",
        {
            "AGENTS.md": "# Rules\nRun the tests.\n",
            "pkg/AGENTS.md": "Only pure functions in pkg.\n",
            ".cursor/rules/py.mdc": "---\nglobs: pkg/*.py\n---\nUse type hints.\n",
            "CONTRIBUTING.md": "# Contributing\nhi\n## Retry policy\nUse backoff for retry.\n",
            "docs/team.md": "Team rules.\n",
            "pkg/mod.py": "x = 1\n",
        },
    )
    (root / "pkg/mod.py").write_text("x = 2\n", encoding="utf-8")  # change in progress
    config = Config(rules=RulesConfig(files=("docs/team.md",)))
    cands = RulesSource().gather(make_ctx(root, "retry backoff", config=config))
    assert {c.lane for c in cands} == {"rules"} and {c.kind for c in cands} == {"rule_doc"}
    by_title = {c.title: c for c in cands}
    assert by_title["AGENTS.md"].relevance == 700
    assert by_title["pkg/AGENTS.md"].relevance == 900  # governs the changed file
    assert by_title["pkg/AGENTS.md"].specificity == 700
    assert by_title[".cursor/rules/py.mdc"].relevance == 900  # globs match the change
    retry = by_title["CONTRIBUTING.md § Retry policy"]
    assert retry.relevance > 150
    # a process document's sections that do not speak to a code task stay out
    assert "CONTRIBUTING.md § Contributing" not in by_title
    assert "docs/team.md" in by_title
    # ids are stable and path-free
    again = RulesSource().gather(make_ctx(root, "retry backoff", config=config))
    assert [c.id for c in cands] == [c.id for c in again]
    assert all("AGENTS" not in c.id for c in cands)
