"""History lane: session history and learnings recorded through the API.

Candidates (scores in thousandths):

- ``session_history``: one candidate per session (its newest 20 entries, oldest
  first, so ``drop_entries`` drops the oldest), sessions ordered by their newest
  entry, at most the 5 newest sessions. relevance 300 + 6/10 of the keyword
  relevance of the entries (+100 when an entry's role is the trigger's agent
  role); specificity 400; risk 200; recency from the newest entry's age.
- ``learning``: one per recorded learning whose words share at least one
  keyword with the trigger (all learnings when the trigger has no keywords):
  relevance 200 + 8/10 of its keyword relevance; specificity 700; risk 500;
  recency from its age.

Entries recorded after ``as_of`` are ignored, so replaying an older trigger
sees the history it saw then.

What earlier *compositions* showed is not offered: a pack that lists the files
earlier packs showed only echoes the librarian's own choices back at it, so
packs would drift with use (an identical compose later would be biased toward
whatever came before). The private replay sidecars stay for ``replay``; the
agent's own recorded work (sessions, learnings) is the evidence this lane carries.
"""

from __future__ import annotations

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
