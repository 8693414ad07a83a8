"""``psygym serve``: play against an AI opponent in the browser.

A local web app (FastAPI + uvicorn, one server-rendered page with a little JavaScript; see
:mod:`psygym_experiments.serve.app` for why) over the edition-blind game store of
:mod:`psygym_experiments.serve.games`. It binds to 127.0.0.1 unless told otherwise. Games are
logged to ``<runs-dir>/serve/games/<id>.jsonl`` as they are played; ``psygym replay`` accepts
those logs.
"""

from __future__ import annotations

from typing import Any

import typer


def serve(
    host: str = typer.Option("127.0.0.1", help="Address to bind (default: this machine only)."),
    port: int = typer.Option(8000, help="Port to listen on."),
    runs_dir: str = typer.Option("runs", help="Game logs go to <runs-dir>/serve/games/."),
    idle_minutes: float = typer.Option(
        30.0, min=0.1, help="A game untouched this long is closed and dropped from memory."
    ),
) -> None:
    """Play against an AI opponent in the browser (a local web app)."""
    import uvicorn
    from psygym_experiments.serve.app import create_app
    from psygym_experiments.serve.games import GameStore

    store = GameStore(runs_dir, idle_seconds=idle_minutes * 60)
    typer.echo(f"psygym serve: open http://{host}:{port}/ (Ctrl+C stops the server)")
    uvicorn.run(create_app(store), host=host, port=port, log_level="warning")


def register(app: Any) -> None:
    """Add the ``serve`` command to the ``psygym`` app."""
    app.command("serve")(serve)


__all__ = ["register", "serve"]
