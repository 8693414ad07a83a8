"""``psygym export``: convert a trusted stable-baselines3 ``.zip`` to psygym's safe model format.

SB3 archives hold pickles, which can run arbitrary code when loaded, so psygym loads them only
with ``--trust-pickle``. Exporting once writes ``<stem>.safetensors`` (the weights) and
``<stem>.json`` (architecture, spaces and metadata) beside the zip, or in ``--out DIR``; every
command then loads that pair without unpickling (``sb3:<stem>.safetensors``).
"""

from __future__ import annotations

import typer
from psygym_experiments.common import console, user_errors


def export(
    model: str = typer.Argument(..., help="The SB3 .zip model to convert.", show_default=False),
    trust_pickle: bool = typer.Option(
        False, "--trust-pickle",
        help="Load the zip although its pickles can run code: only for files you trust.",
    ),
    out: str | None = typer.Option(
        None, "--out", help="Folder for the safe files (default: the zip's folder).",
    ),
) -> None:  # fmt: skip
    """Write a trusted SB3 .zip model as <stem>.safetensors + <stem>.json (loads without pickle)."""
    with user_errors():
        from psygym_agents.sb3 import export_zip

        weights = export_zip(model, out, trust_pickle=True if trust_pickle else None)
    console.print(
        f"wrote {weights} and {weights.with_suffix('.json').name}: use sb3:{weights}",
        highlight=False,
        soft_wrap=True,
    )


def register(app: typer.Typer) -> None:
    """Add the ``export`` command."""
    app.command("export")(export)
