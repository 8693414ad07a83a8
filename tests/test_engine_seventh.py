"""The compiled 7th edition against its Python reference (psygym/editions/seventh/engine/).

The codec's round trip and its layouts sized by the scenario, the node-by-node differential
check (both players' observations included) on every shipped scenario and on
hypothesis-generated scenarios (the shipped disciplines file and one with dice modifiers,
multi-wound damage and roll-offs), the compiled solver's values and state counts against the
Python solver, check_state refusing garbage, and scenarios the twin cannot take left to the
reference.
"""

from __future__ import annotations

import struct
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from psygym.core import CHANCE, TERMINAL
from psygym.editions.seventh.state import Cast
from psygym.engine import compiled_game, core_module
from psygym.engine.differential import check_games

core = core_module()
if core is None or "7th" not in core.registered_games():
    pytest.skip("the compiled 7th edition is not built", allow_module_level=True)

from psygym.editions import load  # noqa: E402
from psygym.editions.seventh import rules_from_data  # noqa: E402
from psygym.editions.seventh.engine import CODEC  # noqa: E402
from psygym.scenario import ScenarioError  # noqa: E402

SHIPPED = ("single-phase", "duel")
FIXED_POWERS = ("Smite", "Psychic Shriek", "Life Leech", "Sunburst", "Crush", "Enfeeble",
                "Endurance", "Purge Soul", "Vortex of Doom", "Infernal Gaze", "Summoning",
                "Haemorrhage", "Inferno", "Dark Flame", "Iron Arm")  # fmt: skip
DISCIPLINES = ("Biomancy", "Telekinesis", "Telepathy", "Pyromancy", "Sanctic", "Malefic",
               "Divination")  # fmt: skip
CUSTOM_POWERS = """
[[power]]
name = "Force"
number = -1
warp_charge = 1
kind = "blessing"
target = "self"
effect = { value = 1 }

[[power]]
name = "Storm"
discipline = "Tempest"
number = 0
warp_charge = 1
kind = "witchfire"
target = "enemy"
range = 24

[power.effect.attack]
hits = "D3+1"
to_hit = "bs"
strength = "D3+3"
ap = "D3+2"
damage = "D3"

[[power]]
name = "Gale"
discipline = "Tempest"
number = 1
warp_charge = 2
kind = "nova"
target = "enemies"
range = 18
effect = { attack = { hits = "D3", strength = "8", ap = "none", damage = "2" } }

[[power]]
name = "Hail"
discipline = "Tempest"
number = 2
warp_charge = 1
kind = "witchfire"
target = "enemy"
range = 24
effect = { mortal = "D3-1" }

[[power]]
name = "Thunder"
discipline = "Tempest"
number = 3
warp_charge = 2
kind = "focused witchfire"
target = "enemy"
range = 24
perils_on_fail = true
effect = { rolloff_mortal = "D3" }

[[power]]
name = "Calm"
discipline = "Tempest"
number = 4
warp_charge = 1
kind = "blessing"
target = "friendly"
range = 24
doubles_perils_unless = "daemon"
effect = { value = 1.25 }

[[power]]
name = "Squall"
discipline = "Tempest"
number = 5
warp_charge = 1
kind = "beam"
target = "enemy"
range = 24
effect = { attack = { hits = "2", strength = "4", ap = "3", damage = "D3", heal_caster = true } }
"""
CUSTOM_FIXED = ("Storm", "Gale", "Hail", "Thunder", "Calm", "Squall")
HYPOTHESIS = settings(
    max_examples=60, derandomize=True, deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)  # fmt: skip


