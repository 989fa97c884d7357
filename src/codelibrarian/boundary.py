"""Where the library meets its callers: stray low-level errors become library errors.

The facade's public methods run inside :func:`guarded`, so a caller sees only
:mod:`codelibrarian.errors` types, each saying what went wrong and what to do:

=============================  ===========================================
raised underneath               raised to the caller
=============================  ===========================================
``sqlite3.DatabaseError``       ``IndexCorrupt`` (delete the index; it is rebuilt)
``PermissionError``             ``WorkspaceError`` naming the file
other ``OSError`` (disk full,   ``WorkspaceError`` with the system's reason
read-only file system, ...)
``pydantic.ValidationError``    ``UsageError`` naming the field
``OverflowError``               ``UsageError`` (a number out of range)
=============================  ===========================================

Anything else is a bug and propagates unchanged.
"""

from __future__ import annotations

import functools
import sqlite3
from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import ValidationError

from .errors import IndexCorrupt, LibrarianError, UsageError, WorkspaceError

__all__ = ["guard_methods", "guarded", "library_error"]

F = TypeVar("F", bound=Callable[..., Any])


def library_error(exc: BaseException) -> LibrarianError | None:
    """The library error ``exc`` stands for, or None when it is not one we translate."""
    if isinstance(exc, LibrarianError):
        return exc
    if isinstance(exc, sqlite3.DatabaseError):
        return IndexCorrupt(
            f"the index (.librarian/index.db) cannot be read: {exc}.",
            hint="It is derived data: delete .librarian/index.db and run `librarian index`.",
        )
    if isinstance(exc, PermissionError):
        where = exc.filename or "a file in the repository"
        return WorkspaceError(
            f"permission denied: {where}.",
            hint="Make it readable (and .librarian/ writable) by you, then run again.",
        )
    if isinstance(exc, OSError):
        where = f" ({exc.filename})" if exc.filename else ""
        return WorkspaceError(
            f"{exc.strerror or type(exc).__name__}{where}.",
            hint="Check the disk and the repository's permissions, then run again.",
        )
    if isinstance(exc, OverflowError):
        return UsageError(f"a number is out of range: {exc}.", hint="Use a smaller value.")
    if isinstance(exc, ValidationError):
        return _validation(exc)
    return None


def _validation(exc: ValidationError) -> UsageError:
    errors = exc.errors()
    if not errors:
        return UsageError("a value is invalid.", hint="Fix it and run again.")
    first = errors[0]
    loc = ".".join(str(p) for p in first["loc"]) or "value"
    msg = str(first["msg"]).removeprefix("Value error, ")
    return UsageError(f"{loc}: {msg}.", hint="Fix that value and run again.")


def guarded(fn: F) -> F:
    """``fn`` raising only library errors (see the module docstring)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except LibrarianError:
            raise
        except Exception as exc:
            err = library_error(exc)
            if err is None:
                raise
            raise err from exc

    return wrapper  # type: ignore[return-value]


C = TypeVar("C", bound=type)


def guard_methods(cls: C) -> C:
    """``cls`` with ``__init__`` and every public method :func:`guarded`."""
    for name, value in list(vars(cls).items()):
        if callable(value) and (name == "__init__" or not name.startswith("_")):
            setattr(cls, name, guarded(value))
    return cls
