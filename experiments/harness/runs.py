"""The run-folder convention: folder names, the ``config`` file, ``command.txt``, metrics.

A run folder is ``<runs_dir>/<prefix>-<YYYYmmdd-HHMMSS>`` (``-2``, ``-3``... when taken). Runs that
resume (training) live in numbered folders ``<parent>/<prefix>_<n>`` so ``--resume`` can name them.
Every run folder holds ``command.txt`` (the exact command line) and its resolved settings.

Every file here is written through :mod:`.output`'s safe writers (never through a link), and a
folder a command goes on with is first checked to hold no link at all (:func:`check_run_folder`).
A resume record (:class:`ResumeRecord`) is JSON lines chained by their hashes, as game logs are
(:mod:`.gamelog`): a changed line is refused, naming its line number.
"""

from __future__ import annotations

import csv
import json
import os
import re
import shlex
import sys
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from psygym_experiments.harness.output import (
    atomic_write,
    check_folder,
    check_output,
    open_append,
    write_bytes,
    write_json,
)

MAX_COMPONENT = 80
"""Longest folder name made from a user-given name (scenario, study, agent)."""


def safe_component(name: str, fallback: str = "unnamed") -> str:
    """``name`` as one safe path component: it can never leave the folder it is joined to.

    Letters, digits, ``.``, ``_`` and ``-`` are kept, every other run of characters (slashes,
    backslashes, NUL, spaces, ...) becomes ``-``; leading dots and dashes go (no ``..``, no hidden
    file); the result is at most :data:`MAX_COMPONENT` characters. A name that had to change gets
    a short hash of the original, so two different names never share a folder.
    """
    import hashlib

    text = str(name)
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", text).lstrip(".-").rstrip("-") or fallback
    if slug == text and len(slug) <= MAX_COMPONENT:
        return slug
    digest = hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()[:8]
    return f"{slug[: MAX_COMPONENT - 9].rstrip('.-')}-{digest}"


def inside(base: str | Path, *parts: str) -> Path:
    """``base/part/...`` with every part made a :func:`safe_component` (checked to stay inside)."""
    root = Path(base)
    path = root.joinpath(*(safe_component(p) for p in parts))
    return check_folder(path, root) if parts else path


def timestamp() -> str:
    """Local time as ``YYYYmmdd-HHMMSS`` for run folder names."""
    return datetime.now().strftime("%Y%m%d-%H%M%S")


def free_name(folder: Path, stem: str, suffix: str = "") -> Path:
    """The first of ``stem<suffix>``, ``stem-2<suffix>``... that does not exist in ``folder``."""
    n = 1
    while True:
        path = folder / (f"{stem}{suffix}" if n == 1 else f"{stem}-{n}{suffix}")
        if not os.path.lexists(path):  # a link, even a dangling one, is taken
            return path
        n += 1


def run_folder(runs_dir: str | Path, prefix: str) -> Path:
    """Create ``runs_dir/<prefix>-<timestamp>`` (``-2``, ``-3``... if it exists already)."""
    base = Path(runs_dir)
    base.mkdir(parents=True, exist_ok=True)
    path = free_name(base, f"{prefix}-{timestamp()}")
    path.mkdir()
    return path


def numbered_run_dir(parent: str | Path, prefix: str) -> Path:
    """Create ``parent/<prefix>_<n>`` with the next free ``n`` (runs that can be resumed)."""
    base = Path(parent)
    base.mkdir(parents=True, exist_ok=True)
    n = 1
    while os.path.lexists(base / f"{prefix}_{n}"):
        n += 1
    path = base / f"{prefix}_{n}"
    path.mkdir()
    return path


def command_text() -> str:
    """The command line of this process as ``psygym ...``."""
    return shlex.join(["psygym", *sys.argv[1:]])


def write_command(run_dir: Path, command: str | None = None) -> None:
    """Record the exact command line that made a run in ``command.txt``."""
    atomic_write(run_dir / "command.txt", (command or command_text()) + "\n")


def append_command(run_dir: Path, command: str) -> None:
    """Add a command line that went on with a run to its ``command.txt``."""
    with open_append(run_dir / "command.txt") as fh:
        fh.write(command + "\n")


def write_config(run_dir: Path, config: Mapping[str, Any], name: str = "config.json") -> None:
    """Write the resolved settings of a run (strict JSON)."""
    write_json(run_dir / name, dict(config))


