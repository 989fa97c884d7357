"""Where each value of a TOML or JSON document sits (``key path -> line, column``).

``tomllib`` and ``json`` give values without positions; a diagnostic must say
``file:line:column``. These scanners walk the text once, understanding just
enough of each format's lexical structure (strings, comments, brackets, table
headers, arrays of tables, dotted and inline keys) to record where every value
starts. Key paths look like ``conditionals[1].when`` (indices are 0-based).

The scanners never raise: text they cannot follow simply yields fewer positions,
and the caller falls back to the nearest located parent key.
"""

from __future__ import annotations

from collections.abc import Sequence

from .diagnostics import Loc, line_col

__all__ = ["Positions", "keypath", "locate_json", "locate_toml"]

Key = tuple[str | int, ...]


def keypath(parts: Sequence[str | int]) -> str:
    out = ""
    for p in parts:
        if isinstance(p, int):
            out += f"[{p}]"
        else:
            out += f".{p}" if out else p
    return out


class Positions:
    """Located values of one document; :meth:`loc` falls back to the closest parent."""

    def __init__(self, source: str, text: str, offsets: dict[Key, int]) -> None:
        self.source = source
        self.text = text
        self._offsets = offsets

    def loc(self, *parts: str | int) -> Loc:
        key: Key = tuple(parts)
        while key:
            if key in self._offsets:
                line, col = line_col(self.text, self._offsets[key])
                return Loc(self.source, line, col, keypath(parts))
            key = key[:-1]
        return Loc(self.source, 0, 0, keypath(parts))

    def __contains__(self, parts: Key) -> bool:
        return parts in self._offsets


def _skip_string(text: str, i: int) -> int:
    """Index just past the string starting at ``text[i]`` (any TOML/JSON string form)."""
    q = text[i]
    if text.startswith(q * 3, i):
        end = text.find(q * 3, i + 3)
        if end < 0:
            return len(text)
        end += 3
        while end < len(text) and text[end] == q:  # """a"""" ends with the last quotes
            end += 1
        return end
    j = i + 1
    while j < len(text) and text[j] != "\n":
        if text[j] == "\\" and q == '"':
            j += 2
            continue
        if text[j] == q:
            return j + 1
        j += 1
    return j


