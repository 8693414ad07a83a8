"""8th-edition fast paths: one copy per transition, the event-free ``apply``, memoised events,
legality memoised by which units are alive, cached masks. Each must give exactly what the plain
definitions give (rules/eighth.md 8E-1 .. 8E-8)."""

from __future__ import annotations

import numpy as np
import pytest

from psygym.core import CHANCE, TERMINAL
from psygym.editions import load
from psygym.editions.eighth import EDITION
from psygym.editions.eighth.rules import EighthRules
from psygym.editions.eighth.state import Stage

SCENARIOS = EDITION.scenario_names()


def playout(rules: EighthRules, seed: int) -> list[tuple]:
    """(state, action, next state, events) of one uniformly random game."""
    rng = np.random.default_rng(seed)
    s = rules.initial_state()
    steps = []
    while (player := rules.current_player(s)) != TERMINAL:
        if player == CHANCE:
            a = rules.sample_chance(s, rng)
        else:
            legal = rules.legal_actions(s)
            a = legal[int(rng.integers(len(legal)))]
        nxt, events = rules.apply_with_events(s, a)
        steps.append((s, a, nxt, events))
        s = nxt
    return steps


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_apply_without_events_reaches_the_same_states(scenario):
    rules = load(EDITION.id, scenario)
    kinds = set()
    for seed in range(30):
        for s, a, nxt, events in playout(rules, seed):
            assert rules.apply(s, a) == nxt
            assert rules.apply(s, a, check=False) == nxt
            kinds.update(e.kind for e in events)
    assert kinds  # the event path does report events


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_transitions_never_change_a_state_already_returned(scenario):
    """Each transition builds its new state in its own copy; no earlier state changes."""
    rules = load(EDITION.id, scenario)
    for seed in range(20):
        steps = playout(rules, seed)
        seen = [(s, repr(s), hash(s)) for s, *_ in steps]
        for s, a, *_ in steps:  # replaying every transition again must not touch its input
            rules.apply(s, a)
            rules.apply_with_events(s, a)
        for s, text, h in seen:
            assert repr(s) == text and hash(s) == h


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_memoised_events_equal_events_built_afresh(scenario):
    warm = load(EDITION.id, scenario)
    for seed in range(25):
        for s, a, _, events in playout(warm, seed):
            fresh = load(EDITION.id, scenario)  # empty caches: every event is built now
            assert fresh.apply_with_events(s, a)[1] == events


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_legality_memoised_by_alive_units_matches_a_fresh_computation(scenario):
    """The legal-action memo keys on which units are alive, not on their wounds (8E-3.4)."""
    warm = load(EDITION.id, scenario)
    checked = 0
    for seed in range(15):
        for s, *_ in playout(warm, seed)[::3]:
            fresh = load(EDITION.id, scenario)
            assert warm.legal_actions(s) == fresh.legal_actions(s)
            if s.caster >= 0:
                assert warm.cast_options(s, s.caster) == fresh.cast_options(s, s.caster)
            checked += s.stage in (Stage.SELECT, Stage.POWER, Stage.DENY)
    assert checked


def test_legal_mask_is_a_new_writable_array_each_call():
    rules = load(EDITION.id, EDITION.default_scenario)
    s = rules.initial_state()
    mask = rules.legal_mask(s)
    assert mask.dtype == bool and mask.flags.writeable
    assert np.flatnonzero(mask).tolist() == rules.legal_actions(s)
    mask[:] = False
    again = rules.legal_mask(s)
    assert again is not mask
    assert np.flatnonzero(again).tolist() == rules.legal_actions(s)
