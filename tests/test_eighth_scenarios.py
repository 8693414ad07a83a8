"""8th-edition scenarios, env and robustness: shipped files, bad files, seeds, many games."""

from __future__ import annotations

import tomllib
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from psygym_agents.base import RandomPolicy

import psygym.envs
from psygym.conformance import check_rules
from psygym.core import play_game
from psygym.editions import load, load_file, scenario_names
from psygym.editions.eighth import DEFAULT_SCENARIO, EDITION, SCENARIO_DIR
from psygym.scenario import ScenarioError

SHIPPED = ["duel", "single-phase", "smite-spam"]


def test_shipped_scenarios_and_defaults():
    assert EDITION.id == "8th" and DEFAULT_SCENARIO == EDITION.default_scenario == "duel"
    assert scenario_names("8th") == sorted(SHIPPED)
    duel = load("8th", "default")
    assert duel.scenario.name == "duel" and duel.game.battle_rounds == 5
    for side in duel.scenario.sides:  # two psykers and one other unit per side
        assert sorted(u.psyker for u in side.units) == [False, True, True]
    spam = load("8th", "smite-spam")
    lords, (gm,) = spam.scenario.sides[0].units, spam.scenario.sides[1].units
    assert len(lords) == 4 and all(u.psyker and not u.powers for u in lords)
    assert gm.psyker and gm.deny == 2
    assert [p.name for p in spam.powers] == ["Smite"]


@pytest.mark.parametrize("name", SHIPPED)
def test_check_rules_on_shipped_scenarios(name):
    report = check_rules(load("8th", name), games=40, seed=1)
    assert report.games == 40 and report.decision_nodes > 0 and report.chance_nodes > 0


@pytest.mark.parametrize("name", SHIPPED)
def test_check_env(name):
    psygym.envs.register_envs()
    check_env(gym.make("psygym/Eighth-v0", scenario=name, opponent="random").unwrapped)


@pytest.mark.parametrize("name", SHIPPED)
def test_env_masked_episode(name):
    psygym.envs.register_envs()
    env = gym.make("psygym/Eighth-v0", scenario=name, opponent="random", seat=1).unwrapped
    rng = np.random.default_rng(5)
    for episode in range(5):
        obs, info = env.reset(seed=episode)
        total = 0.0
        terminated = False
        while not terminated:
            assert env.observation_space.contains(obs)
            mask = info["action_mask"]
            assert (mask == env.action_masks()).all() and mask.any()
            action = int(rng.choice(np.flatnonzero(mask)))
            obs, reward, terminated, truncated, info = env.step(action)
            total += reward
            assert not truncated
        assert total == pytest.approx(info["score"])
        assert info["score"] == pytest.approx(env.rules.returns(env.state)[1])


def test_env_same_seed_same_trajectory():
    psygym.envs.register_envs()

    def rollout(seed):
        env = gym.make("psygym/Eighth-v0", scenario="duel", opponent="random").unwrapped
        obs, info = env.reset(seed=seed)
        rng = np.random.default_rng(seed)
        trace = [obs.tobytes()]
        terminated = False
        while not terminated:
            action = int(rng.choice(np.flatnonzero(info["action_mask"])))
            obs, reward, terminated, _, info = env.step(action)
            trace.append((action, obs.tobytes(), reward, [e.text for e in info["events"]]))
        return trace

    assert rollout(11) == rollout(11)
    assert rollout(11) != rollout(12)


def test_rules_same_seed_same_trajectory():
    rules = load("8th", "duel")
    policies = [RandomPolicy(), RandomPolicy()]

    def events(seed):
        out = []
        play_game(
            rules,
            policies,
            np.random.default_rng(seed),
            on_step=lambda s, a, ev: out.extend((a, e.text) for e in ev),
        )
        return out

    assert events(3) == events(3)
    assert events(3) != events(4)


