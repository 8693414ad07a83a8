"""The compiled 8th edition against its Python reference (psygym/editions/eighth/engine/).

The codec's round trip, the node-by-node differential check on every shipped scenario and on
hypothesis-generated scenarios (the shipped power file and one with attack, roll-off and dice
modifier effects), the compiled solver's values and state counts against the Python solver,
check_state refusing garbage, and scenarios past a compiled capacity refused in one line.
"""

from __future__ import annotations

import math
import struct

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from psygym.core import TERMINAL
from psygym.engine import compiled_game, core_module
from psygym.engine.differential import check_games

core = core_module()
if core is None or "8th" not in core.registered_games():
    pytest.skip("the compiled 8th edition is not built", allow_module_level=True)

from psygym.editions import load  # noqa: E402
from psygym.editions.eighth import rules_from_data  # noqa: E402
from psygym.editions.eighth.engine import CODEC, MAX_TABLE_BITS  # noqa: E402
from psygym.scenario import ScenarioError  # noqa: E402

SHIPPED = ("single-phase", "duel", "smite-spam")
SHIPPED_POWERS = ("Psychic Scourge", "Mind War", "Doom", "Jinx", "Guide", "Fortune",
                  "Might of Heroes", "Null Zone", "Psychic Fortress", "Veil of Time")  # fmt: skip
CUSTOM_POWERS = """
[[powers]]
name = "Smite"
warp_charge = 5
range = 18
target = "closest_enemy"
known_by_all_psykers = true
repeatable = true
escalation = 2
effect = { mortal_wounds = "D3", boosted_at = 10, boosted = "D6-1" }

[[powers]]
name = "Lightning Arc"
warp_charge = 6
range = 18
target = "enemy"
effect = { attack = { hits = "D3", strength = 5, ap = -1, damage = "D2" } }

[[powers]]
name = "Psi Blade"
warp_charge = 5
range = 12
target = "closest_enemy"
effect = { attack = { hits = "2", strength = 8, ap = -3, damage = "D3+1" } }

[[powers]]
name = "Storm"
warp_charge = 7
range = 24
target = "enemy"
effect = { attack = { hits = "2D3-1", strength = 3, damage = "1" } }

[[powers]]
name = "Soul Fire"
warp_charge = 6
range = 18
target = "closest_enemy"
effect = { mortal_wounds = "D6-2" }

[[powers]]
name = "Warp Rift"
warp_charge = 7
range = 18
target = "enemy"
effect = { rolloff = { dice = "2D6", win = "difference", tie = "D3" } }

[[powers]]
name = "Mental Duel"
warp_charge = 6
range = 18
target = "enemy"
character_only = true
effect = { rolloff = { dice = "D6", win = "D6-1", tie = "0" } }

[[powers]]
name = "Ward"
warp_charge = 6
range = 12
target = "friendly"
character_only = true
effect = { value = 2.5 }

[[powers]]
name = "Hex"
warp_charge = 5
range = 18
target = "closest_enemy"
effect = { value = 1 }

[[powers]]
name = "Veil"
warp_charge = 4
target = "self"
effect = { value = 0.75 }
"""
CUSTOM_NAMES = ("Lightning Arc", "Psi Blade", "Storm", "Soul Fire", "Warp Rift", "Mental Duel",
                "Ward", "Hex", "Veil")  # fmt: skip
HYPOTHESIS = settings(
    max_examples=40, derandomize=True, deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)  # fmt: skip


