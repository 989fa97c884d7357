"""What every storage backend must do (``index/storage.py``), run on each of
``storage_backends.BACKENDS``.

Records are written through the protocol alone (``RecordWriter``, ``HistoryRecords``)
from real parses of a small repository's files, then read back through ``Storage``:
orders, generations, snapshots, content addressing by blob id, one repository per
store, the search engine's answers and its scoring contract, the derived graphs and
their claim, history rows and layouts. A second backend passes these before it is
used anywhere.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from codelibrarian.errors import NotFound
from codelibrarian.index import graphdelta, search
from codelibrarian.index.parse import _index_tokenizer, parse_source
from codelibrarian.index.records import ChunkHit, FileData, ImportRecord
from codelibrarian.index.storage import IndexStore, Storage
from codelibrarian.index.tokenize import query_terms
from tests.index.storage_backends import BACKENDS, Backend

SOURCES: dict[str, bytes] = {
    "pkg/__init__.py": b"",
    "pkg/totals.py": (
        b'"""Totals of an order."""\n'
        b"import math\n"
        b"from pkg import rounding\n\n\n"
        b"class OrderTotals:\n"
        b'    """Sums an order\'s lines."""\n\n'
        b"    def compute_total(self, lines):\n"
        b"        return rounding.round_half_even(sum(lines))\n\n"
        b"    def shipping_fee(self, weight):\n"
        b"        return math.ceil(weight * 3)\n"
    ),
    "pkg/rounding.py": (
        b"def round_half_even(value):\n"
        b'    """Round to cents."""\n'
        b"    return round(value, 2)\n\n\n"
        b"def truncate(value):\n"
        b"    return int(value)\n"
    ),
    "app/main.py": (
        b"from pkg.totals import OrderTotals\n"
        b"from pkg import rounding\n\n\n"
        b"def main():\n"
        b"    totals = OrderTotals()\n"
        b"    return rounding.truncate(totals.compute_total([1, 2]))\n"
    ),
    "README.md": b"Order totals, with rounding to cents and a shipping fee.\n",
}


def _parse(path: str, data: bytes, mtime_ns: int = 1) -> FileData:
    return parse_source(path, data, tokenizer=_index_tokenizer(), max_tokens=512, mtime_ns=mtime_ns)


def _resolve(spec: str, paths: set[str]) -> str | None:
    module, _, name = spec.partition(":")
    base = module.replace(".", "/")
    for candidate in (f"{base}/{name}.py", f"{base}.py"):
        if candidate in paths:
            return candidate
    return None


def _batch(files: dict[str, bytes]) -> list[tuple[FileData, list[ImportRecord]]]:
    known = set(SOURCES) | set(files)
    out = []
    for path, data in sorted(files.items()):
        parsed = _parse(path, data)
        imports = [
            ImportRecord(path, spec, line, _resolve(spec, known))
            for spec, line in parsed.import_specs
        ]
        out.append((parsed, imports))
    return out


def _listing(files: dict[str, bytes]) -> list[tuple[str, str, str, int, int, int]]:
    rows = []
    for path, data in sorted(files.items()):
        parsed = _parse(path, data)
        rows.append((path, parsed.language, parsed.content_hash, parsed.size, 1, parsed.lines))
    return rows


@pytest.fixture(params=BACKENDS, ids=[b.name for b in BACKENDS])
def backend(request: pytest.FixtureRequest) -> Backend:
    got: Backend = request.param
    return got


@pytest.fixture
def store(backend: Backend, tmp_path: Path) -> Iterator[IndexStore]:
    """An index of :data:`SOURCES`, written as the indexer writes it: listed, then parsed."""
    st = backend.create(tmp_path, "shop")
    try:
        st.list_files(_listing(SOURCES), new=SOURCES)
        st.write_files(_batch(SOURCES))
        yield st
    finally:
        st.close()


# ------------------------------------------------------------------ the protocol


def test_the_backend_implements_the_whole_protocol(
    store: IndexStore, backend: Backend, tmp_path: Path
) -> None:
    assert isinstance(store, IndexStore)
    reader = backend.reader(tmp_path, "shop")
    try:
        assert isinstance(reader, Storage)
        assert reader.files() == store.files()
    finally:
        reader.close()


# ------------------------------------------------------------------ records


