"""``psygym serve`` through its HTTP API (FastAPI's TestClient): games, errors, logs, secrets.

Every edition comes from the registry (no edition id is named here). Each game uses a short
scenario: ``single-phase`` where shipped, else the shortest shipped scenario with one battle
round (two turns where the scenario counts single turns, so both seats get a decision).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")

from fastapi.testclient import TestClient  # noqa: E402
from psygym_experiments.serve.app import create_app  # noqa: E402
from psygym_experiments.serve.games import toml_text  # noqa: E402
from psygym_experiments.serve.store import GameStore  # noqa: E402

from psygym import edition as registry  # noqa: E402
from psygym.core import (  # noqa: E402
    CHANCE,
    TERMINAL,
    Information,  # noqa: E402
)
from psygym.editions import load  # noqa: E402


def short_game(ed: registry.Edition) -> dict[str, Any]:
    """The quick game of an edition: ``single-phase``, else its shortest scenario cut short."""
    names = ed.scenario_names()
    if "single-phase" in names:
        return {"edition": ed.id, "scenario": "single-phase"}

    def length(name: str) -> int:
        game = tomllib.loads((Path(ed.scenario_dir) / f"{name}.toml").read_text())["game"]
        return int(game.get("battle_rounds", game.get("turns", 99)))

    name = min(names, key=length)
    game = tomllib.loads((Path(ed.scenario_dir) / f"{name}.toml").read_text())["game"]
    # A scenario counting single turns needs two so that the second side moves too.
    return {"edition": ed.id, "scenario": name, "rounds": 2 if "turns" in game else 1}


EDITIONS = [ed for ed in registry.editions()]
TOML = {"content-type": "application/toml"}
"""Headers of a scenario upload (the type the upload route declares)."""


@pytest.fixture
def client(tmp_path: Path):
    """A client over a fresh store logging to ``tmp_path``."""
    store = GameStore(tmp_path / "runs")
    with TestClient(create_app(store)) as c:
        c.store = store  # type: ignore[attr-defined]
        yield c


def act(view: dict[str, Any], action: Any) -> dict[str, Any]:
    """The body of an action chosen in ``view`` (it names the view's step, as the page does)."""
    return {"action": action, "step": view["step"]}


def play_out(client: TestClient, view: dict[str, Any], pick: int = 0) -> tuple[dict, int]:
    """Click the ``pick``-th legal action (wrapping) until the game ends; bounded."""
    moves = 0
    for _ in range(500):
        if view["over"]:
            return view, moves
        assert view["your_turn"] and view["actions"], view
        action = view["actions"][(pick + moves) % len(view["actions"])]["action"]
        r = client.post(f"/api/games/{view['id']}/actions", json=act(view, action))
        assert r.status_code == 200, r.text
        view = r.json()
        moves += 1
    raise AssertionError("the game did not end within 500 moves")


def replay(path: Path) -> subprocess.CompletedProcess:
    """``psygym replay PATH`` in a fresh process."""
    return subprocess.run(
        [sys.executable, "-m", "psygym_experiments.cli", "replay", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
    )


# ----------------------------------------------------------------------------- options and page
def test_page_and_options_list_every_edition_and_no_unsafe_agent(client):
    page = client.get("/")
    assert page.status_code == 200 and "<html" in page.text
    options = client.get("/api/options").json()
    assert [o["id"] for o in options] == registry.ids()
    for o in options:
        names = {a["name"] for a in o["agents"]}
        assert "random" in names and o["default_agent"] in names
        assert not names & {"sb3", "tuned"}, "agents that load a file are never offered"
        assert o["scenarios"] == registry.get(o["id"]).scenario_names()


# ----------------------------------------------------------------------------- whole games
@pytest.mark.parametrize("ed", EDITIONS, ids=lambda e: e.id)
@pytest.mark.parametrize("seat", [0, 1])
def test_whole_game_from_each_seat_and_replay_accepts_the_log(client, ed, seat, tmp_path):
    body = {**short_game(ed), "seat": seat, "seed": 5, "opponent": "random"}
    r = client.post("/api/games", json=body)
    assert r.status_code == 200, r.text
    view = r.json()
    assert view["seat"] == seat and view["board"]
    log_while_playing = client.get(f"/api/games/{view['id']}/log")
    if not view["over"]:
        assert log_while_playing.status_code == 409  # the log holds what the player may not see
    view, moves = play_out(client, view)
    assert view["result"]["verdict"]
    log = client.get(view["result"]["log_url"])
    assert log.status_code == 200
    lines = [json.loads(x) for x in log.text.splitlines()]
    assert lines[0]["type"] == "header" and lines[-1]["type"] == "end"
    assert lines[-1]["result"] == "finished" and lines[-1]["terminal"] is True
    assert lines[-1]["score"][seat] == pytest.approx(view["score"])
    path = tmp_path / "downloaded.jsonl"
    path.write_text(log.text)
    done = replay(path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "matches the log" in done.stdout


def test_same_seed_same_game(client):
    ed = EDITIONS[0]
    body = {**short_game(ed), "seat": 0, "seed": 11, "opponent": "random"}
    a, _ = play_out(client, client.post("/api/games", json=body).json())
    b, _ = play_out(client, client.post("/api/games", json=body).json())
    assert a["events"] == b["events"] and a["score"] == b["score"]


def test_events_name_every_roll_and_the_ai_decisions(client):
    for ed in EDITIONS:
        view = client.post("/api/games", json={**short_game(ed), "seat": 0, "seed": 2}).json()
        view, _ = play_out(client, view)
        whos = {e["who"] for e in view["events"]}
        assert "chance" in whos or "ai" in whos, (ed.id, view["events"])
        assert all(e["text"] or e["events"] for e in view["events"])


def test_hint_is_marked_exact_or_estimated(client):
    for ed in EDITIONS:
        view = client.post("/api/games", json={**short_game(ed), "seat": 0, "seed": 1}).json()
        if view["over"]:
            continue
        hint = client.get(f"/api/games/{view['id']}/hint").json()
        assert hint["kind"] in ("exact", "estimated") and hint["note"], hint
        assert hint["exact"] == (hint["kind"] == "exact")
        assert hint["values"]
        legal = {a["action"] for a in view["actions"]}
        assert {v["action"] for v in hint["values"]} <= legal
        if ed.information == Information.HIDDEN:
            assert hint["kind"] == "estimated", "hidden hands have no exact value"


def test_hidden_hand_hints_are_searchs_on_a_random_battle(client):
    """A hint over hidden hands is ``search``'s own: on a generated list, whose general value
    asks for the phase searched in deals, the hint says so (not the bare information-set
    search)."""
    from psygym_agents.solvers.search import hidden_search

    ed = next((e for e in EDITIONS if e.information == Information.HIDDEN and e.generator), None)
    if ed is None:
        pytest.skip("no edition with hidden hands and a generator is installed")
    body = {"edition": ed.id, "random": 3, "rounds": 1, "seat": 0, "seed": 1,
            "opponent": "random"}  # fmt: skip
    view = client.post("/api/games", json=body).json()
    for _ in range(60):
        if view["over"] or len(view["actions"]) >= 2:
            break
        r = client.post(f"/api/games/{view['id']}/actions",
                        json=act(view, view["actions"][0]["action"]))  # fmt: skip
        view = r.json()
    assert len(view["actions"]) >= 2, view
    hint = client.get(f"/api/games/{view['id']}/hint").json()
    note = hidden_search(load(ed.id, "random:3,rounds=1")).note
    assert "deals" in note and hint["kind"] == "estimated"
    assert hint["note"].endswith(note), hint["note"]
    assert {v["action"] for v in hint["values"]} == {a["action"] for a in view["actions"]}


# ----------------------------------------------------------------------------- bad requests
def test_bad_requests_get_a_one_line_json_error_and_the_game_is_unharmed(client):
    ed = EDITIONS[-1]
    view = client.post("/api/games", json={**short_game(ed), "seat": 0, "seed": 3}).json()
    gid = view["id"]
    legal = {a["action"] for a in view["actions"]}
    illegal = max(legal) + 1000
    bad = [
        client.get("/api/games/0123456789abcdef"),
        client.post("/api/games/nope/actions", json={"action": 0, "step": 0}),
        client.post(f"/api/games/{gid}/actions", json=act(view, illegal)),
        client.post(f"/api/games/{gid}/actions", json=act(view, "1")),
        client.post(f"/api/games/{gid}/actions", json={"nothing": 1}),
        client.post(
            f"/api/games/{gid}/actions",
            content=b"{not json",
            headers={"content-type": "application/json"},
        ),
        client.post("/api/games", json={"edition": "no-such-edition"}),
        client.post("/api/games", json={"edition": ed.id, "scenario": "../../etc/passwd"}),
        client.post("/api/games", json={"edition": ed.id, "opponent": "runs/x/model.zip"}),
        client.post("/api/games", json={"edition": ed.id, "opponent": "sb3"}),
        client.post("/api/games", json={"edition": ed.id, "seat": 2}),
        client.post("/api/games", json={"edition": ed.id, "seed": -1}),
        client.post("/api/games", json={"edition": ed.id, "upload": "0123456789abcdef"}),
        client.post("/api/games", json=[1, 2]),
        client.post("/api/scenarios", content=b"this is = = not toml", headers=TOML),
        client.post("/api/scenarios", content=b'edition = "nope"\n', headers=TOML),
        client.post("/api/scenarios", content=b"\xff\xfe", headers=TOML),
        client.get("/api/games/../../etc/passwd/log"),
        client.get("/api/games/zzzz/log"),
    ]
    for r in bad:
        assert 400 <= r.status_code < 500, (r.request.url, r.status_code, r.text)
        body = r.json()
        assert set(body) == {"error"} and body["error"] and "\n" not in body["error"], body
    assert "not legal" in bad[2].json()["error"]
    assert "not valid JSON" in bad[5].json()["error"]
    after = client.get(f"/api/games/{gid}").json()
    assert after == view, "the game is unchanged by the bad requests"
    play_out(client, after)


def test_malformed_upload_names_the_field(client):
    ed = EDITIONS[0]
    text = (Path(ed.scenario_dir) / f"{ed.default_scenario}.toml").read_text()
    data = tomllib.loads(text)
    data["sides"] = data["sides"][:1]
    r = client.post("/api/scenarios", content=toml_text(data).encode(), headers=TOML)
    assert r.status_code == 400
    assert "sides" in r.json()["error"]


def test_uploaded_scenario_plays_and_replays(client, tmp_path):
    ed = EDITIONS[0]
    game = short_game(ed)
    text = (Path(ed.scenario_dir) / f"{game['scenario']}.toml").read_text()
    r = client.post("/api/scenarios", content=text.encode(), headers=TOML)
    assert r.status_code == 200, r.text
    up = r.json()
    assert up["edition"] == ed.id
    body = {"upload": up["upload"], "seat": 1, "seed": 4, "rounds": game.get("rounds")}
    view, _ = play_out(client, client.post("/api/games", json=body).json())
    path = tmp_path / "up.jsonl"
    path.write_text(client.get(view["result"]["log_url"]).text)
    done = replay(path)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("ed", EDITIONS, ids=lambda e: e.id)
def test_random_battle_plays_and_replays(client, ed, tmp_path):
    """A random battle: the armies the edition's generator draws from the battle seed."""
    options = {o["id"]: o for o in client.get("/api/options").json()}
    assert options[ed.id]["random_battle"] is (ed.generator is not None)
    body = {"edition": ed.id, "random": 12, "rounds": 1, "seat": 0, "seed": 2,
            "opponent": "random"}  # fmt: skip
    r = client.post("/api/games", json=body)
    assert r.status_code == 200, r.text
    view = r.json()
    assert view["scenario"] == "random-12-rounds1"
    header = json.loads(next(iter(client.store.games_dir.glob(f"{view['id']}.jsonl"))).open()
                        .readline())  # fmt: skip
    assert header["scenario_arg"] == "random:12,rounds=1" and header["scenario_path"] is None
    assert load(ed.id, header["scenario_arg"]).scenario.name == "random-12-rounds1"
    view, _ = play_out(client, view)
    path = tmp_path / "random.jsonl"
    path.write_text(client.get(view["result"]["log_url"]).text)
    done = replay(path)
    assert done.returncode == 0, done.stdout + done.stderr


def test_bad_random_battles_get_a_one_line_json_error(client):
    ed = EDITIONS[0]
    upload = client.post(
        "/api/scenarios", headers=TOML,
        content=(Path(ed.scenario_dir) / f"{ed.default_scenario}.toml").read_bytes(),
    ).json()["upload"]  # fmt: skip
    cases = {
        "-1": {"random": -1},
        "'7'": {"random": "7"},
        "True": {"random": True},
        "a seed from 0 to 9223372036854775807, got 9223372036854775808": {"random": 2**63},
        "not both": {"random": 1, "upload": upload},
        "allowed: 1 to 20": {"random": 1, "rounds": 30},
    }
    for words, extra in cases.items():
        r = client.post("/api/games", json={"edition": ed.id, "seat": 0, "seed": 0, **extra})
        assert r.status_code == 400, (extra, r.text)
        body = r.json()
        assert set(body) == {"error"} and "\n" not in body["error"] and words in body["error"]


def test_rounds_override_is_logged_as_the_scenario_file_written(client):
    ed = next(e for e in EDITIONS if "rounds" in short_game(e))
    body = {**short_game(ed), "seat": 0, "seed": 0}
    view = client.post("/api/games", json=body).json()
    header = json.loads(next(iter(client.store.games_dir.glob(f"{view['id']}.jsonl"))).open()
                        .readline())  # fmt: skip
    rules = load(ed.id, header["scenario_arg"])
    length = tomllib.loads(Path(header["scenario_path"]).read_text())["game"]
    assert body["rounds"] in length.values()
    assert rules.initial_state() is not None


def test_toml_text_round_trips_every_shipped_scenario():
    for ed in EDITIONS:
        for name in ed.scenario_names():
            data = tomllib.loads((Path(ed.scenario_dir) / f"{name}.toml").read_text())
            assert tomllib.loads(toml_text(data)) == data


# ----------------------------------------------------------------------------- expiry, restart
def test_idle_games_expire_and_their_logs_survive_a_restart(tmp_path):
    ed = EDITIONS[-1]
    store = GameStore(tmp_path / "runs", idle_seconds=3600)
    with TestClient(create_app(store)) as c:
        view = c.post("/api/games", json={**short_game(ed), "seat": 0, "seed": 8}).json()
        gid = view["id"]
        assert not view["over"]
        c.post(f"/api/games/{gid}/actions", json=act(view, view["actions"][0]["action"]))
        steps_logged = len((store.games_dir / f"{gid}.jsonl").read_text().splitlines())
        assert steps_logged >= 2, "steps are logged as they are played"
        store.idle_seconds = 0.0
        assert store.sweep() == 1
        gone = c.get(f"/api/games/{gid}")
        assert gone.status_code == 404 and "expired" in gone.json()["error"]
    lines = (store.games_dir / f"{gid}.jsonl").read_text().splitlines()
    assert json.loads(lines[-1])["type"] == "end" and json.loads(lines[-1])["result"] == "quit"
    # A new server over the same runs folder serves the log; replay accepts it.
    with TestClient(create_app(GameStore(tmp_path / "runs"))) as c2:
        log = c2.get(f"/api/games/{gid}/log")
        assert log.status_code == 200 and log.text.splitlines() == lines
    assert replay(store.games_dir / f"{gid}.jsonl").returncode == 0


# ----------------------------------------------------------------------------- hidden information
def hidden_strings(rules: Any, states: list[Any], seat: int) -> set[str]:
    """Lines of the full view that the seat's view lacks (the other hand, a secret bid)."""
    out = set()
    for s in states:
        mine = set(rules.render(s, seat).splitlines())
        for line in rules.render(s, None).splitlines():
            if line not in mine and len(line.strip()) >= 6:
                out.add(line.strip())
    return out


def private_labels(rules: Any, log_lines: list[dict], seat: int) -> tuple[list[Any], set[str]]:
    """States visited, and labels of chance outcomes or AI choices hidden from ``seat``.

    Hidden: another alternative leads to a state ``render(s, seat)`` cannot tell apart from the
    one reached although ``render(s, None)`` can (a card dealt to the other hand).
    """
    s = rules.initial_state()
    states, labels = [s], set()
    for line in log_lines:
        if line["type"] != "step":
            continue
        player = rules.current_player(s)
        assert player != TERMINAL
        alts = (
            [o for o, _ in rules.chance_outcomes(s)] if player == CHANCE else rules.legal_actions(s)
        )
        nxt = rules.apply(s, line["action"])
        if player != seat:
            mine, full = rules.render(nxt, seat), rules.render(nxt, None)
            for b in alts:
                if b == line["action"]:
                    continue
                other = rules.apply(s, b, check=False)
                if rules.render(other, seat) == mine and rules.render(other, None) != full:
                    labels.add(line["label"])
                    break
        s = nxt
        states.append(s)
    return states, labels


@pytest.mark.parametrize("seat", [0, 1])
def test_hidden_hand_never_reaches_the_player(client, seat):
    hidden_eds = [e for e in EDITIONS if e.information == Information.HIDDEN]
    if not hidden_eds:
        pytest.skip("no edition with hidden information is installed")
    ed = hidden_eds[0]
    # A seed whose short game deals the other hand something it could have been dealt otherwise
    # in both seats (since every answerable cast gets a response step, 2E-5.2, games differ).
    body = {**short_game(ed), "seat": seat, "seed": 3, "opponent": "random"}
    responses = [client.get("/").text]
    r = client.post("/api/games", json=body)
    view = r.json()
    responses.append(r.text)
    gid = view["id"]
    for i in range(300):
        responses.append(client.get(f"/api/games/{gid}").text)
        if view["over"]:
            break
        responses.append(client.get(f"/api/games/{gid}/hint").text)
        action = view["actions"][i % len(view["actions"])]["action"]
        r = client.post(f"/api/games/{gid}/actions", json=act(view, action))
        responses.append(r.text)
        view = r.json()
    assert view["over"]
    log_lines = [json.loads(x) for x in client.get(view["result"]["log_url"]).text.splitlines()]
    rules = load(ed.id, log_lines[0]["scenario_arg"])
    states, labels = private_labels(rules, log_lines, seat)
    secrets = hidden_strings(rules, states, seat)
    assert secrets and labels, "the game must hold something hidden for this test to mean much"
    for text in responses:
        for secret in secrets | labels:
            assert secret not in text, f"{secret!r} reached the player"


def test_pending_secret_bid_never_reaches_the_player(client):
    eds = [e for e in EDITIONS if e.information == Information.SIMULTANEOUS]
    if not eds:
        pytest.skip("no edition with simultaneous secret moves is installed")
    ed = eds[0]
    checked = 0
    for seed in range(6):
        body = {**short_game(ed), "seat": 1, "seed": seed, "opponent": "random"}
        view = client.post("/api/games", json=body).json()
        for _ in range(200):
            game = client.store.get(view["id"])
            rules = game.rules
            text = json.dumps(view)
            for secret in hidden_strings(rules, [game.state], game.seat):
                assert secret not in text
                checked += 1
            if view["over"]:
                break
            r = client.post(
                f"/api/games/{view['id']}/actions", json=act(view, view["actions"][-1]["action"])
            )
            view = r.json()
    assert checked, "no pending secret bid was seen in six games"


def test_serve_command_binds_to_this_machine_by_default():
    import inspect

    import typer
    from psygym_experiments import serve
    from typer.testing import CliRunner

    app = typer.Typer()
    serve.register(app)
    app.command("noop")(lambda: None)
    out = CliRunner().invoke(app, ["serve", "--help"])
    assert out.exit_code == 0 and "--host" in out.output and "--port" in out.output
    params = inspect.signature(serve.serve).parameters
    assert params["host"].default.default == "127.0.0.1"
    assert params["port"].default.default == 8000


def test_only_safe_format_models_are_offered_and_one_plays(client):
    played = 0
    for ed in EDITIONS:
        models = client.store.models(ed.id)
        for m in models:
            assert m["spec"].endswith((".safetensors", ".json")), m
            assert m["scenario"] in ed.scenario_names() and m["seat"] in (None, 0, 1), m
        options = next(o for o in client.get("/api/options").json() if o["id"] == ed.id)
        offered = {a["name"] for a in options["agents"]}
        assert {m["name"] for m in models} <= offered
        assert all("/" not in name for name in offered), "the page never gets a path to send"
        assert all(set(a) == {"name", "title", "description", "scenario", "seat"}
                   for a in options["agents"])  # fmt: skip
        fit = [m for m in models if m["scenario"] == ed.default_scenario and m["seat"] in (None, 0)]
        if played or not fit:
            continue
        body = {"edition": ed.id, "scenario": ed.default_scenario, "opponent": fit[0]["name"]}
        r = client.post("/api/games", json={**body, "seat": 1, "seed": 0})
        assert r.status_code == 200, r.text
        assert r.json()["opponent"] == fit[0]["title"]
        played += 1
    if not played:
        pytest.skip("no safe-format model is installed")


def _user_model(shipped: Path, run: Path, stem: str = "model", **meta: Any) -> Path:
    """A model of the user's own in ``run``: ``shipped``'s weights changed a little, ``meta``
    over its JSON; returns the weights file."""
    from psygym_agents.safe_model import file_sha256
    from safetensors.numpy import load_file, save_file

    tensors = load_file(str(shipped))
    first = sorted(tensors)[0]
    tensors[first] = tensors[first] + 1e-3 * (len(str(run)) + len(stem))
    run.mkdir(parents=True, exist_ok=True)
    weights = run / f"{stem}.safetensors"
    save_file(tensors, str(weights))
    doc = json.loads(shipped.with_suffix(".json").read_text())
    doc.update(meta, weights_sha256=file_sha256(weights))
    weights.with_suffix(".json").write_text(json.dumps(doc))
    return weights


def test_opponents_fit_the_edition_scenario_and_seat(tmp_path):
    """Issue 39: the list offered models of another scenario, a checkpoint and look-alikes."""
    sb3 = pytest.importorskip("psygym_agents.sb3")
    pytest.importorskip("safetensors")
    shipped = sorted(Path(sb3.PRETRAINED_DIR).glob("*-seat1.safetensors"))
    if not shipped:
        pytest.skip("no shipped safe model")
    one = shipped[0]
    doc = json.loads(one.with_suffix(".json").read_text())
    ed = registry.get(doc["edition"])
    other = next((n for n in ed.scenario_names() if n != doc["scenario"]), None)
    runs = tmp_path / "runs"
    run = runs / ed.id / doc["scenario"] / "maskable-ppo_1"
    mine = _user_model(one, run)
    _user_model(one, run / "checkpoints" / "step_512")  # a checkpoint: never offered
    best = run / "best_model.safetensors"  # the same weights as the final model: one entry
    best.write_bytes(mine.read_bytes())
    best.with_suffix(".json").write_text(mine.with_suffix(".json").read_text())
    if other is not None:  # made for another scenario: its spaces fit, its scenario does not
        _user_model(one, runs / "other" / "run_1", scenario=other)
    store = GameStore(runs)
    models = store.models(ed.id)
    titles = [m["title"] for m in models]
    assert all(m["scenario"] in ed.scenario_names() for m in models)
    assert len(titles) == len(set(titles)), "no two entries look the same"
    own = [m for m in models if "shipped" not in m["title"]]
    title = f"maskable-ppo model for {doc['scenario']} seat 1, {run}"
    assert [m["title"] for m in own] == [title], own
    assert own[0]["seat"] == 1 and own[0]["scenario"] == doc["scenario"]
    assert models.index(own[0]) > max(i for i, m in enumerate(models) if "shipped" in m["title"])
    assert any(m["title"] == f"maskable-ppo model for {doc['scenario']} seat 1, shipped"
               for m in models)  # fmt: skip
    with TestClient(create_app(store)) as c:
        options = next(o for o in c.get("/api/options").json() if o["id"] == ed.id)
        assert [a["title"] for a in options["agents"] if a["name"].startswith("model:")] == titles
        body = {"edition": ed.id, "scenario": doc["scenario"], "opponent": own[0]["name"]}
        r = c.post("/api/games", json={**body, "seat": 0, "seed": 0})  # the AI plays seat 1
        assert r.status_code == 200, r.text
        assert r.json()["opponent"] == title
        wrong_seat = c.post("/api/games", json={**body, "seat": 1, "seed": 0})
        assert wrong_seat.status_code == 400
        assert "seat 1" in wrong_seat.json()["error"] and "seat 0" in wrong_seat.json()["error"]
        if other is not None:
            r = c.post("/api/games", json={**body, "scenario": other, "seat": 0})
            assert r.status_code == 400 and repr(doc["scenario"]) in r.json()["error"]
