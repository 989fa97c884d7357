"""The policy engine: configuration and workspace state in, composer constraints out.

What it decides (the seed's ``PolicyEngine.getComposerConstraints``, made concrete):

- **pin the current change**: every ``local_diff`` is pinned, in path order, as long
  as the pinned diffs together stay within half of the budget; the rest of a very
  large change competes by score like any other candidate (pinning all of it could
  make the budget infeasible, which the seed never considered).
- **exclude sensitive files**: a candidate whose path matches a sensitive-path rule
  (``workspace.secrets.is_sensitive_path``: ``.env*``, keys, keystores, credential
  files, ... plus ``config.policy.sensitive_patterns``) is excluded by id with the
  reason ``sensitive file (<rule>)``; the composer records the verdict
  ``excluded_by_policy``. Sources never read such files: their candidates carry a
  placeholder body.
- **rules-lane minimum in protected workspaces** (``config.policy.protected``): a
  lane requirement of 300 tokens for the rules lane.
- **must-include recent violations**: when the policy lane offers violations, all
  of them are must-include.
- **redact secrets inside useful content** (``config.policy.scan_secrets``): the
  title, body, diff hunks and history entries of every other candidate pass the
  secret gate (:class:`~codelibrarian.gate.SecretGate`) before the composer sees
  them; given ``read`` (a file's whole text), an excerpt is checked against the
  secrets of its whole file too, so a key-body line or a token cut in half is
  redacted although the excerpt alone does not show it. Each secret span becomes
  ``[REDACTED:<rule>]``; each redacted artifact is reported as a
  :class:`Redaction` — artifact id, reason ``secret_redacted``, span count per
  rule — never the secret, never the path.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from .composer.constraints import ComposerConstraints, Constraint, LaneRequirement, Matcher
from .composer.types import Candidate, DiffHunk, HistoryEntry
from .config import Config
from .gate import RedactionLog, SecretGate, SpanStore

__all__ = [
    "PROTECTED_RULES_MIN",
    "PolicyEngine",
    "PolicyOutcome",
    "Redaction",
]

PROTECTED_RULES_MIN = 300


@dataclass(frozen=True, slots=True)
class Redaction:
    """Secrets redacted from one artifact: counts only (no secret, no path)."""

    id: str
    kind: str
    lane: str
    spans: int
    rules: tuple[tuple[str, int], ...]

    reason: str = "secret_redacted"

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind,
            "lane": self.lane,
            "reason": self.reason,
            "spans": self.spans,
            "rules": dict(self.rules),
        }


@dataclass(frozen=True, slots=True)
class PolicyOutcome:
    """Redacted candidates, the constraints for the composer and the redactions made."""

    candidates: tuple[Candidate, ...]
    constraints: ComposerConstraints
    redactions: tuple[Redaction, ...]
    excluded_rules: tuple[tuple[str, str], ...]  # (artifact id, rule), sorted


class PolicyEngine:
    """Turns configuration and candidates into constraints; redacts secrets."""

    def __init__(self, config: Config, *, spans: SpanStore | None = None) -> None:
        self._config = config
        #: the secret gate every outgoing text of this workspace passes
        self.gate = SecretGate(
            sensitive_patterns=tuple(config.policy.sensitive_patterns),
            scan=config.policy.scan_secrets,
            spans=spans,
        )

    def sensitive_rule(self, path: str) -> str | None:
        """The sensitive-path rule ``path`` matches, or None."""
        return self.gate.sensitive_rule(path)

    def is_sensitive(self, path: str) -> bool:
        return self.gate.is_sensitive(path)

    def apply(
        self,
        candidates: Sequence[Candidate],
        *,
        budget: int,
        read: Callable[[str], str | None] | None = None,
    ) -> PolicyOutcome:
        """Redact, then build the constraints for ``candidates`` under ``budget`` tokens.

        ``read(path)`` gives a candidate's whole file (None when there is none).
        """
        excluded: list[tuple[str, str]] = []
        kept: list[Candidate] = []
        redactions: list[Redaction] = []
        for original in candidates:
            rule = self.sensitive_rule(original.path)
            if rule is not None:
                excluded.append((original.id, rule))
                kept.append(original)
                continue
            sources: list[str] = []
            if read is not None:
                for path in (original.path, *original.quotes):
                    text = read(path) if path else None
                    if text is not None:
                        sources.append(text)
            cand, found = _redact_candidate(self.gate, original, sources)
            if found is not None:
                redactions.append(found)
            kept.append(cand)
        excluded.sort()
        must_exclude = [
            Constraint(Matcher.id(ident), f"sensitive file ({rule})") for ident, rule in excluded
        ]
        excluded_ids = {ident for ident, _ in excluded}
        pinned: list[Constraint] = []
        room = budget // 2
        diffs = sorted(
            (c for c in kept if c.kind == "local_diff" and c.id not in excluded_ids),
            key=lambda c: (c.title, c.id),
        )
        for cand in diffs:
            if cand.token_estimate > room:
                break
            room -= cand.token_estimate
            pinned.append(Constraint(Matcher.id(cand.id), "current change is always included"))
        must_include: list[Constraint] = []
        if any(c.kind == "violation" and c.id not in excluded_ids for c in kept):
            must_include.append(
                Constraint(Matcher.kind("violation"), "recent violations require attention")
            )
        requirements: list[LaneRequirement] = []
        if self._config.policy.protected:
            requirements.append(
                LaneRequirement(
                    "rules", PROTECTED_RULES_MIN, "protected workspace requires rules context"
                )
            )
        constraints = ComposerConstraints.of(
            must_include=must_include,
            must_exclude=must_exclude,
            pinned=pinned,
            lane_requirements=requirements,
        )
        redactions.sort(key=lambda r: r.id)
        return PolicyOutcome(tuple(kept), constraints, tuple(redactions), tuple(excluded))


def _redact_candidate(
    gate: SecretGate, cand: Candidate, sources: Sequence[str]
) -> tuple[Candidate, Redaction | None]:
    """``cand`` with its title, body, hunks, entries and excerpt lines through the gate.

    The span counts are the body's and the title's (hunks and entries are the
    body's parts, kept in step so shrinking never brings a secret back).
    """
    log = RedactionLog()
    body_in = cand.text()
    body = gate.clean(body_in, surface="pack", kind=cand.kind, id=cand.id, sources=sources, log=log)
    title = gate.clean(cand.title, surface="pack", kind="title", id=cand.id, log=log)
    parts = RedactionLog()
    hunks = cand.hunks
    if hunks:
        new_hunks = []
        for h in hunks:
            joined = "\n".join(h.lines)
            text = gate.clean(
                joined, surface="pack", kind="hunk", sources=sources, within=body_in, log=parts
            )
            new_hunks.append(
                DiffHunk(h.header, tuple(text.split("\n")), h.timestamp) if text != joined else h
            )
        hunks = tuple(new_hunks)
    entries = cand.entries
    if entries:
        new_entries = []
        for e in entries:
            text = gate.clean(e.text, surface="pack", kind="entry", log=parts)
            new_entries.append(HistoryEntry(text, e.timestamp) if text != e.text else e)
        entries = tuple(new_entries)
    excerpt = cand.excerpt
    if excerpt:
        joined = "\n".join(text for _, text in excerpt)
        text = gate.clean(
            joined, surface="pack", kind="excerpt", sources=sources, within=body_in, log=parts
        )
        if text != joined:
            lines = text.split("\n")
            # a redaction that keeps the line count keeps the numbering; one that
            # folds lines (a whole key block) leaves the cleaned body to render alone
            excerpt = (
                tuple((n, line) for (n, _), line in zip(excerpt, lines, strict=True))
                if len(lines) == len(excerpt)
                else ()
            )
    if not log.decisions and not parts.decisions:
        return cand, None
    # the estimate stays an estimate; the composer measures the rendered text exactly
    new = replace(
        cand,
        content=body,
        content_hash="",
        title=title,
        hunks=hunks,
        entries=entries,
        excerpt=excerpt,
    )
    summary = (log if log.decisions else parts).summary()
    rules = tuple(sorted(summary["rules"].items()))
    return new, Redaction(cand.id, cand.kind, cand.lane, summary["spans"], rules)
