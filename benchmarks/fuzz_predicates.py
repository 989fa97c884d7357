"""Fuzz the predicate parser (and the checker and evaluator behind it).

Generates N inputs (default 120,000) with a seeded PRNG — a third random strings
over an alphabet weighted to the language's tokens, two thirds mutations
(insertions, deletions, replacements, token splices) of valid predicates — and
checks the promise of ``techniques.predicates``: parsing either succeeds or raises
``PredicateSyntaxError`` with a position inside the text (line >= 1, column >= 1,
0 <= offset <= len). Every input that parses is type-checked (only
``PredicateTypeError`` may come out) and evaluated against a fixed environment
(nothing may come out). Any other exception is a failure and is printed.

    .venv/bin/python benchmarks/fuzz_predicates.py --inputs 120000 --seed 20261123

Exit status 1 when any input breaks the promise.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections import Counter

from codelibrarian.techniques.facts import FACTS_SCHEMA, default_facts
from codelibrarian.techniques.predicates import (
    PredicateSyntaxError,
    PredicateTypeError,
    evaluate,
    parse,
)

SEEDS = (
    "codebase.has_tests == false",
    "change.touches_auth and not codebase.has_tests",
    '"python" in codebase.languages or codebase.file_count > 200',
    "steps.tp_hypothesis.output.confidence >= 800",
    "exists steps.tp_verify_plan.output.passed and (change.lines_changed < 80)",
    '("flaky" in intent.keywords or "slow" in intent.keywords) and not ("x" in intent.keywords)',
    'codebase.primary_language != "go" and change.files_changed <= 6',
    "not (change.present or codebase.has_ci)",
    "[1, 2, 3] == [1, 2.0, 3] or -0.5 < 1",
    "change.languages == [] or 'x' not in change.languages",
    "change.touchesAuth === true",
)
TOKENS = (
    "and", "or", "not", "in", "exists", "true", "false", "==", "!=", "<=", ">=", "<", ">",
    "(", ")", "[", "]", ",", ".", "-", '"', "'", "codebase", "change", "steps", "output",
    "has_tests", "0.8", "12", " ", " ", "\n", "\\", "=", "!", "&&", "||", "===", "é", "\t",
)  # fmt: skip
ALPHABET = "abcxyz_019.()[]\"'=<>!-, \n\t\\&|~#é"
ENV = default_facts() | {"steps": {"tp_hypothesis": {"output": {"confidence": 900}}}}


def _random_text(rng: random.Random) -> str:
    n = rng.randint(0, 60)
    parts = [rng.choice(TOKENS) if rng.random() < 0.6 else rng.choice(ALPHABET) for _ in range(n)]
    sep = rng.choice(("", " "))
    return sep.join(parts)


def _mutate(rng: random.Random, text: str) -> str:
    out = text
    for _ in range(rng.randint(1, 6)):
        i = rng.randint(0, len(out))
        kind = rng.randrange(4)
        if kind == 0:
            out = out[:i] + rng.choice(ALPHABET) + out[i:]
        elif kind == 1:
            out = out[:i] + out[i + 1 :]
        elif kind == 2:
            out = out[:i] + rng.choice(TOKENS) + out[i:]
        else:
            j = rng.randint(0, len(out))
            out = out[: min(i, j)] + out[max(i, j) :]
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--inputs", type=int, default=120_000)
    ap.add_argument("--seed", type=int, default=20261123)
    args = ap.parse_args(argv)
    rng = random.Random(args.seed)
    outcomes: Counter[str] = Counter()
    failures: list[tuple[str, str]] = []
    started = time.perf_counter()
    cpu = time.process_time()
    for k in range(args.inputs):
        text = _random_text(rng) if k % 3 == 0 else _mutate(rng, rng.choice(SEEDS))
        try:
            pred = parse(text, compat=k % 7 == 0)
        except PredicateSyntaxError as exc:
            if not (exc.line >= 1 and exc.column >= 1 and 0 <= exc.offset <= len(text)):
                failures.append((text, f"bad position {exc.line}:{exc.column} @ {exc.offset}"))
            outcomes["syntax error"] += 1
            continue
        except Exception as exc:
            failures.append((text, f"{type(exc).__name__}: {exc}"))
            continue
        outcomes["parsed"] += 1
        try:
            pred.check(FACTS_SCHEMA)
            outcomes["well typed"] += 1
        except PredicateTypeError:
            outcomes["type error"] += 1
        except Exception as exc:
            failures.append((text, f"checker {type(exc).__name__}: {exc}"))
        try:
            evaluate(pred, ENV)
        except Exception as exc:
            failures.append((text, f"evaluator {type(exc).__name__}: {exc}"))
    wall = time.perf_counter() - started
    cpu = time.process_time() - cpu
    print(f"inputs: {args.inputs}  seed: {args.seed}")
    for key in ("parsed", "well typed", "type error", "syntax error"):
        print(f"  {key}: {outcomes[key]}")
    print(f"  broken promises: {len(failures)}")
    print(f"wall {wall:.2f} s, cpu {cpu:.2f} s, {args.inputs / cpu:,.0f} inputs/s (cpu)")
    for text, why in failures[:20]:
        print(f"FAIL {text!r}: {why}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