def test_thousand_random_games():
    rules = load("8th", "duel")
    policies = [RandomPolicy(), RandomPolicy()]
    rng = np.random.default_rng(0)
    kinds: dict[str, int] = {}

    def count(s, a, events):
        for e in events:
            kinds[e.kind] = kinds.get(e.kind, 0) + 1

    for _ in range(1000):
        end = play_game(rules, policies, rng, on_step=count)
        assert rules.is_terminal(end) and end.round <= 5
        assert sum(rules.returns(end)) == 0
    # Every kind of event happened, Perils about 2/36 of the attempts.
    for kind in (
        "phase",
        "attempt",
        "passed",
        "failed",
        "perils",
        "deny_attempt",
        "denied",
        "manifest",
        "wounds",
        "slain",
    ):
        assert kinds.get(kind, 0) > 0, kind
    assert abs(kinds["perils"] / kinds["attempt"] - 2 / 36) < 0.01


# ---------------------------------------------------------------- bad scenario files


def _duel() -> dict:
    with open(SCENARIO_DIR / "duel.toml", "rb") as fh:
        return tomllib.load(fh)


def _toml(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + value.replace('"', '\\"').replace("\n", "\\n") + '"'
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f'"{k}" = {_toml(v)}' for k, v in value.items()) + " }"
    return repr(value)


def _write(path: Path, data: dict) -> Path:
    lines = []
    for key, value in data.items():
        if key not in ("game", "sides"):
            lines.append(f"{key} = {_toml(value)}")
    if "game" in data:
        lines.append("[game]")
        lines += [f'"{k}" = {_toml(v)}' for k, v in data["game"].items()]
    for side in data.get("sides", []):
        lines.append("[[sides]]")
        lines += [f"{k} = {_toml(v)}" for k, v in side.items() if k != "units"]
        if not side.get("units"):
            lines.append("units = []")
        for unit in side.get("units", []):
            lines.append("[[sides.units]]")
            lines += [f"{k} = {_toml(v)}" for k, v in unit.items()]
    path.write_text("\n".join(lines) + "\n")
    return path


def _edit(fn):
    data = _duel()
    fn(data)
    return data


