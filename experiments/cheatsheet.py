"""``psygym cheatsheet``: a printable one-page sheet of the exact dice-to-commit and deny tables.

The tables come from the edition agents' ``answer_tables`` tool (the exact solver on small
synthetic situations built from the edition's own rules); each is titled with the situation it
assumes. The page is written as a PNG and a PDF (A4 landscape) with matplotlib, into a run folder
``<runs-dir>/cheatsheet-<time>/`` (with ``command.txt``) like the other commands' outputs, or to
the file stem ``--out`` names; never through a symbolic link.
"""

from __future__ import annotations

import os
import textwrap
from pathlib import Path
from typing import Annotated, Any

import typer
from psygym_experiments.common import console, user_errors
from psygym_experiments.harness.output import save_figure

SHEET_SIZE = "sheet"
"""The table size asked of the ``answer_tables`` tool."""


def _draw_table(ax: Any, table: dict[str, Any], font: float) -> None:
    """One answer table on ``ax``: title, assumed situation, the grid and how to read it."""
    ax.axis("off")
    wrap = 190 if len(table["header"]) > 4 else 100
    ax.set_title(table["title"], fontsize=font + 2.5, fontweight="bold", loc="left")
    text = textwrap.fill("Assumes: " + table["assumes"], wrap)
    lines = text.count("\n") + 1
    ax.text(0, 1.0, text, fontsize=font, va="top", transform=ax.transAxes)
    top = 1.0 - 0.07 * lines - 0.02
    grid = ax.table(
        cellText=table["rows"],
        colLabels=[textwrap.fill(h, 18) for h in table["header"]],
        loc="lower center",
        cellLoc="center",
        bbox=(0.0, 0.09, 1.0, top - 0.09),
    )
    grid.auto_set_font_size(False)
    grid.set_fontsize(font)
    for (r, _c), cell in grid.get_celld().items():
        cell.set_linewidth(0.3)
        if r == 0:
            cell.set_facecolor("#e6e6e6")
            cell.set_text_props(fontweight="bold")
        elif r % 2 == 0:
            cell.set_facecolor("#f7f7f7")
    ax.text(0, 0.0, textwrap.fill(table["note"], wrap), fontsize=font - 0.5, va="top",
            style="italic", transform=ax.transAxes)  # fmt: skip


