"""``psygym odds``: exact odds tables of an edition, as a table, CSV, JSON or Markdown."""

from __future__ import annotations

import typer
from psygym_experiments.common import console, edition_option, user_errors
from psygym_experiments.harness.output import FORMATS, render_tables

from psygym.edition import get


def odds(
    edition: str = edition_option(),
    fmt: str = typer.Option("table", "--format", help=f"Output format: {', '.join(FORMATS)}."),
    max_dice: int = typer.Option(10, min=1, max=30, help="7th: largest number of dice shown."),
    deny: bool = typer.Option(False, "--deny", help="7th: chance to negate k successes."),
    generation: bool = typer.Option(False, "--generation", help="7th: power generation odds."),
) -> None:
    """Print the exact odds tables of an edition (7th: casting, --deny, --generation)."""
    with user_errors():
        tables = get(edition).odds_tables(max_dice=max_dice, deny=deny, generation=generation)
        text = render_tables(tables, fmt)
    if fmt == "table":
        console.print(text, end="", highlight=False)
    else:
        typer.echo(text, nl=not text.endswith("\n"))


def register(app: typer.Typer) -> None:
    """Add the ``odds`` command."""
    app.command("odds")(odds)
