"""Fake local model servers speaking Ollama's /api/chat: one that passes the
qualification battery, one that fails it, and one just below the JSON bar."""

from __future__ import annotations

from typing import Any

from .conftest import Route

GOOD_ANSWERS: tuple[tuple[str, str], ...] = (
    ('Return JSON: {"status": "ok"}', '{"status": "ok"}'),
    ("List 3 programming languages", '["Python", "Rust", "Go"]'),
    ("single word ERROR", "ERROR"),
    ("parse_config", '{"name": "parse_config", "params": ["path", "strict"]}'),
    ("17 + 25", '{"sum": 42}'),
    ("fix a typo in README.md", '{"risk": "low"}'),
    ("tests/test_api.py", '{"is_test": true}'),
    ("uppercase letters", "LIBRARIAN"),
    ("Sort these paths", '{"files": ["docs/index.md", "src/a.py", "src/b.py"]}'),
    ("In at most 8 words", "A searchable map of a codebase."),
)
PROSE = "Sure! I'd be happy to help with that request."


def good_answer(prompt: str) -> str:
    for needle, answer in GOOD_ANSWERS:
        if needle in prompt:
            return answer
    return "unknown prompt"


def chat_route(kind: str) -> Route:
    """``kind``: good, bad, or almost (one JSON answer in prose)."""

    def route(_m: str, _p: str, body: Any) -> tuple[int, Any, float]:
        prompt = "\n".join(m["content"] for m in body["messages"])
        if kind == "bad":
            text = PROSE
        elif kind == "almost" and "17 + 25" in prompt:
            text = "The sum is 42."
        else:
            text = good_answer(prompt)
        return (
            200,
            {
                "model": body["model"],
                "message": {"role": "assistant", "content": text},
                "done": True,
                "prompt_eval_count": len(prompt.split()),
                "eval_count": len(text.split()),
            },
            0.0,
        )

    return route
