"""Where ``psygym tune`` keeps its Optuna studies: SQLite in the runs folder, a URL, or a journal.

``--storage`` takes any Optuna storage URL (``postgresql://user:pass@host/db`` lets workers on
several machines share one study) or ``journal:PATH`` (a JournalStorage file on a shared file
system); without it, ``sqlite:///<runs-dir>/optuna.db``. Every spec is checked before anything
connects, and the folder a SQLite or journal file goes in is made.

A database file the user names may live anywhere (it is theirs), but like the default one it
must be a regular file or a new one: a symbolic link (SQLite would write through it) or a
device, pipe or folder is refused in one line. Only the file itself is checked, not the folders
above it, which the user chose.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from psygym_experiments.harness.output import UnsafeOutputError, check_output

from psygym.file_writes import obstacle

STORAGE_SCHEMES = ("sqlite", "postgresql", "postgres", "mysql")
"""URL schemes ``--storage`` accepts (with an optional ``+driver``), checked before connecting."""


SQLITE_FILES = ("", "-journal", "-wal", "-shm")
"""Suffixes of the files SQLite keeps beside a database (none may be a link)."""


def default_storage(runs_dir: str | Path) -> str:
    """``sqlite:///<runs-dir>/optuna.db`` (absolute path), once none of its files is a link.

    Raises:
        UnsafeOutputError: ``optuna.db`` or a file SQLite keeps beside it is a symbolic link.
    """
    path = Path(runs_dir).resolve() / "optuna.db"
    path.parent.mkdir(parents=True, exist_ok=True)
    for suffix in SQLITE_FILES:
        check_output(path.with_name(path.name + suffix))
    return f"sqlite:///{path}"


def open_storage(spec: str | None, runs_dir: str | Path) -> Any:
    """An Optuna storage from a spec: None (SQLite in runs-dir), ``journal:PATH`` or a URL.

    Raises:
        ValueError: a spec that is neither.
        UnsafeOutputError: a SQLite database or journal file named by the spec (or a file SQLite
            keeps beside the database) is a symbolic link or not a regular file.
    """
    if not spec:
        return default_storage(runs_dir)
    if spec.startswith("journal:"):
        import optuna

        path = Path(spec.removeprefix("journal:"))
        _refuse_obstacle(spec, path)
        path.parent.mkdir(parents=True, exist_ok=True)
        return optuna.storages.JournalStorage(optuna.storages.journal.JournalFileBackend(str(path)))
    if "://" not in spec:
        raise ValueError(
            f"--storage {spec!r} is not a storage URL; use e.g. sqlite:///runs/optuna.db, "
            "postgresql://user:password@host:5432/db or journal:/shared/path/journal.log"
        )
    scheme = spec.split("://", 1)[0].lower()
    if scheme.split("+", 1)[0] not in STORAGE_SCHEMES:
        raise ValueError(
            f"--storage {spec!r}: unknown storage scheme {scheme!r}; allowed: "
            f"{', '.join(s + '://' for s in STORAGE_SCHEMES)} (SQLAlchemy URLs) or journal:PATH"
        )
    if scheme.split("+", 1)[0] == "sqlite":
        _sqlite_folder(spec)
    return _postgres_driver(spec)


def _sqlite_folder(url: str) -> None:
    """Make the folder of a ``sqlite:`` URL's database file, as ``journal:`` makes its file's.

    An in-memory database (``sqlite://``, ``:memory:``) and a ``file:`` URI are left to SQLite.

    Raises:
        ValueError: the URL does not parse, or its database path is a folder (one line).
        UnsafeOutputError: the database, or a file SQLite keeps beside it (:data:`SQLITE_FILES`),
            is a symbolic link or not a regular file.
        OSError: the folder cannot be made (e.g. a part of it is a file; the CLI names it).
    """
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        database = make_url(url).database
    except ArgumentError as exc:
        raise ValueError(f"--storage {url!r} is not a storage URL: {exc}") from None
    if not database or database == ":memory:" or database.startswith("file:"):
        return
    path = Path(database)
    if path.is_dir() and not path.is_symlink():  # a link to a folder: refused as a link
        raise ValueError(f"--storage {url!r}: {path} is a folder; the URL names the database "
                         "file, e.g. sqlite:///runs/optuna.db")  # fmt: skip
    for suffix in SQLITE_FILES:
        _refuse_obstacle(url, path.with_name(path.name + suffix))
    path.parent.mkdir(parents=True, exist_ok=True)


def _refuse_obstacle(spec: str, path: Path) -> None:
    """Refuse a storage file of the user's that is a symbolic link or not a regular file.

    Raises:
        UnsafeOutputError: one line naming the spec, the file and what it is.
    """
    what = obstacle(path)
    if what is not None:
        raise UnsafeOutputError(
            f"--storage {spec!r}: refusing to use {path}: it is {what}; a study is written only "
            "to a regular file or a new one, never through a link (name the file itself)"
        )


def _postgres_driver(url: str) -> str:
    """Pick the installed PostgreSQL driver for a bare ``postgresql://`` URL.

    SQLAlchemy 2.1 maps ``postgresql://`` to psycopg 3; psygym's ``postgres`` extra installs
    psycopg2, so the URL is rewritten to ``postgresql+psycopg2://`` when only that is present.
    """
    import importlib.util

    for bare in ("postgresql://", "postgres://"):
        if url.startswith(bare):
            if (
                importlib.util.find_spec("psycopg") is None
                and importlib.util.find_spec("psycopg2") is not None
            ):
                return "postgresql+psycopg2://" + url[len(bare) :]
            return "postgresql://" + url[len(bare) :]
    return url


__all__ = ["SQLITE_FILES", "STORAGE_SCHEMES", "default_storage", "open_storage"]
