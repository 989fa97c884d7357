"""Where a run of the in-process runner loses edit recall: each gold file of each pack, classified.

Reads a ``ctxbench_fast.py`` run (its ``fast-TAG-raw.jsonl`` and the packs it wrote
with ``--dump DIR``) and sorts every scored gold file of the chosen cells into:

- ``all shown``: every edit line (the harness's edit locus) is in the pack;
- ``shown partly`` / ``shown, none of the edit``: the file has a block of code in the
  pack, with some / none of its edit lines;
- ``named in the map only`` / ``absent``: no block of its code; the repository map
  names it, or nothing does.

For each class it prints the files, the edit recall they lose (the task-weighted
share of the cell's score), what the packs spent their tokens on (the map, the gold
files, other code, tests, documentation, the change itself) and, for files that are
shown, how many missing edit lines lie within three lines of a shown one::

    .venv/bin/python benchmarks/lab/ctxbench_misses.py --bench SCRATCH/ctxbench --tag TAG \\
        --dump DIR [--cells intent.2000,intent.8000]

Line numbers come from ``git diff -U0`` of the task's commit, counted the way the
harness's ``edit_locus`` picks lines (removed lines, or the two non-blank lines either
side of a pure insertion; lines of 10+ characters).
"""

from __future__ import annotations

import json
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from harness.ctxbench import (
    DOC,
    TEST,
    blocks,
    dump_arguments,
    edit_lines,
    load_harness,
    load_tasks,
)

CLASSES = (
    "all shown",
    "shown partly",
    "shown, none of the edit",
    "named in the map only",
    "absent",
)


def _spent_on(block: dict[str, Any], gold: list[str]) -> str:
    if block["kind"].startswith("dependency_graph"):
        return "map"
    if block["kind"].startswith(("local_diff", "recent_edit")):
        return "the change"
    if block["path"] in gold:
        return "gold files"
    if TEST.search(block["path"]):
        return "tests"
    if DOC.search(block["path"]):
        return "docs"
    return "other code"


def main(argv: list[str] | None = None) -> int:
    args = dump_arguments(__doc__.split("\n\n")[0]).parse_args(argv)
    run = load_harness(args.bench.resolve())
    tasks = load_tasks(args.bench)
    raw = args.bench / "results" / f"fast-{args.tag}-raw.jsonl"
    rows = [json.loads(x) for x in raw.read_text(encoding="utf-8").splitlines() if x.strip()]
    for cell in args.cells.split(","):
        files: Counter[str] = Counter()
        lost: Counter[str] = Counter()
        spent: dict[str, Counter[str]] = defaultdict(Counter)
        missing: Counter[str] = Counter()
        picked = [r for r in rows if f"{r['mode']}.{r['budget']}" == cell]
        for row in picked:
            task = tasks[row["task"]]
            text = (args.dump / row["repo"] / f"{row['task']}.{cell}.txt").read_text("utf-8")
            found = blocks(text)
            tokens: Counter[str] = Counter()
            for block in found:
                tokens[_spent_on(block, row["gold"])] += run.count_tokens("\n".join(block["lines"]))
            mapped = "\n".join(
                "\n".join(b["lines"]) for b in found if b["kind"].startswith("dependency_graph")
            )
            for gold, score in zip(row["gold"], row["edit_file_scores"], strict=True):
                shown = set().union(*(b["shown"] for b in found if b["path"] == gold))
                if score >= 1:
                    kind = "all shown"
                elif shown:
                    kind = "shown, none of the edit" if score == 0 else "shown partly"
                else:
                    kind = "named in the map only" if f"{gold}:" in mapped else "absent"
                files[kind] += 1
                lost[kind] += (1 - score) / len(row["gold"])
                spent[kind].update(tokens)
                if shown and score < 1:
                    repo = args.bench / ".data" / "repos" / row["repo"]
                    numbers = edit_lines(repo, task["parent"], task["commit"], gold)
                    gone = [n for n in numbers if n not in shown]
                    near = [n for n in gone if any(abs(n - s) <= 3 for s in shown)]
                    missing["missing"] += len(gone)
                    missing["within 3 lines of a shown one"] += len(near)
        n = max(1, len(picked))
        score = sum(r["edit_recall"] for r in picked) / n
        print(f"## {cell}: {len(picked)} packs, edit recall {score:.3f}\n")
        print(
            "| gold files | n | edit recall lost | mean tokens per pack: "
            + "map / gold / other code / tests / docs / change |"
        )
        print("|---|---:|---:|---|")
        for kind in CLASSES:
            if not files[kind]:
                continue
            t = spent[kind]
            share = " / ".join(
                str(t[k] // files[kind])
                for k in ("map", "gold files", "other code", "tests", "docs", "the change")
            )
            print(f"| {kind} | {files[kind]} | {lost[kind] / n:.3f} | {share} |")
        print(f"\nedit lines missing from shown files: {dict(missing)}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
