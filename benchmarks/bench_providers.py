"""Provider discovery wall time: all four built-ins up (fake CLIs on PATH, loopback
servers) vs. all down, and a persisted-cache hit from a second registry.

Run: .venv/bin/python benchmarks/bench_providers.py
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.providers.conftest import (
    CLAUDE_OK,
    CODEX_OK,
    ModelServer,
    closed_port,
    lmstudio_routes,
    make_exe,
    ollama_routes,
)

from codelibrarian.providers import default_registry


def median_ms(env: dict[str, str], runs: int = 7) -> tuple[float, dict[str, str]]:
    times: list[float] = []
    statuses: dict[str, str] = {}
    for _ in range(runs):
        registry = default_registry(env=env)
        start = time.perf_counter()
        found = registry.discover(force_refresh=True)
        times.append((time.perf_counter() - start) * 1000)
        statuses = {k: v.status for k, v in sorted(found.results.items())}
    return statistics.median(times), statuses


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=7, help="discoveries timed per case")
    args = ap.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="bench-providers-"))
    bin_dir = tmp / "bin"
    bin_dir.mkdir()
    make_exe(bin_dir, "claude", CLAUDE_OK)
    make_exe(bin_dir, "codex", CODEX_OK)
    ollama, lmstudio = ModelServer(ollama_routes()), ModelServer(lmstudio_routes())
    up = {"PATH": str(bin_dir), "HOME": str(tmp), "OLLAMA_HOST": ollama.url,
          "LMSTUDIO_HOST": lmstudio.url}  # fmt: skip
    down = {"PATH": str(tmp / "empty"), "HOME": str(tmp),
            "OLLAMA_HOST": f"127.0.0.1:{closed_port()}",
            "LMSTUDIO_HOST": f"http://127.0.0.1:{closed_port()}"}  # fmt: skip
    try:
        for label, env in (("all four available", up), ("none available", down)):
            ms, statuses = median_ms(env, args.runs)
            print(f"{label:<20} median {ms:7.1f} ms  {statuses}")
        state = tmp / "state"
        default_registry(env=up, state_dir=state).discover()
        second = default_registry(env=up, state_dir=state)
        start = time.perf_counter()
        found = second.discover()
        print(f"{'persisted cache hit':<20}        {(time.perf_counter() - start) * 1000:7.1f} ms"
              f"  source={found.source}")  # fmt: skip
    finally:
        ollama.close()
        lmstudio.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
