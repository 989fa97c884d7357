"""Disk side of the composer: on-disk cache and the decision log."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

from codelibrarian.composer import (
    Candidate,
    ComposeContext,
    CompositionCache,
    artifact_id,
    compose,
    replay,
)
from codelibrarian.config import BudgetConfig
from codelibrarian.errors import NotFound, UsageError
from codelibrarian.persist import DecisionLog, DiskCache, TieredCache
from codelibrarian.tokens import Tokenizer, get_tokenizer

SECRET = b"persist-secret-persist-secret-00"


@pytest.fixture(scope="module")
def tok() -> Tokenizer:
    tokenizer = get_tokenizer("gpt-4o")
    with warnings.catch_warnings():  # bpe-openai 0.1.4 warns once on first load
        warnings.simplefilter("ignore", DeprecationWarning)
        tokenizer.count("warm up")
    return tokenizer


def _cands(tok: Tokenizer) -> list[Candidate]:
    out = []
    for i, text in enumerate(("def a():\n    return 1\n", "x = 2\n", "RULE: be careful\n")):
        path = f"src/m{i}.py"
        kind = ("symbol_context", "semantic_match", "rule_doc")[i]
        lane = ("retrieved", "retrieved", "rules")[i]
        out.append(
            Candidate(
                id=artifact_id(SECRET, kind, lane, path),
                kind=kind,
                lane=lane,
                token_estimate=tok.count(text),
                relevance=100 * i,
                path=path,
                title=path,
                content=text,
            )
        )
    return out


def _ctx(as_of: int) -> ComposeContext:
    return ComposeContext.make(as_of=as_of, workspace_fingerprint="wf", trigger="manual")


def test_disk_cache_round_trip_ttl_and_invalidation(tmp_path: Path, tok: Tokenizer) -> None:
    disk = DiskCache(tmp_path / "cache")
    first = compose(
        _cands(tok), budget=BudgetConfig(), tokenizer=tok, context=_ctx(1000), cache=disk
    )
    assert not first.cache_hit and len(disk) == 1
    hit = compose(_cands(tok), budget=BudgetConfig(), tokenizer=tok, context=_ctx(1100), cache=disk)
    assert hit.cache_hit
    assert hit.text == first.text and hit.verdicts == first.verdicts
    assert hit.explanation.lanes == first.explanation.lanes
    assert hit.record["as_of"] == 1100 and hit.record["cache_hit"] is True
    # five minutes later the entry has expired
    late = compose(
        _cands(tok), budget=BudgetConfig(), tokenizer=tok, context=_ctx(1400), cache=disk
    )
    assert not late.cache_hit
    assert disk.invalidate("file_saved", workspace_fingerprint="wf") == 0
    assert disk.invalidate("file_saved", workspace_fingerprint="other") == 1
    assert len(disk) == 0
    with pytest.raises(UsageError):
        disk.invalidate("coffee_break")


def test_disk_cache_ignores_corrupt_entries(tmp_path: Path, tok: Tokenizer) -> None:
    disk = DiskCache(tmp_path)
    result = compose(_cands(tok), budget=BudgetConfig(), tokenizer=tok, context=_ctx(0), cache=disk)
    (tmp_path / f"{result.cache_key}.json").write_text("{not json", encoding="utf-8")
    assert disk.get(result.cache_key, now=1) is None
    assert not (tmp_path / f"{result.cache_key}.json").exists()


def test_tiered_cache_promotes_disk_hits(tmp_path: Path, tok: Tokenizer) -> None:
    disk = DiskCache(tmp_path)
    compose(_cands(tok), budget=BudgetConfig(), tokenizer=tok, context=_ctx(0), cache=disk)
    memory: CompositionCache = CompositionCache()  # type: ignore[type-arg]
    tiered = TieredCache(memory, disk)
    again = compose(
        _cands(tok), budget=BudgetConfig(), tokenizer=tok, context=_ctx(5), cache=tiered
    )
    assert again.cache_hit and len(memory) == 1


def test_decision_log_append_read_and_replay(tmp_path: Path, tok: Tokenizer) -> None:
    log = DecisionLog(tmp_path / "decisions")
    result = compose(_cands(tok), budget=BudgetConfig(), tokenizer=tok, context=_ctx(1_763_700_000))
    path = log.append(result.record)
    assert path.name == "2025-11-21.jsonl"
    raw = path.read_text(encoding="utf-8")
    # privacy: no path, title or content reaches the log
    for secret_bit in ("src/m0.py", "def a()", "RULE: be careful"):
        assert secret_bit not in raw
    record = log.read(result.decision_id)
    assert record == json.loads(raw)
    assert replay(record, _cands(tok), tok).status == "identical"
    with pytest.raises(NotFound):
        log.read("d-missing")
    with pytest.raises(UsageError):
        log.append({**result.record, "path": "src/m0.py"})
    assert [r["id"] for r in log.latest(5)] == [result.decision_id]
