"""Edit recall lost, by definition: why each missing edit line of a gold file is missing.

Reads a ``ctxbench_fast.py`` run (``fast-TAG-raw.jsonl`` and its ``--dump DIR`` packs)
and the runner's cached index of each task's parent (its ``symbols`` table), and
sorts every kept edit line (the harness's edit locus: unique to the file, 10+
characters) that an intent pack does not show into:

- ``file absent, named in the map`` / ``file absent``: no block of the file's code;
- ``definition not shown``: the innermost definition holding the line (a function,
  a method, a class's own lines) has none of its own lines in the pack;
- ``definition cut``: the definition has some of its own lines shown (beyond its
  first line, which a member's frame may show), the edit line is elided inside it;
- ``module lines``: the line lies in no definition, and is not shown.

A file's lost edit recall (``(1 - score) / gold files``) is shared over its missing
lines, so a class's figure is the cell's edit recall it costs. It also prints where
each pack spent its tokens (the map, the gold files' edited definitions, the gold
files' other lines, other code, prose lines of code blocks, tests, docs) for packs
with and without a loss::

    .venv/bin/python benchmarks/lab/ctxbench_loss.py --bench SCRATCH/ctxbench --tag TAG \\
        --dump DIR [--cells intent.2000,intent.8000]
"""

from __future__ import annotations

import json
import sqlite3
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from codelibrarian.sources.excerpts import prose_lines
from harness.ctxbench import (
    DOC,
    TEST,
    blocks,
    dump_arguments,
    edit_lines,
    index_key,
    load_harness,
    load_tasks,
    norm_line,
)

CLASSES = (
    "file absent, named in the map",
    "file absent",
    "definition not shown",
    "definition cut",
    "module lines",
)
SPENT = (
    "map",
    "gold: edited definitions",
    "gold: other lines",
    "other code",
    "prose in code blocks",
    "tests",
    "docs",
)


def symbols(db: Path, path: str) -> list[tuple[int, int]]:
    """(start, end) of every definition of ``path`` in the index at ``db``."""
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        rows = con.execute(
            "SELECT s.start_line, s.end_line FROM symbols s JOIN files f ON f.id = s.file_id "
            "WHERE f.path = ?",
            (path,),
        ).fetchall()
    finally:
        con.close()
    return sorted({(int(a), int(b)) for a, b in rows})


def innermost(defs: list[tuple[int, int]], line: int) -> tuple[int, int] | None:
    holding = [d for d in defs if d[0] <= line <= d[1]]
    return min(holding, key=lambda d: (d[1] - d[0], d[0])) if holding else None


def own_lines(defs: list[tuple[int, int]], d: tuple[int, int]) -> set[int]:
    """The definition's lines that no definition nested in it holds."""
    inner = [e for e in defs if e != d and d[0] <= e[0] and e[1] <= d[1]]
    return {n for n in range(d[0], d[1] + 1) if not any(a <= n <= b for a, b in inner)}


def numbered_body(block: dict[str, Any], rows: list[str] | None) -> list[tuple[int, str]]:
    """The block's code lines, numbered: matched in order against the file's ``rows``
    when given (a shrunk block's ranges do not say which lines it kept), else counted."""
    fences = [k for k, x in enumerate(block["lines"]) if x.startswith("```")]
    if len(fences) < 2:
        return []
    body = block["lines"][fences[0] + 1 : fences[-1]]
    code = [x for x in body if x.strip() != "⋮"]
    if rows is None:
        return list(enumerate(code, 1))
    out: list[tuple[int, str]] = []
    at = 0
    for line in code:
        k = at
        while k < len(rows) and rows[k] != line:
            k += 1
        if k < len(rows):
            out.append((k + 1, line))
            at = k + 1
    return out


