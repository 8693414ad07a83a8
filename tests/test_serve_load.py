"""A small load test of ``psygym serve``: 20 concurrent games through the HTTP API on 127.0.0.1.

A real uvicorn server runs in a daemon thread (stopped at the end); 20 client threads each play
one whole game (editions and seats in turn, short scenarios, the edition's reference heuristic
as the opponent) and time every request. All games must finish with no error. The p50 and p95
response times are printed; nothing is asserted about them (no timing assertions).

On a loaded machine this test once failed with a connection reset. The cause was uvicorn's
keep-alive timeout (5 s by default): when the server's event loop gets no CPU for a while, the
timer that closes an idle kept-alive connection can fire just as the client sends its next
request on it; the server closes the socket with that request unread, and the kernel answers
with a reset (``ReadError: [Errno 104] Connection reset by peer``, or "Server disconnected
without sending a response"). With the timeout at half a second the same happens at will. The
test server therefore keeps idle connections for :data:`KEEP_ALIVE_SECONDS`, longer than any
test runs, so it never closes one under a client; clients retry only opening a connection
(a bounded number of times) and wait long for an answer. What is checked is unchanged: every
request of every game must succeed.
"""

from __future__ import annotations

import socket
import statistics
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

uvicorn = pytest.importorskip("uvicorn")
httpx = pytest.importorskip("httpx")

from psygym_experiments.serve.app import create_app  # noqa: E402
from psygym_experiments.serve.store import GameStore  # noqa: E402
from test_serve_api import short_game  # noqa: E402

from psygym import edition as registry  # noqa: E402

GAMES = 20
"""Concurrent games."""

KEEP_ALIVE_SECONDS = 600
"""How long the test server keeps an idle connection open (uvicorn's default is 5 s)."""

CONNECT_RETRIES = 3
"""Times a client tries again to open a connection (never to resend a request)."""

ANSWER_SECONDS = 300
"""How long a client waits for an answer (a loaded machine can be slow; no test relies on it)."""


class ServerThread:
    """A uvicorn server for ``app`` on a socket bound to 127.0.0.1 (a free port), in a thread.

    The thread is a daemon, so it dies with the test process; ``__exit__`` stops it. Idle
    connections are kept for :data:`KEEP_ALIVE_SECONDS` (see the module's docstring).
    """

    def __init__(self, app: Any):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        config = uvicorn.Config(
            app, log_level="warning", lifespan="on", timeout_keep_alive=KEEP_ALIVE_SECONDS
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(
            target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True
        )

    @property
    def url(self) -> str:
        """Base URL of the server."""
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> ServerThread:
        self.thread.start()
        for _ in range(1200):  # up to a minute on a loaded machine
            if self.server.started:
                return self
            if not self.thread.is_alive():
                break
            time.sleep(0.05)
        raise RuntimeError("the test server did not start")

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=120)
        self.sock.close()
        assert not self.thread.is_alive(), "the server thread did not stop"


def play_one(url: str, n: int) -> tuple[list[float], dict[str, Any]]:
    """Play game ``n`` to its end through the API; returns request times and the final view."""
    eds = registry.editions()
    ed = eds[n % len(eds)]
    body = {**short_game(ed), "seat": (n // len(eds)) % 2, "seed": n}
    times: list[float] = []
    transport = httpx.HTTPTransport(retries=CONNECT_RETRIES)
    with httpx.Client(base_url=url, timeout=ANSWER_SECONDS, transport=transport) as client:

        def call(method: str, path: str, **kw: Any) -> dict[str, Any]:
            t0 = time.perf_counter()
            r = client.request(method, path, **kw)
            times.append(time.perf_counter() - t0)
            assert r.status_code == 200, (path, r.status_code, r.text)
            return r.json()

        view = call("POST", "/api/games", json=body)
        for i in range(500):
            if view["over"]:
                break
            action = view["actions"][i % len(view["actions"])]["action"]
            body = {"action": action, "step": view["step"]}
            view = call("POST", f"/api/games/{view['id']}/actions", json=body)
            call("GET", f"/api/games/{view['id']}")
        assert view["over"], "the game did not end within 500 moves"
        t0 = time.perf_counter()
        log = client.get(view["result"]["log_url"])
        times.append(time.perf_counter() - t0)
        assert log.status_code == 200 and '"type": "end"' in log.text.splitlines()[-1]
    return times, view


def test_twenty_concurrent_games(tmp_path, capsys):
    store = GameStore(tmp_path / "runs")
    with ServerThread(create_app(store)) as srv:
        start = time.perf_counter()
        with ThreadPoolExecutor(max_workers=GAMES) as pool:
            results = list(pool.map(lambda n: play_one(srv.url, n), range(GAMES)))
        wall = time.perf_counter() - start
    times = sorted(t for ts, _ in results for t in ts)
    assert len(results) == GAMES and all(v["over"] for _, v in results)
    assert len({v["id"] for _, v in results}) == GAMES
    assert len(list(store.games_dir.glob("*.jsonl"))) == GAMES
    p50 = statistics.median(times)
    p95 = times[min(len(times) - 1, int(0.95 * len(times)))]
    with capsys.disabled():
        print(
            f"\n{GAMES} concurrent games, {len(times)} requests in {wall:.1f} s: "
            f"p50 {p50 * 1000:.1f} ms, p95 {p95 * 1000:.1f} ms, max {times[-1] * 1000:.1f} ms"
        )
