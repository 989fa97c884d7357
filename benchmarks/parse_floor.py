"""The floor under a cold index: tree-sitter parsing alone, on every core.

    python benchmarks/parse_floor.py ROOT FILELIST [--queries]

Reads every file of FILELIST (paths relative to ROOT), parses it with the same
bundled grammar and parser the index uses, in a process pool sized to the cores,
and keeps nothing. With ``--queries`` it also runs our definition and reference
tags queries over each tree (still keeping nothing). ``bench_index.py`` times
this beside ctags and ``librarian index``: no index that parses every file with
tree-sitter can be faster than this on the same machine.
"""

from __future__ import annotations

import argparse
import os
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from codelibrarian.index.languages import language_for, load_queries


def parse_batch(root: str, rels: list[str], queries: bool) -> int:
    """Parse each file; returns the number of nodes captured (so nothing is optimized away)."""
    from tree_sitter import QueryCursor

    captured = 0
    for rel in rels:
        _, lang = language_for(rel)
        if lang is None:
            continue
        compiled = load_queries(lang.name)
        tree = compiled.parser.parse((Path(root) / rel).read_bytes())
        if queries:
            captured += len(QueryCursor(compiled.defs).matches(tree.root_node))
            if compiled.refs is not None:
                captured += len(QueryCursor(compiled.refs).captures(tree.root_node))
    return captured


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("root", help="the folder the listed paths are relative to")
    ap.add_argument("filelist", help="a file of paths, one a line")
    ap.add_argument("--queries", action="store_true", help="also run the tags queries")
    args = ap.parse_args(argv)
    rels = [r for r in Path(args.filelist).read_text(encoding="utf-8").splitlines() if r]
    workers = os.cpu_count() or 1
    batches = [rels[i : i + 50] for i in range(0, len(rels), 50)]
    n = len(batches)
    with ProcessPoolExecutor(max_workers=workers) as pool:
        total = sum(pool.map(parse_batch, [args.root] * n, batches, [args.queries] * n))
    print(total)
    return 0


if __name__ == "__main__":
    sys.exit(main())
