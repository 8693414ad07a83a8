"""Rogue Trader scenarios and data files: conformance, validation errors, illegal actions."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from psygym.conformance import check_rules
from psygym.core import IllegalActionError
from psygym.editions import load, scenario_names
from psygym.editions.rogue_trader import DEFAULT_SCENARIO, SCENARIO_DIR
from psygym.editions.rogue_trader.abilities import DATA_DIR, load_data
from psygym.scenario import ScenarioError

GOOD = """\
edition = "rt"
name = "t"
[game]
turns = 4
[[sides]]
name = "A"
[[sides.units]]
name = "Seer"
wounds = 2
position = [0.0, 0.0]
mastery = 2
intelligence = 4
abilities = ["Mental Blow", "Mental Bolt"]
[[sides]]
name = "B"
[[sides.units]]
name = "Grunts"
models = 3
wounds = 1
position = [6.0, 0.0]
"""


def test_all_forty_abilities_and_charts():
    data = load_data()
    assert len(data) == 40
    assert [sum(a.level == lv for a in data.abilities) for lv in (1, 2, 3, 4)] == [10] * 4
    charted = {n for names in data.charts.charts.values() for n in names}
    assert charted == set(data.names)
    assert data.abilities[data.index["Mental Blast"]].cost == 10
    assert data.abilities[data.index["Stasis"]].value == 0.0
    assert [row.psi_level for row in data.charts.mastery] == [10, 20, 30, 40]
    assert [row.random_psi_level for row in data.charts.mastery] == ["3D6", "6D6", "9D6", "12D6"]
    assert [row.abilities for row in data.charts.mastery] == [3, 6, 9, 10]


def test_shipped_scenarios():
    assert DEFAULT_SCENARIO == "duel"
    assert set(scenario_names("rt")) >= {"duel", "psyker-vs-squad"}
    duel = load("rt")
    assert duel.scenario.name == "duel" and duel.game.turns == 6
    masteries = [u.mastery for u in duel.specs]
    assert masteries == [2, 2]
    squad = load("rt", "psyker-vs-squad")
    assert [u.mastery for u in squad.specs] == [3, 0, 1]


@pytest.mark.parametrize("name", sorted(p.stem for p in SCENARIO_DIR.glob("*.toml")))
def test_check_rules_every_scenario(name):
    report = check_rules(load("rt", name), games=60, seed=1)
    assert report.games == 60 and report.decision_nodes > 0 and report.chance_nodes > 0


def test_check_rules_random_generation(tmp_path):
    text = GOOD.replace('abilities = ["Mental Blow", "Mental Bolt"]', 'abilities = "random"')
    text = text.replace("turns = 4", 'turns = 4\npsi_level = "random"\nability_count = "random"')
    path = tmp_path / "random.toml"
    path.write_text(text)
    report = check_rules(load("rt", path), games=60, seed=2)
    assert report.chance_nodes > 60


def test_illegal_action_lists_legal_actions():
    rules = load("rt", "duel")
    s = rules.initial_state()
    with pytest.raises(IllegalActionError) as err:
        rules.apply(s, 999)
    msg = str(err.value)
    assert "action 999 is not legal for player 0" in msg
    assert "0 (Librarian rests)" in msg and "Mental Bolt" in msg
    assert err.value.legal == rules.legal_actions(s)
    s = rules.apply(s, rules.data.index["Mental Bolt"] + 2)
    with pytest.raises(IllegalActionError, match="enhances the attack by 8"):
        rules.apply(s, rules.number_base + 9)  # 8 points left after the bolt (no cap, RT-3.2)


BAD = [
    (
        "missing field",
        ("wounds = 2\nposition = [0.0, 0.0]", "position = [0.0, 0.0]"),
        "sides.0.units.0.wounds",
        "required",
    ),
    (
        "wrong type",
        ("wounds = 2\nposition = [0.0, 0.0]", 'wounds = "two"\nposition = [0.0, 0.0]'),
        "sides.0.units.0.wounds",
        "integer",
    ),
    ("out of range", ("mastery = 2", "mastery = 5"), "sides.0.units.0.mastery", "4"),
    (
        "unknown ability",
        ('"Mental Bolt"]', '"Mind Bullets"]'),
        "sides.0.units.0.abilities.1",
        "Mental Blow",
    ),
    (
        "level above mastery",
        ('"Mental Bolt"]', '"Mental Blast"]'),
        "sides.0.units.0.abilities.1",
        "level 1..2",
    ),
    (
        "too many abilities",
        ("intelligence = 4", "intelligence = 1"),
        "sides.0.units.0.abilities",
        "at most 1",
    ),
    (
        "repeated ability",
        ('"Mental Bolt"]', '"Mental Blow"]'),
        "sides.0.units.0.abilities.1",
        "once",
    ),
    (
        "duplicate unit names",
        ('name = "Grunts"', 'name = "Seer"'),
        "sides.1.units.0.name",
        "no other unit",
    ),
    (
        "position not a pair",
        ("position = [6.0, 0.0]", "position = [6.0]"),
        "sides.1.units.0.position.1",
        "required",
    ),
    (
        "empty side",
        (
            '[[sides.units]]\nname = "Grunts"\nmodels = 3\nwounds = 1\nposition = [6.0, 0.0]\n',
            "units = []\n",
        ),
        "sides.1.units",
        "length",
    ),
    ("unknown setting", ("turns = 4", "turns = 4\nrounds = 3"), "game.rounds", "only the fields"),
    (
        "bad setting value",
        ("turns = 4", 'turns = 4\npsi_level = "huge"'),
        "game.psi_level",
        "typical",
    ),
    (
        "points above level",
        ("mastery = 2", "mastery = 2\npsi_level = 5\npsi_points = 9"),
        "sides.0.units.0.psi_points",
        "0..5",
    ),
    (
        "abilities of a non-psyker",
        ("models = 3", 'models = 3\nabilities = ["Mental Blow"]'),
        "sides.1.units.0.abilities",
        "mastery",
    ),
    (
        "psyker without abilities",
        ('abilities = ["Mental Blow", "Mental Bolt"]', ""),
        "sides.0.units.0.abilities",
        "random",
    ),
    (
        "unknown ability value",
        ("turns = 4", "turns = 4\nability_values = { Zap = 1.0 }"),
        "game.ability_values.Zap",
        "Mental Blow",
    ),
    (
        "no psyker",
        ('mastery = 2\nintelligence = 4\nabilities = ["Mental Blow", "Mental Bolt"]', ""),
        "sides",
        "mastery 1-4",
    ),
    (
        "invulnerable save",
        ("models = 3", "models = 3\ninvulnerable = 4"),
        "sides.1.units.0.invulnerable",
        "auras",
    ),
]


@pytest.mark.parametrize(("label", "edit", "field", "hint"), BAD, ids=[b[0] for b in BAD])
def test_bad_scenario_files(tmp_path, label, edit, field, hint):
    old, new = edit
    assert old in GOOD, label
    path = tmp_path / "bad.toml"
    path.write_text(GOOD.replace(old, new, 1))
    with pytest.raises(ScenarioError) as err:
        load("rt", path)
    assert err.value.source == str(path)
    assert err.value.field == field, str(err.value)
    if hint is not None:
        assert hint in str(err.value)
    assert str(path) in str(err.value) and field in str(err.value)


def test_good_scenario_loads(tmp_path):
    path = tmp_path / "good.toml"
    path.write_text(GOOD)
    rules = load("rt", path)
    assert rules.names == ("Seer", "Grunts")


def test_bad_toml_and_wrong_edition(tmp_path):
    path = tmp_path / "broken.toml"
    path.write_text("edition = \n")
    with pytest.raises(ScenarioError, match="not valid TOML"):
        load("rt", path)
    path.write_text(GOOD.replace('edition = "rt"', 'edition = "7th"'))
    with pytest.raises(ScenarioError) as err:
        load("rt", path)
    assert err.value.field == "edition"
    with pytest.raises(ScenarioError, match="duel"):
        load("rt", "no-such-scenario")


def _copy_data(tmp_path: Path) -> Path:
    d = tmp_path / "data"
    shutil.copytree(DATA_DIR, d)
    return d


def test_bad_ability_data_file(tmp_path):
    d = _copy_data(tmp_path)
    f = d / "abilities.toml"
    f.write_text(f.read_text().replace('damage = "D4"', 'damage = "D4x"', 1))
    with pytest.raises(ScenarioError) as err:
        load_data(str(d))
    assert err.value.source == str(f) and err.value.field == "abilities.13.damage"
    f.write_text(
        (DATA_DIR / "abilities.toml")
        .read_text()
        .replace('effect = "mental"', 'effect = "lightning"', 1)
    )
    with pytest.raises(ScenarioError) as err:
        load_data(str(d))
    assert err.value.field == "abilities.4.effect" and "mental" in str(err.value)


def test_bad_chart_file(tmp_path):
    d = _copy_data(tmp_path)
    f = d / "charts.toml"
    f.write_text(f.read_text().replace('"Wind Blast"]', '"Mental Bolt"]'))
    with pytest.raises(ScenarioError) as err:
        load_data(str(d))
    assert err.value.source == str(f) and err.value.field == "charts.1.9"
    assert "level 2" in str(err.value)
