"""2nd edition: the public action layout, the views module, chance tables, events, game_info.

The observation digests pin the observation of seeded random games bit for bit. Re-recorded for
the hidden-information rule changes (face-down discards with the own face-down cards and the
other's count, an Ultimate-Force flag per power slot, response steps and turns asked whatever the
hand holds, Warp Blast from 1 Force): those change both the layout and the games.
"""

from __future__ import annotations

import ast
import hashlib
import math
from pathlib import Path

import numpy as np
import pytest

from psygym import CHANCE, TERMINAL, load
from psygym.core import EventKind
from psygym.editions.second.actions import (
    DUEL_BASE,
    PASS,
    PAY_OPTIONS,
    PAY_ULTIMATE,
    RESPONSE_CARDS,
    CastAction,
    DrainAction,
    DuelAction,
    EndAction,
    NullifyInPlayAction,
    PassAction,
    ResponseAction,
)
from psygym.editions.second.data import Card
from psygym.editions.second.views import SecondViews

AGENTS = Path(__file__).resolve().parents[1] / "agents" / "second"

OBSERVATION_DIGESTS = {
    "duel": "05f39da6bd849d9fb613fcd51d0fb5be0f8ffe5494a3e8f28365627659040dbc",
    "librarian-vs-farseer": "95e682b85bc22797d4d23776755e9148557b3d3b1a3aef3ff88071ac0a279f33",
}


def _random_states(rules, games: int, seed: int):
    """Every state of ``games`` random games (random legal actions, sampled chance)."""
    rng = np.random.default_rng(seed)
    for _ in range(games):
        s = rules.initial_state()
        while True:
            yield s
            player = rules.current_player(s)
            if player == TERMINAL:
                break
            if player == CHANCE:
                a = rules.sample_chance(s, rng)
            else:
                legal = rules.legal_actions(s)
                a = legal[int(rng.integers(len(legal)))]
            s = rules.apply(s, a)


@pytest.mark.parametrize("name", sorted(OBSERVATION_DIGESTS))
def test_observations_are_bit_identical_to_the_recorded_ones(name):
    rules = load("2nd", name)
    h = hashlib.sha256()
    for s in _random_states(rules, games=6, seed=11):
        for p in (0, 1):
            h.update(rules.observe(s, p).tobytes())
    assert h.hexdigest() == OBSERVATION_DIGESTS[name]


def test_action_layout_keeps_the_numbers_and_round_trips():
    rules = load("2nd", "duel")  # 4 psykers, 3 slots, 6 units
    layout = rules.actions
    P, M, U = rules.num_psykers, rules.num_slots, rules.num_units
    assert (P, M, U) == (4, 3, 6)
    assert layout.end_base == DUEL_BASE + P * P == 22
    assert layout.nullify_base == layout.end_base + P * M == 34
    assert layout.cast_base == layout.nullify_base + P * M == 46
    assert rules.num_actions == layout.num_actions == 46 + P * M * (U + 1) * PAY_OPTIONS
    assert layout.encode_cast(1, 2, 3, 4) == 46 + ((1 * M + 2) * (U + 1) + 3) * 5 + 4
    assert layout.decode(PASS) == PassAction() == layout.decode(PASS, response=True)
    assert layout.decode(1) == DrainAction()
    for action, card in RESPONSE_CARDS.items():
        assert layout.decode(action, response=True) == ResponseAction(card)
    assert layout.decode(2, response=True).card == Card.NULLIFY
    with pytest.raises(ValueError):
        layout.decode(layout.cast_base, response=True)
    with pytest.raises(ValueError):
        layout.decode(rules.num_actions)
    kinds = set()
    for a in range(DUEL_BASE, rules.num_actions):
        d = layout.decode(a)
        kinds.add(type(d))
        if isinstance(d, DuelAction):
            assert layout.encode_duel(*d) == a and layout.is_duel(a)
        elif isinstance(d, EndAction):
            assert layout.encode_end(*d) == a and layout.is_end(a)
        elif isinstance(d, NullifyInPlayAction):
            assert layout.encode_nullify(*d) == a and layout.is_nullify_in_play(a)
        else:
            assert isinstance(d, CastAction) and layout.is_cast(a)
            assert layout.encode_cast(*d) == a == rules.cast_action(*d)
            assert rules.decode_cast(a) == d and d.ultimate == (d.pay == PAY_ULTIMATE)
    assert kinds == {DuelAction, EndAction, NullifyInPlayAction, CastAction}


