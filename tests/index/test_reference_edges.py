"""``reference_edges`` works out each name's factor once; its edges must equal summing
``name_weight`` reference by reference, the definition of the reference graph."""

from __future__ import annotations

from collections import defaultdict

from hypothesis import given, settings
from hypothesis import strategies as st

from codelibrarian.index.graph import MAX_DEFINERS, name_weight, reference_edges

_names = st.sampled_from(
    ["x", "run", "_private", "parse_header", "JSONDecoder", "HTTPResponse", "__init__", "a_b"]
)
_paths = st.sampled_from([f"pkg/m{i}.py" for i in range(8)])


def _by_definition(
    defs: list[tuple[str, str]], refs: list[tuple[str, str, int]]
) -> list[tuple[str, str, int]]:
    definers: dict[str, set[str]] = defaultdict(set)
    for name, path in defs:
        definers[name].add(path)
    acc: dict[tuple[str, str], int] = defaultdict(int)
    for src, name, count in refs:
        targets = definers.get(name, set())
        if 0 < len(targets) <= MAX_DEFINERS:
            for dst in targets - {src}:
                acc[(src, dst)] += name_weight(name, len(targets), count)
    return sorted((a, b, w) for (a, b), w in acc.items())


@settings(max_examples=300, deadline=None)
@given(
    defs=st.lists(st.tuples(_names, _paths), max_size=30),
    refs=st.lists(st.tuples(_paths, _names, st.integers(1, 400)), max_size=60),
)
def test_reference_edges_equal_the_per_reference_sum(
    defs: list[tuple[str, str]], refs: list[tuple[str, str, int]]
) -> None:
    assert reference_edges(defs, refs) == _by_definition(defs, refs)


def test_a_name_defined_in_many_files_weighs_less() -> None:
    few = [("parse_header", "pkg/m0.py")]
    many = [("parse_header", f"pkg/m{i}.py") for i in range(7)]
    refs = [("pkg/z.py", "parse_header", 4)]
    assert reference_edges(few, refs) == [("pkg/z.py", "pkg/m0.py", 2000)]
    assert {w for _, _, w in reference_edges(many, refs)} == {200}
