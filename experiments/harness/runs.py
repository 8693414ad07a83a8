"""The run-folder convention: folder names, the ``config`` file, ``command.txt``, metrics.

A run folder is ``<runs_dir>/<prefix>-<YYYYmmdd-HHMMSS>`` (``-2``, ``-3``... when taken). Runs that
resume (training) live in numbered folders ``<parent>/<prefix>_<n>`` so ``--resume`` can name them.
Every run folder holds ``command.txt`` (the exact command line) and its resolved settings.
"""

from __future__ import annotations

import csv
import json
import os
import re
import shlex
import sys
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from psygym_experiments.harness.output import write_json

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
    if not path.resolve().is_relative_to(root.resolve()):  # pragma: no cover - a symlink
        raise ValueError(f"{path} is outside the output folder {root}")
    return path


def timestamp() -> str:
    """Local time as ``YYYYmmdd-HHMMSS`` for run folder names."""
    return datetime.now().strftime("%Y%m%d-%H%M%S")


def free_name(folder: Path, stem: str, suffix: str = "") -> Path:
    """The first of ``stem<suffix>``, ``stem-2<suffix>``... that does not exist in ``folder``."""
    n = 1
    while True:
        path = folder / (f"{stem}{suffix}" if n == 1 else f"{stem}-{n}{suffix}")
        if not path.exists():
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
    while (base / f"{prefix}_{n}").exists():
        n += 1
    path = base / f"{prefix}_{n}"
    path.mkdir()
    return path


def command_text() -> str:
    """The command line of this process as ``psygym ...``."""
    return shlex.join(["psygym", *sys.argv[1:]])


def write_command(run_dir: Path, command: str | None = None) -> None:
    """Record the exact command line that made a run in ``command.txt``."""
    (run_dir / "command.txt").write_text((command or command_text()) + "\n")


def write_config(run_dir: Path, config: Mapping[str, Any], name: str = "config.json") -> None:
    """Write the resolved settings of a run (strict JSON)."""
    write_json(run_dir / name, dict(config))


def atomic_write(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file (no half-written file on a crash)."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def read_records(path: Path) -> list[dict[str, Any]]:
    """The JSON lines of a resume record (a torn last line from a killed run is skipped)."""
    if not path.is_file():
        return []
    rows = []
    for line in path.read_text().splitlines():
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return rows


def rewrite_records(path: Path, rows: list[Mapping[str, Any]]) -> None:
    """Write ``rows`` as the whole record (so new lines never follow a torn one)."""
    atomic_write(path, "".join(json.dumps(dict(r)) + "\n" for r in rows))


def append_record(path: Path, row: Mapping[str, Any]) -> None:
    """Append one finished piece of work to a resume record (one JSON line)."""
    with path.open("a") as fh:
        fh.write(json.dumps(dict(row)) + "\n")


def check_resumable(
    config_path: Path, settings: Mapping[str, Any], keys: tuple[str, ...], retry: str
) -> None:  # fmt: skip
    """Refuse in one line to resume a run whose stored ``keys`` differ from ``settings``.

    Nothing happens when ``config_path`` does not exist (a new run). ``retry`` ends the message:
    what the user can do instead (``"or another --out"``).
    """
    if not config_path.is_file():
        return
    old = json.loads(config_path.read_text())
    diff = [k for k in keys if old.get(k) != settings.get(k)]
    if diff:
        raise ValueError(
            f"{config_path.parent} holds a run with other settings ({', '.join(diff)}); "
            f"give the same settings to resume it, {retry}"
        )


def append_metrics(path: Path, row: Mapping[str, Any], fields: tuple[str, ...]) -> None:
    """Append one row to a metrics CSV file (with its header when the file is new).

    A file begun with fewer ``fields`` (by an older version) keeps its own header and columns.
    """
    new = not path.is_file()
    if not new:
        with path.open(newline="") as f:
            header = next(csv.reader(f), None)
        fields = tuple(header) if header else fields
    with path.open("a", newline="") as f:
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
