"""Policy lane: constraint documents, danger zones and recorded violations.

Candidates (scores in thousandths):

- ``constraint`` for each configured constraint document (``config.policy.constraint_docs``,
  default ``CONSTRAINTS.md``), whole when it fits 1,200 tokens, else per Markdown
  section: relevance 900 (whole) or 500 + 4/10 of the section's keyword relevance;
  specificity 600; risk 1000; recency from git.
- ``constraint`` "danger zone" notice when changed or explicit files match
  ``config.policy.danger_zones`` (gitignore-style): one candidate listing the
  matches, relevance 1000, specificity 900, risk 1000, recency 5.
- ``violation`` for each recorded violation (``librarian violations add``) that is
  recent (see ``violations.RECENT_SECONDS``) or concerns a changed/explicit file:
  relevance 900 (1000 when its file is changed or explicit), specificity 800,
  risk 900 (1000 for severity high), recency bucket from its age against ``as_of``.
"""

from __future__ import annotations

import pathspec

from ..composer.determinism import recency_bucket
from ..composer.types import Candidate, HistoryEntry
from .base import SourceContext, keyword_relevance
from .rules import split_sections
from .violations import load_violations

__all__ = ["PolicySource"]

_WHOLE_LIMIT = 1200


class PolicySource:
    """Constraint docs, danger zones and violations as policy-lane candidates."""

    name = "policy"

    def gather(self, ctx: SourceContext) -> list[Candidate]:
        out: list[Candidate] = []
        targets = sorted({*ctx.changed_paths, *ctx.trigger.files})
        for doc in sorted(set(ctx.config.policy.constraint_docs)):
            if not ctx.has_file(doc) or ctx.sensitive(doc):
                continue
            text = ctx.read(doc)
            if not text or not text.strip():
                continue
            recency = ctx.recency.get(doc, 0)
            if ctx.tokenizer.count(text) <= _WHOLE_LIMIT:
                out.append(
                    ctx.candidate(
                        kind="constraint",
                        lane="policy",
                        path=doc,
                        content=text,
                        title=doc,
                        relevance=900,
                        specificity=600,
                        risk=1000,
                        recency_bucket=recency,
                    )
                )
                continue
            for index, section in enumerate(split_sections(text)):
                rel = 500 + keyword_relevance(section.text, ctx.trigger.keywords) * 4 // 10
                title = f"{doc} § {section.title}" if section.title else doc
                out.append(
                    ctx.candidate(
                        kind="constraint",
                        lane="policy",
                        path=doc,
                        content=section.text,
                        title=title,
                        chunk_index=index,
                        relevance=rel,
                        specificity=600,
                        risk=1000,
                        recency_bucket=recency,
                        lines=(section.start, section.end),
                    )
                )
        zones = ctx.config.policy.danger_zones
        if zones and targets:
            lines: list[str] = []
            for pattern in zones:
                spec = pathspec.GitIgnoreSpec.from_lines([pattern])
                hit = [t for t in targets if spec.match_file(t)]
                if hit:
                    lines.append(f"- `{pattern}` (danger zone) covers: {', '.join(hit)}")
            if lines:
                body = (
                    "These files are in configured danger zones; change them with extra care, "
                    "keep the change minimal and run the full test suite:\n" + "\n".join(lines)
                )
                out.append(
                    ctx.candidate(
                        kind="constraint",
                        lane="policy",
                        path=".librarian/danger-zones",
                        content=body + "\n",
                        title="Danger zones",
                        relevance=1000,
                        specificity=900,
                        risk=1000,
                        recency_bucket=5,
                    )
                )
        as_of = ctx.trigger.as_of
        for v in load_violations(ctx.state.violations_path):
            touches = v.path is not None and v.path in targets
            if not (v.is_recent(as_of) or touches) or v.recorded_at > as_of:
                continue
            text = v.render()
            out.append(
                ctx.candidate(
                    kind="violation",
                    lane="policy",
                    path=v.path or ".librarian/violations",
                    content=text,
                    title=f"Violation {v.id}",
                    discriminator=v.id,
                    relevance=1000 if touches else 900,
                    specificity=800,
                    risk=1000 if v.severity == "high" else 900,
                    recency_bucket=recency_bucket(as_of - v.recorded_at),
                    entries=(HistoryEntry(text, v.recorded_at),),
                )
            )
        return out
