"""The ``Source`` seam: one source per lane, turning a trigger into composer candidates.

A source is any object with a ``name``, the ``lanes`` it fills and a
``gather(ctx)`` method returning :class:`~codelibrarian.composer.types.Candidate`
values. Sources read the workspace through the :class:`SourceContext` they are
handed (never the clock: time is ``ctx.trigger.as_of``), so the same context
gives the same candidates.

Sources register through the ``codelibrarian.sources`` entry-point group; each
entry point names a class (or any zero-argument factory) returning a source.
The built-in sources are registered there too (see ``pyproject.toml``); the
table :data:`BUILTIN_SOURCES` lists the same entry points so a source checkout
that was never installed still composes, and an installed entry point of the
same name takes precedence.

Scores are integers in thousandths. Helpers here keep the rules shared by all
sources in one place: :func:`keyword_relevance`, :func:`clamp` and
:meth:`SourceContext.candidate`, which computes the HMAC id and the token
estimate.
"""

from __future__ import annotations

import functools
import importlib
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from ..composer.types import Candidate, DiffHunk, HistoryEntry
from ..config import Config
from ..errors import ConfigError
from ..index.storage import Storage
from ..tokens import Tokenizer
from ..trigger import Trigger, split_identifier
from ..workspace.git import FileDiff
from ..workspace.secrets import is_sensitive_path
from ..workspace.state import State

__all__ = [
    "BUILTIN_SOURCES",
    "ENTRY_POINT_GROUP",
    "PLACEHOLDER",
    "Source",
    "SourceContext",
    "clamp",
    "keyword_relevance",
    "load_sources",
    "read_text",
    "term_set",
]

ENTRY_POINT_GROUP = "codelibrarian.sources"

#: name -> "module:attribute", the same table as the pyproject entry points
BUILTIN_SOURCES: Mapping[str, str] = {
    "policy": "codelibrarian.sources.policy:PolicySource",
    "rules": "codelibrarian.sources.rules:RulesSource",
    "local": "codelibrarian.sources.local:LocalSource",
    "structure": "codelibrarian.sources.structure:StructureSource",
    "retrieved": "codelibrarian.sources.retrieved:RetrievedSource",
    "history": "codelibrarian.sources.history:HistorySource",
}

#: body of a candidate standing for a sensitive file (excluded by policy, never rendered)
PLACEHOLDER = "(content withheld: sensitive file)\n"

#: tokens a rendered header and fences add around a body (title counted separately)
HEADER_OVERHEAD = 12


@runtime_checkable
class Source(Protocol):
    """Produces candidates for one or more lanes from a :class:`SourceContext`."""

    @property
    def name(self) -> str:
        """Stable name (the entry-point name)."""
        ...

    def gather(self, ctx: SourceContext) -> Sequence[Candidate]:
        """Candidates for this trigger; must be deterministic for a given context."""
        ...


def clamp(value: int, low: int = 0, high: int = 1000) -> int:
    """``value`` bounded to ``low..high`` (scores are thousandths)."""
    return max(low, min(high, int(value)))


_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def term_set(text: str) -> frozenset[str]:
    """Lower-cased words of ``text`` and their camel/snake parts."""
    out: set[str] = set()
    for match in _WORD.finditer(text):
        tok = match.group(0)
        out.add(tok.lower())
        out.update(split_identifier(tok))
    return frozenset(out)