class _Toml:
    def __init__(self, text: str) -> None:
        self.text = text
        self.out: dict[Key, int] = {}
        self.aot: dict[Key, int] = {}

    def ws(self, i: int, *, newlines: bool) -> int:
        t = self.text
        while i < len(t):
            c = t[i]
            if c in " \t\r" or (newlines and c == "\n"):
                i += 1
            elif c == "#" and newlines:
                while i < len(t) and t[i] != "\n":
                    i += 1
            else:
                break
        return i

    def key(self, i: int) -> tuple[list[str], int]:
        """A (dotted) key starting at ``i``; returns its parts and the index after it."""
        t = self.text
        parts: list[str] = []
        while i < len(t):
            i = self.ws(i, newlines=False)
            if i < len(t) and t[i] in "\"'":
                end = _skip_string(t, i)
                parts.append(t[i + 1 : end - 1])
                i = end
            else:
                j = i
                while j < len(t) and (t[j].isalnum() or t[j] in "_-"):
                    j += 1
                if j == i:
                    break
                parts.append(t[i:j])
                i = j
            i = self.ws(i, newlines=False)
            if i < len(t) and t[i] == ".":
                i += 1
                continue
            break
        return parts, i

    def resolve(self, names: list[str]) -> list[str | int]:
        out: list[str | int] = []
        for name in names:
            out.append(name)
            count = self.aot.get(tuple(out))
            if count is not None:
                out.append(count - 1)
        return out

    def value(self, i: int, path: Key) -> int:
        """Record ``path`` at ``i`` and scan the value; returns the index after it."""
        t = self.text
        self.out.setdefault(path, i)
        if i >= len(t):
            return i
        c = t[i]
        if c in "\"'":
            return _skip_string(t, i)
        if c == "[":
            i += 1
            n = 0
            while i < len(t):
                i = self.ws(i, newlines=True)
                if i < len(t) and t[i] == "]":
                    return i + 1
                i = self.value(i, (*path, n))
                n += 1
                i = self.ws(i, newlines=True)
                if i < len(t) and t[i] == ",":
                    i += 1
                elif i < len(t) and t[i] != "]":
                    return i
            return i
        if c == "{":
            i += 1
            while i < len(t):
                i = self.ws(i, newlines=False)
                if i < len(t) and t[i] == "}":
                    return i + 1
                parts, i = self.key(i)
                i = self.ws(i, newlines=False)
                if not parts or i >= len(t) or t[i] != "=":
                    return i
                i = self.ws(i + 1, newlines=False)
                i = self.value(i, (*path, *parts))
                i = self.ws(i, newlines=False)
                if i < len(t) and t[i] == ",":
                    i += 1
            return i
        while i < len(t) and t[i] not in ",]}\n#":
            i += 1
        return i

    def run(self) -> dict[Key, int]:
        t = self.text
        prefix: list[str | int] = []
        i = 0
        while i < len(t):
            i = self.ws(i, newlines=True)
            if i >= len(t):
                break
            if t[i] == "[":
                double = t.startswith("[[", i)
                names, j = self.key(i + (2 if double else 1))
                if not names:
                    i = t.find("\n", i) if "\n" in t[i:] else len(t)
                    continue
                head = self.resolve(names[:-1])
                head.append(names[-1])
                if double:
                    idx = self.aot.get(tuple(head), 0)
                    self.aot[tuple(head)] = idx + 1
                    self.out.setdefault(tuple(head), i)
                    head.append(idx)
                prefix = head
                self.out.setdefault(tuple(prefix), i)
                end = t.find("\n", j)
                i = len(t) if end < 0 else end
                continue
            parts, j = self.key(i)
            j = self.ws(j, newlines=False)
            if not parts or j >= len(t) or t[j] != "=":
                end = t.find("\n", i)
                i = len(t) if end < 0 else end + 1
                continue
            j = self.ws(j + 1, newlines=False)
            i = self.value(j, (*prefix, *parts))
        return self.out


def locate_toml(text: str, source: str = "") -> Positions:
    try:
        offsets = _Toml(text).run()
    except (IndexError, ValueError):  # pragma: no cover - defensive: never fail a diagnostic
        offsets = {}
    return Positions(source, text, offsets)


class _Json:
    def __init__(self, text: str) -> None:
        self.text = text
        self.out: dict[Key, int] = {}

    def ws(self, i: int) -> int:
        while i < len(self.text) and self.text[i] in " \t\r\n":
            i += 1
        return i

    def value(self, i: int, path: Key, depth: int = 0) -> int:
        t = self.text
        i = self.ws(i)
        self.out.setdefault(path, i)
        if i >= len(t) or depth > 200:
            return i
        c = t[i]
        if c == '"':
            return _skip_string(t, i)
        if c in "[{":
            close = "]" if c == "[" else "}"
            i += 1
            n = 0
            while i < len(t):
                i = self.ws(i)
                if i < len(t) and t[i] == close:
                    return i + 1
                if c == "{":
                    if i >= len(t) or t[i] != '"':
                        return i
                    end = _skip_string(t, i)
                    name = t[i + 1 : end - 1]
                    i = self.ws(end)
                    if i >= len(t) or t[i] != ":":
                        return i
                    i = self.value(i + 1, (*path, name), depth + 1)
                else:
                    i = self.value(i, (*path, n), depth + 1)
                    n += 1
                i = self.ws(i)
                if i < len(t) and t[i] == ",":
                    i += 1
                elif i < len(t) and t[i] != close:
                    return i
            return i
        while i < len(t) and t[i] not in ",]} \t\r\n":
            i += 1
        return i


def locate_json(text: str, source: str = "") -> Positions:
    scanner = _Json(text)
    scanner.value(0, ())
    return Positions(source, text, scanner.out)
