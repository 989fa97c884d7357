"""The retrieved lane's per-generation memo: a span offered again by another task, at
another relevance, gives the candidates a fresh build gives."""

from __future__ import annotations

from pathlib import Path

import pytest

from codelibrarian.api import Librarian
from codelibrarian.sources import retrieved
from tests.helpers import make_repo

AS_OF = 1_800_000_000


def _module(name: str, words: str) -> str:
    funcs = "".join(
        f"def {name}_{j}(request, timeout):\n"
        f'    """{words} step {j}."""\n'
        f"    return request.send(timeout + {j})\n\n\n"
        for j in range(5)
    )
    return f"class {name.title()}Client:\n    retries = 3\n\n\n" + funcs


FILES = {
    "net/http_client.py": _module("fetch", "retry a request after a timeout"),
    "net/pool.py": _module("pool", "keep a pool of connections open"),
    "net/cookies.py": _module("cookie", "parse the expires attribute of a cookie"),
    "README.md": "# Net\n\nA small http client with a pool.\n",
}
#: each ranks the same files, in another order and with other scores
TASKS = (
    "retry a request after a timeout in the http client",
    "keep the connection pool open for the http client",
    "parse cookie expires in the http client",
)


def _pack(lib: Librarian, task: str) -> tuple[str, str]:
    r = lib.compose(task, budget=4000, as_of=AS_OF, use_cache=False, record=False)
    return r.text, r.cache_key


def test_spans_met_again_at_another_relevance_compose_as_built_afresh(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_repo(tmp_path / "net", FILES)
    Librarian(repo).index()
    fresh = []
    for task in TASKS:
        with Librarian(repo) as lib:
            fresh.append(_pack(lib, task))
    copied = []
    real = retrieved.replace

    def spy(cand, **changes):  # type: ignore[no-untyped-def]
        copied.append(changes)
        return real(cand, **changes)

    monkeypatch.setattr(retrieved, "replace", spy)
    with Librarian(repo) as lib:
        kept = [_pack(lib, task) for task in TASKS]
    assert copied, "no span was offered again at another relevance: the test lost its point"
    # the cache key covers every candidate's fields, relevance included
    assert kept == fresh
