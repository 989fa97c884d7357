"""Constraints from the policy engine: must-include, must-exclude, pinned, lane requirements.

Matchers select candidates by ``id``, ``kind``, ``lane`` or a gitignore-style
``pattern`` on the candidate's internal path. The seed's pattern matcher always
returned ``false``; here patterns use ``pathspec``'s gitignore semantics
(``*.env``, ``secrets/``, ``**/id_rsa*``, negation with ``!``), evaluated on the
internal path only — a pattern never sees nor logs anything else.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

import pathspec

from ..config import LANES
from ..errors import UsageError
from .types import KIND_PRIORITY, Candidate

__all__ = [
    "EMPTY_CONSTRAINTS",
    "ComposerConstraints",
    "Constraint",
    "LaneRequirement",
    "Matcher",
    "RuleSet",
    "first_match",
    "matches",
    "path_matcher",
]

MatcherType = Literal["id", "kind", "lane", "pattern"]


@dataclass(frozen=True, slots=True)
class Matcher:
    type: MatcherType
    value: str

    def __post_init__(self) -> None:
        if self.type == "kind" and self.value not in KIND_PRIORITY:
            raise UsageError(f"unknown kind {self.value!r} in a matcher")
        if self.type == "lane" and self.value not in LANES:
            raise UsageError(f"unknown lane {self.value!r} in a matcher")
        if self.type == "pattern":
            _spec(self.value)  # fail early on a malformed pattern
        if self.type not in ("id", "kind", "lane", "pattern"):
            raise UsageError(f"unknown matcher type {self.type!r}")

    @staticmethod
    def id(value: str) -> Matcher:
        return Matcher("id", value)

    @staticmethod
    def kind(value: str) -> Matcher:
        return Matcher("kind", value)

    @staticmethod
    def lane(value: str) -> Matcher:
        return Matcher("lane", value)

    @staticmethod
    def pattern(value: str) -> Matcher:
        return Matcher("pattern", value)

    def to_dict(self) -> dict[str, str]:
        return {"type": self.type, "value": self.value}


@dataclass(frozen=True, slots=True)
class Constraint:
    match: Matcher
    reason: str

    def to_dict(self) -> dict[str, object]:
        return {"match": self.match.to_dict(), "reason": self.reason}


@dataclass(frozen=True, slots=True)
class LaneRequirement:
    """ "The rules lane must have at least 300 tokens", with the reason."""

    lane: str
    min_tokens: int
    reason: str

    def __post_init__(self) -> None:
        if self.lane not in LANES:
            raise UsageError(f"unknown lane {self.lane!r} in a lane requirement")
        if self.min_tokens < 0:
            raise UsageError(f"lane requirement for {self.lane}: min_tokens must be >= 0")

    def to_dict(self) -> dict[str, object]:
        return {"lane": self.lane, "min_tokens": self.min_tokens, "reason": self.reason}


@dataclass(frozen=True, slots=True)
class ComposerConstraints:
    must_include: tuple[Constraint, ...] = ()
    must_exclude: tuple[Constraint, ...] = ()
    pinned: tuple[Constraint, ...] = ()
    lane_requirements: tuple[LaneRequirement, ...] = ()

    @staticmethod
    def of(
        *,
        must_include: Iterable[Constraint] = (),
        must_exclude: Iterable[Constraint] = (),
        pinned: Iterable[Constraint] = (),
        lane_requirements: Iterable[LaneRequirement] = (),
    ) -> ComposerConstraints:
        return ComposerConstraints(
            tuple(must_include), tuple(must_exclude), tuple(pinned), tuple(lane_requirements)
        )

    def to_dict(self) -> dict[str, object]:
        """Order-preserving form (constraint order decides which reason is reported)."""
        return {
            "must_include": [c.to_dict() for c in self.must_include],
            "must_exclude": [c.to_dict() for c in self.must_exclude],
            "pinned": [c.to_dict() for c in self.pinned],
            "lane_requirements": [r.to_dict() for r in self.lane_requirements],
        }

    def required_tokens(self, lane: str) -> int:
        """The largest requirement for ``lane`` (requirements do not add up)."""
        return max((r.min_tokens for r in self.lane_requirements if r.lane == lane), default=0)


EMPTY_CONSTRAINTS = ComposerConstraints()


class RuleSet:
    """Constraints compiled for fast lookup; ``first`` keeps "first rule in order wins"."""

    __slots__ = ("_ids", "_kinds", "_lanes", "_patterns", "rules")

    def __init__(self, rules: Sequence[Constraint]) -> None:
        self.rules = tuple(rules)
        self._ids: dict[str, int] = {}
        self._kinds: dict[str, int] = {}
        self._lanes: dict[str, int] = {}
        self._patterns: list[tuple[int, Callable[[str], bool], str]] = []
        for index, rule in enumerate(self.rules):
            kind, value = rule.match.type, rule.match.value
            if kind == "pattern":
                self._patterns.append((index, path_matcher(value), _required_literal(value)))
            else:
                table = {"id": self._ids, "kind": self._kinds, "lane": self._lanes}[kind]
                table.setdefault(value, index)

    def __bool__(self) -> bool:
        return bool(self.rules)

    def first(self, candidate: Candidate) -> Constraint | None:
        """Same answer as :func:`first_match`, without scanning every rule."""
        best = len(self.rules)
        if self._ids:
            index = self._ids.get(candidate.id)
            if index is not None:
                best = index
        if self._kinds:
            index = self._kinds.get(candidate.kind)
            if index is not None and index < best:
                best = index
        if self._lanes:
            index = self._lanes.get(candidate.lane)
            if index is not None and index < best:
                best = index
        if self._patterns and candidate.path:
            for index, test, _ in self._patterns:
                if index >= best:
                    break
                if test(candidate.path):
                    best = index
                    break
        return self.rules[best] if best < len(self.rules) else None

    def resolve(self, candidates: Sequence[Candidate]) -> list[int]:
        """For each candidate, the index of its first matching rule (``len(rules)`` if none).

        Equivalent to calling :meth:`first` on each, but rule by rule over the whole
        list, which keeps the per-candidate work in comprehensions. Candidate ids
        must be unique (selection de-duplicates first).
        """
        none = len(self.rules)
        if not none:
            return [none] * len(candidates)
        kinds, lanes = self._kinds, self._lanes
        best = [kinds.get(c.kind, none) for c in candidates] if kinds else [none] * len(candidates)
        if lanes:
            best = [
                hit if (hit := lanes.get(c.lane, none)) < b else b
                for b, c in zip(best, candidates, strict=True)
            ]
        if self._ids:
            position = {c.id: i for i, c in enumerate(candidates)}
            for ident, index in self._ids.items():
                i = position.get(ident)
                if i is not None and index < best[i]:
                    best[i] = index
        for index, test, literal in self._patterns:
            for i in [i for i, c in enumerate(candidates) if literal in c.path and c.path]:
                if index < best[i] and test(candidates[i].path):
                    best[i] = index
        return best


@lru_cache(maxsize=1024)
def path_matcher(pattern: str) -> Callable[[str], bool]:
    """A predicate on POSIX relative paths with pathspec's gitignore semantics.

    A single gitignore line compiles to one regex; using it directly is several
    times faster than ``PathSpec.match_file`` (which normalizes and loops).
    """
    spec = _spec(pattern)
    patterns = list(spec.patterns)
    if len(patterns) == 1:
        only = patterns[0]
        regex = getattr(only, "regex", None)
        include = getattr(only, "include", None)
        if include is None or include is False:
            return lambda path: False  # blank, comment or a lone negation matches nothing
        if regex is not None:
            search = regex.search
            literal = _required_literal(pattern)
            if literal:
                # any matching path contains the pattern's longest literal run; a C
                # substring test rejects most paths before the (backtracking) regex
                return lambda path: literal in path and search(path) is not None
            return lambda path: search(path) is not None
    return lambda path: bool(spec.match_file(path))


def _required_literal(pattern: str) -> str:
    """The longest run of plain characters every matching path must contain ("" if unsure)."""
    text = pattern.strip()
    if not text or any(ch in text for ch in "\\[]") or text.startswith(("#", "!")):
        return ""  # escapes and character classes: no literal is guaranteed
    pieces = [""]
    for ch in text:
        if ch in "*?/":
            pieces.append("")
        else:
            pieces[-1] += ch
    return max(pieces, key=len)


@lru_cache(maxsize=1024)
def _spec(pattern: str) -> pathspec.GitIgnoreSpec:
    try:
        return pathspec.GitIgnoreSpec.from_lines([pattern])
    except Exception as exc:  # pathspec raises several types for bad patterns
        raise UsageError(
            f"invalid gitignore-style pattern {pattern!r}: {exc}",
            hint="Use gitignore syntax, e.g. '*.env', 'secrets/', '**/id_rsa*'.",
        ) from None


def matches(candidate: Candidate, matcher: Matcher) -> bool:
    """Whether ``matcher`` selects ``candidate``."""
    if matcher.type == "id":
        return candidate.id == matcher.value
    if matcher.type == "kind":
        return candidate.kind == matcher.value
    if matcher.type == "lane":
        return candidate.lane == matcher.value
    if not candidate.path:
        return False
    return path_matcher(matcher.value)(candidate.path)


def first_match(candidate: Candidate, constraints: Iterable[Constraint]) -> Constraint | None:
    """The first constraint (in the given order) whose matcher selects ``candidate``."""
    for constraint in constraints:
        if matches(candidate, constraint.match):
            return constraint
    return None
