"""Provider-assisted decomposition (``--llm``): a model reads the request, the vocabulary rules.

Only when asked and when a provider is available. The model is shown the request
and the closed vocabularies and answers with one JSON object. Its answer is
*validated against the vocabulary*: words outside it are dropped (and said so),
and what it leaves out is taken from the deterministic decomposition, which also
stays the fallback when the answer is unusable. The model's action leads the
action weights; the vocabulary's evidence for other actions is kept at half
weight, so a misreading still has a runner-up.

Pure: the prompt is built and the answer parsed here; calling the model is the
shell's job.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from typing import Any

from ..techniques.vocabulary import ACTIONS, DOMAINS
from .intent import DecomposedIntent, Weighted
from .lexicon import SCOPES, URGENCIES

__all__ = ["llm_prompt", "merge_llm_answer"]

_JSON = re.compile(r"\{.*\}", re.DOTALL)
_MAX_CONSTRAINTS = 8


def llm_prompt(text: str) -> str:
    """The instruction for the model (one JSON object, vocabulary words only)."""
    return (
        "You classify a request a developer typed to a coding agent. Answer with one JSON "
        'object and nothing else: {"action": A, "domains": [D, ...], "urgency": U, '
        '"scope": S, "constraints": [text, ...]}.\n'
        f"A is one of: {', '.join(ACTIONS)}.\n"
        f"Each D is one of: {', '.join(DOMAINS)} (most relevant first, at most four).\n"
        f"U is one of: {', '.join(URGENCIES)}. S is one of: {', '.join(SCOPES)}.\n"
        "constraints are short phrases from the request that limit how the work may be done.\n"
        f"Request: {json.dumps(text)}"
    )


def _parse(answer: str) -> dict[str, Any] | None:
    m = _JSON.search(answer)
    if m is None:
        return None
    try:
        data = json.loads(m.group(0))
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def merge_llm_answer(
    answer: str, base: DecomposedIntent
) -> tuple[DecomposedIntent | None, tuple[str, ...]]:
    """The decomposition the answer gives, completed from ``base``; or None and why."""
    data = _parse(answer)
    if data is None:
        return None, ("the model's answer holds no JSON object",)
    problems: list[str] = []
    action = data.get("action")
    if action not in ACTIONS:
        return None, (f"the model's action {action!r} is not in the vocabulary",)
    domains_raw = data.get("domains")
    domains: list[str] = []
    if isinstance(domains_raw, list):
        for d in domains_raw:
            if d in DOMAINS and d not in domains:
                domains.append(d)
            else:
                problems.append(f"dropped domain {d!r} (not in the vocabulary)")
    urgency = data.get("urgency")
    if urgency not in URGENCIES:
        problems.append(f"urgency {urgency!r} not in the vocabulary: kept {base.urgency}")
        urgency = base.urgency
    scope = data.get("scope")
    if scope not in SCOPES:
        problems.append(f"scope {scope!r} not in the vocabulary: kept {base.scope}")
        scope = base.scope
    raw_constraints = data.get("constraints")
    constraints = (
        tuple(str(c)[:120] for c in raw_constraints[:_MAX_CONSTRAINTS] if isinstance(c, str))
        if isinstance(raw_constraints, list)
        else base.constraints
    )
    actions = [Weighted(str(action), 1000, ("the model's reading",))]
    actions += [Weighted(a.word, a.weight // 2, a.cues) for a in base.actions if a.word != action]
    weighted_domains = (
        tuple(
            Weighted(d, 1000 - 150 * i, ("the model's reading",)) for i, d in enumerate(domains[:4])
        )
        or base.domains
    )
    merged = replace(
        base,
        action=str(action),
        actions=tuple(actions),
        domains=weighted_domains,
        urgency=str(urgency),
        scope=str(scope),
        constraints=constraints,
        confidence=max(base.confidence, 700),
        source="llm",
        notes=(*base.notes, *problems),
        urgency_cues=base.urgency_cues or (("the model's reading",) if urgency != "normal" else ()),
        scope_cues=base.scope_cues or ("the model's reading",),
    )
    return merged, tuple(problems)
