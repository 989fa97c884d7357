#!/usr/bin/env python3
"""Write the planner's n-gram weights from the bundled training requests.

    .venv/bin/python benchmarks/intents/export_ngrams.py          # write the file
    .venv/bin/python benchmarks/intents/export_ngrams.py --check  # exit 1 if it is stale

The file, ``src/codelibrarian/planning/data/ngram_weights.txt``, is the n-gram model
(``codelibrarian.planning.ngrams``) trained on the default pattern catalog and
``training_intents.jsonl`` (which ``export_training.py`` writes first). Training is
deterministic: the same inputs give the same bytes on every machine and hash seed.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE.parent))

from codelibrarian.planning.ngrams import train  # noqa: E402
from codelibrarian.planning.semantic import catalog_texts  # noqa: E402
from codelibrarian.planning.training import bundled  # noqa: E402
from codelibrarian.techniques.registry import default_library  # noqa: E402
from harness.bundled import export_main  # noqa: E402

TARGET = ROOT / "src" / "codelibrarian" / "planning" / "data" / "ngram_weights.txt"


def render() -> str:
    return train(catalog_texts(default_library()), bundled()).dumps()


def main(argv: list[str] | None = None) -> int:
    return export_main(
        argv,
        script=Path(__file__).name,
        description=__doc__.split("\n\n")[0],
        target=TARGET,
        render=render,
        what=lambda text: f"{len(text.splitlines()) - 6} features",
    )


if __name__ == "__main__":
    sys.exit(main())
