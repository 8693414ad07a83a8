"""The ``search`` agent: exact where it can be, the horizon leaf, legal play, ``optimal``'s line.

- On every ``single-phase`` scenario (found through the edition registry) ``search``'s action
  values equal a fresh exact solver's at every decision of sampled games; so do the values of
  a search over one cast with the exact remaining value as its board value (the horizon leaf
  machinery is then exact too). ``SEARCH_GAMES`` games per scenario (the environment variable
  ``PSYGYM_SEARCH_GAMES`` raises it: 200 were run once for the issue).
- ``Solver(within=h, leaf=f)`` calls ``f`` on exactly the states one transition past the
  states of horizon ``h``, and its value is the expectimax backup of ``f`` computed here by hand.
- ``search`` plays legal moves on every edition's default scenario (the duels).
- Plain ``optimal`` on a duel says so in one plain line, once, naming search.
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path

import numpy as np
import pytest
from psygym_agents.solvers.expectiminimax import Solver
from psygym_agents.solvers.policy import _ANNOUNCED, make_optimal
from psygym_agents.solvers.search import LookaheadPolicy, make_search

from psygym.core import CHANCE, TERMINAL
from psygym.edition import editions
from psygym.editions import load
from psygym.policies import reference_policy, resolve_policy

SEARCH_GAMES = int(os.environ.get("PSYGYM_SEARCH_GAMES", "10"))
"""Sampled games per single-phase scenario."""

SINGLE_PHASE = [
    (ed.id, "single-phase")
    for ed in editions()
    if not ed.hidden_information and "single-phase" in ed.scenario_names()
]
DUELS = [(ed.id, ed.default_scenario) for ed in editions()]


def test_there_are_single_phase_scenarios_to_check():
    assert {"7th", "8th"} <= {e for e, _ in SINGLE_PHASE}


class _ExactRest:
    """A perfect board value: the exact score player 0 still gains (solver value - score)."""

    meta: dict = {}

    def __init__(self, rules):
        self.solver = Solver(rules)

    def __call__(self, rules, state):
        return self.solver.value(state) - rules.returns(state)[0]


def _decisions(rules, games: int, seed: int = 0):
    """Every decision node (more than one legal action) of ``games`` random games."""
    rng = np.random.default_rng(seed)
    for _ in range(games):
        s = rules.initial_state()
        while rules.current_player(s) != TERMINAL:
            if rules.current_player(s) == CHANCE:
                s = rules.apply(s, rules.sample_chance(s, rng))
                continue
            legal = rules.legal_actions(s)
            if len(legal) > 1:
                yield s
            s = rules.apply(s, legal[int(rng.integers(len(legal)))])


@pytest.mark.parametrize("edition,scenario", SINGLE_PHASE)
def test_search_values_equal_the_exact_solver_on_single_phase(edition, scenario):
    rules = load(edition, scenario)
    search = resolve_policy("search", rules)
    assert search.exact and "exact" in search.note
    oracle = LookaheadPolicy(rules, _ExactRest(rules), exact=False, phase=False)  # one cast
    two = LookaheadPolicy(rules, _ExactRest(rules), exact=False, steps=2, phase=False)
    exact = Solver(rules)  # fresh: shares nothing with the agent
    n = 0
    for s in _decisions(rules, SEARCH_GAMES):
        want = exact.action_values(s)
        assert search.action_values(rules, s) == pytest.approx(want, abs=1e-9)
        assert oracle.action_values(rules, s) == pytest.approx(want, abs=1e-9)
        if n % 5 == 0:
            assert two.action_values(rules, s) == pytest.approx(want, abs=1e-9)
        n += 1
    assert n >= SEARCH_GAMES  # every game had decisions


def _scripted_cast(rules):
    """A battle-round decision with a choice, reached by always taking the first option."""
    s = rules.initial_state()
    while rules.current_player(s) != TERMINAL:
        if rules.current_player(s) == CHANCE:
            s = rules.apply(s, rules.chance_outcomes(s)[0][0])
            continue
        legal = rules.legal_actions(s)
        if len(legal) > 1 and rules.horizon(s)[0] >= 1:
            return s
        s = rules.apply(s, legal[0])
    pytest.skip("no decision reached")


def _backup(rules, s, h, leaf, memo):
    """Expectimax over the states of horizon ``h``, ``leaf`` beyond them (by hand)."""
    if s in memo:
        return memo[s]
    player = rules.current_player(s)
    if player == CHANCE:
        children = rules.chance_outcomes(s)
    else:
        children = [(a, None) for a in rules.legal_actions(s)]
    values = [(_value(rules, rules.apply(s, a), h, leaf, memo), p) for a, p in children]
    if player == CHANCE:
        out = sum(v * p for v, p in values)
    elif player == 0:
        out = max(v for v, _ in values)
    else:
        out = min(v for v, _ in values)
    memo[s] = out
    return out


def _next_step(rules, s, h):
    """Non-terminal states one transition past the states of horizon ``h`` reachable from ``s``."""
    seen, out, todo = {s}, set(), [s]
    while todo:
        x = todo.pop()
        player = rules.current_player(x)
        moves = (
            [a for a, _ in rules.chance_outcomes(x)] if player == CHANCE else rules.legal_actions(x)
        )
        for a in moves:
            c = rules.apply(x, a)
            if rules.current_player(c) == TERMINAL:
                continue
            if rules.horizon(c) != h:
                out.add(c)
            elif c not in seen:
                seen.add(c)
                todo.append(c)
    return out


@pytest.mark.parametrize("edition", ["7th", "8th"])
def test_solver_stops_at_the_horizon_and_backs_up_the_leaf(edition):
    rules = load(edition, "single-phase")
    s = _scripted_cast(rules)
    h = rules.horizon(s)
    called = []

    def leaf(state):
        called.append(state)
        # Any function of the state will do: the score so far plus a made-up board value.
        return rules.returns(state)[0] + (hash(rules.observe(state, 0).tobytes()) % 7) / 7

    solver = Solver(rules, within=h, leaf=leaf)
    value = solver.value(s)
    beyond = _next_step(rules, s, h)
    assert beyond and set(called) == beyond  # the leaf is asked exactly past the horizon
    assert all(rules.horizon(c) > h for c in called)  # the horizon never goes back
    assert not solver.exact
    assert value == pytest.approx(_backup(rules, s, h, leaf, {}), abs=1e-9)
    sign = 1 if rules.current_player(s) == 0 else -1
    memo: dict = {}
    by_hand = {
        a: sign * _value(rules, rules.apply(s, a), h, leaf, memo) for a in rules.legal_actions(s)
    }
    assert solver.action_values(s) == pytest.approx(by_hand, abs=1e-9)


def _value(rules, c, h, leaf, memo):
    """The hand backup's value of a child state (terminal, past the horizon, or within it)."""
    if rules.current_player(c) == TERMINAL:
        return rules.returns(c)[0]
    if rules.horizon(c) != h:
        return leaf(c)
    return _backup(rules, c, h, leaf, memo)


