"""The example vote and its bundled training requests: data hygiene, determinism, effect."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from codelibrarian.planning.examples import ExampleModel, default_model, features
from codelibrarian.planning.selector import select
from codelibrarian.planning.semantic import KeywordMatcher, composition_texts, pattern_texts
from codelibrarian.planning.training import Labelled, bundled
from codelibrarian.techniques.registry import default_library

ROOT = Path(__file__).resolve().parents[2]
INTENTS = ROOT / "benchmarks" / "intents"


def _rows(name: str) -> list[dict[str, object]]:
    text = (INTENTS / name).read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line]


def test_bundled_training_is_the_tuning_splits_and_never_eval() -> None:
    base = _rows("intents.jsonl")
    eval_ids = {r["id"] for r in base if r["split"] == "eval"}
    eval_texts = {r["intent"] for r in base if r["split"] == "eval"}
    shipped = [
        json.loads(line)
        for line in (ROOT / "src/codelibrarian/planning/data/training_intents.jsonl")
        .read_text(encoding="utf-8")
        .splitlines()
    ]
    assert shipped and {r["split"] for r in shipped} == {
        "dev",
        "dev2",
        "dev3",
        "dev4",
        "dev5",
        "dev6",
        "dev7",
    }
    assert not eval_ids & {r["id"] for r in shipped}
    assert not eval_texts & {r["intent"] for r in shipped}
    assert not eval_texts & {
        t for texts in pattern_texts(default_library()).values() for t in texts
    }
    assert len(bundled()) == len(shipped)
    check = subprocess.run(
        [sys.executable, str(INTENTS / "export_training.py"), "--check"],
        capture_output=True, text=True, check=False, timeout=60,
    )  # fmt: skip
    assert check.returncode == 0, check.stderr


@pytest.mark.parametrize(
    "name", ["dev2.jsonl", "dev3.jsonl", "dev4.jsonl", "dev5.jsonl", "dev6.jsonl", "dev7.jsonl"]
)
def test_later_tuning_splits_are_valid_and_new(name: str) -> None:
    check = subprocess.run(
        [sys.executable, str(INTENTS / "check.py"), str(INTENTS / name)],
        capture_output=True, text=True, check=False, timeout=60,
    )  # fmt: skip
    assert check.returncode == 0, check.stderr
    assert "| **all** |" in check.stdout


@pytest.mark.parametrize(
    ("split", "earlier"),
    [("dev3", "dev2"), ("dev4", "dev3"), ("dev5", "dev4"), ("dev6", "dev5"), ("dev7", "dev6")],
)
def test_a_later_split_rejects_a_row_shared_with_an_earlier_file(
    tmp_path: Path, split: str, earlier: str
) -> None:
    rows = _rows(f"{split}.jsonl")
    first = _rows(f"{earlier}.jsonl")[0]
    stolen = {
        **rows[0],
        "id": "int-00000000aa",
        "intent": "a new text",
        "source": first["source"],
        "source_repo": first["source_repo"],
        "source_kind": first["source_kind"],
    }
    bad = tmp_path / f"{split}.jsonl"
    bad.write_text("".join(json.dumps(r) + "\n" for r in [*rows[1:], stolen]), encoding="utf-8")
    check = subprocess.run(
        [sys.executable, str(INTENTS / "check.py"), str(bad)],
        capture_output=True, text=True, check=False, timeout=60,
    )  # fmt: skip
    assert check.returncode == 1
    assert f"int-00000000aa: its source is already in {earlier}.jsonl" in check.stderr


def test_features_are_stems_and_pairs() -> None:
    assert features("Upgrading the parser") == ("pars", "upgrad", "upgrad_pars")


def test_vote_learns_discriminative_words_and_is_deterministic() -> None:
    catalog = {"a": ("the login fails",), "b": ("the page is slow",)}
    model = ExampleModel(catalog, [Labelled("post a message to slack when done", "b")])
    one, two = model.vote("send a slack message"), model.vote("send a slack message")
    assert one == two
    assert one.scores["b"] > one.scores["a"] and all(
        isinstance(v, int) for v in one.scores.values()
    )
    assert "slack" in one.reasons
    assert model.vote("zzz").scores == {"a": 0, "b": 0}


def test_default_model_is_built_once_per_library() -> None:
    lib = default_library()
    assert default_model(lib) is default_model(lib)
    assert default_model(lib).size == len(bundled())


def test_the_vote_answers_wording_no_cue_knows() -> None:
    lib = default_library()
    pm, cm = KeywordMatcher(pattern_texts(lib)), KeywordMatcher(composition_texts(lib))
    text = "Send a message to our chat channel whenever a nightly job finishes"
    with_vote = select(text, lib, pm, cm)
    assert with_vote.pattern.id == "pattern_feature_construction"
    aspect = with_vote.pattern.aspect("examples")
    assert aspect.score > 500 and "vote" in aspect.why
    without = select(text, lib, pm, cm, examples=None)
    assert without.pattern.aspect("examples").score == 0
