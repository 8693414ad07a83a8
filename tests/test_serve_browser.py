"""``psygym serve`` in a real browser (Playwright driving Debian's chromium).

A uvicorn server on 127.0.0.1 (a free port) runs in a daemon thread for the module and is
stopped at the end. Every edition of the registry is played to its end by clicking, from both
seats, on a short scenario; each game saves PNG screenshots of its first and last screen under
``tmp_path`` and must log no console error. A 2nd-edition-style game (the first edition with
hidden information) has every response the browser received inspected for the other hand. The
opponent list is checked against every choice of edition, scenario and seat, and a scenario
uploaded through the page is played.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path("/usr/bin/chromium")
LAUNCH_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip

pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(), reason="Debian's chromium (/usr/bin/chromium) is not installed"
)

playwright_sync = pytest.importorskip("playwright.sync_api")

from psygym_experiments.serve.app import create_app  # noqa: E402
from psygym_experiments.serve.store import GameStore  # noqa: E402
from test_serve_api import hidden_strings, private_labels, short_game  # noqa: E402
from test_serve_load import ServerThread  # noqa: E402

from psygym import edition as registry  # noqa: E402
from psygym.core import Information  # noqa: E402
from psygym.editions import load  # noqa: E402

EDITIONS = registry.editions()
PLAYING = "body[data-busy='0'][data-state='your-turn'], body[data-state='over']"
"""The page once a game has started: the player's turn, or the game already over."""


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[tuple[ServerThread, GameStore]]:
    """The app over a fresh store, served on 127.0.0.1 for this module."""
    store = GameStore(tmp_path_factory.mktemp("serve") / "runs")
    with ServerThread(create_app(store)) as srv:
        yield srv, store


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Debian's chromium, driven by Playwright (its own browser download is not used)."""
    with playwright_sync.sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=LAUNCH_ARGS, headless=True)
        try:
            yield b
        finally:
            b.close()


