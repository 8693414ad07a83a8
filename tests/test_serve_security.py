"""``psygym serve`` can be driven only by its own page: the cross-site requests of issue 39.

The server listens on 127.0.0.1, which every page the user visits can send requests to. These
tests send what such a page can send (a form post, a ``text/plain`` body, a request from a
foreign ``Origin``, a foreign ``Host`` after DNS rebinding) and check that each is refused with
a one-line JSON error and starts nothing. Uploads may not name a file on the server, deep JSON
and TOML get a one-line 4xx, and an unexpected error is one line of JSON too.

A 100 MB upload is sent to a real server (``psygym serve`` in a subprocess on 127.0.0.1) and
must be refused before it is read: the server's peak resident memory (``VmHWM``) grows by less
than 5 MB.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import tomllib
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
httpx = pytest.importorskip("httpx")

from fastapi.testclient import TestClient  # noqa: E402
from psygym_experiments.serve.app import create_app  # noqa: E402
from psygym_experiments.serve.front_door import (  # noqa: E402
    MAX_BODY_BYTES,
    MAX_JSON_DEPTH,
    json_depth,
)
from psygym_experiments.serve.games import PATH_FIELD_SUFFIX, toml_text  # noqa: E402
from psygym_experiments.serve.store import GameStore  # noqa: E402
from test_serve_api import TOML, short_game  # noqa: E402

from psygym import edition as registry  # noqa: E402

ED = registry.editions()[0]
GAME = {**short_game(ED), "seat": 0, "seed": 1, "opponent": "random"}
JSON = {"content-type": "application/json"}
OWN = "http://testserver"
"""The origin of the page a TestClient plays (its Host is ``testserver``)."""
FOREIGN = "http://evil.example"
MB = 1 << 20


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    """A client over a fresh store; unexpected errors come back as responses."""
    store = GameStore(tmp_path / "runs")
    with TestClient(create_app(store), raise_server_exceptions=False) as c:
        c.store = store  # type: ignore[attr-defined]
        yield c


def one_line_error(r: Any, status: int, *words: str) -> str:
    """The JSON error of a response with ``status``: one line, holding ``words``."""
    assert r.status_code == status, (r.status_code, r.text[:300])
    assert r.headers["content-type"] == "application/json", r.headers
    body = r.json()
    assert set(body) == {"error"}, body
    error = body["error"]
    assert error and "\n" not in error and "Traceback" not in error, error
    for word in words:
        assert word in error, (word, error)
    return error


def nothing_started(c: TestClient) -> None:
    """No game in memory and no game log written."""
    assert len(c.store) == 0  # type: ignore[attr-defined]
    assert list(c.store.games_dir.iterdir()) == []  # type: ignore[attr-defined]


def scenario_text() -> str:
    """A shipped scenario of the first edition, as TOML text."""
    return (Path(ED.scenario_dir) / f"{ED.default_scenario}.toml").read_text()


# ----------------------------------------------------------------------------- content types
def test_json_sent_as_text_plain_is_refused_and_starts_nothing(client):
    r = client.post(
        "/api/games", content=json.dumps(GAME).encode(), headers={"content-type": "text/plain"}
    )
    one_line_error(r, 415, "application/json", "text/plain")
    r = client.post("/api/games", content=json.dumps(GAME).encode())  # no Content-Type at all
    one_line_error(r, 415, "application/json")
    nothing_started(client)
    assert client.post("/api/games", json=GAME).status_code == 200  # the page's own request


@pytest.mark.parametrize(
    "kind", ["application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "text/plain"]
)
def test_a_cross_site_form_post_starts_nothing(client, kind):
    """What ``<form method=post action=http://127.0.0.1:8000/api/games>`` on any page sends."""
    body = "&".join(f"{k}={v}" for k, v in GAME.items()).encode()
    headers = {"content-type": kind, "origin": FOREIGN, "sec-fetch-site": "cross-site"}
    one_line_error(client.post("/api/games", content=body, headers=headers), 403, "refused")
    # The same form from a browser that sends no Origin: refused for its type.
    r = client.post("/api/games", content=body, headers={"content-type": kind})
    one_line_error(r, 415, "application/json")
    nothing_started(client)


