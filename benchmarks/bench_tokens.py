"""Token counting throughput on ~1 MB of real source (the CPython standard library).

    .venv/bin/python benchmarks/bench_tokens.py [--runs 5] [--mb 1.0]

Measures, per encoding, the median of ``--runs`` runs of:

* raw       bpe-openai's ``Encoding.encode_ordinary`` per file, ``len()`` of the result
            (the reference our counts must equal);
* cold      ``codelibrarian.tokens.BpeTokenizer.count`` per file on a fresh tokenizer
            (empty count cache; the encoder itself is already loaded);
* cached    the same tokenizer counting the same files again (every count a cache hit);
* whole     one ``count`` of the whole corpus as a single string.

It checks on every run that cold counts equal raw counts, and prints a Markdown
section for ``benchmarks/RESULTS.md`` with wall and CPU (process) time: on a shared
machine CPU time is the steadier figure.
"""

from __future__ import annotations

import argparse
import datetime as dt
import statistics
import sys
import sysconfig
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from codelibrarian.tokens import ENCODINGS, BpeTokenizer
from harness.stats import machine

STDLIB = Path(sysconfig.get_paths()["stdlib"])


def corpus(megabytes: float) -> list[str]:
    """Whole stdlib .py files, in path order, until ``megabytes`` of UTF-8 is reached."""
    target = int(megabytes * 1_048_576)
    texts: list[str] = []
    size = 0
    for path in sorted(STDLIB.rglob("*.py")):
        if "site-packages" in path.parts or not path.is_file():
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        if len(text) > 200_000:  # keep each file under bpe-openai's per-call limits
            continue
        texts.append(text)
        size += len(text.encode("utf-8"))
        if size >= target:
            break
    return texts


def timed(fn: Callable[[], int]) -> tuple[float, float, int]:
    wall0, cpu0 = time.perf_counter(), time.process_time()
    result = fn()
    return time.perf_counter() - wall0, time.process_time() - cpu0, result


def bench(encoding: str, texts: list[str], runs: int) -> dict[str, Any]:
    # the encoder loads on a tokenizer's first count, once per process: timed here only
    load_wall, load_cpu, _ = timed(lambda: BpeTokenizer(encoding).count("x"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        import bpe_openai

        raw_enc = bpe_openai.get_encoding(encoding)
    whole = "".join(texts)
    rows: dict[str, list[tuple[float, float]]] = {k: [] for k in ("raw", "cold", "cached", "whole")}
    tokens = whole_tokens = 0
    for _ in range(runs):
        wall, cpu, raw_total = timed(lambda: sum(len(raw_enc.encode_ordinary(t)) for t in texts))
        rows["raw"].append((wall, cpu))
        tok = BpeTokenizer(encoding)
        wall, cpu, cold_total = timed(lambda tok=tok: sum(tok.count(t) for t in texts))  # type: ignore[misc]
        rows["cold"].append((wall, cpu))
        wall, cpu, cached_total = timed(lambda tok=tok: sum(tok.count(t) for t in texts))  # type: ignore[misc]
        rows["cached"].append((wall, cpu))
        fresh = BpeTokenizer(encoding)
        wall, cpu, whole_total = timed(lambda fresh=fresh: fresh.count(whole))  # type: ignore[misc]
        rows["whole"].append((wall, cpu))
        if not raw_total == cold_total == cached_total:
            sys.exit(f"{encoding}: counts differ: raw {raw_total}, ours {cold_total}")
        tokens = raw_total
        whole_tokens = whole_total  # may differ from the per-file sum: pre-tokens can
        # span a file boundary in the concatenation (tests check it against bpe-openai)
    result: dict[str, Any] = {
        "tokens": tokens,
        "whole_tokens": whole_tokens,
        "load": (load_wall, load_cpu),
    }
    for name, samples in rows.items():
        wall = statistics.median(s[0] for s in samples)
        cpu = statistics.median(s[1] for s in samples)
        result[name] = (wall, cpu)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--mb", type=float, default=1.0, help="megabytes of source counted")
    args = parser.parse_args(argv)
    texts = corpus(args.mb)
    nbytes = sum(len(t.encode("utf-8")) for t in texts)
    print("## Token counting (`tokens.py`)\n")
    print(f"- **Machine:** {machine()} at start.")
    print(f"- **Date:** {dt.date.today().isoformat()}.")
    print(f"- **Command:** `.venv/bin/python benchmarks/bench_tokens.py --runs {args.runs}`")
    print(
        f"- **Corpus:** {len(texts)} CPython stdlib `.py` files in path order, "
        f"{nbytes:,} bytes. Median of {args.runs} runs; the encoder is loaded beforehand.\n"
    )
    print("| encoding | case | tokens | wall ms | CPU ms | tokens/s (CPU) | MB/s (CPU) |")
    print("|---|---|---|---|---|---|---|")
    loads: list[str] = []
    for encoding in ENCODINGS:
        res = bench(encoding, texts, args.runs)
        loads.append(
            f"{encoding} {res['load'][0] * 1000:,.0f} ms wall / {res['load'][1] * 1000:,.0f} ms CPU"
        )
        for case in ("raw", "cold", "cached", "whole"):
            wall, cpu = res[case]
            count = res["whole_tokens"] if case == "whole" else res["tokens"]
            tps = count / cpu if cpu > 0 else float("inf")
            mbps = nbytes / 1_048_576 / cpu if cpu > 0 else float("inf")
            print(
                f"| {encoding} | {case} | {count:,} | {wall * 1000:,.0f} | "
                f"{cpu * 1000:,.0f} | {tps:,.0f} | {mbps:,.1f} |"
            )

    print(
        "\nFirst use loads the encoder (import + vocabulary, once per process): "
        + "; ".join(loads)
        + "."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
