"""The secret gate: the one place every text leaving the library passes.

A pack, a map, a query snippet, an explanation, an MCP result, a Local Context
Pack, a handoff, a decision sidecar, an error message — before any of them is
returned, written or sent, its text goes through :class:`SecretGate`:

* **paths** — :meth:`SecretGate.sensitive_rule` answers whether a file is kept
  out altogether (``.env*``, keys, keystores, credential files, kubeconfigs, ...
  plus ``[policy] sensitive_patterns``; see :mod:`.workspace.secrets`);
* **text** — :meth:`SecretGate.clean` replaces every secret span with
  ``[REDACTED:<rule>]``. Given the ``source`` the text was cut from (the whole
  file), it also redacts what the excerpt alone cannot show is secret: one line
  of a PEM/PGP key body without its BEGIN/END lines, a token cut in half by a
  signature or a token budget. Any run of 8 characters (4 of them letters or
  digits) that lies inside a secret of the source is redacted wherever it
  appears in the excerpt;
* **structures** — :meth:`SecretGate.clean_value` walks a JSON-like value
  (dicts, lists, strings) and cleans every string;
* **diffs** — :meth:`SecretGate.clean_diff` withholds the changed lines of
  sensitive files in a unified diff (line counts kept) and redacts the rest.

Every redaction is recorded as a :class:`GateDecision` — surface, kind, id,
reason, span count per rule — never the secret, never the path. Callers that
report what they did pass a :class:`RedactionLog` and put its
:meth:`~RedactionLog.summary` in their result.

The gate is pure (no files, clock or environment): callers hand it the texts.
Scanning a whole source is the costly part; a :class:`SpanStore` (the workspace
gives one that persists in ``.librarian/cache``) remembers each source's secret
spans — offsets and rule names, never text — by content digest.
``[policy] scan_secrets = false`` turns content scanning off (paths still
apply). See docs/secrets.md for how new surfaces use it.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter, OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from .workspace.secrets import (
    SecretFinding,
    findings_of,
    is_sensitive_path,
    redact,
    scan_text,
    scan_with_terms,
)

__all__ = [
    "GRAM",
    "GateDecision",
    "RedactionLog",
    "SecretGate",
    "SpanStore",
]

#: length of the character runs matched against a source's secrets
GRAM = 8
_GRAM_ALNUM = 4
_SOURCE_CACHE = 4096
#: texts whose own findings are remembered (a resident server composes the same
#: excerpts again and again; looking a text up costs a hash, scanning it a regex pass)
_TEXT_CACHE = 2048
#: recent texts whose lines and scan terms are kept, for a text of their lines scanned next
_LINES_CACHE = 16
_DIFF_FILE = re.compile(r"^diff --git a/(.*?) b/(.*)$")
_PLUS_PATH = re.compile(r"^\+\+\+ (?:b/)?(.*)$")


#: a source's secrets: ``(start, end, rule)`` in order
Spans = tuple[tuple[int, int, str], ...]


class SpanStore(Protocol):
    """Secret spans of texts already scanned, by content digest (16 bytes)."""

    def get(self, digest: bytes) -> Spans | None: ...

    def put(self, digest: bytes, spans: Spans) -> None: ...


@dataclass(frozen=True, slots=True)
class GateDecision:
    """One redaction: where the text was going, what it was, and counts only."""

    surface: str  # "pack", "map", "query", "lcp", "handoff", "sidecar", "mcp", "error", ...
    kind: str  # "candidate", "signature", "snippet", "task", "diff", "note", "document", ...
    id: str  # a stable id of the subject (artifact id, chunk id, ...) or ""
    reason: str  # "secret_redacted" or "sensitive_file_withheld"
    spans: int
    rules: tuple[tuple[str, int], ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "surface": self.surface,
            "kind": self.kind,
            "id": self.id,
            "reason": self.reason,
            "spans": self.spans,
            "rules": dict(self.rules),
        }


@dataclass(slots=True)
class RedactionLog:
    """Decisions made for one operation (a map, a query, a pack, ...)."""

    decisions: list[GateDecision] = field(default_factory=list)

    def add(self, decision: GateDecision) -> None:
        self.decisions.append(decision)

    @property
    def spans(self) -> int:
        return sum(d.spans for d in self.decisions if d.reason == "secret_redacted")

    def summary(self) -> dict[str, Any]:
        """``{"spans", "withheld", "rules"}``: the counts a result reports."""
        rules: Counter[str] = Counter()
        for d in self.decisions:
            for name, n in d.rules:
                rules[name] += n
        return {
            "spans": self.spans,
            "withheld": sum(1 for d in self.decisions if d.reason == "sensitive_file_withheld"),
            "rules": dict(sorted(rules.items())),
        }


def _alnum(gram: str) -> int:
    return sum(1 for c in gram if c.isalnum())


class SecretGate:
    """Sensitive-path rules and secret redaction for every outgoing text.

    ``sensitive_patterns`` are extra gitignore-style patterns (configuration);
    ``scan`` false turns content scanning off. Cheap to build; keeps a small
    cache of the secrets found in recent sources (by content digest).
    """

    def __init__(
        self,
        *,
        sensitive_patterns: Sequence[str] = (),
        scan: bool = True,
        spans: SpanStore | None = None,
    ) -> None:
        self._extra = tuple(sensitive_patterns)
        self.scanning = scan
        self._rules: dict[str, str | None] = {}
        self._sources: OrderedDict[bytes, dict[str, str]] = OrderedDict()
        #: the same caches keyed by the text itself: a source read once per index
        #: generation is the same string object on every call, whose hash Python keeps
        self._source_texts: OrderedDict[str, dict[str, str]] = OrderedDict()
        self._own: OrderedDict[str, tuple[SecretFinding, ...]] = OrderedDict()
        #: the lines and scan terms of the most recent texts scanned: a text made of
        #: some of their lines (a candidate's excerpt after its body) holds no term
        #: they do not, so only theirs are searched for (every term is within a line)
        #: (the text's lines are split only when another text is checked against it)
        self._lines: OrderedDict[str, tuple[frozenset[str] | None, frozenset[str]]] = OrderedDict()
        self._spans = spans

    # ---------------------------------------------------------------- paths

    def sensitive_rule(self, path: str) -> str | None:
        """The sensitive-path rule ``path`` matches, or None (state files never match)."""
        if not path or path.startswith(".librarian/"):
            return None
        rule = self._rules.get(path, "")
        if rule == "":
            rule = is_sensitive_path(path, self._extra)
            if len(self._rules) > 65_536:
                self._rules.clear()
            self._rules[path] = rule
        return rule

    def is_sensitive(self, path: str) -> bool:
        return self.sensitive_rule(path) is not None

    def admit(
        self,
        path: str,
        *,
        log: RedactionLog | None = None,
        surface: str = "",
        kind: str = "file",
        id: str = "",
    ) -> bool:
        """False (and a ``sensitive_file_withheld`` decision) for a sensitive ``path``."""
        rule = self.sensitive_rule(path)
        if rule is None:
            return True
        if log is not None:
            log.add(GateDecision(surface, kind, id, "sensitive_file_withheld", 0, ((rule, 1),)))
        return False

    # ----------------------------------------------------------------- text

    def scan(
        self,
        text: str,
        *,
        source: str | None = None,
        sources: Sequence[str] = (),
        within: str | None = None,
    ) -> tuple[SecretFinding, ...]:
        """Secret spans in ``text``: its own findings, plus runs that lie inside a
        secret of ``source`` (the whole text ``text`` was cut from) or of any of
        ``sources`` (the files a text quotes lines of).

        ``within``: a text scanned just before that likely holds every line of
        ``text`` (a candidate's body, for its excerpt). Checked, never trusted: when
        it does, the scan searches only for the terms found in it; the findings are
        the same either way."""
        if not self.scanning or not text:
            return ()
        own = self._own_findings(text, within)
        texts = [s for s in (source, *sources) if s is not None and s != text]
        grams: dict[str, str] = {}
        for src in texts:
            for gram, rule in self._source_grams(src).items():
                grams.setdefault(gram, rule)
        if not grams:
            return own
        extra = _gram_spans(text, grams)
        if not extra:
            return own
        # the text's own findings first, so their rules name the merged spans
        return findings_of(text, [(f.start, f.end, f.rule) for f in own] + extra)

    def clean(
        self,
        text: str,
        *,
        surface: str,
        kind: str = "text",
        id: str = "",
        source: str | None = None,
        sources: Sequence[str] = (),
        within: str | None = None,
        log: RedactionLog | None = None,
    ) -> str:
        """``text`` with every secret span replaced by ``[REDACTED:<rule>]`` (``source``,
        ``sources``, ``within``: see :meth:`scan`)."""
        findings = self.scan(text, source=source, sources=sources, within=within)
        if not findings:
            return text
        if log is not None:
            log.add(_decision(surface, kind, id, findings))
        return redact(text, findings)

    def clean_many(
        self,
        texts: Iterable[str],
        *,
        surface: str,
        kind: str = "text",
        id: str = "",
        log: RedactionLog | None = None,
    ) -> tuple[str, ...]:
        """Each of ``texts`` cleaned; one decision for all of them."""
        local = RedactionLog()
        out = tuple(self.clean(t, surface=surface, kind=kind, id=id, log=local) for t in texts)
        _fold(log, local, surface, kind, id)
        return out

    def clean_value(
        self,
        value: Any,
        *,
        surface: str,
        kind: str = "document",
        id: str = "",
        log: RedactionLog | None = None,
    ) -> Any:
        """A JSON-like value with every string (keys too) cleaned; one decision for all."""
        local = RedactionLog()
        out = self._walk(value, surface, kind, id, local)
        _fold(log, local, surface, kind, id)
        return out

    def _walk(self, value: Any, surface: str, kind: str, id: str, log: RedactionLog) -> Any:
        if isinstance(value, str):
            return self.clean(value, surface=surface, kind=kind, id=id, log=log)
        if isinstance(value, dict):
            return {
                self._walk(k, surface, kind, id, log): self._walk(v, surface, kind, id, log)
                for k, v in value.items()
            }
        if isinstance(value, list | tuple):
            items = [self._walk(v, surface, kind, id, log) for v in value]
            return items if isinstance(value, list) else tuple(items)
        return value

    def clean_diff(
        self, diff_text: str, *, surface: str, id: str = "", log: RedactionLog | None = None
    ) -> str:
        """A unified diff with sensitive files' lines withheld and secrets redacted.

        Lines of a sensitive file's section keep their first character (``+``,
        ``-``, space) and become ``[REDACTED:sensitive_file]``, so the diff still
        parses and counts the same lines; its hunk headers keep only their line
        ranges (git appends a line of the file to them). Other sections are
        scanned whole.
        """
        if not diff_text:
            return diff_text
        local = RedactionLog()
        out: list[str] = []
        for path, section in _diff_sections(diff_text):
            rule = self.sensitive_rule(path) if path else None
            if rule is None:
                out.append(self.clean(section, surface=surface, kind="diff", id=id, log=local))
                continue
            local.add(GateDecision(surface, "diff", id, "sensitive_file_withheld", 0, ((rule, 1),)))
            out.append(_withhold(section))
        if log is not None and local.decisions:
            for d in local.decisions:
                log.add(d)
        return "".join(out)

    # -------------------------------------------------------------- sources

    def warm_source(self, source: str) -> None:
        """Scan ``source`` (a whole file) now, so a later :meth:`scan` that checks an
        excerpt against it finds its secrets remembered (and the span store keeps
        them). The same work ``scan`` would do; it never changes a finding."""
        if self.scanning and source:
            self._source_grams_by_digest(source)

    def _own_findings(self, text: str, within: str | None = None) -> tuple[SecretFinding, ...]:
        """``scan_text(text)``, remembered for the most recent texts (``within``: see
        :meth:`scan`)."""
        found = self._own.get(text)
        if found is not None:
            self._own.move_to_end(text)
            return found
        terms = None
        if within is not None:
            known = self._lines.get(within)
            if known is not None:
                lines, terms = known
                if lines is None:  # its lines, the first time a text is checked against it
                    lines = frozenset(within.split("\n"))
                    self._lines[within] = (lines, terms)
                if not lines.issuperset(text.split("\n")):
                    terms = None
        found, present = scan_with_terms(text, terms=terms)
        self._lines[text] = (None, present)
        if len(self._lines) > _LINES_CACHE:
            self._lines.popitem(last=False)
        self._own[text] = found
        if len(self._own) > _TEXT_CACHE:
            self._own.popitem(last=False)
        return found

    def _source_grams(self, source: str) -> dict[str, str]:
        by_text = self._source_texts.get(source)
        if by_text is not None:
            self._source_texts.move_to_end(source)
            return by_text
        grams = self._source_grams_by_digest(source)
        self._source_texts[source] = grams
        if len(self._source_texts) > _SOURCE_CACHE // 16:
            self._source_texts.popitem(last=False)
        return grams

    def _source_grams_by_digest(self, source: str) -> dict[str, str]:
        key = hashlib.blake2b(source.encode("utf-8", "surrogatepass"), digest_size=16).digest()
        cached = self._sources.get(key)
        if cached is not None:
            self._sources.move_to_end(key)
            return cached
        found = self._spans.get(key) if self._spans is not None else None
        if found is None:
            found = tuple((f.start, f.end, f.rule) for f in scan_text(source))
            if self._spans is not None:
                self._spans.put(key, found)
        grams: dict[str, str] = {}
        for start, end, rule in found:
            span = source[start:end]
            for i in range(len(span) - GRAM + 1):
                gram = span[i : i + GRAM]
                if _alnum(gram) >= _GRAM_ALNUM:
                    grams.setdefault(gram, rule)
        self._sources[key] = grams
        if len(self._sources) > _SOURCE_CACHE:
            self._sources.popitem(last=False)
        return grams


def _gram_spans(text: str, grams: dict[str, str]) -> list[tuple[int, int, str]]:
    """Spans of ``text`` covered by runs found in ``grams`` (merged)."""
    spans: list[tuple[int, int, str]] = []
    for i in range(len(text) - GRAM + 1):
        rule = grams.get(text[i : i + GRAM])
        if rule is None:
            continue
        if spans and i <= spans[-1][1]:
            s, _, r = spans[-1]
            spans[-1] = (s, i + GRAM, r)
        else:
            spans.append((i, i + GRAM, rule))
    return spans


def _decision(surface: str, kind: str, id: str, findings: Sequence[SecretFinding]) -> GateDecision:
    counts = Counter(f.rule for f in findings)
    return GateDecision(
        surface, kind, id, "secret_redacted", len(findings), tuple(sorted(counts.items()))
    )


def _fold(log: RedactionLog | None, local: RedactionLog, surface: str, kind: str, id: str) -> None:
    """``local``'s decisions as one decision in ``log`` (nothing when there were none)."""
    if log is not None and local.decisions:
        log.add(_merge(surface, kind, id, local.decisions))


