"""The bundled training requests: labelled examples the planner learns wording from.

``data/training_intents.jsonl`` holds the ``dev`` half of
``benchmarks/intents/intents.jsonl`` and all of the later tuning splits
(``benchmarks/intents/dev2.jsonl`` to ``dev7.jsonl``), labelled by
``benchmarks/intents/LABELLING.md`` and written by ``benchmarks/intents/export_training.py``.
The ``eval`` half is never in it (a test checks), so that half stays a measurement of
requests the planner has not seen.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources

__all__ = ["Labelled", "bundled", "parse"]

_FILE = "data/training_intents.jsonl"


@dataclass(frozen=True, slots=True)
class Labelled:
    """A training request: its text, the pattern a senior engineer would start, and a
    second acceptable pattern (or ``None``)."""

    text: str
    label: str
    also: str | None = None


def parse(text: str) -> tuple[Labelled, ...]:
    """Rows of a training file (JSON lines with ``intent``, ``label`` and ``also``)."""
    out = []
    for line in text.splitlines():
        if line.strip():
            row = json.loads(line)
            out.append(Labelled(row["intent"], row["label"], row.get("also")))
    return tuple(out)


@cache
def bundled() -> tuple[Labelled, ...]:
    """The training requests shipped with the package, in file order."""
    return parse(resources.files("codelibrarian.planning").joinpath(_FILE).read_text("utf-8"))
