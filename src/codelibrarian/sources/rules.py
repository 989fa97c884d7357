"""Rules lane: the instruction and rule files a repository already keeps.

Files found (any depth unless noted): ``AGENTS.md``, ``CLAUDE.md``,
``.cursorrules``, ``.cursor/rules/*`` (``.md``/``.mdc``), ``.github/copilot-instructions.md``,
``CONTRIBUTING.md``, ``ARCHITECTURE.md``, ``STYLE*.md`` and ``*style-guide*.md`` /
``*styleguide*.md``, plus every file matching ``config.rules.files`` (gitignore-style).

Scoring (thousandths), all kinds ``rule_doc``:

- **agent instructions** (AGENTS.md, CLAUDE.md, .cursorrules, Cursor rules, Copilot
  instructions) are whole files when they fit 1,200 tokens, else one candidate per
  section. relevance 700; 900 when the file sits in a folder that holds a changed or
  explicit file (a nested ``AGENTS.md`` governs its subtree) or when a Cursor rule's
  ``globs`` match one, or 800 for ``alwaysApply: true``; specificity 400 at the root,
  700 in a sub-folder; risk 300.
- **guides** (CONTRIBUTING, ARCHITECTURE, style guides, configured files) are split
  into sections at Markdown headings. relevance 150 + 6/10 of the section's keyword
  relevance (share of the trigger's keywords in it); specificity 300; risk 300.
  A process document (``CONTRIBUTING.md``) is offered for a code task only where it speaks to it: a
  section must carry at least two of the task's keywords and a third of them,
  unless the task itself is about process (contributing, releases, changelog,
  style, conventions, commits, reviews, documentation) or the agent's role is a
  review (``Reviewer``, ``Critical``). Otherwise a
  CONTRIBUTING.md would take a share of every small pack by its lane minimum.
- recency: the file's git recency bucket.
"""

from __future__ import annotations

import fnmatch
import itertools
import posixpath
import re
from collections.abc import Sequence
from dataclasses import dataclass

import pathspec

from ..composer.types import Candidate
from .base import SourceContext, clamp, keyword_relevance

__all__ = ["RulesSource", "find_rule_files", "split_sections"]

_AGENT_NAMES = frozenset({"AGENTS.md", "CLAUDE.md", ".cursorrules"})
_GUIDE_NAMES = frozenset({"CONTRIBUTING.md", "ARCHITECTURE.md"})
_WHOLE_LIMIT = 1200
_SECTION_LIMIT = 900
#: words that make a task about process, where guides are wanted whatever they say
_PROCESS = re.compile(
    r"contribut|release|changelog|style|convention|guideline|commit message|pull request"
    r"|\breview|\bdocs?\b|documentation|readme|lint|format",
    re.IGNORECASE,
)
#: agent roles whose work is the project's process (a review): guides always offered
_PROCESS_ROLES = frozenset({"reviewer", "critical"})
_GUIDE_MIN_HITS = 2
_GUIDE_MIN_SHARE = 334


@dataclass(frozen=True, slots=True)
class Section:
    title: str
    start: int  # 1-based line
    end: int
    text: str


def _is_style_guide(name: str) -> bool:
    low = name.lower()
    if not low.endswith(".md"):
        return False
    return low.startswith("style") or "style-guide" in low or "styleguide" in low


def rule_kind(path: str) -> str | None:
    """``agent``, ``guide`` or None for a path that is not a rule file by name."""
    name = posixpath.basename(path)
    if name in _AGENT_NAMES or path == ".github/copilot-instructions.md":
        return "agent"
    if path.startswith(".cursor/rules/") and name.endswith((".md", ".mdc")):
        return "agent"
    if name in _GUIDE_NAMES or _is_style_guide(name):
        return "guide"
    return None


def find_rule_files(files: Sequence[str], extra_patterns: Sequence[str]) -> list[tuple[str, str]]:
    """``(path, agent|guide)`` for every rule file among ``files``, sorted by path."""
    spec = pathspec.GitIgnoreSpec.from_lines(extra_patterns) if extra_patterns else None
    out: list[tuple[str, str]] = []
    for path in files:
        kind = rule_kind(path)
        if kind is None and spec is not None and spec.match_file(path):
            kind = "guide"
        if kind is not None:
            out.append((path, kind))
    return sorted(out)


_FENCE = re.compile(r"^\s*(```|~~~)")
_HEADING = re.compile(r"^#{1,6}\s+\S")


