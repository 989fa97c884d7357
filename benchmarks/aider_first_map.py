"""Aider's first repository map of a fresh checkout, as one process: the baseline of
``bench_first_pack.py``. Runs with the Python of a venv that has ``aider-chat`` and
``bpe-openai`` installed (neither is a dependency of this project):

    VENV/bin/python benchmarks/aider_first_map.py ROOT "TASK" BUDGET

It lists the repository's tracked files, builds ``aider.repomap.RepoMap`` with a
model stub that counts o200k tokens (no LLM, no network) and a map budget of
BUDGET tokens, and asks for the map of all files with the task's identifiers
and file names as mentions, the way Aider's chat loop does before the first
message. On a fresh checkout Aider has no tag cache, so this parses every file:
Aider's own cold start. Prints one JSON line: map tokens, seconds inside.
"""

from __future__ import annotations

import time

START = time.perf_counter()

import argparse  # noqa: E402 - everything after START is timed, imports included
import json  # noqa: E402
import os  # noqa: E402
import re  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
from typing import Any  # noqa: E402


class _Model:
    """What RepoMap asks of a model: token counts (exact o200k here)."""

    def __init__(self) -> None:
        from bpe_openai import get_encoding

        self._enc = get_encoding("o200k_base")

    def token_count(self, text: object) -> int:
        return len(self._enc.encode_ordinary(text if isinstance(text, str) else json.dumps(text)))


class _IO:
    """What RepoMap asks of Aider's terminal: file reads, and silence."""

    def read_text(self, fname: str, silent: bool = False) -> str | None:
        try:
            with open(fname, encoding="utf-8") as fh:
                return fh.read()
        except (OSError, UnicodeError):
            return None

    def tool_output(self, *_args: object, **_kw: object) -> None:
        return None

    tool_warning = tool_error = tool_output


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument("root", help="a git checkout")
    ap.add_argument("task", help="the task, as an agent would type it")
    ap.add_argument("budget", type=int, help="the map's token budget")
    args = ap.parse_args(argv)
    # the import is part of what is timed (Aider pays it before its first map)
    from aider.repomap import RepoMap

    root, task = os.path.abspath(args.root), args.task
    listed = subprocess.run(
        ["git", "-C", root, "ls-files", "-z"], capture_output=True, check=True
    ).stdout
    rels = [p for p in listed.decode().split("\0") if p]
    words = {w for w in re.split(r"\W+", task) if w}
    mentioned = {r for r in rels if os.path.basename(r) in task.split()}
    model = _Model()
    repo_map: Any = RepoMap(
        map_tokens=args.budget,
        root=root,
        main_model=model,
        io=_IO(),
        verbose=False,
        max_context_window=None,
    )
    text = repo_map.get_repo_map(
        [],
        [os.path.join(root, r) for r in rels],
        mentioned_fnames=mentioned,
        mentioned_idents=words,
    )
    out = text or ""
    print(
        json.dumps(
            {
                "files": len(rels),
                "tokens": model.token_count(out),
                "seconds_inside": round(time.perf_counter() - START, 3),
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
