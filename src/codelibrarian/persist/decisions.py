"""The decision log: one JSON line per composition in ``.librarian/decisions/``.

Records come from ``composer.record.build_record`` and carry ids, kinds, lanes,
counts, digests and scores — never paths or content; ``append`` refuses a record
that has a field it does not know, so nothing private slips in by accident.
Files are named by the UTC day of the record's ``as_of`` (``2026-11-21.jsonl``);
``read`` finds a record by id, newest file first.
"""

from __future__ import annotations

import datetime as _dt
import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from ..composer.determinism import canonical_json
from ..errors import NotFound, UsageError
from ..workspace.private import private_append

__all__ = ["RECORD_FIELDS", "DecisionLog"]

#: the top-level fields a decision record may have
RECORD_FIELDS = frozenset(
    {
        "schema",
        "id",
        "composer_version",
        "as_of",
        "workspace_fingerprint",
        "trigger",
        "commitish",
        "rules_digest",
        "extra",
        "tokenizer",
        "format",
        "cache_key",
        "cache_hit",
        "candidate_digest",
        "constraints_digest",
        "budget_digest",
        "text_digest",
        "budget",
        "tokens",
        "lane_tokens",
        "counts",
        "selected",
        "rankings",
        "snapshot",
    }
)


class DecisionLog:
    """Append and look up decision records under ``directory``."""

    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory)

    def append(self, record: Mapping[str, Any]) -> Path:
        unknown = sorted(set(record) - RECORD_FIELDS)
        if unknown:
            raise UsageError(
                f"decision record has unexpected field {unknown[0]!r}",
                hint="Decision records carry ids, kinds, lanes, counts and digests only.",
            )
        if not isinstance(record.get("id"), str) or not isinstance(record.get("as_of"), int):
            raise UsageError("decision record needs a string id and an integer as_of")
        day = _dt.datetime.fromtimestamp(record["as_of"], tz=_dt.UTC).strftime("%Y-%m-%d")
        path = self.directory / f"{day}.jsonl"
        private_append(path, canonical_json(dict(record)) + "\n")
        return path

    def _files(self) -> list[Path]:
        if not self.directory.is_dir():
            return []
        return sorted((p for p in self.directory.glob("*.jsonl")), reverse=True)

    def records(self) -> Iterator[dict[str, Any]]:
        """Every readable record, newest file first, newest line first within a file."""
        for path in self._files():
            try:
                lines = path.read_text(encoding="utf-8").splitlines()
            except OSError:
                continue
            for line in reversed(lines):
                try:
                    data = json.loads(line)
                except ValueError:
                    continue  # a torn last line after a crash
                if isinstance(data, dict):
                    yield data

    def read(self, decision_id: str) -> dict[str, Any]:
        """The most recent record with ``decision_id`` (raises NotFound)."""
        for record in self.records():
            if record.get("id") == decision_id:
                return record
        raise NotFound(
            f"no decision {decision_id!r} in {self.directory}",
            hint="Check the id; every composition appends its record to this folder.",
        )

    def latest(self, limit: int = 20) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for record in self.records():
            out.append(record)
            if len(out) >= limit:
                break
        return out
