"""The compiled Rogue Trader edition against its Python reference (rogue_trader/engine/).

The codec's round trip, the node-by-node differential check on every shipped scenario, on a
scenario built to reach every kind of node (Cure Wounds' amount, auras moved and dispelled,
confusion, removals) and on hypothesis-generated scenarios (random psi-levels and abilities
included), the compiled solver's values and state counts against the Python solver, check_state
refusing garbage, and scenario numbers checked in one line.

The secret bids (RT-3.4) are two decisions in a row in both engines. The Python solver solves
them as matrix games, which the compiled solver does not: the solver tests hold the compiled
solver against the Python solver's sequential search (the rules' ``simultaneous_info`` set back
to ``RulesBase``'s, so the target's bid is a decision like any other), the same game.
"""

from __future__ import annotations

import copy
import math
import struct
from types import SimpleNamespace

import numpy as np
import pytest
from engine_cases import decision_states
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from psygym.conformance import check_rules
from psygym.core import TERMINAL, RulesBase
from psygym.engine import compiled_game, core_module
from psygym.engine.differential import check_games

core = core_module()
if core is None or "rt" not in core.registered_games():
    pytest.skip("the compiled Rogue Trader edition is not built", allow_module_level=True)

from psygym.editions import load  # noqa: E402
from psygym.editions.rogue_trader import rules_from_data  # noqa: E402
from psygym.editions.rogue_trader.abilities import load_data  # noqa: E402
from psygym.editions.rogue_trader.engine import CODEC  # noqa: E402
from psygym.scenario import ScenarioError  # noqa: E402

SHIPPED = ("duel", "psyker-vs-squad")
HYPOTHESIS = settings(
    max_examples=120, derandomize=True, deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)  # fmt: skip
_SPELLS = {m: [a.name for a in load_data().abilities if a.level <= m] for m in (1, 2, 3, 4)}
_POSITIONS = [(0.0, 0.0), (0.5, 0.5), (1.0, 0.0), (2.0, 0.0), (10.0, 0.0), (13.0, 1.0),
              (30.0, 0.0)]  # fmt: skip
_CARE = ("Cure Wounds", "Cure Injury", "Strength of Mind", "Stasis", "Limbo", "Temporal Distort",
         "Transfer Aura", "Aura of Invulnerability", "Telepathy 4", "Destroy Aura")  # fmt: skip
_HARM = ("Mental Blow", "Mental Blast", "Telekinesis 4", "Aura of Resistance", "Cause Confusion",
         "Change Allegiance", "Steal Mind")  # fmt: skip
HEALERS = {
    "edition": "rt", "name": "healers",
    "game": {"turns": 8, "abilities_per_turn": 2,
             "ability_values": {"Stasis": 1.5, "Limbo": -0.5}},
    "sides": [
        {"name": "a", "units": [
            {"name": "healer", "wounds": 3, "toughness": 3, "save": 5, "will_power": 7,
             "intelligence": 10, "position": [0, 0], "mastery": 4, "psi_level": 40,
             "abilities": list(_CARE)},
            {"name": "friend", "wounds": 3, "toughness": 3, "save": 4, "will_power": 6,
             "position": [0.5, 0.5], "value_per_wound": 2.0},
            {"name": "squad", "models": 3, "wounds": 2, "toughness": 3, "save": 6,
             "position": [0.5, 0], "value_per_wound": 0.5},
        ]},
        {"name": "b", "units": [
            {"name": "blaster", "wounds": 2, "toughness": 4, "save": 4, "will_power": 9,
             "intelligence": 10, "position": [10, 0], "mastery": 4, "psi_level": 30,
             "abilities": list(_HARM)},
            {"name": "helper", "wounds": 1, "toughness": 3, "save": 5, "will_power": 7,
             "position": [11, 0.5], "mastery": 3, "psi_level": 12,
             "abilities": ["Transfer Aura", "Aura of Recalcitrance", "Destroy Aura",
                           "Cure Injury", "Cause Fear"]},
        ]},
    ],
}  # fmt: skip
"""Every kind of node: Cure Wounds' amounts, cures, auras moved and dispelled, removals."""


def _twin(rules):
    compiled = compiled_game(rules)
    assert compiled is not None and compiled.game.id == "rt"
    return compiled


