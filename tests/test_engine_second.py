"""The compiled 2nd edition against its Python reference (psygym/editions/second/engine/).

The codec's round trip, the node-by-node differential check (states, legal actions, chance
outcomes with their probabilities, both players' observations, the draws of the env's fast
walks) on every shipped scenario and on hypothesis-generated scenarios (every rule setting, small
decks that run out and reshuffle, and a power file with mortal wounds, dice that roll below 0
and powers in play that roll dice), the compiled solver's values and state counts against the
Python solver, check_state refusing garbage, and scenarios the twin cannot take left to the
reference.

2nd edition hides the hands, so the Python solver refuses it (``NotSolvable``); the solver
comparison runs both on the open-hands game (:class:`_OpenHands`: the same rules with every card
in view), which is the same expectiminimax over the same states.
"""

from __future__ import annotations

import copy
import math
import struct
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from psygym.core import CHANCE, TERMINAL, Information
from psygym.engine import compiled_game, core_module
from psygym.engine.differential import check_games

core = core_module()
if core is None or "2nd" not in core.registered_games():
    pytest.skip("the compiled 2nd edition is not built", allow_module_level=True)

from psygym.editions import load  # noqa: E402
from psygym.editions.second import SCENARIO_DIR, rules_from_data  # noqa: E402
from psygym.editions.second.data import CARD_KEYS, load_powers  # noqa: E402
from psygym.editions.second.engine import CODEC, MAX_TABLE_BITS  # noqa: E402
from psygym.editions.second.rules import SecondRules  # noqa: E402
from psygym.editions.second.spec import SecondScenario  # noqa: E402
from psygym.scenario import ScenarioError, read_toml, validate  # noqa: E402

SHIPPED = ("duel", "librarian-vs-farseer", "smite-skirmish")
ADEPTUS = ("Smite", "Warp Blast", "Psychic Shield", "Aura of Fortitude", "Destroyer", "Teleport",
           "Quickening")  # fmt: skip
ELDAR = ("Warp Blast", "Storm of Lightning", "Psychic Shield", "Mind War", "Teleport",
         "Holocaust")  # fmt: skip
# The shipped power names with other effects (the scenario spec checks names against the
# shipped file): mortal wounds, dice below 0, BS to hit, a duel of 2D6, and powers that remain
# in play and roll dice every phase (the upkeep of 2E-3.4 as chance nodes).
CUSTOM_POWERS = """
[[powers]]
name = "Smite"
cost = 1
disciplines = ["Adeptus"]
target = "enemy"
range = 12
effects = [{ force = 1, type = "mortal", wounds = "D3" }]

[[powers]]
name = "Warp Blast"
cost = "0-3"
disciplines = ["Adeptus", "Eldar"]
target = "enemy"
range = 24
effects = [
  { force = 0, type = "mortal", wounds = "D3-2" },
  { force = 1, type = "attack", hits = "D3", to_hit = "bs", strength = 4, damage = "D2" },
  { force = 2, type = "attack", hits = 2, to_hit = "bs", strength = 7, damage = "D3-1" },
  { force = 3, type = "attack", hits = "2D3", strength = 9, damage = "D6", saves = false },
]

[[powers]]
name = "Storm of Lightning"
cost = 2
disciplines = ["Eldar"]
target = "enemies"
range = 12
effects = [{ force = 2, type = "mortal", wounds = "D6-3" }]

[[powers]]
name = "Psychic Shield"
cost = 1
disciplines = ["Adeptus", "Eldar"]
target = "self"
remain_in_play = true
effects = [{ force = 1, type = "value", value = 1.5 }]

[[powers]]
name = "Aura of Fortitude"
cost = "1-2"
disciplines = ["Adeptus"]
target = "enemy"
range = 24
remain_in_play = true
effects = [
  { force = 1, type = "mortal", wounds = 1 },
  { force = 2, type = "attack", hits = "D3", strength = 3, damage = 1 },
]

[[powers]]
name = "Mind War"
cost = 2
disciplines = ["Eldar"]
target = "enemy-psyker"
range = 24
effects = [{ force = 2, type = "duel", dice = "2D6" }]

[[powers]]
name = "Destroyer"
cost = 3
disciplines = ["Adeptus"]
target = "enemy"
range = 24
effects = [{ force = 3, type = "attack", hits = "D6+1", strength = 6, damage = "D3" }]

[[powers]]
name = "Teleport"
cost = 1
disciplines = ["Adeptus", "Eldar"]
target = "friendly"
range = 12
effects = [{ force = 1, type = "value", value = 0.25 }]

[[powers]]
name = "Quickening"
cost = 1
disciplines = ["Adeptus"]
target = "enemy-psyker"
range = 24
remain_in_play = true
effects = [{ force = 1, type = "duel", dice = "D6" }]

[[powers]]
name = "Holocaust"
cost = 3
disciplines = ["Eldar"]
target = "enemies"
range = 24
effects = [{ force = 3, type = "attack", hits = "D3", strength = 5, damage = "D2" }]
"""
HYPOTHESIS = settings(
    max_examples=40, derandomize=True, deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)  # fmt: skip


