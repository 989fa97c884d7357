"""Plans, advice and evolution reports as text: Markdown for documents, plain for terminals.

Renderers read the JSON documents (``to_dict()``, after the secret gate), so what is
printed is exactly what ``--json`` would carry. Deterministic: no clock, no width
guessing; numbers are grouped with commas and durations shown in s/min/h.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["advice_text", "duration", "evolution_text", "plan_markdown", "plan_text"]


def duration(ms: int) -> str:
    if ms < 60_000:
        return f"{ms / 1000:g} s"
    if ms < 3_600_000:
        return f"{ms / 60_000:.0f} min"
    return f"{ms / 3_600_000:.1f} h".replace(".0 h", " h")


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _head(doc: Mapping[str, Any]) -> tuple[str, str, str]:
    sel, plan = doc["selection"], doc["plan"]
    pol = plan["policy"]
    limits = []
    if pol["max_duration_ms"]:
        limits.append(f"max {duration(pol['max_duration_ms'])}")
    if pol["max_tokens"]:
        limits.append(f"{pol['max_tokens']:,} tokens")
    limits.append("needs approval" if pol["human_approval_required"] else "no approval needed")
    workflow = (
        f"{plan['name']} ({plan['id']}) for pattern {sel['pattern']}, score "
        f"{sel['score_per_mille']}‰, confidence {sel['confidence_per_mille']}‰ ({sel['mode']})"
    )
    return workflow, f"{plan['stratum']}: {', '.join(limits)}", plan["description"]


def _intent_lines(i: Mapping[str, Any]) -> list[str]:
    cues = [c for a in i["actions"][:1] for c in a["cues"]]
    return [
        f"action: {i['action']} ({i['category']})"
        + (f"; cues {', '.join(repr(c) for c in cues[:3])}" if cues else "")
        + f"; source {i['source']}",
        f"domains: {', '.join(d['word'] for d in i['domains'])}",
        f"urgency: {i['urgency']}; scope: {i['scope']}",
        f"constraints: {'; '.join(i['constraints']) or 'none'}",
        f"confidence: {i['confidence_per_mille']}‰",
    ]


def _context_lines(doc: Mapping[str, Any]) -> list[str]:
    snap, prov = doc["context"]["snapshot"], doc["context"]["providers"]
    mods = snap["modified_files"]
    shown = ", ".join(mods[:8]) + (f" and {len(mods) - 8} more" if len(mods) > 8 else "")
    lines = [
        f"commit: {(snap['commit'] or 'none')[:12]}",
        f"modified files: {shown or 'none'}",
        f"tests: {snap['test_status']}",
    ]
    down = ", ".join(f"{u['provider']} ({u['status']})" for u in prov["unavailable"])
    lines.append(
        f"providers: {', '.join(prov['available']) or 'none available'}"
        + (f"; preferred {prov['preferred']}" if prov["preferred"] else "")
        + (f"; unavailable: {down}" if down else "")
    )
    for s in doc["plan"]["steps"]:
        m = s.get("model")
        if m is not None:
            who = f"{m['provider']}/{m['model']}" if m["provider"] else "the calling agent"
            lines.append(f"{s['step']} (llm): {who}; {m['reason']}")
    return lines


def _estimate_lines(doc: Mapping[str, Any]) -> list[str]:
    e = doc["estimates"]
    return [
        f"tokens: {e['total_tokens']:,} (each step's context pack, composed now, "
        "x its expected runs)",
        f"time: {duration(e['total_time_ms'])} expected",
        f"provider calls: {e['api_calls']}; estimate confidence {e['confidence_per_mille']}‰",
    ]


def plan_markdown(doc: Mapping[str, Any]) -> str:
    """The whole plan as a Markdown document."""
    workflow, stratum, description = _head(doc)
    out = [f"# Plan: {doc['intent']['text']}", "", f"**Workflow:** {workflow}", "",
           f"**Stratum:** {stratum}", "", description, "", "## Intent", ""]  # fmt: skip
    out += [f"- {line}" for line in _intent_lines(doc["intent"])]
    out += ["", "## Steps", "", "| # | step | executor | role | context tokens / budget "
            "| runs | time |", "|---|---|---|---|---|---|---|"]  # fmt: skip
    for n, s in enumerate(doc["plan"]["steps"], 1):
        out.append(
            f"| {n} | `{s['step']}` {_cell(s['name'])} | {s['executor']} | {s['role']} | "
            f"{s['context_tokens']:,} / {s['budget_tokens']:,} | {s['expected_runs']} | "
            f"{duration(s['time_ms'])} |"
        )
    if doc["decisions"]:
        out += ["", "## Decisions on this codebase", ""]
        for d in doc["decisions"]:
            value = "run time" if d["value"] is None else str(d["value"]).lower()
            out.append(f"- `{d['when']}` ({value}): {d['effect']}")
    out += ["", "## Estimates", ""] + [f"- {x}" for x in _estimate_lines(doc)]
    out += ["", "## Context", ""] + [f"- {x}" for x in _context_lines(doc)]
    r = doc["rationale"]
    out += ["", "## Why this workflow", "", r["selection"], "",
            "| aspect | score | weight | points | why |", "|---|---|---|---|---|"]  # fmt: skip
    for a in doc["selection"]["aspects"]:
        out.append(
            f"| {a['aspect']} | {a['score_per_mille']} | {a['weight_per_mille']} | "
            f"{a['points']} | {_cell(a['why'])} |"
        )
    out += ["", "### Steps", ""] + [f"- `{k}`: {v}" for k, v in r["primitives"].items()]
    out += ["", "### Operators", ""] + [f"- `{k}`: {v}" for k, v in r["operators"].items()]
    out += ["", "### Assumptions", ""] + [f"- {x}" for x in r["assumptions"]]
    out += ["", "### Limitations", ""] + [f"- {x}" for x in r["limitations"]]
    out += ["", "## Alternatives", ""]
    for a in doc["alternatives"]:
        trade = f" Trade-offs: {'; '.join(a['tradeoffs'])}." if a["tradeoffs"] else ""
        out.append(f"- **{a['name']}** (`{a['id']}`): {a['why_not']}.{trade}")
    if doc["degradations"]:
        out += ["", "## Degradations", ""] + [
            f"- {d['code']}: {d['detail']}" for d in doc["degradations"]
        ]
    return "\n".join(out) + "\n"


def plan_text(doc: Mapping[str, Any]) -> str:
    """A terminal summary: the workflow, its steps, the estimates and the alternatives."""
    workflow, stratum, _ = _head(doc)
    out = [f"plan: {workflow}", f"stratum {stratum}"]
    out += [f"  {line}" for line in _intent_lines(doc["intent"])]
    out.append("steps:")
    for n, s in enumerate(doc["plan"]["steps"], 1):
        out.append(
            f"  {n}. {s['step']} [{s['executor']}, {s['role']}] context {s['context_tokens']:,}"
            f"/{s['budget_tokens']:,} tokens, x{s['expected_runs']}, {duration(s['time_ms'])}"
        )
    for d in doc["decisions"]:
        value = "run time" if d["value"] is None else str(d["value"]).lower()
        out.append(f"decided: {d['when']} ({value}): {d['effect']}")
    out += _estimate_lines(doc)
    out += _context_lines(doc)
    out.append(f"why: {doc['rationale']['selection']}")
    for a in doc["alternatives"]:
        out.append(f"alternative {a['id']}: {a['why_not']}")
    out += [f"degraded: {d['code']}: {d['detail']}" for d in doc["degradations"]]
    return "\n".join(out) + "\n"


def advice_text(doc: Mapping[str, Any]) -> str:
    out = [f"features of this codebase ({doc['files']:,} files; present at "
           f"{doc['threshold_per_mille']}‰ or more):"]  # fmt: skip
    for f in doc["features"]:
        mark = "present" if f["present"] else "absent "
        sig = "; ".join(s["detail"] for s in f["signals"]) or "no evidence"
        out.append(f"  {mark} {f['feature']:<14} {f['confidence_per_mille']:>4}‰  {sig}")
        for path in f["evidence"] if f["present"] else ():
            out.append(f"      {path}")
    out.append("suggested workflows:")
    for n, s in enumerate(doc["suggestions"], 1):
        out.append(f"  {n}. [{s['priority']}] {s['composition']}: {s['reason']}")
        if s["evidence"]:
            out.append(f"      evidence: {', '.join(s['evidence'])}")
    out += [f"note: {n}" for n in doc["notes"]]
    return "\n".join(out) + "\n"


def _items(doc: Mapping[str, Any], group: str) -> Sequence[Mapping[str, Any]]:
    items: Sequence[Mapping[str, Any]] = doc[group]
    return items


def evolution_text(doc: Mapping[str, Any]) -> str:
    out = [f"evolution over {doc['runs']} finished runs (as of {doc['as_of']}, {doc['source']})"]
    if not any(doc[g] for g in ("proposals", "mutations", "deprecations")):
        out.append("nothing to propose")
    for p in _items(doc, "proposals"):
        out.append(
            f"proposal {p['id']} [{p['status']}] score {p['score_per_mille']}‰: "
            f"{' -> '.join(p['primitives'])}; {p['description']}"
        )
    for m in _items(doc, "mutations"):
        out.append(f"mutation {m['id']} [{m['status']}] {m['composition']}: {m['description']}")
        out.append(f"    {m['evidence']}")
    for d in _items(doc, "deprecations"):
        out.append(f"deprecate {d['id']} [{d['status']}] {d['composition']}: {d['reason']}")
    out += [f"note: {n}" for n in doc["notes"]]
    out += [f"degraded: {d['code']}: {d['detail']}" for d in doc["degradations"]]
    out.append(
        "approve with `librarian evolve approve ID`, reject with `librarian evolve reject ID`"
    )
    return "\n".join(out) + "\n"
