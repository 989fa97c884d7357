"""``librarian init | doctor | scan | tokens``: the workspace commands.

* ``init``   creates ``.librarian/`` (own ``.gitignore``, schema version, secret).
* ``doctor`` checks the installation and the repository, each problem with its fix.
* ``scan``   summarises what the librarian would read: files by language, skips by reason.
* ``tokens`` counts tokens per file with the target model's tokenizer.
"""

from __future__ import annotations

import contextlib
import fnmatch
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
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, TextIO

import typer
from rich.console import Console
from rich.table import Table

from ..config import Config, load_config
from ..errors import ConfigError, IndexCorrupt, LibrarianError, UsageError, exit_code_for
from ..tokens import SAFETY_FACTORS, encoding_for_model, get_tokenizer
from ..workspace import git
from ..workspace.files import ScanResult, read_text, scan_workspace
from ..workspace.state import SCHEMA_VERSION, State
from ._common import (
    JSON_OPTION,
    REPO_OPTION,
    fail,
    print_json,
    progress,
    resolve_repo,
)

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


def register(app: typer.Typer) -> None:
    """Register this module's commands on ``app``."""
    app.command("init")(init_cmd)
    app.command("doctor")(doctor_cmd)
    app.command("scan")(scan_cmd)
    app.command("tokens")(tokens_cmd)


def _plain(stream: TextIO) -> Console:
    """A console with markup off, so paths and keys such as [budget] print as they are."""
    return Console(file=stream, soft_wrap=True, highlight=False, markup=False)


# ---------------------------------------------------------------- init


def init_cmd(repo: Path = REPO_OPTION, as_json: bool = JSON_OPTION) -> None:
    """Create the .librarian/ state folder (idempotent) and check the config."""
    try:
        root = resolve_repo(repo)
        config = load_config(root)
        state = State(root)
        existed = state.exists() and state.secret_path.exists()
        state.ensure()
        state.secret()
    except LibrarianError as exc:
        raise fail(exc, as_json=as_json) from None
    data = {
        "ok": True,
        "root": str(root),
        "state_dir": str(state.dir),
        "created": not existed,
        "schema_version": SCHEMA_VERSION,
        "config": config.source or "defaults",
    }
    if as_json:
        print_json(data)
        return
    verb = "Created" if not existed else "Already set up:"
    out = _plain(sys.stdout)
    out.print(f"{verb} {state.dir} (schema {SCHEMA_VERSION}, secret mode 0600).")
    out.print(f"Config: {config.source or 'defaults (no librarian.toml)'}")


# ---------------------------------------------------------------- doctor


@dataclass(slots=True)
class _Report:
    sections: dict[str, Any] = field(default_factory=dict)
    problems: list[dict[str, str]] = field(default_factory=list)
    exit_code: int = 0

    def problem(self, check: str, level: str, message: str, fix: str, code: int = 1) -> None:
        self.problems.append({"check": check, "level": level, "message": message, "fix": fix})
        if level == "error" and self.exit_code == 0:
            self.exit_code = code


def _check_python(report: _Report) -> None:
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


def _check_packages(report: _Report) -> None:
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


def _check_tokenizer(report: _Report) -> None:
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


def _check_grammars(report: _Report) -> None:
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


def _check_sqlite(report: _Report) -> None:
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


def _check_config(report: _Report, root: Path) -> Config | None:
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


def _check_git(report: _Report, root: Path) -> None:
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


def _check_state(report: _Report, root: Path) -> None:
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


def _check_index(report: _Report, root: Path, config: Config | None) -> None:
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


def doctor_cmd(repo: Path = REPO_OPTION, as_json: bool = JSON_OPTION) -> None:
    """Check Python, packages, tokenizers, grammars, SQLite, config, git, state and index."""
    try:
        root = resolve_repo(repo)
    except LibrarianError as exc:
        raise fail(exc, as_json=as_json) from None
    report = _Report()
    found: list[Config | None] = []
    checks: list[Callable[[], object]] = [
        lambda: _check_python(report),
        lambda: _check_packages(report),
        lambda: _check_tokenizer(report),
        lambda: _check_grammars(report),
        lambda: _check_sqlite(report),
        lambda: found.append(_check_config(report, root)),
        lambda: _check_git(report, root),
        lambda: _check_state(report, root),
        lambda: _check_index(report, root, found[0] if found else None),
    ]
    for check in checks:
        check()
    ok = report.exit_code == 0
    if as_json:
        print_json({"ok": ok, "root": str(root), **report.sections, "problems": report.problems})
    else:
        _print_doctor(root, report)
    if not ok:
        raise typer.Exit(report.exit_code)


