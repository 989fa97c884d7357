"""The ``.librarian/`` state folder at the repository root.

Layout::

    .librarian/
      .gitignore        "*": nothing in here is ever committed
      schema_version    integer; a newer one than we know is an error
      secret            32 random bytes, mode 0600, created once
      index.db          SQLite index (owned by codelibrarian.index)
      decisions/ runs/ cache/ sessions/
      violations.jsonl  events.jsonl

Properties only compute paths; :meth:`State.ensure` creates the folder.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from pathlib import Path

from ..errors import WorkspaceError
from .private import DIR_MODE, harden, private_write

__all__ = ["SCHEMA_VERSION", "SECRET_BYTES", "STATE_DIR", "State"]

STATE_DIR = ".librarian"
SCHEMA_VERSION = 1
SECRET_BYTES = 32


class State:
    """Paths and one-time setup of ``root/.librarian``."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    @property
    def dir(self) -> Path:
        return self.root / STATE_DIR

    @property
    def index_path(self) -> Path:
        return self.dir / "index.db"

    @property
    def secret_path(self) -> Path:
        return self.dir / "secret"

    @property
    def schema_path(self) -> Path:
        return self.dir / "schema_version"

    @property
    def decisions_dir(self) -> Path:
        return self.dir / "decisions"

    @property
    def runs_dir(self) -> Path:
        return self.dir / "runs"

    @property
    def cache_dir(self) -> Path:
        return self.dir / "cache"

    @property
    def sessions_dir(self) -> Path:
        return self.dir / "sessions"

    @property
    def violations_path(self) -> Path:
        return self.dir / "violations.jsonl"

    @property
    def events_path(self) -> Path:
        return self.dir / "events.jsonl"

    def exists(self) -> bool:
        return self.dir.is_dir()

    def schema_version(self) -> int | None:
        """The recorded schema version, or None when the folder is not set up."""
        try:
            raw = self.schema_path.read_text(encoding="utf-8").strip()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise self._error(f"cannot read {self.schema_path}: {exc.strerror}") from None
        if not raw.isdigit():
            raise WorkspaceError(
                f"{self.schema_path} holds {raw[:20]!r}, not a schema version.",
                hint=f"Delete {self.dir} and run `librarian init` to recreate it.",
            )
        return int(raw)

    def ensure(self) -> State:
        """Create the folder (mode 0700), its ``.gitignore`` and schema version (idempotent).

        A folder left open by an older version (or another tool) is tightened,
        with everything in it (files 0600, folders 0700).
        """
        if self.dir.exists() and not self.dir.is_dir():
            raise WorkspaceError(
                f"{self.dir} is a file, not the librarian's state folder.",
                hint=f"Move or delete {self.dir}; it is recreated on the next run.",
            )
        try:
            if not self.dir.is_dir():
                self.dir.mkdir(mode=DIR_MODE, parents=False, exist_ok=True)
            if self.dir.stat().st_mode & 0o077:
                harden(self.dir)
            gitignore = self.dir / ".gitignore"
            if not gitignore.is_file():
                _atomic_write(gitignore, b"*\n")
            found = self.schema_version()
            if found is None:
                _atomic_write(self.schema_path, f"{SCHEMA_VERSION}\n".encode())
            elif found > SCHEMA_VERSION:
                raise WorkspaceError(
                    f"{self.dir} was written by a newer codelibrarian "
                    f"(schema {found}; this one knows {SCHEMA_VERSION}).",
                    hint="Upgrade codelibrarian, or delete the folder and run `librarian init`.",
                )
        except FileNotFoundError:
            raise WorkspaceError(
                f"{self.root} does not exist.", hint="Pass an existing repository to --repo."
            ) from None
        except PermissionError as exc:
            raise self._error(f"cannot write {exc.filename or self.dir}") from None
        except OSError as exc:  # a read-only file system, a full disk, ...
            if isinstance(exc, WorkspaceError):
                raise
            raise self._error(f"cannot write {exc.filename or self.dir}: {exc.strerror}") from None
        return self

    def secret(self) -> bytes:
        """The workspace secret: created once (mode 0600), then read back unchanged.

        Written to a private temporary file and hard-linked into place, so a
        concurrent reader never sees a half-written secret and two concurrent
        creators agree on one value.
        """
        self.ensure()
        path = self.secret_path
        if not path.exists():
            self._create_secret(path)
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise self._error(f"cannot read {path}: {exc.strerror}") from None
        if len(data) != SECRET_BYTES:
            raise WorkspaceError(
                f"{path} is {len(data)} bytes, expected {SECRET_BYTES}.",
                hint=(
                    "Delete the file to make a new secret (artifact ids will change), "
                    "or restore it from a backup."
                ),
            )
        return data

    def _create_secret(self, path: Path) -> None:
        tmp = path.with_name(f".secret.{os.getpid()}.{secrets.token_hex(4)}")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as fh:
                os.fchmod(fh.fileno(), 0o600)  # whatever the umask
                fh.write(secrets.token_bytes(SECRET_BYTES))
                fh.flush()
                os.fsync(fh.fileno())
            # FileExistsError: another process won the race; use its secret
            with contextlib.suppress(FileExistsError):
                os.link(tmp, path)
        except OSError as exc:
            raise self._error(f"cannot create {path}: {exc.strerror}") from None
        finally:
            with contextlib.suppress(OSError):
                tmp.unlink()

    def _error(self, what: str) -> WorkspaceError:
        return WorkspaceError(
            f"{what}.", hint=f"Check the permissions of {self.dir} (it must be writable by you)."
        )


def _atomic_write(path: Path, data: bytes) -> None:
    """Write via a private temporary file and rename, so readers never see a partial file."""
    private_write(path, data)
