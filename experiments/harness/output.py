"""The one JSON/CSV writer (strict JSON: no NaN) and the table rendering shared by commands."""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from psygym.odds import Table

FORMATS = ("table", "csv", "json", "markdown")
"""Output formats of :func:`render_tables`."""


def check_choice(value: str, allowed: Sequence[str], option: str) -> str:
    """Return ``value`` if allowed, else raise a ``ValueError`` naming option and choices."""
    if value not in allowed:
        raise ValueError(f"{option} {value!r} is not one of: {', '.join(allowed)}")
    return value


def strict_json(obj: Any) -> Any:
    """A copy of nested dicts/lists that is strict JSON.

    NaN and infinities become ``None``, numpy scalars Python ones.
    """
    if isinstance(obj, dict):
        return {k: strict_json(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [strict_json(v) for v in obj]
    try:
        import numpy as np

        if isinstance(obj, np.generic):
            obj = obj.item()
    except ImportError:  # pragma: no cover
        pass
    if isinstance(obj, float) and not math.isfinite(obj):
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


def json_text(obj: Any, *, indent: int | None = 2, strict: bool = True) -> str:
    """``obj`` as JSON text (``strict``: NaN and infinities become ``null`` first)."""
    return json.dumps(strict_json(obj) if strict else obj, indent=indent, default=json_default)


def write_json(path: Path, obj: Any, *, strict: bool = True) -> None:
    """Write ``obj`` as indented JSON with a final newline."""
    path.write_text(json_text(obj, strict=strict) + "\n")


def csv_cell(value: Any) -> str:
    """One CSV cell: floats with 6 decimals, missing or NaN values empty."""
    if value is None:
        return ""
    try:
        import numpy as np

        floating: tuple[type, ...] = (float, np.floating)
    except ImportError:  # pragma: no cover
        floating = (float,)
    if isinstance(value, floating):
        return "" if not math.isfinite(value) else f"{float(value):.6f}"
    return str(value)


def csv_rows(
    header: Sequence[str], rows: Sequence[Sequence[Any]], *, lineterminator: str = "\n"
) -> str:
    """CSV text of a header and rows of :func:`csv_cell` values."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator=lineterminator)
    writer.writerow(header)
    writer.writerows([csv_cell(v) for v in row] for row in rows)
    return out.getvalue()


def rate(x: float | None, digits: int = 1) -> str:
    """A rate as a percentage, ``-`` when missing or undefined (nan)."""
    return "-" if x is None or not math.isfinite(x) else f"{x:.{digits}%}"


def signed(x: float | None, digits: int = 2) -> str:
    """A number with a sign, ``-`` when missing."""
    return "-" if x is None or not math.isfinite(x) else f"{x:+.{digits}f}"


def _markdown(tables: Sequence[Table]) -> str:
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


def _rich(tables: Sequence[Table]) -> str:
    from rich.console import Console
    from rich.table import Table as RichTable

    buf = Console(record=True, width=160, file=io.StringIO())
    for t in tables:
        rt = RichTable(title=t.title, caption=t.note or None)
        for c in t.columns:
            rt.add_column(c, justify="right")
        for r in t.text_rows():
            rt.add_row(*r)
        buf.print(rt)
    return buf.export_text()


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
        return _markdown(tables)
    return _rich(tables)