@pytest.fixture(scope="module")
def custom_powers(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("powers") / "powers.toml"
    path.write_text(CUSTOM_POWERS)
    return str(path)


def _twin(rules):
    compiled = compiled_game(rules)
    assert compiled is not None and compiled.game.id == "7th"
    return compiled


# ----------------------------------------------------------------------------- scenarios
@st.composite
def _unit(draw, index: int, side: int, generate: bool, custom: bool) -> dict:
    unit = {
        "name": f"unit {side}.{index}",
        "models": draw(st.integers(1, 4)),
        "wounds": draw(st.integers(1, 3)),
        "toughness": draw(st.integers(2, 6)),
        "save": draw(st.integers(2, 7)),
        "leadership": draw(st.integers(6, 10)),
        "ballistic_skill": draw(st.integers(2, 5)),
        "position": [draw(st.integers(-6, 6)), 14 * side + draw(st.integers(-3, 3))],
        "advance": draw(st.sampled_from([0, 0, 3, 6])),
        "value_per_wound": draw(st.sampled_from([0.5, 1.0, 1.5, 2.0])),
    }
    invulnerable = draw(st.sampled_from([None, 3, 4, 5]))
    if invulnerable is not None:
        unit["invulnerable"] = invulnerable
    if draw(st.booleans()):
        psyker = {
            "mastery": draw(st.integers(1, 2)),
            "adamantium_will": draw(st.booleans()),
            "daemon": draw(st.booleans()),
            "grey_knight": draw(st.booleans()),
            "force_weapon": draw(st.booleans()),
        }
        if generate and draw(st.booleans()):
            options = ("Tempest",) if custom else DISCIPLINES
            psyker["disciplines"] = draw(st.lists(st.sampled_from(options), min_size=1,
                                                  max_size=2, unique=True))  # fmt: skip
        else:
            names = CUSTOM_FIXED if custom else FIXED_POWERS
            psyker["powers"] = draw(st.lists(st.sampled_from(names), min_size=1, max_size=3,
                                             unique=True))  # fmt: skip
        unit["psyker"] = psyker
    return unit


@st.composite
def scenarios(draw, powers_file: str | None = None) -> dict:
    """A small valid 7th-edition scenario (dict), on the shipped or a given disciplines file."""
    generate = draw(st.booleans())
    custom = powers_file is not None
    sides = []
    for side in (0, 1):
        units = [draw(_unit(i, side, generate, custom)) for i in range(draw(st.integers(1, 2)))]
        sides.append({"name": f"side {side}", "units": units,
                      "pool_bonus": draw(st.integers(0, 2))})  # fmt: skip
    game = {
        "battle_rounds": draw(st.integers(1, 2)),
        "first_player": draw(st.integers(0, 1)),
        "generate_powers": generate,
        "instant_death": draw(st.booleans()),
        "warp_surge_value": draw(st.sampled_from([0.0, 1.0, 2.5])),
    }
    if draw(st.booleans()):
        game["phase_limit"] = draw(st.integers(1, 3))
    data = {"edition": "7th", "name": "generated", "game": game, "sides": sides}
    if powers_file is not None:
        data["powers_file"] = powers_file
    return data


def _rules(data: dict):
    return rules_from_data(data, "<generated>")


# ----------------------------------------------------------------------------- the codec
@pytest.mark.parametrize("scenario", SHIPPED)
def test_codec_round_trip_at_every_node(scenario):
    rules = load("7th", scenario)
    compiled = _twin(rules)
    codec = compiled.codec
    rng = np.random.default_rng(7)
    for _ in range(20):
        state = rules.initial_state()
        while True:
            data = codec.encode(state)
            assert len(data) == compiled.game.state_size
            assert codec.decode(data) == state
            assert codec.encode(codec.decode(data)) == data
            assert compiled.game.check_state(data) == ""
            player = rules.current_player(state)
            if player == TERMINAL:
                break
            if player == CHANCE:
                action = rules.sample_chance(state, rng)
            else:
                legal = rules.legal_actions(state)
                action = legal[int(rng.integers(len(legal)))]
            state = rules.apply(state, action)


def test_state_sizes_of_the_shipped_scenarios():
    # single-phase: the 19-byte header, 2 wounds, and 18 bits (2 psyker, 2 surge, 2 x 3 known,
    # 2 x 3 attempted, no value powers, 2 targets) in 3 bytes: 24 bytes, three words.
    assert _twin(load("7th", "single-phase")).game.state_size == 24
    # duel: generation fields and 4 generated lists too; 6 units, 4 psykers, 36 powers of which
    # 23 are value powers: 582 bits; 122 bytes, 128 in words.
    assert _twin(load("7th", "duel")).game.state_size == 128


def test_states_are_converted_by_the_codec_of_their_scenario():
    rules = load("7th", "single-phase")
    state = rules.initial_state()
    with pytest.raises(ValueError, match=r"CODEC\.bind\(rules\)"):
        CODEC.encode(state)
    codec = CODEC.bind(rules)
    data = codec.encode(state)
    with pytest.raises(ValueError, match="has 24 bytes, not 23"):
        codec.decode(data[:-1])
    with pytest.raises(ValueError, match="past its sets"):
        codec.decode(data[:-1] + b"\x80")
    with pytest.raises(ValueError, match="padding"):
        CODEC.bind(load("7th", "duel")).decode(bytes(127) + b"\x01")
    # What no layout of this scenario holds is refused, never aliased to another state.
    duel = load("7th", "duel")
    attack = next(k for k, power in enumerate(duel.powers) if power.effect.value is None)
    not_held = [
        replace(state, attempted=frozenset({(0, 3)})),  # power 3 of 3 powers
        replace(duel.initial_state(), attempted=frozenset({(2, 0)})),  # unit 2 is no psyker
        replace(duel.initial_state(), effects=frozenset({(attack, 0, 0)})),  # never in force
        replace(state, units=state.units[:1]),
        replace(state, targets=(2,)),
        replace(state, cast=Cast(0, 0, 1, dice=300)),
        replace(state, gen_unit=0),  # no power generation in this scenario
    ]
    for bad in not_held:
        with pytest.raises(ValueError, match="cannot hold|can hold"):
            (CODEC.bind(duel) if len(bad.units) == 6 else codec).encode(bad)


def test_wound_pools_past_a_byte_take_two():
    data = {
        "edition": "7th", "name": "big", "game": {"generate_powers": False},
        "sides": [
            {"name": "a", "units": [{"name": "x", "models": 1, "wounds": 3, "position": [0, 0],
                                     "psyker": {"mastery": 1, "powers": ["Smite"]}}]},
            {"name": "b", "units": [{"name": "horde", "models": 100, "wounds": 3,
                                     "position": [0, 5]}]},
        ],
    }  # fmt: skip
    rules = _rules(data)
    compiled = _twin(rules)
    # 19 + 2 wounds of 2 bytes + 8 bits (2 psyker, 2 surge, 1 known, 1 attempted, 2 targets):
    # 24 bytes.
    assert compiled.game.state_size == 24
    count = check_games(rules, compiled, 40, seed=2)
    assert count.chance > 0 and count.observations == 2 * count.nodes


def test_hits_below_zero_are_left_to_the_reference(tmp_path):
    path = tmp_path / "powers.toml"
    path.write_text(CUSTOM_POWERS.replace('hits = "D3+1"', 'hits = "D3-2"'))
    data = {
        "edition": "7th", "name": "negative", "powers_file": str(path),
        "game": {"generate_powers": False},
        "sides": [
            {"name": "a", "units": [{"name": "x", "wounds": 1, "position": [0, 0],
                                     "psyker": {"mastery": 1, "powers": ["Storm"]}}]},
            {"name": "b", "units": [{"name": "y", "wounds": 1, "position": [0, 5]}]},
        ],
    }  # fmt: skip
    rules = _rules(data)
    with pytest.raises(ScenarioError, match="below 0 hits"):
        CODEC.encode_scenario(rules)
    assert compiled_game(rules) is None  # the reference plays it


# ----------------------------------------------------------------------------- differential
@pytest.mark.parametrize("scenario", SHIPPED)
def test_twin_matches_the_reference_on_shipped_scenarios(scenario):
    rules = load("7th", scenario)
    count = check_games(rules, _twin(rules), 150, seed=7)
    assert count.games == 150 and count.decisions > 0 and count.chance > 0


def test_twin_matches_the_reference_on_generated_scenarios():
    @HYPOTHESIS
    @given(scenarios())
    def run(data):
        rules = _rules(data)
        check_games(rules, _twin(rules), 8, seed=3)

    run()


def test_twin_matches_the_reference_with_custom_powers(custom_powers):
    @HYPOTHESIS
    @given(scenarios(custom_powers))
    def run(data):
        rules = _rules(data)
        check_games(rules, _twin(rules), 8, seed=5)

    run()


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
    ("duel", {"battle_rounds": 1, "phase_limit": 1, "generate_powers": False}),
])  # fmt: skip
def test_compiled_solver_equals_the_python_solver(scenario, game):
    rules = load("7th", scenario, **game)
    assert _solve_both(rules) is not None, "small enough to solve"


