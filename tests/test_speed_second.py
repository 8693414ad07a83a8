"""2nd edition's one-copy transitions and fast walks are the plain transitions, exactly.

Each transition copies its input state once and builds the next state in that copy; the env's
``apply_with_chance`` takes some decisions (a pass, a cast, no response card) and every deal of
warp cards (2E-3.3) on a fast path. None of this may show: inputs are never changed, equal
states hash equal, and every fast path reaches the same state, events and generator state as
the node-by-node transitions, also where the deal meets a reshuffle or an empty deck (2E-2) and
with a rule setting that skips the response step (2E-5.2).
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from psygym import CHANCE, TERMINAL, load
from psygym.core import RulesBase
from psygym.edition import get
from psygym.editions.second import SCENARIO_DIR, rules_from_data
from psygym.editions.second.state import DEAL
from psygym.kernel import evolve
from psygym.scenario import read_toml

EDITION = get("2nd").id
SCENARIOS = get("2nd").scenario_names()


def _events(events):
    return [(e.kind, e.text, e.player, e.data) for e in events]


def _twins(seed: int) -> tuple[np.random.Generator, np.random.Generator]:
    a = np.random.default_rng(seed)
    b = np.random.default_rng()
    b.bit_generator.state = a.bit_generator.state
    return a, b


def _generic(rules, s, action, rng):
    """A decision then the node-by-node walk (what the fast paths stand in for)."""
    s, first = rules.apply_with_events(s, action, check=False)
    events = list(first)
    return RulesBase.sample_chance_run(rules, s, rng, events), events


def _play(rules, seed: int, games: int, check) -> int:
    """Random games; ``check(state, action_or_None, rng_seed)`` at every node; nodes visited."""
    play = np.random.default_rng(seed)
    nodes = 0
    for _ in range(games):
        s = rules.initial_state()
        while (p := rules.current_player(s)) != TERMINAL:
            if p == CHANCE:
                check(s, None, int(play.integers(2**32)))
                s = rules.apply(s, rules.sample_chance(s, play))
            else:
                legal = rules.legal_actions(s)
                a = legal[int(play.integers(len(legal)))]
                check(s, a, int(play.integers(2**32)))
                s = rules.apply(s, a)
            nodes += 1
    return nodes


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_transitions_never_change_their_input_and_equal_states_hash_equal(scenario):
    rules = load(EDITION, scenario)

    def check(s, action, seed):
        before, h, twin = repr(s), hash(s), pickle.loads(pickle.dumps(s))
        assert twin == s and hash(twin) == h
        if action is None:
            reached = rules.sample_chance_run(s, np.random.default_rng(seed), [])
            one = rules.apply(s, rules.chance_outcomes(s)[0][0])
        else:
            reached = rules.apply_with_chance(s, action, np.random.default_rng(seed), [])
            one = rules.apply_with_events(s, action)[0]
            assert rules.apply(s, action) == one
        assert repr(s) == before and hash(s) == h and s == twin
        for t in (reached, one):
            copy = pickle.loads(pickle.dumps(t))
            assert copy == t and hash(copy) == hash(t) and repr(copy) == repr(t)

    assert _play(rules, seed=4, games=4, check=check) > 0


def _deal_state(rules, play: np.random.Generator):
    """A state at a deal, from a random game."""
    s = rules.initial_state()
    while not (s.stage == DEAL and not s.effects):
        if rules.current_player(s) == CHANCE:
            s = rules.apply(s, rules.sample_chance(s, play))
        else:
            legal = rules.legal_actions(s)
            s = rules.apply(s, legal[int(play.integers(len(legal)))])
    return s


@pytest.mark.parametrize(
    ("deck", "discard", "to_deal"),
    [
        ((1, 1, 0, 0, 0, 0, 0, 0), (3, 1, 0, 1, 0, 0, 0, 1), 6),  # reshuffle mid-deal (2E-2)
        ((1, 0, 0, 0, 0, 0, 1, 0), (0,) * 8, 5),  # the deck runs out: dealing stops
        ((2, 0, 0, 0, 0, 0, 0, 0), (1,) * 8, 1),  # one card
        ((0,) * 7 + (1,), (2, 2, 0, 0, 0, 0, 0, 0), 2),  # exactly the deck
    ],
)
def test_a_deal_run_is_the_card_by_card_deal(deck, discard, to_deal):
    rules = load(EDITION, "duel")
    play = np.random.default_rng(8)
    for _ in range(5):
        s = evolve(
            _deal_state(rules, play),
            deck=deck,
            discard=discard,
            face_down=((0,) * 8, (0,) * 8),
            to_deal=to_deal,
        )
        fast_rng, slow_rng = _twins(int(play.integers(2**32)))
        fast_events: list = []
        slow_events: list = []
        fast = rules.sample_chance_run(s, fast_rng, fast_events)
        slow = RulesBase.sample_chance_run(rules, s, slow_rng, slow_events)
        assert fast == slow and repr(fast) == repr(slow) and hash(fast) == hash(slow)
        assert _events(fast_events) == _events(slow_events)
        assert fast_rng.bit_generator.state == slow_rng.bit_generator.state


def _settings(name: str, **settings):
    path = str(SCENARIO_DIR / f"{name}.toml")
    data = read_toml(path)
    data["rules"] = {**data.get("rules", {}), **settings}
    return rules_from_data(data, path)


@pytest.mark.parametrize(
    "settings",
    [{}, {"responses_per_power": 0}, {"retain_specials": True, "public_discards": True}],
    ids=["defaults", "no-response-step", "retain-public"],
)
def test_fast_decisions_equal_the_plain_transitions(settings):
    rules = _settings("duel", **settings)

    def check(s, action, seed):
        if action is None:
            return
        fast_rng, slow_rng = _twins(seed)
        fast_events: list = []
        fast = rules.apply_with_chance(s, action, fast_rng, fast_events, check=False)
        slow, slow_events = _generic(rules, s, action, slow_rng)
        assert fast == slow and repr(fast) == repr(slow)
        assert _events(fast_events) == _events(slow_events)
        assert fast_rng.bit_generator.state == slow_rng.bit_generator.state

    assert _play(rules, seed=6, games=4, check=check) > 0


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_a_set_up_run_is_the_draw_by_draw_set_up(scenario):
    # 2E-1.1: the set-up draws walk memoised nodes per psyker; the same draws, powers, events.
    rules = load(EDITION, scenario)
    for seed in range(12):
        s = rules.initial_state()
        fast_rng, slow_rng = _twins(seed)
        fast_events: list = []
        slow_events: list = []
        fast = rules.sample_chance_run(s, fast_rng, fast_events)
        slow = RulesBase.sample_chance_run(rules, s, slow_rng, slow_events)
        assert fast == slow and repr(fast) == repr(slow)
        assert _events(fast_events) == _events(slow_events)
        assert fast_rng.bit_generator.state == slow_rng.bit_generator.state


def test_the_shared_initial_state_is_never_changed():
    # initial_state() returns one state object: no fast walk may build on it in place.
    rules = load(EDITION, "duel")
    before = repr(rules.initial_state())
    rng = np.random.default_rng(3)
    for _ in range(20):
        s = rules.sample_chance_run(rules.initial_state(), rng, [])
        while (p := rules.current_player(s)) != TERMINAL:
            if p == CHANCE:
                s = rules.sample_chance_run(s, rng, [])
                continue
            legal = rules.legal_actions(s)
            s = rules.apply_with_chance(s, legal[int(rng.integers(len(legal)))], rng, [])
    assert repr(rules.initial_state()) == before == repr(load(EDITION, "duel").initial_state())


def test_memoised_observations_equal_freshly_built_ones():
    # The observation's memos (units, psykers, pending) key on everything their blocks show:
    # a rules object that has seen many games observes as one that has seen none.
    warm = load(EDITION, "duel")
    states = []
    rng = np.random.default_rng(9)
    for _ in range(30):
        s = warm.sample_chance_run(warm.initial_state(), rng, [])
        while (p := warm.current_player(s)) != TERMINAL:
            states.append(s)
            for player in (0, 1):
                warm.observe(s, player)
            if p == CHANCE:
                s = warm.sample_chance_run(s, rng, [])
                continue
            legal = warm.legal_actions(s)
            s = warm.apply_with_chance(s, legal[int(rng.integers(len(legal)))], rng, [])
    for s in states[::7]:
        for player in (0, 1):
            cold = load(EDITION, "duel")  # no memo filled yet
            assert np.array_equal(warm.observe(s, player), cold.observe(s, player))
