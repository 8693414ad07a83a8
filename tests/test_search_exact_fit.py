"""``search`` is exact whenever the rest of the game fits its budget, found by counting.

Custom scenarios the editions do not declare solvable, and the last casts of a duel, are
solved whole (:func:`psygym_agents.solvers.search.fitted_solver`); at every such decision the
agent's values are a fresh exact solve's to 1e-9 and its note says "exact". Where the rest of
the game does not fit, the agent falls back to its lookahead and says so.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from engine_cases import decision_states
from psygym_agents.solvers.expectiminimax import Solver
from psygym_agents.solvers.search import EXACT_BUDGET, LookaheadPolicy, fitted_solver

from psygym.editions import load

EDITIONS = Path(__file__).resolve().parents[1] / "psygym" / "editions"


def _renamed(tmp_path: Path, edition_folder: str, scenario: str) -> str:
    """A shipped scenario under a name no edition declares solvable (a player's own file)."""
    text = (EDITIONS / edition_folder / "scenarios" / f"{scenario}.toml").read_text()
    out = tmp_path / f"my-{scenario}.toml"
    out.write_text(text.replace(f'name = "{scenario}"', f'name = "my-{scenario}"', 1))
    return str(out)


def _decisions(rules, games: int, seed: int, agent=None):
    """Every decision of ``games`` games (the agent plays half the moves, else random play)."""
    choose = None if agent is None else (lambda s, p: agent.choose(rules, s, p))
    return decision_states(rules, games, seed, choose)


@pytest.mark.parametrize(("folder", "edition", "scenario"), [
    ("seventh", "7th", "single-phase"), ("eighth", "8th", "single-phase"),
])  # fmt: skip
def test_a_custom_phase_is_solved_exactly_at_every_decision(tmp_path, folder, edition, scenario):
    rules = load(edition, _renamed(tmp_path, folder, scenario))
    agent = LookaheadPolicy(rules)
    assert not agent.always_exact  # not declared solvable: found by counting
    exact = Solver(rules)
    checked = 0
    for s in _decisions(rules, 20, seed=4, agent=agent):
        got, want = agent.action_values(rules, s), exact.action_values(s)
        assert agent.exact and agent.note.startswith("exact: the rest of the game")
        assert got.keys() == want.keys()
        assert max(abs(got[a] - want[a]) for a in want) <= 1e-9
        checked += 1
    assert checked >= 40


def test_the_last_casts_of_a_duel_are_exact_and_the_rest_falls_back():
    rules = load("8th", "duel")
    agent = LookaheadPolicy(rules)
    exact_at = fallback_at = 0
    for s in _decisions(rules, 6, seed=2, agent=agent):
        values = agent.action_values(rules, s)
        if agent.exact:
            fresh = Solver(rules, max_states=EXACT_BUDGET).action_values(s)
            assert max(abs(values[a] - fresh[a]) for a in fresh) <= 1e-9
            exact_at += 1
        else:
            assert "estimated" in agent.note or "score so far" in agent.note
            fallback_at += 1
    assert exact_at > 5 and fallback_at > 50


def test_a_unit_that_does_not_fit_is_not_tried_again():
    rules = load("7th", "duel")
    s = next(_decisions(rules, 1, seed=0))
    calls = []
    real_value = Solver.value

    def counted(self, state=None):
        calls.append(self.max_states)
        return real_value(self, state)

    Solver.value = counted
    try:
        assert fitted_solver(rules, s) is None  # the whole duel is far past the budget
        assert fitted_solver(rules, s) is None
    finally:
        Solver.value = real_value
    assert calls == [EXACT_BUDGET]  # the second ask remembered the unit


def test_exact_false_never_tries(tmp_path):
    rules = load("7th", _renamed(tmp_path, "seventh", "single-phase"))
    agent = LookaheadPolicy(rules, exact=False, phase=False)
    s = next(_decisions(rules, 1, seed=0))
    agent.action_values(rules, s)
    assert not agent.exact and "exact within each cast" in agent.note


def test_advise_says_exact_on_a_custom_phase(tmp_path):
    from psygym_experiments.cli import app
    from typer.testing import CliRunner

    path = _renamed(tmp_path, "seventh", "single-phase")
    result = CliRunner().invoke(app, ["advise", "--edition", "7th", "--scenario", path])
    assert result.exit_code == 0, result.output
    assert "exact: the rest of the game from here fits within" in result.output


def test_search_option_exact_no_keeps_the_lookahead(tmp_path):
    from psygym_agents.solvers.search import make_search

    rules = load("7th", _renamed(tmp_path, "seventh", "single-phase"))
    assert make_search(rules, "exact=no").fits is False
    assert make_search(rules, "exact=fit").fits is True
    with pytest.raises(ValueError, match=r"exact \(a number of states, or no or fit\) must be"):
        make_search(rules, "exact=yes")
    with pytest.raises(ValueError, match=r"exact \(a number of states, or no or fit\) must be"):
        make_search(rules, "exact=0")
    with pytest.raises(ValueError, match="from 1 to 1,000,000,000, got '9223372036854775808'"):
        make_search(rules, "exact=9223372036854775808")  # past what the compiled search takes
    with pytest.raises(ValueError, match=r"option 'exact' needs a value \(exact=\.\.\.\)"):
        make_search(rules, "exact")  # not a board value file named "exact"


def test_search_option_exact_n_solves_a_rest_of_the_game_that_fits_n_states():
    from psygym_agents.solvers.expectiminimax import Solver
    from psygym_agents.solvers.search import make_search

    rules = load("rt", "random:12")  # the whole game holds about 243,000 states
    start = rules.initial_state()
    small = make_search(rules)  # the default budget (200,000 states): not exact at the start
    small.action_values(rules, start)
    assert not small.exact
    big = make_search(rules, "exact=300000")  # tried although the smaller budget failed here
    values = big.action_values(rules, start)
    assert big.exact and big.fits and "fits within 300,000 states" in big.note
    exact = Solver(rules, max_states=300_000).action_values(start)
    assert values == pytest.approx(exact, abs=1e-9)
    small.action_values(rules, start)  # the larger budget's solver does not answer for it
    assert not small.exact


GENERATED_SMALL = [("7th", 30), ("7th", 38), ("8th", 2), ("8th", 3), ("rt", 6), ("rt", 11)]
"""Generated army lists whose whole game fits the exact budget (``psygym scenario random``)."""


@pytest.mark.parametrize(("edition", "seed"), GENERATED_SMALL)
def test_advice_on_a_generated_small_list_is_the_exact_solve(edition, seed):
    """At every decision (mid-phase ones with powers still to come included), the value
    advise ranks by is a fresh exact solve's to 1e-9, and the note says exact."""
    from psygym_experiments.harness.advice import search_agent

    spec = f"random:{seed},rounds=1" + (",psykers=1" if edition != "rt" else "")
    rules = load(edition, spec)
    agent = search_agent(rules)
    exact = Solver(rules)
    checked = 0
    for s in _decisions(rules, 8, seed=seed, agent=agent):
        got, want = agent.action_values(rules, s), exact.action_values(s)
        assert agent.exact and agent.note.startswith("exact: the rest of the game")
        assert got.keys() == want.keys()
        assert max(abs(got[a] - want[a]) for a in want) <= 1e-9
        checked += 1
    assert checked >= 8
