"""Imports: raw specs from query captures, resolved to repository files.

Extraction runs in the parse workers (per file); resolution needs the whole
file list and runs in the indexer. What cannot be resolved to a file in the
repository (the standard library, packages, system headers) is kept with
``resolved = None``: an external dependency.

Resolution per language:

* Python — absolute modules against the repo root and common source roots
  (``src/``, ``lib/``, ``python/``); relative imports against the package;
  ``from pkg import mod`` prefers the submodule ``pkg/mod.py``.
* JavaScript/TypeScript — relative specs with extensions and ``index`` files.
* Go — import paths under a ``go.mod`` module path map to the package folder
  (its first non-test file).
* Rust — ``mod x;`` to ``x.rs`` / ``x/mod.rs``; ``use crate::/self::/super::``
  paths to the longest module prefix that is a file.
* Java/Kotlin — fully qualified names to ``a/b/C.java`` (or the package folder).
* C/C++ — ``#include "x"`` relative to the includer, else the shortest path
  ending in ``/x``; ``<x>`` is external.
* C# — ``using A.B`` to a folder whose path ends with the namespace's tail
  segments (a heuristic: C# does not tie namespaces to folders).
* Ruby — ``require_relative``; ``require`` against ``lib/`` and the root.
* PHP — ``use A\\B\\C`` to a file ending ``B/C.php`` (PSR-4 style);
  ``require``/``include`` of a literal path.
"""

from __future__ import annotations

import posixpath
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence

__all__ = ["Resolver", "specs_from_captures"]

_PY_ROOTS = ("", "src/", "lib/", "python/")
_JS_EXTS = (".ts", ".tsx", ".d.ts", ".js", ".jsx", ".mjs", ".cjs", ".json")
_QUOTED = re.compile(r"""['"]([^'"]+)['"]""")


def _unquote(text: str) -> str:
    return text.strip().strip("\"'`<>").strip()


def specs_from_captures(
    language: str, captures: Iterable[tuple[int, Mapping[str, str]]]
) -> tuple[tuple[str, int], ...]:
    """``(spec, line)`` pairs from one file's import captures, sorted, unique."""
    out: set[tuple[str, int]] = set()
    for line, caps in captures:
        for spec in _specs(language, caps):
            if spec:
                out.add((spec, line))
    return tuple(sorted(out, key=lambda s: (s[1], s[0])))


def _specs(language: str, caps: Mapping[str, str]) -> list[str]:
    if language == "python":
        if "import.module" in caps:
            return [caps["import.module"]]
        if "import.from" in caps:
            base = "".join(caps["import.from"].split())
            name = caps.get("import.name")
            return [f"{base}:{name}" if name else base]
        return []
    if "import.system" in caps:
        return ["<" + _unquote(caps["import.system"]) + ">"]
    if "import.mod" in caps:
        return ["mod:" + caps["import.mod"]]
    if "import.relative" in caps:
        return ["./" + caps["import.relative"]]
    if "import.wildcard" in caps:
        return [caps["import.wildcard"] + ".*"]
    if "import.use" in caps:
        return [caps["import.use"].lstrip("\\")]
    if "import.require" in caps:
        found = _QUOTED.findall(caps["import.require"])
        return ["file:" + found[-1]] if found else []
    if "import.spec" in caps:
        return [" ".join(_unquote(caps["import.spec"]).split())]
    return []


