"""The local lane's windows show the code around a change, not the lines its diff prints."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from codelibrarian.api import Librarian
from codelibrarian.composer.excerpt import ELISION
from codelibrarian.composer.types import Candidate
from codelibrarian.index.store import open_store
from codelibrarian.sources.local import LocalSource, diff_shown_lines
from codelibrarian.trigger import Trigger
from codelibrarian.workspace.git import parse_unified_diff
from tests.helpers import make_repo, write_files
from tests.sources.conftest import MakeCtx

AS_OF = 1_800_000_000


def _module(changed: int | None = None) -> str:
    """Forty functions of four lines; ``changed`` returns a different value."""
    out = []
    for k in range(40):
        value = f"{k} * 1000" if k == changed else f"{k}"
        out.append(
            f"def compute_value_{k}(argument):\n"
            f"    intermediate_{k} = argument + {k}\n"
            f"    return intermediate_{k} + {value}\n\n"
        )
    return "".join(out)


def _shown_numbers(cand: Candidate) -> set[int]:
    """The file lines a window shows (all of its range when it is not an excerpt)."""
    if cand.excerpt:
        return {n for n, _ in cand.excerpt}
    assert cand.lines is not None
    return set(range(cand.lines[0], cand.lines[1] + 1))


def _text_diff(path: str, rows: list[str], i: int, new: str) -> str:
    """A diff given as text that replaces ``rows[i]`` with ``new``, three context lines
    either side (the tree is left as it was: the diff is not applied)."""
    return (
        f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n"
        f"@@ -{i - 2},7 +{i - 2},7 @@\n"
        + "".join(f" {r}\n" for r in rows[i - 3 : i])
        + f"-{rows[i]}\n+{new}\n"
        + "".join(f" {r}\n" for r in rows[i + 1 : i + 4])
    )


def _indexed_windows(root: Path, make_ctx: MakeCtx, task: str, diff_text: str) -> list[Candidate]:
    """The ``recent_edit`` windows for a diff given as text, with the repository indexed."""
    with Librarian(root) as lib:
        lib.index()
    store = open_store(root, readonly=True)
    try:
        ctx = replace(
            make_ctx(root),
            trigger=Trigger.create(task, as_of=AS_OF, diff_text=diff_text),
            changes=parse_unified_diff(diff_text),
            store=store,
        )
        return [c for c in LocalSource().gather(ctx) if c.kind == "recent_edit"]
    finally:
        store.close()


def test_windows_leave_out_the_lines_the_applied_diff_prints(
    tmp_path: Path, make_ctx: MakeCtx
) -> None:
    root = make_repo(tmp_path / "r", {"pkg/values.py": _module()})
    write_files(root, {"pkg/values.py": _module(changed=20)})
    ctx = make_ctx(root)
    (diff,) = ctx.changes
    printed = diff_shown_lines(diff.hunks, new_side=True)
    (hunk,) = diff.hunks
    assert printed == set(range(hunk.new_start, hunk.new_start + hunk.new_lines))
    windows = [c for c in LocalSource().gather(ctx) if c.kind == "recent_edit"]
    assert windows
    shown = set().union(*(_shown_numbers(c) for c in windows))
    assert not shown & printed  # the diff is pinned: its lines are not repeated
    rows = (root / "pkg/values.py").read_text().splitlines()
    # the code just outside the hunk's context is there, verbatim, with a marker for the gap
    assert hunk.new_start - 1 in shown and hunk.new_start + hunk.new_lines in shown
    for cand in windows:
        assert all(rows[n - 1] == text for n, text in cand.excerpt)
        assert ELISION in cand.text()
        assert "return intermediate_20 + 20 * 1000" not in cand.text()


def test_a_text_diff_not_applied_leaves_out_its_old_side(tmp_path: Path, make_ctx: MakeCtx) -> None:
    """A diff given as text against an unchanged tree prints the old side's context and
    removed lines; the windows around it show neither."""
    root = make_repo(tmp_path / "r", {"pkg/values.py": _module()})
    old_rows, new_rows = _module().splitlines(), _module(changed=20).splitlines()
    at = next(i for i, (a, b) in enumerate(zip(old_rows, new_rows, strict=True)) if a != b)
    diff_text = _text_diff("pkg/values.py", old_rows, at, new_rows[at])
    changes = parse_unified_diff(diff_text)
    printed = diff_shown_lines(changes[0].hunks, new_side=False)
    assert printed == set(range(at - 2, at + 5))
    ctx = replace(
        make_ctx(root),
        trigger=Trigger.create("scale value twenty", as_of=AS_OF, diff_text=diff_text),
        changes=changes,
    )
    windows = [c for c in LocalSource().gather(ctx) if c.kind == "recent_edit"]
    assert windows
    shown = set().union(*(_shown_numbers(c) for c in windows))
    assert not shown & printed
    assert {at - 3, at + 5} <= shown  # the lines just outside the hunk, on the old side
    assert all(old_rows[n - 1] == t for c in windows for n, t in c.excerpt)


def test_windows_are_framed_by_the_enclosing_definition(tmp_path: Path, make_ctx: MakeCtx) -> None:
    """A hunk deep in a long method: its window starts below the signature, so the
    class's and the method's first lines come along as the window's frame."""
    body = "".join(f"        step_{k} = stage_{k}(payload)\n" for k in range(60))
    source = (
        "class Pipeline:\n"
        "    def run_all_stages(self, payload):\n" + body + "        return payload\n"
    )
    root = make_repo(tmp_path / "r", {"pkg/pipeline.py": source})
    rows = source.splitlines()
    at = 2 + 40  # step_40, 0-based
    assert rows[at] == "        step_40 = stage_40(payload)"
    diff_text = _text_diff(
        "pkg/pipeline.py", rows, at, "        step_40 = stage_40(payload, strict=True)"
    )
    windows = _indexed_windows(root, make_ctx, "pass strict to stage forty", diff_text)
    (window,) = windows
    assert window.excerpt[:2] == (
        (1, "class Pipeline:"),
        (2, "    def run_all_stages(self, payload):"),
    )
    assert window.excerpt[2][0] == at - 2 - 12  # the window (hunk start - 12), after a marker
    assert window.text().startswith("class Pipeline:\n    def run_all_stages(self, payload):\n⋮\n")


def test_windows_keep_to_the_definition_being_changed(tmp_path: Path, make_ctx: MakeCtx) -> None:
    """With the index, a window shows the rest of the function its hunk sits in, not the
    neighbouring function that twelve lines of context would reach."""
    first = "def first_stage(payload):\n" + "".join(
        f"    value_{k} = convert_{k}(payload)\n" for k in range(20)
    )
    second = "\n\ndef second_stage(payload):\n" + "".join(
        f"    other_{k} = transform_{k}(payload)\n" for k in range(20)
    )
    source = first + "    return payload\n" + second + "    return payload\n"
    root = make_repo(tmp_path / "r", {"pkg/stages.py": source})
    rows = source.splitlines()
    at = 17  # value_16, 0-based: twelve lines past the hunk's context reach the second def
    assert rows[at] == "    value_16 = convert_16(payload)"
    diff_text = _text_diff(
        "pkg/stages.py", rows, at, "    value_16 = convert_16(payload, strict=True)"
    )
    (window,) = _indexed_windows(root, make_ctx, "strict sixteen", diff_text)
    text = window.text()
    assert "def first_stage(payload):\n" in text and "    value_5 = convert_5(payload)\n" in text
    assert "second_stage" not in text and "other_0" not in text
