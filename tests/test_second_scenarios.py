"""2nd edition: shipped scenarios pass the conformance checker; bad files fail clearly."""

from __future__ import annotations

from pathlib import Path

import pytest

from psygym import ScenarioError, check_rules, load
from psygym.editions import load_file, scenario_names
from psygym.editions.second import SCENARIO_DIR
from psygym.editions.second.data import DATA_DIR, load_deck, load_powers
from psygym.editions.second.spec import RuleSettings

LVF = (SCENARIO_DIR / "librarian-vs-farseer.toml").read_text()
DUEL = (SCENARIO_DIR / "duel.toml").read_text()


def test_shipped_scenarios():
    assert scenario_names("2nd") == ["duel", "librarian-vs-farseer", "smite-skirmish"]
    assert load("2nd").scenario.name == "duel"  # DEFAULT_SCENARIO


@pytest.mark.parametrize("name", ["duel", "librarian-vs-farseer"])
def test_check_rules_on_every_shipped_scenario(name):
    rules = load("2nd", name)
    report = check_rules(rules, games=60, seed=3)
    assert report.games == 60 and report.decision_nodes > 0 and report.chance_nodes > 0


def test_duel_has_two_psykers_a_side_and_five_rounds():
    rules = load("2nd", "duel")
    assert rules.psyker_side == (0, 0, 1, 1)
    assert rules.game.battle_rounds == 5
    assert rules.settings == RuleSettings()  # the file spells out every default


def test_librarian_vs_farseer_one_ml3_each_one_hood():
    rules = load("2nd", "librarian-vs-farseer")
    assert rules.ml == (3, 3) and rules.hood == (True, False)
    assert rules.settings == RuleSettings()


def test_every_default_is_a_named_setting():
    names = set(RuleSettings.model_fields)
    assert {
        "ml_limits_power_level",
        "warp_flux_dice",
        "flux_cap",
        "deal_first",
        "retain_specials",
        "responses_per_power",
        "nullify_ml_step",
        "destroy_power",
        "reflection",
        "daemonic_attack_below",
        "psychic_duel_dice",
    } <= names
    defaults = RuleSettings()
    assert defaults.warp_flux_dice == 2 and defaults.retain_specials is False
    assert defaults.responses_per_power == 1 and defaults.nullify_ml_step == 1
    assert defaults.nullify_target == 4


def test_settings_are_honoured_by_the_game_settings_override():
    assert load("2nd", "duel", battle_rounds=2).game.battle_rounds == 2


_EMPTY_SIDE = LVF[: LVF.index('name = "Eldar"')] + 'name = "Eldar"\nunits = []\n'

BAD = [
    # (name, text, field in the message, word in the message)
    ("missing", LVF.replace("wounds = 3\n", "", 1), "sides.0.units.0.wounds", "required"),
    ("type", LVF.replace("mastery = 3", 'mastery = "three"', 1),
     "sides.0.units.0.psyker.mastery", "int"),
    ("range", LVF.replace("mastery = 3", "mastery = 5", 1),
     "sides.0.units.0.psyker.mastery", "less than or equal to 4"),
    ("power", LVF.replace('"Smite"', '"Smote"'), "sides.0.units.0.psyker.powers.0", "Destroyer"),
    ("twice", LVF.replace('"Psychic Shield"', '"Smite"'), "sides.0.units.0.psyker.powers.1",
     "twice"),
    ("discipline", DUEL.replace('["Eldar"]', '["Eldr"]', 1),
     "sides.1.units.0.psyker.disciplines.0", "Adeptus, Eldar"),
    ("duplicate", LVF.replace('name = "Farseer"', 'name = "Librarian"'), "sides.1.units.0.name",
     "used twice"),
    ("pair", LVF.replace("position = [0.0, 10.0]", "position = [0.0]"),
     "sides.1.units.0.position", "required"),
    ("empty side", _EMPTY_SIDE, "sides.1.units", "length"),
    ("both", LVF.replace("psychic_hood = true", 'psychic_hood = true, disciplines = ["Adeptus"]'),
     "sides.0.units.0.psyker", "exactly one"),
    ("neither", LVF.replace('powers = ["Mind War", "Warp Blast", "Storm of Lightning"]',
                            "psychic_hood = false"), "sides.1.units.0.psyker", "exactly one"),
    ("not psyker", DUEL.replace('name = "Tactical Squad"', 'name = "Tactical Squad"\n'
     'powers = ["Smite"]'), "sides.0.units.2.powers", "only the fields"),
    ("multi-model psyker", LVF.replace('name = "Farseer"', 'name = "Farseer"\nmodels = 2'),
     "sides.1.units.0.models", "single model"),
    ("setting", LVF.replace("warp_flux_dice = 2", "warp_flux = 2"), "rules.warp_flux",
     "only the fields"),
    ("flux", LVF.replace("warp_flux_dice = 2", "warp_flux_dice = 9"), "rules.warp_flux_dice",
     "less than or equal to 6"),
    ("dice", LVF.replace("warp_flux_dice = 2", 'psychic_duel_dice = "2X6"'),
     "rules.psychic_duel_dice", "dice expression"),
    ("choice", LVF.replace("warp_flux_dice = 2", 'flux_cap = "sometimes"'), "rules.flux_cap",
     "both-sides"),
    ("bounds", LVF.replace("warp_flux_dice = 2", "nullify_best = 5\nnullify_worst = 4"),
     "rules.nullify_best", "harder"),
    ("value", LVF.replace("[rules]", '[power_values]\n"Smote" = 1.0\n\n[rules]'),
     "power_values.Smote", "unknown power"),
    ("rounds", LVF.replace("battle_rounds = 5", "battle_rounds = 0"), "game.battle_rounds",
     "greater than or equal to 1"),
]  # fmt: skip


