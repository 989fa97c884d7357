"""Repositories to measure on: the standard library as a git repository, clones, task
sentences made from a repository's folder names."""

from __future__ import annotations

import random
import shutil
import subprocess
import sysconfig
from pathlib import Path, PurePosixPath

__all__ = ["clone", "copy_stdlib", "git", "make_origin", "stdlib_files", "tasks_for", "tracked"]


def git(cwd: Path, *args: str) -> None:
    """``git ARGS`` in ``cwd`` with a benchmark identity; a failure raises."""
    subprocess.run(
        ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.invalid", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
    )


def tracked(repo: Path) -> list[str]:
    """The files git tracks in ``repo`` (``git ls-files``), in git's order."""
    return subprocess.run(
        ["git", "-C", str(repo), "ls-files"], capture_output=True, text=True, check=True
    ).stdout.splitlines()


def stdlib_files() -> tuple[Path, list[str]]:
    """The running Python's standard library folder and its ``.py`` files (relative,
    sorted), without ``site-packages``/``dist-packages``."""
    base = Path(sysconfig.get_paths()["stdlib"])
    rels = sorted(
        p.relative_to(base).as_posix()
        for p in base.rglob("*.py")
        if "site-packages" not in p.parts and "dist-packages" not in p.parts and p.is_file()
    )
    return base, rels


def copy_stdlib(target: Path) -> tuple[list[str], int]:
    """Copy the standard library's ``.py`` files under ``target``; their paths and bytes."""
    base, rels = stdlib_files()
    size = 0
    for rel in rels:
        dst = target / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(base / rel, dst)
        size += dst.stat().st_size
    return rels, size


def make_origin(parent: Path) -> Path:
    """``parent/origin``: the standard library's ``.py`` files committed to a new git
    repository (one commit, branch ``main``)."""
    origin = parent / "origin"
    copy_stdlib(origin)
    git(origin, "init", "-q", "-b", "main")
    git(origin, "add", "-A")
    git(origin, "commit", "-q", "-m", "stdlib")
    return origin


def clone(origin: Path, target: Path) -> Path:
    """A fresh clone of ``origin`` at ``target`` (anything there before is removed)."""
    shutil.rmtree(target, ignore_errors=True)
    git(origin.parent, "clone", "-q", str(origin), str(target))
    return target


def tasks_for(files: list[str], n: int, seed: int) -> list[str]:
    """``n`` task-like sentences from the files' folder names (what a change would
    mention), seeded: the same files and seed give the same tasks."""
    dirs = sorted({PurePosixPath(f).parent.name for f in files if "/" in f} - {""})
    rng = random.Random(seed)
    verbs = ("fix", "speed up", "add logging to", "handle errors in", "document")
    return [
        f"{rng.choice(verbs)} the {rng.choice(dirs)} code path for {rng.choice(dirs)}"
        for _ in range(n)
    ]
