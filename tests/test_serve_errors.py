"""``psygym serve``: a refused request is shown to the player, also in the middle of a game.

The page's one error line sat inside the setup form, which is hidden once a game starts: an
action the server refused (409 when the game had moved on, a 400 for an illegal action, 404
for an expired game) only refreshed the view, with no word of why. In real Chromium (as
``test_serve_browser``: Debian's chromium driven by Playwright, a uvicorn server in a thread)
the server's message must be visible during the game and gone after the next action played.

Also the one check of the numbers a request sends (:func:`.store.integer_field`), which the
``step`` of an action once repeated in the app.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")

import test_serve_api  # noqa: E402
from psygym_experiments.serve import app as app_module  # noqa: E402
from psygym_experiments.serve import store as store_module  # noqa: E402
from psygym_experiments.serve.app import create_app  # noqa: E402
from psygym_experiments.serve.games import BadRequest  # noqa: E402
from psygym_experiments.serve.store import GameStore  # noqa: E402

from psygym import edition as registry  # noqa: E402

EDITIONS = registry.editions()
client = test_serve_api.client  # the fixture: a client over a fresh store

ERROR_SHOWN = "#error:not(:empty)"
"""The page's error line once it holds a message."""


# ----------------------------------------------------------------------------- one integer check
def test_the_step_of_an_action_and_the_games_numbers_have_one_check(client, monkeypatch):
    """The app checked ``step`` with a copy of the store's integer check; both use one now."""
    checked: list[str] = []
    real = store_module.integer_field

    def spy(request: Any, key: str, *args: Any, **kwargs: Any) -> Any:
        checked.append(key)
        return real(request, key, *args, **kwargs)

    monkeypatch.setattr(store_module, "integer_field", spy)
    monkeypatch.setattr(app_module, "integer_field", spy)
    ed = EDITIONS[0]
    body = {"edition": ed.id, "scenario": ed.default_scenario, "opponent": "random",
            "seat": 0, "seed": 0}  # fmt: skip
    view = client.post("/api/games", json=body).json()
    assert {"seat", "seed", "random", "rounds"} <= set(checked)
    checked.clear()
    r = client.post(f"/api/games/{view['id']}/actions", json={"action": 0, "step": "1"})
    assert r.status_code == 400 and checked == ["step"], (r.text, checked)
    assert r.json()["error"] == "step must be the view's step (an integer), got '1'"


def test_a_required_integer_refuses_none_and_an_optional_one_leaves_it_out():
    check = store_module.integer_field
    assert check({"rounds": None}, "rounds", None, None, "an integer") is None
    assert check({}, "rounds", None, None, "an integer") is None
    with pytest.raises(BadRequest, match=r"^step must be an integer, got None$"):
        check({"step": None}, "step", None, None, "an integer", required=True)
    assert check({"step": 3}, "step", None, None, "an integer", required=True) == 3


def test_the_error_line_is_outside_the_setup_form(client):
    """Served inside ``#setup``, it was hidden with it for the whole game."""
    page = client.get("/").text
    setup = re.search(r'<section id="setup".*?</section>', page, re.S)
    assert setup is not None and 'id="error"' not in setup.group(0)
    assert page.count('id="error"') == 1
    assert 'id="error"' not in re.search(r'<section id="game".*?</section>', page, re.S).group(0)


# ----------------------------------------------------------------------------- in Chromium
@pytest.fixture(scope="module")
def ui() -> Any:
    """``test_serve_browser``'s helpers and settings (skips without chromium or Playwright)."""
    pytest.importorskip("playwright.sync_api")
    pytest.importorskip("uvicorn")
    import test_serve_browser

    if not test_serve_browser.CHROMIUM.exists():
        pytest.skip("Debian's chromium (/usr/bin/chromium) is not installed")
    return test_serve_browser


@pytest.fixture(scope="module")
def server(ui: Any, tmp_path_factory) -> Iterator[tuple[Any, GameStore]]:
    """The app over a fresh store, served on 127.0.0.1 for this module."""
    store = GameStore(tmp_path_factory.mktemp("serve") / "runs")
    with ui.ServerThread(create_app(store)) as srv:
        yield srv, store


@pytest.fixture(scope="module")
def browser(ui: Any) -> Iterator[Any]:
    """Debian's chromium, driven by Playwright (its own browser download is not used)."""
    with ui.playwright_sync.sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(ui.CHROMIUM), args=ui.LAUNCH_ARGS, headless=True)
        try:
            yield b
        finally:
            b.close()


