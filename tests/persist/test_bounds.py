"""Decision logs and the composition cache stay within their caps."""

from __future__ import annotations

import os
from pathlib import Path

from codelibrarian.persist.bounds import prune_decisions, usage

NOW = 2_000_000_000
DAY = 86_400


def _file(path: Path, size: int, age_days: float) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("x" * (size - 1) + "\n")
    stamp = NOW - age_days * DAY
    os.utime(path, (stamp, stamp))
    return path


def test_age_then_size_then_today_is_trimmed(tmp_path: Path) -> None:
    old = _file(tmp_path / "2026-01-01.jsonl", 100, 40)
    sidecar_old = _file(tmp_path / "private" / "a.json", 100, 40)
    mid = _file(tmp_path / "2026-02-01.jsonl", 300, 5)
    sidecar = _file(tmp_path / "private" / "b.json", 300, 4)
    today = tmp_path / "2026-02-05.jsonl"
    today.write_text("".join(f'{{"id": "r{i}"}}\n' for i in range(100)))
    os.utime(today, (NOW, NOW))
    _file(tmp_path / ".tmp-writing.json", 50, 60)  # a write in flight is never touched
    removed = prune_decisions(tmp_path, max_bytes=900, max_age_seconds=30 * DAY, now=NOW)
    assert not old.exists() and not sidecar_old.exists()
    assert not mid.exists() and not sidecar.exists()
    assert (tmp_path / ".tmp-writing.json").exists()
    assert removed == 4
    kept = today.read_text().splitlines()
    assert kept and kept[-1] == '{"id": "r99"}'  # the newest records stay
    assert usage(tmp_path).bytes - 50 <= 900


def test_usage_counts_files_and_bytes(tmp_path: Path) -> None:
    assert usage(tmp_path / "missing").to_dict() == {"files": 0, "bytes": 0, "oldest": None}
    _file(tmp_path / "a", 10, 1)
    _file(tmp_path / "b" / "c", 20, 2)
    u = usage(tmp_path)
    assert (u.files, u.bytes, u.oldest) == (2, 30, NOW - 2 * DAY)
