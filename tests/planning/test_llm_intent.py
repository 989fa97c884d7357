"""Provider-assisted decomposition: the vocabulary rules what the model says."""

from __future__ import annotations

import json

from codelibrarian.planning.intent import decompose
from codelibrarian.planning.llm_intent import llm_prompt, merge_llm_answer
from codelibrarian.providers import ChatMessage, FakeClient
from codelibrarian.techniques.vocabulary import ACTIONS


def test_prompt_lists_the_vocabulary() -> None:
    p = llm_prompt("tidy the importer")
    assert all(a in p for a in ACTIONS) and '"tidy the importer"' in p


def test_answer_validated_and_completed() -> None:
    base = decompose("tidy the importer, keeping the public API")

    def answer(messages: object, schema: object) -> str:
        del messages, schema
        return "Sure! " + json.dumps(
            {
                "action": "refactor",
                "domains": ["architecture", "galaxy"],
                "urgency": "whenever",
                "scope": "module",
                "constraints": ["keep the public API"],
            }
        )

    client = FakeClient(responder=answer)
    text = client.chat([ChatMessage("user", llm_prompt(base.text))]).text
    got, problems = merge_llm_answer(text, base)
    assert got is not None
    assert (got.action, got.source, got.scope) == ("refactor", "llm", "module")
    assert got.domain_words == ("architecture",)
    assert got.urgency == base.urgency  # "whenever" is not a word of the vocabulary
    assert any("galaxy" in p for p in problems) and any("urgency" in p for p in problems)
    assert got.actions[0].weight == 1000
    assert all(a.weight <= 500 for a in got.actions[1:])


def test_unusable_answers_fall_back() -> None:
    base = decompose("tidy the importer")
    assert merge_llm_answer("no idea", base)[0] is None
    bad, why = merge_llm_answer('{"action": "dance"}', base)
    assert bad is None and "dance" in why[0]
