"""Adapter between the context-quality harness (../shared/bench) and codelibrarian.

Compose mode (one task)::

    python benchmarks/ctxbench_adapter.py --repo DIR --query-file Q --budget N \
        [--diff-file D] [--diff-path P]

prints ``{"files": [...], "text": "the pack"}`` on stdout. In diff mode the diff
file is "the current change" and is passed as ``diff_text`` (the work tree is at
the parent commit, so the diff is not applied). ``as_of`` is fixed to one day
after the HEAD commit, so no file gets a git-recency boost and the output is
deterministic. Nothing is recorded and no cache is used.

Prepare mode (once per commit snapshot, timed by the harness as index time)::

    python benchmarks/ctxbench_adapter.py --prepare --repo DIR
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from pathlib import Path

from codelibrarian.api import Librarian
from harness.ctxbench import as_of, keep_state


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repo", required=True, type=Path)
    ap.add_argument("--prepare", action="store_true", help="only build/refresh the index")
    ap.add_argument("--query-file", type=Path)
    ap.add_argument("--budget", type=int, default=8000)
    ap.add_argument("--diff-file", type=Path, default=None)
    ap.add_argument("--diff-path", default="")
    ap.add_argument(
        "--state",
        default=".bench-cache-librarian",
        help="state folder name in the work tree (must start with .bench-cache)",
    )
    ap.add_argument("--format", default="markdown", choices=("markdown", "xml", "plain"))
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore", DeprecationWarning)
    repo = args.repo.resolve()
    if not args.state.startswith(".bench-cache") or "/" in args.state:
        ap.error("--state must be a plain name starting with .bench-cache")
    keep_state(repo, args.state)
    with Librarian(repo) as lib:
        if args.prepare:
            lib.index()
            return 0
        if args.query_file is None:
            ap.error("--query-file is required unless --prepare")
        query = args.query_file.read_text(encoding="utf-8", errors="replace")
        diff_text = None
        if args.diff_file is not None and args.diff_file.is_file():
            diff_text = args.diff_file.read_text(encoding="utf-8", errors="replace") or None
        result = lib.compose(
            query,
            budget=args.budget,
            diff_text=diff_text,
            base=None,
            fmt=args.format,
            as_of=as_of(repo),
            use_cache=False,
            record=False,
        )
    json.dump({"files": list(result.files), "text": result.text}, sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
