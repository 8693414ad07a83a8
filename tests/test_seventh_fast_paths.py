"""7th edition's fast paths give the answers of the plain ones (no timing here).

The transition edits one ``Draft`` and freezes it once; ``apply`` runs the same transition
without building events; the casting choices are kept for the last state asked about; masks are
memoised per legal set. Each test plays seeded random games over every shipped scenario and a
scenario with novas, Perils-on-doubles powers, Life Leech and multi-model psyker units, and
compares the fast answer with one computed from scratch. Rule ids: shared/rules/seventh.md.
"""

from __future__ import annotations

from dataclasses import fields

import numpy as np
import pytest
from helpers import psyker7, rules_from, scenario7, unit7
from psygym_agents.base import RandomPolicy

from psygym.core import CHANCE, TERMINAL, Event, sample_action
from psygym.editions import load, scenario_names
from psygym.editions.seventh.state import Draft, Stage, State

FIELDS = frozenset(f.name for f in fields(State))


def zoo():
    """Fixed powers of every kind: nova (7E-7.1), daemon doubles (7E-4.4), Vortex, Life Leech."""
    return rules_from(
        scenario7(
            [
                unit7(
                    "Librarian",
                    (0, 0),
                    models=2,
                    wounds=3,
                    toughness=4,
                    save=3,
                    leadership=6,
                    ballistic_skill=5,
                    advance=3,
                    psyker=psyker7(
                        3,
                        powers=["Vortex of Doom", "Life Leech", "Sunburst", "Summoning", "Crush"],
                    ),
                ),
                unit7("Terminators", (3, 1), models=5, wounds=2, toughness=4, save=2),
            ],
            [
                unit7(
                    "Farseer",
                    (0, 14),
                    models=3,
                    wounds=3,
                    toughness=3,
                    leadership=6,
                    ballistic_skill=5,
                    advance=2,
                    psyker=psyker7(
                        2,
                        powers=["Cleansing Flame", "Psychic Shriek", "Dark Flame", "Iron Arm"],
                        daemon=True,
                        adamantium_will=True,
                    ),
                ),
                unit7("Bikers", (-4, 12), models=4, wounds=2, toughness=5, save=3, advance=4),
            ],
            phases=None,
            rounds=3,
        )
    )


SCENARIOS = [*scenario_names("7th"), "zoo"]


def make(name: str):
    """Fresh rules of a shipped scenario, or of :func:`zoo`."""
    return zoo() if name == "zoo" else load("7th", name)


def random_walk(rules, games: int, seed: int):
    """Yield ``(state, action)`` along seeded random games (decisions and chance outcomes)."""
    policy = RandomPolicy()
    rng = np.random.default_rng(seed)
    for _ in range(games):
        s = rules.initial_state()
        while (player := rules.current_player(s)) != TERMINAL:
            if player == CHANCE:
                a = rules.sample_chance(s, rng)
            else:
                a = sample_action(policy, rules, s, player, rng)
            yield s, a
            s = rules.apply(s, a, check=False)


@pytest.mark.parametrize("name", SCENARIOS)
def test_apply_without_events_is_the_event_path_state(name):
    rules = make(name)
    stages = set()
    for s, a in random_walk(rules, games=30, seed=3):
        plain = rules.apply(s, a)
        with_events, events = rules.apply_with_events(s, a)
        assert plain == with_events and hash(plain) == hash(with_events)
        assert rules._apply(s, a) == (with_events, events)
        stages.add(s.stage)
    assert {Stage.SELECT, Stage.CAST_ROLL, Stage.DENY, Stage.DENY_ROLL} <= stages


@pytest.mark.parametrize("name", SCENARIOS)
def test_frozen_drafts_are_ordinary_states(name):
    rules = make(name)
    for s, a in random_walk(rules, games=20, seed=5):
        nxt, events = rules.apply_with_events(s, a)
        assert type(nxt) is State and set(vars(nxt)) == FIELDS  # no stray attribute
        rebuilt = State(**{name: getattr(nxt, name) for name in FIELDS})
        assert rebuilt == nxt and hash(rebuilt) == hash(nxt)
        for e in events:  # built without __init__: the same as the constructor's
            assert type(e) is Event and set(vars(e)) == {"kind", "text", "player", "data"}
            assert Event(e.kind, e.text, e.player, e.data) == e


def test_a_draft_leaves_its_state_alone_and_freezes_once():
    s = load("7th", "duel").initial_state()
    before = State(**{name: getattr(s, name) for name in FIELDS})
    d = Draft(s)
    d.pools = (3, 4)
    d.set_unit(0, wounds=1)
    out = d.freeze()
    assert s == before
    assert out.pools == (3, 4) and out.units[0].wounds == 1 and out.units[1:] == s.units[1:]


@pytest.mark.parametrize("name", SCENARIOS)
def test_remembered_casting_choices_match_a_fresh_computation(name):
    rules, fresh = make(name), make(name)
    selects = 0
    previous = None
    for s, _ in random_walk(rules, games=20, seed=11):
        if s.stage != Stage.SELECT:
            continue
        selects += 1
        assert rules.legal_actions(s) == fresh.legal_actions(s)
        if previous is not None:  # alternate between two states: the memo must follow
            assert rules.legal_actions(previous) == fresh.legal_actions(previous)
            assert rules.legal_actions(s) == fresh.legal_actions(s)
        fresh._last_casts = (None,) * 6  # ``fresh`` recomputes every time
        previous = s
    assert selects > 20


def test_masks_are_fresh_arrays_of_the_legal_actions():
    rules = load("7th", "duel")
    checked = 0
    for s, _ in random_walk(rules, games=10, seed=2):
        if rules.current_player(s) not in (0, 1):
            continue
        mask = rules.legal_mask(s)
        assert mask.dtype == bool and mask.shape == (rules.num_actions,)
        assert list(np.flatnonzero(mask)) == rules.legal_actions(s)
        mask[:] = ~mask  # the caller's copy: the memo is not touched
        assert list(np.flatnonzero(rules.legal_mask(s))) == rules.legal_actions(s)
        checked += 1
    assert checked > 100


@pytest.mark.parametrize("name", SCENARIOS)
def test_observations_match_a_fresh_observer(name):
    """The units part kept for the last units seen never leaks into another state's vector."""
    rules, fresh = make(name), make(name)
    previous = None
    for s, _ in random_walk(rules, games=10, seed=4):
        for player in (0, 1):
            fresh._observer = type(rules._observer)(fresh)  # nothing remembered
            want = fresh.observe(s, player)
            assert rules.observe(s, player).tobytes() == want.tobytes()
            if previous is not None:
                fresh._observer = type(rules._observer)(fresh)
                back = rules.observe(previous, player)
                assert back.tobytes() == fresh.observe(previous, player).tobytes()
        previous = s
