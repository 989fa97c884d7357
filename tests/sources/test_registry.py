from __future__ import annotations

import pytest

from codelibrarian.errors import ConfigError
from codelibrarian.sources import BUILTIN_SOURCES, Source, load_sources


def test_builtins_load_through_the_registry() -> None:
    sources = load_sources()
    names = [s.name for s in sources]
    assert set(BUILTIN_SOURCES) <= set(names)
    assert names == sorted(names)
    assert all(isinstance(s, Source) for s in sources)


def test_selecting_sources_and_unknown_names() -> None:
    assert [s.name for s in load_sources(["rules", "local"])] == ["local", "rules"]
    with pytest.raises(ConfigError, match="unknown source"):
        load_sources(["nope"])


def test_builtins_are_registered_through_the_entry_point_group() -> None:
    from importlib.metadata import entry_points

    from codelibrarian.sources import ENTRY_POINT_GROUP

    found = {ep.name: ep.value for ep in entry_points(group=ENTRY_POINT_GROUP)}
    for name, target in BUILTIN_SOURCES.items():
        assert found.get(name) == target
