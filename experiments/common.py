"""Helpers shared by the commands: clean error exits, output formats, run folders."""

from __future__ import annotations

import csv
import io
import json
import shlex
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table as RichTable

from psygym.odds import Table

# Piped output (tests, files) gets a wide fixed width so tables do not wrap into columns of "…".
console = Console(width=None if sys.stdout.isatty() else 160)
err_console = Console(stderr=True)

FORMATS = ("table", "csv", "json", "markdown")

T = TypeVar("T")


@contextmanager
def user_errors() -> Iterator[None]:
    """Turn expected errors (bad scenario, unknown agent, bad value) into one red line, exit 2."""
    try:
        yield
    except (ValueError, FileNotFoundError, KeyError) as exc:
        msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else str(exc)
        err_console.print(f"[red]error:[/red] {escape(str(msg))}", highlight=False, soft_wrap=True)
        raise typer.Exit(2) from None


def check_choice(value: str, allowed: Sequence[str], option: str) -> str:
    """Return ``value`` if allowed, else raise a ``ValueError`` naming option and choices."""
    if value not in allowed:
        raise ValueError(f"{option} {value!r} is not one of: {', '.join(allowed)}")
    return value


def render_tables(tables: Sequence[Table], fmt: str) -> str:
    """Format odds/result tables as ``table`` (rich), ``csv``, ``json`` or ``markdown`` text."""
    check_choice(fmt, FORMATS, "--format")
    if fmt == "csv":
        out = io.StringIO()
        for i, t in enumerate(tables):
            if i:
                out.write("\n")
            writer = csv.writer(out, lineterminator="\n")
            writer.writerow(t.columns)
            writer.writerows(t.text_rows())
        return out.getvalue()
    if fmt == "json":
        doc = [
            {
                "name": t.name,
                "title": t.title,
                "columns": t.columns,
                "rows": t.text_rows(),
                "note": t.note,
            }
            for t in tables
        ]
        return json.dumps(doc[0] if len(doc) == 1 else doc, indent=2)
    if fmt == "markdown":
        parts = []
        for t in tables:
            lines = [
                f"### {t.title}",
                "",
                "| " + " | ".join(t.columns) + " |",
                "|" + "---|" * len(t.columns),
            ]
            lines += ["| " + " | ".join(r) + " |" for r in t.text_rows()]
            if t.note:
                lines += ["", t.note]
            parts.append("\n".join(lines))
        return "\n\n".join(parts) + "\n"
    buf = Console(record=True, width=160, file=io.StringIO())
    for t in tables:
        rt = RichTable(title=t.title, caption=t.note or None)
        for c in t.columns:
            rt.add_column(c, justify="right")
        for r in t.text_rows():
            rt.add_row(*r)
        buf.print(rt)
    return buf.export_text()


def new_run_dir(parent: str | Path, prefix: str) -> Path:
    """Create ``parent/<prefix>_<n>`` with the next free ``n``."""
    base = Path(parent)
    base.mkdir(parents=True, exist_ok=True)
    n = 1
    while (base / f"{prefix}_{n}").exists():
        n += 1
    path = base / f"{prefix}_{n}"
    path.mkdir()
    return path


def rate(x: float, digits: int = 1) -> str:
    """A rate as a percentage, or "-" when undefined (nan)."""
    return "-" if x != x else f"{x:.{digits}%}"


def timestamp() -> str:
    """Local time as ``YYYYmmdd-HHMMSS`` for run folder names."""
    return datetime.now().strftime("%Y%m%d-%H%M%S")


def write_command(run_dir: Path) -> None:
    """Record the exact command line that made a run."""
    (run_dir / "command.txt").write_text(shlex.join(["psygym", *sys.argv[1:]]) + "\n")


def split_names(text: str) -> list[str]:
    """Split a comma-separated option (``"a,b,c"``) into names, dropping blanks."""
    return [t.strip() for t in text.split(",") if t.strip()]


def progress(
    iterable: Sequence[T] | range, description: str, *, disable: bool = False
) -> Iterator[T]:
    """Iterate with a rich progress bar (to stderr, so CSV/JSON on stdout stay clean)."""
    from rich.progress import track

    yield from track(
        iterable, description=description, console=err_console, disable=disable, transient=True
    )


def strict_json(obj: Any) -> Any:
    """A copy of nested dicts/lists with NaN and infinities replaced by ``None`` (valid JSON)."""
    if isinstance(obj, dict):
        return {k: strict_json(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [strict_json(v) for v in obj]
    if isinstance(obj, float) and (obj != obj or obj in (float("inf"), float("-inf"))):
        return None
    return obj


def json_default(obj: Any) -> Any:
    """``json.dumps`` fallback for numpy scalars, paths and fractions."""
    try:
        import numpy as np

        if isinstance(obj, np.generic):
            return obj.item()
    except ImportError:  # pragma: no cover
        pass
    if isinstance(obj, Path):
        return str(obj)
    return float(obj)