def test_files_are_read_back_by_path_with_their_blob_ids(store: IndexStore) -> None:
    files = store.files()
    assert [f.path for f in files] == sorted(SOURCES)
    assert store.paths() == sorted(SOURCES)
    for f in files:
        # content addressing: the git blob id of the bytes, as git itself computes it
        blob = subprocess.run(
            ["git", "hash-object", "--stdin"],
            input=SOURCES[f.path],
            capture_output=True,
            check=True,
        ).stdout.decode()
        assert f.content_hash == blob.strip()
        assert f.size == len(SOURCES[f.path])
        assert store.file(f.path) == f
    assert store.file("nowhere.py") is None
    by_path = {f.path: f for f in files}
    assert by_path["pkg/totals.py"].language == "python"
    assert by_path["README.md"].parse_error is None


def test_listing_then_parsing_moves_the_stages(backend: Backend, tmp_path: Path) -> None:
    with_stages = backend.create(tmp_path, "staged")
    try:
        with_stages.list_files(_listing(SOURCES), new=SOURCES)
        assert with_stages.progress() == (len(SOURCES), 0)
        assert with_stages.pending_paths() == sorted(SOURCES)
        assert with_stages.chunks_for("pkg/totals.py") == []  # listed: nothing below it
        states = with_stages.file_states()
        assert {p: s[3] for p, s in states.items()} == dict.fromkeys(SOURCES, 0)
        half = {p: d for p, d in SOURCES.items() if p.startswith("pkg/")}
        with_stages.write_files(_batch(half))
        assert with_stages.progress() == (len(SOURCES), len(half))
        assert with_stages.pending_paths() == sorted(set(SOURCES) - set(half))
        only = with_stages.file_states(["pkg/totals.py", "gone.py"])
        assert list(only) == ["pkg/totals.py"] and only["pkg/totals.py"][3] == 2
    finally:
        with_stages.close()


def test_symbols_references_and_imports_come_in_their_stated_orders(store: IndexStore) -> None:
    symbols = store.symbols()
    keys = [(s.path, s.start_line, -s.end_line, s.name, s.kind) for s in symbols]
    assert keys == sorted(keys)
    names = {(s.path, s.name, s.kind, s.parent) for s in symbols}
    assert ("pkg/totals.py", "compute_total", "method", "OrderTotals") in names
    assert ("pkg/rounding.py", "round_half_even", "function", None) in names
    assert store.symbols(name="truncate") == [s for s in symbols if s.name == "truncate"]
    assert store.symbols(path="pkg/rounding.py") == [
        s for s in symbols if s.path == "pkg/rounding.py"
    ]
    lines = store.symbol_lines("pkg/totals.py")
    assert lines["OrderTotals"] == 6 and lines["compute_total"] == 9
    assert store.definition_paths("round_half_even", 5) == ["pkg/rounding.py"]
    assert store.definition_paths("round_half_even", 0) == []
    counts = store.name_part_counts({"round", "total", "totals"})
    assert counts == {"pkg/rounding.py": 1, "pkg/totals.py": 2}  # main's parts are {main}
    assert store.name_part_counts(set()) == {}
    refs = store.references()
    keys_r = [(r.path, r.line, r.name, r.kind) for r in refs]
    assert keys_r == sorted(keys_r)
    assert {r.path for r in store.references(name="truncate")} == {"app/main.py"}
    assert store.reference_file_counts()["round_half_even"] == 1
    imports = store.imports()
    keys_i = [(i.path, i.line, i.spec) for i in imports]
    assert keys_i == sorted(keys_i)
    assert store.import_specs() == [(i.path, i.spec, i.line, i.resolved) for i in imports]
    resolved = {(i.path, i.resolved) for i in imports if i.resolved}
    assert resolved == {
        ("pkg/totals.py", "pkg/rounding.py"),
        ("app/main.py", "pkg/totals.py"),
        ("app/main.py", "pkg/rounding.py"),
    }
    assert store.count_resolved_imports() == 3
    assert store.imports_into(["pkg/rounding.py"]) == [
        ("app/main.py", "pkg/rounding.py"),
        ("pkg/totals.py", "pkg/rounding.py"),
    ]


def test_chunks_are_read_by_line_and_by_id(store: IndexStore) -> None:
    chunks = store.chunks_for("pkg/totals.py")
    keys = [(c.start_line, c.end_line, c.chunk_id) for c in chunks]
    assert keys == sorted(keys)
    assert {c.symbol for c in chunks} >= {"OrderTotals", "OrderTotals.compute_total"}
    for c in chunks:
        assert store.chunk(c.chunk_id) == c
        assert c.path == "pkg/totals.py" and c.tokens > 0
    missing = max(c.chunk_id for p in SOURCES for c in store.chunks_for(p)) + 1000
    with pytest.raises(NotFound):
        store.chunk(missing)
    counts = store.counts()
    assert counts["files"] == len(SOURCES)
    assert counts["chunks"] == sum(len(store.chunks_for(p)) for p in SOURCES)
    assert counts["symbols"] == len(store.symbols())
    assert counts["refs"] == len(store.references())


