"""Local Context Packs on a real repository: time, fill and stop reasons per role and scope.

    python benchmarks/bench_packs.py --repo PATH [--file REL] [--markdown]

Clones ``PATH`` (a git repository) into a temporary folder so its ``.librarian/``
is not touched, appends a small function to ``--file`` (default: the first
tracked ``.py`` file under ``src/``) as the change in progress, indexes, then
builds one pack per role and scope class (capability ``reasoning_high``) in
separate runs, with a fixed ``as_of``. For every pack it checks that
``token_estimate`` equals the exact count of the file written and stays within
the budget, and reports the wall time, tokens/budget, anchors and the ladder's
stop reason. Then it asks again for one pack and reports the reuse time (no
gathering, no ladder). Prints JSON lines, or a Markdown table with ``--markdown``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

from codelibrarian.api import Librarian
from codelibrarian.packs.lcp import AGENTS, SCOPE_CLASSES
from codelibrarian.tokens import get_tokenizer

TASK = "add a helper that reports what this module exposes"
CRITERIA = ("the helper lists the public names", "the helper is covered by a test")
AS_OF = 2_000_000_000


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repo", required=True, type=Path, help="a git repository (cloned first)")
    ap.add_argument("--file", default=None, help="the file the change appends to")
    ap.add_argument("--markdown", action="store_true", help="a Markdown table, not JSON lines")
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore", DeprecationWarning)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "repo"
        subprocess.run(["git", "clone", "-q", str(args.repo.resolve()), str(root)], check=True)
        tracked = subprocess.run(
            ["git", "-C", str(root), "ls-files", "*.py"], capture_output=True, text=True, check=True
        ).stdout.split()
        rel = args.file or next((p for p in tracked if p.startswith("src/")), tracked[0])
        with open(root / rel, "a", encoding="utf-8") as fh:
            fh.write('\n\ndef exposed_names() -> list[str]:\n    """Public names."""\n')
            fh.write('    return sorted(n for n in globals() if not n.startswith("_"))\n')
        lib = Librarian(root)
        t0 = time.perf_counter()
        lib.index()
        index_s = time.perf_counter() - t0
        rows: list[dict[str, Any]] = []
        for scope in SCOPE_CLASSES:
            for agent in AGENTS:
                t0 = time.perf_counter()
                res = lib.pack(
                    agent, TASK, acceptance=CRITERIA, scope=scope, run_id=scope, as_of=AS_OF
                )
                ms = (time.perf_counter() - t0) * 1000
                p = res.pack
                text = res.path.read_text(encoding="utf-8")
                exact = get_tokenizer(p.model).count(text)
                assert exact == p.token_estimate <= p.budget_tokens, (agent, scope)
                rows.append(
                    {
                        "scope": scope,
                        "agent": agent,
                        "ms": round(ms),
                        "tokens": p.token_estimate,
                        "budget": p.budget_tokens,
                        "anchors": len(p.anchors),
                        "stopped_after": p.ladder.stopped_after,
                        "stop": p.ladder.stop_reason,
                        "covered": f"{p.ladder.criteria_covered}/{p.ladder.criteria_total}",
                    }
                )
        t0 = time.perf_counter()
        again = lib.pack("Implementer", TASK, acceptance=CRITERIA, scope="Small", run_id="Small")
        reuse_ms = (time.perf_counter() - t0) * 1000
        assert again.reused
        lib.close()
    first, rest = rows[0], rows[1:]
    summary = {
        "repo": args.repo.resolve().name,
        "files": len(tracked),
        "changed": rel,
        "index_s": round(index_s, 1),
        "first_pack_ms": first["ms"],
        "pack_p50_ms": round(statistics.median(r["ms"] for r in rest)),
        "pack_max_ms": max(r["ms"] for r in rest),
        "reuse_ms": round(reuse_ms, 1),
    }
    if args.markdown:
        print("| scope | agent | ms | tokens / budget | anchors | stopped after | stop | covered |")
        print("|---|---|---|---|---|---|---|---|")
        for r in rows:
            print(
                f"| {r['scope']} | {r['agent']} | {r['ms']} | {r['tokens']} / {r['budget']} | "
                f"{r['anchors']} | {r['stopped_after']} | {r['stop']} | {r['covered']} |"
            )
        print()
        print(json.dumps(summary))
    else:
        for r in rows:
            print(json.dumps(r))
        print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
