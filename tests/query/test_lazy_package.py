"""``codelibrarian.query`` loads its submodules on first use.

Every compose imports ``query.locate``; importing the package must not pull in the
query pipeline, its embedders and numpy along with it (they cost a fresh CLI call
hundreds of milliseconds), while every public name stays importable from it.
"""

from __future__ import annotations

import subprocess
import sys

from codelibrarian import query


def test_locate_loads_neither_the_pipeline_nor_numpy() -> None:
    code = (
        "import sys, codelibrarian.query.locate\n"
        "print(','.join(m for m in ('numpy', 'codelibrarian.query.pipeline', "
        "'codelibrarian.query.embed', 'codelibrarian.query.capabilities') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout.strip() == ""


def test_every_public_name_resolves_to_its_submodule_object() -> None:
    for name in query.__all__:
        value = getattr(query, name)
        home = query._HOME[name]
        assert value is getattr(__import__(f"codelibrarian.query.{home}", fromlist=[name]), name)
    assert sorted(query._HOME) == sorted(query.__all__)


def test_an_unknown_name_is_an_attribute_error() -> None:
    try:
        query.no_such_name  # noqa: B018
    except AttributeError as exc:
        assert "no_such_name" in str(exc)
    else:
        raise AssertionError("an unknown name resolved")
