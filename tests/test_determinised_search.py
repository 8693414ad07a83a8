"""The determinised phase search for hidden hands (``search:determinisations=N``).

- It sees no hidden card: from a state and from a re-deal of everything its player has not
  seen, with the same seed, it gives the same values.
- Each deal is searched exactly: in the game's last Psychic phase, with no board value, its
  values are the mean over the same deals of a whole exact solve of each deal.
- Where no deal's phase fits its budget, the decision goes to the information-set search.
- A board value's JSON asks for it (``search_determinisations``), an option overrides that,
  and bad settings are one clear line; the solver still refuses hidden hands it was not told
  are a deal.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import policy_decisions
from psygym_agents.second.heuristics import CastBiggest
from psygym_agents.solvers import NotSolvable
from psygym_agents.solvers.determinised import DeterminisedSearch
from psygym_agents.solvers.expectiminimax import Solver
from psygym_agents.solvers.ismcts import SearchPolicy, determinize
from psygym_agents.solvers.search import PHASE_BUDGET, make_search, phase_solver
from psygym_agents.value.general import general_value

from psygym import load

RULES = load("2nd", "random:11")
"""A generated list whose phases solve in milliseconds."""


def _decisions(games: int):
    """Decision states with several legal actions along games of ``cast-biggest``."""
    return policy_decisions(RULES, CastBiggest(), range(300, 300 + games))


def _search(budget: int = PHASE_BUDGET) -> DeterminisedSearch:
    fallback = SearchPolicy(RULES, iterations=20, seed=0, value=None)
    return DeterminisedSearch(RULES, None, determinisations=4, seed=5, fallback=fallback,
                              solve=phase_solver, budget=budget)  # fmt: skip


def test_the_determinised_search_sees_no_hidden_card():
    hidden = np.random.default_rng(7)
    checked = redealt = 0
    for s, p in _decisions(6):
        twin = RULES.sample_hidden(s, p, hidden)
        a = make_search(RULES, "determinisations=4,seed=5")
        b = make_search(RULES, "determinisations=4,seed=5")
        assert a.action_values(RULES, s, p) == b.action_values(RULES, twin, p)
        assert a.action_probabilities(RULES, s, p) == b.action_probabilities(RULES, twin, p)
        checked += 1
        redealt += twin != s
    assert checked >= 10 and redealt >= 5


def test_each_deal_of_the_last_phase_is_solved_exactly():
    decisions = list(_decisions(4))
    end = max(RULES.phase_horizon(s) for s, _ in decisions)  # the games' last phase
    last = [(s, p) for s, p in decisions if RULES.phase_horizon(s) == end]
    assert len(last) >= 3
    for s, p in last[:6]:
        values = _search().action_values(RULES, s, p)
        rng = np.random.default_rng((5, 17))
        want = dict.fromkeys(RULES.legal_actions(s), 0.0)
        for _ in range(4):
            deal = determinize(RULES, s, p, rng)
            for a, v in Solver(RULES, determinised=True).action_values(deal).items():
                want[a] += v / 4
        assert values.keys() == want.keys()
        best, means = _search().search(RULES, s, p)  # the information-set search's interface
        assert means == values and values[best] == max(values.values())
        for a in want:
            assert values[a] == pytest.approx(want[a], abs=1e-9)


def test_where_no_deal_fits_the_information_set_search_decides():
    s, p = next(_decisions(1))
    search = _search(budget=1)
    assert search.action_values(RULES, s, p) == {}
    fresh = SearchPolicy(RULES, iterations=20, seed=0, value=None)
    assert search.action_probabilities(RULES, s, p) == fresh.action_probabilities(RULES, s, p)


def test_a_value_asks_for_the_deals_in_its_json_and_an_option_overrides_it(tmp_path):
    value = general_value(RULES)
    value.meta["search_determinisations"] = 3
    value.save(tmp_path / "g2")
    path = tmp_path / "g2.safetensors"
    asked = make_search(RULES, f"value={path}")
    assert isinstance(asked, DeterminisedSearch) and asked.deals == 3
    assert "3 deals" in asked.note
    assert isinstance(make_search(RULES, f"value={path};determinisations=0"), SearchPolicy)
    assert make_search(RULES, f"value={path};determinisations=5").deals == 5
    value.meta["search_determinisations"] = "many"
    value.save(tmp_path / "g2")
    with pytest.raises(ValueError, match="search_determinisations must be a whole number") as info:
        make_search(RULES, f"value={path}")
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("arg", ["determinisations=x", "determinisations=-1"])
def test_bad_determinisations_are_one_clear_line(arg):
    with pytest.raises(ValueError, match="determinisations must be a whole number >= 0") as info:
        make_search(RULES, arg)
    assert "\n" not in str(info.value) and str(info.value).startswith("search: ")


def test_the_solver_refuses_hidden_hands_that_are_not_a_deal():
    with pytest.raises(NotSolvable, match="hidden information"):
        Solver(RULES)


def test_searches_built_again_for_one_game_keep_one_phase_search():
    """A hint builds ``search`` anew at each click: the shipped value is one object per rules,
    so the phase searches kept for the game stay one per budget, however many clicks."""
    from psygym_agents.solvers.search import _fit_of
    from psygym_agents.value import shipped_value

    rules = load("2nd", "random:11")
    assert shipped_value(rules) is shipped_value(rules)
    s, p = next(policy_decisions(rules, CastBiggest(), range(300, 301)))
    for seed in range(4):
        values = make_search(rules, f"seed={seed}").search(rules, s, p)[1]
        assert values.keys() == set(rules.legal_actions(s))
    assert len(_fit_of(rules).phases) == 1
