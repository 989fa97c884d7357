"""``doctor``: installation and repository checks, each problem with its fix.

Python, the required packages, the tokenizers, the tree-sitter grammars, SQLite's
FTS5, the config file, git, the ``.librarian/`` state folder and the index
(``PRAGMA integrity_check``, a writer killed mid-run, the parse cache). A failing check
is a problem with a level (``error`` sets the exit code, ``warning`` does not)
and the command that fixes it; nothing here raises for a failed check.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.metadata
import os
import platform
import re
import sqlite3
import stat
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..config import Config, load_config
from ..errors import ConfigError, IndexCorrupt, LibrarianError, exit_code_for
from ..tokens import SAFETY_FACTORS
from ..workspace import git
from ..workspace.state import State

__all__ = ["GRAMMARS", "DoctorReport", "run_doctor"]

#: grammars the index parses with (tree_sitter_language_pack names)
GRAMMARS: tuple[str, ...] = (
    "python",
    "javascript",
    "typescript",
    "tsx",
    "go",
    "rust",
    "java",
    "c",
    "cpp",
    "csharp",
    "ruby",
    "php",
    "kotlin",
)
_MIN_PYTHON = (3, 11)
_TOKENIZER_SAMPLE = 'def greet(name: str) -> str:\n    return f"Hello, {name}!"\n'


@dataclass(slots=True)
class DoctorReport:
    """Each check's section and the problems found; ``exit_code`` is the first error's."""

    sections: dict[str, Any] = field(default_factory=dict)
    problems: list[dict[str, str]] = field(default_factory=list)
    exit_code: int = 0

    @property
    def grammars_known(self) -> int:
        """How many grammars the grammar check looks for."""
        return len(GRAMMARS)

    def problem(self, check: str, level: str, message: str, fix: str, code: int = 1) -> None:
        self.problems.append({"check": check, "level": level, "message": message, "fix": fix})
        if level == "error" and self.exit_code == 0:
            self.exit_code = code


def _check_python(report: DoctorReport) -> None:
    ok = sys.version_info[:2] >= _MIN_PYTHON
    report.sections["python"] = {
        "version": platform.python_version(),
        "implementation": platform.python_implementation(),
        "executable": sys.executable,
        "ok": ok,
    }
    if not ok:
        report.problem(
            "python",
            "error",
            f"Python {platform.python_version()} is too old.",
            "Install Python 3.11 or newer and reinstall codelibrarian.",
        )


def _requirement_names() -> list[str]:
    try:
        reqs = importlib.metadata.requires("codelibrarian") or []
    except importlib.metadata.PackageNotFoundError:
        return []
    names: list[str] = []
    for req in reqs:
        if "extra ==" in req:
            continue
        match = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", req)
        if match:
            names.append(match.group(0))
    return sorted(set(names))


def _check_packages(report: DoctorReport) -> None:
    packages: dict[str, str | None] = {}
    try:
        packages["codelibrarian"] = importlib.metadata.version("codelibrarian")
    except importlib.metadata.PackageNotFoundError:
        packages["codelibrarian"] = None
    for name in _requirement_names():
        try:
            packages[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            packages[name] = None
            report.problem(
                "packages",
                "error",
                f"required package {name} is not installed.",
                "Reinstall codelibrarian (pip install -e . in the checkout).",
            )
    for name in ("model2vec",):  # optional extras
        try:
            packages[f"{name} (optional)"] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            packages[f"{name} (optional)"] = None
    report.sections["packages"] = packages


def _check_tokenizer(report: DoctorReport) -> None:
    from ..tokens import ENCODINGS, BpeTokenizer

    result: dict[str, Any] = {"encodings": {}, "safety_factors_permille": dict(SAFETY_FACTORS)}
    for encoding in ENCODINGS:
        started = time.perf_counter()
        try:
            tok = BpeTokenizer(encoding)
            count = tok.count(_TOKENIZER_SAMPLE)
            roundtrip = tok.decode(tok.encode(_TOKENIZER_SAMPLE)) == _TOKENIZER_SAMPLE
        except Exception as exc:  # any failure here is what doctor exists to report
            result["encodings"][encoding] = {"ok": False, "error": str(exc)}
            report.problem(
                "tokenizer",
                "error",
                f"encoding {encoding} failed to load: {exc}",
                "Reinstall bpe-openai (pip install --force-reinstall bpe-openai==0.1.4).",
            )
            continue
        result["encodings"][encoding] = {
            "ok": roundtrip and count > 0,
            "sample_tokens": count,
            "roundtrip": roundtrip,
            "load_ms": round((time.perf_counter() - started) * 1000),
        }
        if not roundtrip:
            report.problem(
                "tokenizer",
                "error",
                f"encoding {encoding} does not round-trip a sample.",
                "Reinstall bpe-openai.",
            )
    report.sections["tokenizer"] = result


def _check_grammars(report: DoctorReport) -> None:
    grammars: dict[str, bool] = {}
    try:
        pack = importlib.import_module("tree_sitter_language_pack")
    except ImportError as exc:
        report.sections["grammars"] = {"error": str(exc)}
        report.problem(
            "grammars",
            "error",
            "tree-sitter-language-pack is not importable.",
            "Reinstall codelibrarian (pip install -e .).",
        )
        return
    for name in GRAMMARS:
        try:
            pack.get_parser(name)
            grammars[name] = True
        except Exception:  # a missing grammar is a LookupError; any error means unusable
            grammars[name] = False
    report.sections["grammars"] = grammars
    missing = [name for name, ok in grammars.items() if not ok]
    if missing:
        report.problem(
            "grammars",
            "warning",
            f"no grammar for {', '.join(missing)}; those files are indexed as plain text.",
            "Reinstall tree-sitter-language-pack==0.13.0 (it bundles the grammars).",
        )


def _check_sqlite(report: DoctorReport) -> None:
    fts5 = True
    try:
        con = sqlite3.connect(":memory:")
        try:
            con.execute("CREATE VIRTUAL TABLE t USING fts5(body)")
            con.execute("INSERT INTO t(body) VALUES ('hello world')")
            fts5 = con.execute("SELECT count(*) FROM t WHERE t MATCH 'hello'").fetchone()[0] == 1
        finally:
            con.close()
    except sqlite3.Error:
        fts5 = False
    report.sections["sqlite"] = {"version": sqlite3.sqlite_version, "fts5": fts5}
    if not fts5:
        report.problem(
            "sqlite",
            "error",
            f"SQLite {sqlite3.sqlite_version} has no FTS5; full-text search cannot work.",
            "Use a Python built with FTS5 (python.org or most distribution builds).",
        )


def _check_config(report: DoctorReport, root: Path) -> Config | None:
    try:
        config = load_config(root)
    except ConfigError as exc:
        report.sections["config"] = {"ok": False, "file": exc.file, "key": exc.key, **exc.to_dict()}
        report.problem("config", "error", exc.message, exc.hint or "", exit_code_for(exc))
        return None
    report.sections["config"] = {
        "ok": True,
        "file": config.source or None,
        "total_tokens": config.budget.total_tokens,
        "model": config.compose.model,
    }
    return config


def _check_git(report: DoctorReport, root: Path) -> None:
    info: dict[str, Any] = {"available": False, "version": None, "is_repo": False, "head": None}
    try:
        out = subprocess.run(
            ["git", "--version"], capture_output=True, text=True, timeout=30, check=False
        )
        info["available"] = out.returncode == 0
        info["version"] = out.stdout.strip().removeprefix("git version ") or None
    except (OSError, subprocess.TimeoutExpired):
        pass
    if not info["available"]:
        report.problem(
            "git",
            "warning",
            "git is not installed; history, diffs and co-change are unavailable.",
            "Install git and make sure it is on PATH.",
        )
    else:
        info["is_repo"] = git.is_git_repo(root)
        if info["is_repo"]:
            info["head"] = git.head_commit(root)
        else:
            report.problem(
                "git",
                "warning",
                f"{root} is not a git repository; files are found by walking the folder.",
                "Run `git init` there if you want history, diffs and co-change.",
            )
    report.sections["git"] = info


def _check_state(report: DoctorReport, root: Path) -> None:
    state = State(root)
    info: dict[str, Any] = {"dir": str(state.dir), "exists": state.exists()}
    if not state.exists():
        report.sections["state"] = info
        report.problem(
            "state", "warning", f"{state.dir} does not exist yet.", "Run `librarian init`."
        )
        return
    try:
        info["schema_version"] = state.schema_version()
    except LibrarianError as exc:
        info["schema_version"] = None
        report.problem("state", "error", exc.message, exc.hint or "", exit_code_for(exc))
    info["gitignore"] = (state.dir / ".gitignore").is_file()
    if state.secret_path.exists():
        mode = stat.S_IMODE(state.secret_path.stat().st_mode)
        info["secret_mode"] = f"{mode:04o}"
        if mode & 0o077:
            report.problem(
                "state",
                "error",
                f"{state.secret_path} is readable by others (mode {mode:04o}).",
                f"Run: chmod 600 {state.secret_path}",
            )
    else:
        info["secret_mode"] = None
        report.problem("state", "warning", "no workspace secret yet.", "Run `librarian init`.")
    info["index"] = state.index_path.exists()
    info["writable"] = os.access(state.dir, os.W_OK)
    if not info["writable"]:
        report.problem(
            "state",
            "error",
            f"{state.dir} is not writable.",
            f"Fix the permissions of {state.dir}.",
        )
    report.sections["state"] = info


def _check_bounds(report: DoctorReport, root: Path, config: Config | None) -> None:
    """How much the state folder holds against its ``[state]`` caps, and private modes."""
    from ..config import StateConfig
    from ..persist.bounds import usage
    from ..workspace.private import loose_modes

    state = State(root)
    if not state.exists():
        return
    caps = config.state if config is not None else StateConfig()
    mib = 1024 * 1024
    cache = usage(state.cache_dir)
    decisions = usage(state.decisions_dir)
    loose = loose_modes(state.dir)
    report.sections["state_size"] = {
        "cache": {
            **cache.to_dict(),
            "max_bytes": caps.cache_max_mb * mib,
            "max_entries": caps.cache_max_entries,
        },
        "decisions": {
            **decisions.to_dict(),
            "max_bytes": caps.decisions_max_mb * mib,
            "max_age_days": caps.decisions_max_age_days,
        },
        "not_private": len(loose),
    }
    if cache.bytes > caps.cache_max_mb * mib or cache.files > caps.cache_max_entries:
        report.problem(
            "state",
            "warning",
            f"the composition cache holds {cache.files} entries, {cache.bytes // mib} MiB: over "
            f"its cap ([state] cache_max_mb = {caps.cache_max_mb}, "
            f"cache_max_entries = {caps.cache_max_entries}).",
            "It is trimmed on the next compose; or delete .librarian/cache.",
        )
    if decisions.bytes > caps.decisions_max_mb * mib:
        report.problem(
            "state",
            "warning",
            f"decision records take {decisions.bytes // mib} MiB: over their cap "
            f"([state] decisions_max_mb = {caps.decisions_max_mb}).",
            "The oldest are evicted on the next compose.",
        )
    if loose:
        report.problem(
            "state",
            "warning",
            f"{len(loose)} file(s) or folder(s) in {state.dir} are readable by others.",
            "Run `librarian init`: it makes them private (files 0600, folders 0700).",
        )


def _check_index(report: DoctorReport, root: Path, config: Config | None) -> None:
    """The index: sound (``PRAGMA integrity_check``), who writes it, how far it got."""
    from ..index.blobcache import BlobCache
    from ..index.health import integrity_check
    from ..index.lock import read_owner

    state = State(root)
    info: dict[str, Any] = {"exists": state.index_path.exists()}
    if info["exists"]:
        problems = integrity_check(state.index_path)
        info["integrity"] = problems or "ok"
        if problems:
            report.problem(
                "index",
                "error",
                f"the index is damaged: {problems[0]}",
                "Run `librarian index`: it discards a damaged index and rebuilds it "
                "from the workspace (the index holds nothing that is not derived).",
                exit_code_for(IndexCorrupt("")),
            )
        else:
            with contextlib.suppress(sqlite3.Error):
                con = sqlite3.connect(f"file:{state.index_path}?mode=ro", uri=True)
                try:
                    row = con.execute(
                        "SELECT COUNT(*), COALESCE(SUM(stage = 2), 0) FROM files"
                    ).fetchone()
                    info["files"], info["parsed"] = int(row[0]), int(row[1])
                finally:
                    con.close()
    owner = read_owner(state.index_path)
    if owner is not None and owner.state == "held":
        alive = owner.alive()
        info["writer"] = {"pid": owner.pid, "command": owner.command, "alive": alive}
        if not alive:
            report.problem(
                "index",
                "warning",
                f"the last index writer ({owner.describe()}) was killed mid-run.",
                "Run `librarian index`: it checks the index and completes it.",
            )
    cache = BlobCache.open(config.cache if config is not None else None)
    if cache is not None:
        stats = cache.stats()
        info["parse_cache"] = {
            k: stats[k] for k in ("path", "entries", "bytes", "max_bytes", "broken")
        }
        cache.close()
    report.sections["index"] = info


def run_doctor(root: Path) -> DoctorReport:
    """Run every check for the repository at ``root``."""
    report = DoctorReport()
    _check_python(report)
    _check_packages(report)
    _check_tokenizer(report)
    _check_grammars(report)
    _check_sqlite(report)
    config = _check_config(report, root)
    _check_git(report, root)
    _check_state(report, root)
    _check_bounds(report, root, config)
    _check_index(report, root, config)
    return report
