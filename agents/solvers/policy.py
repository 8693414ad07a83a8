"""The ``optimal`` agent: exact expectiminimax play, usable as an opponent anywhere.

:class:`OptimalPolicy` plays an optimal action of the exact game (the best action of
:class:`~psygym_agents.solvers.expectiminimax.Solver`; at a simultaneous-move node its optimal mixed
strategy). Its memo is kept per rules object and shared by every ``OptimalPolicy`` of those
rules, so an env, an evaluation and a play session reuse what was solved before.

For an edition with hidden information (secret hands, ``rules.information``) exact play does
not apply: :func:`make_optimal` returns the information-set search of
:mod:`psygym_agents.solvers.ismcts` (name ``"search"``), which is **not** exact.

The agent spec is ``optimal`` or ``optimal:<options>`` with comma-separated options
``depth=N`` (Psychic phases searched, counting the current one; the score so far is the leaf
value beyond them), ``plies=N`` (transitions searched below each decision), ``states=N``
(exact, giving up beyond N states), for the search ``iterations=N`` and ``seed=N``; a bare
number is ``depth=N``. The two halves of a secret simultaneous move (such as secret bids)
count as one ply, and the second mover never reads the first one's secret: it plays its
equilibrium mix of the pair's matrix game, solved from the node where the pair began (see
:mod:`psygym_agents.solvers.expectiminimax`). Plain ``optimal`` plays exactly while the game
needs at most :data:`AUTO_MAX_STATES` states and otherwise warns once and plays an
:data:`AUTO_PLIES`-ply search (not exact).
"""

from __future__ import annotations

import warnings
import weakref
from collections.abc import Hashable
from typing import Any

from psygym_agents.solvers import NotSolvable, has_hidden_information
from psygym_agents.solvers.expectiminimax import Solver

from psygym.policies import reference_policy

AUTO_MAX_STATES = 200_000
"""States the automatic ``optimal`` agent may memoise before it gives up exact play."""
AUTO_PLIES = 6
"""Ply horizon of the automatic agent's fallback search (not exact)."""

_SOLVERS: weakref.WeakKeyDictionary[Any, dict[tuple[Any, ...], Any]] = weakref.WeakKeyDictionary()


def shared_solver(
    rules: Any,
    *,
    max_depth: int | None = None,
    max_plies: int | None = None,
    max_states: int | None = None,
) -> Solver:
    """The equilibrium :class:`Solver` of ``rules`` for these settings, created once and reused.

    The memo lives as long as ``rules`` does (a weak reference keys it).
    """
    per_rules = _SOLVERS.setdefault(rules, {})
    key = (max_depth, max_plies, max_states)
    solver = per_rules.get(key)
    if solver is None:
        solver = per_rules[key] = Solver(
            rules, max_depth=max_depth, max_plies=max_plies, max_states=max_states
        )
    return solver