def test_uploads_take_only_their_declared_type(client):
    text = scenario_text().encode()
    for kind in ("text/plain", "application/x-www-form-urlencoded", "application/json", ""):
        headers = {"content-type": kind} if kind else {}
        r = client.post("/api/scenarios", content=text, headers=headers)
        one_line_error(r, 415, "application/toml")
    assert list(client.store.scenarios_dir.iterdir()) == []
    assert client.post("/api/scenarios", content=text, headers=TOML).status_code == 200


# ----------------------------------------------------------------------------- Origin and Host
def test_a_foreign_origin_is_refused(client):
    for origin in (FOREIGN, "null", "http://testserver.evil.example", "https://testserver"):
        headers = {**JSON, "origin": origin}
        r = client.post("/api/games", json=GAME, headers=headers)
        one_line_error(r, 403, "refused", "no origin" if origin == "null" else origin)
        one_line_error(client.get("/api/options", headers={"origin": origin}), 403)
    nothing_started(client)
    ok = client.post("/api/games", json=GAME, headers={"origin": OWN})  # the page itself
    assert ok.status_code == 200, ok.text


def test_a_post_the_browser_marks_cross_site_is_refused(client):
    headers = {"sec-fetch-site": "cross-site"}
    one_line_error(client.post("/api/games", json=GAME, headers=headers), 403, "another site")
    nothing_started(client)
    for site in ("same-origin", "none"):
        assert client.post("/api/games", json=GAME, headers={"sec-fetch-site": site}).is_success
    # A link from another site to the page still opens it (a GET changes nothing).
    assert client.get("/", headers={"sec-fetch-site": "cross-site"}).status_code == 200


def test_a_foreign_host_is_refused(client):
    """DNS rebinding: a page of evil.example, resolved to 127.0.0.1, sends Host evil.example."""
    for host in ("evil.example", "evil.example:80", "testserver:8080", "localhost"):
        headers = {"host": host}
        one_line_error(client.get("/", headers=headers), 403, "Host", "not this server")
        one_line_error(client.get("/api/options", headers=headers), 403)
        one_line_error(client.post("/api/games", json=GAME, headers=headers), 403)
    nothing_started(client)
    assert client.get("/", headers={"host": "testserver:80"}).status_code == 200


# ----------------------------------------------------------------------------- body size and depth
def test_a_content_length_over_the_cap_is_refused_before_reading(client):
    headers = {**TOML, "content-length": str(100 * MB)}
    r = client.post("/api/scenarios", content=iter([b"x" * 1024]), headers=headers)
    one_line_error(r, 413, f"Content-Length {100 * MB}", f"at most {MAX_BODY_BYTES} bytes")
    r = client.post("/api/scenarios", content=b"x" * (MAX_BODY_BYTES + 1), headers=TOML)
    one_line_error(r, 413, f"at most {MAX_BODY_BYTES} bytes")
    assert list(client.store.scenarios_dir.iterdir()) == []


def test_the_front_door_pulls_no_body_past_the_cap():
    """At the ASGI level: how many body chunks the door pulls before it refuses."""
    import asyncio

    from psygym_experiments.serve.front_door import FrontDoor

    reached: list[bytes] = []

    async def app(_scope: Any, receive: Any, _send: Any) -> None:
        reached.append((await receive())["body"])

    door = FrontDoor(app, max_body=1000)

    def post(headers: list[tuple[bytes, bytes]], chunks: int) -> tuple[int, int | None]:
        pulled: list[int] = []
        sent: list[dict] = []

        async def receive() -> dict:
            pulled.append(1)
            return {"type": "http.request", "body": b"x" * 400, "more_body": len(pulled) < chunks}

        async def send(message: dict) -> None:
            sent.append(message)

        scope = {
            "type": "http", "method": "POST", "path": "/api/scenarios", "query_string": b"",
            "headers": [(b"host", b"127.0.0.1:8000"), *headers], "server": ("127.0.0.1", 8000),
        }  # fmt: skip
        asyncio.run(door(scope, receive, send))
        return len(pulled), (sent[0]["status"] if sent else None)

    assert post([(b"content-length", str(100 * MB).encode())], 250_000) == (0, 413)
    assert post([], 250_000) == (3, 413), "a chunked body is pulled only until it passes the cap"
    assert reached == [], "nothing refused reaches the app"
    assert post([(b"content-length", b"800")], 2) == (2, None)
    assert reached == [b"x" * 800], "a body within the cap reaches the app whole"


