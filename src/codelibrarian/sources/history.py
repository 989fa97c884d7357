"""History lane: session history and learnings recorded through the API.

Candidates (scores in thousandths):

- ``session_history``: one candidate per session (its newest 20 entries, oldest
  first, so ``drop_entries`` drops the oldest), sessions ordered by their newest
  entry, at most the 5 newest sessions. relevance 300 + 6/10 of the keyword
  relevance of the entries (+100 when an entry's role is the trigger's agent
  role); specificity 400; risk 200; recency from the newest entry's age.
- ``session_history`` decision snapshots: the three newest earlier compositions of
  this workspace (``as_of`` strictly before the trigger's, one per distinct task,
  read from the private sidecars in ``.librarian/decisions/private/``): the task
  and the files that pack showed. relevance 150 + 6/10 of the keyword relevance
  of the earlier task; specificity 300; risk 100; recency from its ``as_of``.
- ``learning``: one per recorded learning whose words share at least one
  keyword with the trigger (all learnings when the trigger has no keywords):
  relevance 200 + 8/10 of its keyword relevance; specificity 700; risk 500;
  recency from its age.

Entries recorded after ``as_of`` are ignored, so replaying an older trigger
sees the history it saw then.
"""

from __future__ import annotations

import json

from ..composer.determinism import recency_bucket
from ..composer.shrink import entries_body
from ..composer.types import Candidate, HistoryEntry
from .base import SourceContext, clamp, keyword_relevance
from .sessions import load_learnings, load_session_entries

__all__ = ["HistorySource"]

_ENTRIES_PER_SESSION = 20
_SESSIONS = 5


class HistorySource:
    """Session history and learnings as history-lane candidates."""

    name = "history"

    def gather(self, ctx: SourceContext) -> list[Candidate]:
        as_of = ctx.trigger.as_of
        keywords = ctx.trigger.keywords
        out: list[Candidate] = []
        sessions: dict[str, list[tuple[int, int, str, str]]] = {}
        for order, entry in enumerate(load_session_entries(ctx.state.sessions_dir)):
            if entry.recorded_at > as_of:
                continue
            sessions.setdefault(entry.session, []).append(
                (entry.recorded_at, order, entry.role, entry.text)
            )
        newest = sorted(sessions, key=lambda s: (-max(e[0] for e in sessions[s]), s))
        for name in newest[:_SESSIONS]:
            items = sorted(sessions[name])[-_ENTRIES_PER_SESSION:]
            entries = tuple(HistoryEntry(f"[{role}] {text}", ts) for ts, _, role, text in items)
            body = entries_body(entries)
            rel = 300 + keyword_relevance(body, keywords) * 6 // 10
            if ctx.trigger.agent_role and any(r == ctx.trigger.agent_role for _, _, r, _ in items):
                rel += 100
            out.append(
                ctx.candidate(
                    kind="session_history",
                    lane="history",
                    path=".librarian/sessions/history",
                    content=body,
                    title=f"Session {name}",
                    discriminator=name,
                    relevance=clamp(rel),
                    specificity=400,
                    risk=200,
                    recency_bucket=recency_bucket(as_of - items[-1][0]),
                    entries=entries,
                )
            )
        out.extend(self._snapshots(ctx))
        for learning in load_learnings(ctx.state.sessions_dir):
            if learning.recorded_at > as_of:
                continue
            text = learning.render()
            kr = keyword_relevance(text, keywords)
            if keywords and kr == 0:
                continue
            out.append(
                ctx.candidate(
                    kind="learning",
                    lane="history",
                    path=".librarian/sessions/learnings",
                    content=text,
                    title=f"Learning {learning.id}",
                    discriminator=learning.id,
                    relevance=200 + kr * 8 // 10,
                    specificity=700,
                    risk=500,
                    recency_bucket=recency_bucket(as_of - learning.recorded_at),
                    entries=(HistoryEntry(text, learning.recorded_at),),
                )
            )
        return out

    @staticmethod
    def _snapshots(ctx: SourceContext) -> list[Candidate]:
        folder = ctx.state.decisions_dir / "private"
        if not folder.is_dir():
            return []
        found: list[tuple[int, str, str, list[str]]] = []
        for path in sorted(folder.glob("*.json")):
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
                trig = data["trigger"]
                as_of = int(trig["as_of"])
                task = str(trig["task"]).strip()
                files = [str(f) for f in data.get("files", [])]
            except (OSError, ValueError, KeyError, TypeError):
                continue
            if as_of < ctx.trigger.as_of and task:
                found.append((as_of, path.stem, task, files))
        found.sort(key=lambda f: (-f[0], f[1]))
        out: list[Candidate] = []
        seen: set[str] = set()
        for as_of, ident, task, files in found:
            if task in seen or task == ctx.trigger.task.strip():
                continue
            seen.add(task)
            shown = ", ".join(files[:12]) + (
                f" (+{len(files) - 12} more)" if len(files) > 12 else ""
            )
            first = task.splitlines()[0][:200]
            text = f"Earlier task: {first}\nIts pack showed: {shown or '(no files)'}"
            out.append(
                ctx.candidate(
                    kind="session_history",
                    lane="history",
                    path=".librarian/decisions/snapshot",
                    content=text,
                    title="Earlier composition",
                    discriminator=ident,
                    relevance=150 + keyword_relevance(task, ctx.trigger.keywords) * 6 // 10,
                    specificity=300,
                    risk=100,
                    recency_bucket=recency_bucket(ctx.trigger.as_of - as_of),
                    entries=(HistoryEntry(text, as_of),),
                )
            )
            if len(out) >= 3:
                break
        return out
