"""Fuzz the three ways in — config files, CLI arguments, MCP tool arguments — and count.

    .venv/bin/python benchmarks/fuzz_surfaces.py [--configs 4000] [--cli 4000] [--mcp 2000]
        [--seed 17] [--show 5]

Cases come from ``tests/reliability/fuzz.py`` (seeded: the same seed gives the same
cases): TOML files with valid and invalid keys, types and ranges (every fourth
case, when it loads, also composes a pack), argument lists for every command with
bad numbers, paths, ids, formats and files, and MCP calls with missing, misnamed,
mistyped and out-of-range arguments through the SDK's client. Each case ends as
``ok``, ``error`` (a clean library error), ``traceback`` (an exception that was not
turned into a library error, exit 70, or an MCP crash) or ``overrun`` (a result
longer than its token budget). Prints one JSON line per surface and a total; the
goal is 0 tracebacks and 0 overruns.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
import warnings
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import anyio
from tests.reliability.fuzz import (
    AS_OF,
    Outcome,
    cli_cases,
    config_cases,
    make_workspace,
    mcp_cases,
    run_cli_case,
    run_config_case,
    run_mcp_case,
)


def _summary(
    name: str, outcomes: list[tuple[object, Outcome]], seconds: float
) -> dict[str, object]:
    kinds = Counter(o.kind for _, o in outcomes)
    return {
        "surface": name,
        "cases": len(outcomes),
        "ok": kinds["ok"],
        "error": kinds["error"],
        "traceback": kinds["traceback"],
        "overrun": kinds["overrun"],
        "seconds": round(seconds, 1),
    }


def _show(outcomes: list[tuple[object, Outcome]], limit: int) -> None:
    bad = [(c, o) for c, o in outcomes if o.kind in ("traceback", "overrun")]
    for case, outcome in bad[:limit]:
        print(f"  {outcome.kind}: {outcome.detail}\n    case: {case!r}"[:800], file=sys.stderr)


def fuzz_configs(base: Path, n: int, seed: int) -> list[tuple[object, Outcome]]:
    root = make_workspace(base / "configs" / "shop")
    rng = random.Random(seed)
    return [
        ((name, text), run_config_case(root, name, text, compose=i % 4 == 0))
        for i, (name, text) in enumerate(config_cases(rng, n))
    ]


def fuzz_cli(base: Path, n: int, seed: int) -> list[tuple[object, Outcome]]:
    root = make_workspace(base / "cli" / "shop")
    os.chdir(root)
    run_cli_case(["compose", "apply discount", "--json", "--as-of", str(AS_OF), "-C", str(root)])
    decision = ""
    for log in (root / ".librarian" / "decisions").glob("*.jsonl"):
        decision = json.loads(log.read_text(encoding="utf-8").splitlines()[-1])["id"]
    rng = random.Random(seed)
    return [(args, run_cli_case(args)) for args in cli_cases(rng, n, root, decision)]


def fuzz_mcp(base: Path, n: int, seed: int) -> list[tuple[object, Outcome]]:
    from codelibrarian.mcp.server import build_server
    from mcp import Client

    root = make_workspace(base / "mcp" / "shop")
    rng = random.Random(seed)
    outcomes: list[tuple[object, Outcome]] = []

    async def main() -> None:
        async with Client(build_server(root, log_level=30)) as client:
            for tool, args in mcp_cases(rng, n):
                outcomes.append(((tool, args), await run_mcp_case(client, root, tool, args)))

    anyio.run(main)
    return outcomes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--configs", type=int, default=4000)
    parser.add_argument("--cli", type=int, default=4000)
    parser.add_argument("--mcp", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=17)
    parser.add_argument("--show", type=int, default=5, help="bad cases to print per surface")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore", DeprecationWarning)
    totals: Counter[str] = Counter()
    with tempfile.TemporaryDirectory(prefix="librarian-fuzz-") as tmp:
        base = Path(tmp)
        # the per-user parse cache of these runs stays in the temporary folder
        os.environ["LIBRARIAN_CACHE_DIR"] = str(base / "user-cache")
        for name, run, n in (
            ("config", fuzz_configs, args.configs),
            ("cli", fuzz_cli, args.cli),
            ("mcp", fuzz_mcp, args.mcp),
        ):
            if n <= 0:
                continue
            started = time.perf_counter()
            outcomes = run(base, n, args.seed)
            row = _summary(name, outcomes, time.perf_counter() - started)
            print(json.dumps(row), flush=True)
            _show(outcomes, args.show)
            for key in ("cases", "ok", "error", "traceback", "overrun"):
                totals[key] += int(row[key])  # type: ignore[call-overload]
    print(json.dumps({"surface": "total", **totals}))
    return 0 if totals["traceback"] == 0 and totals["overrun"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