def _merge(surface: str, kind: str, id: str, decisions: Sequence[GateDecision]) -> GateDecision:
    counts: Counter[str] = Counter()
    for d in decisions:
        for name, n in d.rules:
            counts[name] += n
    withheld = all(d.reason == "sensitive_file_withheld" for d in decisions)
    return GateDecision(
        surface,
        kind,
        id,
        "sensitive_file_withheld" if withheld else "secret_redacted",
        sum(d.spans for d in decisions),
        tuple(sorted(counts.items())),
    )


def _diff_sections(diff_text: str) -> list[tuple[str, str]]:
    """(path, text) per file section of a unified diff (git or plain); a preamble has path ""."""
    lines = diff_text.splitlines(keepends=True)
    sections: list[tuple[str, list[str]]] = [("", [])]
    for i, line in enumerate(lines):
        m = _DIFF_FILE.match(line.rstrip("\r\n"))
        if m is not None:
            sections.append((m.group(2), [line]))
            continue
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if line.startswith("--- ") and nxt.startswith("+++ "):
            pm = _PLUS_PATH.match(nxt.rstrip("\r\n"))
            path = pm.group(1).split("\t")[0] if pm is not None else ""
            if path == "/dev/null":
                path = line[4:].rstrip("\r\n").split("\t")[0].removeprefix("a/")
            if sections[-1][0] and any(x.startswith("@@") for x in sections[-1][1]):
                sections.append((path, []))  # a plain diff: the next file starts here
            elif not sections[-1][0]:
                sections[-1] = (path, sections[-1][1])
        sections[-1][1].append(line)
    return [(path, "".join(body)) for path, body in sections if body]


def _withhold(section: str) -> str:
    """Keep the headers of a diff section; every hunk line becomes a placeholder."""
    out: list[str] = []
    in_hunk = False
    for line in section.splitlines(keepends=True):
        if line.startswith("@@"):
            in_hunk = True
            # the range only: git puts a line of the file after it as context
            close = line.find("@@", 2)
            out.append((line[: close + 2] if close > 0 else line.rstrip("\r\n")) + "\n")
            continue
        if in_hunk and line[:1] in ("+", "-", " "):
            newline = "\n" if line.endswith("\n") else ""
            out.append(f"{line[:1]}[REDACTED:sensitive_file]{newline}")
            continue
        out.append(line)
    return "".join(out)