class _OpenHands:
    """The rules with every card in view: the Python solver's way into a hidden-hands game.

    The same states, moves, chance and returns; only ``information`` says the players see it
    all, so :class:`~psygym_agents.solvers.expectiminimax.Solver` searches it exactly as the
    compiled solver (which never asks) does.
    """

    information = Information.PERFECT

    def __init__(self, rules: Any):
        self._rules = rules

    def __getattr__(self, name: str) -> Any:
        return getattr(self._rules, name)


@pytest.fixture(scope="module")
def custom_powers(tmp_path_factory) -> tuple:
    path = tmp_path_factory.mktemp("powers") / "powers.toml"
    path.write_text(CUSTOM_POWERS)
    return load_powers(str(path))


def _twin(rules):
    compiled = compiled_game(rules)
    assert compiled is not None and compiled.game.id == "2nd"
    return compiled


def _rules(data: dict, powers: tuple | None = None) -> SecondRules:
    if powers is None:
        return rules_from_data(data, "<generated scenario>")
    scenario = validate(SecondScenario, data, "<generated scenario>")
    return SecondRules(scenario, powers=powers, deck=scenario.deck_counts())


def _shipped(name: str, game: dict | None = None, rules: dict | None = None,
             deck: dict | None = None) -> dict:  # fmt: skip
    """A shipped scenario's data with some ``[game]``, ``[rules]`` or ``[deck]`` changed."""
    data = copy.deepcopy(read_toml(SCENARIO_DIR / f"{name}.toml"))
    data.setdefault("game", {}).update(game or {})
    data.setdefault("rules", {}).update(rules or {})
    if deck is not None:
        data["deck"] = {key: deck.get(key, 0) for key in CARD_KEYS}
    return data


# ----------------------------------------------------------------------------- scenarios
@st.composite
def _unit(draw, index: int, side: int, small: bool = False) -> dict:
    unit = {
        "name": f"unit {index}",
        "models": draw(st.integers(1, 3)),
        "wounds": draw(st.integers(1, 3)),
        "toughness": draw(st.integers(2, 6)),
        "save": draw(st.integers(2, 7)),
        "ballistic_skill": draw(st.integers(2, 6)),
        "position": [draw(st.integers(0, 2)) * 6, side * 10 + draw(st.integers(0, 1)) * 6],
        "value_per_wound": draw(st.sampled_from([0.0, 0.5, 1.0, 2.0, 3.7])),
    }
    if draw(st.booleans()):
        unit["invulnerable"] = draw(st.integers(3, 6))
    if draw(st.integers(0, 3)):
        unit["models"] = 1
        mastery = draw(st.integers(1, 2 if small else 4))
        psyker: dict = {"mastery": mastery, "psychic_hood": draw(st.booleans())}
        if draw(st.booleans()):
            psyker["disciplines"] = draw(st.sampled_from([["Adeptus"], ["Eldar"],
                                                          ["Adeptus", "Eldar"]]))  # fmt: skip
        else:
            names = ADEPTUS if side == 0 else ELDAR
            most = 2 if small else 3
            psyker["powers"] = draw(st.lists(st.sampled_from(names), min_size=1, max_size=most,
                                             unique=True))  # fmt: skip
        unit["psyker"] = psyker
    return unit


