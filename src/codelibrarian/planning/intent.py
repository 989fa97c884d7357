"""Intent decomposition (seed 004 P19): what a request asks, about what, how urgently, how wide.

:func:`decompose` reads one request against the cue tables of :mod:`.lexicon` and
returns a :class:`DecomposedIntent`:

* **action** — a word of ``techniques.vocabulary.ACTIONS`` (``debug``, ``review``,
  ``update`` ...), with every action that has evidence and its per-mille weight
  (the strongest is 1000, the others relative to it), and the cue phrases that
  matched; ``category`` is the seed's coarse class of it (investigate, verify,
  construct, transform, analyze);
* **domains** — words of ``DOMAINS`` (``auth``, ``security``, ``database`` ...),
  strongest first, or ``general`` when nothing names a domain;
* **urgency** — critical, high, normal (the default) or low;
* **scope** — local, module (the default), cross-cutting or system-wide;
* **constraints** — clauses that restrict the work ("keeping every public import
  unchanged", "at least 80%"), in the order written;
* **confidence** — per mille: how strong and how unambiguous the action evidence is.

When no action cue matches, the caller may pass ``nearest``: the actions of the
patterns whose example intents are most similar (from the embedding model or the
keyword fallback). The action is then taken from them, marked as such, and the
confidence is capped. Pure and deterministic: integers decide every order, and
ties break by the vocabulary's own order.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ..techniques.vocabulary import ACTIONS, DOMAINS
from .lexicon import (
    ACTION_CUES,
    CONSTRAINT_CUES,
    DOMAIN_CUES,
    SCOPE_CUES,
    SCOPES,
    URGENCIES,
    URGENCY_CUES,
    Cue,
)

__all__ = [
    "CATEGORY",
    "DecomposedIntent",
    "Source",
    "Weighted",
    "decompose",
    "normalize_text",
]

#: the seed's five coarse actions, for each word of the vocabulary
CATEGORY: Mapping[str, str] = {
    "investigate": "investigate", "debug": "investigate", "respond": "investigate",
    "optimize": "investigate", "verify": "verify", "review": "verify", "audit": "verify",
    "release": "verify", "build": "construct", "test": "construct", "document": "construct",
    "design": "construct", "coordinate": "construct", "refactor": "transform",
    "migrate": "transform", "update": "transform", "improve": "transform",
    "analyze": "analyze", "onboard": "analyze",
}  # fmt: skip

Source = Literal["vocabulary", "nearest_examples", "llm"]

#: domains kept (relative weight at least this, per mille of the strongest), at most four
_DOMAIN_FLOOR = 300
_MAX_DOMAINS = 4
#: the most a decomposition whose action came from nearest examples may claim
_NEAREST_CAP = 450
_MAX_CONSTRAINT_CHARS = 120


@dataclass(frozen=True, slots=True)
class Weighted:
    """A vocabulary word with its per-mille weight and the phrases that spoke for it."""

    word: str
    weight: int
    cues: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"word": self.word, "weight_per_mille": self.weight, "cues": list(self.cues)}


@dataclass(frozen=True, slots=True)
class DecomposedIntent:
    text: str
    action: str
    actions: tuple[Weighted, ...]
    domains: tuple[Weighted, ...]
    urgency: str
    scope: str
    constraints: tuple[str, ...]
    confidence: int
    source: Source = "vocabulary"
    notes: tuple[str, ...] = field(default=())
    #: the phrases that set the urgency and the scope (empty: the default was taken)
    urgency_cues: tuple[str, ...] = ()
    scope_cues: tuple[str, ...] = ()

    @property
    def category(self) -> str:
        return CATEGORY.get(self.action, "analyze")

    def action_weight(self, action: str) -> int:
        return next((a.weight for a in self.actions if a.word == action), 0)

    @property
    def domain_words(self) -> tuple[str, ...]:
        return tuple(d.word for d in self.domains)

    def to_dict(self) -> dict[str, Any]:
        return {
            "action": self.action,
            "category": self.category,
            "actions": [a.to_dict() for a in self.actions],
            "domains": [d.to_dict() for d in self.domains],
            "urgency": self.urgency,
            "urgency_cues": list(self.urgency_cues),
            "scope": self.scope,
            "scope_cues": list(self.scope_cues),
            "constraints": list(self.constraints),
            "confidence_per_mille": self.confidence,
            "source": self.source,
            "notes": list(self.notes),
        }


_QUOTES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u201c": '"', "\u201d": '"',
                         "\u2013": "-", "\u2014": "-", "\u2192": "->"})  # fmt: skip


def normalize_text(text: str) -> str:
    """Lower case, plain quotes and dashes, single spaces."""
    return " ".join(text.translate(_QUOTES).lower().split())


def _score(table: Mapping[str, tuple[Cue, ...]], text: str) -> dict[str, tuple[int, list[str]]]:
    """``word -> (summed weight, matched phrases)`` for every word with a matching cue."""
    out: dict[str, tuple[int, list[str]]] = {}
    for word, cues in table.items():
        total = 0
        phrases: list[str] = []
        for cue in cues:
            m = cue.pattern.search(text)
            if m is None:
                continue
            total += cue.weight
            phrase = m.group(0).strip()
            if cue.weight > 0 and phrase and phrase not in phrases:
                phrases.append(phrase)
        if phrases or total:
            out[word] = (total, phrases)
    return out


def _ranked(
    scores: Mapping[str, tuple[int, list[str]]], order: Sequence[str]
) -> list[tuple[str, int, tuple[str, ...]]]:
    """Positive words, strongest first; ties by the vocabulary's order."""
    pos = {w: i for i, w in enumerate(order)}
    items = [(w, s, tuple(p)) for w, (s, p) in scores.items() if s > 0]
    return sorted(items, key=lambda t: (-t[1], pos.get(t[0], len(pos)), t[0]))


