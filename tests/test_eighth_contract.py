"""8th edition on the shared contract: action layout, views, chance tables, events, game_info."""

from __future__ import annotations

import numpy as np
import pytest
from psygym_agents.base import RandomPolicy
from psygym_agents.eighth.heuristics import HEURISTICS

from psygym.core import CHANCE, TERMINAL, EventKind, play_game
from psygym.editions import load
from psygym.editions.eighth.actions import (
    CastAction,
    DenyAction,
    EndPhaseAction,
    NoDenyAction,
    SelectAction,
    StopAction,
)
from psygym.editions.eighth.effects import deny_chance, is_perils
from psygym.editions.eighth.rules import EighthRules
from psygym.editions.eighth.state import Stage, State

SCENARIOS = ["duel", "single-phase", "smite-spam"]


def playout_states(rules: EighthRules, games: int, seed: int = 0) -> list[State]:
    """Every state visited by ``games`` random-vs-smite-first games (both seats)."""
    states: list[State] = []
    pols = [RandomPolicy(), HEURISTICS["smite-first"](rules)]
    for g in range(games):
        order = pols if g % 2 else pols[::-1]
        rng = np.random.default_rng(seed + g)
        end = play_game(rules, order, rng, on_step=lambda s, a, e: states.append(s))
        states.append(end)
    return states


def reference_observation(rules: EighthRules, s: State, player: int) -> np.ndarray:
    """The observation built entry by entry from Python floats (the documented layout)."""
    kind = [0.0] * 5
    kind[{Stage.SELECT: 0, Stage.POWER: 1, Stage.DENY: 2, Stage.OVER: 4}.get(s.stage, 3)] = 1.0
    pending = s.power >= 0
    total = s.total if pending else 0
    values = kind + [
        s.round / rules.game.battle_rounds,
        float(s.active == player),
        float(rules.game.first_player == player),
        total / 12,
        s.warp_charge / 12 if pending else 0.0,
        float(is_perils(total)),
        float(deny_chance(total)) if total else 0.0,
        s.score if player == 0 else -s.score,
    ]
    for i, w in enumerate(s.wounds):
        values += [
            float(rules.side_of[i] == player),
            float(w > 0),
            w / rules.max_wounds[i],
            w,
            float(rules.units[i].psyker),
            s.deny_left[i],
            float((s.selected >> i) & 1),
            float(s.caster == i),
            float(s.target == i),
            float(s.denier == i),
        ]
    known = rules.known[s.caster] if s.caster >= 0 else ()
    for p, tries in enumerate(s.attempts):
        power = rules.powers[p]
        values += [
            (power.warp_charge + power.escalation * tries) / 12,
            tries,
            float(p in known),
            float(s.power == p),
        ]
    return np.array(values, dtype=np.float32)


# ---------------------------------------------------------------- action layout


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_action_layout_round_trips_every_action(scenario):
    rules = load("8th", scenario)
    layout = rules.actions
    n, p = rules.n_units, rules.n_powers
    assert layout.num_actions == rules.num_actions == 2 * n + 3 + p * n
    seen = set()
    for a in range(rules.num_actions):
        d = layout.decode(a)
        seen.add(type(d))
        if isinstance(d, SelectAction):
            assert layout.select(d.unit) == a and 0 <= d.unit < n
        elif isinstance(d, CastAction):
            power, target = d
            assert layout.cast(power, target) == a and rules.cast_action(power, target) == a
            assert rules.decode_cast(a) == (power, target) and 0 <= power < p and 0 <= target < n
        elif isinstance(d, DenyAction):
            assert layout.deny(d.unit) == a and 0 <= d.unit < n
        else:
            expected = {EndPhaseAction: n, StopAction: layout.STOP, NoDenyAction: layout.NO_DENY}
            assert expected[type(d)] == a
    assert len(seen) == 6
    with pytest.raises(ValueError, match="outside"):
        layout.decode(rules.num_actions)


def test_decoded_kinds_never_compare_equal():
    assert EndPhaseAction() != StopAction() != NoDenyAction()
    assert SelectAction(2) != DenyAction(2)