@st.composite
def scenarios(draw, small: bool = False) -> dict:
    """A valid 2nd-edition scenario (dict): every rule setting drawn; ``small``: a game small
    enough to solve (one unit a side, one round, one die of flux, a deck of a few cards)."""
    sides, k = [], 0
    for side in (0, 1):
        units = []
        for _ in range(1 if small else draw(st.integers(1, 3))):
            units.append(draw(_unit(k, side, small)))
            k += 1
        sides.append({"name": f"side {side}", "units": units})
    worst = draw(st.integers(2, 6))
    rules = {
        "ml_limits_power_level": draw(st.booleans()),
        "variable_min_force": draw(st.integers(0, 3)),
        "warp_flux_dice": 1 if small else draw(st.integers(1, 3)),
        "flux_cap": draw(st.sampled_from(["both-sides", "none"])),
        "deal_first": draw(st.sampled_from(["active", "inactive"])),
        "retain_specials": draw(st.booleans()),
        "public_discards": draw(st.booleans()),
        "responses_per_power": draw(st.integers(0, 2)),
        "nullify_target": draw(st.integers(2, 6)),
        "nullify_ml_step": draw(st.integers(0, 3)),
        "nullify_best": draw(st.integers(2, worst)),
        "nullify_worst": worst,
        "destroy_power": draw(st.sampled_from(["lose-card", "cancel"])),
        "reflection": draw(st.sampled_from(["caster", "cancel"])),
        "daemonic_attack_below": draw(st.integers(0, 12)),
        "psychic_duel_dice": draw(st.sampled_from(["2D6", "D6", "D3+1", "3"])),
        "psychic_duel_add_ml": draw(st.booleans()),
    }
    data = {
        "edition": "2nd", "name": "generated", "rules": rules,
        "game": {"battle_rounds": 1 if small else draw(st.integers(1, 2)),
                 "first_player": draw(st.integers(0, 1))},
        "sides": sides,
    }  # fmt: skip
    if small:  # two or three cards: Force and maybe one other
        counts = dict.fromkeys(CARD_KEYS, 0)
        counts[draw(st.sampled_from(CARD_KEYS))] = 1
        counts["force"] += draw(st.integers(1, 2))
        data["deck"] = counts
    elif draw(st.booleans()):  # a short deck: it runs out, reshuffles, or is exhausted
        counts = {key: draw(st.integers(0, 1)) for key in CARD_KEYS}
        counts["force"] = draw(st.integers(1, 4))
        data["deck"] = counts
    if draw(st.booleans()):
        data["power_values"] = {"Teleport": draw(st.sampled_from([0.0, 2.5]))}
    return data


# ----------------------------------------------------------------------------- codec
@pytest.mark.parametrize("scenario", SHIPPED)
def test_codec_round_trip_at_every_node(scenario):
    rules = load("2nd", scenario)
    compiled = _twin(rules)
    state_size = compiled.game.state_size
    for seed in range(10):
        rng = np.random.default_rng(seed)
        state = rules.initial_state()
        while True:
            data = CODEC.encode(state)
            assert len(data) == state_size
            assert CODEC.decode(data) == state and CODEC.encode(CODEC.decode(data)) == data
            if rules.current_player(state) == TERMINAL:
                break
            options = [a for a, _ in rules.chance_outcomes(state)] or rules.legal_actions(state)
            state = rules.apply(state, options[int(rng.integers(len(options)))])


def test_state_sizes_of_the_shipped_scenarios():
    sizes = {name: _twin(load("2nd", name)).game.state_size for name in SHIPPED}
    # 40-byte header, 56 card counts; per unit 2 + 5 bytes, per slot 1 + 4, a byte of used bits.
    assert sizes == {"duel": 199, "librarian-vs-farseer": 141, "smite-skirmish": 121}


def test_codec_refuses_what_the_layout_cannot_hold():
    from dataclasses import replace

    from psygym.editions.second.state import Effect, InPlay

    rules = load("2nd", "librarian-vs-farseer")
    state = rules.initial_state()
    in_play = (InPlay(1, 0, 5, 0, 2), InPlay(0, 1, 3, 0, 1))
    with pytest.raises(ValueError, match=r"not in increasing \(psyker, slot\) order"):
        CODEC.encode(replace(state, in_play=in_play))
    with pytest.raises(ValueError, match="3 effects: a state holds 2 at most"):
        CODEC.encode(replace(state, effects=(Effect(0, 1, 0, 1),) * 3))
    with pytest.raises(ValueError, match="edition can hold"):
        CODEC.encode(replace(state, phase=300))
    with pytest.raises(ValueError, match="has 141 bytes, not 142"):
        CODEC.decode(CODEC.encode(state) + b"\0")