def _print_doctor(root: Path, report: _Report) -> None:
    out = _plain(sys.stdout)
    sec = report.sections
    py = sec["python"]
    out.print(f"Repository   {root}")
    out.print(f"Python       {py['version']} ({py['implementation']})")
    pkgs = ", ".join(f"{k} {v or 'MISSING'}" for k, v in sec["packages"].items())
    out.print(f"Packages     {pkgs}")
    encs = sec["tokenizer"]["encodings"]
    tok = ", ".join(
        f"{name} {'ok' if info.get('ok') else 'FAILED'}"
        + (f" (sample {info['sample_tokens']} tokens)" if "sample_tokens" in info else "")
        for name, info in encs.items()
    )
    out.print(f"Tokenizer    {tok}")
    grammars = sec["grammars"]
    have = sum(1 for ok in grammars.values() if ok is True)
    out.print(
        f"Grammars     {have}/{len(GRAMMARS)} ({', '.join(k for k, v in grammars.items() if v)})"
    )
    sq = sec["sqlite"]
    out.print(f"SQLite       {sq['version']}, FTS5 {'yes' if sq['fts5'] else 'NO'}")
    cfg = sec["config"]
    if cfg.get("ok"):
        out.print(
            f"Config       {cfg['file'] or 'defaults'} "
            f"(budget {cfg['total_tokens']} tokens, model {cfg['model']})"
        )
    else:
        out.print("Config       INVALID (see below)")
    g = sec["git"]
    git_text = f"git {g['version']}" if g["available"] else "git not found"
    if g["is_repo"]:
        git_text += f", HEAD {(g['head'] or 'no commits')[:12]}"
    out.print(f"Git          {git_text}")
    st = sec["state"]
    out.print(f"State        {st['dir']} {'present' if st['exists'] else 'absent'}")
    ix = sec["index"]
    if not ix["exists"]:
        out.print("Index        none yet (built on first use)")
    elif ix.get("integrity") == "ok":
        parsed = f", {ix['parsed']}/{ix['files']} files parsed" if "files" in ix else ""
        out.print(f"Index        integrity ok{parsed}")
    else:
        out.print("Index        DAMAGED (see below)")
    pc = ix.get("parse_cache")
    if pc:
        out.print(
            f"Parse cache  {pc['path']} ({pc['entries']} entries, "
            f"{pc['bytes'] // 1048576} of {pc['max_bytes'] // 1048576} MiB)"
        )
    if not report.problems:
        out.print("All checks passed.")
        return
    target = out if report.exit_code == 0 else _plain(sys.stderr)
    for problem in report.problems:
        target.print(
            f"{problem['level'].upper()}: [{problem['check']}] {problem['message']}",
            markup=False,
        )
        if problem["fix"]:
            target.print(f"  fix: {problem['fix']}", markup=False)


# ---------------------------------------------------------------- scan


def _language_of(path: str) -> str:
    """The index's language label for ``path`` when available, else its extension."""
    try:
        languages = importlib.import_module("codelibrarian.index.languages")
        label, _ = languages.language_for(path)
        return str(label)
    except (ImportError, AttributeError):
        suffix = PurePosixPath(path).suffix.lower()
        return suffix.lstrip(".") or "(none)"


def _scan(root: Path) -> tuple[Config, ScanResult]:
    config = load_config(root)
    return config, scan_workspace(root, config.workspace)


def scan_summary(result: ScanResult) -> dict[str, Any]:
    """The JSON shape of ``librarian scan``."""
    by_ext: dict[str, dict[str, int]] = {}
    by_lang: dict[str, dict[str, int]] = {}
    for f in result.files:
        ext = PurePosixPath(f.path).suffix.lower() or "(none)"
        lang = _language_of(f.path)
        for table, key in ((by_ext, ext), (by_lang, lang)):
            row = table.setdefault(key, {"files": 0, "bytes": 0})
            row["files"] += 1
            row["bytes"] += f.size

    def ordered(table: dict[str, dict[str, int]]) -> dict[str, dict[str, int]]:
        return dict(sorted(table.items(), key=lambda kv: (-kv[1]["files"], kv[0])))

    return {
        "ok": True,
        "root": str(result.root),
        "is_git": result.is_git,
        "files": len(result.files),
        "total_bytes": result.total_bytes,
        "by_language": ordered(by_lang),
        "by_extension": ordered(by_ext),
        "skipped": result.skip_counts(),
        "skipped_files": [{"path": s.path, "reason": s.reason} for s in result.skipped],
        "notes": [{"path": s.path, "note": s.reason} for s in result.notes],
    }


def scan_cmd(repo: Path = REPO_OPTION, as_json: bool = JSON_OPTION) -> None:
    """Summarise the files the librarian reads: by language, total size, skips by reason."""
    try:
        root = resolve_repo(repo)
        _, result = _scan(root)
    except LibrarianError as exc:
        raise fail(exc, as_json=as_json) from None
    summary = scan_summary(result)
    if as_json:
        print_json(summary)
        return
    out = _plain(sys.stdout)
    mode = "git ls-files" if result.is_git else "folder walk (no git)"
    out.print(
        f"{root}: {summary['files']} files, {summary['total_bytes']:,} bytes (listed by {mode})"
    )
    table = Table(show_edge=False, pad_edge=False, box=None)
    table.add_column("language")
    table.add_column("files", justify="right")
    table.add_column("bytes", justify="right")
    for lang, row in summary["by_language"].items():
        table.add_row(lang, str(row["files"]), f"{row['bytes']:,}")
    out.print(table)
    if summary["skipped"]:
        skipped = ", ".join(f"{reason} {n}" for reason, n in summary["skipped"].items())
        out.print(f"Skipped: {skipped}")
    else:
        out.print("Skipped: none")
    if summary["notes"]:
        out.print(f"Decoded with replacement (not UTF-8): {len(summary['notes'])} files")