def test_solvers_on_many_threads_share_one_game():
    """The game's chance tables are built once per key while solvers on other threads read
    them (the solves release the GIL): every solve gives the single-threaded value and count."""
    from concurrent.futures import ThreadPoolExecutor

    rules = load("7th", "duel", battle_rounds=1, phase_limit=1, generate_powers=False)
    expected = _solve_both(rules)
    assert expected is not None
    compiled = _twin(load("7th", "duel", battle_rounds=1, phase_limit=1, generate_powers=False))
    start = compiled.game.initial_state()  # a new twin: its tables are built by the threads

    def solve(_: int) -> tuple[float, int]:
        solver = compiled.solver()
        return solver.value(start), solver.states

    with ThreadPoolExecutor(4) as pool:
        assert set(pool.map(solve, range(8))) == {expected}


def test_compiled_solver_equals_the_python_solver_on_generated_scenarios(custom_powers):
    solved = {"count": 0}

    @settings(HYPOTHESIS, max_examples=30)
    @given(st.one_of(scenarios(), scenarios(custom_powers)))
    def run(data):
        data["game"]["phase_limit"] = 1
        solved["count"] += _solve_both(_rules(data), max_states=20_000) is not None

    run()
    assert solved["count"] >= 10


# ----------------------------------------------------------------------------- bad input
def _field(data: bytes, offset: int, value: int) -> bytes:
    out = bytearray(data)
    out[offset] = value
    return bytes(out)


