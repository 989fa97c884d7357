"""What asked for context: the task, the current change, the moment and the model.

A :class:`Trigger` is a frozen value. Everything that varies between two
compositions of the same workspace lives here, so the sources, the policy
engine and the composer can be replayed from it. The library never reads the
clock: ``as_of`` is given by the caller (the CLI takes it from the clock).

Keywords are derived from the task text deterministically when the caller gives
none: identifiers are kept whole and also split on camelCase and snake_case
boundaries, everything is lower-cased, stop words and one-letter tokens are
dropped, and the order is first occurrence.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from .errors import UsageError

__all__ = [
    "EVENTS",
    "Change",
    "Trigger",
    "derive_keywords",
    "identifiers_in",
    "split_identifier",
]

#: events a trigger may carry (free text is refused so cache keys stay meaningful)
EVENTS: tuple[str, ...] = (
    "manual",
    "file_saved",
    "git_commit",
    "config_changed",
    "rules_changed",
    "constraints_changed",
    "session_expired",
    "agent_request",
)

ChangeMode = Literal["auto", "base", "diff", "none"]

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:[./-][A-Za-z_][A-Za-z0-9_]*)*")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z0-9])|[A-Z]?[a-z0-9]+|[A-Z]+|[0-9]+")

_STOP_TEXT = """
    a about above after again against all also am an and any are as at be because been
    before being below between both but by can could did do does doing done down during
    each else few for from further get gets got had has have having he her here hers him
    his how i if in into is it its itself just let lets like make makes me more most must
    my need needs new no nor not now of off on once only or other our out over own please
    same she should so some such than that the their them then there these they this those
    through to too under until up us use used uses using very via want was we were what
    when where which while who why will with would you your yours
    add adds added fix fixes fixed change changes changed update updates updated remove
    removes removed support supports make sure way work works allow allows instead
    py js ts tsx jsx md rs go rb txt json toml yaml yml cfg ini
    """
_STOP_WORDS = frozenset(_STOP_TEXT.split())


def split_identifier(token: str) -> list[str]:
    """Lower-cased parts of an identifier: ``parseHTTPHeader_v2`` -> parse, http, header, v2.

    The parts of each piece between ``_ . / -``, found in one pass over the whole
    token: the pattern matches only letters and digits and looks ahead at letters
    and digits only, so no match spans or sees past a separator."""
    return [part.lower() for part in _CAMEL.findall(token)]


def identifiers_in(text: str) -> tuple[str, ...]:
    """Code-looking tokens of ``text`` in first-occurrence order, case kept.

    A token looks like code when it has an underscore, a dot or slash between
    names, an inner capital (camelCase) or is written in backticks.
    """
    seen: dict[str, None] = {}
    quoted = set(re.findall(r"`([^`\s]+)`", text))
    for match in _IDENT.finditer(text):
        tok = match.group(0).strip("./-")
        if not tok:
            continue
        codeish = (
            "_" in tok
            or "." in tok
            or "/" in tok
            or any(c.isupper() for c in tok[1:])
            or tok in quoted
        )
        if codeish and tok not in seen:
            seen[tok] = None
    return tuple(seen)


def derive_keywords(text: str, *, limit: int = 32) -> tuple[str, ...]:
    """Search keywords for a task: identifiers whole and split, stop words removed."""
    out: dict[str, None] = {}

    def _add(word: str) -> None:
        w = word.lower()
        if len(w) < 2 or w in _STOP_WORDS or w.isdigit() or w in out:
            return
        out[w] = None

    for match in _IDENT.finditer(text):
        tok = match.group(0).strip("./-")
        if not tok:
            continue
        parts = split_identifier(tok)
        if len(parts) > 1:
            for piece in re.split(r"[./-]+", tok):
                if "_" in piece or any(c.isupper() for c in piece[1:]):
                    _add(piece)
        for part in parts:
            _add(part)
        if len(out) >= limit:
            break
    return tuple(out)[:limit]


def _norm_path(path: str) -> str:
    p = path.strip().replace("\\", "/")
    while p.startswith("./"):
        p = p[2:]
    return p


@dataclass(frozen=True, slots=True)
class Change:
    """Where the current change comes from.

    ``auto``: staged + unstaged diff against HEAD; ``base``: the diff from
    ``base`` to the work tree; ``diff``: the unified diff in ``diff_text``;
    ``none``: no change is considered.
    """

    mode: ChangeMode = "auto"
    base: str | None = None
    diff_text: str | None = None

    def __post_init__(self) -> None:
        if self.mode == "base" and not self.base:
            raise UsageError("a 'base' change needs a revision", hint="Pass --base REV.")
        if self.mode == "diff" and self.diff_text is None:
            raise UsageError("a 'diff' change needs the diff text", hint="Pass --diff FILE.")
        if self.mode not in ("auto", "base", "diff", "none"):
            raise UsageError(f"unknown change mode {self.mode!r}")

    def to_dict(self) -> dict[str, Any]:
        return {"mode": self.mode, "base": self.base, "diff_text": self.diff_text}


@dataclass(frozen=True, slots=True)
class Trigger:
    """Everything that asked for this composition (see the module docstring)."""

    task: str
    as_of: int
    event: str = "manual"
    keywords: tuple[str, ...] = ()
    files: tuple[str, ...] = ()
    change: Change = field(default_factory=Change)
    commitish: str | None = None
    model: str = "gpt-4o"
    agent_role: str | None = None

    def __post_init__(self) -> None:
        if self.event not in EVENTS:
            raise UsageError(
                f"unknown trigger event {self.event!r}",
                hint=f"Use one of: {', '.join(EVENTS)}.",
            )
        if isinstance(self.as_of, bool) or not isinstance(self.as_of, int) or self.as_of < 0:
            raise UsageError("as_of must be a non-negative integer (epoch seconds)")
        if not self.keywords:
            object.__setattr__(self, "keywords", derive_keywords(self.task))
        files = tuple(sorted({_norm_path(f) for f in self.files if f.strip()}))
        object.__setattr__(self, "files", files)

    @classmethod
    def create(
        cls,
        task: str,
        *,
        as_of: int,
        event: str = "manual",
        keywords: Iterable[str] = (),
        files: Iterable[str] = (),
        base: str | None = None,
        diff_text: str | None = None,
        no_change: bool = False,
        commitish: str | None = None,
        model: str = "gpt-4o",
        agent_role: str | None = None,
    ) -> Trigger:
        """Build a trigger from loose arguments (``base`` and ``diff_text`` exclude each other)."""
        if base is not None and diff_text is not None:
            raise UsageError("give either a base revision or a diff, not both")
        if diff_text is not None:
            change = Change("diff", diff_text=diff_text)
        elif base is not None:
            change = Change("base", base=base)
        else:
            change = Change("none" if no_change else "auto")
        return cls(
            task=task,
            as_of=as_of,
            event=event,
            keywords=tuple(keywords),
            files=tuple(files),
            change=change,
            commitish=commitish,
            model=model,
            agent_role=agent_role,
        )

    @property
    def identifiers(self) -> tuple[str, ...]:
        """Code-looking tokens of the task, case kept (symbol look-ups use these)."""
        return identifiers_in(self.task)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able form (used by the private replay sidecar)."""
        return {
            "task": self.task,
            "as_of": self.as_of,
            "event": self.event,
            "keywords": list(self.keywords),
            "files": list(self.files),
            "change": self.change.to_dict(),
            "commitish": self.commitish,
            "model": self.model,
            "agent_role": self.agent_role,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Trigger:
        """Inverse of :meth:`to_dict`."""
        ch = data.get("change") or {}
        return cls(
            task=str(data["task"]),
            as_of=int(data["as_of"]),
            event=str(data.get("event", "manual")),
            keywords=tuple(str(k) for k in data.get("keywords", ())),
            files=tuple(str(f) for f in data.get("files", ())),
            change=Change(
                mode=ch.get("mode", "auto"), base=ch.get("base"), diff_text=ch.get("diff_text")
            ),
            commitish=data.get("commitish"),
            model=str(data.get("model", "gpt-4o")),
            agent_role=data.get("agent_role"),
        )