def check_run_folder(folder: str | Path, root: str | Path | None = None) -> Path:
    """``folder`` once it is shown to hold no symbolic link (a run a command goes on with).

    Checked before any work, so a link planted in a run folder is refused at once rather than
    after hours of play; every write checks again (:func:`.output.check_output`). ``root``: the
    output folder that ``folder`` must resolve inside (default: ``folder`` itself may be a link,
    as the user named it).

    Raises:
        UnsafeOutputError: one line naming the link and where it leads.
    """
    folder = Path(folder) if root is None else check_folder(folder, root)
    for here, dirs, files in os.walk(folder):
        for name in sorted(dirs + files):
            path = Path(here) / name
            if os.path.islink(path):
                check_output(path)  # raises, naming the link
    return folder


def check_new_or_own(folder: str | Path, marker: str, command: str) -> None:
    """Refuse a non-empty ``folder`` that holds no ``marker`` file: not a run of ``command``.

    A command that writes its files into a folder the user names (``--out``) and resumes the
    run found there calls this first, so files of one's own (notes, another tool's output) are
    never overwritten: a folder is new, empty, or holds ``marker`` (whose settings the command
    then checks, :func:`check_resumable`).

    Raises:
        ValueError: one line naming the folder, a few of its entries and what is allowed.
    """
    path = Path(folder)
    if not path.is_dir() or (path / marker).is_file():
        return
    names = sorted(os.listdir(path))
    if not names:
        return
    shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
    raise ValueError(
        f"{path} is not a {command} run folder: it holds {shown} and no {marker}; allowed: a "
        f"new or empty folder, or a {command} run folder to resume"
    )


CHAIN_MISSING = (
    "the record has no hash chain (it was written by an older psygym); start a new run, as "
    "this one cannot be checked"
)
"""What a resume record written before lines were chained is refused with."""


class RecordError(ValueError):
    """A resume record line that is not what the command wrote (names the file and line)."""


