"""The PettingZoo AEC env over every installed edition: api_test, masks, rewards, seeding."""

from __future__ import annotations

import numpy as np
import pytest
from pettingzoo.test import api_test

from psygym.editions import available
from psygym.envs.aec import PsychicAECEnv, env, raw_env


def _ready(edition: str) -> bool:
    return edition in available()


CASES = [(e, "default") for e in available()] + [("7th", "single-phase")]


@pytest.mark.parametrize(("edition", "scenario"), CASES)
def test_pettingzoo_api_test(edition, scenario):
    if not _ready(edition):
        pytest.skip(f"edition {edition} is not complete yet")
    api_test(env(edition, scenario), num_cycles=200)


def _play(e: PsychicAECEnv, seed: int, pick_seed: int) -> list:
    e.reset(seed=seed)
    rng = np.random.default_rng(pick_seed)
    trace, totals = [], {a: 0.0 for a in e.possible_agents}
    for agent in e.agent_iter(10_000):
        obs, reward, term, trunc, _ = e.last()
        totals[agent] += reward
        if term or trunc:
            e.step(None)
            continue
        mask = obs["action_mask"]
        other = e.possible_agents[1 - e.player(agent)]
        assert not e.observe(other)["action_mask"].any()  # zeros for the agent not on move
        assert np.array_equal(mask.astype(bool), e.rules.legal_mask(e.state))
        action = int(rng.choice(np.flatnonzero(mask)))
        trace.append((agent, action))
        e.step(action)
    trace.append(tuple(totals.values()))
    return trace


@pytest.mark.parametrize("edition", available())
def test_masks_rewards_and_seeding(edition):
    if not _ready(edition):
        pytest.skip(f"edition {edition} is not complete yet")
    e = raw_env(edition)
    for seed in range(3):
        first = _play(e, seed, seed)
        final = e.rules.returns(e.state)
        totals = first[-1]
        # each agent's rewards add up to its final score; the game is zero-sum
        assert totals == pytest.approx(final)
        assert sum(totals) == pytest.approx(0.0)
        assert _play(e, seed, seed) == first  # same seed, same trajectory


def test_illegal_action_raises_and_names_legal_ones():
    from psygym.core import IllegalActionError

    e = raw_env("7th", "single-phase")
    e.reset(seed=0)
    mask = e.observe(e.agent_selection)["action_mask"]
    illegal = int(np.flatnonzero(mask == 0)[0])
    with pytest.raises(IllegalActionError, match="legal actions"):
        e.step(illegal)


def test_render_ansi():
    e = raw_env("7th", "duel", render_mode="ansi")
    e.reset(seed=0)
    text = e.render()
    assert "Librarian" in text and "Farseer" in text
