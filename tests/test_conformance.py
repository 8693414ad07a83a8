"""One conformance test for every registered edition x shipped scenario, plus the toy plug-in.

Each case checks, on a few games only (the duel scenarios are long): the rules invariants
(``psygym.conformance.check_rules``), Gymnasium's ``check_env`` on
``gym.make(edition.env_id, ...)``, that the same seed gives the same trajectory, PettingZoo's
``api_test`` on the AEC env, and that sampled chance (``rules.sample_chance``, the fast path the
envs use) draws from the exact ``chance_outcomes`` (DESIGN: chance is an explicit node; a fast
sampling path must be shown to draw from the same distribution).
"""

from __future__ import annotations

import math
import pickle
from collections import Counter

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from helpers import exact_outcomes
from pettingzoo.test import api_test
from psygym_agents.base import RandomPolicy
from toy_edition import EDITION as TOY

import psygym
from psygym.conformance import check_rules
from psygym.core import CHANCE, TERMINAL, play_game
from psygym.edition import editions
from psygym.envs import aec

CASES = [(e.id, s) for e in editions() for s in e.scenario_names()]
CASES += [(TOY.id, s) for s in TOY.scenario_names()]

SAMPLES = 20_000
"""Draws per chance node: the sd of a frequency is at most 0.0035, so the 5-sd bound below is at
most 0.018, while moving an outcome by one pip (4+ vs 5+, a face relabelled) moves at least one
listed probability by 1/36 = 0.028 or draws an outcome that is not listed at all."""
NODES = 3
"""Distinct chance nodes (with more than one outcome) sampled per case."""


@pytest.fixture
def edition(request):
    """The case's edition, registering the toy for its cases."""
    edition_id, _ = request.param
    if edition_id == TOY.id:
        return request.getfixturevalue("toy_edition")
    return psygym.edition.get(edition_id)


def _cases():
    return pytest.mark.parametrize(
        ("edition", "scenario"),
        [pytest.param(c, c[1], id=f"{c[0]}-{c[1]}") for c in CASES],
        indirect=["edition"],
    )


def _random_rollout(env, seed: int, steps: int) -> list:
    """Observations, rewards, flags, masks and events of ``steps`` random legal steps."""
    rng = np.random.default_rng(seed)
    obs, info = env.reset(seed=seed)
    out = [(obs.tolist(), info["action_mask"].tolist(), info["score"])]
    for _ in range(steps):
        legal = np.flatnonzero(info["action_mask"])
        obs, reward, terminated, truncated, info = env.step(int(rng.choice(legal)))
        out.append((obs.tolist(), reward, terminated, truncated, info["action_mask"].tolist()))
        out.append([(e.kind, e.text) for e in info["events"]])
        if terminated or truncated:
            obs, info = env.reset()
            out.append((obs.tolist(), info["action_mask"].tolist()))
    return out


@_cases()
def test_rules_invariants(edition, scenario):
    rules = psygym.load(edition.id, scenario)
    report = check_rules(rules, games=3, seed=1)
    assert report.games == 3 and report.decision_nodes > 0


@_cases()
def test_gymnasium_check_env(edition, scenario):
    env = gym.make(edition.env_id, scenario=scenario, opponent="random")
    check_env(env.unwrapped, skip_render_check=True)


@_cases()
def test_same_seed_same_trajectory(edition, scenario):
    runs = [
        _random_rollout(gym.make(edition.env_id, scenario=scenario, opponent="random"), 7, 60)
        for _ in range(2)
    ]
    assert runs[0] == runs[1]
    other = _random_rollout(gym.make(edition.env_id, scenario=scenario, opponent="random"), 8, 60)
    assert other != runs[0]  # the seed matters


@_cases()
def test_rules_pickle_after_play(edition, scenario):
    """Worker pools send the rules to their processes: a rules object that has played (its caches
    filled) pickles, and the copy plays the same game (a pickling error hangs a pool)."""
    rules = psygym.load(edition.id, scenario)
    seen = []
    play_game(rules, [RandomPolicy()] * rules.num_players, np.random.default_rng(3),
              on_step=lambda s, a, ev: seen.append((rules.observe(s, 0).tolist(), a)))  # fmt: skip
    twin = pickle.loads(pickle.dumps(rules))
    again = []
    play_game(twin, [RandomPolicy()] * twin.num_players, np.random.default_rng(3),
              on_step=lambda s, a, ev: again.append((twin.observe(s, 0).tolist(), a)))  # fmt: skip
    assert again == seen and seen


@_cases()
def test_pettingzoo_api(edition, scenario):
    api_test(aec.env(edition.id, scenario), num_cycles=30, verbose_progress=False)


@_cases()
def test_sampled_chance_matches_exact_outcomes(edition, scenario):
    rules = psygym.load(edition.id, scenario)
    nodes = _chance_nodes(rules, NODES)
    assert nodes, "no chance node with more than one outcome found"
    for state in nodes:
        exact = exact_outcomes(rules, state)
        assert math.isclose(float(sum(exact.values())), 1.0, abs_tol=1e-12)
        rng = np.random.default_rng(2024)
        counts = Counter(rules.sample_chance(state, rng) for _ in range(SAMPLES))
        assert set(counts) <= set(exact), f"sampled outcomes not listed: {set(counts) - set(exact)}"
        for outcome, p in exact.items():
            p = float(p)
            bound = 5 * math.sqrt(p * (1 - p) / SAMPLES) + 1e-4
            freq = counts[outcome] / SAMPLES
            assert abs(freq - p) <= bound, (outcome, freq, p)


def _chance_nodes(rules, wanted: int, games: int = 20) -> list:
    """Up to ``wanted`` distinct chance nodes with several outcomes, from seeded random games."""
    rng = np.random.default_rng(0)
    found: dict = {}
    for _ in range(games):
        s = rules.initial_state()
        while len(found) < wanted:
            player = rules.current_player(s)
            if player == TERMINAL:
                break
            if player == CHANCE:
                if len(rules.chance_outcomes(s)) > 1:
                    found.setdefault(s, None)
                a = rules.sample_chance(s, rng)
            else:
                legal = rules.legal_actions(s)
                a = legal[rng.integers(len(legal))]
            s = rules.apply(s, a)
        if len(found) >= wanted:
            break
    return list(found)