class Resolver:
    """Resolves import specs against one snapshot of the repository's file list."""

    def __init__(self, paths: Iterable[str], go_modules: Mapping[str, str] | None = None) -> None:
        self.paths = frozenset(paths)
        ordered = sorted(self.paths)
        self._by_dir: dict[str, list[str]] = defaultdict(list)
        self._by_name: dict[str, list[str]] = defaultdict(list)
        for p in ordered:
            self._by_dir[posixpath.dirname(p)].append(p)
            self._by_name[posixpath.basename(p)].append(p)
        self._py: dict[str, str] = {}
        for p in ordered:
            if not p.endswith((".py", ".pyi")):
                continue
            stem = p.rsplit(".", 1)[0]
            if stem.endswith("/__init__"):
                stem = stem[: -len("/__init__")]
            for root in _PY_ROOTS:
                if stem.startswith(root) and stem != root.rstrip("/"):
                    mod = stem[len(root) :].replace("/", ".")
                    self._py.setdefault(mod, p)
        #: go.mod folder -> module path, longest module path first
        self._go = sorted((go_modules or {}).items(), key=lambda kv: (-len(kv[1]), kv[0]))

    def resolve(self, language: str, importer: str, spec: str) -> tuple[str, str | None]:
        """``(spec as recorded, repository path or None)``."""
        if language == "python":
            return self._python(importer, spec)
        found: str | None = None
        if language in {"javascript", "typescript", "tsx"}:
            found = self._js(importer, spec)
        elif language == "go":
            found = self._go_pkg(spec)
        elif language == "rust":
            found = self._rust(importer, spec)
        elif language in {"java", "kotlin"}:
            found = self._jvm(spec, ".java" if language == "java" else ".kt")
        elif language in {"c", "cpp"}:
            found = self._include(importer, spec)
        elif language == "csharp":
            found = self._namespace_dir(spec.split("."), ".cs")
        elif language == "ruby":
            found = self._ruby(importer, spec)
        elif language == "php":
            found = self._php(importer, spec)
        return spec, found if found != importer else None

    # -- helpers ------------------------------------------------------------------------

    def _first(self, candidates: Sequence[str]) -> str | None:
        for c in candidates:
            if c in self.paths:
                return c
        return None

    def _python(self, importer: str, spec: str) -> tuple[str, str | None]:
        base, _, name = spec.partition(":")
        if base.startswith("."):
            level = len(base) - len(base.lstrip("."))
            parts = posixpath.dirname(importer).split("/") if "/" in importer else []
            if level - 1 > len(parts):
                return spec, None
            parts = parts[: len(parts) - (level - 1)]
            rest = base[level:]
            stem = "/".join([*parts, *rest.split(".")] if rest else parts)
            if name:
                sub = self._first((f"{stem}/{name}.py", f"{stem}/{name}/__init__.py"))
                if sub:
                    return f"{base}{'.' if rest else ''}{name}", sub
            found = self._first((f"{stem}.py", f"{stem}/__init__.py", f"{stem}.pyi"))
            return base, found
        if name and f"{base}.{name}" in self._py:
            return f"{base}.{name}", self._py[f"{base}.{name}"]
        parts = base.split(".")
        for i in range(len(parts), 0, -1):  # `import a.b.c` where only a/b.py exists
            mod = ".".join(parts[:i])
            if mod in self._py:
                return base, self._py[mod]
        return base, None

    def _js(self, importer: str, spec: str) -> str | None:
        if not spec.startswith("."):
            return None
        target = posixpath.normpath(posixpath.join(posixpath.dirname(importer), spec))
        stems = [target]
        if target.endswith((".js", ".jsx", ".mjs", ".cjs")):
            stems.append(target.rsplit(".", 1)[0])  # TS sources imported as .js
        cands: list[str] = []
        for stem in stems:
            cands.append(stem)
            cands.extend(stem + ext for ext in _JS_EXTS)
            cands.extend(f"{stem}/index{ext}" for ext in _JS_EXTS)
        return self._first(cands)

    def _go_pkg(self, spec: str) -> str | None:
        for folder, module in self._go:
            if spec == module or spec.startswith(module + "/"):
                rel = spec[len(module) :].lstrip("/")
                pkg = posixpath.normpath(posixpath.join(folder, rel)) if folder or rel else ""
                pkg = "" if pkg == "." else pkg
                files = [
                    p
                    for p in self._by_dir.get(pkg, [])
                    if p.endswith(".go") and not p.endswith("_test.go")
                ]
                return files[0] if files else None
        return None

    def _rust_module_dir(self, importer: str) -> str:
        folder = posixpath.dirname(importer)
        stem = posixpath.basename(importer).rsplit(".", 1)[0]
        if stem in {"lib", "main", "mod"}:
            return folder
        return posixpath.join(folder, stem)

    def _rust_crate_root(self, importer: str) -> str:
        parts = importer.split("/")
        if "src" in parts:
            i = len(parts) - 1 - parts[::-1].index("src")
            return "/".join(parts[: i + 1])
        return posixpath.dirname(importer)

    def _rust(self, importer: str, spec: str) -> str | None:
        if spec.startswith("mod:"):
            folder = self._rust_module_dir(importer)
            name = spec[4:]
            return self._first(
                (posixpath.join(folder, f"{name}.rs"), posixpath.join(folder, name, "mod.rs"))
            )
        path = spec.split("::{", 1)[0].split(" as ", 1)[0]
        segs = [s for s in path.split("::") if s and s != "*"]
        if not segs:
            return None
        if segs[0] == "crate":
            folder, segs = self._rust_crate_root(importer), segs[1:]
        elif segs[0] == "self":
            folder, segs = self._rust_module_dir(importer), segs[1:]
        elif segs[0] == "super":
            folder = posixpath.dirname(self._rust_module_dir(importer))
            segs = segs[1:]
            while segs and segs[0] == "super":
                folder, segs = posixpath.dirname(folder), segs[1:]
        else:
            return None
        for i in range(len(segs), 0, -1):
            stem = posixpath.join(folder, *segs[:i])
            found = self._first((f"{stem}.rs", f"{stem}/mod.rs"))
            if found:
                return found
        return self._first((posixpath.join(folder, "lib.rs"), posixpath.join(folder, "main.rs")))

    def _jvm(self, spec: str, ext: str) -> str | None:
        parts = spec.removesuffix(".*").split(".")
        if not spec.endswith(".*"):
            for i in range(len(parts), 1, -1):  # a class, or an outer class of a nested one
                rel = "/".join(parts[:i]) + ext
                for p in self._by_name.get(posixpath.basename(rel), []):
                    if p == rel or p.endswith("/" + rel):
                        return p
            parts = parts[:-1]
        return self._package_dir("/".join(parts), ext)

    def _package_dir(self, suffix: str, ext: str) -> str | None:
        for folder in sorted(self._by_dir):
            if folder == suffix or folder.endswith("/" + suffix):
                files = [p for p in self._by_dir[folder] if p.endswith(ext)]
                if files:
                    return files[0]
        return None

    def _namespace_dir(self, parts: list[str], ext: str) -> str | None:
        for i in range(len(parts)):
            found = self._package_dir("/".join(parts[i:]), ext)
            if found:
                return found
        return None

    def _include(self, importer: str, spec: str) -> str | None:
        if spec.startswith("<"):
            return None
        local = posixpath.normpath(posixpath.join(posixpath.dirname(importer), spec))
        if local in self.paths:
            return local
        name = posixpath.basename(spec)
        matches = [p for p in self._by_name.get(name, []) if p == spec or p.endswith("/" + spec)]
        matches.sort(key=lambda p: (p.count("/"), p))
        return matches[0] if matches else None

    def _ruby(self, importer: str, spec: str) -> str | None:
        rb = spec if spec.endswith(".rb") else spec + ".rb"
        if spec.startswith("./"):
            target = posixpath.normpath(posixpath.join(posixpath.dirname(importer), rb))
            return self._first((target,))
        return self._first((posixpath.join("lib", rb), rb))

    def _php(self, importer: str, spec: str) -> str | None:
        if spec.startswith("file:"):
            rel = spec[5:].lstrip("/")
            here = posixpath.normpath(posixpath.join(posixpath.dirname(importer), rel))
            return self._first((here, rel))
        parts = spec.split("\\")
        for i in range(len(parts) - 1):
            rel = "/".join(parts[i:]) + ".php"
            for p in self._by_name.get(posixpath.basename(rel), []):
                if p == rel or p.endswith("/" + rel):
                    return p
        return None