def test_views_module_serves_the_rules_methods():
    rules = load("2nd", "librarian-vs-farseer")
    assert isinstance(rules.views, SecondViews)
    # 146 before the face-down discards (+8 own, +1 the other's count) and the Ultimate-Force
    # flag of each of the 2 x 3 power slots (+6).
    assert rules.observation_size == rules.views.observation_size == 161
    for i, s in enumerate(_random_states(rules, games=2, seed=3)):
        for p in (0, 1):
            obs = rules.observe(s, p)
            assert obs.flags.writeable  # a fresh array, not the memoised board block
            assert np.array_equal(obs, rules.views.observe(s, p))
            assert rules.render(s, p) == rules.views.render(s, p)
        if rules.current_player(s) >= 0:
            for a in rules.legal_actions(s):
                view = rules.views.describe(s, a)
                assert rules.describe(s, a) == view and str(rules.describe(s, a)) == str(view)
        if i > 300:
            break


def test_chance_outcomes_and_sampling_read_one_table():
    rules = load("2nd", "duel")
    checked = 0
    for s in _random_states(rules, games=4, seed=2):
        if rules.current_player(s) != CHANCE:
            assert rules.chance_outcomes(s) == []
            continue
        table = rules.chance_table(s)
        assert rules.chance_outcomes(s) == table.outcomes
        exact = rules.chance_distribution(s)
        assert [(o, float(p)) for o, p in exact] == table.outcomes
        assert math.isclose(sum(p for _, p in table.outcomes), 1.0)
        a, b = np.random.default_rng(checked), np.random.default_rng(checked)
        assert rules.sample_chance(s, a) == table.sample(b)
        assert a.random() == b.random()  # the same number of draws: one
        checked += 1
    assert checked > 100


def test_every_event_uses_an_event_kind_member():
    rules = load("2nd", "duel")
    rng = np.random.default_rng(4)
    seen = set()
    for _ in range(30):
        s = rules.initial_state()
        while (player := rules.current_player(s)) != TERMINAL:
            if player == CHANCE:
                a = rules.sample_chance(s, rng)
            else:
                legal = rules.legal_actions(s)
                a = legal[int(rng.integers(len(legal)))]
            s, events = rules.apply_with_events(s, a)
            for e in events:
                assert type(e.kind) is EventKind, e
                seen.add(e.kind)
    assert {EventKind.DEAL, EventKind.FLUX, EventKind.ATTEMPT, EventKind.PASS} <= seen


@pytest.mark.parametrize("name", sorted(OBSERVATION_DIGESTS))
def test_game_info_bounds_hold_in_random_games(name):
    rules = load("2nd", name)
    info = rules.game_info()
    assert info.num_actions == rules.num_actions
    assert info.observation_size == rules.observation_size
    assert info.information == rules.information
    assert 2 <= info.max_chance_outcomes < 100
    assert -math.inf < info.min_utility == -info.max_utility < 0
    for s in _random_states(rules, games=40, seed=6):
        if rules.current_player(s) == CHANCE:
            assert len(rules.chance_outcomes(s)) <= info.max_chance_outcomes
        assert info.min_utility <= rules.returns(s)[0] <= info.max_utility


def test_agents_use_only_the_public_layout():
    """No private rules member and no raw action base in agents/second (task: public layout)."""
    offences = []
    for path in sorted(AGENTS.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
                if node.value.id == "rules" and node.attr.startswith("_"):
                    offences.append(f"{path.name}:{node.lineno} rules.{node.attr}")
                if node.attr.endswith("_base"):
                    offences.append(f"{path.name}:{node.lineno} {node.value.id}.{node.attr}")
            if isinstance(node, ast.Name) and node.id.endswith("_BASE"):
                offences.append(f"{path.name}:{node.lineno} {node.id}")
    assert not offences
