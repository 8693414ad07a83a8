"""Edges of the game API and of the agents that a bug hunt found, one section per defect.

- 2nd edition's ``search`` (the information-set search and the determinised phase search)
  drew from one generator for the whole life of the object, so a game's moves depended on the
  games played before it: ``evaluate`` gave other numbers with ``--workers 2``.
- ``describe`` raised ``IndexError`` (7th, Rogue Trader) or named the wrong action (Rogue
  Trader's ``-1``, 2nd's "plays action -1" at a response) for ids that are not actions; 8th
  answered "not an action".
- ``observe`` took players other than 0 and 1 (Rogue Trader returned a vector for 2 and -1).
- ``GameInfo``'s utilities are player 0's bounds (Rogue Trader's duel declares -3 to 2, and
  player 1 can score 3), which the docstring called any player's.
- A missing model's message named a stem and a folder as agents, forms that load only after
  ``sb3:``.
"""

from __future__ import annotations

import shutil

import numpy as np
import pytest
from cli_helpers import ok
from helpers import RestartCounter
from psygym_agents.sb3 import PRETRAINED_DIR

from psygym.core import CHANCE, TERMINAL, GameInfo, play_game, restart_policies
from psygym.editions import load
from psygym.policies import UnknownAgentError, resolve_policy

EDITIONS = ("7th", "8th", "2nd", "rt")


def _walk(rules, games: int, seed: int = 0):
    """Every state along ``games`` games of uniformly random play (chance drawn too)."""
    rng = np.random.default_rng(seed)
    for _ in range(games):
        s = rules.initial_state()
        while rules.current_player(s) != TERMINAL:
            yield s
            if rules.current_player(s) == CHANCE:
                outcomes = rules.chance_outcomes(s)
                a = outcomes[int(rng.integers(len(outcomes)))][0]
            else:
                a = int(rng.choice(rules.legal_actions(s)))
            s = rules.apply(s, a)
        yield s


# ----------------------------------------------------------------------------- 1. search


def _moves(scenario: str, agent: str, games) -> dict[int, list[int]]:
    """Every transition of games ``games`` of ``agent`` against cast-biggest, seats alternating.

    One pair of policy objects plays all of them, in order, through ``play_game``.
    """
    rules = load("2nd", scenario)
    search, other = resolve_policy(agent, rules), resolve_policy("cast-biggest", rules)
    out = {}
    for g in games:
        out[g] = moves = []
        players = [search, other] if g % 2 == 0 else [other, search]
        play_game(rules, players, np.random.default_rng(g),
                  on_step=lambda s, a, e, m=moves: m.append(a))  # fmt: skip
    return out


@pytest.mark.parametrize(
    ("scenario", "agent"),
    [
        ("duel", "search:iterations=5"),  # the information-set search
        ("random:2", "search:iterations=5;determinisations=2"),  # deals searched exactly
    ],
)
def test_a_2nd_search_game_after_other_games_plays_as_alone(scenario, agent):
    after = _moves(scenario, agent, range(3))
    for g in (1, 2):
        assert after[g] == _moves(scenario, agent, [g])[g], g


def test_2nd_search_restarts_what_it_wraps():
    rules = load("2nd", "random:2")
    determinised = resolve_policy("search:determinisations=2", rules)
    plain = resolve_policy("search:determinisations=0", rules)
    for search in (determinised.fallback, plain):
        search.rollout = RestartCounter()
    restart_policies([determinised, plain])
    assert determinised.fallback.rollout.restarts == 1 and plain.rollout.restarts == 1


@pytest.mark.parametrize(
    ("scenario", "agent"),
    [
        ("smite-skirmish", "search:iterations=5;determinisations=0"),
        ("librarian-vs-farseer", "search:iterations=5;determinisations=1"),
    ],
)
def test_evaluate_gives_the_same_numbers_with_two_workers(tmp_path, scenario, agent):
    outputs = []
    for workers in (1, 2):
        runs = tmp_path / f"w{workers}"
        csv = ok("evaluate", "--edition", "2nd", "--scenario", scenario, "--agents",
                 f"{agent},cast-biggest", "--episodes", 6, "--workers", workers,
                 "--runs-dir", runs, "--format", "csv")  # fmt: skip
        (run,) = runs.iterdir()
        outputs.append((csv, (run / "results.json").read_text(), (run / "results.csv").read_text()))
    assert outputs[0] == outputs[1]


# ----------------------------------------------------------------------------- 2. describe