def split_sections(text: str) -> list[Section]:
    """Sections of a Markdown text, cut before each heading outside code fences."""
    lines = text.splitlines()
    cuts: list[int] = [0]
    in_fence = False
    for i, line in enumerate(lines):
        if _FENCE.match(line):
            in_fence = not in_fence
        elif not in_fence and i > 0 and _HEADING.match(line):
            cuts.append(i)
    cuts.append(len(lines))
    out: list[Section] = []
    for a, b in itertools.pairwise(cuts):
        body = "\n".join(lines[a:b]).strip("\n")
        if not body.strip():
            continue
        first = lines[a].lstrip("#").strip() if _HEADING.match(lines[a]) else ""
        out.append(Section(first, a + 1, max(a + 1, b), body + "\n"))
    return out


def _front_matter(text: str) -> dict[str, str]:
    if not text.startswith("---"):
        return {}
    end = text.find("\n---", 3)
    if end < 0:
        return {}
    out: dict[str, str] = {}
    for line in text[3:end].splitlines():
        key, sep, value = line.partition(":")
        if sep:
            out[key.strip().lower()] = value.strip()
    return out


def _governs(path: str, targets: Sequence[str]) -> bool:
    folder = posixpath.dirname(path)
    if path.startswith((".cursor/", ".github/")) or not folder:
        return False
    return any(t.startswith(folder + "/") for t in targets)


def _agent_relevance(path: str, text: str, targets: Sequence[str]) -> int:
    if path.startswith(".cursor/rules/"):
        meta = _front_matter(text)
        globs = [g.strip().strip("\"'") for g in re.split(r"[,\[\]]", meta.get("globs", ""))]
        globs = [g for g in globs if g]
        if globs and any(fnmatch.fnmatch(t, g) for t in targets for g in globs):
            return 900
        if meta.get("alwaysapply", "").lower() == "true":
            return 800
        return 700
    return 900 if _governs(path, targets) else 700


def _is_process(path: str) -> bool:
    """A document about how to contribute, not about the code (CONTRIBUTING.md)."""
    return posixpath.basename(path).upper().startswith("CONTRIBUTING")


def _speaks_to(body: str, keywords: Sequence[str], share: int) -> bool:
    """Whether a guide section is about the task: enough of its keywords, often enough."""
    if share < _GUIDE_MIN_SHARE:
        return False
    return keyword_relevance(body, keywords) * len(keywords) // 1000 >= _GUIDE_MIN_HITS


class RulesSource:
    """Rule and instruction files as ``rule_doc`` candidates in the rules lane."""

    name = "rules"

    def gather(self, ctx: SourceContext) -> list[Candidate]:
        targets = sorted({*ctx.changed_paths, *ctx.trigger.files})
        role = (ctx.trigger.agent_role or "").lower()
        process_task = bool(_PROCESS.search(ctx.trigger.task)) or role in _PROCESS_ROLES
        out: list[Candidate] = []
        shared = ctx.memo.setdefault("shared", {})
        found = shared.get("rules.files")
        if found is None:
            found = find_rule_files(ctx.files, ctx.config.rules.files)
            shared["rules.files"] = found
        for path, kind in found:
            if ctx.sensitive(path):
                continue
            text = ctx.read(path)
            if not text or not text.strip():
                continue
            recency = ctx.recency.get(path, 0)
            if kind == "agent":
                relevance = _agent_relevance(path, text, targets)
                specificity = 700 if posixpath.dirname(path) not in ("", ".github") else 400
                if ctx.tokenizer.count(text) <= _WHOLE_LIMIT:
                    out.append(
                        ctx.candidate(
                            kind="rule_doc",
                            lane="rules",
                            path=path,
                            content=text,
                            title=path,
                            relevance=relevance,
                            specificity=specificity,
                            risk=300,
                            recency_bucket=recency,
                            lines=(1, max(1, text.count("\n") + (not text.endswith("\n")))),
                        )
                    )
                    continue
            else:
                relevance = 150
                specificity = 300
            for index, section in enumerate(split_sections(text)):
                body = section.text
                if ctx.tokenizer.count(body) > _SECTION_LIMIT:
                    from ..tokens import fit_prefix

                    body = fit_prefix(ctx.tokenizer, body, _SECTION_LIMIT)
                    if not body:
                        continue
                rel = relevance
                if kind == "guide":
                    share = keyword_relevance(body, ctx.trigger.keywords)
                    if (
                        _is_process(path)
                        and not process_task
                        and not _speaks_to(body, ctx.trigger.keywords, share)
                    ):
                        continue
                    rel = clamp(150 + share * 6 // 10)
                title = f"{path} § {section.title}" if section.title else path
                end = section.start + max(0, body.count("\n") - 1)
                out.append(
                    ctx.candidate(
                        kind="rule_doc",
                        lane="rules",
                        path=path,
                        content=body,
                        title=title,
                        chunk_index=index,
                        relevance=rel,
                        specificity=specificity,
                        risk=300,
                        recency_bucket=recency,
                        lines=(section.start, max(section.start, end)),
                    )
                )
        return out