@pytest.fixture(scope="module")
def custom_powers(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("powers") / "powers.toml"
    path.write_text(CUSTOM_POWERS)
    return str(path)


def _twin(rules):
    compiled = compiled_game(rules)
    assert compiled is not None and compiled.game.id == "8th"
    return compiled


# ----------------------------------------------------------------------------- scenarios
@st.composite
def _unit(draw, index: int, names: tuple[str, ...]) -> dict:
    unit = {
        "name": f"unit {index}",
        "models": draw(st.integers(1, 3)),
        "wounds": draw(st.integers(1, 3)),
        "toughness": draw(st.integers(2, 6)),
        "save": draw(st.integers(2, 7)),
        "leadership": draw(st.integers(6, 10)),
        "position": [draw(st.integers(0, 3)) * 5, draw(st.integers(0, 3)) * 5],
        "value_per_wound": draw(st.sampled_from([0.0, 0.5, 1.0, 2.0, 3.7])),
        "character": draw(st.booleans()),
    }
    if draw(st.booleans()):
        unit["invulnerable"] = draw(st.integers(3, 6))
    if draw(st.integers(0, 3)):
        unit["psyker"] = True
        unit["powers"] = draw(st.lists(st.sampled_from(names), max_size=3, unique=True))
        unit["manifest"] = draw(st.sampled_from([0, 1, 2, 2, 3]))
        unit["deny"] = draw(st.integers(0, 2))
    return unit


@st.composite
def scenarios(draw, powers_file: str | None = None) -> dict:
    """A small valid 8th-edition scenario (dict), on the shipped or a given power file."""
    names = CUSTOM_NAMES if powers_file else SHIPPED_POWERS
    counts = [draw(st.integers(1, 3)), draw(st.integers(1, 3))]
    sides, k = [], 0
    for side, count in enumerate(counts):
        units = []
        for _ in range(count):
            units.append(draw(_unit(k, names)))
            k += 1
        sides.append({"name": f"side {side}", "units": units})
    game = {
        "battle_rounds": draw(st.integers(1, 2)),
        "first_player": draw(st.integers(0, 1)),
        "deny_range": draw(st.sampled_from([6.0, 12.0, 24.0])),
        "perils_mortal_wounds": draw(st.sampled_from(["D3", "1", "D6", "2D3-2", "0"])),
        "perils_blast_range": draw(st.sampled_from([0.0, 6.0, 12.0])),
        "perils_blast_mortal_wounds": draw(st.sampled_from(["D3", "1", "D6-3"])),
    }
    if draw(st.booleans()):
        game["phase_limit"] = draw(st.integers(1, 3))
    if not powers_file and draw(st.booleans()):
        game["power_values"] = {"Doom": draw(st.sampled_from([-2.5, 0.0, 4.0]))}
    data = {"edition": "8th", "name": "generated", "game": game, "sides": sides}
    if powers_file:
        data["powers_file"] = powers_file
    return data


def _rules(data: dict):
    return rules_from_data(data, "<generated scenario>")


# ----------------------------------------------------------------------------- codec
@pytest.mark.parametrize("scenario", SHIPPED)
def test_codec_round_trip_at_every_node(scenario):
    rules = load("8th", scenario)
    compiled = _twin(rules)
    state_size = compiled.game.state_size
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
    sizes = {name: _twin(load("8th", name)).game.state_size for name in SHIPPED}
    # 24-byte header, 3 bytes a unit, a byte a power, and the bitsets (state.h).
    assert sizes == {"single-phase": 42, "duel": 53, "smite-spam": 43}


def test_codec_refuses_what_the_layout_cannot_hold():
    rules = load("8th", "duel")
    state = rules.initial_state()
    from dataclasses import replace

    with pytest.raises(ValueError, match="not in increasing unit order"):
        CODEC.encode(replace(state, blast=(3, 1)))
    with pytest.raises(ValueError, match="edition can hold"):
        CODEC.encode(replace(state, caster=200))
    with pytest.raises(ValueError, match="has 53 bytes, not 54"):
        CODEC.decode(CODEC.encode(state) + b"\0")


# ----------------------------------------------------------------------------- differential
@pytest.mark.parametrize("scenario", SHIPPED)
def test_twin_matches_the_reference_on_shipped_scenarios(scenario):
    rules = load("8th", scenario)
    count = check_games(rules, _twin(rules), 300, seed=8)
    assert count.games == 300 and count.decisions > 0 and count.chance > 0


def test_twin_matches_the_reference_on_generated_scenarios():
    seen = {"nodes": 0}

    @HYPOTHESIS
    @given(scenarios())
    def run(data):
        rules = _rules(data)
        seen["nodes"] += check_games(rules, _twin(rules), 15, seed=3).nodes

    run()
    assert seen["nodes"] > 1000


def test_twin_matches_the_reference_with_attack_and_rolloff_effects(custom_powers):
    seen = {"nodes": 0}

    @HYPOTHESIS
    @given(scenarios(custom_powers))
    def run(data):
        rules = _rules(data)
        seen["nodes"] += check_games(rules, _twin(rules), 15, seed=4).nodes

    run()
    assert seen["nodes"] > 1000


def test_attack_tables_equal_the_reference_for_every_wound_count(custom_powers):
    # Big pools of multi-wound models exercise the per-model damage of 8E-7.3 exactly.
    from psygym.editions.eighth.effects import attack_distribution

    unit = {"toughness": 4, "save": 4, "leadership": 8, "value_per_wound": 1.0}
    data = {
        "edition": "8th", "name": "attacks", "powers_file": custom_powers,
        "sides": [
            {"name": "a", "units": [{**unit, "name": "caster", "wounds": 2, "position": [0, 0],
                                     "psyker": True, "powers": ["Lightning Arc", "Storm"]}]},
            {"name": "b", "units": [{**unit, "name": "target", "models": 5, "wounds": 3,
                                     "invulnerable": 5, "position": [0, 10]}]},
        ],
    }  # fmt: skip
    rules = _rules(data)
    game = _twin(rules).game
    state = rules.initial_state()
    for name in ("Lightning Arc", "Storm"):
        p = rules.power_index[name]
        attack = rules.powers[p].effect.attack
        for left in range(0, 16):
            pending = CODEC.encode(state.__class__(**{
                **state.__dict__, "stage": 7, "power": p, "target": 1, "caster": 0,
                "wounds": (2, left)}))  # fmt: skip
            exact = attack_distribution(attack.hits, attack.strength, attack.ap, attack.damage,
                                        4, 4, 5, left, 3)  # fmt: skip
            assert game.chance_outcomes(pending) == [(w, float(q)) for w, q in exact]


# ----------------------------------------------------------------------------- solver
def _solve_both(rules, max_states: int = 200_000):
    from psygym_agents.solvers import NotSolvable
    from psygym_agents.solvers.expectiminimax import Solver

    reference = Solver(rules, engine="python", max_states=max_states)
    try:
        value = reference.value()
    except NotSolvable:
        return None
    compiled = _twin(rules)
    solver = compiled.solver()
    assert solver.value(compiled.game.initial_state()) == value  # the same bits
    assert solver.states == reference.states
    return value, solver.states


@pytest.mark.parametrize(("scenario", "game"), [
    ("single-phase", {}),
    ("single-phase", {"first_player": 1}),
    ("single-phase", {"phase_limit": 2}),
    ("duel", {"battle_rounds": 1, "first_player": 1, "phase_limit": 1}),
])  # fmt: skip
def test_compiled_solver_equals_the_python_solver(scenario, game):
    rules = load("8th", scenario, **game)
    assert _solve_both(rules) is not None, "small enough to solve"


def test_compiled_solver_equals_the_python_solver_on_generated_scenarios(custom_powers):
    solved = {"count": 0}

    @settings(HYPOTHESIS, max_examples=25)
    @given(st.one_of(scenarios(), scenarios(custom_powers)))
    def run(data):
        data["game"]["phase_limit"] = 1
        solved["count"] += _solve_both(_rules(data), max_states=5_000) is not None

    run()
    assert solved["count"] >= 10


# ----------------------------------------------------------------------------- bad input
def _field(data: bytes, fmt: str, offset: int, value) -> bytes:
    out = bytearray(data)
    struct.pack_into(fmt, out, offset, value)
    return bytes(out)


def test_check_state_refuses_out_of_range_fields():
    rules = load("8th", "duel")
    game = _twin(rules).game
    start = game.initial_state()
    n = rules.n_units
    bad = {
        "stage": _field(start, "=B", 10, 9),
        "round": _field(start, "=B", 11, 6),
        "caster": _field(start, "=b", 17, n),
        "power": _field(start, "=b", 18, rules.n_powers),
        "sizes": _field(start, "=B", 21, n + 1),
        "padding": _field(start, "=B", 23, 1),
        "score": _field(start, "=d", 0, math.nan),
        "wounds": _field(start, "=H", 24, rules.max_wounds[0] + 1),
        "no caster": _field(_field(start, "=B", 10, 1), "=b", 17, -1),
        "blast": _field(start, "=B", game.state_size - 2, 1),
        "bits": _field(start, "=B", game.state_size - 3, 0x80),
    }
    for what, data in bad.items():
        assert game.check_state(data), what
        with pytest.raises(ValueError, match="not a state of this game"):
            game.legal_actions(data)


def test_scenario_numbers_are_checked():
    rules = load("8th", "duel")
    ints, reals = CODEC.encode_scenario(rules)
    with pytest.raises(ScenarioError, match="units is 200, allowed 2 to 120"):
        core.Game("8th", [ints[0], 200, *ints[2:]], reals)
    with pytest.raises(ScenarioError, match="ends before"):
        core.Game("8th", ints[:-3], reals)
    with pytest.raises(ScenarioError, match="left over"):
        core.Game("8th", [*ints, 0], reals)
    with pytest.raises(ScenarioError, match="not a finite value"):
        core.Game("8th", ints, [math.inf, *reals[1:]])


def test_tables_past_the_compiled_capacity_are_refused(tmp_path):
    path = tmp_path / "huge.toml"
    path.write_text(CUSTOM_POWERS.replace('dice = "2D6", win', 'dice = "20D20", win'))
    unit = {"wounds": 1, "position": [0, 0], "psyker": True, "powers": ["Warp Rift"]}
    data = {"edition": "8th", "name": "huge", "powers_file": str(path), "sides": [
        {"name": "a", "units": [{**unit, "name": "x"}]},
        {"name": "b", "units": [{**unit, "name": "y"}]}]}  # fmt: skip
    with pytest.raises(ScenarioError, match=f"at most {MAX_TABLE_BITS} bits"):
        CODEC.encode_scenario(_rules(data))