def keyword_relevance(text: str, keywords: Sequence[str]) -> int:
    """Share of ``keywords`` found among the words of ``text``, in thousandths."""
    if not keywords:
        return 0
    terms = term_set(text)
    found = sum(1 for k in keywords if k in terms)
    return clamp(found * 1000 // len(keywords))


def read_text(root: Path, rel: str) -> str | None:
    """The text of a workspace file as sources see it (``None``: unreadable or binary)."""
    try:
        data = (root / rel).read_bytes()
    except OSError:
        return None
    return None if b"\x00" in data[:8192] else data.decode("utf-8", "replace")


@dataclass(slots=True)
class SourceContext:
    """Everything a source may look at, prepared once per composition by the API.

    ``changes`` is the current change (already parsed); ``files`` the workspace
    files (sorted relative paths); ``store`` the index (``None`` when the caller
    composes without one); ``recency`` maps a path to its git recency bucket
    against ``trigger.as_of``; ``budget`` the total token budget (sources size
    their candidates by it); ``memo`` is scratch space shared by the sources of
    one composition (e.g. the file ranking); ``memo["shared"]``, when the caller
    provides it, lives as long as the index generation (e.g. the combined
    graph). ``read`` returns a file's text (``None`` when it is missing, binary
    or unreadable) and caches it for the other sources; ``sensitive`` says
    whether a path must never be read (the policy engine's rule).
    """

    root: Path
    config: Config
    trigger: Trigger
    tokenizer: Tokenizer
    secret: bytes
    state: State
    changes: tuple[FileDiff, ...]
    files: tuple[str, ...]
    store: Storage | None = None
    budget: int = 8000
    recency: Mapping[str, int] = field(default_factory=dict)
    is_sensitive: Callable[[str], bool] | None = None
    memo: dict[str, Any] = field(default_factory=dict)
    _texts: dict[str, str | None] = field(default_factory=dict)
    _lines: dict[str, list[str]] = field(default_factory=dict)
    _file_set: frozenset[str] = field(default=frozenset())

    def __post_init__(self) -> None:
        self._file_set = frozenset(self.files)
        if self.is_sensitive is None:
            extra = tuple(self.config.policy.sensitive_patterns)
            self.is_sensitive = lambda p: is_sensitive_path(p, extra) is not None

    def sensitive(self, rel: str) -> bool:
        """Whether ``rel`` is a sensitive file (never read; excluded by policy)."""
        assert self.is_sensitive is not None
        return self.is_sensitive(rel)

    def has_file(self, rel: str) -> bool:
        return rel in self._file_set

    def read(self, rel: str) -> str | None:
        """The text of a workspace file (cached; ``None`` if not readable text)."""
        if rel in self._texts:
            return self._texts[rel]
        text = read_text(self.root, rel)
        self._texts[rel] = text
        return text

    def share_texts(self, texts: dict[str, str | None], lines: dict[str, list[str]]) -> None:
        """Use caches that outlive this composition (valid while the index generation is)."""
        self._texts = texts
        self._lines = lines

    def lines(self, rel: str) -> list[str]:
        """The file's lines (cached; empty when it cannot be read as text)."""
        rows = self._lines.get(rel)
        if rows is None:
            rows = (self.read(rel) or "").splitlines()
            self._lines[rel] = rows
        return rows

    def file_tokens(self, rel: str) -> int:
        """Exact token count of a whole file (the index stores only an estimate)."""
        return self.tokenizer.count(self.read(rel) or "")

    @property
    def changed_paths(self) -> tuple[str, ...]:
        """Paths of the current change (new names), sorted."""
        return tuple(sorted({d.path for d in self.changes}))

    def artifact_id(
        self, kind: str, lane: str, rel_path: str, chunk_index: int = 0, discriminator: str = ""
    ) -> str:
        from ..composer.fingerprint import artifact_id

        return artifact_id(self.secret, kind, lane, rel_path, chunk_index, discriminator)

    def estimate(self, title: str, content: str) -> int:
        """Token estimate of a body with its header (the composer measures exactly later)."""
        return self.tokenizer.count(content) + self.tokenizer.count(title) + HEADER_OVERHEAD

    def candidate(
        self,
        *,
        kind: str,
        lane: str,
        path: str,
        content: str,
        title: str,
        chunk_index: int = 0,
        discriminator: str = "",
        relevance: int = 0,
        specificity: int = 0,
        risk: int = 0,
        recency_bucket: int = 0,
        lines: tuple[int, int] | None = None,
        language: str | None = None,
        hunks: Iterable[DiffHunk] = (),
        entries: Iterable[HistoryEntry] = (),
        edges: Iterable[tuple[str, str]] = (),
        excerpt: Iterable[tuple[int, str]] = (),
        quotes: Iterable[str] = (),
    ) -> Candidate:
        """A candidate with its HMAC id and estimate; scores are clamped to their ranges.

        ``quotes``: the files whose lines ``content`` shows when ``path`` is not one
        file (a map), so the secret gate can check each excerpt against its file."""
        return Candidate(
            id=self.artifact_id(kind, lane, path, chunk_index, discriminator),
            kind=kind,
            lane=lane,
            token_estimate=self.estimate(title, content),
            recency_bucket=clamp(recency_bucket, 0, 5),
            relevance=clamp(relevance),
            specificity=clamp(specificity),
            risk=clamp(risk),
            path=path,
            content=content,
            lines=lines,
            title=title,
            language=language,
            hunks=tuple(hunks),
            entries=tuple(entries),
            edges=tuple(edges),
            excerpt=tuple(excerpt),
            quotes=tuple(quotes),
        )


def _load_target(name: str, target: str) -> Any:
    module, _, attr = target.partition(":")
    try:
        obj: Any = importlib.import_module(module)
        for part in attr.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(
            f"source {name!r} cannot be loaded from {target!r}: {exc}",
            hint="Reinstall the package that provides it, or remove its entry point.",
        ) from None
    return obj


def load_sources(names: Iterable[str] | None = None) -> tuple[Source, ...]:
    """Instantiate the registered sources (all, or only ``names``), sorted by name."""
    table: dict[str, Callable[[], Any]] = {}
    for name, target in BUILTIN_SOURCES.items():
        table[name] = functools.partial(_load_target, name, target)
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        table[ep.name] = ep.load
    wanted = sorted(table) if names is None else sorted(set(names))
    out: list[Source] = []
    for name in wanted:
        if name not in table:
            raise ConfigError(
                f"unknown source {name!r}",
                hint=f"Registered sources: {', '.join(sorted(table))}.",
            )
        factory = table[name]()
        source = factory() if callable(factory) else factory
        if not isinstance(source, Source):
            raise ConfigError(
                f"source {name!r} does not implement the Source protocol",
                hint="It needs a 'name' and a 'gather(ctx)' method.",
            )
        out.append(source)
    return tuple(out)
