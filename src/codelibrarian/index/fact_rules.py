"""The detection rules behind codebase and change facts, as tables a reader can check.

Paths are classified by directory names and file names (set lookups, cached per
directory), imports by their dotted/slashed prefixes, changed lines by keyword
patterns. :mod:`.facts` applies them; every rule here is a heuristic, and every
fact it makes true carries the paths that made it so.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from typing import Any

from .languages import LANGUAGES

__all__ = [
    "AUTH_WORDS",
    "CI_FILES",
    "CODE_LANGUAGES",
    "INPUT_WORDS",
    "ROUTE_WORDS",
    "SQL_WORDS",
    "classify_import",
    "is_dep_file",
    "path_kinds",
]


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


def path_kinds(path: str) -> set[str]:
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

CODE_LANGUAGES = frozenset(lang.name for lang in LANGUAGES)
CI_FILES = (
    ".github/workflows", ".gitlab-ci.yml", ".circleci", "Jenkinsfile", "azure-pipelines.yml",
    ".travis.yml", "bitbucket-pipelines.yml", ".buildkite", ".ci",
)  # fmt: skip

AUTH_WORDS = _rx(
    r"\b(password|passwd|authenticat\w*|authoriz\w*|permission\w*|oauth\w*|jwt|"
    r"login|logout|session\w*|csrf|bcrypt|argon2|api[_-]?key|access[_-]?token|is_admin|role[s]?)\b"
)
INPUT_WORDS = _rx(
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
ROUTE_WORDS = _rx(
    r"@(app|router|bp|blueprint|api)\.(route|get|post|put|patch|delete)\b",
    r"\b(app|router)\.(get|post|put|patch|delete|use)\(",
    r"@(Get|Post|Put|Patch|Delete|Request)Mapping",
    r"HandleFunc\(|\.Handle\(",
    r"path\(|re_path\(|url\(",
)
SQL_WORDS = _rx(
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


def classify_import(spec: str) -> tuple[str | None, tuple[str, ...]]:
    """``(framework or None, facts the import supports)`` for one import spec."""
    cands = _candidates(spec)
    framework = next((_FW_TABLE[c] for c in cands if c in _FW_TABLE), None)
    kinds = tuple(fact for fact, table in _KIND_TABLES if any(c in table for c in cands))
    return framework, kinds


def is_dep_file(path: str) -> bool:
    name = path.rsplit("/", 1)[-1].lower()
    return name in _DEP_FILES or bool(_REQUIREMENTS.search(path))
