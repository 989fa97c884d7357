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

    .venv/bin/python benchmarks/ctxbench_misses.py --bench SCRATCH/ctxbench --tag TAG \\
        --dump DIR [--cells intent.2000,intent.8000]

Line numbers come from ``git diff -U0`` of the task's commit, counted the way the
harness's ``edit_locus`` picks lines (removed lines, or the two non-blank lines either
side of a pure insertion; lines of 10+ characters).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from ctxbench_fast import _harness

_HEAD = re.compile(r"^### (.*) \[([^\]]+)\]")
_PATH = re.compile(r"^(\S+?)(?::([0-9,\-]+))?$")
_HUNK = re.compile(r"@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@")
_TEST = re.compile(r"(^|/)(tests?|testsuite|spec)/|(^|/)test_|_test\.|\.test\.|_spec\.")
_DOC = re.compile(r"\.(md|rst|txt|html|adoc)$|(^|/)docs?/", re.IGNORECASE)
CLASSES = (
    "all shown",
    "shown partly",
    "shown, none of the edit",
    "named in the map only",
    "absent",
)


def _git(repo: Path, *args: str) -> str:
    out = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, check=True)
    return out.stdout.decode("utf-8", "replace")


def edit_lines(repo: Path, parent: str, commit: str, path: str) -> list[int]:
    """Pre-image line numbers of the edit locus (see the module docstring)."""
    diff = _git(repo, "diff", "-U0", "--no-color", "--no-renames", parent, commit, "--", path)
    pre = _git(repo, "show", f"{parent}:{path}").split("\n")
    out: list[int] = []
    for line in diff.split("\n"):
        found = _HUNK.match(line)
        if not found:
            continue
        start = int(found.group(1))
        count = 1 if found.group(2) is None else int(found.group(2))
        if count:
            out.extend(range(start, start + count))
            continue
        before = [i for i in range(min(start, len(pre)), 0, -1) if pre[i - 1].strip()][:2]
        after = [i for i in range(start + 1, len(pre) + 1) if pre[i - 1].strip()][:2]
        out.extend(sorted(before + after))
    return [n for n in out if 1 <= n <= len(pre) and len(pre[n - 1].strip()) >= 10]


def blocks(text: str) -> list[dict[str, Any]]:
    """The pack's blocks: path, shown line numbers, kind and body lines."""
    out: list[dict[str, Any]] = []
    for line in text.splitlines():
        head = _HEAD.match(line)
        if head:
            where = _PATH.match(head.group(1))
            shown: set[int] = set()
            for part in ((where.group(2) or "") if where else "").split(","):
                if "-" in part:
                    a, b = part.split("-")
                    shown.update(range(int(a), int(b) + 1))
            path = where.group(1) if where else head.group(1)
            out.append({"path": path, "shown": shown, "kind": head.group(2), "lines": []})
        elif out:
            out[-1]["lines"].append(line)
    return out


def _spent_on(block: dict[str, Any], gold: list[str]) -> str:
    if block["kind"].startswith("dependency_graph"):
        return "map"
    if block["kind"].startswith(("local_diff", "recent_edit")):
        return "the change"
    if block["path"] in gold:
        return "gold files"
    if _TEST.search(block["path"]):
        return "tests"
    if _DOC.search(block["path"]):
        return "docs"
    return "other code"


def run_arguments(description: str | None) -> argparse.ArgumentParser:
    """The options every reader of a runner's ``--dump`` run takes."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--bench", required=True, type=Path)
    ap.add_argument("--tag", required=True)
    ap.add_argument("--dump", required=True, type=Path)
    ap.add_argument("--cells", default="intent.2000,intent.8000")
    return ap


def load_tasks(bench: Path) -> dict[str, dict[str, Any]]:
    """Every task of the harness copy's task files, by id."""
    tasks: dict[str, dict[str, Any]] = {}
    for path in (bench / "tasks").glob("*.jsonl"):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                task = json.loads(line)
                tasks[task["id"]] = task
    return tasks


def main(argv: list[str] | None = None) -> int:
    args = run_arguments(__doc__).parse_args(argv)
    run = _harness(args.bench.resolve())
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
    raise SystemExit(main())
