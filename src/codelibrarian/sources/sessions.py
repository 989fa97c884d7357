"""Session history and learnings recorded through the API, under ``.librarian/sessions/``.

- ``history.jsonl``: one entry per line ``{"session", "role", "text", "recorded_at"}``,
  what happened in an agent session (a summary, a step, an outcome).
- ``learnings.jsonl``: ``{"trigger", "action", "recorded_at", "tags"}``, a lesson
  ("when <trigger>, do <action>") the history lane offers when its words match a task.

Times are given by the caller (epoch seconds). Files are append-only.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import UsageError
from ..workspace.private import private_append

__all__ = [
    "Learning",
    "SessionEntry",
    "append_learning",
    "append_session_entry",
    "load_learnings",
    "load_session_entries",
]

HISTORY_FILE = "history.jsonl"
LEARNINGS_FILE = "learnings.jsonl"


@dataclass(frozen=True, slots=True)
class SessionEntry:
    session: str
    role: str
    text: str
    recorded_at: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "session": self.session,
            "role": self.role,
            "text": self.text,
            "recorded_at": self.recorded_at,
        }


@dataclass(frozen=True, slots=True)
class Learning:
    id: str
    trigger: str
    action: str
    recorded_at: int
    tags: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "trigger": self.trigger,
            "action": self.action,
            "recorded_at": self.recorded_at,
            "tags": list(self.tags),
        }

    def render(self) -> str:
        tags = f" [{', '.join(self.tags)}]" if self.tags else ""
        return f"When {self.trigger}: {self.action}{tags}"


def _append(path: Path, record: dict[str, Any]) -> int:
    count = len(path.read_text(encoding="utf-8").splitlines()) if path.exists() else 0
    private_append(path, json.dumps(record, sort_keys=True, ensure_ascii=False) + "\n", sync=True)
    return count + 1


def _records(path: Path) -> list[tuple[int, dict[str, Any]]]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return []
    out: list[tuple[int, dict[str, Any]]] = []
    for number, line in enumerate(lines, start=1):
        try:
            data = json.loads(line)
        except ValueError:
            continue
        if isinstance(data, dict):
            out.append((number, data))
    return out


def append_session_entry(
    sessions_dir: Path, *, session: str, text: str, recorded_at: int, role: str = "agent"
) -> SessionEntry:
    """Record one session entry."""
    if not session.strip() or not text.strip():
        raise UsageError("a session entry needs a session id and some text")
    entry = SessionEntry(session.strip(), role.strip() or "agent", text, recorded_at)
    _append(sessions_dir / HISTORY_FILE, entry.to_dict())
    return entry


def load_session_entries(sessions_dir: Path) -> tuple[SessionEntry, ...]:
    out = []
    for _, data in _records(sessions_dir / HISTORY_FILE):
        if data.get("session") and data.get("text"):
            out.append(
                SessionEntry(
                    str(data["session"]),
                    str(data.get("role", "agent")),
                    str(data["text"]),
                    int(data.get("recorded_at", 0)),
                )
            )
    return tuple(out)


def append_learning(
    sessions_dir: Path,
    *,
    trigger: str,
    action: str,
    recorded_at: int,
    tags: tuple[str, ...] = (),
) -> Learning:
    """Record one learning ("when ``trigger``, ``action``")."""
    if not trigger.strip() or not action.strip():
        raise UsageError("a learning needs a trigger and an action")
    clean_tags = tuple(sorted({t.strip() for t in tags if t.strip()}))
    record = {
        "trigger": trigger.strip(),
        "action": action.strip(),
        "recorded_at": recorded_at,
        "tags": list(clean_tags),
    }
    number = _append(sessions_dir / LEARNINGS_FILE, record)
    return Learning(f"l{number}", trigger.strip(), action.strip(), recorded_at, clean_tags)


def load_learnings(sessions_dir: Path) -> tuple[Learning, ...]:
    out = []
    for number, data in _records(sessions_dir / LEARNINGS_FILE):
        if data.get("trigger") and data.get("action"):
            tags = data.get("tags") or []
            out.append(
                Learning(
                    f"l{number}",
                    str(data["trigger"]),
                    str(data["action"]),
                    int(data.get("recorded_at", 0)),
                    tuple(str(t) for t in tags),
                )
            )
    return tuple(out)