def _healers(**game) -> dict:
    data = copy.deepcopy(HEALERS)
    data["game"].update(game)
    return data


def _rules(data: dict):
    return rules_from_data(data, "<generated scenario>")


# ----------------------------------------------------------------------------- scenarios
@st.composite
def _unit(draw, index: int, psyker: bool, small: bool) -> dict:
    unit = {
        "name": f"unit {index}",
        "wounds": draw(st.integers(1, 3)),
        "toughness": draw(st.integers(2, 6)),
        "save": draw(st.integers(2, 7)),
        "will_power": draw(st.integers(3, 11)),
        "intelligence": draw(st.integers(1, 10)),
        "position": list(draw(st.sampled_from(_POSITIONS))),
        "value_per_wound": draw(st.sampled_from([0.0, 0.5, 1.0, 2.0, 3.7])),
    }
    if not psyker:
        unit["models"] = draw(st.integers(1, 4))
        return unit
    mastery = unit["mastery"] = draw(st.integers(1, 4))
    cap = min(unit["intelligence"], 10)
    if draw(st.integers(0, 3)) == 0:
        unit["abilities"] = "random"
    else:
        names = draw(st.lists(st.sampled_from(_SPELLS[mastery]), min_size=1,
                              max_size=min(3 if small else 4, cap), unique=True))  # fmt: skip
        extra = draw(st.sampled_from([None, None, "Cure Injury", "Cure Wounds", "Stasis"]))
        if extra in _SPELLS[mastery] and extra not in names and len(names) < cap:
            names.append(extra)
        unit["abilities"] = names
    if small:
        unit["psi_level"] = draw(st.integers(2, 8))
    elif draw(st.integers(0, 2)):
        unit["psi_level"] = draw(st.one_of(st.integers(0, 14), st.sampled_from([20, 25, 31])))
        if draw(st.booleans()):
            unit["psi_points"] = draw(st.integers(0, unit["psi_level"]))
    return unit


@st.composite
def scenarios(draw, max_turns: int = 6, small: bool = False) -> dict:
    """A valid Rogue Trader scenario (dict): 1-3 units a side, side 0's first a psyker.

    ``small``: 1-2 units a side, psi-levels of at most 8 (most of them small enough to solve).
    """
    sides, k = [], 0
    for side in range(2):
        units = []
        for j in range(draw(st.integers(1, 2 if small else 3))):
            psyker = (side == 0 and j == 0) or draw(st.integers(0, 2)) > 0
            units.append(draw(_unit(k, psyker, small)))
            k += 1
        sides.append({"name": f"side {side}", "units": units})
    game = {
        "turns": draw(st.integers(1, max_turns)),
        "first_player": draw(st.integers(0, 1)),
        "abilities_per_turn": draw(st.integers(1, 3)),
        "no_test_at": draw(st.sampled_from([12, 12, 6, 9, 14])),
        "psi_level": draw(st.sampled_from(["typical", "random"])),
        "ability_count": draw(st.sampled_from(["typical", "random"])),
        "removal_scores_wounds": draw(st.booleans()),
        "augment_breaks_rest": draw(st.booleans()),
    }
    if draw(st.booleans()):
        game["max_bid"] = draw(st.integers(0, 4))
    if draw(st.booleans()):
        names = st.sampled_from(["Cause Fear", "Hammerhand", "Rout", "Mental Blow", "Limbo"])
        values = st.sampled_from([-2.5, 0.0, 1.0, 4.25])
        game["ability_values"] = draw(st.dictionaries(names, values, max_size=3))
    for side in sides:  # psi_points above a typical psi-level would be refused
        for unit in side["units"]:
            if "psi_points" in unit and "psi_level" not in unit:
                del unit["psi_points"]
    return {"edition": "rt", "name": "generated", "game": game, "sides": sides}


# ----------------------------------------------------------------------------- codec
@pytest.mark.parametrize("scenario", SHIPPED)
def test_codec_round_trip_at_every_node(scenario):
    rules = load("rt", scenario)
    state_size = _twin(rules).game.state_size
    for seed in range(20):
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
    sizes = {name: _twin(load("rt", name)).game.state_size for name in SHIPPED}
    # A 24-byte header, then 11 bytes a unit and 5 for its set of the 40 abilities (state.h).
    assert sizes == {"duel": 56, "psyker-vs-squad": 72}