@pytest.mark.parametrize("edition", ["7th", "2nd", "rt"])  # 8th did already
@pytest.mark.parametrize("scenario", ["duel", "random:3"])
def test_describe_names_no_action_for_an_id_outside_the_space(edition, scenario):
    rules = load(edition, scenario)
    decisions = 0
    for s in _walk(rules, 2):
        player = rules.current_player(s)
        if player == TERMINAL:
            continue
        if player == CHANCE:
            for o in (-1, 10**6):
                str(rules.describe(s, o))  # an impossible outcome: a label, never an error
            continue
        decisions += 1
        for a in (-1, -7, rules.num_actions, rules.num_actions + 3, 10**6):
            assert "not an action" in str(rules.describe(s, a)), (a, rules.describe(s, a))
        legal = rules.legal_actions(s)
        for a in range(rules.num_actions):  # illegal ids too: a label (what it would be)
            label = str(rules.describe(s, a))
            assert label and ("not an action" not in label or a not in legal)
    assert decisions >= 5


# ----------------------------------------------------------------------------- 3. observe


@pytest.mark.parametrize("edition", EDITIONS)
def test_observe_refuses_a_player_that_is_not_a_seat(edition):
    rules = load(edition, "duel")
    s = rules.initial_state()
    for player in (2, -1, 5, None, 0.5, "0"):
        with pytest.raises(ValueError, match="player must be 0 or 1") as info:
            rules.observe(s, player)
        assert "\n" not in str(info.value)
    for player in (0, 1, np.int64(1)):
        assert rules.observe(s, player).shape == (rules.observation_size,)
    assert np.array_equal(rules.observe(s, np.int64(1)), rules.observe(s, 1))


# ----------------------------------------------------------------------------- 4. game_info


def test_utilities_are_documented_as_player_0s_bounds():
    doc = " ".join(GameInfo.__doc__.split())
    assert "lowest score player 0 can end with" in doc
    assert "player 1's lie in ``[-max_utility, -min_utility]``" in doc
    info = load("rt", "duel").game_info()  # asymmetric: player 1 can score 3
    assert (info.min_utility, info.max_utility) == (-3.0, 2.0)


@pytest.mark.parametrize("edition", EDITIONS)
@pytest.mark.parametrize("scenario", ["duel", "random:3"])
def test_every_player_ends_within_the_documented_bounds(edition, scenario):
    rules = load(edition, scenario)
    info = rules.game_info()
    assert "player 0" in GameInfo.__doc__  # the bounds below are what it documents
    bounds = [(info.min_utility, info.max_utility), (-info.max_utility, -info.min_utility)]
    for s in _walk(rules, 4, seed=1):
        if rules.current_player(s) == TERMINAL:
            for (lo, hi), score in zip(bounds, rules.returns(s)):
                assert lo <= score <= hi, (score, lo, hi)


# ----------------------------------------------------------------------------- 5. model paths


def test_a_missing_model_names_only_forms_that_load(tmp_path):
    rules = load("7th", "duel")
    (tmp_path / "run").mkdir()
    for dest in (tmp_path / "m", tmp_path / "run" / "model"):
        for suffix in (".safetensors", ".json"):
            shutil.copy(PRETRAINED_DIR / f"7th-duel-seat0{suffix}", f"{dest}{suffix}")
    with pytest.raises(FileNotFoundError) as info:
        resolve_policy(str(tmp_path / "missing.safetensors"), rules)
    message = str(info.value)
    assert "\n" not in message
    assert ".safetensors file" in message and "after sb3:, its stem or its run folder" in message
    # Each form it names loads: the file as it is, the stem and the run folder after "sb3:".
    s = next(s for s in _walk(rules, 1) if rules.current_player(s) == 0)
    for spec in (
        f"{tmp_path / 'm'}.safetensors",
        f"sb3:{tmp_path / 'm'}",
        f"sb3:{tmp_path / 'run'}",
    ):
        assert resolve_policy(spec, rules).action_probabilities(rules, s, 0)
    with pytest.raises(UnknownAgentError):  # a bare stem is no agent, as the message says
        resolve_policy(str(tmp_path / "m"), rules)


def test_rogue_trader_board_says_what_a_decision_asks_in_words():
    # It showed the observation's kind names: "Player 0 decides: choose." / "attack_bid."
    rules = load("rt", "duel")
    s, rng, asked = rules.initial_state(), np.random.default_rng(0), set()
    while rules.current_player(s) != TERMINAL and len(asked) < 3:
        player = rules.current_player(s)
        if player == CHANCE:
            s = rules.apply(s, rules.sample_chance(s, rng))
            continue
        last = rules.render(s).splitlines()[-1]
        if "decides:" in last:
            asked.add(last)
            assert last.startswith(f"{rules.facts.side_names[player]} (player {player})"), last
            assert "choose" not in last and "_bid" not in last, last
        s = rules.apply(s, rules.legal_actions(s)[-1])
    assert any("secret bid to enhance the attack" in a for a in asked), asked