BAD = {
    "missing wounds": (
        lambda d: d["sides"][0]["units"][0].pop("wounds"),
        "sides.0.units.0.wounds",
        "required",
    ),
    "wrong type": (
        lambda d: d["sides"][0]["units"][1].__setitem__("wounds", "many"),
        "sides.0.units.1.wounds",
        "integer",
    ),
    "out of range": (
        lambda d: d["sides"][1]["units"][0].__setitem__("save", 1),
        "sides.1.units.0.save",
        "at least 2",
    ),
    "battle rounds": (
        lambda d: d["game"].__setitem__("battle_rounds", 0),
        "game.battle_rounds",
        "at least 1",
    ),
    "unknown power": (
        lambda d: d["sides"][0]["units"][0]["powers"].append("Gate of Infinity"),
        "sides.0.units.0.powers.2",
        "Might of Heroes",
    ),
    "duplicate name": (
        lambda d: d["sides"][1]["units"][2].__setitem__("name", "Librarian"),
        "sides.1.units.2.name",
        "used twice",
    ),
    "position not a pair": (
        lambda d: d["sides"][0]["units"][2].__setitem__("position", [1, 2, 3]),
        "sides.0.units.2.position",
        "position",
    ),
    "empty side": (lambda d: d["sides"][1].__setitem__("units", []), "sides.1.units", "length 1"),
    "non-psyker powers": (
        lambda d: d["sides"][0]["units"][2].__setitem__("powers", ["Doom"]),
        "sides.0.units.2.powers",
        "not a PSYKER",
    ),
    "unknown field": (
        lambda d: d["sides"][0]["units"][0].__setitem__("mastery", 2),
        "sides.0.units.0.mastery",
        "only the fields",
    ),
    "wrong edition": (lambda d: d.__setitem__("edition", "7th"), "edition", "8th"),
    "bad dice": (
        lambda d: d["game"].__setitem__("perils_mortal_wounds", "D3+x"),
        "game.perils_mortal_wounds",
        "dice expression",
    ),
    "bad phases": (
        lambda d: d["game"].__setitem__("first_player", 2),
        "game.first_player",
        "0 or 1",
    ),
    "value override": (
        lambda d: d["game"].__setitem__("power_values", {"Smite": 2}),
        "game.power_values.Smite",
        "Doom",
    ),
    "one side": (lambda d: d["sides"].pop(), "sides", "length 2"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_scenario_files_name_file_and_field(tmp_path, case):
    edit, field, hint = BAD[case]
    path = _write(tmp_path / "bad.toml", _edit(edit))
    with pytest.raises(ScenarioError) as err:
        load("8th", path)
    msg = str(err.value)
    assert str(path) in msg and f"field {field}" in msg and hint in msg, msg


def test_edition_field_is_checked_by_the_8th_loader():
    from psygym.editions.eighth import rules_from_data

    data = _duel()
    data["edition"] = "7th"
    with pytest.raises(ScenarioError, match="x.toml: field edition: .*'8th'"):
        rules_from_data(data, "x.toml")


def test_write_helper_round_trips(tmp_path):
    path = _write(tmp_path / "ok.toml", _duel())
    assert load_file(path).scenario == load("8th", "duel").scenario


def test_power_value_override_and_custom_power_file(tmp_path):
    data = _edit(lambda d: d["game"].__setitem__("power_values", {"Doom": 5}))
    rules = load("8th", _write(tmp_path / "ok.toml", data))
    assert rules.powers[rules.power_index["Doom"]].value == 5
    (tmp_path / "powers.toml").write_text(
        '[[powers]]\nname = "Smite"\nwarp_charge = 5\nrange = 18\ntarget = "closest_enemy"\n'
        "known_by_all_psykers = true\nrepeatable = true\nescalation = 1\n"
        'effect = { mortal_wounds = "D3" }\n'
        '[[powers]]\nname = "Bolt"\nwarp_charge = 6\nrange = 18\ntarget = "enemy"\n'
        'effect = { attack = { hits = "D3", strength = 5, ap = -1, damage = "2" } }\n'
    )
    data = _duel()
    data["powers_file"] = "powers.toml"
    for side in data["sides"]:
        for unit in side["units"]:
            if unit.get("powers"):
                unit["powers"] = ["Bolt"]
    rules = load("8th", _write(tmp_path / "custom.toml", data))
    assert [p.name for p in rules.powers] == ["Smite", "Bolt"]
    check_rules(rules, games=10)


def test_bad_power_file_names_that_file_and_field(tmp_path):
    bad = tmp_path / "powers.toml"
    bad.write_text(
        '[[powers]]\nname = "Zap"\nwarp_charge = 5\ntarget = "friendly"\n'
        'effect = { mortal_wounds = "D3" }\n'
    )
    data = _duel()
    data["powers_file"] = "powers.toml"
    for side in data["sides"]:
        for unit in side["units"]:
            unit.pop("powers", None)
    with pytest.raises(ScenarioError) as err:
        load("8th", _write(tmp_path / "custom.toml", data))
    msg = str(err.value)
    assert str(bad) in msg and "field target" in msg and "closest_enemy, enemy" in msg, msg
    bad.write_text(
        '[[powers]]\nname = "Zap"\nwarp_charge = 5\ntarget = "none"\n'
        'effect = { value = 1, mortal_wounds = "D3" }\n'
    )
    from psygym.editions.eighth.spec import load_powers

    load_powers.cache_clear()
    with pytest.raises(ScenarioError, match="exactly one of"):
        load("8th", _write(tmp_path / "custom.toml", data))
    missing = _duel()
    missing["powers_file"] = "nowhere.toml"
    with pytest.raises(ScenarioError, match="field powers_file: no such file"):
        load("8th", _write(tmp_path / "missing.toml", missing))
