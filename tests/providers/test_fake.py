"""The shipped test double: deterministic answers, embeddings and scripted failures."""

from __future__ import annotations

from codelibrarian.errors import ProviderCallFailed
from codelibrarian.providers import (
    ChatMessage,
    ClientOptions,
    FakeClient,
    FakeProvider,
    ProbeContext,
    RetryPolicy,
    client_for,
)
from codelibrarian.providers.fake import example_for_schema
from codelibrarian.providers.schema import schema_problems

SCHEMA = {
    "type": "object",
    "properties": {
        "kind": {"type": "string", "enum": ["a", "b"]},
        "items": {"type": "array", "items": {"type": "integer"}, "minItems": 2},
        "flag": {"type": "boolean"},
    },
    "required": ["kind", "items", "flag"],
    "additionalProperties": False,
}


def test_default_answers_conform_to_the_schema() -> None:
    client = FakeClient()
    answer = client.chat([ChatMessage("user", "give me data")], schema=SCHEMA)
    assert answer.data == {"flag": False, "items": [0, 0], "kind": "a"}
    assert answer.schema_errors == ()
    assert schema_problems(example_for_schema(SCHEMA), SCHEMA) == []
    assert client.chat([ChatMessage("user", "hello")]).text == "fake answer to: hello"
    assert len(client.calls) == 2


def test_embeddings_are_deterministic_unit_vectors() -> None:
    one, two = FakeClient().embed(["x", "y"]), FakeClient().embed(["x", "y"])
    assert one.vectors == two.vectors and one.vectors[0] != one.vectors[1]
    assert abs(sum(v * v for v in one.vectors[0]) - 1.0) < 1e-9


def test_scripted_failures_go_through_the_retry_loop() -> None:
    sleeps: list[float] = []
    flaky = ProviderCallFailed("busy", provider="fake", kind="http_status", retryable=True)
    client = FakeClient(
        failures=[flaky],
        options=ClientOptions(sleep=sleeps.append, retry=RetryPolicy(seed="s")),
    )
    answer = client.chat([ChatMessage("user", "hi")])
    assert answer.attempts == 2 and len(sleeps) == 1


def test_fake_provider_probe_and_client() -> None:
    fake = FakeProvider(available=True, authenticated=False)
    result = fake.probe(ProbeContext(env={}))
    assert result.status == "not_authenticated" and not result.usable
    client = client_for(FakeProvider(), "fake-model", ClientOptions())
    assert client.chat([ChatMessage("user", "q")]).provider == "fake"
