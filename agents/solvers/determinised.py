"""The whole Psychic phase searched exactly in sampled deals of the hidden cards. NOT exact.

Where hands are secret, the player to move cannot search the true state. :class:`DeterminisedSearch`
draws ``determinisations`` full states the player cannot tell from the one it is in (its own hand
and the public table kept, every card it has not seen dealt again:
:func:`~.ismcts.determinize`), searches each one's Psychic phase exactly to its end (every cast,
nullify and chance outcome of both sides, a leaf past the phase worth the score so far plus
``V``: :func:`~.search.phase_solver`), and plays the action whose value, averaged over the
deals, is best for it. This is perfect-information Monte Carlo (Ginsberg 2001, "GIB"; Long et
al. 2010 on when it works): within one deal both sides play as if they saw all of it, so it
overrates what knowing a hand is worth ("strategy fusion"), but each deal's chance outcomes
are summed exactly where the information-set search (:mod:`.ismcts`) samples them.

The deals of one decision share a budget of states, an equal share each, so a decision costs
about what one phase search of a perfect-information edition does. Where one deal's phase does
not fit its share, the decision goes to the information-set search (the deals that fitted would
favour hands that make small phases).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any

import numpy as np
from psygym_agents.solvers.ismcts import SearchPolicy, determinize


class DeterminisedSearch:
    """Exact phase search averaged over deals of the hidden cards. **Not exact** overall.

    Args:
        rules: the rules to play (hidden hands).
        value: the board value at the phase's edge (``None``: the score so far alone).
        determinisations: deals searched per decision.
        seed: seed of the deals; every decision deals from the start of the generator seeded
            with it, so a decision is a function of the state and the seed alone, whatever
            games or decisions this object played before.
        fallback: the information-set search a decision goes to where a deal's phase does not
            fit.
        solve: ``solve(rules, deal, value, states, determinised=True)``, the exact search of
            the deal's phase within ``states``, or ``None`` where it does not fit
            (:func:`~.search.phase_solver`).
        budget: the states the deals of one decision may hold together, an equal share each.

    Attributes:
        note: one plain sentence on what the values are.
    """

    name = "search"
    exact = False

    def __init__(self, rules: Any, value: Any, *, determinisations: int, seed: int,
                 fallback: SearchPolicy, solve: Callable[..., Any], budget: int):  # fmt: skip
        if determinisations < 1:
            raise ValueError(f"determinisations must be at least 1, got {determinisations}")
        self.rules, self.value, self.deals = rules, value, determinisations
        self.seed = seed
        self.fallback = fallback
        self.solve, self.budget = solve, budget
        self.note = (f"the whole Psychic phase searched exactly in {determinisations} deals of "
                     "the cards the player to move has not seen (NOT exact: each deal is "
                     "searched as if both sides saw it)")  # fmt: skip

    def restart(self) -> None:
        """A new game starts: restart the information-set search a misfit goes to.

        The deals keep nothing from one decision to the next (each decision deals from a
        generator seeded afresh), so no game depends on the games before it.
        """
        self.fallback.restart()

    def action_values(self, rules: Any, state: Hashable, player: int) -> dict[int, float]:
        """Each legal action -> its mean value for ``player`` over the deals (``{}``: a misfit)."""
        legal = rules.legal_actions(state)
        total = dict.fromkeys(legal, 0.0)
        # Seeded afresh at every decision (see SearchPolicy.search for why).
        rng = np.random.default_rng((self.seed, 17))
        for _ in range(self.deals):
            deal = determinize(rules, state, player, rng)
            solver = self.solve(rules, deal, self.value, self.budget // self.deals,
                                determinised=True)  # fmt: skip
            if solver is None:
                return {}
            for a, v in solver.action_values(deal).items():
                total[a] += v
        return {a: v / self.deals for a, v in total.items()}

    def search(self, rules: Any, state: Hashable, player: int) -> tuple[int, dict[int, float]]:
        """``(best action, {action: mean value for player})``, as the information-set search.

        The deals' mean; the information-set search's answer where a deal does not fit.
        """
        values = self.action_values(rules, state, player)
        if not values:
            return self.fallback.search(rules, state, player)
        return max(values, key=lambda a: (values[a], -a)), values

    def action_probabilities(self, rules: Any, state: Hashable, player: int) -> dict[int, float]:
        """The action best on average over the deals, with probability 1."""
        legal = rules.legal_actions(state)
        if len(legal) == 1:
            return {legal[0]: 1.0}
        return {self.search(rules, state, player)[0]: 1.0}

    def __repr__(self) -> str:
        return f"<policy {self.name} (determinised phase search, not exact)>"


__all__ = ["DeterminisedSearch"]
