"""The Rogue Trader rules' fast paths give the same games (rules/rogue-trader.md RT-1 to RT-6).

The event-free ``apply`` used by search, the memoised events and the cached initial state are
shortcuts through the same transition code: these tests play seeded random games and check that
every shortcut gives exactly what the event-recording path gives.
"""

from __future__ import annotations

import numpy as np
import pytest

from psygym.core import CHANCE, TERMINAL
from psygym.editions import load


def _random_setup():
    """The duel with random psi-levels and random abilities (RT-1.1, RT-1.3 set-up nodes)."""
    from psygym.editions.rogue_trader import rules_from_data
    from psygym.scenario import read_toml

    rules = load("rt", "duel")
    data = read_toml(rules.source)
    data["game"] = {**data["game"], "psi_level": "random", "ability_count": "random"}
    for side in data["sides"]:
        for unit in side["units"]:
            unit.pop("psi_level", None)
            unit["abilities"] = "random"
    return rules_from_data(data, "random-duel")


RULES = {
    "duel": lambda: load("rt", "duel"),
    "psyker-vs-squad": lambda: load("rt", "psyker-vs-squad"),
    "random-setup": _random_setup,
}


def _games(rules, games: int, seed: int):
    """Every ``(state, action)`` of ``games`` seeded random games."""
    rng = np.random.default_rng(seed)
    for _ in range(games):
        s = rules.initial_state()
        while rules.current_player(s) != TERMINAL:
            if rules.current_player(s) == CHANCE:
                a = rules.sample_chance(s, rng)
            else:
                legal = rules.legal_actions(s)
                a = legal[int(rng.integers(len(legal)))]
            yield s, a
            s = rules.apply_with_events(s, a)[0]


@pytest.mark.parametrize("name", sorted(RULES))
def test_event_free_apply_reaches_the_same_state(name):
    rules = RULES[name]()
    steps = 0
    for s, a in _games(rules, 25, seed=3):
        assert rules.apply(s, a) == rules.apply_with_events(s, a)[0]
        steps += 1
    assert steps > 100


@pytest.mark.parametrize("name", sorted(RULES))
def test_memoised_events_equal_freshly_built_ones(name):
    memo, fresh = RULES[name](), RULES[name]()
    seen = 0
    for s, a in _games(memo, 25, seed=5):
        fresh._event_memo.clear()  # every event of `fresh` is built anew
        got, want = memo.apply_with_events(s, a), fresh.apply_with_events(s, a)
        assert got == want
        assert [e.text for e in got[1]] == [e.text for e in want[1]]
        seen += len(got[1])
    assert seen > 100
    assert memo._event_memo  # the memo was used


def test_initial_state_is_built_once_and_equals_a_fresh_build():
    rules = load("rt", "psyker-vs-squad")
    first = rules.initial_state()
    assert rules.initial_state() is first
    assert load("rt", "psyker-vs-squad").initial_state() == first
    assert rules._build_initial_state() == first