# ----------------------------------------------------------------------------- differential
@pytest.mark.parametrize("scenario", SHIPPED)
def test_twin_matches_the_reference_on_shipped_scenarios(scenario):
    rules = load("2nd", scenario)
    count = check_games(rules, _twin(rules), 60, seed=2)
    assert count.games == 60 and count.decisions > 0 and count.chance > 0
    assert count.observations == 2 * count.nodes


def test_twin_matches_the_reference_on_generated_scenarios():
    seen = {"nodes": 0}

    @HYPOTHESIS
    @given(scenarios())
    def run(data):
        rules = _rules(data)
        seen["nodes"] += check_games(rules, _twin(rules), 8, seed=3).nodes

    run()
    assert seen["nodes"] > 3000


def test_twin_matches_the_reference_with_custom_powers(custom_powers):
    seen = {"nodes": 0, "refused": 0}

    @HYPOTHESIS
    @given(scenarios())
    def run(data):
        rules = _rules(data, custom_powers)
        compiled = compiled_game(rules)
        if compiled is None:  # powers in play may wait with more effects than a state holds
            with pytest.raises(ScenarioError, match="at most one a unit"):
                CODEC.encode_scenario(rules)
            seen["refused"] += 1
            return
        seen["nodes"] += check_games(rules, compiled, 8, seed=4).nodes

    run()
    assert seen["nodes"] > 3000 and seen["refused"] < 20


def test_twin_matches_the_reference_with_other_settings():
    """Settings that change the flow: no responses, several, cancelled Destroy Power and
    Reflection, public discards kept specials, the flux uncapped and dealt to the other side."""
    changed = {"responses_per_power": 0, "destroy_power": "cancel", "reflection": "cancel",
               "public_discards": True, "retain_specials": True, "flux_cap": "none",
               "deal_first": "inactive", "variable_min_force": 0,
               "ml_limits_power_level": True, "psychic_duel_add_ml": False}  # fmt: skip
    for name in ("duel", "librarian-vs-farseer"):
        for key, value in changed.items():
            rules = _rules(_shipped(name, rules={key: value}))
            assert check_games(rules, _twin(rules), 6, seed=5).games == 6, key
        rules = _rules(_shipped(name, rules={"responses_per_power": 3}))
        assert check_games(rules, _twin(rules), 6, seed=6).games == 6


# ----------------------------------------------------------------------------- solver
def _solve_both(rules, max_states: int = 200_000):
    from psygym_agents.solvers import NotSolvable
    from psygym_agents.solvers.expectiminimax import Solver

    with pytest.raises(NotSolvable, match="hidden information"):
        Solver(rules)
    reference = Solver(_OpenHands(rules), engine="python", max_states=max_states)
    try:
        value = reference.value()
    except NotSolvable:
        return None
    compiled = _twin(rules)
    solver = compiled.solver()
    assert solver.value(compiled.game.initial_state()) == value  # the same bits
    assert solver.states == reference.states
    return value, solver.states


@pytest.mark.parametrize(("scenario", "game", "rules", "deck"), [
    ("smite-skirmish", {}, {}, None),
    ("smite-skirmish", {"battle_rounds": 2, "first_player": 1}, {}, None),
    ("smite-skirmish", {"battle_rounds": 3}, {}, {"force": 2, "nullify": 1, "reflection": 1}),
    ("librarian-vs-farseer", {"battle_rounds": 1}, {"warp_flux_dice": 1},
     {"force": 3, "nullify": 1}),
    ("librarian-vs-farseer", {"battle_rounds": 1},
     {"warp_flux_dice": 1, "deal_first": "inactive", "destroy_power": "cancel"},
     {"force": 2, "destroy_power": 1, "daemonic_attack": 1, "energy_drain": 1}),
])  # fmt: skip
def test_compiled_solver_equals_the_python_solver(scenario, game, rules, deck):
    solved = _solve_both(_rules(_shipped(scenario, game, rules, deck)))
    assert solved is not None, "small enough to solve"


