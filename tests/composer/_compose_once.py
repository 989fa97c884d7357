"""Compose a fixed, seeded input set and write the pack and decision record to stdout.

Run by test_cross_process.py under different PYTHONHASHSEED values.
"""

from __future__ import annotations

import sys
import warnings

from codelibrarian.composer import (
    KINDS,
    LANES,
    ComposeContext,
    ComposerConstraints,
    Constraint,
    LaneRequirement,
    Matcher,
    canonical_json,
    compose,
)
from codelibrarian.config import BudgetConfig
from codelibrarian.explain_view import render_terminal
from codelibrarian.tokens import get_tokenizer
from tests.composer.strategies import PATHS, build_candidate


def main() -> None:
    fmt = sys.argv[1]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        tok = get_tokenizer("gpt-4o")
        tok.count("warm")
    cands = [
        build_candidate(
            f"id{i:03d}",
            KINDS[(i * 7) % len(KINDS)],
            LANES[(i * 5) % len(LANES)],
            PATHS[i % len(PATHS)],
            None if i % 3 else 40 + i,
            1000 + i,
        )
        for i in range(150)
    ]
    constraints = ComposerConstraints.of(
        pinned=[Constraint(Matcher.id("id007"), "pin")],
        must_include=[Constraint(Matcher.kind("violation"), "violations")],
        must_exclude=[Constraint(Matcher.pattern("secrets/"), "sensitive")],
        lane_requirements=[LaneRequirement("rules", 400, "protected")],
    )
    ctx = ComposeContext.make(
        as_of=1_763_700_000, workspace_fingerprint="wf", trigger="manual", extra={"vitals": "v1"}
    )
    result = compose(
        cands,
        budget=BudgetConfig(total_tokens=6000),
        tokenizer=tok,
        context=ctx,
        constraints=constraints,
        fmt=fmt,  # type: ignore[arg-type]
    )
    out = sys.stdout
    out.write(result.text)
    out.write("\n=====\n")
    out.write(canonical_json(result.record))
    out.write("\n=====\n")
    out.write(render_terminal(result.explanation, width=90, limit=0))


if __name__ == "__main__":
    main()
