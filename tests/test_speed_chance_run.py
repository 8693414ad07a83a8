"""Editions' fast chance walks equal the node-by-node walk exactly.

``RulesBase.sample_chance_run`` walks a run of chance nodes one node at a time (``sample_chance``
then ``apply_with_events``); the envs call it, and editions override it with a faster walk (2nd:
a whole deal of warp cards in one pass, 2E-3.3; 7th and 8th: one mutable copy for the whole run).
For every registered edition and shipped scenario, at every chance node of seeded random games,
the override must reach the same state with the same events (kind, text, player, data) and leave
the random generator in the same state as the generic walk started from the same generator
state. A walk from a decision or terminal node returns its input and draws nothing. Likewise
``apply_with_chance`` (a decision and the walk after it, in one copy of the state in the 7th and
8th editions) equals ``apply_with_events`` followed by the generic walk.
"""

from __future__ import annotations

import numpy as np
import pytest

from psygym.core import CHANCE, TERMINAL, RulesBase
from psygym.edition import editions
from psygym.editions import load

CASES = [(e.id, s) for e in editions() for s in e.scenario_names()]
GAMES = 6


def _events(events):
    return [(e.kind, e.text, e.player, e.data) for e in events]


@pytest.mark.parametrize(("edition", "scenario"), CASES, ids=[f"{e}-{s}" for e, s in CASES])
def test_fast_chance_walks_equal_the_node_by_node_walk(edition, scenario):
    rules = load(edition, scenario)
    play = np.random.default_rng(17)
    walks = decisions = 0
    for _ in range(GAMES):
        s = rules.initial_state()
        while (p := rules.current_player(s)) != TERMINAL:
            if p == CHANCE:
                fast_rng = np.random.default_rng(int(play.integers(2**32)))
                slow_rng = np.random.default_rng()
                slow_rng.bit_generator.state = fast_rng.bit_generator.state
                fast_events, slow_events = ["before"], ["before"]
                fast = rules.sample_chance_run(s, fast_rng, fast_events)
                slow = RulesBase.sample_chance_run(rules, s, slow_rng, slow_events)
                assert fast == slow
                assert repr(fast) == repr(slow)
                assert fast_events[0] == "before" and slow_events[0] == "before"
                assert _events(fast_events[1:]) == _events(slow_events[1:])
                assert fast_rng.bit_generator.state == slow_rng.bit_generator.state
                assert rules.current_player(fast) != CHANCE
                walks += 1
                s = fast
                continue
            legal = rules.legal_actions(s)
            untouched = np.random.default_rng(5)
            before = untouched.bit_generator.state
            events: list = []
            assert rules.sample_chance_run(s, untouched, events) is s
            assert events == [] and untouched.bit_generator.state == before
            a = legal[int(play.integers(len(legal)))]
            # A decision and the walk after it, in one go, as the envs call it.
            fast_rng = np.random.default_rng(int(play.integers(2**32)))
            slow_rng = np.random.default_rng()
            slow_rng.bit_generator.state = fast_rng.bit_generator.state
            fast_events: list = []
            fast = rules.apply_with_chance(s, a, fast_rng, fast_events, check=False)
            slow, first = rules.apply_with_events(s, a)
            slow_events = list(first)
            slow = RulesBase.sample_chance_run(rules, slow, slow_rng, slow_events)
            assert fast == slow and repr(fast) == repr(slow)
            assert _events(fast_events) == _events(slow_events)
            assert fast_rng.bit_generator.state == slow_rng.bit_generator.state
            decisions += 1
            s = rules.apply(s, a)
    assert walks > 0 and decisions > 0


@pytest.mark.parametrize("edition", sorted({e for e, _ in CASES}))
def test_a_replaced_sample_chance_is_asked_at_every_node(edition):
    """Tests replay chance by setting ``rules.sample_chance``: a fast walk must then use it."""
    rules = load(edition)
    own = rules.sample_chance
    asked: list = []

    def spy(state, rng):
        asked.append(state)
        return own(state, rng)

    rules.sample_chance = spy
    play = np.random.default_rng(2)
    s, runs = rules.initial_state(), 0
    while (p := rules.current_player(s)) != TERMINAL:
        if p == CHANCE:
            seed = int(play.integers(2**32))
            asked.clear()
            walked = rules.sample_chance_run(s, np.random.default_rng(seed), [])
            fast_asks = list(asked)
            asked.clear()
            generic = RulesBase.sample_chance_run(rules, s, np.random.default_rng(seed), [])
            assert walked == generic and fast_asks == asked and asked
            s, runs = walked, runs + 1
            continue
        legal = rules.legal_actions(s)
        a = legal[int(play.integers(len(legal)))]
        seed = int(play.integers(2**32))
        asked.clear()
        walked = rules.apply_with_chance(s, a, np.random.default_rng(seed), [])
        fast_asks = list(asked)
        asked.clear()
        generic = RulesBase.apply_with_chance(rules, s, a, np.random.default_rng(seed), [])
        assert walked == generic and fast_asks == asked
        s = rules.apply(s, a)
    assert runs > 0