class ResumeRecord:
    """A resume record: one JSON object a line, each chained to the one before by its hash.

    Lines are written as game logs are (:func:`.gamelog.chained_line`: every line carries the
    SHA-256 of the previous line's hash and its own canonical JSON), so a line changed, removed
    or moved by hand breaks the chain there and :meth:`read` refuses it, naming its line number;
    ``check`` validates each line's content. A last line without its newline is the torn line of
    a killed run: it is left out and removed from the file.

    Args:
        path: the record's file (in a run folder; written only through the safe writers).
        check: called with each line's object; a ``ValueError`` it raises is refused with the
            file and line number.
    """

    def __init__(self, path: str | Path, check: Callable[[dict[str, Any]], None] | None = None):
        self.path = Path(path)
        self.check = check
        self._previous: str | None = None

    def read(self) -> list[dict[str, Any]]:
        """Every line's object (without its hash), checked; ``[]`` when there is no file.

        Raises:
            RecordError: a line that is not JSON, breaks the chain, or fails ``check``; a
                record without a chain (:data:`CHAIN_MISSING`).
            UnsafeOutputError: the record is a link.
        """
        from psygym_experiments.harness.gamelog import GENESIS, HASH_KEY, ChainError, verify_chain

        check_output(self.path)
        self._previous = GENESIS
        if not self.path.is_file():
            return []
        data = self.path.read_bytes()
        lines = data.split(b"\n")
        if lines.pop():  # a torn line after the last newline: removed, so none follows it
            write_bytes(self.path, data[: data.rfind(b"\n") + 1])
        rows: list[dict[str, Any]] = []
        try:
            for n, obj in verify_chain(self._parse(lines), str(self.path), CHAIN_MISSING):
                row = {k: v for k, v in obj.items() if k != HASH_KEY}
                if self.check is not None:
                    try:
                        self.check(row)
                    except (ValueError, TypeError, KeyError) as exc:
                        msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
                        raise RecordError(f"{self.path}: line {n}: {msg}") from None
                rows.append(row)
                self._previous = obj[HASH_KEY]
        except ChainError as exc:
            raise RecordError(str(exc)) from None
        return rows

    def _parse(self, lines: list[bytes]) -> Iterable[tuple[int, dict[str, Any]]]:
        for n, raw in enumerate(lines, start=1):
            try:
                obj = json.loads(raw.decode("utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError) as exc:
                why = exc.msg if isinstance(exc, json.JSONDecodeError) else "not UTF-8"
                raise RecordError(
                    f"{self.path}: line {n}: not a JSON line ({why}); this file is written "
                    "only by psygym"
                ) from None
            if not isinstance(obj, dict):
                raise RecordError(f"{self.path}: line {n}: expected a JSON object")
            yield n, obj

    def rewrite(self, rows: Iterable[Mapping[str, Any]]) -> None:
        """Write ``rows`` as the whole record (so new lines never follow a torn one)."""
        from psygym_experiments.harness.gamelog import GENESIS, chained_line

        previous, parts = GENESIS, []
        for row in rows:
            text, previous = chained_line(previous, row)
            parts.append(text)
        atomic_write(self.path, "".join(parts))
        self._previous = previous

    def append(self, row: Mapping[str, Any]) -> None:
        """Append one finished piece of work (one chained line)."""
        from psygym_experiments.harness.gamelog import chained_line

        if self._previous is None:
            self.read()
        assert self._previous is not None
        text, digest = chained_line(self._previous, row)
        with open_append(self.path) as fh:
            fh.write(text)
        self._previous = digest


def score_bounds(rules: Any) -> tuple[float, float]:
    """Seat 0's lowest and highest score in ``rules`` (``game_info``; infinite: undeclared)."""
    info = rules.game_info()
    return float(info.min_utility), float(info.max_utility)


def check_score(value: float, bounds: tuple[float, float], what: str) -> None:
    """Refuse a recorded score outside ``bounds`` (:func:`score_bounds`) in one line.

    Raises:
        ValueError: ``what`` and the value, and the scenario's bounds.
    """
    lo, hi = bounds
    if not lo <= value <= hi:
        raise ValueError(f"{what} is {value:g}, outside the scenario's scores {lo:g} to {hi:g}")


def shape_error(exc: Any, shape: str, prefix: str = "") -> str:
    """One line for the first problem of a pydantic ``ValidationError`` of a record line.

    ``prefix``: the field the validated value sits in (``"task"``), named before its place.
    """
    err = exc.errors()[0]
    loc = [str(x) for x in err.get("loc", ()) if not str(x).startswith(("tuple[", "list["))]
    where = ".".join([prefix, *loc] if prefix else loc)
    msg = str(err.get("msg", "invalid")).removeprefix("Value error, ")
    return f"{where or 'the line'}: {msg} (a line is {shape})"


def check_resumable(
    config_path: Path, settings: Mapping[str, Any], keys: tuple[str, ...], retry: str
) -> None:  # fmt: skip
    """Refuse in one line to resume a run whose stored ``keys`` differ from ``settings``.

    Nothing happens when ``config_path`` does not exist (a new run). ``retry`` ends the message:
    what the user can do instead (``"or another --out"``).
    """
    if not config_path.is_file():
        return
    old = read_config(config_path)
    diff = [k for k in keys if old.get(k) != settings.get(k)]
    if diff:
        raise ValueError(
            f"{config_path.parent} holds a run with other settings ({', '.join(diff)}); "
            f"give the same settings to resume it, {retry}"
        )


def read_config(path: Path) -> dict[str, Any]:
    """A run's ``config.json`` (a JSON object), or one line saying why it is not one."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path}: not a readable JSON settings file ({exc})") from None
    if not isinstance(doc, dict):
        raise ValueError(f"{path}: expected a JSON object of settings")
    return doc


def given_options(ctx: Any, names: Iterable[str]) -> set[str]:
    """Which of the command's options ``names`` were given (not left at their defaults).

    ``ctx`` is the command's ``typer.Context``: a resumed run takes every option not given
    from its folder's settings, and refuses one given with another value.
    """
    # By name: typer may bring its own copy of click's ParameterSource.
    left = ("DEFAULT", "DEFAULT_MAP")
    return {n for n in names if getattr(ctx.get_parameter_source(n), "name", "DEFAULT") not in left}


def append_metrics(path: Path, row: Mapping[str, Any], fields: tuple[str, ...]) -> None:
    """Append one row to a metrics CSV file (with its header when the file is new).

    A file begun with fewer ``fields`` (by an older version) keeps its own header and columns.
    """
    check_output(path)
    new = not path.is_file()
    if not new:
        with path.open(newline="") as f:
            header = next(csv.reader(f), None)
        fields = tuple(header) if header else fields
    with open_append(path, newline="") as f:
        writer = csv.DictWriter(f, fieldnames=fields)
        if new:
            writer.writeheader()
        writer.writerow({k: row.get(k, "") for k in fields})


def read_metrics(path: Path) -> list[dict[str, str]]:
    """The rows of a metrics CSV file (empty when there is none)."""
    if not path.is_file():
        return []
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


def invoked_as_cli() -> bool:
    """Whether this process is the ``psygym`` command (so ``sys.argv`` is its command line)."""
    return Path(sys.argv[0]).stem in ("psygym", "cli")
