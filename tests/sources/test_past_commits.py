"""Past commits like the task: the definitions and files they edited rank higher."""

from __future__ import annotations

from pathlib import Path

from codelibrarian.api import Librarian
from codelibrarian.query.locate import SIGNALS, Located, LocatedFile
from codelibrarian.sources.ranking import COMMITS_BELOW_BUDGET, commits_rerank
from codelibrarian.tokens import get_tokenizer
from tests.helpers import commit_all, make_repo, write_files

AS_OF = 1_800_000_000


def _module(bodies: dict[str, str]) -> str:
    return "".join(
        f"def {name}(value):\n    total = value\n    {body}\n    return total\n\n\n"
        for name, body in bodies.items()
    )


def _file(path: str, score: int, *, code: bool = True) -> LocatedFile:
    return LocatedFile(path, score, (("text", score),), (), False, code)


def test_files_several_similar_commits_edited_move_up_below_the_first_places() -> None:
    ranking = Located(
        (
            _file("a.py", 900),
            _file("b.py", 800),
            _file("c.py", 700),
            _file("d.py", 600),
            _file("e.py", 590),
            _file("notes.md", 580, code=False),
            _file("f.py", 500),
            _file("g.py", 490),
        ),
        (),
        {},
        (),
    )
    past = {
        "a.py": (2000, 5),  # the strongest sets the scale, wherever it ranks
        "f.py": (1500, 3),
        "e.py": (300, 2),
        "g.py": (1900, 1),  # one similar commit: not evidence enough
        "notes.md": (1800, 9),  # not code: never moved
    }
    out = commits_rerank(ranking, past, permille=400)
    assert [f.path for f in out.files] == [
        "a.py",
        "b.py",
        "c.py",
        "f.py",  # 500 + 400 x 750 / 1000
        "e.py",  # 590 + 400 x 150 / 1000 passes 600
        "d.py",
        "notes.md",
        "g.py",
    ]
    # the places keep their scores
    assert [f.score for f in out.files] == [900, 800, 700, 600, 590, 580, 500, 490]
    assert out.files[3].signal("commits") == 750
    assert out.files[4].signal("commits") == 150
    assert out.files[7].signal("commits") == 0
    assert out.stages[-1].name == "commits"
    assert out.stages[-1].summary.startswith(
        "2 ranked code files below place 3 were edited by past commits like the task"
    )
    assert commits_rerank(ranking, {}) is ranking
    assert commits_rerank(ranking, {"g.py": (1900, 1)}) is ranking
    assert commits_rerank(ranking, {"a.py": (5, 2)}) is ranking
    assert "commits" in SIGNALS


def _repo(tmp_path: Path) -> Path:
    """Twelve renderer modules the task's words point at, and a palette module they
    hardly name, which every past change to the colouring of code blocks edited."""
    files = {
        f"render/part{i:02d}.py": _module(
            {f"part{i}_step{j}": "# code blocks" if j == 0 else "total += 1" for j in range(6)}
        )
        for i in range(12)
    }
    # the palette's only task word sits in a long body: it ranks last by the words
    filler = "\n    ".join(f"total = total + {k} * value" for k in range(40))
    palette = {f"palette_step{j}": filler for j in range(4)}
    palette["palette_step3"] = filler + "\n    # code"
    files["render/palette.py"] = _module(palette)
    repo = make_repo(tmp_path / "r", files)
    history = [
        "Fix colouring of code blocks in dark themes",
        "Colouring of code blocks keeps the background",
        "Speed up the block loop",
        "Code block colouring for diffs",
    ]
    for n, message in enumerate(history):
        palette["palette_step0"] = filler + f"\n    total = total * {n + 2}"
        write_files(repo, {"render/palette.py": _module(palette)})
        if n == 2:  # an unrelated change elsewhere
            write_files(repo, {"render/part00.py": files["render/part00.py"] + "\n# loop\n"})
        commit_all(repo, message, date=f"2026-01-{n + 3:02d}T00:00:00+00:00")
    return repo


def test_a_vague_task_gets_the_file_similar_commits_edited(
    tmp_path: Path,
) -> None:
    """The task's words rank twelve modules above the palette; the past commits about
    the colouring of code blocks all edited the palette: at 2,000 tokens its code is
    shown, and the explanation's ``commits`` stage says why. Switched off
    (``signals_off={"commits"}``), or at 4,000 tokens and more, it is not moved."""
    repo = _repo(tmp_path)
    task = "Colouring of code blocks is off"

    def compose(ablate: str, budget: int = 2000) -> tuple[str, dict[str, str]]:
        with Librarian(repo) as lib:
            lib.index()
            result = lib.compose(
                task, budget=budget, as_of=AS_OF, record=False, signals_off={ablate} - {""}
            )
        assert get_tokenizer("gpt-4o").count(result.text) <= budget
        return result.text, dict(result.locate)

    text, stages = compose("")
    assert "edited by past commits like the task" in stages["commits"]
    assert "def palette_step0(value):" in text
    text, stages = compose("commits")
    assert "commits" not in stages
    assert "def palette_step0(value):" not in text
    assert "commits" not in compose("", budget=COMMITS_BELOW_BUDGET)[1]
