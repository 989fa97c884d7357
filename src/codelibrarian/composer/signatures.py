"""Signature outlines for ``keep_signatures``: bodies elided, signatures and docs kept.

With a known ``language`` the source is parsed with tree-sitter (grammars bundled
in ``tree_sitter_language_pack``); every function or method body is replaced by a
marker, keeping the signature and — for Python — the docstring. Comments above a
definition stay, being outside the body. Without a grammar (unknown language, or
a parse that does not succeed) an indentation heuristic keeps definition-like
lines and collapses each run of deeper lines into one marker line.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

__all__ = ["BODY_MARKER", "elide_bodies"]

BODY_MARKER = "… body elided"

_ALIASES = {
    "py": "python",
    "js": "javascript",
    "jsx": "javascript",
    "ts": "typescript",
    "c++": "cpp",
    "golang": "go",
    "rs": "rust",
    "rb": "ruby",
    "cs": "csharp",
}

_DEF_WORDS = (
    "def ",
    "async def ",
    "class ",
    "function ",
    "async function ",
    "func ",
    "fn ",
    "pub ",
    "export ",
    "interface ",
    "struct ",
    "impl ",
    "trait ",
    "enum ",
    "type ",
    "public ",
    "private ",
    "protected ",
    "static ",
    "module ",
    "@",
)


@lru_cache(maxsize=64)
def _parser(language: str) -> Any:
    try:
        from tree_sitter_language_pack import get_parser

        return get_parser(language)  # type: ignore[arg-type]
    except Exception:  # unknown language or grammar that fails to load
        return None


def _is_function(node: Any) -> bool:
    kind: str = node.type
    return ("function" in kind or "method" in kind or "constructor" in kind) and (
        node.child_by_field_name("body") is not None
    )


def _python_doc(body: Any) -> Any:
    named = body.named_children
    if not named:
        return None
    first = named[0]
    if (
        first.type == "expression_statement"
        and first.named_children
        and first.named_children[0].type == "string"
    ):
        return first
    if first.type == "string":
        return first
    return None


def _tree_sitter_outline(source: str, language: str) -> str | None:
    parser = _parser(language)
    if parser is None:
        return None
    data = source.encode("utf-8", "surrogatepass")
    tree = parser.parse(data)
    root = tree.root_node
    if root.has_error and not root.named_children:
        return None
    edits: list[tuple[int, int, bytes]] = []
    stack = [root]
    while stack:
        node = stack.pop()
        if _is_function(node):
            body = node.child_by_field_name("body")
            if language == "python":
                doc = _python_doc(body)
                indent = b" " * body.start_point[1]
                if doc is not None:
                    repl = data[doc.start_byte : doc.end_byte] + b"\n" + indent
                    repl += f"...  # {BODY_MARKER}".encode()
                else:
                    repl = f"...  # {BODY_MARKER}".encode()
            elif (
                body.type in ("block", "compound_statement", "statement_block")
                or data[body.start_byte : body.start_byte + 1] == b"{"
            ):
                repl = f"{{ /* {BODY_MARKER} */ }}".encode()
            else:
                repl = f"/* {BODY_MARKER} */".encode()
            edits.append((body.start_byte, body.end_byte, repl))
            continue  # nested definitions vanish with the body
        stack.extend(reversed(node.children))
    if not edits:
        return source
    edits.sort()
    out = bytearray()
    pos = 0
    for start, end, repl in edits:
        if start < pos:
            continue
        out += data[pos:start] + repl
        pos = end
    out += data[pos:]
    return out.decode("utf-8", "surrogatepass")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def _heuristic_outline(source: str) -> str:
    lines = source.split("\n")
    nonblank = [ln for ln in lines if ln.strip()]
    if not nonblank:
        return source
    base = min(_indent(ln) for ln in nonblank)
    out: list[str] = []
    elided_at: int | None = None
    blank_in_run = False
    prev_kept_def = False
    for line in lines:
        stripped = line.strip()
        keep = (
            not stripped
            or _indent(line) <= base
            or stripped.startswith(_DEF_WORDS)
            or (prev_kept_def and stripped.startswith(('"""', "'''", "///", "/**", "#")))
            or stripped in ("}", "};", "end")
        )
        if keep:
            if not stripped and elided_at is not None:
                blank_in_run = True  # re-emitted once the run ends
                continue
            if elided_at is not None and blank_in_run:
                out.append("")
            elided_at, blank_in_run = None, False
            out.append(line)
            prev_kept_def = stripped.startswith(_DEF_WORDS)
        else:
            prev_kept_def = False
            if elided_at is None:
                elided_at = len(out)
                out.append(" " * _indent(line) + BODY_MARKER)
    return "\n".join(out)


def elide_bodies(source: str, language: str | None) -> str:
    """``source`` with function bodies elided (signatures and docstrings kept)."""
    if language:
        lang = _ALIASES.get(language.lower(), language.lower())
        outline = _tree_sitter_outline(source, lang)
        if outline is not None:
            return outline
    return _heuristic_outline(source)