def test_a_rewritten_file_keeps_no_old_row(store: IndexStore) -> None:
    before = {c.chunk_id for c in store.chunks_for("pkg/rounding.py")}
    new = b"def round_to_cents(value):\n    return round(value, 2)\n"
    store.list_files(_listing({"pkg/rounding.py": new}))
    assert store.symbols(path="pkg/rounding.py") == []  # listed again: old rows gone
    store.write_files(_batch({"pkg/rounding.py": new}))
    assert [s.name for s in store.symbols(path="pkg/rounding.py")] == ["round_to_cents"]
    assert store.symbols(name="round_half_even") == []
    after = {c.chunk_id for c in store.chunks_for("pkg/rounding.py")}
    assert not before & after
    assert all(h.path != "pkg/rounding.py" for h in store.search("truncate", 20))
    store.delete_files(["pkg/rounding.py", "never/there.py"])
    assert store.file("pkg/rounding.py") is None
    assert store.chunks_for("pkg/rounding.py") == []
    assert all(h.path != "pkg/rounding.py" for h in store.search("round cents", 20))
    assert [r for r in store.references() if r.path == "pkg/rounding.py"] == []


def test_skipped_files_meta_and_mtimes(store: IndexStore) -> None:
    gen = store.generation()
    store.set_skipped([("big.bin", "binary", 10, 5), ("min.js", "minified", 20, 6)])
    assert store.skipped() == [("big.bin", "binary"), ("min.js", "minified")]
    assert store.skipped_states()["min.js"] == ("minified", 20, 6)
    store.set_skipped([], gone=["big.bin"])
    assert store.skipped() == [("min.js", "minified")]
    store.set_meta({"workspace_stamp": "abc", "other": "1"})
    assert store.meta("workspace_stamp") == "abc"
    assert store.meta("never_set") is None
    store.touch_files([("pkg/totals.py", 99)])
    assert store.file_states(["pkg/totals.py"])["pkg/totals.py"][2] == 99
    assert store.generation() == gen  # none of these changed content


def test_parse_errors_are_listed(backend: Backend, tmp_path: Path) -> None:
    st = backend.create(tmp_path, "broken")
    try:
        data = b"def broken(:\n    ((((\n" * 20
        parsed = _parse("bad.py", data)
        assert parsed.parse_error is not None
        st.write_files([(parsed, [])])
        assert st.parse_errors() == [("bad.py", parsed.parse_error)]
        assert st.file("bad.py") is not None
    finally:
        st.close()


# ------------------------------------------------------------------ generations and snapshots


def test_content_writes_advance_the_generation(store: IndexStore) -> None:
    gen = store.generation()
    assert gen > 0
    store.set_import_resolutions([("app/main.py", "pkg:rounding", 2, None)])
    assert store.generation() > gen
    gen = store.generation()
    store.history.set_cochange([("app/main.py", "pkg/totals.py", 2)], "k1")
    assert store.generation() > gen
    gen = store.generation()
    store.put_layouts([("pkg/totals.py", b"layout")])
    store.combined_graph()
    assert store.generation() == gen  # derived data: no new generation


def test_a_snapshot_reads_one_generation_while_another_connection_writes(
    store: IndexStore, backend: Backend, tmp_path: Path
) -> None:
    reader = backend.reader(tmp_path, "shop")
    try:
        with reader.snapshot():
            gen = reader.generation()
            files = reader.files()
            store.write_files(_batch({"pkg/new_module.py": b"def fresh():\n    return 1\n"}))
            assert store.generation() > gen  # committed
            assert reader.generation() == gen
            assert reader.files() == files
            assert reader.symbols(name="fresh") == []
            with reader.snapshot():  # an inner snapshot joins the outer one
                assert reader.generation() == gen
        assert reader.generation() == store.generation()
        assert [s.path for s in reader.symbols(name="fresh")] == ["pkg/new_module.py"]
    finally:
        reader.close()


def test_a_store_sees_its_own_repository_only(backend: Backend, tmp_path: Path) -> None:
    one = backend.create(tmp_path, "one")
    two = backend.create(tmp_path, "two")
    try:
        one.write_files(_batch({"a.py": b"def alpha():\n    return 1\n"}))
        two.write_files(_batch({"b.py": b"def beta():\n    return 2\n"}))
        assert one.paths() == ["a.py"] and two.paths() == ["b.py"]
        assert one.search("beta", 10) == [] and two.search("alpha", 10) == []
        assert one.symbols(name="beta") == []
    finally:
        one.close()
        two.close()


