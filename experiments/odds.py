"""``psygym odds``: one exact odds table of an edition, as a table, CSV, JSON or Markdown.

Each edition declares its tables by name (``Edition.odds``); one call prints exactly one table,
so ``--format csv`` is always one CSV file.
"""

from __future__ import annotations

import typer
from psygym_experiments.common import console, edition_option, user_errors
from psygym_experiments.harness.output import FORMATS, render_tables

from psygym.edition import editions, get


def _tables_help() -> str:
    listed = "; ".join(f"{e.id}: {', '.join(e.odds)}" for e in editions() if e.odds)
    return f"Which table (default: the edition's first). {listed}."


def odds(
    edition: str = edition_option(),
    table: str | None = typer.Option(None, "--table", help=_tables_help()),
    fmt: str = typer.Option("table", "--format", help=f"Output format: {', '.join(FORMATS)}."),
    max_dice: int = typer.Option(
        10,
        min=1,
        max=30,
        help="Largest number of dice shown, in the tables that count dice (7th: casting, deny); "
        "the other tables ignore it.",
    ),
    deny: bool = typer.Option(False, "--deny", help="Shortcut for --table deny."),
    generation: bool = typer.Option(False, "--generation", help="Shortcut for --table generation."),
) -> None:
    """Print one exact odds table of an edition (--table picks which)."""
    with user_errors():
        shortcuts = [name for name, on in (("deny", deny), ("generation", generation)) if on]
        if len(shortcuts) + (table is not None) > 1:
            raise ValueError("give one of --table, --deny and --generation")
        chosen = table or (shortcuts[0] if shortcuts else None)
        text = render_tables([get(edition).odds_table(chosen, max_dice=max_dice)], fmt)
    if fmt == "table":
        console.print(text, end="", highlight=False)
    else:
        typer.echo(text, nl=not text.endswith("\n"))


def register(app: typer.Typer) -> None:
    """Add the ``odds`` command."""
    app.command("odds")(odds)
