"""Where the secrets of scanned files are: a persistent span store for the secret gate.

The gate checks an excerpt against the secrets of its whole file, which means
scanning the file. :class:`ScanCache` remembers, by the file text's content
digest, the spans found — offsets and rule names only, never text — in
``.librarian/cache/secret-spans.json`` (private, like everything there), so a new
process does not scan an unchanged file again. Entries from another version of
the scanner's rules are ignored: the version is a digest of ``workspace/secrets.py``.
At most ``max_entries`` are kept, the least recently used dropped first.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections import OrderedDict
from functools import lru_cache
from pathlib import Path

from ..gate import Spans
from ..workspace import secrets
from ..workspace.private import private_write

__all__ = ["ScanCache", "scanner_version"]


@lru_cache(maxsize=1)
def scanner_version() -> str:
    """A digest of the secret rules' source: any change to them empties the cache."""
    return hashlib.blake2b(Path(secrets.__file__).read_bytes(), digest_size=8).hexdigest()


class ScanCache:
    """Secret spans by content digest, loaded on first use, saved by :meth:`save`."""

    def __init__(self, path: Path, *, max_entries: int = 20_000) -> None:
        self.path = Path(path)
        self._max = max_entries
        self._entries: OrderedDict[str, Spans] | None = None
        self._dirty = False

    def _load(self) -> OrderedDict[str, Spans]:
        if self._entries is None:
            self._entries = OrderedDict()
            with contextlib.suppress(OSError, ValueError, TypeError, KeyError):
                data = json.loads(self.path.read_text(encoding="utf-8"))
                if data.get("scanner") == scanner_version():
                    for key, rows in data["entries"].items():
                        self._entries[key] = tuple((int(a), int(b), str(r)) for a, b, r in rows)
        return self._entries

    def get(self, digest: bytes) -> Spans | None:
        entries = self._load()
        key = digest.hex()
        found = entries.get(key)
        if found is not None:
            entries.move_to_end(key)
        return found

    def put(self, digest: bytes, spans: Spans) -> None:
        entries = self._load()
        entries[digest.hex()] = tuple(spans)
        entries.move_to_end(digest.hex())
        while len(entries) > self._max:
            entries.popitem(last=False)
        self._dirty = True

    def save(self) -> None:
        """Write the entries when something was added (a failed write only costs time)."""
        if not self._dirty or self._entries is None:
            return
        data = {
            "scanner": scanner_version(),
            "entries": {k: [list(s) for s in v] for k, v in self._entries.items()},
        }
        with contextlib.suppress(OSError):
            private_write(self.path, json.dumps(data, separators=(",", ":")))
            self._dirty = False
