"""An Ollama-compatible model server on loopback for the engine's unattended runs.

The provider tests' :class:`~tests.providers.conftest.ModelServer` with the three
routes the Ollama probe and client use (``/api/version``, ``/api/tags``,
``/api/chat``). Each chat is answered by ``answer(primitive, prompt, schema)`` (the
primitive is read from the engine's system prompt), and the ``Idempotency-Key``
header is honoured the way an idempotent API does: the first request with a key
is *executed* (counted in ``executed``), a repeat gets the stored answer back
without being executed again (counted in ``repeats``).
"""

from __future__ import annotations

import json
import re
import threading
from collections import Counter
from collections.abc import Callable, Mapping
from typing import Any

from tests.providers.conftest import ModelServer

#: ``librarian.toml`` lines that give the server's model the capabilities the steps need
MODEL_CONFIG = """
[[execution.models]]
provider = "ollama"
model = "coder-test:latest"
capabilities = ["reasoning", "code_generation", "code_analysis", "json_mode"]
context_window = 32768
"""

Answer = Callable[[str, str, Mapping[str, Any]], Mapping[str, Any]]
_STEP = re.compile(r"Step: .* \(([a-z][a-z0-9_]*)\)")


class OllamaServer:
    def __init__(
        self, answer: Answer, *, model: str = "coder-test:latest", delay_s: float = 0.0
    ) -> None:
        self.answer = answer
        self.delay_s = delay_s
        self.executed: Counter[str] = Counter()
        self.repeats: Counter[str] = Counter()
        self.primitives: list[str] = []
        self._stored: dict[str, bytes] = {}
        self._lock = threading.Lock()
        self.http = ModelServer(
            {
                ("GET", "/api/version"): lambda *_: (200, {"version": "0.9.0"}, 0.0),
                ("GET", "/api/tags"): lambda *_: (200, {"models": [{"name": model}]}, 0.0),
                ("POST", "/api/chat"): self._chat,
            }
        )
        self.url = self.http.url

    def _chat(self, _method: str, _path: str, body: Any) -> tuple[int, Any, float]:
        key = self.http.header("Idempotency-Key")
        with self._lock:
            if key and key in self._stored:
                self.repeats[key] += 1
                return 200, self._stored[key], 0.0
        messages = (body or {}).get("messages", [])
        system = next((m["content"] for m in messages if m["role"] == "system"), "")
        user = next((m["content"] for m in messages if m["role"] == "user"), "")
        found = _STEP.search(system)
        primitive = found.group(1) if found else ""
        text = json.dumps(dict(self.answer(primitive, user, body.get("format") or {})))
        data = json.dumps(
            {
                "model": body.get("model"),
                "message": {"role": "assistant", "content": text},
                "done": True,
                "prompt_eval_count": len(user.split()),
                "eval_count": len(text.split()),
            }
        ).encode()
        with self._lock:
            if key:
                self._stored[key] = data
            self.executed[key] += 1
            self.primitives.append(primitive)
        return 200, data, self.delay_s

    def close(self) -> None:
        self.http.close()