def open_page(browser: Any, url: str) -> tuple[Any, list[str]]:
    """A new page at ``url`` and the list its console errors and page errors go to."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.set_default_timeout(30_000)
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(url)
    return page, errors


def start_game(page: Any, game: dict[str, Any], seat: int, seed: int, opponent: str) -> None:
    """Fill the setup form and click Play."""
    page.select_option("#edition", game["edition"])
    page.select_option("#scenario", game["scenario"])
    page.select_option("#opponent", opponent)
    page.check(f"input[name=seat][value='{seat}']")
    page.fill("#seed", str(seed))
    if game.get("rounds"):
        page.fill("#rounds", str(game["rounds"]))
    with page.expect_response(lambda r: r.url.endswith("/api/games")):
        page.click("#start")
    page.wait_for_selector(PLAYING)


def click_to_the_end(page: Any, *, hint_once: bool = True) -> int:
    """Click legal actions (cycling through them) until the game is over; bounded."""
    clicks = 0
    hinted = not hint_once
    for _ in range(400):
        if page.get_attribute("body", "data-state") == "over":
            return clicks
        buttons = page.locator("button.action")
        n = buttons.count()
        assert n > 0, "your turn with no action button"
        if not hinted and n > 1:  # the first real choice (a forced pass has nothing to weigh)
            hinted = True
            with page.expect_response(lambda r: "/hint" in r.url):
                page.click("#hint")
            page.wait_for_selector("body[data-busy='0']")
            note = page.inner_text("#hint-note")
            assert "exact" in note or "estimated" in note or "search further" in note, note
        with page.expect_response(lambda r: "/actions" in r.url):
            buttons.nth(clicks % n).click()
        page.wait_for_selector("body[data-busy='0']")
        clicks += 1
    raise AssertionError("the game did not end within 400 clicks")


@pytest.mark.parametrize("ed", EDITIONS, ids=lambda e: e.id)
@pytest.mark.parametrize("seat", [0, 1])
def test_whole_game_by_clicking(server, browser, ed, seat, tmp_path):
    srv, _store = server
    page, errors = open_page(browser, srv.url)
    try:
        for seed in range(7, 27):  # a seed where the player has a decision to make
            start_game(page, short_game(ed), seat, seed=seed, opponent="random")
            if page.get_attribute("body", "data-state") != "over":
                break
            page.click("#again")
        page.screenshot(path=str(tmp_path / "first.png"), full_page=True)
        assert page.inner_text("#board").strip()
        clicks = click_to_the_end(page)
        page.screenshot(path=str(tmp_path / "last.png"), full_page=True)
        assert clicks >= 1, "the player made no decision"
        assert page.inner_text("#verdict").startswith("Game over")
        href = page.get_attribute("#log-link", "href")
        log = page.request.get(srv.url + href)
        assert log.ok and json.loads(log.text().splitlines()[-1])["type"] == "end"
        assert page.locator("#events li").count() > 0
        for name in ("first.png", "last.png"):
            assert (tmp_path / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert errors == [], errors
    finally:
        page.close()


@pytest.mark.parametrize("seat", [0, 1])
def test_browser_never_receives_the_other_hand(server, browser, seat, tmp_path):
    hidden = [e for e in EDITIONS if e.information == Information.HIDDEN]
    if not hidden:
        pytest.skip("no edition with hidden information is installed")
    ed = hidden[0]
    srv, _store = server
    page = browser.new_page()
    page.set_default_timeout(30_000)
    responses: list[Any] = []
    sockets: list[Any] = []
    page.on("response", lambda r: responses.append(r))
    page.on("websocket", lambda w: sockets.append(w))
    try:
        page.goto(srv.url)
        start_game(page, short_game(ed), seat, seed=13, opponent="random")
        click_to_the_end(page)
        page.screenshot(path=str(tmp_path / "last.png"), full_page=True)
        bodies = [(r.url, r.body().decode("utf-8", "replace")) for r in responses]
        game_id = json.loads(next(b for u, b in bodies if u.endswith("/api/games")))["id"]
        log = page.request.get(f"{srv.url}/api/games/{game_id}/log").text()
    finally:
        page.close()
    assert sockets == [], "the page opens no WebSocket"
    lines = [json.loads(x) for x in log.splitlines()]
    rules = load(ed.id, lines[0]["scenario_arg"])
    states, labels = private_labels(rules, lines, seat)
    secrets = hidden_strings(rules, states, seat)
    assert secrets and labels, "the game must hold something hidden for this test to mean much"
    assert len(bodies) >= 4
    for url, body in bodies:
        for secret in secrets | labels:
            assert secret not in body, f"{secret!r} reached the browser in {url}"


def test_opponents_fit_the_choices_and_an_upload_plays(server, browser, tmp_path):
    """The opponent list follows edition, scenario and seat (a model only where it fits, by its
    title); an uploaded scenario (sent as application/toml) offers no model and plays."""
    srv, _store = server
    page, errors = open_page(browser, srv.url)

    def models() -> list[list[str]]:
        shown = page.eval_on_selector_all(
            "#opponent option", "os => os.map((o) => [o.value, o.textContent])"
        )
        return [o for o in shown if o[0].startswith("model:")]

    try:
        listed = 0
        for ed in page.request.get(srv.url + "/api/options").json():
            page.select_option("#edition", ed["id"])
            for scenario in ed["scenarios"]:
                page.select_option("#scenario", scenario)
                for seat in (0, 1):
                    page.check(f"input[name=seat][value='{seat}']")
                    want = [
                        [a["name"], a["title"]]
                        for a in ed["agents"]
                        if a["name"].startswith("model:")
                        and a["scenario"] == scenario
                        and a["seat"] in (None, 1 - seat)
                    ]
                    assert models() == want, (ed["id"], scenario, seat)
                    listed += len(want)
        ed = EDITIONS[0]
        game = short_game(ed)
        path = tmp_path / "mine.toml"
        path.write_text((Path(ed.scenario_dir) / f"{game['scenario']}.toml").read_text())
        page.select_option("#edition", ed.id)
        with page.expect_response(lambda r: r.url.endswith("/api/scenarios")) as answer:
            page.set_input_files("#upload", str(path))
        assert answer.value.status == 200, answer.value.text()
        page.wait_for_selector("#upload-status:has-text('uploaded scenario')")
        assert models() == [], "no model fits an uploaded scenario"
        page.select_option("#opponent", "random")
        page.check("input[name=seat][value='1']")
        if game.get("rounds"):
            page.fill("#rounds", str(game["rounds"]))
        with page.expect_response(lambda r: r.url.endswith("/api/games")) as started:
            page.click("#start")
        assert started.value.status == 200, started.value.text()
        page.wait_for_selector(PLAYING)
        click_to_the_end(page, hint_once=False)
        assert page.inner_text("#verdict").startswith("Game over")
        assert errors == [], errors
    finally:
        page.close()
    try:
        import psygym_agents.sb3  # noqa: F401 - the shipped models come with the agents
    except ImportError:
        return
    assert listed > 0, "the shipped models are offered where they fit"


@pytest.mark.parametrize("ed", EDITIONS, ids=lambda e: e.id)
def test_random_battle_by_clicking(server, browser, ed, tmp_path):
    """A random battle: the battle seed shows only for it, and the drawn armies play to the end."""
    srv, _store = server
    page, errors = open_page(browser, srv.url)
    try:
        page.select_option("#edition", ed.id)
        assert page.is_hidden("#battle-seed-label")
        page.select_option("#scenario", "random")
        assert page.is_visible("#battle-seed-label")
        shown = page.eval_on_selector_all("#opponent option", "os => os.map((o) => o.value)")
        assert not [o for o in shown if o.startswith("model:")], "no model fits a random battle"
        page.fill("#battle-seed", "31")
        page.fill("#rounds", "1")
        page.select_option("#opponent", "random")
        with page.expect_response(lambda r: r.url.endswith("/api/games")) as started:
            page.click("#start")
        assert started.value.status == 200, started.value.text()
        page.wait_for_selector(PLAYING)
        assert "random-31-rounds1" in page.inner_text("#title")
        page.screenshot(path=str(tmp_path / "first.png"), full_page=True)
        click_to_the_end(page, hint_once=False)
        assert page.inner_text("#verdict").startswith("Game over")
        log = page.request.get(srv.url + page.get_attribute("#log-link", "href")).text()
        header = json.loads(log.splitlines()[0])
        assert header["scenario_arg"] == "random:31,rounds=1"
        page.click("#again")
        page.select_option("#scenario", ed.default_scenario)
        assert page.is_hidden("#battle-seed-label")
        assert errors == [], errors
    finally:
        page.close()
