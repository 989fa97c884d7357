"""Compare systems from several ctxbench runs on exactly the same tasks.

The harness subsamples tasks deterministically (``--max-tasks``), so a run of one
system can be compared with baselines recorded in an earlier, larger run by
keeping only the (repo, task, mode, budget) rows that every system has.

    python benchmarks/ctxbench_compare.py RESULTS_DIR/baselines-raw.jsonl \
        RESULTS_DIR/librarian-raw.jsonl [--systems naive,bm25,aider-fit,librarian]

Prints a markdown table per repository and pooled: code recall, recall, hit rate,
budget violations, mean tokens and median seconds per call.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path

Key = tuple[str, str, str, int]


def load(paths: list[Path]) -> dict[str, dict[Key, dict[str, object]]]:
    by_system: dict[str, dict[Key, dict[str, object]]] = defaultdict(dict)
    for path in paths:
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            key = (row["repo"], row["task"], row["mode"], int(row["budget"]))
            by_system[row["system"]][key] = row
    return by_system


def table(title: str, systems: list[str], rows: dict[str, list[dict[str, object]]]) -> str:
    out = [
        f"### {title}",
        "",
        "| system | mode | budget | n | code recall | recall | hit | viol. | mean tok | med s |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    groups: dict[tuple[str, str, int], list[dict[str, object]]] = defaultdict(list)
    for system in systems:
        for row in rows[system]:
            groups[(system, str(row["mode"]), int(row["budget"]))].append(row)  # type: ignore[call-overload]
    for mode in ("intent", "diff"):
        for budget in sorted({k[2] for k in groups}):
            for system in systems:
                rs = groups.get((system, mode, budget), [])
                if not rs:
                    continue

                def mean(field: str, rs: list[dict[str, object]] = rs) -> float:
                    return statistics.mean(float(r[field]) for r in rs)  # type: ignore[arg-type]

                secs = statistics.median(float(r["query_s"]) for r in rs)  # type: ignore[arg-type]
                viol = sum(bool(r["violation"]) for r in rs)
                out.append(
                    f"| {system} | {mode} | {budget} | {len(rs)} | {mean('code_recall'):.3f} | "
                    f"{mean('recall'):.3f} | {mean('hit'):.3f} | {viol} | {mean('tokens'):.0f} | "
                    f"{secs:.2f} |"
                )
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("raw", nargs="+", type=Path, help="*-raw.jsonl files from run.py")
    ap.add_argument("--systems", default="naive,bm25,aider-fit,librarian")
    args = ap.parse_args(argv)
    by_system = load(args.raw)
    systems = [s for s in args.systems.split(",") if s in by_system]
    common = set.intersection(*(set(by_system[s]) for s in systems))
    repos = sorted({k[0] for k in common})
    for repo in repos:
        rows = {s: [by_system[s][k] for k in sorted(common) if k[0] == repo] for s in systems}
        print(table(repo, systems, rows))
    pooled = {s: [by_system[s][k] for k in sorted(common)] for s in systems}
    print(table("all repositories pooled", systems, pooled))
    return 0


if __name__ == "__main__":
    sys.exit(main())
