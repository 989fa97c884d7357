"""Span layouts stored with the index (``index/layouts.py``): the same as the ones built,
never used for content they were not built from, and a killed writer leaves an index
that answers and that the next run completes."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codelibrarian.api import Librarian
from codelibrarian.index import layouts
from codelibrarian.index.indexer import index_workspace, update_paths
from codelibrarian.index.records import Chunk, ChunkHit
from codelibrarian.index.store import index_path, open_store
from codelibrarian.query import locate
from codelibrarian.query.locate import LocatedFile, LocateRequest, rank_spans
from tests.helpers import commit_all, make_repo, sigkill_index_midway, write_files


class _Rows:
    """A file's chunk and symbol rows, and (once written) its stored layout."""

    def __init__(self, chunks: list[Chunk], lines: dict[str, int]) -> None:
        self.chunks = chunks
        self.lines = lines
        self.blob: bytes | None = None

    def chunks_for(self, path: str) -> list[Chunk]:
        return list(self.chunks)

    def symbol_lines(self, path: str) -> dict[str, int]:
        return dict(self.lines)

    def stored_layout(self, path: str) -> bytes | None:
        return self.blob


def _plain(layout: Any) -> tuple[Any, dict[str, int]]:
    return layout.parts, dict(layout.words.items())


SYMBOLS = (None, "Client", "Client.retry", "Pool.Client.run", "parse_json", "Timeout.error")
KINDS = ("function", "method", "class", "module", "struct", "constant")
# words with digits, underscores, case-folding and non-ASCII letters, and line breaks
TEXT = st.text(alphabet="aB_9 xyZ(\n.İK\u212aé", max_size=80) | st.text(max_size=40)


@st.composite
def _files(draw: st.DrawFn) -> tuple[list[Chunk], dict[str, int]]:
    chunks = []
    for i in range(draw(st.integers(0, 40))):
        start = draw(st.integers(1, 300))
        chunks.append(
            Chunk(
                i + 1,
                "a.py",
                start,
                start + draw(st.integers(0, 60)),
                draw(st.sampled_from(SYMBOLS)),
                draw(st.sampled_from(KINDS)),
                draw(TEXT),
                draw(st.integers(1, 900)),
                "h",
            )
        )
    lines = draw(
        st.dictionaries(st.sampled_from(("Client", "Pool", "Timeout")), st.integers(1, 300))
    )
    return chunks, lines


@settings(max_examples=200, deadline=None)
@given(
    _files(),
    st.lists(st.sampled_from(("client", "retry", "9", "b_9", "x", "é", "\n", "")), max_size=5),
)
def test_a_stored_layout_is_the_built_one(
    file: tuple[list[Chunk], dict[str, int]], words: list[str]
) -> None:
    chunks, lines = file
    store: Any = _Rows(chunks, lines)
    built = locate._layout(store, "a.py", None)
    store.blob = locate.layout_record(store, "a.py")
    stored = locate._layout(store, "a.py", None)
    assert isinstance(stored.words, locate._WordTable)  # read from the record, not rebuilt
    assert _plain(stored) == _plain(built)
    for word in [*words, *built.words]:
        assert stored.words.get(word, 0) == built.words.get(word, 0)
    # and the spans ranked from either are the same, for any task over these words
    request = LocateRequest(
        task="t", keywords=tuple(w for w in words if w), diff_words=("Client", "x")
    )
    hits = tuple(
        ChunkHit(
            c.chunk_id, c.path, c.start_line, c.end_line, c.symbol, c.kind, 100 * c.chunk_id, 5
        )
        for c in chunks[::3]
    )
    target = LocatedFile("a.py", 700, (), hits, False, True)
    fresh: Any = _Rows(chunks, lines)
    assert rank_spans(store, request, target) == rank_spans(fresh, request, target)


def test_an_unreadable_or_other_format_record_is_built_instead() -> None:
    chunk = Chunk(1, "a.py", 1, 3, "run", "function", "def run(): retry()", 5, "h")
    store: Any = _Rows([chunk], {})
    built = _plain(locate._layout(store, "a.py", None))
    for blob in (b"not zlib", layouts.encode("a layout of another shape"), b""):
        store.blob = blob
        assert _plain(locate._layout(store, "a.py", None)) == built
    assert layouts.decode(layouts.encode((1, 2))) == (1, 2)
    store.blob = layouts.encode(((), "", ()))
    assert layouts.decode(store.blob) == ((), "", ())