# ---------------------------------------------------------------- tokens

_GLOB_CHARS = re.compile(r"[*?\[]")


def _path_filter(root: Path, patterns: list[str]) -> Callable[[str], bool]:
    """Match repo paths by prefix (a file or folder) or by glob.

    Like git: when the current directory is inside the repository, plain paths
    are relative to it; otherwise (``--repo`` pointing elsewhere) they are
    relative to the repository root. Globs always match the whole repo-relative
    path with ``fnmatch`` rules ("*" also crosses "/").
    """
    if not patterns:
        return lambda _path: True
    try:
        here: PurePosixPath | None = PurePosixPath(Path.cwd().resolve().relative_to(root))
    except ValueError:
        here = None
    prefixes: list[str] = []
    globs: list[str] = []
    for raw in patterns:
        if _GLOB_CHARS.search(raw):
            globs.append(raw.removeprefix("./"))
            continue
        if Path(raw).is_absolute():
            try:
                rel = PurePosixPath(Path(raw).resolve().relative_to(root))
            except ValueError:
                raise UsageError(
                    f"{raw} is outside the repository {root}.",
                    hint="Pass paths inside the repository, or use --repo.",
                ) from None
        else:
            rel = PurePosixPath(os.path.normpath((here or PurePosixPath()) / raw))
        if rel.parts[:1] == ("..",):
            raise UsageError(
                f"{raw} is outside the repository {root}.",
                hint="Pass paths inside the repository, or use --repo.",
            )
        if str(rel) == ".":
            return lambda _path: True
        prefixes.append(rel.as_posix())

    def keep(path: str) -> bool:
        if any(path == p or path.startswith(p + "/") for p in prefixes):
            return True
        return any(fnmatch.fnmatchcase(path, g) for g in globs)

    return keep


def tokens_cmd(
    paths: list[str] | None = typer.Argument(
        None,
        help="Files or folders (relative to the current directory inside the repo, else to "
        "the repo root) or globs on repo-relative paths.",
    ),
    model: str | None = typer.Option(
        None, "--model", "-m", help="Target model (default: [compose].model from the config)."
    ),
    top: int = typer.Option(0, "--top", help="Show only the N largest files (0 = all)."),
    repo: Path = REPO_OPTION,
    as_json: bool = JSON_OPTION,
) -> None:
    """Count tokens per file for the repository's files (largest first) and in total."""
    try:
        root = resolve_repo(repo)
        config, result = _scan(root)
        keep = _path_filter(root, list(paths or []))
        model_name = model or config.compose.model
        tokenizer = get_tokenizer(model_name)
        encoding, factor = encoding_for_model(model_name)
        selected = [f for f in result.files if keep(f.path)]
        if paths and not selected:
            raise UsageError(
                f"no listed file matches {' '.join(paths)}.",
                hint="Run `librarian scan` to see what is listed (ignored and skipped files "
                "are not counted).",
            )
        rows: list[tuple[str, int, int]] = []
        with progress("counting tokens", len(selected), enabled=not as_json) as bar:
            for f in selected:
                text, _ = read_text(root, f.path)
                rows.append((f.path, tokenizer.count(text), f.size))
                bar.advance()
    except LibrarianError as exc:
        raise fail(exc, as_json=as_json) from None
    rows.sort(key=lambda r: (-r[1], r[0]))
    total = sum(r[1] for r in rows)
    shown = rows[:top] if top > 0 else rows
    if as_json:
        print_json(
            {
                "ok": True,
                "root": str(root),
                "model": model_name,
                "encoding": encoding,
                "safety_factor_permille": factor,
                "tokenizer": tokenizer.name,
                "files": [{"path": p, "tokens": t, "bytes": b} for p, t, b in shown],
                "file_count": len(rows),
                "total_tokens": total,
                "total_bytes": sum(r[2] for r in rows),
            }
        )
        return
    out = _plain(sys.stdout)
    scale = "exact" if factor == 1000 else f"x{factor / 1000:.3f} safety factor, rounded up"
    out.print(f"model {model_name}: {encoding} ({scale})")
    table = Table(show_edge=False, pad_edge=False, box=None)
    table.add_column("tokens", justify="right")
    table.add_column("path")
    for path, count, _ in shown:
        table.add_row(f"{count:,}", path)
    out.print(table)
    if len(shown) < len(rows):
        out.print(f"... {len(rows) - len(shown)} more files")
    out.print(f"total {total:,} tokens in {len(rows)} files")
