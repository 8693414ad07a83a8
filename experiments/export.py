"""``psygym export``: convert a trusted stable-baselines3 ``.zip`` to psygym's safe model format.

SB3 archives hold pickles, which can run arbitrary code when loaded, so psygym loads them only
with ``--trust-pickle``. Exporting once writes ``<stem>.safetensors`` (the weights) and
``<stem>.json`` (architecture, spaces and metadata) beside the zip, or in ``--out DIR``; every
command then loads that pair without unpickling (``sb3:<stem>.safetensors``).

The model's name must end in ``.zip`` (lowercase): every psygym command that loads an SB3 model
(``--opponent``, ``--init``, the exporter in :mod:`psygym_agents.sb3`) tells one by that suffix,
so a ``.ZIP`` accepted here would be a name no other command takes. Export writes new files
only: a ``<stem>.safetensors`` or ``<stem>.json`` already there is refused (no command has a
``--force``), except the zip's own metadata ``<stem>.json`` beside it, which the export reads
and writes again with the weights' description added.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import typer
from psygym_experiments.common import console, printable, user_errors
from psygym_experiments.harness.model_files import check_new_model


def export(
    model: str = typer.Argument(..., help="The SB3 .zip model to convert.", show_default=False),
    trust_pickle: bool = typer.Option(
        False, "--trust-pickle",
        help="Load the zip although its pickles can run code: only for files you trust.",
    ),
    out: str | None = typer.Option(
        None, "--out",
        help="Folder for the safe files (default: the zip's folder); they must not exist yet.",
    ),
) -> None:  # fmt: skip
    """Write a trusted SB3 .zip model as <stem>.safetensors + <stem>.json (loads without pickle)."""
    with user_errors():
        from psygym_agents.sb3 import export_zip

        check_export(Path(model), None if out is None else Path(out))
        weights = export_zip(model, out, trust_pickle=True if trust_pickle else None)
    use = shlex.quote(f"sb3:{weights}")  # pasted into a shell as one argument
    text = f"wrote {weights} and {weights.with_suffix('.json').name}: use {use}"
    console.print(
        text if text.isprintable() else printable(text),  # spaces kept, control codes escaped
        markup=False,
        highlight=False,
        soft_wrap=True,
    )


def check_export(model: Path, out: Path | None) -> None:
    """Refuse, before the zip is opened, a model that is not a ``.zip`` file or files in the way.

    Raises:
        ValueError: ``model`` is a folder or its name does not end in ``.zip``; or a file the
            export would write exists already (other than the zip's own metadata beside it), or
            is a link (:func:`.harness.model_files.check_new_model`).
    """
    from psygym_agents.safe_model import safe_paths

    if model.is_dir():
        raise ValueError(
            f"{model} is a folder, not a model file; give the SB3 .zip file to convert"
        )
    if not model.is_file():
        return  # the exporter says there is no such file
    if model.suffix != ".zip":
        rename = (
            f"; rename it to {model.with_suffix('.zip').name}"
            if model.suffix.lower() == ".zip"
            else ""
        )
        raise ValueError(
            f"{model} is not a stable-baselines3 .zip model: its name must end in .zip "
            f"(lowercase, the suffix every psygym command knows an SB3 model by){rename}"
        )
    dest = out if out is not None else model.parent
    own = model.with_suffix(".json")
    meta = safe_paths(dest / model.stem)[1]  # where export_zip writes the metadata
    reused = None
    if meta.is_file() and not meta.is_symlink() and own.is_file() and meta.samefile(own):
        if not _json_object(own):
            raise ValueError(
                f"{meta} is not the zip's metadata (a JSON object), and the export would write "
                "over it; remove it there, or give another --out folder"
            )
        reused = own  # the zip's metadata: read by the export and written again, extended
    check_new_model(dest / model.stem, "export", "give another --out folder", reused=reused)


def _json_object(path: Path) -> bool:
    """Whether ``path`` holds a JSON object."""
    try:
        return isinstance(json.loads(path.read_text(encoding="utf-8")), dict)
    except (OSError, ValueError, RecursionError):
        return False


def register(app: typer.Typer) -> None:
    """Add the ``export`` command."""
    app.command("export")(export)