def test_codec_refuses_what_the_layout_cannot_hold():
    from dataclasses import replace

    rules = load("rt", "duel")
    state = rules.initial_state()
    with pytest.raises(ValueError, match="Rogue Trader can hold"):
        CODEC.encode(replace(state, actor=200))
    with pytest.raises(ValueError, match="Rogue Trader can hold"):
        CODEC.encode(replace(state, units=(replace(state.units[0], abilities=(40,)),
                                           state.units[1])))  # fmt: skip
    with pytest.raises(ValueError, match="has 56 bytes, not 57"):
        CODEC.decode(CODEC.encode(state) + b"\0")
    assert CODEC.encode(replace(state, score=-0.0)) == CODEC.encode(state)


def test_capacities_are_refused_naming_the_limit():
    rules = load("rt", "duel")
    big = SimpleNamespace(n_units=70, n_abilities=40, max_hp=(3,), max_psi_points=12,
                          game=SimpleNamespace(turns=6, abilities_per_turn=1))  # fmt: skip
    with pytest.raises(ScenarioError, match=r"70 is past .* at most 64 \(MAX_UNITS\)"):
        CODEC._check_sizes(big)
    CODEC._check_sizes(rules)  # the shipped ones fit


# ----------------------------------------------------------------------------- differential
@pytest.mark.parametrize("scenario", SHIPPED)
def test_twin_matches_the_reference_on_shipped_scenarios(scenario):
    rules = load("rt", scenario)
    count = check_games(rules, _twin(rules), 300, seed=1)
    assert count.games == 300 and count.decisions > 0 and count.chance > 0


@pytest.mark.parametrize("game", [
    {},
    {"augment_breaks_rest": False, "first_player": 1, "removal_scores_wounds": False},
    {"max_bid": 2, "no_test_at": 20},
])  # fmt: skip
def test_twin_matches_the_reference_at_every_kind_of_node(game):
    rules = _rules(_healers(**game))
    count = check_games(rules, _twin(rules), 150, seed=2)
    assert count.decisions > 2000 and count.chance > 500


def test_twin_matches_the_reference_on_generated_scenarios():
    seen = {"nodes": 0, "random": 0}

    @HYPOTHESIS
    @given(scenarios())
    def run(data):
        rules = _rules(data)
        seen["nodes"] += check_games(rules, _twin(rules), 12, seed=3).nodes
        seen["random"] += any(rules.random_level) or any(rules.random_abilities)

    run()
    assert seen["nodes"] > 5000 and seen["random"] > 10


def test_the_rest_bounds_hold_on_generated_scenarios():
    # Along playouts, what the rest of each game added lies within every state's rest_bounds
    # (psygym.conformance.check_rules), with values, cures and removals of every sign drawn;
    # the differential check above holds the twin's bounds to these at every node.
    seen = {"one-sided": 0, "zero": 0}

    @HYPOTHESIS
    @given(scenarios())
    def run(data):
        rules = _rules(data)
        check_rules(rules, games=6, seed=4)
        for s in decision_states(rules, 3, seed=4):
            low, high = rules.rest_bounds(s)
            seen["zero"] += low == high == 0.0
            seen["one-sided"] += (low == 0.0) != (high == 0.0)

    run()
    assert seen["zero"] > 20 and seen["one-sided"] > 100


def _odd_dice(monkeypatch) -> None:
    """The rules read ability data with dice the shipped files do not use (the codec's A stays).

    Damage that can roll 0 or less (``2D3-3``), a constant (``3``), a Steal Mind that can last
    no turn (``D6-3``), a constant random psi-level and random ability counts that can be 0.
    """
    from psygym.editions.rogue_trader import rules as rules_module
    from psygym.editions.rogue_trader.abilities import AbilityData

    data = load_data()
    changes = {"Mental Blow": {"damage": "2D3-3"}, "Mental Bolt": {"damage": "3"},
               "Telekinesis 2": {"damage": "D4+1"}, "Steal Mind": {"duration": "D6-3"},
               "Mental Blast": {"damage": "D3-1"}}  # fmt: skip
    abilities = [a.model_copy(update=changes.get(a.name, {})) for a in data.abilities]
    rows = {1: {"random_psi_level": "9", "random_abilities": "D3-1"},
            2: {"random_psi_level": "D6+3", "random_abilities": "D4-2"}}  # fmt: skip
    mastery = [r.model_copy(update=rows.get(r.mastery, {})) for r in data.charts.mastery]
    custom = AbilityData(abilities, data.charts.model_copy(update={"mastery": mastery}), "<odd>")
    monkeypatch.setattr(rules_module, "load_data", lambda: custom)