def test_compiled_solver_equals_the_python_solver_on_generated_scenarios(custom_powers):
    solved = {"count": 0}

    @settings(HYPOTHESIS, max_examples=25)
    @given(scenarios(small=True), st.booleans())
    def run(data, custom):
        rules = _rules(data, custom_powers if custom else None)
        if compiled_game(rules) is not None:
            solved["count"] += _solve_both(rules, max_states=10_000) is not None

    run()
    assert solved["count"] >= 10


# ----------------------------------------------------------------------------- bad input
def _field(data: bytes, fmt: str, offset: int, value) -> bytes:
    out = bytearray(data)
    struct.pack_into(fmt, out, offset, value)
    return bytes(out)


def test_check_state_refuses_out_of_range_fields():
    rules = load("2nd", "duel")
    game = _twin(rules).game
    start = game.initial_state()
    assert game.check_state(start) == ""
    cards, wounds = 40, 96  # state.h's offsets
    powers = wounds + 2 * rules.num_units
    in_play = powers + rules.num_psykers * rules.num_slots + 1
    effects = in_play + 4 * rules.num_psykers * rules.num_slots
    bad = {
        "score": _field(start, "=d", 0, math.nan),
        "negative zero": _field(start, "=d", 0, -0.0),
        "stage": _field(start, "=B", 8, 7),
        "phase": _field(start, "=B", 9, 10),
        "to_move": _field(start, "=B", 10, 2),
        "passes": _field(start, "=B", 11, 2),
        "effects": _field(start, "=B", 14, 7),
        "sizes": _field(start, "=B", 15, 5),
        "pending without a cast": _field(start, "=B", 19, 1),
        "has_pending": _field(start, "=B", 18, 1),
        "roll": _field(start, "=B", 26, 1),
        "padding": _field(start, "=B", 39, 1),
        "cards": _field(start, "=B", cards, 23),
        "face down": _field(start, "=B", cards + 5 * 8, 1),
        "wounds": _field(start, "=H", wounds, 3),
        "power": _field(start, "=b", powers, 10),
        "used bits": _field(start, "=B", in_play - 1, 0x80),
        "in play": _field(start, "=b", in_play, 3),
        "effect record": _field(start, "=B", effects + 1, 1),
    }
    for what, data in bad.items():
        assert game.check_state(data), what
        with pytest.raises(ValueError, match="not a state of this game"):
            game.legal_actions(data)
    with pytest.raises(ValueError, match="is not legal"):
        game.apply(start, 10**6)
    with pytest.raises(ValueError, match="bytes, not"):
        game.current_player(start[:-1])


def test_scenario_numbers_are_checked():
    rules = load("2nd", "duel")
    ints, reals = CODEC.encode_scenario(rules)
    with pytest.raises(ScenarioError, match="format is 9, allowed 1 to 1"):
        core.Game("2nd", [9, *ints[1:]], reals)
    with pytest.raises(ScenarioError, match="units is 200, allowed 2 to 60"):
        core.Game("2nd", [ints[0], 200, *ints[2:]], reals)
    with pytest.raises(ScenarioError, match="ends before"):
        core.Game("2nd", ints[:-3], reals)
    with pytest.raises(ScenarioError, match="left over"):
        core.Game("2nd", [*ints, 0], reals)
    with pytest.raises(ScenarioError, match="not a finite value"):
        core.Game("2nd", ints, [math.inf, *reals[1:]])


def test_scenarios_past_the_compiled_tables_are_left_to_the_reference():
    rules = _rules(_shipped("smite-skirmish", rules={"psychic_duel_dice": "20D20"}))
    with pytest.raises(ScenarioError, match=f"at most {MAX_TABLE_BITS} bits"):
        CODEC.encode_scenario(rules)
    assert compiled_game(rules) is None  # the reference plays it
    assert rules.current_player(rules.initial_state()) == CHANCE


def test_the_edition_declares_its_codec():
    from psygym.edition import editions

    edition = next(e for e in editions() if e.id == "2nd")
    assert edition.engine == "psygym.editions.second.engine:CODEC"
    assert CODEC.game_id == "2nd" and CODEC.rules_class() is SecondRules