def test_check_state_refuses_out_of_range_fields():
    compiled = _twin(load("7th", "duel"))
    game = compiled.game
    state = game.initial_state()
    assert game.check_state(state) == ""
    # The duel's layout (state.h): header 0-18 (the flags byte at 8), generation 19-22, wounds
    # 23-28, generated lists 29-48 (4 psykers), the bitset 49-121 (582 bits: psyker, surge,
    # known, attempted, effects, targets), padding 122-127.
    bad = [
        _field(state, 8, 0x80),  # bit 7 of the flags byte
        _field(state, 8, 0x40),  # the perils flag without a cast
        _field(state, 10, 200),  # pool
        _field(state, 12, 1),  # a cast field without a cast
        _field(state, 18, 7),  # perils roll
        _field(state, 19, 99),  # gen_unit
        _field(state, 23, 255),  # wounds past the pool
        _field(state, 29, 5),  # more than 4 generated powers
        _field(state, 49, state[49] | 0x04),  # unit 2, without a psyker profile, a psyker
        _field(state, 121, 0x40),  # bit 582, past the sets
        bytes(8) + state[8:],  # fine, score 0.0
        struct.pack("<d", float("nan")) + state[8:],
        struct.pack("<d", -0.0) + state[8:],
        state[:-1] + b"\xff",  # padding
    ]
    for data in bad:
        if data[:8] == bytes(8) and data[8:] == state[8:]:
            assert game.check_state(data) == ""
            continue
        assert game.check_state(data) != ""
        with pytest.raises(ValueError):
            game.legal_actions(data)
    with pytest.raises(ValueError):
        game.apply(state, 10**6)
    with pytest.raises(ValueError):
        game.current_player(state[:-1])


def test_scenario_numbers_are_checked():
    rules = load("7th", "single-phase")
    ints, reals = CODEC.encode_scenario(rules)
    with pytest.raises(ScenarioError, match="format"):
        core.Game("7th", [99, *ints[1:]], reals)
    with pytest.raises(ScenarioError, match="max_dice"):
        core.Game("7th", [*ints[:4], ints[4] + 1, *ints[5:]], reals)
    with pytest.raises(ScenarioError):
        core.Game("7th", ints[:-1], reals)
    with pytest.raises(ScenarioError):
        core.Game("7th", ints, [*reals[:-1], float("nan")])


def test_a_state_the_twin_refuses_is_solved_on_the_reference():
    """A what-if state no game reaches (a unit made a psyker, as the dice table does): the
    solver goes on in Python with the reference's value, instead of failing."""
    from psygym_agents.seventh.dice_table import _states, dice_table_rules
    from psygym_agents.solvers.expectiminimax import Solver

    rules = dice_table_rules()
    # Its target made a psyker (it has no psyker profile): warp charge 1, 3 dice, 2 to deny.
    state, _ = _states(rules, 1, 3, 2, target_psyker=True)
    solver = Solver(rules)
    assert solver.engine == "core"
    value = solver.value(state)
    assert solver.engine == "python"
    assert value == Solver(rules, engine="python").value(state)
