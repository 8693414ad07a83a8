"""``psygym serve``: play against an AI opponent in the browser.

A local web app (FastAPI + uvicorn, one server-rendered page with a little JavaScript; see
:mod:`psygym_experiments.serve.app` for why) over the edition-blind game store of
:mod:`psygym_experiments.serve.games`. It binds to 127.0.0.1 unless told otherwise. Games are
logged to ``<runs-dir>/serve/games/<id>.jsonl`` as they are played; ``psygym replay`` accepts
those logs.
"""

from __future__ import annotations

import socket
from typing import Any

import typer


def serve(
    host: str = typer.Option("127.0.0.1", help="Address to bind (default: this machine only)."),
    port: int = typer.Option(8000, min=1, max=65535, help="Port to listen on (1-65535)."),
    runs_dir: str = typer.Option("runs", help="Game logs go to <runs-dir>/serve/games/."),
    idle_minutes: float = typer.Option(
        30.0, min=0.1, help="A game untouched this long is closed and dropped from memory."
    ),
) -> None:
    """Play against an AI opponent in the browser (a local web app)."""
    import uvicorn
    from psygym_experiments.common import user_errors
    from psygym_experiments.serve.app import create_app
    from psygym_experiments.serve.store import GameStore

    with user_errors():  # e.g. a runs folder whose serve/games is a link: one line, exit 2
        store = GameStore(runs_dir, idle_seconds=idle_minutes * 60)
        sock = listen(host, port)
    shown = f"[{host}]" if ":" in host else host
    typer.echo(f"psygym serve: open http://{shown}:{port}/ (Ctrl+C stops the server)")
    config = uvicorn.Config(create_app(store, hosts=[host]), log_level="warning")
    uvicorn.Server(config).run(sockets=[sock])


def listen(host: str, port: int) -> socket.socket:
    """A TCP socket bound to ``host``:``port``, for uvicorn to listen on.

    Binding here, before the server starts, turns a bad address or a port in use into one line.

    Raises:
        ValueError: ``host`` is not an address of this machine, or the port cannot be bound
            (in use, or reserved), naming both and what to change.
    """
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (socket.gaierror, UnicodeError) as exc:
        why = getattr(exc, "strerror", None) or str(exc)
        raise ValueError(f"--host {host!r} is not an address this machine has ({why})") from None
    family, kind, proto, _name, address = infos[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
    except OSError as exc:
        sock.close()
        why = (exc.strerror or str(exc)).lower()
        raise ValueError(
            f"cannot listen on {host} port {port}: {why}; give another --port or --host"
        ) from None
    return sock


def register(app: Any) -> None:
    """Add the ``serve`` command to the ``psygym`` app."""
    app.command("serve")(serve)


__all__ = ["listen", "register", "serve"]