def _relative(items: list[tuple[str, int, tuple[str, ...]]]) -> tuple[Weighted, ...]:
    if not items:
        return ()
    top = items[0][1]
    return tuple(Weighted(w, s * 1000 // top, cues) for w, s, cues in items)


def _constraints(text: str) -> tuple[str, ...]:
    found: list[tuple[int, str]] = []
    for rx in CONSTRAINT_CUES:
        for m in rx.finditer(text):
            clause = m.group(0).strip()[:_MAX_CONSTRAINT_CHARS]
            if not any(start <= m.start() < start + len(c) for start, c in found):
                found.append((m.start(), clause))
    return tuple(c for _, c in sorted(found))


def _pick(
    scores: Mapping[str, tuple[int, list[str]]], order: Sequence[str], default: str
) -> tuple[str, tuple[str, ...]]:
    ranked = _ranked(scores, order)
    return (ranked[0][0], ranked[0][2]) if ranked else (default, ())


def decompose(
    text: str, *, nearest: Sequence[tuple[str, int]] = (), embeddings: bool = True
) -> DecomposedIntent:
    """Decompose ``text`` (see the module docstring).

    ``nearest``: ``(action, per-mille similarity)`` of the closest pattern examples,
    used only when no action cue matches. ``embeddings`` false (the keyword
    fallback) lowers the confidence by a fifth.
    """
    norm = normalize_text(text)
    notes: list[str] = []
    raw = _ranked(_score(ACTION_CUES, norm), ACTIONS)
    actions = _relative(raw)
    source: Source = "vocabulary"
    if actions:
        top = raw[0][1]
        second = raw[1][1] if len(raw) > 1 else 0
        strength = min(1000, top * 1000 // 800)
        margin = (top - second) * 1000 // top
        confidence = (strength + margin) // 2
    else:
        merged: dict[str, int] = {}
        for action, sim in nearest:
            if action in ACTIONS and sim > 0:
                merged[action] = max(merged.get(action, 0), sim)
        items: list[tuple[str, int, tuple[str, ...]]] = [(a, s, ()) for a, s in merged.items()]
        pos = {w: i for i, w in enumerate(ACTIONS)}
        items.sort(key=lambda t: (-t[1], pos[t[0]]))
        actions = _relative(items)
        source = "nearest_examples"
        notes.append("no action word matched: the action comes from the most similar examples")
        confidence = min(_NEAREST_CAP, actions[0].weight // 3 if actions else 0)
    if not actions:
        actions = (Weighted("analyze", 1000),)
        notes.append("nothing to go on: read as a request to analyze")
        confidence = 0
    domains = tuple(d for d in _relative(_ranked(_score(DOMAIN_CUES, norm), DOMAINS)))
    domains = tuple(d for d in domains if d.weight >= _DOMAIN_FLOOR)[:_MAX_DOMAINS]
    if not domains:
        domains = (Weighted("general", 1000),)
    if not embeddings:
        confidence = confidence * 4 // 5
    urgency, urgency_cues = _pick(_score(URGENCY_CUES, norm), URGENCIES, "normal")
    scope, scope_cues = _pick(_score(SCOPE_CUES, norm), SCOPES, "module")
    return DecomposedIntent(
        text=text,
        action=actions[0].word,
        actions=actions,
        domains=domains,
        urgency=urgency,
        scope=scope,
        constraints=_constraints(norm),
        confidence=max(0, min(1000, confidence)),
        source=source,
        notes=tuple(notes),
        urgency_cues=urgency_cues,
        scope_cues=scope_cues,
    )
