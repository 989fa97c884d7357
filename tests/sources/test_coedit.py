"""Co-edit: below the best file, the files git history changed together with it move up."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from codelibrarian.api import Librarian
from codelibrarian.query.locate import SIGNALS, Located, LocatedFile
from codelibrarian.sources.ranking import COEDIT_BELOW_BUDGET, coedit_partners, coedit_rerank
from codelibrarian.tokens import get_tokenizer
from tests.helpers import commit_all, make_repo, write_files

AS_OF = 1_800_000_000


def _file(path: str, score: int, *, code: bool = True) -> LocatedFile:
    return LocatedFile(path, score, (("text", score),), (), False, code)


def _ranking(*files: LocatedFile) -> Located:
    return Located(tuple(files), (), {}, ())


def test_a_file_edited_with_the_lead_moves_up_and_the_lead_keeps_its_place() -> None:
    ranking = _ranking(
        _file("fmt/text.py", 800),
        _file("fmt/util.py", 400),
        _file("fmt/colors.py", 380),
        _file("fmt/json.py", 350),
    )
    partners = coedit_partners(
        [
            ("fmt/text.py", "fmt/json.py", 6),
            ("fmt/json.py", "fmt/text.py", 6),
            ("fmt/text.py", "fmt/colors.py", 1),
            ("fmt/colors.py", "fmt/text.py", 1),
        ]
    )
    out = coedit_rerank(ranking, partners, leads=1, permille=100, order_only=True, keep=1)
    assert [f.path for f in out.files] == [
        "fmt/text.py",
        "fmt/json.py",
        "fmt/util.py",
        "fmt/colors.py",
    ]
    # each place keeps its score: the moved file takes a place, not a larger share
    assert [f.score for f in out.files] == [800, 400, 380, 350]
    assert out.files[1].signal("coedit") == 1000
    assert out.files[3].signal("coedit") == 1000 * 1 // 6
    assert out.stages[-1].name == "coedit"
    assert out.stages[-1].summary.startswith(
        "2 ranked code files below place 1 changed in the same commits as the best 1; 1 moved up"
    )


def test_without_shared_history_or_weight_the_ranking_is_unchanged() -> None:
    ranking = _ranking(_file("a.py", 900), _file("b.py", 500), _file("c.py", 400))
    assert coedit_rerank(ranking, {}, leads=1, permille=100, keep=1) is ranking
    partners = coedit_partners([("a.py", "c.py", 3), ("c.py", "a.py", 3)])
    assert coedit_rerank(ranking, partners, leads=1, permille=0, keep=1) is ranking
    alone = _ranking(_file("a.py", 900))
    assert coedit_rerank(alone, partners, leads=1, permille=100, keep=1) is alone


def test_files_that_are_not_code_are_not_moved() -> None:
    ranking = _ranking(_file("a.py", 900), _file("b.py", 500), _file("NOTES.md", 400, code=False))
    partners = coedit_partners([("a.py", "NOTES.md", 9), ("NOTES.md", "a.py", 9)])
    assert coedit_rerank(ranking, partners, leads=1, permille=500, keep=1) is ranking


def test_the_first_places_are_kept_and_only_the_files_below_them_move() -> None:
    """Near the top the task's own words decide: a file the lead's history pulls
    along can pass the files below the kept places, never the ones in them."""
    ranking = _ranking(
        _file("dir.rs", 676),
        _file("types.rs", 674),
        _file("app.rs", 502),
        _file("args.rs", 451),
        _file("walk.rs", 440),
    )
    partners = coedit_partners([("dir.rs", "walk.rs", 9), ("walk.rs", "dir.rs", 9)])
    kept = coedit_rerank(ranking, partners, leads=1, permille=100, keep=3)
    assert [f.path for f in kept.files] == ["dir.rs", "types.rs", "app.rs", "walk.rs", "args.rs"]
    assert [f.score for f in kept.files] == [676, 674, 502, 451, 440]
    moved = coedit_rerank(ranking, partners, leads=1, permille=300, keep=1)
    assert [f.path for f in moved.files][:2] == ["dir.rs", "walk.rs"]


def test_the_signal_is_known_to_the_ablation_switch() -> None:
    assert "coedit" in SIGNALS


paths = st.lists(
    st.sampled_from([f"m{i}.py" for i in range(10)]), min_size=1, max_size=10, unique=True
)


@given(
    paths,
    st.lists(st.integers(min_value=1, max_value=1000), min_size=10, max_size=10),
    st.lists(st.tuples(st.integers(0, 9), st.integers(0, 9), st.integers(1, 20)), max_size=30),
    st.tuples(
        st.integers(min_value=0, max_value=1000),
        st.booleans(),
        st.integers(min_value=1, max_value=4),
    ),
)
def test_rerank_is_a_deterministic_permutation_that_keeps_the_first_places(
    names: list[str],
    scores: list[int],
    pairs: list[tuple[int, int, int]],
    knobs: tuple[int, bool, int],
) -> None:
    permille, order_only, keep = knobs
    files = sorted(
        (_file(p, s) for p, s in zip(names, scores, strict=False)), key=lambda f: (-f.score, f.path)
    )
    ranking = _ranking(*files)
    # the index holds one weight per pair
    edges = list({(f"m{a}.py", f"m{b}.py"): w for a, b, w in pairs}.items())
    edges_w = [(a, b, w) for (a, b), w in edges]
    partners = coedit_partners(edges_w)
    out = coedit_rerank(
        ranking, partners, leads=1, permille=permille, order_only=order_only, keep=keep
    )
    again = coedit_rerank(
        ranking,
        coedit_partners(list(reversed(edges_w))),
        leads=1,
        permille=permille,
        order_only=order_only,
        keep=keep,
    )
    assert out == again
    assert sorted(f.path for f in out.files) == sorted(names)
    assert out.files[:keep] == ranking.files[:keep]
    if order_only:
        assert [f.score for f in out.files] == [f.score for f in ranking.files]
    assert all(0 < f.score <= 1000 for f in out.files)
    assert all(0 <= f.signal("coedit") <= 1000 for f in out.files)


def _module(words: str, n: int = 12) -> str:
    return "".join(
        f"def step_{j}(value):\n    # {words}\n    return value + {j}\n\n\n" for j in range(n)
    )


def test_compose_explains_the_signal_and_the_ablation_switch_turns_it_off(
    tmp_path: Path,
) -> None:
    """A task names a text formatter's words; its JSON sibling changed with it in
    every format change of the history. The explanation's locate stages say how
    many ranked files moved for that reason; ``signals_off={"coedit"}`` leaves
    the stage out; a task with a diff (whose own co-change signal is older) and a
    pack of 4,000 tokens or more have none."""
    files = {
        "fmt/text_format.py": _module("timestamp layout for text records"),
        "fmt/json_format.py": _module("encode records as json objects"),
        **{f"fmt/other{i}.py": _module(f"layout helper {i}") for i in range(6)},
    }
    repo = make_repo(tmp_path / "r", files)
    for n in range(4):
        write_files(
            repo,
            {
                path: files[path] + f"\nVERSION = {n}\n"
                for path in ("fmt/text_format.py", "fmt/json_format.py")
            },
        )
        commit_all(repo, f"format change {n}", date=f"2026-01-0{n + 2}T00:00:00+00:00")
    task = "allow configuration of the timestamp layout for text records"
    diff = (
        "diff --git a/fmt/text_format.py b/fmt/text_format.py\n"
        "--- a/fmt/text_format.py\n+++ b/fmt/text_format.py\n"
        "@@ -1,3 +1,3 @@\n def step_0(value):\n-    # timestamp layout for text records\n"
        "+    # the timestamp layout for text records\n     return value + 0\n"
    )

    def stages(ablate: str, diff_text: str | None = None, budget: int = 2000) -> dict[str, str]:
        with Librarian(repo) as lib:
            lib.index()
            result = lib.compose(
                task,
                budget=budget,
                diff_text=diff_text,
                as_of=AS_OF,
                record=False,
                signals_off={ablate} - {""},
            )
        assert get_tokenizer("gpt-4o").count(result.text) <= budget
        return dict(result.locate)

    on = stages("")
    assert "changed in the same commits as the best 1;" in on["coedit"]
    assert "coedit" not in stages("coedit")
    assert "coedit" not in stages("", diff)
    assert "coedit" not in stages("", budget=COEDIT_BELOW_BUDGET)