# ------------------------------------------------------------------ search


def test_search_hits_are_integer_scored_and_totally_ordered(store: IndexStore) -> None:
    hits = store.search("rounding totals cents", 50)
    assert hits
    keys = [(-h.score, h.path, h.start_line, h.end_line, h.chunk_id) for h in hits]
    assert keys == sorted(keys)
    assert all(isinstance(h.score, int) and h.score >= 0 for h in hits)
    for h in hits:
        chunk = store.chunk(h.chunk_id)
        assert (chunk.path, chunk.start_line, chunk.end_line, chunk.tokens) == (
            h.path,
            h.start_line,
            h.end_line,
            h.tokens,
        )
    assert store.search("rounding totals cents", 2) == hits[:2]
    assert store.search("rounding totals cents", 0) == []
    assert store.search("", 10) == []
    assert store.search("zzyzx_nothing", 10) == []
    best = store.search("round_half_even", 5)[0]
    assert (best.path, best.symbol) == ("pkg/rounding.py", "round_half_even")
    # a name's parts find it too (the parts column)
    assert "pkg/totals.py" in {h.path for h in store.search("shipping fee", 5)}


def test_search_is_the_same_however_often_it_is_asked(
    store: IndexStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    # counted as a large index is, so the term memos are used on the repeats
    monkeypatch.setattr(search, "COMMON_ROWS", 0)
    queries = ["rounding totals", "totals rounding cents", "main truncate", "rounding"]
    first = [store.search(q, 10) for q in queries]
    for _ in range(3):
        assert [store.search(q, 10) for q in queries] == first
    assert store.common_terms("rounding totals") == sorted(store.common_terms("rounding totals"))
    store.write_files(_batch({"pkg/more.py": b"def rounding_rule():\n    return 'cents'\n"}))
    again = store.search("rounding", 10)
    assert "pkg/more.py" in {h.path for h in again}  # a new generation: read again


def test_a_query_s_score_is_the_sum_of_its_terms_scores(
    store: IndexStore, backend: Backend
) -> None:
    """The scoring contract the term memos rely on: the whole query's float for each
    chunk equals its terms' own scores added in query order (``TextIndex``)."""
    text = backend.text(store)
    assert text.generation() == store.generation()
    assert text.chunk_count() == store.counts()["chunks"]
    for query in ("rounding totals cents", "order shipping fee main", "compute_total"):
        terms = query_terms(query)
        whole = text.best_chunks(terms, 1000)
        summed = search.best_rows([text.term_scores(t) for t in terms], 1000)
        assert [(r[0], r[6]) for r in whole] == summed
        heads = text.chunk_heads([r[0] for r in whole])
        assert [(r[0], *heads[r[0]][:5], r[7]) for r in whole] == [
            (r[0], *r[1:6], r[7]) for r in whole
        ]
        for t in terms:
            ids, _ = text.term_scores(t)
            assert text.term_count(t) == len(ids)
            assert list(ids) == sorted(ids)


def test_hits_of_the_engine_match_the_front(store: IndexStore) -> None:
    hits = store.search("order totals", 20)
    assert all(isinstance(h, ChunkHit) for h in hits)
    assert store.common_terms("order totals") == []  # a small index counts no term


# ------------------------------------------------------------------ graphs


def test_edges_of_each_kind_are_sorted_and_complete(store: IndexStore) -> None:
    imports = store.edges("import")
    assert imports == sorted(imports)
    assert {(a, b) for a, b, _ in imports} == {
        ("app/main.py", "pkg/rounding.py"),
        ("app/main.py", "pkg/totals.py"),
        ("pkg/totals.py", "pkg/rounding.py"),
    }
    refs = store.edges("ref")
    assert refs == sorted(refs)
    assert ("app/main.py", "pkg/rounding.py") in {(a, b) for a, b, _ in refs}
    assert store.edges("cochange") == []
    store.history.set_cochange([("pkg/totals.py", "pkg/rounding.py", 3)], "head:1")
    assert store.edges("cochange") == [("pkg/totals.py", "pkg/rounding.py", 3)]
    assert store.meta("cochange_key") == "head:1"
    with pytest.raises(ValueError, match="unknown edge kind"):
        store.edges("calls")  # type: ignore[arg-type]


def test_the_stored_graphs_follow_the_content(store: IndexStore, backend: Backend) -> None:
    rows = backend.graph_rows(store)
    assert store.edge_counts()["ref"] is None  # nothing derived yet
    combined = store.combined_graph()
    with rows.snapshot():
        assert combined == graphdelta.build(rows).combined
    counts = store.edge_counts()
    assert counts["ref"] == len(store.edges("ref"))
    assert counts["import"] == len(store.edges("import")) == rows.edge_count("import")
    assert store.refresh_graphs() is True
    store.write_files(
        _batch({"app/extra.py": b"from pkg import rounding\n\nrounding.truncate(1)\n"})
    )
    assert store.edge_counts()["ref"] is None  # stale after a content write
    derived = store.derived_graphs()
    with rows.snapshot():
        full = graphdelta.build(rows)
    assert (derived.combined, derived.ref, derived.basis) == (full.combined, full.ref, full.basis)
    assert store.combined_graph() == full.combined
    stored = rows.derived_generations(("combined", "ref.packed", "graph.basis"))
    assert set(stored.values()) == {store.generation()}


def test_one_store_claims_the_graphs_at_a_time(backend: Backend, tmp_path: Path) -> None:
    first = backend.create(tmp_path, "claims")
    first.write_files(_batch(SOURCES))
    first.close()
    one, two = backend.reopen(tmp_path, "claims"), backend.reopen(tmp_path, "claims")
    try:
        claim = backend.graph_rows(one).claim_derived()
        assert claim.state == "held"
        assert backend.graph_rows(two).claim_derived().state == "storing"
        claim.release()
        again = backend.graph_rows(two).claim_derived()
        assert again.state == "held"
        again.release()
        # a reader that cannot store has its graphs stored, or derives them in memory
        reader = backend.reader(tmp_path, "claims")
        try:
            assert reader.combined_graph() == one.combined_graph()
        finally:
            reader.close()
    finally:
        one.close()
        two.close()


# ------------------------------------------------------------------ history and layouts


def test_past_commits_are_matched_by_their_words(store: IndexStore) -> None:
    history = store.history
    assert history.similar_commits(["rounding"], 5) == []
    history.set_past_edits(
        [
            (0, "fix rounding of totals", ["pkg/rounding.py", "pkg/totals.py"]),
            (1, "add shipping fee", ["pkg/totals.py"]),
            (2, "rounding rounding cents", ["pkg/rounding.py"]),
            # others, so that the words above are rare enough to score
            *[(i, f"tidy the readme part{i}", ["README.md"]) for i in range(3, 13)],
        ],
        "head:3",
    )
    assert store.meta("past_edits_key") == "head:3"
    similar = history.similar_commits(["rounding", "cents", "not-alnum"], 5)
    assert [order for order, _ in similar] == [2, 0]
    assert all(score > 0 for _, score in similar) and similar[0][1] >= similar[1][1]
    assert history.similar_commits(["cents", "rounding"], 1) == similar[:1]
    assert history.similar_commits([], 5) == []
    assert history.past_edits([0, 2]) == [
        (0, "pkg/rounding.py"),
        (0, "pkg/totals.py"),
        (2, "pkg/rounding.py"),
    ]
    assert history.past_edits([]) == []
    history.set_past_edits([(0, "shipping fee", ["pkg/totals.py"])], "head:4")
    assert history.similar_commits(["rounding"], 5) == []  # replaced whole


def test_layouts_belong_to_parsed_files_and_go_with_them(store: IndexStore) -> None:
    assert store.paths_without_layout() == sorted(SOURCES)
    store.put_layouts([("pkg/totals.py", b"\x01layout"), ("not/indexed.py", b"x")])
    assert store.stored_layout("pkg/totals.py") == b"\x01layout"
    assert store.stored_layout("not/indexed.py") is None
    assert "pkg/totals.py" not in store.paths_without_layout()
    store.write_files(_batch({"pkg/totals.py": SOURCES["pkg/totals.py"] + b"\n# more\n"}))
    assert store.stored_layout("pkg/totals.py") is None  # a new content: no old layout


def test_a_bulk_load_writes_what_plain_writes_do(backend: Backend, tmp_path: Path) -> None:
    bulk = backend.create(tmp_path, "bulk")
    plain = backend.create(tmp_path, "plain")
    try:
        with bulk.bulk_load():
            bulk.write_files(_batch(SOURCES))
        plain.write_files(_batch(SOURCES))
        assert bulk.symbols() == plain.symbols()
        assert bulk.references() == plain.references()
        assert bulk.name_part_counts({"round", "order"}) == plain.name_part_counts(
            {"round", "order"}
        )
        assert [h.path for h in bulk.search("rounding", 10)] == [
            h.path for h in plain.search("rounding", 10)
        ]
    finally:
        bulk.close()
        plain.close()