@pytest.mark.parametrize("name, text, field, word", BAD, ids=[b[0] for b in BAD])
def test_bad_scenario_file_names_file_and_field(tmp_path, name, text, field, word):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(ScenarioError) as err:
        load("2nd", path)
    msg = str(err.value)
    assert msg.startswith(str(path)), msg
    assert f"field {field}" in msg, msg
    assert word in msg, msg


def test_a_discipline_with_too_few_powers_for_the_mastery_level():
    spec = load("2nd", "duel").scenario
    few = tuple(p for p in load_powers() if p.name in ("Smite", "Warp Blast"))
    with pytest.raises(ValueError, match="only 2 powers to draw for a mastery level 3"):
        spec.check_powers(few)


def test_wrong_edition_syntax_and_missing_file(tmp_path):
    wrong = tmp_path / "seventh.toml"
    wrong.write_text(LVF.replace('edition = "2nd"', 'edition = "7th"'))
    with pytest.raises(ScenarioError, match="field edition"):
        load("2nd", wrong)
    broken = tmp_path / "broken.toml"
    broken.write_text(LVF.replace("[game]", "[game"))
    with pytest.raises(ScenarioError, match="not valid TOML"):
        load("2nd", broken)
    with pytest.raises(ScenarioError, match="no shipped 2nd scenario"):
        load("2nd", "no-such-scenario")
    good = tmp_path / "good.toml"
    good.write_text(LVF)
    assert load_file(good).edition == "2nd"


POWER = """
[[powers]]
name = "Zap"
cost = {cost}
disciplines = ["Test"]
target = "enemy"
range = 12
effects = [{effects}]
"""


@pytest.mark.parametrize(
    "cost, effects, field",
    [
        ('"0-4"', '{ force = 0, type = "value", value = 1.0 }', "powers.0.cost"),
        ("2", '{ force = 1, type = "value", value = 1.0 }', "powers.0"),
        ("1", '{ force = 1, type = "beam", value = 1.0 }', "powers.0.effects.0"),
        (
            "1",
            '{ force = 1, type = "attack", hits = "D7x", strength = 4 }',
            "powers.0.effects.0.attack.hits",
        ),
    ],
)
def test_bad_power_data_names_file_and_field(tmp_path, cost, effects, field):
    path = tmp_path / "powers.toml"
    path.write_text(POWER.format(cost=cost, effects=effects))
    with pytest.raises(ScenarioError) as err:
        load_powers(path)
    assert str(err.value).startswith(str(path)) and f"field {field}" in str(err.value)


def test_bad_deck_data_names_file_and_field(tmp_path):
    text = (DATA_DIR / "deck.toml").read_text()
    path = tmp_path / "deck.toml"
    path.write_text(text.replace("energy_drain = 1\n", ""))
    with pytest.raises(ScenarioError, match="field cards.energy_drain"):
        load_deck(path)
    path.write_text(text.replace("force = 22", "force = -1"))
    with pytest.raises(ScenarioError, match="field cards.force"):
        load_deck(path)


def test_shipped_power_data_matches_disciplines_md():
    powers = {p.name: p for p in load_powers()}
    assert list(powers) == [
        "Smite",
        "Warp Blast",
        "Storm of Lightning",
        "Psychic Shield",
        "Aura of Fortitude",
        "Mind War",
        "Destroyer",
        "Teleport",
        "Quickening",
        "Holocaust",
    ]
    costs = {n: (p.min_force, p.max_force) for n, p in powers.items()}
    assert costs["Smite"] == (1, 1) and costs["Warp Blast"] == (0, 3)
    assert costs["Destroyer"] == (3, 3) and costs["Holocaust"] == (3, 3)
    assert {n for n, p in powers.items() if p.remain_in_play} == {
        "Psychic Shield",
        "Aura of Fortitude",
        "Quickening",
    }
    blast = powers["Warp Blast"]
    assert [(e.strength, e.damage) for e in blast.effects[1:]] == [(5, "D3"), (6, "D4"), (8, "D6")]
    assert Path(DATA_DIR / "powers.toml").is_file()


def test_a_scenario_may_shorten_the_warp_deck(tmp_path):
    rules = load("2nd", "smite-skirmish")
    assert rules.deck_counts == (1, 1, 0, 0, 0, 0, 0, 0) and sum(load("2nd").deck_counts) == 36
    empty = (SCENARIO_DIR / "smite-skirmish.toml").read_text().replace("force = 1", "force = 0")
    empty = empty.replace("nullify = 1", "nullify = 0")
    path = tmp_path / "empty-deck.toml"
    path.write_text(empty)
    with pytest.raises(ScenarioError, match="field deck: the deck has no cards"):
        load("2nd", path)
