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


def test_scan_cache_keeps_spans_not_text_and_survives_a_process(tmp_path: Path) -> None:
    from codelibrarian.gate import SecretGate
    from codelibrarian.persist.scans import ScanCache

    token = "ghp_" + "Zq8Lw2Vn5Rt7Yp1Xc4Bm6Hd9Jf3Ks0Ga2Ue8"
    source = f'TOKEN = "{token}"\n'
    store = ScanCache(tmp_path / "spans.json", max_entries=2)
    gate = SecretGate(spans=store)
    assert token[4:20] not in gate.clean(token[:20], surface="x", source=source)
    store.save()
    stored = (tmp_path / "spans.json").read_text()
    assert token not in stored and token[4:12] not in stored
    again = ScanCache(tmp_path / "spans.json")
    (key,) = again._load()
    assert again.get(bytes.fromhex(key)) == ((9, 9 + len(token), "github_token"),)
    for i in range(3):  # bounded, least recently used first
        store.put(bytes([i]) * 16, ())
    assert len(store._load()) == 2