@pytest.mark.parametrize("game", [{}, {"psi_level": "random", "ability_count": "random"}])
def test_twin_matches_the_reference_with_odd_dice(monkeypatch, game):
    _odd_dice(monkeypatch)
    data = _healers(**game, turns=6)
    data["sides"][1]["units"][1]["abilities"] = ["Mental Blow", "Steal Mind"]
    data["sides"][1]["units"][1].update(mastery=1, intelligence=3)
    data["sides"][1]["units"].append(
        {"name": "bolter", "wounds": 3, "toughness": 3, "save": 6, "position": [12, 0],
         "mastery": 2, "intelligence": 4, "abilities": "random"})  # fmt: skip
    for unit in data["sides"][1]["units"] if game else ():
        unit.pop("psi_level", None)  # rolled on the odd charts
    rules = _rules(data)
    assert rules.abilities[4].damage == "2D3-3"  # the odd data is the one played
    count = check_games(rules, _twin(rules), 150, seed=6)
    assert count.chance > 500


def test_a_psi_level_chart_below_zero_stays_on_the_reference(monkeypatch):
    from psygym.editions.rogue_trader import rules as rules_module
    from psygym.editions.rogue_trader.abilities import AbilityData

    data = load_data()
    mastery = [r.model_copy(update={"random_psi_level": "D6-3"}) for r in data.charts.mastery]
    custom = AbilityData(data.abilities, data.charts.model_copy(update={"mastery": mastery}), "x")
    monkeypatch.setattr(rules_module, "load_data", lambda: custom)
    scenario = _healers(psi_level="random")
    del scenario["sides"][1]["units"][0]["psi_level"]
    rules = _rules(scenario)
    with pytest.raises(ScenarioError, match="psi-level of -2 .*dice that roll 0 or more"):
        CODEC.encode_scenario(rules)
    assert compiled_game(rules) is None  # the reference plays it


# ----------------------------------------------------------------------------- solver
def _sequential(rules):
    """``rules`` with the secret bids played as two decisions in a row (no matrix games)."""
    rules.simultaneous_info = RulesBase.simultaneous_info.__get__(rules)
    return rules


def _solve_both(data_or_rules, max_states: int = 300_000):
    """The Python solver's and the core's exact value (secret bids as matrix games)."""
    from psygym_agents.solvers import NotSolvable
    from psygym_agents.solvers.expectiminimax import Solver

    make = (lambda: _rules(data_or_rules)) if isinstance(data_or_rules, dict) else data_or_rules
    reference = Solver(make(), engine="python", max_states=max_states)
    try:
        value = reference.value()
    except NotSolvable:
        return None
    compiled = _twin(make())
    solver = compiled.solver()
    # The linear programs of the two agree to their tolerance; a pure saddle point exactly.
    assert solver.value(compiled.game.initial_state()) == pytest.approx(value, abs=1e-9)
    assert solver.states == reference.states
    return value, solver.states


@pytest.mark.parametrize(("scenario", "game", "value", "states"), [
    ("duel", {"turns": 1}, 0.06944444444444445, 167),
    ("duel", {"turns": 2}, 0.06944444444444445, 11769),
    ("duel", {"turns": 2, "first_player": 1, "max_bid": 2}, None, None),
    ("psyker-vs-squad", {"turns": 1}, None, None),
])  # fmt: skip
def test_compiled_solver_equals_the_python_solver(scenario, game, value, states):
    solved = _solve_both(lambda: load("rt", scenario, **game))
    assert solved is not None, "small enough to solve"
    if value is not None:
        assert solved == (value, states)


