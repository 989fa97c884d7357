"""The evidence ledger of a run: append-only JSON Lines, each entry chained to the last.

One entry per line::

    {"seq":7,"at":1767225600123,"kind":"primitive_dispatch","step":"tp_bisect",...,
     "prev":"<hash of entry 6>","hash":"<sha256 of prev + this entry without hash>"}

``hash`` is the SHA-256 (hex) of the previous entry's hash followed by the
canonical JSON (sorted keys, no spaces) of the entry without its ``hash``; the
first entry's ``prev`` is 64 zeros. Changing, removing, reordering or inserting
any entry breaks every hash after it, which :func:`verify` reports with the first
sequence number that fails.

Entries hold ids, kinds, counts, digests and told times only — never a path, a
task text, a step's output or a note (those live beside the ledger, mode 0600,
and the ledger records their digests).

Appends are one ``write`` of whole lines to a file opened with ``O_APPEND``, so a
process killed at any point leaves a prefix of complete entries, perhaps followed
by one torn line; :meth:`Ledger.open` drops a torn tail (and says so in the
chain) before appending again.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import NotFound

__all__ = [
    "GENESIS",
    "Ledger",
    "LedgerCheck",
    "check_chain",
    "entry_hash",
    "read_entries",
    "verify",
]

GENESIS = "0" * 64
_RESERVED = ("seq", "at", "kind", "prev", "hash")


def _canonical(entry: Mapping[str, Any]) -> bytes:
    return json.dumps(entry, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode(
        "utf-8"
    )


def entry_hash(prev: str, entry: Mapping[str, Any]) -> str:
    """The hash of ``entry`` (its ``hash`` field ignored) chained to ``prev``."""
    body = {k: v for k, v in entry.items() if k != "hash"}
    return hashlib.sha256(prev.encode("ascii") + _canonical(body)).hexdigest()


@dataclass(frozen=True, slots=True)
class LedgerCheck:
    """The result of verifying a ledger's chain."""

    ok: bool
    entries: int
    #: sequence number (0-based line) of the first bad entry, or None
    broken_at: int | None = None
    reason: str = ""
    #: bytes of a torn last line (a crash while writing); not an error by itself
    torn_bytes: int = 0
    head: str = GENESIS

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "entries": self.entries,
            "broken_at": self.broken_at,
            "reason": self.reason,
            "torn_bytes": self.torn_bytes,
            "head": self.head,
        }


def read_entries(path: Path) -> tuple[list[dict[str, Any]], int]:
    """The complete entries of a ledger file and the length of a torn tail (bytes)."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise NotFound(
            f"run has no ledger at {path.name}", hint="Is this a workflow run?"
        ) from None
    cut = raw.rfind(b"\n") + 1
    torn = len(raw) - cut
    entries: list[dict[str, Any]] = []
    for line in raw[:cut].splitlines():
        entries.append(json.loads(line))
    return entries, torn


def verify(path: Path) -> LedgerCheck:
    """Check every entry's sequence, ``prev`` link and hash."""
    try:
        entries, torn = read_entries(path)
    except ValueError as exc:
        return LedgerCheck(False, 0, 0, f"an entry is not JSON: {exc}")
    return check_chain(entries, torn)


def check_chain(entries: Sequence[Mapping[str, Any]], torn: int = 0) -> LedgerCheck:
    """The chain check of entries already read (see :func:`verify`)."""
    prev = GENESIS
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict) or entry.get("seq") != i:
            return LedgerCheck(False, len(entries), i, "sequence number out of order", torn, prev)
        if entry.get("prev") != prev:
            return LedgerCheck(False, len(entries), i, "not chained to the previous entry", torn)
        if entry.get("hash") != entry_hash(prev, entry):
            return LedgerCheck(False, len(entries), i, "hash does not match the entry", torn)
        prev = str(entry["hash"])
    return LedgerCheck(True, len(entries), None, "", torn, prev)


class Ledger:
    """An open ledger: the chain head, and appends (see the module docstring)."""

    def __init__(self, path: Path, entries: Sequence[Mapping[str, Any]]) -> None:
        self.path = path
        self.seq = len(entries)
        self.head = str(entries[-1]["hash"]) if entries else GENESIS

    @classmethod
    def open(cls, path: Path) -> tuple[Ledger, list[dict[str, Any]], int]:
        """Open (creating) a ledger: ``(ledger, entries, torn bytes dropped)``."""
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists():
            path.touch(mode=0o600)
        entries, torn = read_entries(path)
        if torn:
            with open(path, "r+b") as fh:
                fh.truncate(path.stat().st_size - torn)
        return cls(path, entries), entries, torn

    def append(self, events: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """Chain and write ``events`` (each with ``kind`` and ``at``) in one write."""
        out: list[dict[str, Any]] = []
        lines: list[bytes] = []
        prev, seq = self.head, self.seq
        for ev in events:
            entry: dict[str, Any] = {"seq": seq, "at": int(ev["at"]), "kind": str(ev["kind"])}
            for key in sorted(ev):
                if key not in _RESERVED:
                    entry[key] = ev[key]
            entry["prev"] = prev
            entry["hash"] = entry_hash(prev, entry)
            prev = entry["hash"]
            seq += 1
            out.append(entry)
            lines.append(_canonical(entry) + b"\n")
        if not lines:
            return out
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            data = b"".join(lines)
            written = 0
            while written < len(data):
                written += os.write(fd, data[written:])
        finally:
            os.close(fd)
        self.head, self.seq = prev, seq
        return out