@pytest.mark.parametrize("edition,scenario", DUELS)
def test_search_plays_legal_moves_on_every_duel(edition, scenario):
    rules = load(edition, scenario)
    hidden = get_hidden(edition)
    search = make_search(rules, "iterations=20,seed=0" if hidden else None)
    other = reference_policy(rules)
    rng = np.random.default_rng(1)
    for seat in (0, 1):
        s, moves = rules.initial_state(), 0
        while rules.current_player(s) != TERMINAL:
            player = rules.current_player(s)
            if player == CHANCE:
                s = rules.apply(s, rules.sample_chance(s, rng))
                continue
            agent = search if player == seat else other
            probs = agent.action_probabilities(rules, s, player)
            assert probs and set(probs) <= set(rules.legal_actions(s))
            assert sum(probs.values()) == pytest.approx(1.0)
            a = max(probs, key=probs.get)
            moves += player == seat
            s = rules.apply(s, a)  # checked: raises on an illegal action
        assert moves > 0


def get_hidden(edition: str) -> bool:
    from psygym.edition import get

    return get(edition).hidden_information


def test_optimal_on_a_duel_says_once_in_one_line_that_it_plays_search(capsys):
    rules = load("8th", "duel")
    _ANNOUNCED.discard(("8th", "duel"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no Python warning
        first = resolve_policy("optimal", rules)
        again = make_optimal(load("8th", "duel"))
    err = capsys.readouterr().err
    assert first.name == again.name == "search"
    assert err.count("\n") == 1 and err.startswith("optimal: 8th duel")
    assert "playing search" in err and "exact over each cast and the 1 after it" in err
    assert ".py" not in err and "/" not in err  # no file path


def test_optimal_on_hidden_hands_says_so_once_and_searches(capsys):
    hidden = [ed for ed in editions() if ed.hidden_information]
    if not hidden:
        pytest.skip("no edition with hidden hands")
    ed = hidden[0]
    rules = load(ed.id, ed.default_scenario)
    _ANNOUNCED.discard((ed.id, str(rules.scenario.name)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        policy = make_optimal(rules, "iterations=10,seed=1")
        make_optimal(rules, "iterations=10,seed=1")
    err = capsys.readouterr().err
    assert policy.name == "search" and err.count("\n") == 1 and "hidden" in err


def test_optimal_with_explicit_limits_stays_the_solver(capsys):
    rules = load("8th", "duel")
    policy = make_optimal(rules, "plies=3")
    assert policy.name == "optimal" and not policy.auto
    s = _scripted_cast(rules)
    assert set(policy.action_values(rules, s)) == set(rules.legal_actions(s))
    assert "playing search" not in capsys.readouterr().err


def test_optimal_on_a_solvable_scenario_is_exact_and_silent(capsys):
    rules = load("7th", "single-phase")
    policy = make_optimal(rules)
    assert policy.name == "optimal" and policy.exact
    assert capsys.readouterr().err == ""


def test_play_hint_shows_search_values_on_every_duel_menu(tmp_path):
    from psygym_experiments.cli import app
    from typer.testing import CliRunner

    result = CliRunner().invoke(
        app,
        ["play", "--edition", "8th", "--seed", "2", "--hint", "--runs-dir", str(tmp_path)],
        input="h\n" + "1\n" * 400,
    )
    assert result.exit_code == 0, result.output + repr(result.exception)
    out = result.stdout
    assert "Game over." in out and "AI: search" in out  # the AI is search too
    menus = out.count("Your move")
    assert menus > 1 and out.count("(best)") >= menus  # every menu has values, a best one
    assert "estimated value" in out and "too large" not in out
    # The search's note: once under the menus, and again for the h typed at the prompt.
    # (the first phase of the 8th duel holds more than the whole-phase budget: one cast)
    assert out.count("the whole Psychic phase does not fit within 250,000 states") == 2


def _settings(quick: bool):
    from psygym_experiments.harness.compare_field import CompareSettings

    return CompareSettings(
        editions=[], scenarios=[], episodes=1, seed=0, workers=1, quick=quick, tune_trials=1,
        train_steps=0, max_states=1000, solve_seconds=1.0, runs_dir="runs",
    )  # fmt: skip


@pytest.mark.parametrize("edition,scenario", DUELS)
def test_compare_has_search_on_every_duel_with_search_and_says_so_without(edition, scenario):
    from dataclasses import replace

    from psygym_experiments.harness.compare_field import heuristic_entries
    from psygym_experiments.harness.compare_search import search_entry

    rules = load(edition, scenario)
    notes: list[str] = []
    entry = search_entry(rules, replace(_settings(quick=False), search=True), notes)
    assert entry is not None and entry.kind == "search" and entry.spec == "search"
    assert entry.description and not notes
    assert "search" not in {e.label for e in heuristic_entries(rules)}  # not a heuristic
    named = search_entry(rules, replace(_settings(quick=False), agents=["search"]), notes)
    assert named is not None and not notes
    assert search_entry(rules, _settings(quick=False), notes) is None  # the default: left out
    assert notes and "compare --search puts it in the round-robin" in notes[0]
    assert "plays the leader head to head instead (10 games per seat" in notes[0]
    assert search_entry(rules, _settings(quick=True), notes) is None
    assert "--quick" in notes[-1]


@pytest.mark.parametrize("edition,scenario", SINGLE_PHASE)
def test_compare_leaves_search_to_optimal_where_solvable_whole(edition, scenario):
    from psygym_experiments.harness.compare_search import search_entry

    assert search_entry(load(edition, scenario), _settings(quick=False), []) is None


@pytest.mark.parametrize("edition,scenario", DUELS)
def test_evaluate_default_field_has_search_and_the_reference(edition, scenario):
    from psygym_experiments.evaluate import default_agents

    from psygym.policies import bots_for

    rules = load(edition, scenario)
    names = default_agents(rules)
    assert names[0] == "search" and "random" in names
    bots = bots_for(rules.edition)
    assert bots is None or bots.reference in names
    for name in names:
        resolve_policy(name, rules)  # every default agent loads


def test_two_steps_see_past_the_first_cast_where_one_step_does_not():
    """With no board value, one cast of lookahead values the board after it at the score so far;
    two casts also count what the next cast scores, so some values must differ."""
    rules = load("8th", "duel")
    one = LookaheadPolicy(rules, _Zero(), exact=False, steps=1, phase=False)
    two = LookaheadPolicy(rules, _Zero(), exact=False, steps=2, phase=False)
    differs = 0
    for s in _decisions(rules, 3):
        if rules.horizon(s)[0] >= 1 and not rules.is_response(s):
            a, b = one.action_values(rules, s), two.action_values(rules, s)
            assert a.keys() == b.keys()
            differs += any(abs(a[k] - b[k]) > 1e-9 for k in a)
    assert differs > 0
    assert "the 1 after it" in two.note


class _Zero:
    """A board value of 0 everywhere (the score so far is the leaf)."""

    meta: dict = {}

    def __call__(self, rules, state):
        return 0.0


@pytest.mark.parametrize(
    "arg,message",
    [("steps=0", "steps must be a whole number"), ("depth=2", "unknown option 'depth'")],
)
def test_search_options_are_checked(arg, message):
    from psygym_agents.solvers.search import make_search

    with pytest.raises(ValueError, match=message):
        make_search(load("8th", "duel"), arg)


@pytest.mark.parametrize("form", ["search:{path}", "search:value={path}"])
def test_search_takes_a_board_value_file_by_path(form):
    """A named agent's option may be a path ending in .safetensors: it is not a PPO model."""
    rules = load("8th", "duel")
    path = Path(__file__).resolve().parents[1] / "agents/pretrained/value-8th-duel.safetensors"
    agent = resolve_policy(form.format(path=path), rules)
    assert isinstance(agent, LookaheadPolicy)
    assert agent.value is not None and agent.value.meta["edition"] == "8th"
    with pytest.raises(Exception, match="no model"):
        resolve_policy(str(path.with_name("missing.safetensors")), rules)


def test_solvers_are_kept_across_games_within_a_budget_of_states(monkeypatch):
    from psygym_agents.solvers import search

    from psygym.core import play_game

    rules = load("rt", "duel")
    made = []
    real = search.Solver
    monkeypatch.setattr(search, "Solver", lambda *a, **k: made.append(1) or real(*a, **k))
    monkeypatch.setattr(search, "_KEEP_STATES", 10**9)
    monkeypatch.setattr(search, "_KEEP", 2)  # a Rogue Trader duel has four turns to search
    agent = make_search(rules, "exact=no,phase=no")  # the lookahead's solvers alone

    def play(seed):
        moves = []
        play_game(rules, [agent, agent], np.random.default_rng(seed),
                  on_step=lambda s, a, e: moves.append(a))  # fmt: skip
        return moves

    first = play(0)
    solved = len(made)
    assert solved > search._KEEP  # the game meets more units of lookahead than are always kept
    # The same game again: every unit is answered by a kept solver, and the play is the same.
    assert play(0) == first and len(made) == solved
    kept = search._LOOKAHEAD[rules]
    assert len(kept) == solved
    # With no room beyond the newest units, all older ones are dropped at every decision, so
    # here every unit of each game is solved again, and the play is the same.
    monkeypatch.setattr(search, "_KEEP_STATES", 0)
    kept.clear()
    assert play(0) == first and len(kept) == search._KEEP
    assert play(0) == first and len(made) == 3 * solved


def test_kept_solvers_are_cut_to_the_newest_once_they_grow_past_the_budget(monkeypatch):
    from types import SimpleNamespace

    from psygym_agents.solvers import search

    monkeypatch.setattr(search, "_KEEP_STATES", 100)
    monkeypatch.setattr(search, "_KEEP", 2)
    kept = {key: SimpleNamespace(states=30) for key in "abc"}  # oldest first
    search._trim(kept)
    assert list(kept) == ["a", "b", "c"]  # 90 states: under the budget
    kept["a"].states = 40  # a kept solver grows as later games reach new states of its unit
    search._trim(kept)
    assert list(kept) == ["b", "c"]
    kept["b"].states = kept["c"].states = 500  # the newest stay whatever they hold
    search._trim(kept)
    assert list(kept) == ["b", "c"]
