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
from itertools import compress, repeat
from operator import contains
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

        Equivalent to calling :meth:`first` on each.
        """
        best = [len(self.rules)] * len(candidates)
        hits = self.matches(
            [c.id for c in candidates],
            [c.kind for c in candidates],
            [c.lane for c in candidates],
            [c.path for c in candidates],
        )
        for position, index in hits.items():
            best[position] = index
        return best

    def matches(
        self,
        ids: Sequence[str],
        kinds: Sequence[str],
        lanes: Sequence[str],
        paths: Sequence[str],
    ) -> dict[int, int]:
        """Position -> index of the first matching rule, for the candidates that match.

        Candidates come as columns (one sequence per field). Each table is tested
        over a whole column with ``map``/``compress``, so the per-candidate work
        runs in C and only the (few) matches reach Python: selection calls this
        on 10k+ candidates.
        """
        best: dict[int, int] = {}
        positions = range(len(ids))
        for table, column in ((self._ids, ids), (self._kinds, kinds), (self._lanes, lanes)):
            if table:
                for i in compress(positions, map(table.__contains__, column)):
                    index = table[column[i]]
                    if index < best.get(i, index + 1):
                        best[i] = index
        for index, test, literal in self._patterns:
            # an empty path never matches; the literal prefilter skips most paths in C
            maybe = map(contains, paths, repeat(literal)) if literal else map(bool, paths)
            for i in compress(positions, maybe):
                if index < best.get(i, index + 1) and paths[i] and test(paths[i]):
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
