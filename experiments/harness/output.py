"""The one file writer of the commands, the JSON/CSV text (strict JSON: no NaN), and tables.

Every file a command writes in its output folder goes through :func:`atomic_write`,
:func:`write_bytes`, :func:`open_append`, :func:`open_new`, :func:`save_figure` or is checked
first with :func:`check_output`: a file that is a symbolic link, or whose folder leads out of the
output folder through one, is refused in one line naming it (:class:`UnsafeOutputError`), so a
link planted in a run folder never makes a command write (or append) to a file elsewhere. Whole
files are written to a fresh temporary file and moved into place, so a kill never leaves half a
file; appends are opened without following links (``O_NOFOLLOW``).
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import stat
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

from psygym.file_writes import kind_of, link_text, obstacle, replace_with
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


def write_json(
    path: str | Path, obj: Any, *, strict: bool = True, root: str | Path | None = None
) -> None:
    """Write ``obj`` as indented JSON with a final newline (:func:`atomic_write`)."""
    atomic_write(path, json_text(obj, strict=strict) + "\n", root=root)


# ----------------------------------------------------------------------------- safe writing
class UnsafeOutputError(ValueError):
    """A file a command would write through a symbolic link, or outside its output folder."""


_NO_LINKS = (
    "a command writes only inside its output folder and never through a link (remove the link "
    "or start a new run)"
)


def _refuse(path: Path, why: str) -> UnsafeOutputError:
    return UnsafeOutputError(f"refusing to write {path}: {why}; {_NO_LINKS}")


def _escape(base: Path, here: Path) -> Path | None:
    """The first folder from ``base`` (excluded) down to ``here`` that leads outside ``base``."""
    inner = base.resolve()
    for p in [*reversed(here.parents), here]:
        if p.is_relative_to(base) and p != base and not p.resolve().is_relative_to(inner):
            return p
    return None


def check_output(path: str | Path, root: str | Path | None = None) -> Path:
    """``path`` once it is shown safe to write: no link, and inside ``root``.

    The file itself must not be a symbolic link (nor a FIFO, device or folder). Its folder must
    resolve inside ``root`` (the output folder; default: the file's own folder), so a folder of
    the run that is a link to elsewhere is refused too; ``root`` itself may be a link (the user
    chose it).

    Raises:
        UnsafeOutputError: one line naming the file and the link.
    """
    path = Path(os.path.abspath(path))
    base = Path(os.path.abspath(root)) if root is not None else path.parent
    if not path.is_relative_to(base) or path == base:
        raise _refuse(path, f"it is not inside the output folder {base}")
    if os.path.islink(path):
        raise _refuse(path, f"it is {link_text(path)}")
    far = _escape(base, path.parent)
    if far is not None:
        what = link_text(far) if os.path.islink(far) else "not inside it"
        raise _refuse(path, f"its folder {far} is {what}, outside the output folder {base}")
    what = obstacle(path)  # a new file (its writer names a bad folder) or a regular one: None
    if what is not None:
        raise _not_regular(path, what)
    return path


def _not_regular(path: Path, what: str) -> UnsafeOutputError:
    return UnsafeOutputError(f"refusing to write {path}: it is {what}; a command writes only "
                             "regular files (name a new file instead)")  # fmt: skip


def check_folder(folder: str | Path, root: str | Path) -> Path:
    """``folder`` once it is shown to stay inside ``root`` (it need not exist yet).

    Raises:
        UnsafeOutputError: ``folder``, or a folder between ``root`` and it, is a link that
            leads outside ``root``.
    """
    here, base = Path(os.path.abspath(folder)), Path(os.path.abspath(root))
    if not here.is_relative_to(base):
        raise _refuse(here, f"it is not inside the output folder {base}")
    far = _escape(base, here)
    if far is not None:
        what = link_text(far) if os.path.islink(far) else "not inside it"
        who = "it" if far == here else str(far)
        raise _refuse(here, f"{who} is {what}, outside the output folder {base}")
    return Path(folder)


def output_folder(folder: str | Path, root: str | Path) -> Path:
    """Make ``folder`` (and its parents) once :func:`check_folder` passes."""
    check_folder(folder, root).mkdir(parents=True, exist_ok=True)
    return Path(folder)


def _open_fd(path: Path, flags: int) -> int:
    """``os.open`` without following a link at ``path`` (refused in one line)."""
    try:
        return os.open(path, flags | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666)
    except OSError as exc:
        if os.path.islink(path):
            raise _refuse(path, f"it is {link_text(path)}") from None
        raise exc


def _one_file(fd: int, path: Path) -> None:
    """Refuse an opened file that is not a regular file or has other names (hard links)."""
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise _not_regular(path, kind_of(st.st_mode))
    if st.st_nlink > 1:
        os.close(fd)
        raise _refuse(path, f"it has {st.st_nlink - 1} other hard link(s)")


def write_bytes(path: str | Path, data: bytes, *, root: str | Path | None = None) -> None:
    """Write ``data`` to ``path`` through a fresh temporary file moved into place.

    The temporary file is created exclusively under a name no file has, never through a link,
    and only it is removed if the write fails (:func:`psygym.file_writes.replace_with`).

    Raises:
        UnsafeOutputError: ``path`` is not safe to write (:func:`check_output`).
        ValueError: ``path`` (given as text) ends with a slash, so it names a folder.
        FileNotFoundError: ``path``'s folder does not exist (the message names it).
        NotADirectoryError: a file stands where a folder of ``path`` should be.
        PermissionError: ``path``'s folder may not be written.
    """
    given = str(path)
    if isinstance(path, str) and path.endswith(("/", os.sep)):
        raise ValueError(f"cannot write {given}: a name ending with a slash is a folder's; "
                         "name a file")  # fmt: skip
    path = check_output(path, root)
    try:
        replace_with(path, data)
    except (FileNotFoundError, NotADirectoryError):
        raise _folder_error(Path(given)) from None
    except PermissionError:
        raise PermissionError(
            f"cannot write {given}: no permission to make a file in its folder {path.parent}"
        ) from None


def _folder_error(given: Path) -> OSError:
    """Why ``given``'s folder cannot hold a file: the first folder missing, or a file instead."""
    folder = given.parent
    for p in [*reversed(folder.parents), folder]:
        if p.is_dir():
            continue
        if p.exists():
            return NotADirectoryError(f"cannot write {given}: {p} is a file, not a folder")
        break
    return FileNotFoundError(f"cannot write {given}: its folder {folder} does not exist")


def atomic_write(path: str | Path, text: str, *, root: str | Path | None = None) -> None:
    """Write ``text`` (UTF-8, newlines as given) like :func:`write_bytes`."""
    write_bytes(path, text.encode("utf-8"), root=root)


def open_append(
    path: str | Path, *, root: str | Path | None = None, newline: str | None = None
) -> IO[str]:
    """Open ``path`` to append text (created if missing) without following a link.

    Raises:
        UnsafeOutputError: ``path`` is a link, not a regular file, has other hard links, or
            leads outside ``root``.
    """
    path = check_output(path, root)
    fd = _open_fd(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    _one_file(fd, path)
    return os.fdopen(fd, "a", encoding="utf-8", newline=newline)


def open_new(path: str | Path, *, root: str | Path | None = None) -> IO[str]:
    """Create ``path`` for writing text; it must not exist (not even as a link).

    Raises:
        FileExistsError: ``path`` exists (another process took the name: pick the next).
        UnsafeOutputError: ``path`` leads outside ``root``.
    """
    path = check_output(path, root)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666)
    return os.fdopen(fd, "w", encoding="utf-8")


def save_figure(
    fig: Any, path: str | Path, *, root: str | Path | None = None, **kwargs: Any
) -> Path:
    """``fig.savefig`` to ``path`` (format from its suffix) through :func:`write_bytes`."""
    buf = io.BytesIO()
    fig.savefig(buf, format=Path(path).suffix.lstrip(".") or "png", **kwargs)
    write_bytes(path, buf.getvalue(), root=root)
    return Path(path)


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
