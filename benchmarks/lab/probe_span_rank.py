"""Probe: which features of a definition separate the edited one from its siblings?

``query/locate.py``'s :func:`rank_spans` orders the spans of a ranked file. On the
development splits of ``benchmarks/ctxbench.md`` the edited definition of a shown
gold file often ranks ninth or lower. This probe records, for every gold file that
``rank_spans`` is asked about during a compose, each span's present signals and a
set of candidate features, and whether the span's own lines hold an edit-locus line
(the harness's kept locus: lines of ten characters or more found in no other file).

The rows (one JSON object per span: its signals, place in the file's layout, size and
text) were collected by composing every task once with ``rank_spans`` wrapped, by the
``collect`` command this probe had until ``c5cfb3a`` (``git show
c5cfb3a:benchmarks/probe_span_rank.py``). That command patched the library's
``rank_spans`` and read ``query/locate.py``'s private span layout, so it was dropped
when the benchmarks became code; the conclusion it served is recorded in
``benchmarks/ctxbench.md`` ("Span ranking fitted on two development splits"; no fit
shipped). ``fit`` still reads such rows: it derives the candidate features (identifier
parts of the code, prose, strings, in-file IDF, name variants, in-file references,
size, position, nesting, test-ness), reports per split the best edited span's place
(@1 / @3 / @5 / @8, reciprocal rank) and the **coverage** (the share of a file's edited
spans among its best spans that fit 300 / 600 / 1,200 / 3,000 tokens), fits integer
weights by coordinate search over all seven development repositories (``--objective
rank`` or ``cover``), and checks them leave-one-repository-out::

    .venv/bin/python benchmarks/lab/probe_span_rank.py fit SCRATCH/spans-*.jsonl \\
        --modes intent --objective cover --keys bm25,names,body,head [--singles]

Integer features only: the fit orders by integer sums and breaks ties by line, as
``rank_spans`` does.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from harness.ctxbench import TUNING

DEV2 = ("flask", "ripgrep", "sphinx")


# ---------------------------------------------------------------------------- fit


def load(paths: Iterable[Path]) -> dict[tuple[str, str, str, str], list[dict[str, Any]]]:
    groups: dict[tuple[str, str, str, str], list[dict[str, Any]]] = defaultdict(list)
    for p in paths:
        for line in p.open(encoding="utf-8"):
            r = json.loads(line)
            groups[(r["repo"], r["task"], r["mode"], r["path"])].append(r)
    # a file whose every span holds an edit, or none, says nothing about the order
    return {
        k: v
        for k, v in groups.items()
        if any(r["edit"] for r in v) and not all(r["edit"] for r in v)
    }


def best_rank(rows: Sequence[dict[str, Any]], scores: Sequence[int]) -> int:
    order = sorted(range(len(rows)), key=lambda i: (-scores[i], rows[i]["start"], rows[i]["id"]))
    return min(pos for pos, i in enumerate(order) if rows[i]["edit"])


_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_STRING = re.compile(r"""(?:"[^"\n]*"|'[^'\n]*'|`[^`\n]*`)""")


#: whole lines of comments, block strings and block comments, then one-line strings
_BLOCK_PROSE = re.compile(r'''"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'|/\*[\s\S]*?\*/''')
_LINE_PROSE = re.compile(r"^[ \t]*(?:#|//|\*|--)[^\n]*$", re.MULTILINE)


def code_words(text: str) -> set[str]:
    """The lower-cased identifiers of ``text``'s code and their name parts: comment
    lines, docstrings, block comments and one-line string literals left out."""
    return _parts_of(_STRING.sub(" ", _LINE_PROSE.sub("", _BLOCK_PROSE.sub("\n", text))))


def _stems(word: str) -> set[str]:
    from codelibrarian.query.locate import variants

    return {word, *variants(word)}


def _parts_of(text: str) -> set[str]:
    """The lower-cased identifiers of ``text`` and their name parts."""
    from codelibrarian.index.tokenize import name_parts

    out: set[str] = set()
    for ident in set(_IDENT.findall(text)):
        out |= name_parts(ident)
    return out


