"""What ``psygym serve`` lets in: its own page and scripts on this machine, bodies it can afford.

The server listens on 127.0.0.1, and every web page the user visits can send requests there
too. Such a page can send, without the browser asking the server first, a GET, or a POST whose
body is a form or ``text/plain``; with DNS rebinding it can even read answers, under its own
host name. So:

- :class:`FrontDoor` (pure ASGI middleware, before any route) refuses with 403 a request whose
  ``Host`` is not the server's own address, or whose ``Origin`` is not the server's own origin,
  or, for a POST, one the browser marks as sent from another site (``Sec-Fetch-Site``). The
  server's own address is the one the connection came in on (``127.0.0.1:8000``; on a loopback
  address also ``localhost`` and ``[::1]`` with that port) and the names it was told to listen
  on. A request without ``Origin`` (``curl``, a script) is let in when its ``Host`` is right.
- It caps every body at :data:`MAX_BODY_BYTES` while it streams: a ``Content-Length`` over the
  cap is refused (413) before a byte is read, and a body sent without one (chunked) is read
  only until it passes the cap. The rest of a refused body is never kept.
- :func:`read_body` takes a body only as the type its route declares (415 otherwise):
  ``application/json`` and ``application/toml``, which a page of another site cannot send
  without the browser asking first. :func:`read_json` also refuses JSON nested deeper than
  :data:`MAX_JSON_DEPTH` before parsing it.

Every refusal is a one-line JSON error, ``{"error": "..."}``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from psygym_experiments.common import printable
from psygym_experiments.serve.games import MAX_UPLOAD_BYTES, BadRequest
from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

MAX_BODY_BYTES = MAX_UPLOAD_BYTES
"""Largest request body read (a scenario upload; the JSON requests are a few hundred bytes)."""

MAX_JSON_DEPTH = 8
"""Deepest nesting of arrays and objects in a JSON body (the API's bodies are flat objects)."""

LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})
"""Names of this machine's loopback address: on it, each is the server's own."""

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
"""Methods that change nothing (their requests need not come from the page itself)."""

OWN_FETCH_SITES = frozenset({"same-origin", "none"})
"""``Sec-Fetch-Site`` values of a request from the page itself or typed by the user."""


class FrontDoor:
    """Pure ASGI middleware: refuse foreign requests and cap bodies while they stream.

    Args:
        app: the app behind the door.
        names: host names the server was told to listen on (also its own, with the port the
            connection came in on).
        max_body: the largest body read, in bytes.
    """

    def __init__(self, app: ASGIApp, names: Iterable[str] = (), max_body: int = MAX_BODY_BYTES):
        self.app = app
        self.names = frozenset(n.lower().strip("[]") for n in names if n)
        self.max_body = max_body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Let an own request in with its body read (at most :attr:`max_body`), else refuse."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        refused = self.foreign(scope, headers)
        if refused:
            await _error(403, refused)(scope, receive, send)
            return
        length = headers.get("content-length")
        if length is not None and (not length.isdigit() or int(length) > self.max_body):
            status = 413 if length.isdigit() else 400
            await _error(status, self._too_large(length))(scope, receive, send)
            return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":  # the client went away
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_body:
                await _error(413, self._too_large(None))(scope, receive, send)
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body: bytes | None = b"".join(chunks)

        async def replay() -> Message:
            nonlocal body
            if body is None:
                return await receive()
            message, body = {"type": "http.request", "body": body, "more_body": False}, None
            return message

        await self.app(scope, replay, send)

    def own_hosts(self, scope: Scope) -> list[str]:
        """The ``Host`` values that name this server (``host:port``; the bare host on port 80)."""
        server = scope.get("server")
        if not server:
            return []
        host, port = str(server[0]).lower(), int(server[1] or 80)
        names = {host, *self.names}
        if names & LOOPBACK:
            names |= LOOPBACK
        out = []
        for name in sorted(names, key=lambda n: (n != host, n)):
            shown = f"[{name}]" if ":" in name else name
            out += [shown, f"{shown}:{port}"] if port == 80 else [f"{shown}:{port}"]
        return out

    def foreign(self, scope: Scope, headers: Headers) -> str:
        """Why the request is not from this server's own page or machine (``""``: it is)."""
        own = self.own_hosts(scope)
        page = f"http://{own[0]}/" if own else "the address it printed"
        host = headers.get("host", "").lower()
        if host not in own:
            shown = _printable(host) or "none"
            return (
                f"refused: Host {shown} is not this server's address; psygym serve answers "
                f"only its own page, at {page}"
            )
        origin = headers.get("origin")
        if origin is not None and origin.lower() not in {f"http://{h}" for h in own}:
            sender = "a page with no origin (a sandboxed frame or a file)"
            if origin != "null":
                sender = f"the page {_printable(origin)}"
            return (
                f"refused: the request comes from {sender}, not from psygym serve's own page "
                f"at {page}"
            )
        site = headers.get("sec-fetch-site")
        if scope["method"] not in SAFE_METHODS and site is not None and site not in OWN_FETCH_SITES:
            return (
                f"refused: the browser says the request comes from another site "
                f"(Sec-Fetch-Site: {_printable(site)}); psygym serve answers only its own page, "
                f"at {page}"
            )
        return ""

    def _too_large(self, length: str | None) -> str:
        if length is not None and not length.isdigit():
            return f"Content-Length {_printable(length)!r} is not a number of bytes"
        told = f" (Content-Length {length})" if length else ""
        return f"the request body is too large{told}; at most {self.max_body} bytes"


async def read_body(request: Request, media_type: str) -> bytes:
    """The request's body, which must be sent as ``media_type``.

    Raises:
        BadRequest: (415) another ``Content-Type`` or none, naming both.
    """
    sent = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if sent != media_type:
        shown = _printable(sent) or "no Content-Type"
        raise BadRequest(f"the request body must be sent as {media_type}, not {shown}", 415)
    return await request.body()


async def read_json(request: Request) -> Any:
    """The request's JSON body (``{}`` when empty), sent as ``application/json``.

    Raises:
        BadRequest: another type (415), nesting deeper than :data:`MAX_JSON_DEPTH`, or text that
            is not JSON (400).
    """
    raw = await read_body(request, "application/json")
    if json_depth(raw) > MAX_JSON_DEPTH:
        raise BadRequest(
            f"the JSON body is nested too deeply; at most {MAX_JSON_DEPTH} levels of arrays "
            "and objects"
        )
    try:
        return json.loads(raw or b"{}")
    except (ValueError, UnicodeDecodeError):
        raise BadRequest("the request body is not valid JSON") from None


def json_depth(raw: bytes) -> int:
    """Deepest nesting of arrays and objects in JSON text, counted without parsing it.

    Brackets inside strings do not count; the text need not be valid JSON.
    """
    depth = deepest = 0
    in_string = escaped = False
    for byte in raw:
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:  # backslash
                escaped = True
            elif byte == 0x22:  # quote
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif byte in (0x5B, 0x7B):  # [ {
            depth += 1
            deepest = max(deepest, depth)
        elif byte in (0x5D, 0x7D):  # ] }
            depth -= 1
    return deepest


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


def _printable(text: str, limit: int = 80) -> str:
    """``text`` as :func:`~psygym_experiments.common.printable` shows it, cut to ``limit``."""
    clean = printable(text)
    return clean if len(clean) <= limit else clean[: limit - 3] + "..."


__all__ = ["MAX_BODY_BYTES", "MAX_JSON_DEPTH", "FrontDoor", "json_depth", "read_body", "read_json"]
