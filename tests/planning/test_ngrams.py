"""The n-gram scorer: shipped weights are a fresh training run, training is deterministic
across hash seeds, scores and explanations are integers and words of the request."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codelibrarian.planning.ngrams import (
    NgramModel,
    default_ngram_model,
    inputs_digest,
    ngram_features,
    shipped,
    train,
)
from codelibrarian.planning.selector import select
from codelibrarian.planning.semantic import (
    KeywordMatcher,
    catalog_texts,
    composition_texts,
    pattern_texts,
)
from codelibrarian.planning.training import Labelled, bundled
from codelibrarian.techniques.registry import default_library

ROOT = Path(__file__).resolve().parents[2]
EXPORT = ROOT / "benchmarks" / "intents" / "export_ngrams.py"

_TRAIN_DIGEST = """
import hashlib, sys
sys.path.insert(0, {src!r})
from codelibrarian.planning.ngrams import train
from codelibrarian.planning.semantic import catalog_texts
from codelibrarian.planning.training import Labelled
from codelibrarian.techniques.registry import default_library
rows = [Labelled(t, l, a) for t, l, a in {rows!r}]
print(hashlib.sha256(train(catalog_texts(default_library()), rows).dumps().encode()).hexdigest())
"""


def test_features_are_stemmed_words_and_pairs() -> None:
    assert ngram_features("Fix the failing login tests") == (
        "b:fail_login", "b:fix_fail", "b:login_test", "w:fail", "w:fix", "w:login", "w:test",
    )  # fmt: skip
    assert ngram_features("the of and") == ()


def test_shipped_weights_are_a_fresh_training_run() -> None:
    model = shipped()
    assert model.digest == inputs_digest(catalog_texts(default_library()), bundled())
    check = subprocess.run(
        [sys.executable, str(EXPORT), "--check"],
        capture_output=True, text=True, check=False, timeout=300,
    )  # fmt: skip
    assert check.returncode == 0, check.stderr


def test_training_is_byte_identical_across_hash_seeds() -> None:
    rows = [(r.text, r.label, r.also) for r in bundled()[:120]]
    code = _TRAIN_DIGEST.format(src=str(ROOT / "src"), rows=rows)
    digests = set()
    for seed in ("0", "1", "4242"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True,
            env=env, timeout=300,
        )  # fmt: skip
        digests.add(out.stdout.strip())
    here = train(catalog_texts(default_library()), [Labelled(*r) for r in rows]).dumps()
    assert digests == {hashlib.sha256(here.encode()).hexdigest()}


def test_dumps_and_loads_round_trip() -> None:
    model = shipped()
    again = NgramModel.loads(model.dumps())
    for text in ("Debug the auth issue", "speed up the slow importer", "write docs for the CLI"):
        assert again.score(text) == model.score(text)
    with pytest.raises(ValueError, match="n-gram weights"):
        NgramModel.loads("something else\n")


def test_the_model_learns_from_labelled_requests() -> None:
    catalog = {"pattern_a": ("plan a picnic",), "pattern_b": ("bake a cake",)}
    rows = [Labelled("the oven timer for the sourdough", "pattern_b")] * 3
    model = train(catalog, rows)
    got = model.score("set the oven timer")
    assert got.scores["pattern_b"] > got.scores["pattern_a"]
    assert got.carriers["pattern_b"][0] in {"oven", "tim", "oven tim"}
    assert model.score("nothing known here").carriers == {}


@settings(max_examples=40, deadline=None)
@given(st.text(alphabet=st.sampled_from("abcdefgh xyz-_.?"), max_size=60))
def test_scores_are_integers_and_the_spread_is_per_mille(text: str) -> None:
    got = shipped().score(text)
    assert set(got.scores) == set(default_library().patterns)
    assert all(isinstance(v, int) for v in got.scores.values())
    spread = got.per_mille()
    assert all(0 <= v <= 1000 for v in spread.values())
    assert got == shipped().score(text)


def test_the_selection_explains_the_ngrams_that_carried_it() -> None:
    lib = default_library()
    pm, cm = KeywordMatcher(pattern_texts(lib)), KeywordMatcher(composition_texts(lib))
    s = select("Debug the auth issue", lib, pm, cm)
    aspect = s.pattern.aspect("ngrams")
    assert aspect.score > 0
    assert "'debug'" in aspect.why
    without = select("Debug the auth issue", lib, pm, cm, ngrams=False)
    assert without.pattern.aspect("ngrams").score == 0


def test_default_model_is_the_shipped_one_once_per_library() -> None:
    lib = default_library()
    model = default_ngram_model(lib)
    assert model is default_ngram_model(lib)
    assert model.digest == shipped().digest
    assert len(model) > 1000