def page_errors(errors: list[str]) -> list[str]:
    """The console errors that are not Chromium's note of a 4xx answer (the refusals tested)."""
    return [e for e in errors if "Failed to load resource" not in e]


def a_game_in_play(ui: Any, page: Any, srv: Any, *, twice: bool = False) -> dict[str, Any]:
    """Start a default-scenario game in ``page`` at a decision of the player's; its view.

    ``twice``: the player must decide again after the first action listed is played from
    outside the page (another tab, a script), which is done: then ``{"before", "after"}``, the
    view the page shows and the game's view now.
    """
    ed = EDITIONS[0]
    for seed in range(40):
        with page.expect_response(lambda r: r.url.endswith("/api/games")) as started:
            ui.start_game(
                page, {"edition": ed.id, "scenario": ed.default_scenario}, 0, seed, "random"
            )
        view = started.value.json()
        if not view["over"] and view["actions"]:
            if not twice:
                return view
            after = play_elsewhere(
                page, srv, view["id"], view["actions"][0]["action"], view["step"]
            )
            if not after["over"] and after["actions"]:
                return {"before": view, "after": after}
        page.goto(srv.url)
    raise AssertionError(f"no {ed.id} game with the decisions needed in 40 seeds")


def play_elsewhere(page: Any, srv: Any, game_id: str, action: int, step: int) -> dict[str, Any]:
    """Play ``action`` at ``step`` from outside the page (another tab, a script); the new view."""
    r = page.request.post(
        f"{srv.url}/api/games/{game_id}/actions", data={"action": action, "step": step}
    )
    assert r.ok, r.text()
    return r.json()


def test_an_action_refused_as_stale_shows_the_servers_message_until_the_next_action(
    ui, server, browser, tmp_path
):
    """Another tab played the decision; a click on this page's old view is refused with 409."""
    srv, _store = server
    page, errors = ui.open_page(browser, srv.url)
    try:
        game = a_game_in_play(ui, page, srv, twice=True)
        before, after = game["before"], game["after"]
        assert page.is_hidden("#error")
        with page.expect_response(lambda r: "/actions" in r.url) as answer:
            page.locator("button.action").first.click()
        assert answer.value.status == 409
        message = answer.value.json()["error"]
        page.wait_for_selector(ERROR_SHOWN)
        page.wait_for_selector("body[data-busy='0']")
        page.screenshot(path=str(tmp_path / "refused.png"), full_page=True)
        assert page.is_visible("#error")
        assert page.inner_text("#error") == message
        assert f"step {before['step']}" in message and f"at step {after['step']}" in message
        # The view shown is the game's current one, with the message above it.
        assert page.evaluate("() => game.step") == after["step"]
        assert page.is_visible("#game") and page.is_hidden("#setup")
        # The next action played clears it.
        with page.expect_response(lambda r: "/actions" in r.url) as played:
            page.locator("button.action").first.click()
        assert played.value.status == 200, played.value.text()
        page.wait_for_selector("body[data-busy='0']")
        assert page.inner_text("#error") == "" and page.is_hidden("#error")
        assert page_errors(errors) == [], errors
    finally:
        page.close()


def test_any_refused_action_shows_the_servers_message(ui, server, browser):
    """Not only a 409: an illegal action (400) and a game that expired (404) are shown too."""
    srv, store = server
    page, errors = ui.open_page(browser, srv.url)
    try:
        view = a_game_in_play(ui, page, srv)
        illegal = max(a["action"] for a in view["actions"]) + 1000
        with page.expect_response(lambda r: "/actions" in r.url) as answer:
            page.evaluate(f"() => act({illegal})")  # the page's own action call
        assert answer.value.status == 400
        page.wait_for_selector(ERROR_SHOWN)
        assert page.inner_text("#error") == answer.value.json()["error"]
        assert f"action {illegal} is not legal here" in page.inner_text("#error")

        idle, store.idle_seconds = store.idle_seconds, -1.0  # every game expires now
        try:
            with page.expect_response(lambda r: "/actions" in r.url) as gone:
                page.locator("button.action").first.click()
        finally:
            store.idle_seconds = idle
        assert gone.value.status == 404
        page.wait_for_selector(f"#error:has-text('{view['id']}')")
        assert page.is_visible("#error")
        assert page.inner_text("#error") == gone.value.json()["error"]
        assert "expired" in page.inner_text("#error")
        assert page_errors(errors) == [], errors
    finally:
        page.close()