def main(argv: list[str] | None = None) -> int:
    ap = dump_arguments(__doc__.split("\n\n")[0])
    ap.add_argument("--detail", action="store_true", help="one line per file with a loss")
    args = ap.parse_args(argv)
    bench = args.bench.resolve()
    run = load_harness(bench)
    key = index_key()
    tasks = load_tasks(bench)
    raw = bench / "results" / f"fast-{args.tag}-raw.jsonl"
    rows = [json.loads(x) for x in raw.read_text(encoding="utf-8").splitlines() if x.strip()]
    for cell in args.cells.split(","):
        files: Counter[str] = Counter()
        lost: Counter[str] = Counter()
        lines_in: Counter[str] = Counter()
        sizes: dict[str, Counter[str]] = defaultdict(Counter)
        spent = {True: Counter[str](), False: Counter[str]()}
        packs = Counter[bool]()
        picked = [r for r in rows if f"{r['mode']}.{r['budget']}" == cell]
        for row in picked:
            task = tasks[row["task"]]
            repo = bench / ".data" / "repos" / row["repo"]
            db = bench / ".data" / "fastcache" / row["repo"] / key / f"{task['parent']}.db"
            text = (args.dump / row["repo"] / f"{row['task']}.{cell}.txt").read_text("utf-8")
            found = blocks(text)
            pre = {
                g: run.git(str(repo), "show", f"{task['parent']}:{g}").split("\n")
                for g in row["gold"]
            }
            defs = {g: symbols(db, g) for g in row["gold"]}
            edits = {g: edit_lines(repo, task["parent"], task["commit"], g) for g in row["gold"]}
            plines = run.norm_lines(text)
            tokens: Counter[str] = Counter()
            shown_of: dict[str, set[int]] = defaultdict(set)
            for block in found:
                kind = block["kind"]
                body = "\n".join(block["lines"])
                if kind.startswith("dependency_graph"):
                    tokens["map"] += run.count_tokens(body)
                    continue
                path = block["path"]
                where = (
                    "tests"
                    if TEST.search(path)
                    else "docs"
                    if DOC.search(path)
                    else "gold"
                    if path in row["gold"]
                    else "other code"
                )
                lines = numbered_body(block, pre.get(path))
                if where == "gold":
                    shown_of[path].update(n for n, _ in lines)
                prose = prose_lines(tuple(lines)) if where in ("gold", "other code") else set()
                edited_defs: set[int] = set()
                if where == "gold":
                    for n in edits[path]:
                        d = innermost(defs[path], n)
                        if d:
                            edited_defs.update(range(d[0], d[1] + 1))
                for n, line in lines or [(0, body)]:
                    t = run.count_tokens(line) + (1 if lines else 0)
                    if n in prose:
                        tokens["prose in code blocks"] += t
                    elif where == "gold":
                        tokens[
                            "gold: edited definitions" if n in edited_defs else "gold: other lines"
                        ] += t
                    else:
                        tokens[where] += t
            missed = row["edit_recall"] < 1
            packs[missed] += 1
            spent[missed].update(tokens)
            for gold, score in zip(row["gold"], row["edit_file_scores"], strict=True):
                if score >= 1:
                    continue
                shown = shown_of[gold]
                gone = [
                    n
                    for n in edits[gold]
                    if norm_line(run, pre[gold][n - 1]) not in plines
                    and norm_line(run, pre[gold][n - 1])
                    and n not in shown
                ]
                share = (1 - score) / len(row["gold"])
                if not shown:
                    mapped = any(
                        f"{gold}:" in "\n".join(b["lines"])
                        for b in found
                        if b["kind"].startswith("dependency_graph")
                    )
                    kinds = ["file absent, named in the map" if mapped else "file absent"]
                else:
                    kinds = []
                    for n in gone:
                        d = innermost(defs[gold], n)
                        if d is None:
                            kinds.append("module lines")
                            continue
                        seen = own_lines(defs[gold], d) & shown - {d[0]}
                        kinds.append("definition cut" if seen else "definition not shown")
                        if not seen:
                            size = run.count_tokens("\n".join(pre[gold][d[0] - 1 : d[1]]))
                            bucket = "<150" if size < 150 else "150-400" if size < 400 else "400+"
                            sizes["definition not shown"][bucket] += 1
                    if not kinds:  # every edit line's text is shown elsewhere: not unique
                        kinds = ["module lines"]
                per = Counter(kinds)
                for kind, count in per.items():
                    files[kind] += 1
                    lines_in[kind] += count
                    lost[kind] += share * count / len(kinds)
                if args.detail:
                    print(f"  {row['task']} {gold} score {score:.2f} {dict(per)}")
        n = max(1, len(picked))
        score = sum(r["edit_recall"] for r in picked) / n
        print(f"## {cell}: {len(picked)} packs, edit recall {score:.3f}, lost {1 - score:.3f}\n")
        print("| class | gold files | missing edit lines | edit recall lost |")
        print("|---|---:|---:|---:|")
        for kind in CLASSES:
            print(f"| {kind} | {files[kind]} | {lines_in[kind]} | {lost[kind] / n:.3f} |")
        print(f"\nsizes of the edited definitions not shown: {dict(sizes['definition not shown'])}")
        print("\nmean tokens per pack: " + " / ".join(SPENT))
        for missed in (True, False):
            k = max(1, packs[missed])
            share = " / ".join(str(spent[missed][s] // k) for s in SPENT)
            print(f"- packs {'with' if missed else 'without'} a loss ({packs[missed]}): {share}")
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
