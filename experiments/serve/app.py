"""The web app of ``psygym serve``: FastAPI, one server-rendered page and a small JSON API.

Why this stack: FastAPI (on Starlette) is well kept, validates nothing magic for us (the game
store does), serves Jinja2 templates and static files, and its ``TestClient`` drives the same
app in tests; uvicorn serves it. The page is one Jinja2 template plus about two hundred lines
of plain JavaScript calling the JSON API: no build step, no framework, and no file from a CDN
(the app works offline). The same API drives the load test and any script.

Routes (every error, also an unexpected one, is a 4xx or 5xx with a one-line JSON body
``{"error": "..."}``; the traceback of an unexpected one goes to the server's log only):

- ``GET /``: the page. ``GET /api/options``: editions, scenarios and opponents.
- ``POST /api/scenarios``: upload a scenario TOML (the raw file as the body, sent as
  ``application/toml``), validated as ``psygym`` validates scenario files, except that it may
  not name a file on the server; answers ``{"upload": id, "edition", "name"}``.
- ``POST /api/games``: start a game (``application/json``: edition, scenario or upload,
  opponent, seat, seed, rounds); answers the game's view
  (:meth:`~psygym_experiments.serve.games.Game.view`).
- ``GET /api/games/{id}``: the view. ``POST /api/games/{id}/actions`` (``application/json``,
  ``{"action": n, "step": s}``): play one action, chosen in the view whose ``step`` is ``s``
  (409 if the game has moved on: a repeated or stale request is never applied to a later
  decision). ``GET /api/games/{id}/hint``: values of the options.
- ``GET /api/games/{id}/log``: the JSON Lines game log, once the game is over.

Only the server's own page (or a script on this machine) can drive it: the server listens on
127.0.0.1, which every web page the user visits can also send requests to, so
:class:`FrontDoor` refuses a request from anywhere else before it is read (see there), and the
JSON and TOML bodies are types a page of another site cannot send without the browser asking
first (a form or a ``text/plain`` body gets 415).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Iterable
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates
from psygym_experiments.serve.front_door import FrontDoor, read_body, read_json
from psygym_experiments.serve.games import BadRequest
from psygym_experiments.serve.store import GameStore, integer_field
from starlette.exceptions import HTTPException as StarletteHTTPException

HERE = Path(__file__).resolve().parent

SWEEP_SECONDS = 30.0
"""How often idle games are looked for."""

UPLOAD_TYPE = "application/toml"
"""The type a scenario upload is sent as (the page sends it; a form cannot)."""


def create_app(store: GameStore, hosts: Iterable[str] = ()) -> FastAPI:
    """The app over ``store`` (its games, uploads and logs), behind a :class:`FrontDoor`.

    ``hosts`` are the names the server was told to listen on (``--host``): requests naming
    them are its own, besides those naming the address a connection came in on.

    Request handlers are plain functions, so FastAPI runs them in its thread pool: a slow hint
    never blocks other games. Each game's ``lock`` serialises requests on that game.
    """

    @contextlib.asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        async def sweep() -> None:
            while True:
                await asyncio.sleep(SWEEP_SECONDS)
                await asyncio.to_thread(store.sweep)

        task = asyncio.create_task(sweep())
        try:
            yield
        finally:
            task.cancel()
            store.close()

    app = FastAPI(
        title="psygym serve", docs_url=None, redoc_url=None, openapi_url=None, lifespan=lifespan
    )
    app.add_middleware(FrontDoor, names=list(hosts))
    templates = Jinja2Templates(directory=str(HERE / "templates"))
    app.mount("/static", StaticFiles(directory=str(HERE / "static")), name="static")
    app.state.store = store

    @app.exception_handler(BadRequest)
    async def bad_request(_request: Request, exc: BadRequest) -> JSONResponse:
        return JSONResponse({"error": _one_line(str(exc))}, status_code=exc.status)

    @app.exception_handler(RequestValidationError)
    async def invalid(_request: Request, exc: RequestValidationError) -> JSONResponse:
        first = exc.errors()[0] if exc.errors() else {}
        where = ".".join(str(x) for x in first.get("loc", ()))
        msg = f"invalid request: {where} {first.get('msg', '')}".strip()
        return JSONResponse({"error": _one_line(msg)}, status_code=422)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(_request: Request, exc: StarletteHTTPException) -> JSONResponse:
        return JSONResponse({"error": _one_line(str(exc.detail))}, status_code=exc.status_code)

    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception) -> JSONResponse:
        # Starlette re-raises the exception after this answer, so the server logs its traceback;
        # the client gets one line that names no file and no code.
        name = type(exc).__name__
        return JSONResponse(
            {"error": f"internal error ({name}) on {request.method} {request.url.path}; the "
                      "server's log has the details"},
            status_code=500,
        )  # fmt: skip

    @app.get("/", response_class=HTMLResponse)
    def page(request: Request) -> HTMLResponse:
        """The page: the setup form and the game panel."""
        options = store.options()
        embedded = json.dumps(options).replace("</", "<\\/")  # safe inside <script>
        return templates.TemplateResponse(
            request, "index.html", {"options": options, "options_json": embedded}
        )

    @app.get("/api/options")
    def options() -> list[dict[str, Any]]:
        """Editions with their scenarios and opponents."""
        return store.options()

    @app.post("/api/scenarios")
    async def upload(request: Request) -> dict[str, str]:
        """Validate and keep an uploaded scenario file (the body is the TOML text)."""
        body = await read_body(request, UPLOAD_TYPE)
        return await asyncio.to_thread(store.upload, body)

    @app.post("/api/games")
    async def new_game(request: Request) -> dict[str, Any]:
        """Start a game; answers its view."""
        body = await read_json(request)
        game = await asyncio.to_thread(store.create, body)
        return await asyncio.to_thread(_locked_view, game)

    @app.get("/api/games/{game_id}")
    def view(game_id: str) -> dict[str, Any]:
        """The view of a game."""
        return _locked_view(store.get(game_id))

    @app.post("/api/games/{game_id}/actions")
    async def act(game_id: str, request: Request) -> dict[str, Any]:
        """Play one of the human's legal actions; answers the new view.

        The body is ``{"action": n, "step": s}``, ``s`` the ``step`` of the view ``n`` was
        chosen in.
        """
        body = await read_json(request)
        if not isinstance(body, dict) or "action" not in body or "step" not in body:
            missing = [k for k in ("action", "step") if not isinstance(body, dict) or k not in body]
            raise BadRequest(
                'the body must be {"action": <a legal action>, "step": <the view\'s step>}; '
                f"missing: {', '.join(missing)}"
            )
        step = integer_field(
            body, "step", None, None, "the view's step (an integer)", required=True
        )

        def play() -> dict[str, Any]:
            game = store.get(game_id)
            with game.lock:
                game.play(body["action"], step)
                return game.view()

        return await asyncio.to_thread(play)

    @app.get("/api/games/{game_id}/hint")
    def hint(game_id: str) -> dict[str, Any]:
        """Values of the human's options, marked exact or estimated."""
        game = store.get(game_id)
        with game.lock:
            return game.hint()

    @app.get("/api/games/{game_id}/log")
    def log(game_id: str) -> FileResponse:
        """The game log (JSON Lines, for ``psygym replay``), once the game is over."""
        path = store.log_path(game_id)
        return FileResponse(path, media_type="application/x-ndjson", filename=path.name)

    @app.get("/favicon.ico", include_in_schema=False)
    def favicon() -> FileResponse:
        return FileResponse(HERE / "static" / "favicon.svg", media_type="image/svg+xml")

    return app


def _locked_view(game: Any) -> dict[str, Any]:
    with game.lock:
        return game.view()


def _one_line(text: str) -> str:
    return " ".join(text.split())


__all__ = ["create_app"]