class OptimalPolicy:
    """Optimal play from the exact game tree (perfect-information editions).

    Args:
        rules: the rules this policy is mostly asked about (others get their own solver).
        max_depth: Psychic phases to search, counting the current one (``None``: to the end).
        max_plies: transitions to search below each decision (``None``: no ply limit).
        max_states: raise :class:`~psygym_agents.solvers.NotSolvable` beyond this many states.
        auto: play exactly while the game needs at most :data:`AUTO_MAX_STATES` states, else
            warn once and switch to a search of :data:`AUTO_PLIES` plies (not exact).

    Raises:
        NotSolvable: the edition has hidden information (use :func:`make_optimal`).
    """

    name = "optimal"

    def __init__(
        self,
        rules: Any,
        *,
        max_depth: int | None = None,
        max_plies: int | None = None,
        max_states: int | None = None,
        auto: bool = False,
    ):
        self.auto = auto and max_depth is None and max_plies is None
        if self.auto and max_states is None:
            max_states = AUTO_MAX_STATES
        self.settings = {"max_depth": max_depth, "max_plies": max_plies, "max_states": max_states}
        self.rules = rules
        self.solver = shared_solver(rules, **self.settings)

    @property
    def exact(self) -> bool:
        """False once a depth limit has cut any search this policy relied on."""
        return self.solver.exact and not (self.auto and self._fell_back(self.rules))

    def _fell_back(self, rules: Any) -> bool:
        return bool(_SOLVERS.get(rules, {}).get("too-large"))

    def _solver(self, rules: Any) -> Solver:
        if self.auto and self._fell_back(rules):
            return shared_solver(rules, max_plies=AUTO_PLIES)
        if rules is self.solver.rules:
            return self.solver
        return shared_solver(rules, **self.settings)

    def action_probabilities(self, rules: Any, state: Hashable, player: int) -> dict[int, float]:
        """An optimal action with probability 1 (a mixed strategy at simultaneous moves)."""
        try:
            return self._solver(rules).strategy(state)
        except NotSolvable:
            if not self.auto:
                raise
        scenario = getattr(getattr(rules, "scenario", None), "name", "")
        warnings.warn(
            f"optimal: {rules.edition} {scenario} needs more than "
            f"{self.settings['max_states']:,} states to solve exactly; playing a "
            f"{AUTO_PLIES}-ply search instead (not exact; use optimal:states=N for more)",
            RuntimeWarning,
            stacklevel=2,
        )
        per_rules = _SOLVERS.setdefault(rules, {})
        per_rules["too-large"] = True
        per_rules.pop((None, None, self.settings["max_states"]), None)  # free the partial memo
        solver = self._solver(rules)
        if rules is self.rules:
            self.solver = solver
        return solver.strategy(state)

    def choose(self, rules: Any, state: Hashable, player: int) -> int:
        """The most probable action of :meth:`action_probabilities`."""
        probs = self.action_probabilities(rules, state, player)
        return max(probs, key=lambda a: (probs[a], -a))

    def action_values(self, rules: Any, state: Hashable) -> dict[int, float]:
        """Value of every legal action for the player to move (from its point of view)."""
        return self._solver(rules).action_values(state)

    def __repr__(self) -> str:
        return f"<policy {self.name}>"


def parse_options(arg: str | None) -> dict[str, int]:
    """``"depth=2,states=100000"`` (or ``"2"``) -> ``{"depth": 2, "states": 100000}``.

    Raises:
        ValueError: an unknown option or a value that is not a whole number.
    """
    allowed = ("depth", "plies", "states", "iterations", "seed")
    out: dict[str, int] = {}
    if not arg:
        return out
    for part in str(arg).split(","):
        part = part.strip()
        if not part:
            continue
        name, sep, value = part.partition("=")
        if not sep:
            name, value = "depth", name
        name = name.strip()
        if name not in allowed:
            raise ValueError(f"optimal: unknown option {name!r}; allowed: {', '.join(allowed)}")
        try:
            out[name] = int(value)
        except ValueError:
            raise ValueError(f"optimal: {name} must be a whole number, got {value!r}") from None
    return out


def make_optimal(rules: Any, arg: str | None = None) -> Any:
    """Factory of the ``optimal`` agent (``psygym_agents.registry``): exact where possible.

    For editions with hidden information this returns
    :class:`~psygym_agents.solvers.ismcts.SearchPolicy` (name ``"search"``), the strongest practical
    search, which is not exact (a ``UserWarning`` says so), with the edition's reference
    heuristic as its rollout policy.

    Args:
        rules: the rules to play.
        arg: options, see the module docstring (``"depth=2"``, ``"iterations=800,seed=3"``).
    """
    opts = parse_options(arg)
    if has_hidden_information(rules):
        from psygym_agents.solvers.ismcts import SearchPolicy

        warnings.warn(
            f"optimal: {rules.edition} has hidden information, so this agent is an "
            "information-set search ('search'), NOT an exact solver",
            UserWarning,
            stacklevel=2,
        )
        kwargs = {k: opts[k] for k in ("iterations", "seed") if k in opts}
        return SearchPolicy(rules, rollout=reference_policy(rules), **kwargs)
    return OptimalPolicy(
        rules,
        max_depth=opts.get("depth"),
        max_plies=opts.get("plies"),
        max_states=opts.get("states"),
        auto=not ({"depth", "plies", "states"} & set(opts)),
    )


__all__ = [
    "AUTO_MAX_STATES",
    "AUTO_PLIES",
    "NotSolvable",
    "OptimalPolicy",
    "make_optimal",
    "parse_options",
    "shared_solver",
]
