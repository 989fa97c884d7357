"""Turn tags-query matches into symbols, references and raw import captures.

Capture conventions of our ``queries/*.scm`` files:

* ``@definition.<kind>`` marks a whole definition and ``@name`` its name;
  an optional ``@parent`` names the owner explicitly (Go receivers, ``A::f``).
* ``@scope.<kind>`` marks a container that is not a symbol itself (a Rust
  ``impl``) but names the parent of the definitions inside it.
* ``@reference.<kind>`` captures the identifier used (the most frequent match, so
  it is one capture: no dictionary lookups beyond the first).
* ``@import.*`` captures the pieces of an import; ``imports.py`` interprets them.
* Captures starting with ``_`` only serve predicates.

The parent of a definition is the innermost enclosing definition or scope; a
function whose parent is class-like becomes a ``method``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .records import ReferenceGroup, Symbol, join_lines

__all__ = ["Extracted", "extract"]

_CLASS_LIKE = frozenset({"class", "interface", "struct", "trait", "enum", "impl", "object"})
_SIG_MAX = 240
_COMMENT_MARKERS = ("#", "//", "/*", "*", "--")
_DOC_MAX = 200
#: wrappers whose preceding comment documents the definition inside them
_WRAPPERS = frozenset(
    {
        "export_statement",
        "decorated_definition",
        "template_declaration",
        "ambient_declaration",
        "attribute_item",
        "type_declaration",
        "const_declaration",
        "var_declaration",
        "lexical_declaration",
        "variable_declaration",
        "expression_statement",
        "field_declaration",
        "declaration",
    }
)


@dataclass(frozen=True, slots=True)
class Extracted:
    symbols: tuple[Symbol, ...]
    #: one row per name and kind (see ``records.ReferenceGroup``), sorted
    references: tuple[ReferenceGroup, ...]
    #: one dict per import match: capture name -> node texts
    imports: tuple[tuple[int, dict[str, str]], ...]


@dataclass(slots=True)
class _Def:
    start: int
    end: int
    node: Any
    name: str
    kind: str
    explicit_parent: str | None
    is_scope: bool


def _text(node: Any) -> str:
    raw: bytes = node.text
    return raw.decode("utf-8", "replace")


def extract(
    root: Any,
    query: Any,
    path: str,
    language: str,
    refs_query: Any | None = None,
    *,
    source: bytes | None = None,
) -> Extracted:
    """Symbols, references and import captures of one parsed file.

    With ``refs_query`` (see ``languages.load_queries``), ``query`` holds the other
    patterns and references are read from ``refs_query``'s captures. ``source``, the
    bytes the tree was parsed from, lets signatures be cut from it rather than from a
    copy of each definition's text.
    """
    from tree_sitter import QueryCursor

    defs: dict[tuple[int, int, str], _Def] = {}
    def_name_nodes: set[tuple[int, int]] = set()
    imports: list[tuple[int, dict[str, str]]] = []
    ref_nodes: list[tuple[Any, str]] = []
    mains: dict[int, str | None] = {}
    #: kind -> nodes of the references query (the most numerous captures)
    ref_groups: list[tuple[str, list[Any]]] = []
    if refs_query is not None:
        for cap_name, nodes in QueryCursor(refs_query).captures(root).items():
            if cap_name.startswith("reference."):
                ref_groups.append((cap_name[10:], nodes))
    for pattern, caps in QueryCursor(query).matches(root):
        if pattern in mains:
            main = mains[pattern]
        else:
            main = next((k for k in caps if not k.startswith(("_", "name", "parent"))), None)
            mains[pattern] = main
        if main is None or main not in caps:
            continue
        if main[0] == "r" and main.startswith("reference."):
            ref_nodes.append((caps[main][0], main[10:]))
            continue
        if main.startswith("import."):
            found = {k: _text(v[0]) for k, v in caps.items() if k.startswith("import.") and v}
            line = min(v[0].start_point[0] for k, v in caps.items() if k.startswith("import."))
            imports.append((line + 1, found))
            continue
        names = caps.get("name")
        if not names:
            continue
        name_node = names[0]
        name = _text(name_node).strip()
        if not name:
            continue
        node = caps[main][0]
        kind = main.split(".", 1)[1]
        if main.startswith(("definition.", "scope.")):
            parent_nodes = caps.get("parent")
            explicit = _text(parent_nodes[0]).strip() if parent_nodes else None
            key = (node.start_byte, node.end_byte, name)
            if key not in defs:
                defs[key] = _Def(
                    node.start_byte,
                    node.end_byte,
                    node,
                    name,
                    kind,
                    explicit,
                    main.startswith("scope."),
                )
            def_name_nodes.add((name_node.start_byte, name_node.end_byte))
    # a definition's own name is not a use of it: compare names first (cheap), the
    # node's span only when the name is one a definition here has
    def_names = {name for _, _, name in defs}
    #: kind -> used name -> lines
    lines_of: dict[str, dict[str, set[int]]] = {}
    # an identifier recurs many times in a file: decode each distinct one once (None:
    # shorter than two characters, never a reference)
    names_of: dict[bytes, str | None] = {}
    ref_groups.extend([(kind, [node]) for node, kind in ref_nodes])  # from the matches
    for kind, group in ref_groups:
        of_kind = lines_of.setdefault(kind, {})
        for node in group:
            text: bytes = node.text
            if text in names_of:
                used = names_of[text]
            else:
                used = text.decode("utf-8", "replace").strip()
                used = names_of[text] = used if len(used) >= 2 else None
            if used is None:
                continue
            if used in def_names and (node.start_byte, node.end_byte) in def_name_nodes:
                continue
            ref_lines = of_kind.get(used)
            if ref_lines is None:
                of_kind[used] = ref_lines = set()
            ref_lines.add(node.start_point[0] + 1)
    symbols = _resolve_parents(sorted(defs.values(), key=lambda d: (d.start, -d.end, d.name)))
    out_syms = tuple(
        Symbol(
            name=d.name,
            kind=kind,
            parent=parent,
            path=path,
            start_line=d.node.start_point[0] + 1,
            end_line=_end_line(d.node),
            signature=signature(d.node, source),
            doc=doc_line(d.node, language),
        )
        for d, kind, parent in symbols
    )
    grouped = [
        (name, kind, lines) for kind, of_kind in lines_of.items() for name, lines in of_kind.items()
    ]
    grouped.sort(key=lambda g: (g[0], g[1]))
    out_refs = tuple([(name, kind, len(lines), join_lines(lines)) for name, kind, lines in grouped])
    imports.sort(key=lambda item: (item[0], sorted(item[1].items())))
    return Extracted(out_syms, out_refs, tuple(imports))


def _end_line(node: Any) -> int:
    """1-based last line; a node ending at column 0 ends on the line before."""
    row, col = node.end_point
    if col == 0 and row > node.start_point[0]:
        return int(row)
    return int(row) + 1


def _resolve_parents(ordered: list[_Def]) -> list[tuple[_Def, str, str | None]]:
    stack: list[_Def] = []
    out: list[tuple[_Def, str, str | None]] = []
    for d in ordered:
        while stack and stack[-1].end <= d.start:
            stack.pop()
        enclosing = stack[-1] if stack else None
        parent = d.explicit_parent or (enclosing.name if enclosing else None)
        kind = d.kind
        if kind == "function" and (
            d.explicit_parent or (enclosing is not None and enclosing.kind in _CLASS_LIKE)
        ):
            kind = "method"
        stack.append(d)
        if not d.is_scope:
            out.append((d, kind, parent))
    return out


def signature(node: Any, source: bytes | None = None) -> str:
    """The definition's header: its text up to the body, whitespace collapsed.

    ``source`` is the file's bytes (the node's own text is read without it)."""
    body = node.child_by_field_name("body")
    if source is None:
        source, base = node.text, node.start_byte
    else:
        base = 0
    start = node.start_byte - base
    if body is not None and body.start_byte > node.start_byte:
        head = source[start : body.start_byte - base]
    else:
        end = node.end_byte - base
        newline = source.find(b"\n", start, end)
        head = source[start : end if newline < 0 else newline]
    head_lines = head.decode("utf-8", "replace").splitlines() or [""]
    kept = head_lines[:1] + [
        line for line in head_lines[1:] if not line.strip().startswith(_COMMENT_MARKERS)
    ]
    text = " ".join(" ".join(kept).split())
    text = text.rstrip("{ ").rstrip()
    if len(text) > _SIG_MAX:
        text = text[: _SIG_MAX - 3].rstrip() + "..."
    return text


def _clean_comment(text: str) -> str | None:
    for line in text.splitlines():
        s = line.strip()
        for marker in ("/**", "/*!", "/*", "*/", "///", "//!", "//", "#", "--", "*"):
            if s.startswith(marker):
                s = s[len(marker) :].strip()
        s = s.removesuffix("*/").strip()
        for tag in ("<summary>", "</summary>"):
            s = s.replace(tag, "").strip()
        if s:
            return s[:_DOC_MAX]
    return None


def _python_docstring(node: Any) -> str | None:
    body = node.child_by_field_name("body")
    if body is None or body.named_child_count == 0:
        return None
    first = body.named_child(0)
    if first.type == "expression_statement" and first.named_child_count:
        first = first.named_child(0)
    if first.type != "string":
        return None
    content = [c for c in first.named_children if c.type == "string_content"]
    text = _text(content[0]) if content else _text(first).strip("\"'")
    return _clean_comment(text)


def doc_line(node: Any, language: str) -> str | None:
    """First line of the definition's docstring or of the comment block just above it."""
    if language == "python":
        found = _python_docstring(node)
        if found:
            return found
    target = node
    while target.parent is not None and target.parent.type in _WRAPPERS:
        target = target.parent
    prev = target.prev_named_sibling
    first = None
    line = target.start_point[0]
    while prev is not None and "comment" in prev.type and prev.end_point[0] >= line - 1:
        first = prev
        line = prev.start_point[0]
        prev = prev.prev_named_sibling
    if first is None:
        return None
    texts = []
    node_it = first
    while node_it is not None and node_it.start_byte < target.start_byte:
        texts.append(_text(node_it))
        node_it = node_it.next_named_sibling
    return _clean_comment("\n".join(texts))
