"""``librarian init | doctor | scan | tokens``: the workspace commands.

* ``init``   creates ``.librarian/`` (own ``.gitignore``, schema version, secret).
* ``doctor`` checks the installation and the repository, each problem with its fix.
* ``scan``   summarises what the librarian would read: files by language, skips by reason.
* ``tokens`` counts tokens per file with the target model's tokenizer.
"""

from __future__ import annotations

import fnmatch
import os
import re
import sys
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, TextIO

import typer
from rich.console import Console
from rich.table import Table

from ..errors import LibrarianError, UsageError
from ._common import (
    FORMAT_OPTION,
    JSON_OPTION,
    REPO_OPTION,
    fail,
    json_mode,
    print_json,
    progress,
    resolve_repo,
)

if TYPE_CHECKING:  # the facade pulls in the index and the composer: import it on use
    from ..service.doctor import DoctorReport


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


def init_cmd(
    repo: Path = REPO_OPTION, as_json: bool = JSON_OPTION, fmt: str | None = FORMAT_OPTION
) -> None:
    """Create the .librarian/ state folder (idempotent) and check the config."""
    as_json = json_mode(as_json, fmt)
    from ..api import Librarian

    try:
        result = Librarian(resolve_repo(repo)).init()
    except LibrarianError as exc:
        raise fail(exc, as_json=as_json) from None
    if as_json:
        print_json(result.to_dict())
        return
    verb = "Created" if result.created else "Already set up:"
    out = _plain(sys.stdout)
    out.print(f"{verb} {result.state_dir} (schema {result.schema_version}, secret mode 0600).")
    config = "defaults (no librarian.toml)" if result.config == "defaults" else result.config
    out.print(f"Config: {config}")


# ---------------------------------------------------------------- doctor


def doctor_cmd(
    repo: Path = REPO_OPTION, as_json: bool = JSON_OPTION, fmt: str | None = FORMAT_OPTION
) -> None:
    """Check Python, packages, tokenizers, grammars, SQLite, config, git, state and index."""
    as_json = json_mode(as_json, fmt)
    from ..api import doctor

    try:
        root = resolve_repo(repo)
    except LibrarianError as exc:
        raise fail(exc, as_json=as_json) from None
    report = doctor(root)
    ok = report.exit_code == 0
    if as_json:
        print_json({"ok": ok, "root": str(root), **report.sections, "problems": report.problems})
    else:
        _print_doctor(root, report)
    if not ok:
        raise typer.Exit(report.exit_code)


def _print_doctor(root: Path, report: DoctorReport) -> None:
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
    names = ", ".join(k for k, v in grammars.items() if v)
    out.print(f"Grammars     {have}/{report.grammars_known} ({names})")
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
    size = sec.get("state_size")
    if size:
        mib = 1024 * 1024
        cache, dec = size["cache"], size["decisions"]
        out.print(
            f"State size   cache {cache['files']} entries, {cache['bytes'] / mib:.1f} of "
            f"{cache['max_bytes'] // mib} MiB; decisions {dec['files']} files, "
            f"{dec['bytes'] / mib:.1f} of {dec['max_bytes'] // mib} MiB, kept "
            f"{dec['max_age_days']} days"
        )
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


def scan_cmd(
    repo: Path = REPO_OPTION, as_json: bool = JSON_OPTION, fmt: str | None = FORMAT_OPTION
) -> None:
    """Summarise the files the librarian reads: by language, total size, skips by reason."""
    as_json = json_mode(as_json, fmt)
    from ..api import Librarian, scan_summary

    try:
        root = resolve_repo(repo)
        result = Librarian(root).scan()
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


def tokens_cmd(  # noqa: PLR0917 - typer maps each option to a parameter
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
    fmt: str | None = FORMAT_OPTION,
) -> None:
    """Count tokens per file for the repository's files (largest first) and in total."""
    as_json = json_mode(as_json, fmt)
    from ..api import Librarian

    try:
        root = resolve_repo(repo)
        lib = Librarian(root)
        keep = _path_filter(root, list(paths or []))
        with progress("counting tokens", None, enabled=not as_json) as bar:

            def report(done: int, total: int) -> None:
                bar.update(total=total, completed=done)

            counts = lib.token_counts(keep, model=model, progress=report)
        if paths and not counts.rows:
            raise UsageError(
                f"no listed file matches {' '.join(paths)}.",
                hint="Run `librarian scan` to see what is listed (ignored and skipped files "
                "are not counted).",
            )
    except LibrarianError as exc:
        raise fail(exc, as_json=as_json) from None
    rows = counts.rows
    total = counts.total_tokens
    shown = rows[:top] if top > 0 else rows
    model_name, encoding, factor = counts.model, counts.encoding, counts.safety_factor_permille
    if as_json:
        print_json(
            {
                "ok": True,
                "root": str(root),
                "model": model_name,
                "encoding": encoding,
                "safety_factor_permille": factor,
                "tokenizer": counts.tokenizer,
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
