"""fit_document: every result fits its cap, cuts are recorded, output is deterministic."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from codelibrarian.mcp.budget import (
    MIN_MAX_TOKENS,
    drop_field,
    fit_document,
    render,
    trim_list,
    trim_nested_lists,
    trim_text,
)
from codelibrarian.tokens import get_tokenizer
from tests.sources.repo_fixture import warm_tokenizers

warm_tokenizers()
TOK = get_tokenizer("gpt-4o")
REDUCTIONS = [
    drop_field("extra"),
    trim_nested_lists("results", "code"),
    trim_list("results"),
    trim_text("text"),
]

words = st.text(alphabet="abcdefghij \n{}\"'\\é", min_size=0, max_size=400)
docs = st.fixed_dictionaries(
    {
        "id": st.text(alphabet="0123456789abcdef", min_size=1, max_size=24),
        "extra": st.lists(words, max_size=5),
        "results": st.lists(
            st.fixed_dictionaries({"path": words, "code": st.lists(words, max_size=3)}),
            max_size=8,
        ),
        "text": words,
    }
)


@given(doc=docs, cap=st.integers(min_value=MIN_MAX_TOKENS, max_value=1500))
def test_any_document_fits_any_allowed_cap(doc: dict[str, Any], cap: int) -> None:
    out = fit_document(doc, TOK, cap, REDUCTIONS, essentials=("id",))
    assert TOK.count(out) <= cap
    parsed = json.loads(out)
    if TOK.count(render(doc)) <= cap:
        assert parsed == doc  # nothing is cut when nothing has to be
    else:
        assert parsed["truncated"]
    assert fit_document(doc, TOK, cap, REDUCTIONS, essentials=("id",)) == out


def test_cuts_take_the_lowest_ranked_first_and_say_so() -> None:
    doc = {
        "id": "q1",
        "results": [{"path": f"src/m{i}.py", "code": ["x = 1\n" * 40]} for i in range(6)],
    }
    full = TOK.count(render(doc))
    out = json.loads(fit_document(doc, TOK, full - 60, REDUCTIONS))
    # the best-ranked results keep their code; the ranking itself is whole
    assert [r["path"] for r in out["results"]] == [f"src/m{i}.py" for i in range(6)]
    assert out["results"][0]["code"] == doc["results"][0]["code"]
    # the first result that could not keep all its code keeps a line-cut prefix of it
    (cut,) = (n for n in out["truncated"] if n.endswith(".code: cut"))
    index = int(cut.split("[")[1].split("]")[0])
    partial = out["results"][index]["code"][0]
    assert partial.endswith("\n") and doc["results"][index]["code"][0].startswith(partial)
    assert len(partial) < len(doc["results"][index]["code"][0])
    assert all("code" not in r for r in out["results"][index + 1 :])


def test_text_is_cut_at_a_line_boundary() -> None:
    text = "".join(f"line {i} of the pack\n" for i in range(200))
    doc = {"id": "d", "text": text}
    out = json.loads(fit_document(doc, TOK, 300, [trim_text("text")]))
    assert out["text"] and text.startswith(out["text"]) and out["text"].endswith("\n")
    assert out["truncated"][0].startswith("text: cut to")


def test_when_nothing_helps_a_minimal_document_explains() -> None:
    doc = {"id": "abc", "blob": "word " * 2000}
    out = fit_document(doc, TOK, MIN_MAX_TOKENS, [], essentials=("id",))
    parsed = json.loads(out)
    assert parsed["id"] == "abc" and "raise max_tokens" in parsed["truncated"][0]
    assert TOK.count(out) <= MIN_MAX_TOKENS
