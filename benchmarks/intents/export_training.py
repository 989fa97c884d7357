#!/usr/bin/env python3
"""Write the planner's bundled training requests from the tuning splits (stdlib only).

    python3 benchmarks/intents/export_training.py          # write the file
    python3 benchmarks/intents/export_training.py --check  # exit 1 if it is stale

The file, ``src/codelibrarian/planning/data/training_intents.jsonl``, holds the ``dev``
rows of ``intents.jsonl`` and every row of the later tuning splits, ``dev2.jsonl`` to
``dev7.jsonl``: id, intent, label, also and split, in file order. The ``eval`` half is never
written: it stays unseen by the planner (benchmarks/intents/README.md).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE.parent))

from harness.bundled import export_main  # noqa: E402

TARGET = ROOT / "src" / "codelibrarian" / "planning" / "data" / "training_intents.jsonl"
TUNING = ("dev", "dev2", "dev3", "dev4", "dev5", "dev6", "dev7")
FILES = (
    "intents.jsonl",
    "dev2.jsonl",
    "dev3.jsonl",
    "dev4.jsonl",
    "dev5.jsonl",
    "dev6.jsonl",
    "dev7.jsonl",
)
KEYS = ("id", "intent", "label", "also", "split")


def rows() -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    for name in FILES:
        for line in (HERE / name).read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                if row["split"] in TUNING:
                    out.append({k: row[k] for k in KEYS})
    return out


def render() -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows())


def main(argv: list[str] | None = None) -> int:
    return export_main(
        argv,
        script=Path(__file__).name,
        description=__doc__.split("\n\n")[0],
        target=TARGET,
        render=render,
        what=lambda text: f"{len(text.splitlines())} rows",
    )


if __name__ == "__main__":
    sys.exit(main())
