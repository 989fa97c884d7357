"""Codebase and change facts, computed from the index and the trigger (the shell side).

``techniques.facts`` declares the typed fact schema that conditions are checked
against; this module computes the values, deterministically, from

* the index — file paths and languages, import specs — for ``codebase.*``;
* the current change (parsed diffs) for ``change.*``;
* a few well-known files on disk (CI configuration lives in hidden folders the
  index skips) for ``codebase.has_ci``.

Each true fact carries evidence: up to five repository paths, sorted, that made it
true. Detection rules are tables below (path patterns, import prefixes, changed-line
keywords); they are heuristics, stated so a reader can check why a fact is true.
Cost: two indexed queries and a pass over the paths — a few milliseconds for a
2,000-file index (see benchmarks/RESULTS.md).
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from ..techniques.facts import Facts, default_facts, intent_facts
from ..workspace.git import FileDiff
from .languages import LANGUAGES, language_for

__all__ = ["EVIDENCE_LIMIT", "change_facts", "codebase_facts", "compute_facts"]

EVIDENCE_LIMIT = 5


class _Store(Protocol):
    def files(self) -> Sequence[Any]: ...
    def import_specs(self) -> list[tuple[str, str, int, str | None]]: ...


def _rx(*parts: str) -> re.Pattern[str]:
    return re.compile("|".join(parts), re.IGNORECASE)


# -- path classification: directory names and file names, not regexes over whole paths
#    (a 2,000-file index is classified in a few milliseconds; directories are cached)

_TEST_DIRS = frozenset({"tests", "test", "__tests__", "spec", "specs", "testing"})
_AUTH_WORDS_PATH = frozenset(
    {
        "auth", "authn", "authz", "authentication", "authorization", "login", "logout",
        "signin", "signup", "oauth", "oauth2", "jwt", "sso", "saml", "session", "sessions",
        "password", "passwords", "permission", "permissions", "rbac", "acl", "credential",
        "credentials",
    }
)  # fmt: skip
_API_DIRS = frozenset(
    {"api", "apis", "route", "routes", "router", "routers", "handler", "handlers",
     "controller", "controllers", "endpoint", "endpoints", "resources", "graphql", "rpc"}
)  # fmt: skip
_API_STEMS = frozenset({"urls", "routes", "views", "api", "openapi", "swagger"})
_API_EXTS = frozenset({"py", "ts", "js", "go", "rb", "php", "json", "yaml", "yml"})
_DB_DIRS = frozenset(
    {"migration", "migrations", "alembic", "db", "database", "models", "schema", "repositories"}
)
_UI_DIRS = frozenset(
    {"components", "pages", "views", "templates", "ui", "widgets", "screens", "layouts"}
)
_UI_EXTS = frozenset({"tsx", "jsx", "vue", "svelte", "html", "css", "scss", "sass", "less"})
_DOC_EXTS = frozenset({"md", "rst", "adoc"})
_CONFIG_DIRS = frozenset({"config", "conf", "settings"})
_CONFIG_EXTS = frozenset({"toml", "yaml", "yml", "ini", "cfg", "conf", "properties"})
_SCHEMA_EXTS = frozenset({"sql", "proto", "prisma", "graphql", "gql"})
_JS_EXTS = frozenset({"js", "jsx", "ts", "tsx", "mjs", "cjs", "mts", "cts"})
_TOKEN_SPLIT = re.compile(r"[_.\-]+")


@functools.lru_cache(maxsize=4096)
def _dir_kinds(directory: str) -> frozenset[str]:
    kinds: set[str] = set()
    for part in directory.split("/") if directory else ():
        if part in _TEST_DIRS:
            kinds.add("test")
        if _AUTH_WORDS_PATH.intersection(_TOKEN_SPLIT.split(part)):
            kinds.add("auth")
        if part in _API_DIRS:
            kinds.add("api")
        if part in _DB_DIRS:
            kinds.add("database")
        if part in _UI_DIRS:
            kinds.add("ui")
        if part in ("doc", "docs"):
            kinds.add("docs")
        if part in _CONFIG_DIRS:
            kinds.add("config")
    return frozenset(kinds)


def _name_kinds(name: str) -> set[str]:
    low = name.lower()
    stem, dot, ext = low.rpartition(".")
    if not dot:
        stem, ext = low, ""
    kinds: set[str] = set()
    if (
        (low.startswith("test_") and ext == "py")
        or (stem.endswith("_test") and ext in ("py", "go", "rb", "ex", "exs"))
        or ((".test." in low or ".spec." in low) and ext in _JS_EXTS)
        or (
            name.rpartition(".")[0].endswith(("Test", "Tests", "IT"))
            and ext in ("java", "kt", "cs")
        )
        or low.endswith("_spec.rb")
    ):
        kinds.add("test")
    if _AUTH_WORDS_PATH.intersection(_TOKEN_SPLIT.split(stem)):
        kinds.add("auth")
    if (stem in _API_STEMS and ext in _API_EXTS) or ext == "proto":
        kinds.add("api")
    if ext == "sql" or (stem in ("models", "schema") and ext in ("py", "rb", "ts", "js")):
        kinds.add("database")
    if low == "schema.prisma":
        kinds.add("database")
    if ext in _UI_EXTS:
        kinds.add("ui")
    if ext in _DOC_EXTS:
        kinds.add("docs")
    if (
        ext in _CONFIG_EXTS
        or low == ".env"
        or low.startswith(".env.")
        or (stem in ("settings", "config", "configuration") and ext in ("py", "js", "ts", "json"))
    ):
        kinds.add("config")
    if ext in _SCHEMA_EXTS or (
        stem.startswith(("openapi", "swagger")) and ext in ("json", "yaml", "yml")
    ):
        kinds.add("schema")
    return kinds


def _path_kinds(path: str) -> set[str]:
    """What a repository path looks like: test, auth, api, database, ui, docs, config, schema."""
    directory, _, name = path.rpartition("/")
    return _name_kinds(name) | _dir_kinds(directory.lower())


_DEP_FILES = frozenset(
    {
        "package.json", "package-lock.json", "yarn.lock", "pnpm-lock.yaml", "pyproject.toml",
        "pipfile", "pipfile.lock", "poetry.lock", "uv.lock", "setup.py", "setup.cfg", "go.mod",
        "go.sum", "cargo.toml", "cargo.lock", "gemfile", "gemfile.lock", "composer.json",
        "composer.lock", "pom.xml", "build.gradle", "build.gradle.kts", "mix.exs",
    }
)  # fmt: skip
_REQUIREMENTS = re.compile(r"(^|/)requirements[^/]*\.(txt|in)$", re.IGNORECASE)

#: import prefix -> framework name (the first match wins; prefixes end at a separator)
_FRAMEWORKS: tuple[tuple[str, str], ...] = (
    ("django", "django"), ("flask", "flask"), ("fastapi", "fastapi"), ("starlette", "starlette"),
    ("sqlalchemy", "sqlalchemy"), ("celery", "celery"), ("aiohttp", "aiohttp"),
    ("tornado", "tornado"), ("pytest", "pytest"), ("typer", "typer"), ("click", "click"),
    ("react", "react"), ("react-dom", "react"), ("next", "nextjs"), ("vue", "vue"),
    ("@angular/core", "angular"), ("svelte", "svelte"), ("express", "express"), ("koa", "koa"),
    ("fastify", "fastify"), ("@nestjs/core", "nestjs"), ("jest", "jest"), ("vitest", "vitest"),
    ("mocha", "mocha"), ("@prisma/client", "prisma"), ("typeorm", "typeorm"),
    ("sequelize", "sequelize"), ("mongoose", "mongoose"),
    ("github.com/gin-gonic/gin", "gin"), ("github.com/labstack/echo", "echo"),
    ("gorm.io/gorm", "gorm"), ("org.springframework", "spring"), ("org.junit", "junit"),
    ("actix_web", "actix"), ("axum", "axum"), ("rocket", "rocket"), ("tokio", "tokio"),
    ("diesel", "diesel"), ("rails", "rails"), ("sinatra", "sinatra"), ("rspec", "rspec"),
    ("illuminate", "laravel"), ("symfony", "symfony"),
)  # fmt: skip
_AUTH_IMPORTS = (
    "jwt", "jose", "passlib", "bcrypt", "argon2", "oauthlib", "authlib", "flask_login",
    "django.contrib.auth", "rest_framework.authentication", "passport", "jsonwebtoken",
    "next-auth", "@auth", "github.com/golang-jwt", "golang.org/x/oauth2",
    "org.springframework.security", "devise", "omniauth", "firebase_admin.auth",
)  # fmt: skip
_API_IMPORTS = (
    "flask", "fastapi", "starlette", "django.urls", "django.http", "rest_framework", "aiohttp.web",
    "express", "koa", "fastify", "@nestjs", "github.com/gin-gonic/gin",
    "github.com/labstack/echo", "net/http", "org.springframework.web", "actix_web", "axum",
    "rocket", "grpc", "graphql",
)  # fmt: skip
_DB_IMPORTS = (
    "sqlalchemy", "sqlite3", "psycopg", "psycopg2", "pymongo", "motor", "django.db", "peewee",
    "tortoise", "asyncpg", "aiosqlite", "@prisma/client", "typeorm", "sequelize", "mongoose",
    "knex", "pg", "mysql", "mysql2", "gorm.io", "database/sql", "github.com/jmoiron/sqlx",
    "diesel", "sqlx", "java.sql", "javax.persistence", "jakarta.persistence",
    "org.hibernate", "activerecord",
)  # fmt: skip
_UI_IMPORTS = (
    "react",
    "react-dom",
    "vue",
    "svelte",
    "@angular",
    "react-native",
    "solid-js",
    "preact",
)

_CODE_LANGUAGES = frozenset(lang.name for lang in LANGUAGES)
_CI_FILES = (
    ".github/workflows", ".gitlab-ci.yml", ".circleci", "Jenkinsfile", "azure-pipelines.yml",
    ".travis.yml", "bitbucket-pipelines.yml", ".buildkite", ".ci",
)  # fmt: skip

_AUTH_WORDS = _rx(
    r"\b(password|passwd|authenticat\w*|authoriz\w*|permission\w*|oauth\w*|jwt|"
    r"login|logout|session\w*|csrf|bcrypt|argon2|api[_-]?key|access[_-]?token|is_admin|role[s]?)\b"
)
_INPUT_WORDS = _rx(
    r"request\.(args|form|json|data|files|get_json|body|query_params|GET|POST)",
    r"\breq\.(body|query|params|headers)",
    r"\binput\(",
    r"sys\.argv",
    r"argparse|parse_args|typer\.(Option|Argument)|click\.(option|argument)",
    r"json\.loads|yaml\.(load|safe_load)|pickle\.loads|marshal\.loads|json\.Unmarshal",
    r"\bFormData\b|URLSearchParams|querystring",
    r"@RequestBody|@RequestParam|@PathVariable",
    r"\$_(GET|POST|REQUEST|COOKIE)",
    r"r\.(URL\.Query|FormValue|Body)",
    r"\bdeserializ\w*|\bparse_qs\b|urllib\.parse",
)
_ROUTE_WORDS = _rx(
    r"@(app|router|bp|blueprint|api)\.(route|get|post|put|patch|delete)\b",
    r"\b(app|router)\.(get|post|put|patch|delete|use)\(",
    r"@(Get|Post|Put|Patch|Delete|Request)Mapping",
    r"HandleFunc\(|\.Handle\(",
    r"path\(|re_path\(|url\(",
)
_SQL_WORDS = _rx(
    r"\b(SELECT\s.+\sFROM|INSERT\s+INTO|UPDATE\s+\w+\s+SET|DELETE\s+FROM|CREATE\s+TABLE|ALTER\s+TABLE)\b",
    r"\.objects\.|session\.(query|execute|add)\(|\.execute\(",
)


_SEPARATORS = re.compile(r"[./:]")


def _candidates(spec: str) -> list[str]:
    """``spec`` and each of its prefixes that ends before a separator, longest first."""
    s = spec.strip().strip("'\"").lower()
    cuts = [m.start() for m in _SEPARATORS.finditer(s)]
    return [s, *(s[:i] for i in reversed(cuts) if i)]


def _table(prefixes: Iterable[str], value: Any = True) -> dict[str, Any]:
    return {p.lower(): (value if value is not True else p) for p in prefixes}


_FW_TABLE = {p.lower(): name for p, name in _FRAMEWORKS}
_KIND_TABLES: tuple[tuple[str, dict[str, Any]], ...] = (
    ("codebase.has_auth", _table(_AUTH_IMPORTS)),
    ("codebase.has_api", _table(_API_IMPORTS)),
    ("codebase.has_database", _table(_DB_IMPORTS)),
    ("codebase.has_ui", _table(_UI_IMPORTS)),
)


def _classify(spec: str) -> tuple[str | None, tuple[str, ...]]:
    """``(framework or None, facts the import supports)`` for one import spec."""
    cands = _candidates(spec)
    framework = next((_FW_TABLE[c] for c in cands if c in _FW_TABLE), None)
    kinds = tuple(fact for fact, table in _KIND_TABLES if any(c in table for c in cands))
    return framework, kinds


class _Evidence:
    def __init__(self) -> None:
        self._by: dict[str, set[str]] = {}

    def add(self, fact: str, path: str) -> None:
        self._by.setdefault(fact, set()).add(path)

    def has(self, fact: str) -> bool:
        return bool(self._by.get(fact))

    def paths(self, fact: str) -> set[str]:
        return self._by.get(fact, set())

    def export(self) -> dict[str, tuple[str, ...]]:
        return {k: tuple(sorted(v)[:EVIDENCE_LIMIT]) for k, v in sorted(self._by.items()) if v}


def _is_dep_file(path: str) -> bool:
    name = path.rsplit("/", 1)[-1].lower()
    return name in _DEP_FILES or bool(_REQUIREMENTS.search(path))


def _ranked_languages(languages: Iterable[str]) -> list[str]:
    counts = Counter(lang for lang in languages if lang not in ("text", ""))
    return [lang for lang, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]


def codebase_facts(
    store: _Store, *, root: Path | None = None, is_git: bool = False
) -> tuple[dict[str, Any], _Evidence]:
    """``codebase.*`` values and their evidence (see the module docstring)."""
    ev = _Evidence()
    files = store.files()
    paths = [f.path for f in files]
    code = {f.path for f in files if f.language in _CODE_LANGUAGES}
    parsed = [f.language for f in files if f.language in _CODE_LANGUAGES]
    path_kinds = {p: _path_kinds(p) for p in paths}
    tests = [p for p in paths if "test" in path_kinds[p]]
    for p in tests:
        ev.add("codebase.has_tests", p)
    for p in paths:
        k = path_kinds[p]
        # names of data files and documents say little; code paths and schema files do
        trusted = p in code or "schema" in k
        if "auth" in k and p in code and "test" not in k:
            ev.add("codebase.has_auth", p)
        if "api" in k and trusted:
            ev.add("codebase.has_api", p)
        if "database" in k and trusted:
            ev.add("codebase.has_database", p)
        if "ui" in k:
            ev.add("codebase.has_ui", p)
    frameworks: set[str] = set()
    test_set = set(tests)
    seen: dict[str, tuple[str | None, tuple[str, ...]]] = {}
    for path, spec, _line, resolved in store.import_specs():
        if resolved:  # a module of this repository, not a library
            continue
        got = seen.get(spec)
        if got is None:
            got = seen[spec] = _classify(spec)
        framework, kinds = got
        if framework is not None:
            frameworks.add(framework)
            ev.add(f"codebase.frameworks.{framework}", path)
        if path not in test_set:
            for fact in kinds:
                ev.add(fact, path)
    docs = [p for p in paths if "docs" in path_kinds[p]]
    has_docs = any(p.lower().startswith(("docs/", "doc/")) for p in docs) or len(docs) >= 3
    if has_docs:
        for p in docs:
            ev.add("codebase.has_docs", p)
    if root is not None:
        for name in _CI_FILES:
            if (root / name).exists():
                ev.add("codebase.has_ci", name)
    languages = _ranked_languages(parsed)
    values = {
        "languages": languages,
        "primary_language": languages[0] if languages else "",
        "file_count": len(paths),
        "test_file_count": len(tests),
        "has_tests": bool(tests),
        "frameworks": sorted(frameworks),
        "has_auth": ev.has("codebase.has_auth"),
        "has_api": ev.has("codebase.has_api"),
        "has_database": ev.has("codebase.has_database"),
        "has_ui": ev.has("codebase.has_ui"),
        "has_ci": ev.has("codebase.has_ci"),
        "has_docs": has_docs,
        "has_git": is_git,
    }
    return values, ev


def _changed_lines(diff: FileDiff) -> Iterable[str]:
    for hunk in diff.hunks:
        for line in hunk.lines:
            if line[:1] in "+-" and not line.startswith(("+++", "---")):
                yield line[1:]


def change_facts(
    changes: Sequence[FileDiff], *, codebase_evidence: _Evidence | None = None
) -> tuple[dict[str, Any], _Evidence]:
    """``change.*`` values and their evidence from the parsed diffs of the change."""
    ev = _Evidence()
    known = codebase_evidence or _Evidence()
    added = removed = 0
    paths = sorted({d.path for d in changes})
    for d in sorted(changes, key=lambda d: (d.path, d.old_path or "")):
        p = d.path
        k = _path_kinds(p)
        lines = list(_changed_lines(d))
        for hunk in d.hunks:
            for line in hunk.lines:
                if line.startswith("+") and not line.startswith("+++"):
                    added += 1
                elif line.startswith("-") and not line.startswith("---"):
                    removed += 1
        text = "\n".join(lines)
        is_test = "test" in k
        is_code = language_for(p)[1] is not None
        if is_test:
            ev.add("change.touches_tests", p)
        if not is_test:
            auth_path = is_code and "auth" in k
            if auth_path or p in known.paths("codebase.has_auth") or _AUTH_WORDS.search(text):
                ev.add("change.touches_auth", p)
            if _INPUT_WORDS.search(text):
                ev.add("change.touches_input", p)
            if "api" in k or _ROUTE_WORDS.search(text) or p in known.paths("codebase.has_api"):
                ev.add("change.touches_api", p)
            if "database" in k or _SQL_WORDS.search(text):
                ev.add("change.touches_database", p)
        if "ui" in k:
            ev.add("change.touches_ui", p)
        if "config" in k:
            ev.add("change.touches_config", p)
        if _is_dep_file(p):
            ev.add("change.touches_dependencies", p)
        if "docs" in k:
            ev.add("change.touches_docs", p)
    values = {
        "present": bool(paths),
        "files_changed": len(paths),
        "lines_added": added,
        "lines_removed": removed,
        "lines_changed": added + removed,
        "languages": _ranked_languages(language_for(p)[0] for p in paths if language_for(p)[1]),
    }
    for name in (
        "touches_auth", "touches_input", "touches_api", "touches_tests", "touches_database",
        "touches_ui", "touches_config", "touches_dependencies", "touches_docs",
    ):  # fmt: skip
        values[name] = ev.has(f"change.{name}")
    return values, ev


def compute_facts(
    store: _Store,
    changes: Sequence[FileDiff] = (),
    *,
    task: str = "",
    root: Path | None = None,
    is_git: bool = False,
) -> Facts:
    """All facts for one planning call: codebase, change and intent, with evidence."""
    values: dict[str, Mapping[str, Any]] = dict(default_facts())
    codebase, cev = codebase_facts(store, root=root, is_git=is_git)
    change, chev = change_facts(changes, codebase_evidence=cev)
    values["codebase"] = codebase
    values["change"] = change
    values["intent"] = intent_facts(task)
    evidence = {**cev.export(), **chev.export()}
    return Facts(values, evidence)
