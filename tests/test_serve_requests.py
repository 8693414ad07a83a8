"""``psygym serve``: requests it must refuse whole, or apply exactly once (FastAPI's TestClient).

Numbers of the wrong type, game lengths beyond what an edition allows, an empty upload id, and
actions sent twice or for a decision already played. Every edition comes from the registry (no
edition id is named here).
"""

from __future__ import annotations

import json
import re
import tomllib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")

import test_serve_api  # noqa: E402
from fastapi.testclient import TestClient  # noqa: E402
from psygym_experiments.serve import store as store_module  # noqa: E402
from psygym_experiments.serve.games import toml_text  # noqa: E402
from psygym_experiments.serve.store import GameStore  # noqa: E402
from test_serve_api import TOML  # noqa: E402

from psygym import edition as registry  # noqa: E402
from psygym.core import Information  # noqa: E402
from psygym.scenario import ScenarioError  # noqa: E402

EDITIONS = registry.editions()
LENGTH_KEYS = ("battle_rounds", "turns")


client = test_serve_api.client  # the fixture: a client over a fresh store


def files_written(store: GameStore) -> list[str]:
    """The game logs and scenario files the store has written."""
    return sorted(p.name for d in (store.games_dir, store.scenarios_dir) for p in d.iterdir())


def refused(r: Any, status: int, *words: str) -> str:
    """Assert ``r`` is a one-line JSON error with ``status`` holding ``words``; its message."""
    assert r.status_code == status, (r.status_code, r.text)
    body = r.json()
    assert set(body) == {"error"} and body["error"] and "\n" not in body["error"], body
    for word in words:
        assert word in body["error"], (word, body["error"])
    return body["error"]


def default_game(ed: registry.Edition, **extra: Any) -> dict[str, Any]:
    """A request for the edition's default scenario against the random AI."""
    return {"edition": ed.id, "scenario": ed.default_scenario, "opponent": "random",
            "seat": 0, "seed": 0, **extra}  # fmt: skip


def options_of(client: TestClient, ed: registry.Edition) -> dict[str, Any]:
    return next(o for o in client.get("/api/options").json() if o["id"] == ed.id)


# ----------------------------------------------------------------------------- numbers
def test_every_number_must_be_an_integer_and_nothing_is_made_when_one_is_not(client):
    """A float seat (1.0 == 1) gave a 500 and left a broken game in memory with its log."""
    ed = EDITIONS[0]
    cases = [("seat", v) for v in (1.0, 0.0, True, False, "1", None, 2)]
    cases += [("seed", v) for v in (1.0, True, "3", -1, 2**63)]
    cases += [("rounds", v) for v in (1.0, True, "2", 0)]
    cases += [("random", v) for v in (1.0, True, "1", -1)]
    for field, value in cases:
        body = default_game(ed, **{field: value})
        if field == "random":
            del body["scenario"]
        r = client.post("/api/games", json=body)
        refused(r, 400, field, repr(value))
    assert len(client.store) == 0, "no game was kept"
    assert files_written(client.store) == [], "no log and no scenario file was written"


def test_an_empty_upload_id_is_refused_not_taken_for_the_default_scenario(client):
    ed = EDITIONS[0]
    for upload in ("", 0, False, []):
        r = client.post("/api/games", json=default_game(ed, upload=upload))
        refused(r, 400, "upload", repr(upload), "16 hexadecimal digits")
    assert len(client.store) == 0 and files_written(client.store) == []


# ----------------------------------------------------------------------------- game length
@pytest.mark.parametrize("ed", EDITIONS, ids=lambda e: e.id)
def test_the_rounds_offered_are_those_the_edition_allows(client, ed):
    """The page offered up to 50 rounds and the server said so, but scenarios allow fewer."""
    limits = options_of(client, ed)["rounds"]
    assert limits["key"] in LENGTH_KEYS and limits["min"] == 1 <= limits["max"]
    most = limits["max"]
    ok = client.post("/api/games", json=default_game(ed, rounds=most))
    assert ok.status_code == 200, ok.text
    log = client.store.games_dir / f"{ok.json()['id']}.jsonl"
    header = json.loads(log.read_text().splitlines()[0])
    game = tomllib.loads(Path(header["scenario_path"]).read_text())["game"]
    assert game[limits["key"]] == most
    before = files_written(client.store)
    error = refused(
        client.post("/api/games", json=default_game(ed, rounds=most + 1)), 400,
        f"rounds {most + 1}", f"1 to {most}", ed.title,
    )  # fmt: skip
    assert "/" not in error, "no path of the server"
    assert files_written(client.store) == before, "no scenario file is left for a refused game"
    if limits["random_max"] is not None:
        battle = {"edition": ed.id, "random": 1, "seat": 0, "seed": 0, "opponent": "random"}
        top = limits["random_max"]
        assert client.post("/api/games", json={**battle, "rounds": top}).status_code == 200
        r = client.post("/api/games", json={**battle, "rounds": top + 1})
        refused(r, 400, f"1 to {top}", "random battle")


def test_the_page_offers_the_first_editions_rounds(client):
    page = client.get("/").text
    first = client.get("/api/options").json()[0]["rounds"]
    tag = re.search(r'<input id="rounds"[^>]*>', page, re.S)
    assert tag is not None
    assert f'max="{first["max"]}"' in tag.group(0) and f'min="{first["min"]}"' in tag.group(0)