def draw_sheet(tables: list[dict[str, Any]], title: str, stem: Path) -> list[Path]:
    """Draw ``tables`` on one A4 landscape page; write ``<stem>.png`` and ``<stem>.pdf``.

    Returns:
        The two paths.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if not tables:
        raise ValueError("no tables to draw")
    n = len(tables)
    cols = 2 if n > 1 else 1
    rows = -(-n // cols)
    fig = plt.figure(figsize=(11.69, 8.27))
    fig.suptitle(title, fontsize=13, fontweight="bold")
    heights = [max(len(t["rows"]) for t in tables[k * cols : (k + 1) * cols]) + 8
               for k in range(rows)]  # fmt: skip
    gs = fig.add_gridspec(rows, cols, height_ratios=heights, hspace=0.45, wspace=0.08,
                          left=0.03, right=0.985, top=0.92, bottom=0.04)  # fmt: skip
    font = 6.5 if max(heights) > 16 else 7.5
    for k, table in enumerate(tables):
        r, c = divmod(k, cols)
        if k == n - 1 and n % cols:
            ax = fig.add_subplot(gs[r, :])
        else:
            ax = fig.add_subplot(gs[r, c])
        _draw_table(ax, table, font)
    stem = Path(stem)
    stem.parent.mkdir(parents=True, exist_ok=True)
    # Appended, not ``with_suffix``: a stem such as ``army.v2`` or ``sheet.7th`` keeps its dot.
    out = [stem.with_name(stem.name + ".png"), stem.with_name(stem.name + ".pdf")]
    save_figure(fig, out[0], dpi=150)
    save_figure(fig, out[1])
    plt.close(fig)
    return out


def sheet_stem(out: str | Path) -> Path:
    """The file stem ``--out`` names: ``.png``/``.pdf`` are appended, a given one dropped first.

    Raises:
        ValueError: ``out`` is empty, ends with a slash, is ``.`` or ``..``, or is an existing
            folder (one line: the sheet is two files, so ``--out`` names a file stem).
    """
    text = str(out)
    last = text.replace(os.sep, "/").rsplit("/", 1)[-1]
    if not text:
        what = "empty"
    elif not last:
        what = "a folder name (it ends with a slash)"
    elif last in (".", "..") or Path(text).is_dir():
        what = "a folder"
    else:
        what = ""
    if what:
        example = f"{text.rstrip('/' + os.sep)}/cheatsheet" if text else "cheatsheet"
        raise ValueError(
            f"--out {text!r} is {what}, not a file stem: the sheet is two files, <stem>.png "
            f"and <stem>.pdf; give a stem such as {example}"
        )
    stem = Path(text)
    if stem.suffix.lower() in (".png", ".pdf"):
        stem = stem.with_suffix("")
    return stem


def write_cheatsheet(
    edition: str, out: str | Path | None = None, size: str = SHEET_SIZE,
    runs_dir: str | Path = "runs",
) -> list[Path]:  # fmt: skip
    """Compute the edition's answer tables and write the one-page sheet.

    Args:
        edition: edition id or alias.
        out: file stem (``.png`` and ``.pdf`` are appended to the whole name, a ``.png`` or
            ``.pdf`` it ends with dropped first: :func:`sheet_stem`); default
            ``<runs_dir>/cheatsheet-<time>/cheatsheet-<edition>``, in a new run folder that also
            gets ``command.txt``.
        size: the tool's table size (``quick`` for a small, fast sheet).
        runs_dir: where the run folder goes when ``out`` is not given.

    Raises:
        ValueError: unknown edition, its agents declare no answer tables, or ``out`` is not a
            file stem (:func:`sheet_stem`).
    """
    from psygym_experiments.harness.runs import invoked_as_cli, run_folder, write_command
    from psygym_experiments.report_answers import compute_tables

    from psygym.edition import get

    eid = get(edition).id
    given = None if out is None else sheet_stem(out)  # a bad --out fails before the solving
    tables = compute_tables(eid, size)
    if not tables:
        from psygym_experiments.report_answers import editions_with_tables

        from psygym.edition import editions

        allowed = ", ".join(editions_with_tables([e.id for e in editions()]))
        raise ValueError(f"edition {eid} has no exact answer tables (allowed: {allowed})")
    if given is not None:
        stem = given
    else:
        run = run_folder(runs_dir, "cheatsheet")
        same = f"psygym cheatsheet --edition {eid}" + (" --quick" if size == "quick" else "")
        write_command(run, None if invoked_as_cli() else same)  # in-process: the equivalent
        stem = run / f"cheatsheet-{eid}"
    title = (f"psygym {eid} edition cheat sheet: exact best play in small situations "
             f"(psygym cheatsheet --edition {eid})")  # fmt: skip
    return draw_sheet(tables, title, stem)


def cheatsheet(
    edition: Annotated[
        str,
        typer.Option(help="Edition whose tables to print: 7th or 8th (those with answer tables)."),
    ],
    out: Annotated[
        str | None,
        typer.Option(help="File stem: writes <out>.png and <out>.pdf (a .png or .pdf it ends "
                          "with is dropped first; not a folder) (default: "
                          "<runs-dir>/cheatsheet-<time>/cheatsheet-<edition>)."),
    ] = None,
    quick: Annotated[bool, typer.Option("--quick", help="Smaller tables, in seconds.")] = False,
    runs_dir: Annotated[
        str, typer.Option(help="Folder for the run folder cheatsheet-<time>/ (without --out).")
    ] = "runs",
) -> None:  # fmt: skip
    """A one-page cheat sheet (7th and 8th only): dice to commit and when to deny, solved exactly.

    Only the editions whose agents have exact answer tables have one: the 7th and the 8th.
    """
    with user_errors():
        paths = write_cheatsheet(edition, out, "quick" if quick else SHEET_SIZE, runs_dir)
    for p in paths:
        console.print(f"wrote {p}", highlight=False)


def register(app: typer.Typer) -> None:
    """Add the ``cheatsheet`` command."""
    app.command("cheatsheet")(cheatsheet)


__all__ = ["cheatsheet", "draw_sheet", "register", "sheet_stem", "write_cheatsheet"]
