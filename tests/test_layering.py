"""The facade is the only way in: no package below ``api.py`` imports it, and the CLI
reaches the index, the config, the workspace and the composer only through it."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src" / "codelibrarian"
#: packages the shells must not import at run time (they go through ``api``)
BEHIND_THE_FACADE = (
    "codelibrarian.index",
    "codelibrarian.config",
    "codelibrarian.workspace",
    "codelibrarian.composer",
    "codelibrarian.sources",
    "codelibrarian.service",
    "codelibrarian.packs",
    "codelibrarian.persist",
)


def _module_name(path: Path) -> str:
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, *, runtime_only: bool) -> list[tuple[int, str]]:
    """Absolute names imported by ``path`` (outside ``if TYPE_CHECKING:`` if ``runtime_only``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = _module_name(path).rsplit(".", 1)[0] if path.name != "__init__.py" else None
    package = package or _module_name(path)
    skip: set[int] = set()
    for node in ast.walk(tree):
        if runtime_only and isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.body:
                skip.update(id(n) for n in ast.walk(child))
    out: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                name = ".".join([*base, node.module] if node.module else base)
            else:
                name = node.module or ""
            out.append((node.lineno, name))
        elif isinstance(node, ast.Import):
            out.extend((node.lineno, alias.name) for alias in node.names)
    return out


def test_nothing_below_the_facade_imports_it() -> None:
    offenders = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        if rel == "api.py" or rel.startswith(("cli/", "mcp/")):
            continue
        for line, name in _imports(path, runtime_only=False):
            if name == "codelibrarian.api":
                offenders.append(f"{rel}:{line}")
    assert offenders == []


def test_the_cli_goes_through_the_facade() -> None:
    offenders = []
    for path in sorted((SRC / "cli").glob("*.py")):
        for line, name in _imports(path, runtime_only=True):
            if any(name == p or name.startswith(p + ".") for p in BEHIND_THE_FACADE):
                offenders.append(f"cli/{path.name}:{line} imports {name}")
    assert offenders == []