def test_json_depth_is_counted_without_parsing():
    assert json_depth(b'{"a": [1, {"b": "[[[{{{"}], "c": "\\"["}') == 3
    assert json_depth(b"[" * 100_000) == 100_000
    assert json_depth(b"{}") == 1 and json_depth(b"7") == 0


@pytest.mark.parametrize("depth", [MAX_JSON_DEPTH + 1, 1_000, 100_000])
def test_deep_json_gets_a_one_line_4xx(client, depth):
    body = b"[" * depth + b"]" * depth
    one_line_error(client.post("/api/games", content=body, headers=JSON), 400, "nested too deeply")
    r = client.post("/api/games/0123456789abcdef/actions", content=body, headers=JSON)
    one_line_error(r, 400, "nested too deeply")
    nothing_started(client)


@pytest.mark.parametrize("depth", [40, 5_000])
def test_deep_toml_gets_a_one_line_4xx(client, depth):
    text = scenario_text() + "\nx = " + "[" * depth + "]" * depth + "\n"
    error = one_line_error(client.post("/api/scenarios", content=text, headers=TOML), 400)
    assert "nested too deeply" in error and "uploaded scenario" in error
    assert str(client.store.scenarios_dir) not in error, "the answer names no server path"
    assert list(client.store.scenarios_dir.iterdir()) == []


# ----------------------------------------------------------------------------- path fields
@pytest.mark.parametrize(
    "target", ["/etc/passwd", "/no/such/file.toml", "/etc", "../../../../etc/hostname"]
)
def test_an_upload_cannot_name_a_file_on_the_server(client, target):
    text = f"powers_file = {target!r}\n" + scenario_text()
    error = one_line_error(client.post("/api/scenarios", content=text, headers=TOML), 400)
    assert error == (
        "uploaded scenario: field powers_file names a file on the server, which an upload may "
        "not (allowed: leave it out and use the shipped data, or run psygym on this machine "
        "with --scenario for a file of your own)"
    ), "the same answer whatever the file: it says nothing of the server's files"
    assert list(client.store.scenarios_dir.iterdir()) == []


def test_a_path_field_anywhere_in_an_upload_is_refused(client):
    data = tomllib.loads(scenario_text())
    data["game"] = {**data.get("game", {}), "deck_file": "/etc/passwd"}
    r = client.post("/api/scenarios", content=toml_text(data), headers=TOML)
    one_line_error(r, 400, "field game.deck_file names a file on the server")


def test_every_scenario_field_naming_a_file_is_a_path_field():
    """The upload check refuses fields ending in ``_file``: every spec field that names a file
    (its description says file or path) must be spelled so, in every edition."""
    from pydantic import BaseModel

    from psygym.editions import load
    from psygym.scenario import ScenarioSpec

    for ed in registry.editions():
        load(ed.id, ed.default_scenario)  # imports the edition's spec

    def models_in(annotation: Any) -> Iterator[type[BaseModel]]:
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            yield annotation
        for arg in typing.get_args(annotation):
            yield from models_in(arg)

    todo: list[type[BaseModel]] = [ScenarioSpec]
    seen: set[type[BaseModel]] = set()
    naming_files = []
    while todo:
        model = todo.pop()
        if model in seen:
            continue
        seen.add(model)
        todo.extend(model.__subclasses__())
        for name, info in model.model_fields.items():
            todo.extend(models_in(info.annotation))
            words = (info.description or "").lower()
            if "file" in words or "path" in words:
                naming_files.append(f"{model.__name__}.{name}")
                assert name.endswith(PATH_FIELD_SUFFIX), f"{model.__name__}.{name} names a file"
    assert len(seen) > len(registry.editions()), "the specs were walked"
    assert naming_files, "some edition reads another file (powers_file), or this test is moot"


# ----------------------------------------------------------------------------- every error is JSON
def test_every_error_is_one_line_of_json(client, monkeypatch):
    one_line_error(client.get("/no/such/route"), 404)
    one_line_error(client.get("/static/no-such-file.js"), 404)
    one_line_error(client.put("/api/games", json=GAME), 405)
    one_line_error(client.delete("/api/games/0123456789abcdef"), 405)

    def broken() -> list:
        raise RuntimeError("/secret/path/on/the/server failed")

    monkeypatch.setattr(client.store, "options", broken)
    error = one_line_error(client.get("/api/options"), 500, "internal error (RuntimeError)")
    assert "/secret" not in error, "the traceback and its details stay in the server's log"
    one_line_error(client.get("/"), 500, "the server's log has the details")


