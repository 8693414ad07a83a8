"""Rogue Trader: Gymnasium env, random games, determinism, heuristics and odds tables."""

from __future__ import annotations

from fractions import Fraction

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from psygym_agents.base import RandomPolicy
from psygym_agents.rogue_trader.heuristics import HEURISTICS

import psygym  # noqa: F401  (registers the env ids)
from psygym.core import play_game
from psygym.edition import get
from psygym.editions import load
from psygym.editions.rogue_trader.actions import ABILITY_BASE, REST
from psygym.editions.rogue_trader.state import Phase
from psygym.kernel import evolve
from psygym.policies import resolve_policy


@pytest.mark.parametrize("scenario", ["duel", "psyker-vs-squad"])
@pytest.mark.parametrize("seat", [0, 1])
def test_check_env(scenario, seat):
    env = gym.make("psygym/RogueTrader-v0", scenario=scenario, seat=seat, opponent="spend-freely")
    check_env(env.unwrapped)


def _trajectory(seed: int, opponent: str = "random") -> list:
    env = gym.make("psygym/RogueTrader-v0", opponent=opponent)
    obs, info = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    out = [obs.tolist()]
    done = False
    while not done:
        legal = np.flatnonzero(info["action_mask"])
        obs, reward, done, _, info = env.step(int(rng.choice(legal)))
        out.append((obs.tolist(), reward, [e.text for e in info["events"]]))
    return out


def test_same_seed_same_trajectory():
    assert _trajectory(7) == _trajectory(7)
    assert _trajectory(7, "bid-all") == _trajectory(7, "bid-all")
    assert _trajectory(7) != _trajectory(8)


def test_env_observation_hides_the_pending_bid():
    rules = load("rt", "duel")
    env = gym.make("psygym/RogueTrader-v0", seat=1, opponent="bid-all").unwrapped
    rng = np.random.default_rng(0)
    seen = 0
    for seed in range(30):
        obs, info = env.reset(seed=seed)
        done = False
        while not done:
            s = env.state
            if s.phase == Phase.SAVE_BID:
                seen += 1
                assert s.attack_bid > 0  # bid-all bid something, and the agent cannot see it
                np.testing.assert_array_equal(obs, rules.observe(evolve(s, attack_bid=0), 1))
                assert obs[4] == 1.0  # "save bid" is the decision asked
                assert "secret" in rules.render(s, 1)
            legal = np.flatnonzero(info["action_mask"])
            obs, _, done, _, info = env.step(int(rng.choice(legal)))
    assert seen > 5


def test_a_thousand_random_games():
    rules = load("rt", "duel")
    rng = np.random.default_rng(2024)
    policies = [RandomPolicy(), RandomPolicy()]
    scores = []
    for _ in range(1000):
        end = play_game(rules, policies, rng)
        assert rules.is_terminal(end)
        scores.append(rules.returns(end)[0])
    assert -3 <= min(scores) and max(scores) <= 2  # the Warlock has 2 wounds, the Librarian 3
    squad = load("rt", "psyker-vs-squad")
    for _ in range(200):
        assert squad.is_terminal(play_game(squad, policies, rng))


def test_heuristic_names():
    assert set(HEURISTICS) == {
        "spend-freely",
        "conserve",
        "rest-when-low",
        "biggest-attack",
        "bid-none",
        "bid-half",
        "bid-all",
    }
    rules = load("rt", "duel")
    for name in HEURISTICS:
        assert resolve_policy(name, rules).name == name


@pytest.mark.parametrize("scenario", ["duel", "psyker-vs-squad"])
def test_heuristics_play_legal_games(scenario):
    rules = load("rt", scenario)
    rng = np.random.default_rng(5)
    names = list(HEURISTICS)
    for i, a in enumerate(names):
        b = names[(i + 3) % len(names)]
        policies = [resolve_policy(a, rules), resolve_policy(b, rules)]

        def check(state, action, events, policies=policies):
            player = rules.current_player(state)
            if player >= 0:
                assert action in rules.legal_actions(state)

        for _ in range(15):
            play_game(rules, policies, rng, on_step=check)


def _save_bid_state(rules, k: int):
    s = rules.apply(rules.initial_state(), ABILITY_BASE + rules.data.index["Mental Bolt"])
    return rules.apply(s, rules.number_base + k)


def test_bid_heuristics():
    rules = load("rt", "duel")
    s = rules.apply(rules.initial_state(), ABILITY_BASE + rules.data.index["Mental Bolt"])
    nb = rules.number_base
    picks = {
        n: HEURISTICS[n](rules).choose(rules, s, 0) - nb
        for n in ("bid-none", "bid-half", "bid-all")
    }
    assert picks == {"bid-none": 0, "bid-half": 4, "bid-all": 8}  # 8 points left, no cap
    for name, policy in ((n, f(rules)) for n, f in HEURISTICS.items()):
        answers = {policy.choose(rules, _save_bid_state(rules, k), 1) for k in range(9)}
        assert len(answers) == 1, f"{name} reacts to the secret bid"
    assert HEURISTICS["bid-all"](rules).choose(rules, _save_bid_state(rules, 0), 1) == nb + 12


