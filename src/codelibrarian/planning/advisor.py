"""The codebase advisor (seed 004 P6): which features this codebase has, which workflows fit.

:func:`advise` reads an :class:`IndexView` — the indexed paths, the libraries they
import and the names they define — and decides, for each of the seed's ten
codebase features (the first ten ``DOMAINS``: auth, api, database, ui, testing,
config, observability, integrations, performance, async), whether it is
**present**, with evidence files and a confidence.

The seed asked a keyword search per feature and kept whatever came back — but a
keyword index always returns *something*, so every feature was "found". Here the
evidence is typed and weighed, and absence is a normal answer:

==============  ===================================================  =================
signal          what counts                                          strength (‰)
==============  ===================================================  =================
import          a non-test file imports a library of the feature     600 / 700 / 800
                (jwt, sqlalchemy, celery, prometheus_client ...)     for 1 / 2 / 3+ files
generic import  a library used for much else too (logging,           300 / 450 / 600
                threading, an HTTP client)
path            a directory or file name of the feature (``auth/``,  400 / 550 / 700
                ``routes.py``, ``migrations/``, ``*.tsx``) outside
                docs, examples, hidden folders and root metadata
symbols         definitions named with the feature's words           100 / 250 / 400
                (``authenticate``, ``CacheStore``, ``spawn_worker``) for 1 / 3 / 6+ files
==============  ===================================================  =================

Signals combine as a noisy-or: ``1 - (1 - a)(1 - b)...``. A feature is present at
:data:`PRESENT` (500) or more: names alone never reach it (400 at most), nor
does one file named for the feature or one generic import; a library made for
the feature does. The thresholds were set on hand-labelled
repositories (benchmarks/RESULTS.md, "Advisor").

Suggestions (3–5) come from the features: the seed's table (auth →
``tc_auth_security_review`` high, api → ``tc_api_change_review`` high, database →
``tc_migration_review``, ui → ``tc_ui_accessibility_review``, performance →
``tc_performance_regression``), extended to the other five, plus ``tc_test_backfill``
when tests are *absent*. A suggestion's priority drops one level when its
evidence is under 700‰; the list is ordered by priority, confidence, then id, and
padded with general-purpose workflows when fewer than three apply.

Pure: the view in, the report out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..index.fact_rules import path_kinds
from ..techniques.vocabulary import DOMAINS

__all__ = [
    "FEATURES",
    "PRESENT",
    "Advice",
    "Feature",
    "IndexView",
    "Suggestion",
    "advise",
]

FEATURES: tuple[str, ...] = DOMAINS[:10]
PRESENT = 500
EVIDENCE_FILES = 5
_PRIORITY_RANK = {"high": 0, "medium": 1, "low": 2}
_LOWER = {"high": "medium", "medium": "low", "low": "low"}
_IMPORT_STRENGTH = (0, 600, 700, 800)
_GENERIC_STRENGTH = (0, 300, 450, 600)
_PATH_STRENGTH = (0, 400, 550, 700)
_SYMBOL_STRENGTH = ((6, 400), (3, 250), (1, 100))
#: folders whose files describe or build the project rather than being it
_NOT_CODE_DIRS = frozenset({"docs", "doc", "examples", "example", "site", "website"})
_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+")


@dataclass(frozen=True, slots=True)
class _Rule:
    description: str
    kinds: frozenset[str] = frozenset()
    dirs: frozenset[str] = frozenset()
    imports: tuple[str, ...] = ()
    words: frozenset[str] = frozenset()
    #: libraries used for much else too (logging, threading, an HTTP client): weaker
    generic: tuple[str, ...] = ()


def _r(
    description: str,
    *,
    kinds: str = "",
    dirs: str = "",
    imports: str = "",
    words: str = "",
    generic: str = "",
) -> _Rule:
    return _Rule(
        description,
        frozenset(kinds.split()),
        frozenset(dirs.split()),
        tuple(imports.split()),
        frozenset(words.split()),
        tuple(generic.split()),
    )


#: per feature: path kinds (``index.fact_rules.path_kinds``), extra directory/file-name
#: words, library import prefixes, and words in definition names
RULES: Mapping[str, _Rule] = {
    "auth": _r(
        "authentication and authorization code",
        kinds="auth",
        imports="jwt jose passlib bcrypt argon2 oauthlib authlib flask_login django.contrib.auth "
        "rest_framework.authentication passport jsonwebtoken next-auth @auth "
        "github.com/golang-jwt golang.org/x/oauth2 org.springframework.security devise omniauth "
        "firebase_admin.auth fastapi.security",
        words="authenticate authentication authorize authorization login logout password "
        "passwords jwt oauth permission permissions credential credentials signin signup",
    ),
    "api": _r(
        "API endpoints and routes",
        kinds="api",
        imports="flask fastapi starlette django.urls django.http rest_framework aiohttp.web "
        "express koa fastify @nestjs github.com/gin-gonic/gin github.com/labstack/echo "
        "org.springframework.web actix_web axum rocket grpc graphql",
        words="endpoint endpoints route routes router handler handlers controller",
    ),
    "database": _r(
        "database models, queries and migrations",
        kinds="database",
        imports="sqlalchemy sqlmodel sqlite3 psycopg psycopg2 pymongo motor django.db peewee "
        "tortoise asyncpg aiosqlite alembic @prisma/client typeorm sequelize mongoose knex pg "
        "mysql mysql2 gorm.io database/sql github.com/jmoiron/sqlx diesel sqlx java.sql "
        "javax.persistence jakarta.persistence org.hibernate activerecord redis",
        words="query queries repository migration migrations transaction cursor orm schema "
        "table tables sql",
    ),
    "ui": _r(
        "user-interface components",
        kinds="ui",
        imports="react react-dom vue svelte @angular react-native solid-js preact @chakra-ui "
        "@mui tkinter pyqt5 pyside6 gtk",
        words="component widget render screen button modal layout",
    ),
    "testing": _r(
        "tests and test utilities",
        kinds="test",
        imports="pytest unittest hypothesis jest vitest mocha @testing-library junit org.junit "
        "rspec testing testify",
        words="fixture fixtures mock mocks",
    ),
    "config": _r(
        "configuration and environment handling",
        kinds="config",
        dirs="config conf settings",
        imports="pydantic_settings dotenv python-dotenv decouple dynaconf viper envy "
        "github.com/spf13/viper github.com/kelseyhightower/envconfig",
        generic="configparser tomllib toml yaml clap argparse config",
        words="config configuration settings env environ options getenv",
    ),
    "observability": _r(
        "error handling, logging and metrics",
        dirs="logging telemetry metrics monitoring tracing observability",
        imports="structlog loguru prometheus_client opentelemetry sentry_sdk @sentry winston "
        "pino bunyan tracing env_logger go.uber.org/zap github.com/sirupsen/logrus org.slf4j "
        "datadog statsd",
        generic="logging log slog",
        words="logger logging metric metrics telemetry tracer span instrument monitor",
    ),
    "integrations": _r(
        "external service integrations",
        dirs="integrations clients connectors adapters webhooks providers",
        imports="boto3 botocore stripe slack_sdk twilio sendgrid emails aws-sdk @aws-sdk "
        "googleapis octokit @octokit github",
        generic="requests httpx aiohttp.client urllib3 smtplib axios node-fetch reqwest hyper",
        words="webhook webhooks client clients adapter connector integration sdk smtp email",
    ),
    "performance": _r(
        "caching and performance optimization",
        dirs="cache caching benchmarks bench perf",
        imports="cachetools memcache pymemcache diskcache aiocache criterion pytest_benchmark "
        "lru-cache node-cache",
        generic="redis",
        words="cache cached caching memoize lru pool benchmark profile throttle",
    ),
    "async": _r(
        "background jobs and async processing",
        dirs="workers jobs tasks queue queues",
        imports="celery rq dramatiq huey arq anyio trio tokio async-std async_std rayon crossbeam "
        "crossbeam_channel crossbeam_deque crossbeam_utils "
        "crossbeam-channel golang.org/x/sync bull bullmq worker_threads sidekiq",
        generic="asyncio concurrent.futures threading multiprocessing futures std::thread "
        "std::sync java.util.concurrent sync",
        words="worker workers queue job jobs task tasks spawn thread threads scheduler "
        "executor concurrent async await channel mutex",
    ),
}

#: feature -> (composition, priority, why it fits)
SUGGESTIONS: Mapping[str, tuple[str, str, str]] = {
    "auth": ("tc_auth_security_review", "high",
             "auth code deserves a threat model, abuse cases and a secret scan"),
    "api": ("tc_api_change_review", "high",
            "endpoints have callers: changes need impact, dependents and test gaps checked"),
    "database": ("tc_migration_review", "medium",
                 "schema and query changes need impact and risk review before they ship"),
    "ui": ("tc_ui_accessibility_review", "medium",
           "UI changes need an accessibility review beside the change impact"),
    "performance": ("tc_performance_regression", "medium",
                    "caches and hot paths regress quietly: measure before and after"),
    "observability": ("tc_incident_response", "medium",
                      "logs and metrics exist to rebuild an incident timeline from"),
    "integrations": ("tc_dependency_update", "medium",
                     "external clients and SDKs change under you: upgrade them deliberately"),
    "config": ("tc_security_audit", "low",
               "configuration and environment handling is where secrets leak"),
    "async": ("tc_root_cause_recovery", "low",
              "concurrency bugs are intermittent: reproduce before hypothesizing"),
    "testing": ("tc_change_verification", "low",
                "there are tests to verify each change against"),
}  # fmt: skip
NO_TESTS = ("tc_test_backfill", "high", "no tests were found: backfill before changing code")
GENERAL: tuple[tuple[str, str], ...] = (
    ("tc_codebase_onboarding", "a map of the codebase helps every later workflow"),
    ("tc_change_verification", "every change benefits from impact and risk review"),
    ("tc_debt_triage", "a debt inventory tells what to improve first"),
)


@dataclass(frozen=True, slots=True)
class IndexView:
    """What the advisor reads: ``(path, language)``, library imports ``(path, spec)``
    (specs the indexer did not resolve to a file of the repository) and definitions
    ``(path, name)``."""

    files: tuple[tuple[str, str], ...]
    imports: tuple[tuple[str, str], ...]
    symbols: tuple[tuple[str, str], ...]


@dataclass(frozen=True, slots=True)
class Signal:
    kind: str
    files: int
    strength: int
    detail: str

    def to_dict(self) -> dict[str, Any]:
        return {"signal": self.kind, "files": self.files, "strength_per_mille": self.strength,
                "detail": self.detail}  # fmt: skip


@dataclass(frozen=True, slots=True)
class Feature:
    id: str
    description: str
    confidence: int
    present: bool
    signals: tuple[Signal, ...]
    evidence: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "feature": self.id,
            "description": self.description,
            "present": self.present,
            "confidence_per_mille": self.confidence,
            "signals": [s.to_dict() for s in self.signals],
            "evidence": list(self.evidence),
        }


@dataclass(frozen=True, slots=True)
class Suggestion:
    composition: str
    name: str
    priority: str
    reason: str
    features: tuple[str, ...]
    evidence: tuple[str, ...]
    confidence: int
    primitives: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "composition": self.composition,
            "name": self.name,
            "priority": self.priority,
            "reason": self.reason,
            "features": list(self.features),
            "evidence": list(self.evidence),
            "confidence_per_mille": self.confidence,
            "primitives": list(self.primitives),
        }


@dataclass(frozen=True, slots=True)
class Advice:
    features: tuple[Feature, ...]
    suggestions: tuple[Suggestion, ...]
    files: int
    notes: tuple[str, ...] = field(default=())

    def feature(self, fid: str) -> Feature:
        return next(f for f in self.features if f.id == fid)

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": "codelibrarian.advice/1",
            "files": self.files,
            "threshold_per_mille": PRESENT,
            "features": [f.to_dict() for f in self.features],
            "suggestions": [s.to_dict() for s in self.suggestions],
            "notes": list(self.notes),
        }


def _project_file(path: str) -> bool:
    """Not documentation, examples, hidden folders or root-level project metadata."""
    parts = path.lower().split("/")
    if any(p.startswith(".") for p in parts[:-1]) or parts[0] in _NOT_CODE_DIRS:
        return False
    return not (len(parts) == 1 and "." in parts[0] and not _code_name(parts[0]))


def _code_name(name: str) -> bool:
    return name.rsplit(".", 1)[-1] in _CODE_EXTS


_CODE_EXTS = frozenset(
    [
        "py",
        "js",
        "ts",
        "tsx",
        "jsx",
        "mjs",
        "cjs",
        "go",
        "rs",
        "rb",
        "java",
        "kt",
        "cs",
        "php",
        "c",
        "h",
        "cc",
        "cpp",
        "hpp",
        "swift",
        "scala",
        "ex",
        "exs",
        "vue",
        "svelte",
        "html",
    ]
)


def _words(name: str) -> set[str]:
    return {w.lower() for part in name.split("_") for w in _WORD.findall(part)} | {name.lower()}


def _matches(spec: str, prefixes: Iterable[str]) -> str | None:
    s = spec.strip().strip("'\"").lower()
    for p in prefixes:
        if s == p or s.startswith((p + ".", p + "/", p + ":", p + "::")):
            return p
    return None


def _tiered(n: int, table: Sequence[int]) -> int:
    return table[min(n, len(table) - 1)]


def _noisy_or(strengths: Iterable[int]) -> int:
    miss = 1_000_000
    for s in strengths:
        miss = miss * (1000 - s) // 1000
    return 1000 - miss // 1000


def _feature(
    fid: str,
    view: IndexView,
    tests: set[str],
    kinds: Mapping[str, set[str]],
    named: Sequence[tuple[str, str, frozenset[str]]],
) -> Feature:
    rule = RULES[fid]
    testing = fid == "testing"
    imp: dict[str, set[str]] = {}
    gen: dict[str, set[str]] = {}
    for path, spec in view.imports:
        if path in tests and not testing:
            continue
        lib = _matches(spec, rule.imports)
        if lib is not None:
            imp.setdefault(path, set()).add(lib)
        elif (lib := _matches(spec, rule.generic)) is not None:
            gen.setdefault(path, set()).add(lib)
    paths: set[str] = set()
    for path, _lang in view.files:
        if (path in tests and not testing) or not _project_file(path):
            continue
        parts = path.lower().split("/")
        if (
            rule.kinds & kinds[path]
            or rule.dirs & set(parts[:-1])
            or (rule.dirs and parts[-1].rsplit(".", 1)[0] in rule.dirs)
        ):
            paths.add(path)
    sym: dict[str, str] = {}
    if rule.words:
        for path, name, words in named:
            if path in tests and not testing:
                continue
            if path not in sym and rule.words & words:
                sym[path] = name
    signals: list[Signal] = []
    if imp:
        libs = sorted({lib for v in imp.values() for lib in v})
        signals.append(Signal("import", len(imp), _tiered(len(imp), _IMPORT_STRENGTH),
                              f"imports {', '.join(libs[:4])}"))  # fmt: skip
    if gen:
        libs = sorted({lib for v in gen.values() for lib in v})
        signals.append(
            Signal(
                "generic import",
                len(gen),
                _tiered(len(gen), _GENERIC_STRENGTH),
                f"imports {', '.join(libs[:4])} (used for much else too)",
            )
        )
    if paths:
        signals.append(Signal("path", len(paths), _tiered(len(paths), _PATH_STRENGTH),
                              f"{len(paths)} file(s) named for it"))  # fmt: skip
    if sym:
        strength = next((s for n, s in _SYMBOL_STRENGTH if len(sym) >= n), 0)
        names = sorted(set(sym.values()))[:3]
        signals.append(Signal("symbols", len(sym), strength,
                              f"definitions such as {', '.join(names)}"))  # fmt: skip
    confidence = _noisy_or(s.strength for s in signals)
    ranked = list(dict.fromkeys([*sorted(imp), *sorted(paths), *sorted(gen), *sorted(sym)]))
    return Feature(
        fid,
        rule.description,
        confidence,
        confidence >= PRESENT,
        tuple(signals),
        tuple(ranked[:EVIDENCE_FILES]),
    )


def advise(view: IndexView, compositions: Mapping[str, tuple[str, tuple[str, ...]]]) -> Advice:
    """Features and 3–5 suggestions; ``compositions`` maps id -> (name, primitives)."""
    kinds = {path: path_kinds(path) for path, _ in view.files}
    tests = {p for p, k in kinds.items() if "test" in k}
    cache: dict[str, frozenset[str]] = {}
    for _path, name in view.symbols:
        if name not in cache:
            cache[name] = frozenset(_words(name))
    named = [(path, name, cache[name]) for path, name in view.symbols]
    features = tuple(_feature(fid, view, tests, kinds, named) for fid in FEATURES)
    picked: dict[str, Suggestion] = {}

    def offer(cid: str, priority: str, reason: str, *, feats: tuple[str, ...],
              evidence: tuple[str, ...], confidence: int) -> None:  # fmt: skip
        if cid not in compositions:
            return
        old = picked.get(cid)
        if old is not None:
            if _PRIORITY_RANK[old.priority] < _PRIORITY_RANK[priority]:
                priority = old.priority
            reason = f"{old.reason}; {reason}"
            feats = old.features + feats
            evidence = tuple(dict.fromkeys(old.evidence + evidence))[:EVIDENCE_FILES]
            confidence = max(old.confidence, confidence)
        name, prims = compositions[cid]
        picked[cid] = Suggestion(cid, name, priority, reason, feats, evidence, confidence, prims)

    for f in features:
        if f.present and f.id in SUGGESTIONS:
            cid, priority, why = SUGGESTIONS[f.id]
            if f.confidence < 700:
                priority = _LOWER[priority]
            offer(cid, priority, f"{f.description} found ({f.confidence}‰): {why}",
                  feats=(f.id,), evidence=f.evidence, confidence=f.confidence)  # fmt: skip
    testing = next(f for f in features if f.id == "testing")
    code = sum(1 for p, lang in view.files if lang not in ("text", "") and p not in tests)
    if not testing.present and code:
        cid, priority, why = NO_TESTS
        offer(
            cid,
            priority,
            why,
            feats=("testing",),
            evidence=(),
            confidence=1000 - testing.confidence,
        )
    ordered = sorted(
        picked.values(), key=lambda s: (_PRIORITY_RANK[s.priority], -s.confidence, s.composition)
    )[:5]
    notes: list[str] = []
    for cid, why in GENERAL:
        if len(ordered) >= 3:
            break
        if cid not in {s.composition for s in ordered} and cid in compositions:
            name, prims = compositions[cid]
            ordered.append(Suggestion(cid, name, "low", why, (), (), 0, prims))
            notes.append(f"{cid} added as a general-purpose workflow (few features found)")
    return Advice(features, tuple(ordered), len(view.files), tuple(notes))
