"""The definitions past commits edited, read off git's hunk headers (the span probes').

For each of the newest non-merge commits reachable from a revision, its patch (no
context lines) is read and, per code file it edited, the names of the definitions its
hunks were in: git prints the enclosing definition's first line after each hunk's
``@@`` (its "function context", found by the built-in per-language patterns ``python``,
``golang``, ``rust``... chosen here by a private attributes file, so a repository's own
settings do not change the answer), and the name is read off that line.

The index keeps only which files past commits edited (``index/history_edits.py``);
this finer reading was measured by ``lab/probe_history_spans.py`` and did not rank a
file's edited definition better than the task's words do (``ctxbench.md``, "Past
commits like the task"), so it lives here, with the probes that use it.
"""

from __future__ import annotations

import re
import subprocess
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

__all__ = ["EditedCommit", "definition_name", "parse_patches", "read_definitions"]

#: extensions -> git's built-in function-context pattern (``userdiff``), or ``jsfn``
#: (defined below: git has no built-in one for JavaScript and TypeScript)
_DRIVERS = {
    "py": "python",
    "pyi": "python",
    "go": "golang",
    "rs": "rust",
    "rb": "ruby",
    "java": "java",
    "kt": "kotlin",
    "cs": "csharp",
    "c": "cpp",
    "h": "cpp",
    "cc": "cpp",
    "cpp": "cpp",
    "hpp": "cpp",
    "php": "php",
    "js": "jsfn",
    "mjs": "jsfn",
    "cjs": "jsfn",
    "jsx": "jsfn",
    "ts": "jsfn",
    "tsx": "jsfn",
}
#: a JavaScript/TypeScript definition's first line: a function, a class, a method, or a
#: function assigned to a name or a property
_JS_FUNCNAME = (
    r"^[\t ]*((export[\t ]+)?(default[\t ]+)?(async[\t ]+)?(function|class)[\t *].*"
    r"|.*[=:][\t ]*(async[\t ]+)?function\b.*"
    r"|[\t ]*(static[\t ]+|async[\t ]+|public[\t ]+|private[\t ]+|protected[\t ]+)*"
    r"[A-Za-z_$][A-Za-z0-9_$]*[\t ]*\([^;]*\)[\t ]*(:[^{;]*)?\{[\t ]*)$"
)
_KEYWORD_DEF = re.compile(
    r"\b(?:def|class|fn|func|function|struct|enum|trait|interface|type|module)\b[\s*]*"
    r"(?:\([^)]*\)\s*)?([A-Za-z_$][\w$]*)"
)
_CALL_DEF = re.compile(r"([A-Za-z_$][\w$]*)\s*(?:[=:]\s*(?:async\s+)?function\b|\()")
_NOT_NAMES = frozenset({"if", "for", "while", "switch", "catch", "return", "function", "new"})


@dataclass(frozen=True, slots=True)
class EditedCommit:
    """One commit: its position (0 = the newest read), time, message and, per file it
    edited (post-image path), the names of the definitions its hunks were in."""

    order: int
    sha: str
    timestamp: int
    message: str
    edits: tuple[tuple[str, tuple[str, ...]], ...]


def definition_name(context: str) -> str | None:
    """The name a hunk header's function-context line defines (``None`` if none)."""
    m = _KEYWORD_DEF.search(context)
    if m is not None:
        return m.group(1)
    for m in _CALL_DEF.finditer(context):
        if m.group(1) not in _NOT_NAMES:
            return m.group(1)
    return None


def parse_patches(
    records: Iterable[str], *, max_files: int = 30, max_names: int = 12
) -> Iterator[tuple[str, int, str, tuple[tuple[str, tuple[str, ...]], ...]]]:
    """``(sha, timestamp, message, edits)`` per commit record of the log (the text of one
    commit: header, message, then its patches' file and hunk headers)."""
    for text in records:
        record = text.lstrip("\x1e")
        if not record.strip():
            continue
        head, sep, patch = record.partition("\x1d")
        if not sep:
            continue
        sha, _, rest = head.partition("\x1f")
        ts, _, message = rest.partition("\x1f")
        files: dict[str, list[str]] = {}
        path: str | None = None
        after_old = False
        for line in patch.split("\n"):
            if after_old and line.startswith("+++ "):
                target = line[4:]
                path = target[2:] if target.startswith("b/") else None
                if path is not None:
                    files.setdefault(path, [])
            elif line.startswith("@@") and path is not None:
                context = line.split("@@", 2)[-1]
                name = definition_name(context) if context.strip() else None
                names = files[path]
                if name is not None and name not in names and len(names) < max_names:
                    names.append(name)
            after_old = line.startswith("--- ")
        if not files or len(files) > max_files:
            continue
        edits = tuple((p, tuple(names)) for p, names in sorted(files.items()))
        yield sha.strip(), int(ts.strip() or 0), message.strip(), edits


def read_definitions(
    root: Path, *, rev: str = "HEAD", limit: int = 1000, max_files: int = 30, timeout: float = 120.0
) -> list[EditedCommit]:
    """The newest ``limit`` non-merge commits reachable from ``rev`` that edited code,
    newest first, each with the definitions its hunks were in per code file."""
    if limit <= 0:
        return []
    with tempfile.TemporaryDirectory(prefix="bench-history-") as tmp:
        attributes = Path(tmp) / "attributes"
        attributes.write_text(
            "".join(f"*.{ext} diff={driver}\n" for ext, driver in sorted(_DRIVERS.items())),
            encoding="utf-8",
        )
        args = [
            "git",
            "-c",
            f"core.attributesFile={attributes}",
            "-c",
            f"diff.jsfn.xfuncname={_JS_FUNCNAME}",
            "-c",
            "core.quotePath=false",
            "log",
            "--no-merges",
            f"--max-count={limit}",
            "--format=%x1e%H%x1f%ct%x1f%B%x1d",
            "-p",
            "-U0",
            "--no-color",
            "--no-renames",
            "--no-ext-diff",
            "--no-textconv",
            rev,
            "--",
            *(f"*.{ext}" for ext in sorted(_DRIVERS)),
        ]
        with subprocess.Popen(
            args, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
        ) as proc:
            if proc.stdout is None:
                raise RuntimeError("git log gave no output stream")
            parsed = parse_patches(_records(proc.stdout), max_files=max_files)
            commits = [EditedCommit(i, *item) for i, item in enumerate(parsed)]
            code = proc.wait(timeout=timeout)
    if code != 0:
        raise subprocess.CalledProcessError(code, args[:6])
    return commits


def _records(stream: IO[bytes]) -> Iterator[str]:
    """The log's text one commit at a time, only the lines :func:`parse_patches` reads
    (the header, the message, and the patches' file and hunk headers)."""
    lines: list[str] = []
    in_message = False
    for raw in stream:
        if raw.startswith(b"\x1e"):
            if lines:
                yield "".join(lines)
            lines = []
            in_message = True
        if in_message:
            line = raw.decode("utf-8", "replace")
            lines.append(line)
            if "\x1d" in line:
                in_message = False
        elif raw.startswith((b"@@", b"--- ", b"+++ ")):
            lines.append(raw.decode("utf-8", "replace"))
    if lines:
        yield "".join(lines)
