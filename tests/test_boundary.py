"""The facade raises library errors only: stray low-level errors are translated."""

from __future__ import annotations

import errno
import inspect
import sqlite3

import pytest
from pydantic import BaseModel, Field, ValidationError

from codelibrarian.boundary import guard_methods, guarded, library_error
from codelibrarian.errors import IndexCorrupt, UsageError, WorkspaceError


class _Model(BaseModel):
    goal: str = Field(min_length=1)


def _validation_error() -> ValidationError:
    with pytest.raises(ValidationError) as info:
        _Model(goal="")
    return info.value


@pytest.mark.parametrize(
    ("exc", "kind", "phrase"),
    [
        (sqlite3.DatabaseError("file is not a database"), IndexCorrupt, "librarian index"),
        (PermissionError(errno.EACCES, "Permission denied", "/x/.lib"), WorkspaceError, "/x/.lib"),
        (OSError(errno.ENOSPC, "No space left on device"), WorkspaceError, "No space left"),
        (OverflowError("timestamp out of range"), UsageError, "out of range"),
        (_validation_error(), UsageError, "goal:"),
    ],
)  # fmt: skip
def test_translations(exc: Exception, kind: type[Exception], phrase: str) -> None:
    err = library_error(exc)
    assert isinstance(err, kind)
    assert phrase in str(err)


def test_other_errors_propagate_unchanged() -> None:
    assert library_error(KeyError("x")) is None

    @guarded
    def boom() -> None:
        raise KeyError("bug")

    with pytest.raises(KeyError):
        boom()


def test_guard_methods_wraps_public_methods_and_init() -> None:
    @guard_methods
    class Thing:
        def __init__(self) -> None:
            self.ok = True

        def read(self) -> None:
            raise sqlite3.DatabaseError("malformed")

        def _private(self) -> None:
            raise sqlite3.DatabaseError("malformed")

    thing = Thing()
    with pytest.raises(IndexCorrupt):
        thing.read()
    with pytest.raises(sqlite3.DatabaseError):
        thing._private()


def test_every_public_method_of_the_facade_is_guarded() -> None:
    # Librarian is assembled from parts (codelibrarian.facade); each must be guarded too.
    from codelibrarian.api import Librarian

    public = [
        name
        for name in dir(Librarian)
        if not name.startswith("_") and inspect.isfunction(getattr(Librarian, name))
    ]
    assert {"compose", "run_start", "plan", "record_session", "pack"} <= set(public)
    unguarded = [name for name in public if not hasattr(getattr(Librarian, name), "__wrapped__")]
    assert unguarded == []
