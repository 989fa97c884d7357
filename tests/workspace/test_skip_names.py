"""The path-only skip rules read plain strings; they agree with a pathlib reading."""

from __future__ import annotations

from pathlib import PurePosixPath

from hypothesis import given
from hypothesis import strategies as st

from codelibrarian.workspace import skips
from codelibrarian.workspace.skips import generated_name, vendored_dir


def _vendored_by_parts(rel: str) -> str | None:
    for part in PurePosixPath(rel).parts[:-1]:
        if part.lower() in skips._VENDOR_DIRS:
            return part
    return None


def _generated_by_name(rel: str) -> str | None:
    name = PurePosixPath(rel).name.lower()
    if name in skips._LOCK_FILES:
        return "lockfile"
    for suffix in (*skips._MINIFIED_SUFFIXES, *skips._GENERATED_SUFFIXES):
        if name.endswith(suffix):
            return suffix
    return None


_SEGMENTS = st.sampled_from(
    [
        "src",
        "lib",
        "",
        ".",
        "Node_Modules",
        "node_modules",
        "vendor",
        "third_party",
        "a.b",
        *sorted(skips._VENDOR_DIRS)[:6],
    ]
)
_NAMES = st.sampled_from(
    [
        "app.py",
        "APP.MIN.JS",
        "bundle.min.js",
        "style.min.css",
        "package-lock.json",
        "Cargo.lock",
        "x_pb2.py",
        "min.js",
        ".min.js",
        "README",
        "node_modules",
        "Vendor",
        *sorted(skips._LOCK_FILES)[:4],
        *(f"f{s}" for s in skips._GENERATED_SUFFIXES),
        *(f"F{s.upper()}" for s in skips._MINIFIED_SUFFIXES),
    ]
)


@given(st.lists(_SEGMENTS, max_size=4), _NAMES, st.booleans())
def test_string_rules_match_pathlib(folders: list[str], name: str, slash: bool) -> None:
    rel = "/".join([*folders, name]).lstrip("/") + ("/" if slash else "")
    assert generated_name(rel) == _generated_by_name(rel)
    assert vendored_dir(rel) == _vendored_by_parts(rel)


def test_examples() -> None:
    assert vendored_dir("web/node_modules/x/y.js") == "node_modules"
    assert vendored_dir("node_modules.js") is None
    assert generated_name("ui/app.min.js") == ".min.js"
    assert generated_name("package-lock.json") == "lockfile"
    assert generated_name("src/app.py") is None