def test_a_rounds_file_that_does_not_validate_is_removed_and_its_path_not_shown(
    client, monkeypatch
):
    """The file with the rounds applied was written before validation and left behind."""
    ed = EDITIONS[0]
    real_load = store_module.load

    def refuse_written(edition: str, scenario: Any, *args: Any, **kwargs: Any) -> Any:
        if client.store.scenarios_dir in Path(str(scenario)).parents:
            raise ScenarioError(str(scenario), "game.battle_rounds", "refused here", "1 to 3")
        return real_load(edition, scenario, *args, **kwargs)

    monkeypatch.setattr(store_module, "load", refuse_written)
    r = client.post("/api/games", json=default_game(ed, rounds=2))
    error = refused(r, 400, "refused here", "game.battle_rounds")
    assert str(client.store.runs_dir.parent) not in error and ".toml" not in error, error
    assert files_written(client.store) == []


def test_a_game_refused_after_its_rounds_file_is_written_leaves_no_file(client):
    ed = EDITIONS[0]
    r = client.post("/api/games", json=default_game(ed, rounds=2, opponent="no-such-ai"))
    refused(r, 400, "no-such-ai")
    assert files_written(client.store) == []


def test_rounds_are_refused_where_a_scenario_ends_after_its_phase_limit(client):
    """``single-phase`` stops after one Psychic phase: rounds there changed nothing, silently."""
    limited = [
        ed for ed in EDITIONS for p in sorted(Path(ed.scenario_dir).glob("*.toml"))
        if "phase_limit" in tomllib.loads(p.read_text()).get("game", {})
    ]  # fmt: skip
    assert limited, "no shipped scenario sets phase_limit"
    for ed in limited:
        body = {**default_game(ed, rounds=2), "scenario": "single-phase"}
        refused(client.post("/api/games", json=body), 400, "single-phase", "phase_limit = 1",
                "leave rounds out")  # fmt: skip
    assert files_written(client.store) == []


def test_rounds_set_the_length_each_edition_counts_when_the_file_leaves_it_out(client):
    """Rounds went to ``battle_rounds`` when a file declared no length, also where the
    edition counts ``turns`` (refused as an unknown field)."""
    for ed in EDITIONS:
        path = Path(ed.scenario_dir) / f"{ed.default_scenario}.toml"
        data = tomllib.loads(path.read_text())
        game = {k: v for k, v in data.get("game", {}).items() if k not in LENGTH_KEYS}
        text = toml_text({**data, "game": game})
        up = client.post("/api/scenarios", content=text.encode(), headers=TOML)
        assert up.status_code == 200, up.text
        body = {"upload": up.json()["upload"], "rounds": 2, "seat": 0, "seed": 0}
        r = client.post("/api/games", json={**body, "opponent": "random"})
        assert r.status_code == 200, (ed.id, r.text)
        log = client.store.games_dir / f"{r.json()['id']}.jsonl"
        header = json.loads(log.read_text().splitlines()[0])
        written = tomllib.loads(Path(header["scenario_path"]).read_text())["game"]
        assert written[options_of(client, ed)["rounds"]["key"]] == 2, (ed.id, written)


# ----------------------------------------------------------------------------- one action once
def human_steps(store: GameStore, game_id: str, seat: int) -> int:
    """The human's steps in the game's log so far."""
    lines = (store.games_dir / f"{game_id}.jsonl").read_text().splitlines()
    return sum(1 for x in map(json.loads, lines) if x["type"] == "step" and x["player"] == seat)


def a_game_with_choices(client: TestClient, ed: registry.Edition) -> dict[str, Any]:
    """A view of a default-scenario game at a human decision with two or more options."""
    for seed in range(20):
        view = client.post("/api/games", json=default_game(ed, seed=seed)).json()
        if not view["over"] and len(view["actions"]) >= 2:
            return view
    raise AssertionError(f"no {ed.id} game with a choice in 20 seeds")


def test_an_action_names_the_views_step_and_a_stale_one_is_refused(client):
    ed = EDITIONS[0]
    view = a_game_with_choices(client, ed)
    url = f"/api/games/{view['id']}/actions"
    action = view["actions"][0]["action"]
    step = view["step"]
    assert isinstance(step, int) and not isinstance(step, bool)
    refused(client.post(url, json={"action": action}), 400, "missing: step")
    for bad in (str(step), True, None, float(step)):
        refused(client.post(url, json={"action": action, "step": bad}), 400, "step", repr(bad))
    later = client.post(url, json={"action": action, "step": step + 1})
    refused(later, 409, f"step {step + 1}", f"at step {step}")
    assert client.get(f"/api/games/{view['id']}").json() == view, "refused: nothing changed"
    after = client.post(url, json={"action": action, "step": step})
    assert after.status_code == 200, after.text
    after = after.json()
    assert after["step"] > step
    again = client.post(url, json={"action": action, "step": step})
    refused(again, 409, "sent twice", f"at step {after['step']}")
    assert client.get(f"/api/games/{view['id']}").json() == after
    assert human_steps(client.store, view["id"], 0) == 1


def test_four_identical_actions_sent_at_once_are_played_once(client):
    """Four concurrent ``{"action": 0}`` all answered 200, playing decisions never shown."""
    hidden = [e for e in EDITIONS if e.information == Information.HIDDEN]
    ed = (hidden or EDITIONS)[0]
    view = a_game_with_choices(client, ed)
    body = {"action": view["actions"][0]["action"], "step": view["step"]}
    url = f"/api/games/{view['id']}/actions"
    with ThreadPoolExecutor(max_workers=4) as pool:
        answers = list(pool.map(lambda _: client.post(url, json=body), range(4)))
    assert sorted(r.status_code for r in answers) == [200, 409, 409, 409], [
        (r.status_code, r.text) for r in answers
    ]
    played = next(r.json() for r in answers if r.status_code == 200)
    for r in answers:
        if r.status_code == 409:
            refused(r, 409, f"step {view['step']}", f"at step {played['step']}")
    assert human_steps(client.store, view["id"], 0) == 1
    assert client.get(f"/api/games/{view['id']}").json() == played