# ----------------------------------------------------------------------------- a real server
def free_port() -> int:
    """A TCP port free on 127.0.0.1 just now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def real_server(tmp_path_factory) -> Iterator[tuple[int, str]]:
    """``psygym serve`` in a subprocess on 127.0.0.1: its pid and base URL, once it answers."""
    runs = tmp_path_factory.mktemp("serve") / "runs"
    for _attempt in range(3):  # another process may take the free port first
        port = free_port()
        argv = [sys.executable, "-m", "psygym_experiments.cli", "serve", "--port", str(port),
                "--runs-dir", str(runs)]  # fmt: skip
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        url = f"http://127.0.0.1:{port}"
        if _answers(proc, url):
            break
        proc.kill()
        proc.wait()
    else:
        pytest.fail(f"psygym serve did not start: {proc.stderr.read().decode()[-500:]}")
    try:
        yield proc.pid, url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _answers(proc: subprocess.Popen, url: str) -> bool:
    """Whether the server comes up (waits while the process lives, at most about 2 minutes)."""
    for _ in range(600):
        if proc.poll() is not None:
            return False
        try:
            if httpx.get(f"{url}/api/options", timeout=10).status_code == 200:
                return True
        except httpx.TransportError:
            pass
        try:
            proc.wait(timeout=0.2)
        except subprocess.TimeoutExpired:
            pass
    return False


def memory_kb(pid: int) -> dict[str, int]:
    """``VmRSS`` and ``VmHWM`` (peak resident memory) of a process, in kB."""
    out = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            out[key] = int(value.split()[0])
    return out


def upload(url: str, size: int, *, declare_length: bool) -> httpx.Response:
    """POST ``size`` bytes to the upload route, streamed in 1 MB chunks from a generator."""

    def chunks() -> Iterator[bytes]:
        block = b"a = 1\n" * (MB // 6) + b"\n" * (MB % 6)
        for _ in range(size // MB):
            yield block

    headers = dict(TOML)
    if declare_length:
        headers["content-length"] = str(size)
    return httpx.post(f"{url}/api/scenarios", content=chunks(), headers=headers, timeout=300)


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs /proc")
def test_a_100_mb_upload_is_refused_before_it_is_read(real_server, capsys):
    pid, url = real_server
    for declare_length in (True, False):  # warm the refusing code paths up
        one_line_error(upload(url, 2 * MB, declare_length=declare_length), 413)
    before = memory_kb(pid)
    with_length = upload(url, 100 * MB, declare_length=True)
    chunked = upload(url, 100 * MB, declare_length=False)
    after = memory_kb(pid)
    one_line_error(with_length, 413, f"Content-Length {100 * MB}", f"at most {MAX_BODY_BYTES}")
    one_line_error(chunked, 413, f"at most {MAX_BODY_BYTES} bytes")
    growth = after["VmHWM"] - before["VmHWM"]
    with capsys.disabled():
        print(
            f"\n2 x 100 MB uploads: server peak memory {before['VmHWM']} -> {after['VmHWM']} kB "
            f"(+{growth} kB), resident {before['VmRSS']} -> {after['VmRSS']} kB"
        )
    assert growth < 5 * 1024, (before, after)
    assert httpx.get(f"{url}/api/options").status_code == 200, "the server still answers"


def test_the_real_server_answers_only_its_own_names(real_server):
    _pid, url = real_server
    port = url.rsplit(":", 1)[1]
    for host in (f"127.0.0.1:{port}", f"localhost:{port}"):
        assert httpx.get(f"{url}/api/options", headers={"host": host}).status_code == 200
    for host in (f"evil.example:{port}", "127.0.0.1", f"127.0.0.1:{int(port) + 1}"):
        one_line_error(httpx.get(f"{url}/", headers={"host": host}), 403, "Host")
    headers = {**JSON, "origin": FOREIGN}
    one_line_error(httpx.post(f"{url}/api/games", json=GAME, headers=headers), 403, "refused")
    own = {**JSON, "origin": url}
    r = httpx.post(f"{url}/api/games", json=GAME, headers=own, timeout=60)
    assert r.status_code == 200, r.text
