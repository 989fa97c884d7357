#!/usr/bin/env python3
"""Validate the labelled intent set (stdlib only).

    python3 benchmarks/intents/check.py                 # validate intents.jsonl, print counts
    python3 benchmarks/intents/check.py --agreement     # also compare the two labelling passes
    python3 benchmarks/intents/check.py --agreement mine.tsv   # compare pass 1 with your own pass
    python3 benchmarks/intents/check.py --blind > blind.jsonl  # ids and intents only, shuffled
    python3 benchmarks/intents/check.py path/to/other.jsonl
    python3 benchmarks/intents/check.py benchmarks/intents/dev2.jsonl   # the second tuning split
    python3 benchmarks/intents/check.py benchmarks/intents/dev3.jsonl   # the third tuning split
    python3 benchmarks/intents/check.py benchmarks/intents/dev4.jsonl   # the fourth tuning split
    python3 benchmarks/intents/check.py benchmarks/intents/dev5.jsonl   # the fifth tuning split
    python3 benchmarks/intents/check.py benchmarks/intents/dev6.jsonl   # the sixth tuning split
    python3 benchmarks/intents/check.py benchmarks/intents/dev7.jsonl   # the seventh tuning split

Exit status 0 when the file is valid, 1 with one line per problem otherwise. What is checked:
the schema of every row, the 16 pattern ids, unique ids and intents, source links, the share of
invented intents, and the balance of the dev/eval split (each half large enough, every pattern in
both halves). The split itself is frozen in the file and is not recomputed here, so that correcting
a label later never moves an intent from one half to the other.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent

PATTERNS = (
    "pattern_bug_investigation",
    "pattern_performance_investigation",
    "pattern_change_verification",
    "pattern_release_verification",
    "pattern_feature_construction",
    "pattern_refactoring",
    "pattern_multi_agent_task",
    "pattern_self_improvement",
    "pattern_codebase_onboarding",
    "pattern_security_audit",
    "pattern_api_design",
    "pattern_incident_response",
    "pattern_dependency_update",
    "pattern_technical_debt",
    "pattern_test_generation",
    "pattern_documentation",
)
KEYS = (
    "id",
    "intent",
    "label",
    "also",
    "why",
    "split",
    "source_kind",
    "source",
    "source_repo",
    "original",
)
SPLITS = ("dev", "eval")
#: the set's files in the order they were collected: ``intents.jsonl`` (dev and eval), then
#: one file per later tuning split
FILES_IN_ORDER = ("intents.jsonl", *(f"dev{n}.jsonl" for n in range(2, 8)))
#: later tuning splits, each collected after a selector existed and kept in its own file, with
#: the earlier files it must not share an id, intent or source thread with
EXTRA_SPLITS: dict[str, tuple[str, ...]] = {
    name.removesuffix(".jsonl"): FILES_IN_ORDER[:i] for i, name in enumerate(FILES_IN_ORDER) if i
}
MIN_EXTRA = 100
MIN_PER_PATTERN_EXTRA = 2
SOURCE_KINDS = ("issue", "pull-request", "chat-style")
INVENTED_PREFIX = "invented:"

MIN_PER_PATTERN = 6  # in the whole set
MIN_PER_PATTERN_PER_HALF = 2
MIN_PER_HALF = 100
DEV_SHARE_RANGE = (0.40, 0.60)
MAX_INVENTED_SHARE = 0.15
MAX_INTENT_CHARS = 300

ID_RE = re.compile(r"^int-[0-9a-f]{10}$")
REPO_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9_.-]+$")
GITHUB_THREAD_RE = re.compile(
    r"^https://github\.com/(?P<repo>[^/]+/[^/]+)/(?P<kind>issues|pull)/[0-9]+$"
)


def _text(value: object) -> bool:
    return isinstance(value, str) and value.strip() != ""


def check_row(row: object, where: str) -> list[str]:
    """Problems with one parsed row, each prefixed with `where`."""
    if not isinstance(row, dict):
        return [f"{where}: not a JSON object"]
    problems = []
    missing = [k for k in KEYS if k not in row]
    extra = sorted(set(row) - set(KEYS))
    if missing:
        problems.append(f"{where}: missing keys {', '.join(missing)}")
    if extra:
        problems.append(f"{where}: unknown keys {', '.join(extra)}")
    if missing:
        return problems
    if not (isinstance(row["id"], str) and ID_RE.match(row["id"])):
        problems.append(f"{where}: id {row['id']!r} is not of the form int-<10 hex digits>")
    intent = row["intent"]
    if not _text(intent) or "\n" in intent or len(intent) > MAX_INTENT_CHARS:
        problems.append(
            f"{where}: intent must be one non-empty line of at most {MAX_INTENT_CHARS} characters"
        )
    if row["label"] not in PATTERNS:
        problems.append(f"{where}: label {row['label']!r} is not one of the 16 pattern ids")
    also = row["also"]
    if also is not None and (also not in PATTERNS or also == row["label"]):
        problems.append(f"{where}: also {also!r} must be null or another pattern id")
    if not _text(row["why"]):
        problems.append(f"{where}: why is empty")
    if row["split"] not in (*SPLITS, *EXTRA_SPLITS):
        problems.append(f"{where}: split {row['split']!r} is not dev, eval or a later tuning split")
    problems.extend(_check_source(row, where))
    return problems


def _check_source(row: dict[str, object], where: str) -> list[str]:
    kind, source, repo, original = (
        row["source_kind"],
        row["source"],
        row["source_repo"],
        row["original"],
    )
    problems = []
    if kind not in SOURCE_KINDS:
        problems.append(f"{where}: source_kind {kind!r} is not one of {', '.join(SOURCE_KINDS)}")
    if not _text(original):
        problems.append(f"{where}: original is empty")
    if repo is not None and not (isinstance(repo, str) and REPO_RE.match(repo)):
        problems.append(f"{where}: source_repo {repo!r} is not owner/name")
    if source is None:
        if kind != "chat-style" or not (
            isinstance(original, str) and original.startswith(INVENTED_PREFIX)
        ):
            problems.append(
                f"{where}: a null source is allowed only for chat-style intents whose original "
                f"starts with {INVENTED_PREFIX!r} and gives the reason"
            )
        return problems
    if not (isinstance(source, str) and source.startswith("https://")):
        return [*problems, f"{where}: source {source!r} is not an https URL"]
    if kind in ("issue", "pull-request"):
        match = GITHUB_THREAD_RE.match(source)
        if match is None:
            problems.append(f"{where}: {kind} source must be a GitHub issue or pull URL")
        elif match["repo"] != repo:
            problems.append(f"{where}: source_repo {repo!r} does not match {match['repo']!r}")
    return problems


def check_rows(rows: list[object]) -> list[str]:
    """Problems with the whole set: every row, then uniqueness and balance."""
    problems = []
    for n, row in enumerate(rows, start=1):
        problems.extend(check_row(row, f"line {n}"))
    if problems:
        return problems
    good = [r for r in rows if isinstance(r, dict)]
    for key in ("id", "intent"):
        counts = Counter(str(r[key]) for r in good)
        problems.extend(f"duplicate {key}: {v!r}" for v, c in sorted(counts.items()) if c > 1)
    problems.extend(_check_balance(good))
    return problems


def _extra_split(rows: list[dict[str, object]]) -> str | None:
    """The later tuning split a file holds (the first row's), or None for the dev/eval set."""
    first = str(rows[0]["split"]) if rows else ""
    return first if first in EXTRA_SPLITS else None


def _check_balance(rows: list[dict[str, object]]) -> list[str]:
    extra = _extra_split(rows)
    if extra is not None:
        return _check_extra(rows, extra)
    problems = []
    total = len(rows)
    halves = Counter(str(r["split"]) for r in rows)
    for half in SPLITS:
        if halves[half] < MIN_PER_HALF:
            problems.append(f"split: {half} has {halves[half]} intents, fewer than {MIN_PER_HALF}")
    low, high = DEV_SHARE_RANGE
    if total and not low <= halves["dev"] / total <= high:
        problems.append(
            f"split: dev holds {halves['dev']} of {total}, outside {low:.0%}-{high:.0%}"
        )
    cells = Counter((str(r["label"]), str(r["split"])) for r in rows)
    for pattern in PATTERNS:
        count = cells[(pattern, "dev")] + cells[(pattern, "eval")]
        if count < MIN_PER_PATTERN:
            problems.append(f"{pattern}: {count} intents, fewer than {MIN_PER_PATTERN}")
        for half in SPLITS:
            if cells[(pattern, half)] < MIN_PER_PATTERN_PER_HALF:
                problems.append(
                    f"{pattern}: {cells[(pattern, half)]} in {half}, "
                    f"fewer than {MIN_PER_PATTERN_PER_HALF}"
                )
    invented = sum(1 for r in rows if r["source"] is None)
    if total and invented / total > MAX_INVENTED_SHARE:
        problems.append(
            f"{invented} of {total} intents are invented, over {MAX_INVENTED_SHARE:.0%}"
        )
    return problems


def _check_extra(rows: list[dict[str, object]], split: str) -> list[str]:
    """A later tuning split (dev2 to dev7): only its own rows, large enough, every pattern
    present, and nothing shared with the earlier files (no id, intent or source), so that it is
    new data and eval stays unseen."""
    problems = [
        f"split: {r['id']} is {r['split']!r} in a {split} file" for r in rows if r["split"] != split
    ]
    if len(rows) < MIN_EXTRA:
        problems.append(f"split: {split} has {len(rows)} intents, fewer than {MIN_EXTRA}")
    labels = Counter(str(r["label"]) for r in rows)
    for pattern in PATTERNS:
        if labels[pattern] < MIN_PER_PATTERN_EXTRA:
            problems.append(
                f"{pattern}: {labels[pattern]} in {split}, fewer than {MIN_PER_PATTERN_EXTRA}"
            )
    for name in EXTRA_SPLITS[split]:
        problems.extend(_shared_with(rows, HERE / name))
    invented = sum(1 for r in rows if r["source"] is None)
    if rows and invented / len(rows) > MAX_INVENTED_SHARE:
        problems.append(f"{invented} of {len(rows)} {split} intents are invented")
    return problems


def _shared_with(rows: list[dict[str, object]], path: Path) -> list[str]:
    """One problem per row whose id, intent or source is already in the file at ``path``; the
    other file's rows are compared, never printed."""
    if not path.is_file():
        return []
    base, _ = load(path)
    seen = {
        (key, str(b[key]))
        for b in base
        if isinstance(b, dict)
        for key in ("id", "intent", "source")
        if b.get(key) is not None
    }
    return [
        f"{r['id']}: its {key} is already in {path.name}"
        for r in rows
        for key in ("id", "intent", "source")
        if r[key] is not None and (key, str(r[key])) in seen
    ]


def load(path: Path) -> tuple[list[object], list[str]]:
    rows: list[object] = []
    problems = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            problems.append(f"line {n}: blank line")
            continue
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError as exc:
            problems.append(f"line {n}: not JSON ({exc.msg})")
    return rows, problems


def read_pass(path: Path) -> dict[str, str]:
    """id -> label from a tab-separated labelling pass (header: id, label, also)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return {parts[0]: parts[1] for parts in (line.split("\t") for line in lines[1:]) if parts[0]}


def agreement(first: dict[str, str], second: dict[str, str]) -> tuple[int, float, float]:
    """(items compared, observed share, Cohen's kappa) over the ids both passes labelled."""
    ids = sorted(set(first) & set(second))
    n = len(ids)
    if n == 0:
        return 0, 0.0, 0.0
    observed = sum(first[i] == second[i] for i in ids) / n
    a, b = Counter(first[i] for i in ids), Counter(second[i] for i in ids)
    expected = sum(a[k] * b[k] for k in sorted(set(a) | set(b))) / (n * n)
    kappa = 1.0 if expected == 1 else (observed - expected) / (1 - expected)
    return n, observed, kappa


def blind_key(intent_id: str) -> str:
    """Order of the blind copy: a hash of the id, so no label, source or collection order shows."""
    return hashlib.sha256(f"pass2:{intent_id}".encode()).hexdigest()


def summary(rows: list[dict[str, object]]) -> str:
    extra = _extra_split(rows)
    if extra is not None:
        labels = Counter(str(r["label"]) for r in rows)
        out = [f"| pattern | {extra} |", "|---|---:|"]
        out += [f"| `{p}` | {labels[p]} |" for p in PATTERNS]
        return "\n".join([*out, f"| **all** | {len(rows)} |"])
    cells = Counter((str(r["label"]), str(r["split"])) for r in rows)
    lines = ["| pattern | dev | eval | total |", "|---|---:|---:|---:|"]
    for pattern in PATTERNS:
        dev, ev = cells[(pattern, "dev")], cells[(pattern, "eval")]
        lines.append(f"| `{pattern}` | {dev} | {ev} | {dev + ev} |")
    dev = sum(v for (_, s), v in cells.items() if s == "dev")
    lines.append(f"| **all** | {dev} | {len(rows) - dev} | {len(rows)} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", nargs="?", type=Path, default=HERE / "intents.jsonl")
    parser.add_argument(
        "--agreement",
        nargs="?",
        const="",
        default=None,
        metavar="PASS_TSV",
        help="compare agreement/pass1.tsv with PASS_TSV (default: agreement/pass2.tsv)",
    )
    parser.add_argument(
        "--blind",
        action="store_true",
        help="print only id and intent, in a fixed shuffled order, for an independent pass",
    )
    args = parser.parse_args(argv)
    if not args.path.is_file():
        print(f"{args.path}: no such file", file=sys.stderr)
        return 1
    rows, problems = load(args.path)
    problems.extend(check_rows(rows))
    if problems:
        for problem in problems:
            print(f"{args.path}: {problem}", file=sys.stderr)
        return 1
    good = [r for r in rows if isinstance(r, dict)]
    if args.blind:
        for row in sorted(good, key=lambda r: blind_key(str(r["id"]))):
            print(json.dumps({"id": row["id"], "intent": row["intent"]}, ensure_ascii=False))
        return 0
    print(summary(good))
    if args.agreement is not None:
        folder = args.path.parent / "agreement"
        other = Path(args.agreement) if args.agreement else folder / "pass2.tsv"
        n, share, kappa = agreement(read_pass(folder / "pass1.tsv"), read_pass(other))
        print(
            f"\nagreement of pass 1 and {other.name} on {n} intents: {share:.1%}, kappa {kappa:.3f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
