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
- **redact secrets inside useful content** (``config.policy.scan_secrets``): every
  body, diff hunk and history entry of every other candidate is scanned
  (``workspace.secrets.scan_text``) and each secret span is replaced by
  ``[REDACTED:<rule>]`` before the composer sees it. Each redaction is reported as
  a :class:`Redaction` — artifact id, reason ``secret_redacted``, span count per
  rule — never the secret, never the path.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from .composer.constraints import ComposerConstraints, Constraint, LaneRequirement, Matcher
from .composer.types import Candidate, DiffHunk, HistoryEntry
from .config import Config
from .workspace.secrets import is_sensitive_path, redact, scan_text

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

    def __init__(self, config: Config) -> None:
        self._config = config
        self._extra = tuple(config.policy.sensitive_patterns)
        self._rules: dict[str, str | None] = {}

    def sensitive_rule(self, path: str) -> str | None:
        """The sensitive-path rule ``path`` matches, or None."""
        if not path or path.startswith(".librarian/"):
            return None
        if path not in self._rules:
            self._rules[path] = is_sensitive_path(path, self._extra)
        return self._rules[path]

    def is_sensitive(self, path: str) -> bool:
        return self.sensitive_rule(path) is not None

    def apply(self, candidates: Sequence[Candidate], *, budget: int) -> PolicyOutcome:
        """Redact, then build the constraints for ``candidates`` under ``budget`` tokens."""
        excluded: list[tuple[str, str]] = []
        kept: list[Candidate] = []
        redactions: list[Redaction] = []
        for original in candidates:
            rule = self.sensitive_rule(original.path)
            if rule is not None:
                excluded.append((original.id, rule))
                kept.append(original)
                continue
            cand = original
            if self._config.policy.scan_secrets:
                cand, found = _redact_candidate(original)
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


def _redact_text(text: str, counts: Counter[str]) -> str:
    findings = scan_text(text)
    if not findings:
        return text
    for f in findings:
        counts[f.rule] += 1
    return redact(text, findings)


def _redact_candidate(cand: Candidate) -> tuple[Candidate, Redaction | None]:
    counts: Counter[str] = Counter()
    body = _redact_text(cand.text(), counts)
    hunks = cand.hunks
    if hunks:
        new_hunks = []
        for h in hunks:
            local: Counter[str] = Counter()
            text = _redact_text("\n".join(h.lines), local)
            new_hunks.append(
                DiffHunk(h.header, tuple(text.split("\n")), h.timestamp) if local else h
            )
        hunks = tuple(new_hunks)
    entries = cand.entries
    if entries:
        new_entries = []
        for e in entries:
            seen: Counter[str] = Counter()
            text = _redact_text(e.text, seen)
            new_entries.append(HistoryEntry(text, e.timestamp) if seen else e)
        entries = tuple(new_entries)
    if not counts:
        return cand, None
    # the estimate stays an estimate; the composer measures the rendered text exactly
    new = replace(cand, content=body, content_hash="", hunks=hunks, entries=entries)
    spans = sum(counts.values())
    return new, Redaction(cand.id, cand.kind, cand.lane, spans, tuple(sorted(counts.items())))
