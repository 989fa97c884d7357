"""An Ollama-compatible model server on loopback for the engine's unattended runs.

It speaks the three endpoints the Ollama probe and client use (``/api/version``,
``/api/tags``, ``/api/chat``), answers each chat from ``answer(primitive, prompt,
schema)`` (the primitive is read from the engine's system prompt), and honours an
``Idempotency-Key`` header the way an idempotent API does: the first request with
a key is *executed* (counted in ``executed``), a repeat gets the stored answer
back without being executed again (counted in ``repeats``). Built on the
``ModelServer`` of the provider tests, with the request headers recorded.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Answer = Callable[[str, str, Mapping[str, Any]], Mapping[str, Any]]
_STEP = re.compile(r"Step: .* \(([a-z][a-z0-9_]*)\)")


class OllamaServer:
    def __init__(
        self, answer: Answer, *, model: str = "coder-test:latest", delay_s: float = 0.0
    ) -> None:
        self.answer = answer
        self.model = model
        self.delay_s = delay_s
        self.executed: Counter[str] = Counter()
        self.repeats: Counter[str] = Counter()
        self.primitives: list[str] = []
        self._stored: dict[str, bytes] = {}
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def _send(self, status: int, payload: Any) -> None:
                data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:
                    pass  # the client died (a killed run): nothing to answer

            def do_GET(self) -> None:
                if self.path == "/api/version":
                    self._send(200, {"version": "0.9.0"})
                elif self.path == "/api/tags":
                    self._send(200, {"models": [{"name": server.model}]})
                else:
                    self._send(404, {"error": "not found"})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                if self.path != "/api/chat":
                    self._send(404, {"error": "not found"})
                    return
                key = self.headers.get("Idempotency-Key") or ""
                self._send(200, server.chat(key, body))

            def log_message(self, format: str, *args: Any) -> None:
                return None

        class Server(ThreadingHTTPServer):
            daemon_threads = True

            def handle_error(self, request: Any, client_address: Any) -> None:
                return None

        self.httpd = Server(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self.thread.start()

    def chat(self, key: str, body: Mapping[str, Any]) -> bytes:
        with self._lock:
            if key and key in self._stored:
                self.repeats[key] += 1
                return self._stored[key]
        messages = body.get("messages", [])
        system = next((m["content"] for m in messages if m["role"] == "system"), "")
        user = next((m["content"] for m in messages if m["role"] == "user"), "")
        found = _STEP.search(system)
        primitive = found.group(1) if found else ""
        if self.delay_s:
            time.sleep(self.delay_s)
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
        return data

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