def test_casting_heuristics():
    rules = load("rt", "duel")
    s = rules.initial_state()
    blow, bolt = (ABILITY_BASE + rules.data.index[n] for n in ("Mental Blow", "Mental Bolt"))
    aura = ABILITY_BASE + rules.data.index["Aura of Protection"]
    assert HEURISTICS["biggest-attack"](rules).choose(rules, s, 0) == bolt
    # the Warlock knows a telekinesis missile: the aura is worth more than a likely-saved bolt
    assert HEURISTICS["spend-freely"](rules).choose(rules, s, 0) == aura
    shielded = evolve(s, units=(evolve(s.units[0], aura=2), s.units[1]))
    assert HEURISTICS["spend-freely"](rules).choose(rules, shielded, 0) == bolt
    rich = evolve(s, units=(evolve(s.units[0], points=16, aura=2), s.units[1]))
    assert HEURISTICS["conserve"](rules).choose(rules, rich, 0) == bolt  # 16 - 4 stays >= 12
    richer = evolve(rich, units=(evolve(rich.units[0], points=15), s.units[1]))
    assert HEURISTICS["conserve"](rules).choose(rules, richer, 0) == blow  # 15 - 1 >= 12
    low = evolve(s, units=(evolve(s.units[0], points=5, aura=2), s.units[1]))
    assert HEURISTICS["rest-when-low"](rules).choose(rules, low, 0) == REST
    assert HEURISTICS["conserve"](rules).choose(rules, low, 0) == REST  # never takes a test
    assert HEURISTICS["spend-freely"](rules).choose(rules, low, 0) != REST
    # conserve bids only points above 12
    att = rules.apply(evolve(s, units=(evolve(s.units[0], points=14), s.units[1])), bolt)
    assert HEURISTICS["conserve"](rules).choose(rules, att, 0) == rules.number_base + 0


def tables(**options):
    """Rogue Trader's odds tables, each as ``psygym odds --table`` prints it."""
    rt = get("rt")
    return [rt.odds_table(name, **options) for name in rt.odds]


def test_odds_tables():
    works, save, attacks = tables(unknown_option=True)
    assert works.columns == ["points", "works"]
    got = {r[0]: r[1] for r in works.rows}
    assert got[1] == 0 and got[7] == Fraction(21, 36) and got[11] == Fraction(35, 36)
    assert all(got[r] == 1 for r in range(12, 21)) and len(got) == 20
    assert save.columns[0] == "will_power" and "net +0" in save.columns
    row7 = dict(zip(save.columns, next(r for r in save.rows if r[0] == 7)))
    assert row7["net +0"] == Fraction(21, 36) and row7["net -2"] == Fraction(10, 36)
    assert row7["net +4"] == Fraction(35, 36)
    # no bid cap (RT-3.2, RT-3.3): nets -10..+10, the whole range where a save can change
    assert save.columns[1] == "net -10" and save.columns[-1] == "net +10"
    row12 = dict(zip(save.columns, next(r for r in save.rows if r[0] == 12)))
    assert row12["net -10"] == Fraction(1, 36)
    assert [r[1] for r in save.rows] == [0] * 10 + [Fraction(1, 36)]  # only WP 12 saves (a 2)
    assert all(r[-1] == 1 for r in save.rows)  # net +10: every save is certain
    _, narrow, _ = tables(max_bid=2)
    assert narrow.columns[1:] == ["net -2", "net -1", "net +0", "net +1", "net +2"]
    assert [r[0] for r in save.rows] == list(range(2, 13))
    blast = next(r for r in attacks.rows if r[0] == "Mental Blast")
    assert blast[1] == 8 and blast[3] == Fraction(5, 6)


def test_observation_kinds_and_layout():
    rules = load("rt", "psyker-vs-squad")
    s = rules.initial_state()
    assert rules.observation_size == 10 + 40 + 2 * 3 + 2 + 3 * (16 + 40)
    assert rules.observe(s, 0)[:6].tolist() == [1, 0, 0, 0, 0, 0]  # choose ability / rest
    assert rules.observe(s, 0)[6:8].tolist() == [1, 1]
    assert rules.observe(s, 1)[6:8].tolist() == [0, 0]
    s = rules.apply(s, ABILITY_BASE + rules.data.index["Mental Bolt"])
    assert s.phase == Phase.TARGET  # the Boyz or the Weirdboy
    obs = rules.observe(s, 0)
    assert obs[:6].tolist() == [0, 1, 0, 0, 0, 0]
    assert obs[10 + rules.data.index["Mental Bolt"]] == 1.0
    s = rules.apply(s, rules.target_base + 2)
    assert rules.observe(s, 0)[:6].tolist() == [0, 0, 0, 1, 0, 0]  # attack bid
    s = rules.apply(s, rules.number_base + 2)
    assert rules.observe(s, 1)[:6].tolist() == [0, 0, 0, 0, 1, 0]  # save bid
    # the attacker sees its own bid, 2 of the largest possible 30 (the Inquisitor's psi-level)
    assert rules.observe(s, 0)[10 + 40 + 6] == pytest.approx(2 / 30)
    assert rules.observe(s, 1)[10 + 40 + 6] == 0.0


def test_render_and_describe_along_games():
    rules = load("rt", "psyker-vs-squad")
    rng = np.random.default_rng(9)

    def check(state, action, events):
        for p in (None, 0, 1):
            assert rules.render(state, p)
        assert str(rules.describe(state, action))
        assert all(e.text for e in events)

    for _ in range(20):
        end = play_game(rules, [RandomPolicy(), RandomPolicy()], rng, on_step=check)
        assert "Game over" in rules.render(end, 0)
