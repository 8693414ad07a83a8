"""2nd edition through the generic env and random play: check_env, seeding, card conservation."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
from gymnasium.utils.env_checker import check_env
from psygym_agents.base import RandomPolicy

import psygym  # noqa: F401  (registers psygym/Second-v0)
from psygym import CHANCE, load
from psygym.core import play_game
from psygym.editions.second.actions import PASS
from psygym.editions.second.state import DEAL, RESPONSE, TURN


def _env(**kwargs):
    return gym.make("psygym/Second-v0", **kwargs).unwrapped


def test_check_env_passes():
    for scenario in ("duel", "librarian-vs-farseer"):
        check_env(_env(scenario=scenario, opponent="cast-biggest"), skip_render_check=True)
    env = _env(render_mode="ansi")
    env.reset(seed=1)
    text = env.render()
    assert "Hand of Space Marines:" in text and "Hand of Eldar:" in text


def test_registered_env_uses_the_edition_and_its_default_scenario():
    env = gym.make("psygym/Second-v0").unwrapped
    assert env.rules.edition == "2nd" and env.rules.scenario.name == "duel"
    assert env.observation_space.shape == (env.rules.observation_size,)
    assert env.action_space.n == env.rules.num_actions


def _rollout(seed: int, seat: int = 0):
    env = gym.make("psygym/Second-v0", opponent="hoard-nullify", seat=seat).unwrapped
    obs, info = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    trace = [obs.copy()]
    total, done = 0.0, False
    while not done:
        legal = np.flatnonzero(info["action_mask"])
        assert np.array_equal(env.action_masks(), info["action_mask"])
        action = int(rng.choice(legal))
        obs, reward, done, truncated, info = env.step(action)
        assert not truncated
        assert np.array_equal(obs, env.rules.observe(env.state, seat))
        trace.append((action, reward, obs.copy()))
        total += reward
    assert abs(total - env.rules.returns(env.state)[seat]) < 1e-9
    return trace


def test_same_seed_same_trajectory():
    for seat in (0, 1):
        a, b = _rollout(11, seat), _rollout(11, seat)
        assert len(a) == len(b)
        for x, y in zip(a[1:], b[1:]):
            assert x[0] == y[0] and x[1] == y[1] and np.array_equal(x[2], y[2])
        assert np.array_equal(a[0], b[0])
    signature = [(x[0], x[1]) for x in a[1:]]
    assert signature != [(x[0], x[1]) for x in _rollout(12, 1)[1:]]


def test_same_seed_same_game_with_play_game():
    rules = load("2nd")
    players = [RandomPolicy(), RandomPolicy()]
    a = play_game(rules, players, np.random.default_rng(5))
    b = play_game(rules, players, np.random.default_rng(5))
    assert a == b


def test_one_thousand_random_games_without_error():
    rules = load("2nd")
    rng = np.random.default_rng(2024)
    players = [RandomPolicy(), RandomPolicy()]
    steps = [0]

    def tick(*_):
        steps[0] += 1

    lengths = []
    for _ in range(1000):
        before = steps[0]
        end = play_game(rules, players, rng, on_step=tick)
        assert rules.is_terminal(end)
        assert rules.returns(end)[0] == -rules.returns(end)[1]
        lengths.append(steps[0] - before)
    assert min(lengths) > 10


def test_cards_are_conserved_at_every_step_of_random_games():
    for name in ("duel", "librarian-vs-farseer"):
        rules = load("2nd", name)
        rng = np.random.default_rng(99)
        players = [RandomPolicy(), RandomPolicy()]
        seen = {"reshuffle": 0, "energy_drain": 0, "deny_attempt": 0}

        def check(state, action, events, rules=rules, seen=seen):
            for s in (state, rules.apply(state, action, check=False)):
                piles = [s.deck, s.discard, *s.hands, s.paid]
                assert all(min(p) >= 0 for p in piles), s
                # deck + discard pile + hands + cards in play (paid for the pending power) = 36
                assert rules.card_total(s) == 36, s
                assert tuple(map(sum, zip(*piles))) == rules.deck_counts, s
            for e in events:
                if e.kind in seen:
                    seen[e.kind] += 1

        for _ in range(200 if name == "duel" else 100):
            play_game(rules, players, rng, on_step=check)
        assert all(seen.values()), seen  # the games went through reshuffles, drains, responses


def test_forced_decisions_only_where_the_hand_is_hidden_and_deals_have_exact_laws():
    # Before, every decision with PASS as its only action was skipped. That skip depended on the
    # hidden hand and told the other player about it, so now (hidden hands, 2E-5.2) such a
    # decision is asked at every response step and at every turn with cards in hand; only a turn
    # with an empty hand (legal actions known from the public table) is passed by itself.
    rules = load("2nd")
    rng = np.random.default_rng(3)
    forced = {RESPONSE: 0, TURN: 0}
    for _ in range(3):
        s = rules.initial_state()
        while not rules.is_terminal(s):
            if rules.current_player(s) == CHANCE:
                outcomes = rules.chance_outcomes(s)
                if s.stage == DEAL and not s.effects:  # count / deck size
                    n = sum(s.deck)
                    assert outcomes == [(c, k / n) for c, k in enumerate(s.deck) if k]
                a = rules.sample_chance(s, rng)
            else:
                legal = rules.legal_actions(s)
                if legal == [PASS]:
                    assert s.stage == RESPONSE or sum(s.hands[s.to_move]) > 0, s
                    forced[s.stage] += 1
                a = int(rng.choice(legal))
            s = rules.apply(s, a)
    assert forced[RESPONSE] > 0 and forced[TURN] > 0, forced
