"""Which language a file is in, and which grammar and tags query parse it.

Languages are picked by file extension (and a few file names). Files in other
languages are still indexed as text: chunks and full-text search, no symbols.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import PurePosixPath
from typing import Any

__all__ = ["LANGUAGES", "Language", "TagQueries", "language_for", "load_queries", "load_query"]


@dataclass(frozen=True, slots=True)
class Language:
    """A parseable language: our name, the grammar name and the query file stem."""

    name: str
    grammar: str
    query: str
    extensions: tuple[str, ...]


LANGUAGES: tuple[Language, ...] = (
    Language("python", "python", "python", (".py", ".pyi")),
    Language("javascript", "javascript", "javascript", (".js", ".jsx", ".mjs", ".cjs")),
    Language("typescript", "typescript", "typescript", (".ts", ".mts", ".cts")),
    Language("tsx", "tsx", "typescript", (".tsx",)),
    Language("go", "go", "go", (".go",)),
    Language("rust", "rust", "rust", (".rs",)),
    Language("java", "java", "java", (".java",)),
    Language("c", "c", "c", (".c", ".h")),
    Language("cpp", "cpp", "cpp", (".cc", ".cpp", ".cxx", ".c++", ".hh", ".hpp", ".hxx", ".h++")),
    Language("csharp", "csharp", "csharp", (".cs",)),
    Language("ruby", "ruby", "ruby", (".rb", ".rake", ".gemspec")),
    Language("php", "php", "php", (".php",)),
    Language("kotlin", "kotlin", "kotlin", (".kt", ".kts")),
)

_BY_EXT: dict[str, Language] = {ext: lang for lang in LANGUAGES for ext in lang.extensions}
_BY_NAME: dict[str, Language] = {lang.name: lang for lang in LANGUAGES}
_FILENAMES: dict[str, str] = {"Rakefile": "ruby", "Gemfile": "ruby"}

#: text files we index without a grammar, by extension (their language label)
_TEXT_KINDS: dict[str, str] = {
    ".md": "markdown",
    ".rst": "rst",
    ".txt": "text",
    ".toml": "toml",
    ".yaml": "yaml",
    ".yml": "yaml",
    ".json": "json",
    ".cfg": "ini",
    ".ini": "ini",
    ".sh": "shell",
    ".html": "html",
    ".css": "css",
    ".sql": "sql",
}


def language_for(path: str) -> tuple[str, Language | None]:
    """``(label, parseable language or None)`` for a repository path."""
    p = PurePosixPath(path)
    if p.name in _FILENAMES:
        named = _BY_NAME[_FILENAMES[p.name]]
        return named.name, named
    suffix = p.suffix.lower()
    lang = _BY_EXT.get(suffix)
    if lang is not None:
        return lang.name, lang
    return _TEXT_KINDS.get(suffix, "text"), None


def by_name(name: str) -> Language | None:
    return _BY_NAME.get(name)


@cache
def load_query(lang_name: str) -> tuple[Any, Any]:
    """``(parser, compiled tags query)`` for a language; cached per process."""
    from tree_sitter import Query
    from tree_sitter_language_pack import get_language, get_parser

    lang = _BY_NAME[lang_name]
    grammar: Any = lang.grammar  # the pack types names as a Literal of its grammars
    return get_parser(grammar), Query(get_language(grammar), query_text(lang.query))


_INCLUDE = "; include "


@cache
def query_text(name: str) -> str:
    """The text of ``queries/<name>.scm`` with each ``; include <file>.scm`` line
    replaced by that file's text (patterns several languages share, such as
    ``_ecma_toplevel.scm``; one level, in place, so pattern order is kept)."""
    folder = resources.files(__package__).joinpath("queries")
    lines = folder.joinpath(f"{name}.scm").read_text(encoding="utf-8").split("\n")
    return "\n".join(
        folder.joinpath(line[len(_INCLUDE) :].strip()).read_text(encoding="utf-8").rstrip("\n")
        if line.startswith(_INCLUDE)
        else line
        for line in lines
    )


@dataclass(frozen=True, slots=True)
class TagQueries:
    """A language's tags query split in two, for speed.

    ``refs`` keeps only the patterns whose captures are all ``@reference.*`` (or
    predicate-only ``@_*``): one node per match, so ``QueryCursor.captures`` yields
    them without a dictionary per match (references are most of the matches).
    ``defs`` keeps every other pattern, read match by match as before.
    """

    parser: Any
    defs: Any
    refs: Any


_CAPTURE = re.compile(r"@([A-Za-z_][\w.]*)")


@cache
def load_queries(lang_name: str) -> TagQueries:
    """The language's parser and its tags query split into ``defs`` and ``refs``."""
    from tree_sitter import Query
    from tree_sitter_language_pack import get_language

    parser, full = load_query(lang_name)
    lang = _BY_NAME[lang_name]
    grammar: Any = lang.grammar
    raw = query_text(lang.query).encode("utf-8")
    defs = Query(get_language(grammar), raw.decode("utf-8"))
    refs = Query(get_language(grammar), raw.decode("utf-8"))
    for i in range(full.pattern_count):
        body = raw[full.start_byte_for_pattern(i) : full.end_byte_for_pattern(i)]
        names = _CAPTURE.findall(_strip_comments(body.decode("utf-8")))
        is_ref = bool(names) and any(n.startswith("reference.") for n in names)
        if is_ref and all(n.startswith(("reference.", "_")) for n in names):
            defs.disable_pattern(i)
        else:
            refs.disable_pattern(i)
    return TagQueries(parser, defs, refs)


def _strip_comments(text: str) -> str:
    """``text`` without ``;`` comments (a ``;`` inside a string literal stays)."""
    out = []
    for line in text.splitlines():
        in_str = False
        end = len(line)
        for k, ch in enumerate(line):
            if ch == '"':
                in_str = not in_str
            elif ch == ";" and not in_str:
                end = k
                break
        out.append(line[:end])
    return "\n".join(out)