def _module(i: int, extra: str = "") -> str:
    funcs = "".join(
        f"    def step_{j}(self, retry_{j}: int) -> int:\n        return retry_{j} + {i}\n\n"
        for j in range(12)
    )
    return (
        f"class Service{i}:\n    size = {i}\n\n{funcs}{extra}\ndef helper_{i}(x):\n    return x\n"
    )


def _stored_and_built(store: Any, path: str) -> tuple[Any, Any]:
    blob = store.stored_layout(path)
    stored = None if blob is None else _plain(locate._layout(store, path, None))
    return stored, _plain(locate._layout(store, path, store.chunks_for(path)))


def test_a_changed_file_never_uses_its_old_layout(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", {f"pkg/m{i}.py": _module(i) for i in range(6)})
    index_workspace(repo)
    with open_store(repo, readonly=True) as store:
        assert store.paths_without_layout() == []
        old_stored, old_built = _stored_and_built(store, "pkg/m2.py")
        assert old_stored == old_built
    # an edit re-indexed file by file (what --watch does): no layout stage runs, and the
    # old row went with the old file row
    write_files(repo, {"pkg/m2.py": _module(2, "\n    def refund(self):\n        return 0\n")})
    update_paths(repo, ["pkg/m2.py"])
    with open_store(repo, readonly=True) as store:
        assert store.stored_layout("pkg/m2.py") is None
        assert store.paths_without_layout() == ["pkg/m2.py"]
        layout = locate._layout(store, "pkg/m2.py", None)
        assert any(p.chunk.symbol == "Service2.refund" for p in layout.parts)
        assert _plain(layout) != old_built
    # a compose's answer-first run does not write them either; a plain run does
    with Librarian(repo) as lib:
        lib.compose("refund a service", budget=1500, use_cache=False, record=False)
    commit_all(repo, "refunds")
    write_files(repo, {"pkg/m3.py": _module(3, "\n    def audit(self):\n        return 1\n")})
    index_workspace(repo, choose=lambda paths: paths)
    with open_store(repo, readonly=True) as store:
        assert "pkg/m3.py" in store.paths_without_layout()
    index_workspace(repo)
    with open_store(repo, readonly=True) as store:
        assert store.paths_without_layout() == []
        for path in store.paths():
            stored, built = _stored_and_built(store, path)
            assert stored == built
        assert any(
            p.chunk.symbol == "Service3.audit"
            for p in locate._layout(store, "pkg/m3.py", None).parts
        )
    # a deleted file's row goes with it
    (repo / "pkg/m4.py").unlink()
    index_workspace(repo)
    db = sqlite3.connect(index_path(repo))
    try:
        orphans = db.execute(
            "SELECT COUNT(*) FROM layouts l WHERE NOT EXISTS "
            "(SELECT 1 FROM files f WHERE f.id = l.file_id)"
        ).fetchone()[0]
        assert orphans == 0
        assert db.execute("SELECT COUNT(*) FROM layouts").fetchone()[0] == 5
    finally:
        db.close()


def test_an_index_older_than_the_table_read_without_migrating(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", {"a.py": _module(1)})
    index_workspace(repo)
    db = sqlite3.connect(index_path(repo))
    db.execute("DROP TABLE layouts")
    db.execute("DELETE FROM migrations WHERE version = 7")
    db.commit()
    db.close()
    with open_store(repo, readonly=True) as store:
        assert store.stored_layout("a.py") is None
        assert store.stored_layout("a.py") is None  # asked once, then remembered
        assert locate._layout(store, "a.py", None).parts
    index_workspace(repo)  # migrated, and the layouts written
    with open_store(repo, readonly=True) as store:
        assert store.stored_layout("a.py") is not None


N_FILES = 400


@pytest.mark.slow
def test_a_killed_layout_stage_leaves_a_usable_index(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", {f"pkg/m{i:03d}.py": _module(i) for i in range(N_FILES)})
    stored = sigkill_index_midway(repo, 1, count="SELECT COUNT(*) FROM layouts")
    assert stored > 0
    with open_store(repo, readonly=True) as store:
        missing = store.paths_without_layout()
        assert 0 < len(missing) < N_FILES  # killed between two committed batches
        for path in store.paths():
            got, built = _stored_and_built(store, path)
            assert got in (None, built)
    with Librarian(repo) as lib:  # answers from the killed run's index
        pack = lib.compose("retry a service step", budget=1500, use_cache=False, record=False)
        assert "Service" in pack.text
    index_workspace(repo)  # the next plain run writes the rest
    with open_store(repo, readonly=True) as store:
        assert store.paths_without_layout() == []
        for path in store.paths()[::37]:
            got, built = _stored_and_built(store, path)
            assert got == built