def test_compiled_solver_equals_the_python_solver_on_generated_scenarios():
    states = []

    @settings(HYPOTHESIS, max_examples=30)
    @given(scenarios(max_turns=2, small=True))
    def run(data):
        solved = _solve_both(data, max_states=3_000)
        if solved is not None:
            states.append(solved[1])

    run()
    assert len(states) >= 15 and max(states) > 100


def test_the_core_plays_the_secret_bids_as_matrix_games():
    from psygym_agents.solvers.expectiminimax import Solver

    rules = load("rt", "duel", turns=2)
    matrix = Solver(rules)
    assert matrix.engine == "core"
    sequential = Solver(_sequential(load("rt", "duel", turns=2)))
    assert sequential.engine == "core"
    assert matrix.value() == pytest.approx(Solver(rules, engine="python").value(), abs=1e-9)
    # The sequential game memoises the target's bid nodes; a pair of secret bids is one node.
    sequential.value()
    assert (matrix.states, sequential.states) == (11769, 13662)


# ----------------------------------------------------------------------------- bad input
def _field(data: bytes, fmt: str, offset: int, value) -> bytes:
    out = bytearray(data)
    struct.pack_into(fmt, out, offset, value)
    return bytes(out)


def test_check_state_refuses_out_of_range_fields():
    rules = load("rt", "duel")
    game = _twin(rules).game
    start = game.initial_state()  # the Librarian chooses (kChoose = 4)
    unit = 24  # the first unit record
    bad = {
        "score": _field(start, "=d", 0, math.nan),
        "negative zero": _field(start, "=d", 0, -0.0),
        "amount": _field(start, "=H", 8, 40),
        "bid": _field(start, "=H", 10, 13),
        "turn": _field(start, "=B", 14, 6),
        "active": _field(start, "=B", 15, 2),
        "phase": _field(start, "=B", 16, 12),
        "actor": _field(start, "=b", 17, 2),
        "not the active player's": _field(start, "=b", 17, 1),
        "used": _field(start, "=B", 18, 1),
        "ability": _field(start, "=b", 19, 40),
        "sizes": _field(start, "=B", 22, 3),
        "wounds": _field(start, "=H", unit, 4),
        "aura": _field(start, "=B", unit + 8, 5),
        "flags": _field(start, "=B", unit + 10, 16),
        "a test without an ability": _field(start, "=B", 16, 7),
        "a set-up of nothing random": _field(start, "=B", 16, 0),
    }
    squad = _twin(load("rt", "psyker-vs-squad")).game
    boyz = 24 + 16  # the Ork Boyz, no psyker
    bad["psi-points of no psyker"] = (squad, _field(squad.initial_state(), "=H", boyz + 2, 1))
    bad["abilities of no psyker"] = (squad, _field(squad.initial_state(), "=B", boyz + 11, 1))
    for what, data in bad.items():
        on, data = data if isinstance(data, tuple) else (game, data)
        assert on.check_state(data), what
        with pytest.raises(ValueError, match="not a state of this game"):
            on.legal_actions(data)


def test_scenario_numbers_are_checked():
    rules = load("rt", "duel")
    ints, reals = CODEC.encode_scenario(rules)
    with pytest.raises(ScenarioError, match="units is 200, allowed 2 to 64"):
        core.Game("rt", [ints[0], 200, *ints[2:]], reals)
    with pytest.raises(ScenarioError, match="ends before"):
        core.Game("rt", ints[:-3], reals)
    with pytest.raises(ScenarioError, match="left over"):
        core.Game("rt", [*ints, 0], reals)
    with pytest.raises(ScenarioError, match="not a finite value"):
        core.Game("rt", ints, [math.inf, *reals[1:]])
    # The Librarian's candidate targets of Mental Blow (ability 4) made its ally (unit 0).
    a, n = rules.n_abilities, rules.n_units
    at = 11 + 12 * a + 7 * n + len(CODEC._psyker(rules, 0, rules.specs[0]))
    at -= sum(1 + len(rules._cands[(0, k)]) for k in range(4, a))
    assert ints[at : at + 2] == [1, 1]
    with pytest.raises(ScenarioError, match="candidate target of the wrong side"):
        core.Game("rt", [*ints[: at + 1], 0, *ints[at + 2 :]], reals)
