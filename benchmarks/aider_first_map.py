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

import json
import os
import re
import subprocess
import sys
import time

START = time.perf_counter()

from aider.repomap import RepoMap  # noqa: E402 - the import is part of what is timed
from bpe_openai import get_encoding  # noqa: E402

_ENC = get_encoding("o200k_base")


class _Model:
    """What RepoMap asks of a model: token counts (exact o200k here)."""

    def token_count(self, text: object) -> int:
        return len(_ENC.encode_ordinary(text if isinstance(text, str) else json.dumps(text)))


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


def main() -> None:
    root, task, budget = os.path.abspath(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    listed = subprocess.run(
        ["git", "-C", root, "ls-files", "-z"], capture_output=True, check=True
    ).stdout
    rels = [p for p in listed.decode().split("\0") if p]
    words = {w for w in re.split(r"\W+", task) if w}
    mentioned = {r for r in rels if os.path.basename(r) in task.split()}
    repo_map = RepoMap(
        map_tokens=budget,
        root=root,
        main_model=_Model(),
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
                "tokens": _Model().token_count(out),
                "seconds_inside": round(time.perf_counter() - START, 3),
            }
        )
    )


if __name__ == "__main__":
    main()