def test_legal_actions_decode_to_the_stage_they_belong_to():  # 8E-2.1, 8E-3, 8E-5.1
    rules = load("8th", "duel")
    allowed = {
        Stage.SELECT: (SelectAction, EndPhaseAction),
        Stage.POWER: (CastAction, StopAction),
        Stage.DENY: (DenyAction, NoDenyAction),
    }
    stages = set()
    for s in playout_states(rules, 6):
        if rules.current_player(s) in (0, 1):
            stages.add(s.stage)
            kinds = {type(rules.actions.decode(a)) for a in rules.legal_actions(s)}
            assert kinds <= set(allowed[s.stage]), (s.stage, kinds)
            if s.stage == Stage.POWER:
                casts = [a for a in rules.legal_actions(s) if rules.actions.is_cast(a)]
                assert rules.cast_options(s, s.caster) == casts
    assert stages == set(allowed)


# ---------------------------------------------------------------- views


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_observation_matches_the_documented_layout_bit_for_bit(scenario):
    rules = load("8th", scenario)
    states = playout_states(rules, 8)
    for _ in range(2):  # the second pass reads the cached blocks
        for s in states:
            for player in (0, 1):
                got = rules.observe(s, player)
                assert got.tobytes() == reference_observation(rules, s, player).tobytes(), s


def test_observations_are_fresh_writable_arrays():
    rules = load("8th", "duel")
    s = rules.initial_state()
    first = rules.observe(s, 0)
    first[:] = 99.0  # a caller may write into what it got
    again = rules.observe(s, 0)
    assert again.flags.writeable and not np.shares_memory(first, again)
    assert again.tobytes() == reference_observation(rules, s, 0).tobytes()


# ---------------------------------------------------------------- chance tables


class FixedUniform:
    """An rng whose ``random()`` returns a chosen number (to probe a sampler's table)."""

    def __init__(self, u: float):
        self.u = u
        self.calls = 0

    def random(self) -> float:
        self.calls += 1
        return self.u


def test_sample_chance_reads_the_table_chance_outcomes_lists():
    """Each outcome owns the slice of [0, 1) its place in ``chance_outcomes`` gives it, and one
    uniform number is drawn per chance node (so seeds give the same games as before)."""
    rules = load("8th", "duel")
    checked = set()
    for s in playout_states(rules, 6):
        if rules.current_player(s) != CHANCE:
            continue
        outcomes = rules.chance_outcomes(s)
        low = 0.0
        for outcome, p in outcomes:
            rng = FixedUniform(low + p / 2)
            assert rules.sample_chance(s, rng) == outcome  # type: ignore[arg-type]
            assert rng.calls == 1
            low += p
        checked.add(s.stage)
    assert {Stage.TEST, Stage.EFFECT, Stage.DENY_ROLL} <= checked


# ---------------------------------------------------------------- events and game_info


def test_events_use_event_kinds_with_sorted_data():
    rules = load("8th", "duel")
    kinds: set[str] = set()
    for seed in range(6):
        s = rules.initial_state()
        rng = np.random.default_rng(seed)
        pol = HEURISTICS["best-power-first"](rules)
        while rules.current_player(s) != TERMINAL:
            player = rules.current_player(s)
            if player == CHANCE:
                a = rules.sample_chance(s, rng)
            else:
                a = pol.choose(rules, s, player)
            s, events = rules.apply_with_events(s, a)
            for e in events:
                assert isinstance(e.kind, EventKind), e
                keys = [k for k, _ in e.data]
                assert keys == sorted(keys), e
                kinds.add(e.kind)
    assert {EventKind.ATTEMPT, EventKind.PASSED, EventKind.WOUNDS, EventKind.PHASE} <= kinds


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_game_info_bounds_hold_along_playouts(scenario):
    rules = load("8th", scenario)
    info = rules.game_info()
    assert (info.num_actions, info.observation_size) == (rules.num_actions, rules.observation_size)
    assert info.max_chance_outcomes >= 11  # the 2D6 test has 11 totals (8E-4.1)
    assert info.min_utility == -info.max_utility < np.inf
    policies = [HEURISTICS["cheapest-first"](rules), HEURISTICS["deny-always"](rules)]
    decisions = [0]

    def count(s, a, e):
        if rules.current_player(s) == CHANCE:
            assert len(rules.chance_outcomes(s)) <= info.max_chance_outcomes
        else:
            decisions[0] += 1

    for seed in range(10):
        decisions[0] = 0
        end = play_game(rules, policies, np.random.default_rng(seed), on_step=count)
        assert decisions[0] <= info.max_game_length
        assert info.min_utility <= rules.returns(end)[0] <= info.max_utility
