"""Secret findings on real repositories: how often the scanner fires on code that holds
no live credential, by kind of place.

    git clone https://github.com/fastapi/fastapi /tmp/fastapi   # docs with tutorials
    git clone https://github.com/pallets/flask /tmp/flask
    .venv/bin/python benchmarks/secrets_real_repos.py /tmp/fastapi /tmp/flask [--show]

Scans every text file git lists (``git ls-files``), as the librarian would before
showing it, and reports per repository: files, lines, findings, findings per 10,000
lines, and the findings by place — ``docs`` (docs/, docs_src/, .md/.rst/.txt),
``tests`` (tests/, test_*.py), ``other`` — and by rule. ``--show`` lists every finding
(rule, path, line, the first 12 characters of the value) for review; whether each
is a live credential is a judgement recorded beside the figures in
benchmarks/RESULTS.md. Recall on the planted corpus is
``tests/reliability/test_secret_surfaces.py::test_recall_on_the_planted_corpus_is_total``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path, PurePosixPath

from codelibrarian.workspace.secrets import is_sensitive_path, scan_text


def _place(path: str) -> str:
    p = PurePosixPath(path)
    if (p.parts and p.parts[0] in ("docs", "docs_src", "doc")) or p.suffix in (
        ".md",
        ".rst",
        ".txt",
    ):
        return "docs"
    if "tests" in p.parts or "test" in p.parts or p.name.startswith("test_"):
        return "tests"
    return "other"


def scan_repo(root: Path, show: bool) -> dict[str, object]:
    listed = subprocess.run(
        ["git", "-C", str(root), "ls-files", "-z"], capture_output=True, check=True
    ).stdout.split(b"\0")
    files = lines = 0
    places: Counter[str] = Counter()
    rules: Counter[str] = Counter()
    sensitive: list[str] = []
    for raw in listed:
        if not raw:
            continue
        rel = raw.decode("utf-8", "surrogateescape")
        try:
            data = (root / rel).read_bytes()
        except OSError:
            continue
        if b"\0" in data[:8192]:
            continue
        if is_sensitive_path(rel) is not None:
            sensitive.append(rel)
        text = data.decode("utf-8", "replace")
        files += 1
        lines += text.count("\n")
        for f in scan_text(text):
            places[_place(rel)] += 1
            rules[f.rule] += 1
            if show:
                value = text[f.start : f.end][:12]
                print(f"  {f.rule:24} {rel}:{f.line}  {value}...", file=sys.stderr)
    hits = sum(places.values())
    return {
        "repo": root.name,
        "commit": subprocess.run(
            ["git", "-C", str(root), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=False,
        ).stdout.strip(),
        "files": files,
        "lines": lines,
        "findings": hits,
        "per_10k_lines": round(hits * 10_000 / max(lines, 1), 3),
        "by_place": dict(sorted(places.items())),
        "by_rule": dict(sorted(rules.items())),
        "sensitive_by_path": sorted(sensitive),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("repos", nargs="+", type=Path, help="git checkouts to scan")
    parser.add_argument("--show", action="store_true", help="list every finding on stderr")
    args = parser.parse_args(argv)
    for repo in args.repos:
        print(json.dumps(scan_repo(repo.resolve(), args.show)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
