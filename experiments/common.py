"""Helpers shared by the commands: consoles, clean error exits, option parsing, edition lookups.

Library code (games, tournaments, solving, run folders, progress, output formats) lives in
:mod:`psygym_experiments.harness`; this module only holds what the command layer needs.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import typer
from psygym_experiments.harness.output import check_choice
from rich.console import Console
from rich.markup import escape

# Piped output (tests, files) gets a wide fixed width so tables do not wrap into columns of "…".
# A closed standard output (``>&-``) is ``None``: then too, not a terminal.
console = Console(width=None if sys.stdout is not None and sys.stdout.isatty() else 160)
err_console = Console(stderr=True)


@contextmanager
def user_errors() -> Iterator[None]:
    """Turn expected errors (bad scenario, unknown agent, bad value) into one red line, exit 2."""
    import os

    try:
        yield
    except (ValueError, OSError, KeyError) as exc:  # OSError: e.g. --runs-dir names a file
        if os.environ.get("PSYGYM_DEBUG") == "1":
            raise
        err_console.print(
            f"[red]error:[/red] {escape(error_line(exc))}", highlight=False, soft_wrap=True,
            emoji=False,
        )  # fmt: skip
        raise typer.Exit(2) from None


def error_line(exc: BaseException) -> str:
    """An error as one printable line.

    A file error names the file and what went wrong in words (not ``[Errno 20] ...``), and
    a folder that cannot be made because a file is in the way names that file. Control
    characters (a terminal escape code in a file name, say) are shown escaped, never raw.
    """
    if isinstance(exc, OSError) and exc.strerror:
        msg = _os_error(exc)
    else:
        msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else str(exc)
    return printable(str(msg)) or type(exc).__name__


def printable(text: str) -> str:
    r"""``text`` on one line, safe for a terminal: what is not printable is escaped.

    Control characters (``\x1b``), format characters such as a right-to-left override
    (``\u202e``) and lone surrogates (piped bytes that are not UTF-8) are shown as escapes.
    """
    return "".join(
        ch if ch.isprintable() else ch.encode("unicode_escape", "backslashreplace").decode()
        for ch in " ".join(text.split())
    )


def _os_error(exc: OSError) -> str:
    import os
    from pathlib import Path

    if exc.filename is None:
        return str(exc.strerror)
    path = Path(os.fsdecode(exc.filename))
    if isinstance(exc, NotADirectoryError | FileExistsError):  # e.g. --runs-dir names a file
        blocker = next((p for p in (path, *path.parents) if p.is_file()), None)
        if blocker is not None:
            return f"cannot make the folder {path}: {blocker} is a file, not a folder"
    return f"{path}: {exc.strerror[:1].lower()}{exc.strerror[1:]}"


def check_workers_option(value: int | None) -> int | None:
    """Callback of the ``--workers`` options: at most :func:`.lifecycle.max_workers` processes.

    Raises:
        typer.BadParameter: too many (the command line then ends in one line naming the option).
    """
    from psygym_experiments.harness.lifecycle import check_workers

    try:
        return value if value is None else check_workers(value)
    except ValueError as exc:
        raise typer.BadParameter(str(exc).removeprefix("--workers ")) from None


def check_n_envs_option(value: int) -> int:
    """Callback of ``--n-envs`` (:func:`n_envs_option`): :func:`.lifecycle.check_n_envs`.

    0 means the config's; with ``--subproc`` the command checks the lower limit itself.

    Raises:
        typer.BadParameter: more (the command line then ends in one line naming the option).
    """
    from psygym_experiments.harness.lifecycle import check_n_envs

    try:
        return check_n_envs(value)
    except ValueError as exc:
        raise typer.BadParameter(str(exc).removeprefix("--n-envs ")) from None


def n_envs_option(applies_to: str = "", subproc: bool = False) -> Any:
    """The ``--n-envs`` option of ``train`` and ``tune``: training envs, 0 for the config's.

    Checked when parsed (:func:`check_n_envs_option`). ``applies_to`` starts the help (``tune``:
    which target takes it); ``subproc`` says how ``--subproc`` lowers the limit.
    """
    from psygym_experiments.harness.lifecycle import ENVS_PER_CORE

    limit = f"at most {ENVS_PER_CORE} per CPU core"
    if subproc:
        limit += ", with --subproc as many as --workers"
    text = f"vectorised envs (default: from the config; {limit})."
    return typer.Option(
        0, min=0, callback=check_n_envs_option,
        help=f"{applies_to}: {text}" if applies_to else text[0].upper() + text[1:],
    )  # fmt: skip


def ray_option() -> Any:
    """The ``--ray`` option of the jobs that play many games (:mod:`.harness.pools`).

    Its value is ``auto`` or a Ray cluster's address (``host:port``); not given, the environment
    variable ``PSYGYM_RAY_ADDRESS`` is read, and without either the games stay on this machine.
    """
    from psygym_experiments.harness.pools import RAY_ENV

    return typer.Option(
        "", "--ray", envvar=RAY_ENV, show_default=False, metavar="auto|ADDRESS",
        help=f"Play on a Ray cluster: 'auto' (the one this machine joined) or the head's "
        f"host:port (or {RAY_ENV}); the results do not change.",
    )  # fmt: skip


def split_names(text: str) -> list[str]:
    """Split a comma-separated option (``"a,b,c"``) into names, dropping blanks."""
    return [t.strip() for t in text.split(",") if t.strip()]


def default_edition() -> str:
    """The id of the edition commands use when none is named (``psygym.edition.default()``)."""
    from psygym.edition import default

    return default().id


def edition_help(extra: str = "") -> str:
    """Help text of an ``--edition`` option listing the installed editions."""
    from psygym.edition import ids

    return f"Edition: {', '.join(ids())}{extra}."


def edition_option(**kwargs: Any) -> Any:
    """A typer ``--edition`` option defaulting to the default edition."""
    return typer.Option(default_edition(), help=kwargs.pop("help", edition_help()), **kwargs)


def solvable_edition_option() -> Any:
    """``--edition`` for a command that solves exactly: hidden hands are named as refused."""
    return edition_option(
        help=edition_help(" (perfect-information editions; hidden hands cannot be solved)")
    )


def edition_tool(edition: str, name: str) -> Callable[..., Any] | None:
    """The edition agents' tool ``name`` (``Bots.tools``), or ``None`` if it has none."""
    from psygym.edition import get, resolve
    from psygym.policies import bots_for

    bots = bots_for(get(edition).id)
    target = None if bots is None else bots.tools.get(name)
    return None if target is None else resolve(target)


def editions_with_tool(name: str) -> list[str]:
    """Ids of the installed editions whose agents declare the tool ``name``."""
    from psygym.edition import ids
    from psygym.policies import bots_for

    out = []
    for eid in ids():
        bots = bots_for(eid)
        if bots is not None and name in bots.tools:
            out.append(eid)
    return out


__all__ = [
    "check_choice", "check_n_envs_option", "check_workers_option", "console", "default_edition",
    "edition_help", "edition_option", "edition_tool", "editions_with_tool", "err_console",
    "error_line", "n_envs_option", "printable", "ray_option", "solvable_edition_option",
    "split_names", "user_errors",
]  # fmt: skip