def derive(rows: list[dict[str, Any]]) -> None:
    """Candidate features of one gold file's spans (all of its spans are ``rows``)."""
    from codelibrarian.index.tokenize import name_parts
    from codelibrarian.sources.excerpts import prose_lines

    terms = set(rows[0]["terms"])
    stems = {v for t in terms for v in _stems(t)}
    n = len(rows)
    words = [{w.lower() for w in _IDENT.findall(r["text"])} for r in rows]
    df: dict[str, int] = defaultdict(int)
    for ws in words:
        for t in terms & ws:
            df[t] += 1
    nt = max(1, len(terms))
    for r, ws in zip(rows, words, strict=True):
        f: dict[str, int] = {}
        lines = tuple(enumerate(r["text"].splitlines(), 1))
        prose = prose_lines(lines)
        code_text = "\n".join(t for i, t in lines if i not in prose)
        prose_text = "\n".join(t for i, t in lines if i in prose)
        f["ident"] = len(terms & code_words(r["text"])) * 1000 // nt
        f["prose"] = len(terms & _parts_of(prose_text)) * 1000 // nt
        f["strings"] = len(terms & _parts_of(" ".join(_STRING.findall(code_text)))) * 1000 // nt
        f["parts"] = len(terms & _parts_of(r["text"])) * 1000 // nt
        # a matched word weighs by how few of the file's spans have it
        hit = terms & ws
        f["idf"] = sum((n - df[t]) * 1000 // n for t in hit) // nt
        f["rare"] = sum(1 for t in hit if df[t] * 4 <= n) * 1000 // nt
        if r["symbol"]:
            np_ = name_parts(r["symbol"])
            stemmed = {v for p in np_ for v in _stems(p)}
            f["namevar"] = min(3, len(stems & stemmed)) * 1000 // 3
            last = r["symbol"].rsplit(".", 1)[-1].lower()
            f["refs"] = (
                min(
                    5,
                    sum(
                        1 for o, ws2 in zip(rows, words, strict=True) if o is not r and last in ws2
                    ),
                )
                * 200
            )
            f["test"] = 1000 if last.startswith("test") else 0
        f["small"] = 1000 if r["tokens"] <= 150 else (500 if r["tokens"] <= 400 else 0)
        f["large"] = 1000 if r["tokens"] > 400 else 0
        f["pos"] = r["k"] * 1000 // max(1, r["n"])
        f["nested"] = 1000 if r["frame"] else 0
        f["module"] = 1000 if r["kind"] == "module" else 0
        r["f"] = {**r["sig"], **f}
        r["f"].pop("head", None)
        if r["head"]:
            r["f"]["head"] = 1000


def score_of(r: dict[str, Any], w: dict[str, int]) -> int:
    f: dict[str, int] = r["f"]
    s = sum(w.get(k, 0) * v for k, v in f.items()) // 1000
    s = max(0, min(1000, s))
    return s * 600 // 1000 if r["container"] else s


def evaluate(groups: Sequence[list[dict[str, Any]]], w: dict[str, int] | None) -> dict[str, float]:
    at = {1: 0, 3: 0, 5: 0, 8: 0}
    mrr = 0.0
    for rows in groups:
        scores = [r["score"] for r in rows] if w is None else [score_of(r, w) for r in rows]
        rank = best_rank(rows, scores)
        for k in at:
            at[k] += rank < k
        mrr += 1 / (rank + 1)
    g = max(1, len(groups))
    return {"n": len(groups), **{f"@{k}": at[k] for k in at}, "mrr": round(mrr / g, 3)}


#: per-file token caps of the coverage objective (about what one file gets at 2,000 and
#: 8,000 tokens, from its first span to most of its share)
CAPS = (300, 600, 1200, 3000)


def cover(rows: Sequence[dict[str, Any]], w: dict[str, int] | None, cap: int) -> float:
    """Share of the file's edited spans among its best spans that fit ``cap`` tokens
    (taken best first, a span that does not fit skipped, as selection does)."""
    scores = [r["score"] for r in rows] if w is None else [score_of(r, w) for r in rows]
    order = sorted(range(len(rows)), key=lambda i: (-scores[i], rows[i]["start"], rows[i]["id"]))
    used = got = 0
    for i in order:
        if used + rows[i]["tokens"] <= cap:
            used += rows[i]["tokens"]
            got += rows[i]["edit"]
    return got / sum(1 for r in rows if r["edit"])


#: which objective the fit maximises: "rank" (the best edited span's place: @1, @3, @5,
#: @8 and the reciprocal rank) or "cover" (the edited spans within each of CAPS)
OBJECTIVE = ["cover"]


def objective(groups: Sequence[list[dict[str, Any]]], w: dict[str, int]) -> float:
    if OBJECTIVE[0] == "cover":
        return sum(cover(v, w, c) for v in groups for c in CAPS)
    e = evaluate(groups, w)
    return e["@1"] + e["@3"] + e["@5"] + e["@8"] + e["mrr"] * e["n"]


def coverage(groups: Sequence[list[dict[str, Any]]], w: dict[str, int] | None) -> str:
    n = max(1, len(groups))
    return " ".join(f"{c}:{sum(cover(v, w, c) for v in groups) / n:.3f}" for c in CAPS)


GRID = (0, 50, 100, 150, 200, 300, 400, 500, 700)


def fit(
    groups: Sequence[list[dict[str, Any]]],
    start: dict[str, int],
    keys: Sequence[str],
    grid: Sequence[int] = GRID,
) -> dict[str, int]:
    """Coordinate search: each weight in turn over ``grid``, until nothing improves."""
    w = dict(start)
    best = objective(groups, w)
    for _ in range(4):
        moved = False
        for k in keys:
            for v in grid:
                if v == w.get(k, 0):
                    continue
                trial = {**w, k: v}
                o = objective(groups, trial)
                if o > best + 1e-9:
                    best, w, moved = o, trial, True
        if not moved:
            break
    return w


def fit_main(args: argparse.Namespace) -> int:
    from codelibrarian.query.locate import SPAN_WEIGHTS

    OBJECTIVE[0] = args.objective
    groups_all = load(args.rows)
    for rows in groups_all.values():
        derive(rows)
    for mode in args.modes.split(","):
        groups = {k: v for k, v in groups_all.items() if k[2] == mode}
        repos = sorted({k[0] for k in groups})
        present = dict(SPAN_WEIGHTS[mode])
        print(f"## {mode}: {len(groups)} gold files with edited and unedited spans")
        # each feature alone, and added to the present weights at a few weights
        feats = sorted({f for v in groups.values() for r in v for f in r["f"]})
        print("present (as ranked)", evaluate(list(groups.values()), None))
        print("present (recomputed)", evaluate(list(groups.values()), present))
        for f in feats if args.singles else ():
            alone = evaluate(list(groups.values()), {f: 1000})
            plus = {
                v: evaluate(list(groups.values()), {**present, f: present.get(f, 0) + v})
                for v in (100, 300)
            }
            minus = evaluate(list(groups.values()), {**present, f: 0})
            print(f"  {f:9s} alone {alone}  +100 {plus[100]}  +300 {plus[300]}  off {minus}")
        keys = [k for k in args.keys.split(",") if k]
        fitted = fit(list(groups.values()), present, keys)
        print("fitted on all:", fitted)
        for split, names in (("tuning", TUNING), ("dev2", DEV2)):
            g = [v for k, v in groups.items() if k[0] in names]
            print(f"  {split}: present {evaluate(g, present)} fitted {evaluate(g, fitted)}")
            print(f"    coverage present {coverage(g, present)} fitted {coverage(g, fitted)}")
        for repo in repos:
            g = [v for k, v in groups.items() if k[0] == repo]
            print(f"  {repo}: present {evaluate(g, present)} fitted {evaluate(g, fitted)}")
        print("leave one repository out:")
        tot_p = tot_l = 0.0
        for repo in repos:
            train = [v for k, v in groups.items() if k[0] != repo]
            test = [v for k, v in groups.items() if k[0] == repo]
            w = fit(train, present, keys)
            ep, el = evaluate(test, present), evaluate(test, w)
            tot_p += objective(test, present)
            tot_l += objective(test, w)
            print(f"  {repo}: present {ep} held-out fit {el} weights {w}")
        print(f"  objective on held-out repos: present {tot_p:.1f} fitted {tot_l:.1f}")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    f = sub.add_parser("fit", help="derive features from collected rows and fit weights")
    f.add_argument("rows", nargs="+", type=Path)
    f.add_argument("--modes", default="intent,diff")
    f.add_argument("--keys", default="bm25,names,body,head")
    f.add_argument("--singles", action="store_true", help="each feature alone, added, removed")
    f.add_argument("--objective", choices=("cover", "rank"), default="cover")
    args = ap.parse_args(argv)
    return fit_main(args)


if __name__ == "__main__":
    sys.exit(main())
