"""The ``optimal`` agent: exact expectiminimax play, usable as an opponent anywhere.

:class:`OptimalPolicy` plays an optimal action of the exact game (the best action of
:class:`~psygym_agents.solvers.expectiminimax.Solver`; at a simultaneous-move node its optimal mixed
strategy). Its memo is kept per rules object and shared by every ``OptimalPolicy`` of those
rules, so an env, an evaluation and a play session reuse what was solved before.

For an edition with hidden information (secret hands, ``rules.information``) exact play does
not apply: :func:`make_optimal` returns the ``search`` agent, there the information-set search
of :mod:`psygym_agents.solvers.ismcts`, which is **not** exact.

The agent spec is ``optimal`` or ``optimal:<options>`` with comma-separated options
``depth=N`` (Psychic phases searched, counting the current one; the score so far is the leaf
value beyond them), ``plies=N`` (transitions searched below each decision), ``states=N``
(exact, giving up beyond N states), for the search ``iterations=N`` and ``seed=N``; a bare
number is ``depth=N``. The two halves of a secret simultaneous move (such as secret bids)
count as one ply, and the second mover never reads the first one's secret: it plays its
equilibrium mix of the pair's matrix game, solved from the node where the pair began (see
:mod:`psygym_agents.solvers.expectiminimax`).

Plain ``optimal`` is exact wherever the game can be solved whole. Where it cannot (hidden hands;
a shipped scenario its edition does not list in ``Edition.solvable_scenarios``; a game that
needs more than :data:`AUTO_MAX_STATES` states) it says so in one plain line on standard error,
once per edition and scenario in a process (:func:`announce`), and plays the ``search`` agent
(:func:`psygym_agents.solvers.search.make_search`) instead.
"""

from __future__ import annotations

import sys
from collections.abc import Hashable
from typing import Any, TextIO

from psygym_agents.solvers import NotSolvable, has_hidden_information
from psygym_agents.solvers.expectiminimax import Solver

from psygym.per_rules import PerRules

AUTO_MAX_STATES = 200_000
"""States the automatic ``optimal`` agent may memoise before it gives up exact play."""
AUTO_PLIES = 6
"""A short ply horizon (``optimal:plies=6``) for callers that want a cheap fixed-depth search."""

_ANNOUNCED: set[tuple[str, str]] = set()
"""(edition, scenario) pairs whose "playing search" line this process has printed."""

_SOLVERS: PerRules[dict[tuple[Any, ...], Any]] = PerRules()
"""Rules object -> its equilibrium solvers by settings (and "too-large": the search it fell back
to), for the rules objects used most recently."""


def shared_solver(
    rules: Any,
    *,
    max_depth: int | None = None,
    max_plies: int | None = None,
    max_states: int | None = None,
) -> Solver:
    """The equilibrium :class:`Solver` of ``rules`` for these settings, created once and reused.

    The memo is kept for the few rules objects used most recently
    (:class:`psygym.per_rules.PerRules`).
    """
    per_rules = _SOLVERS.setdefault(rules, {})
    key = (max_depth, max_plies, max_states)
    solver = per_rules.get(key)
    if solver is None:
        solver = per_rules[key] = Solver(
            rules, max_depth=max_depth, max_plies=max_plies, max_states=max_states
        )
    return solver


def _scenario_name(rules: Any) -> str:
    return str(getattr(getattr(rules, "scenario", None), "name", "") or "")


def announce(rules: Any, reason: str, search: Any, stream: TextIO | None = None) -> None:
    """Say once per edition and scenario in this process that ``optimal`` plays ``search``.

    One plain line on standard error (no warning machinery, no file path), such as
    ``optimal: <edition> duel cannot be solved whole (...); playing search: exact within each
    cast``.

    Args:
        rules: the rules ``optimal`` was asked to play.
        reason: why the game cannot be solved whole, in a few words.
        search: the agent played instead (its ``note``, if any, ends the line).
        stream: where to write (default: ``sys.stderr`` at the time of the call).
    """
    key = (str(rules.edition), _scenario_name(rules))
    if key in _ANNOUNCED:
        return
    _ANNOUNCED.add(key)
    note = getattr(search, "note", "") or "an information-set search, not exact"
    what = f"{rules.edition} {key[1]}".strip()
    line = f"optimal: {what} cannot be solved whole ({reason}); playing search"
    print(f"{line}: {note}", file=stream or sys.stderr, flush=True)


class OptimalPolicy:
    """Optimal play from the exact game tree (perfect-information editions).

    Args:
        rules: the rules this policy is mostly asked about (others get their own solver).
        max_depth: Psychic phases to search, counting the current one (``None``: to the end).
        max_plies: transitions to search below each decision (``None``: no ply limit).
        max_states: raise :class:`~psygym_agents.solvers.NotSolvable` beyond this many states.
        auto: play exactly while the game needs at most :data:`AUTO_MAX_STATES` states, else
            say so once (:func:`announce`) and play the ``search`` agent (not exact).

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
        """False once a depth limit (or the ``search`` fallback) played any decision."""
        return self.solver.exact and not (self.auto and self._fallback(self.rules) is not None)

    def _fallback(self, rules: Any) -> Any:
        """The ``search`` agent this policy plays on ``rules`` once exact play gave up."""
        return _SOLVERS.get(rules, {}).get("too-large")

    def _solver(self, rules: Any) -> Solver:
        if rules is self.solver.rules:
            return self.solver
        return shared_solver(rules, **self.settings)

    def _give_up(self, rules: Any) -> Any:
        """Switch ``rules`` to the ``search`` agent (said once), freeing the partial memo."""
        from psygym_agents.solvers.search import LookaheadPolicy

        per_rules = _SOLVERS.setdefault(rules, {})
        search = per_rules.get("too-large")
        if search is None:
            search = per_rules["too-large"] = LookaheadPolicy(rules, exact=False)
            per_rules.pop((None, None, self.settings["max_states"]), None)
            announce(rules, f"more than {self.settings['max_states']:,} states", search)
        return search

    def restart(self) -> None:
        """A new game starts: restart the ``search`` agent played once exact play gave up."""
        search = self._fallback(self.rules)
        if search is not None:
            search.restart()

    def action_probabilities(self, rules: Any, state: Hashable, player: int) -> dict[int, float]:
        """An optimal action with probability 1 (a mixed strategy at simultaneous moves)."""
        if self.auto:
            search = self._fallback(rules)
            if search is not None:
                return search.action_probabilities(rules, state, player)
        try:
            return self._solver(rules).strategy(state)
        except NotSolvable:
            if not self.auto:
                raise
        return self._give_up(rules).action_probabilities(rules, state, player)

    def choose(self, rules: Any, state: Hashable, player: int) -> int:
        """The most probable action of :meth:`action_probabilities`."""
        probs = self.action_probabilities(rules, state, player)
        return max(probs, key=lambda a: (probs[a], -a))

    def action_values(self, rules: Any, state: Hashable) -> dict[int, float]:
        """Value of every legal action for the player to move (from its point of view)."""
        if self.auto:
            search = self._fallback(rules)
            if search is not None:
                return search.action_values(rules, state)
        try:
            return self._solver(rules).action_values(state)
        except NotSolvable:
            if not self.auto:
                raise
        return self._give_up(rules).action_values(rules, state)

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


def _declared_unsolvable(rules: Any) -> bool:
    """Whether the scenario is one its edition ships but does not list as solvable whole.

    A scenario the edition does not ship (a user's file, a test's toy game) is tried exactly
    within :data:`AUTO_MAX_STATES` states instead.
    """
    from psygym.edition import edition_of

    try:
        edition = edition_of(rules)
    except (KeyError, ValueError, AttributeError):
        return False
    name = _scenario_name(rules)
    if name in edition.solvable_scenarios:
        return False
    return name in edition.scenario_names()


def make_optimal(rules: Any, arg: str | None = None) -> Any:
    """Factory of the ``optimal`` agent (``psygym_agents.registry``): exact where possible.

    Plain ``optimal`` is the exact solver where the game can be solved whole; elsewhere it
    returns the ``search`` agent (:func:`~psygym_agents.solvers.search.make_search`) and says so
    in one line on standard error (:func:`announce`): for hidden hands the information-set
    search of :mod:`psygym_agents.solvers.ismcts` with the edition's reference heuristic as its
    rollout policy (``iterations=N,seed=N`` are passed on), for a shipped scenario the edition
    does not declare solvable the exact search of each cast or turn with a learned board value
    beyond it. Explicit ``depth``, ``plies`` or ``states`` options always give the solver with
    those limits.

    Args:
        rules: the rules to play.
        arg: options, see the module docstring (``"depth=2"``, ``"iterations=800,seed=3"``).
    """
    from psygym_agents.solvers.search import make_search

    opts = parse_options(arg)
    if has_hidden_information(rules):
        kwargs = ",".join(f"{k}={opts[k]}" for k in ("iterations", "seed") if k in opts)
        search = make_search(rules, kwargs or None)
        announce(rules, "the players' hands are hidden", search)
        return search
    limits = {"depth", "plies", "states"} & set(opts)
    if not limits and _declared_unsolvable(rules):
        search = make_search(rules)
        announce(rules, "too large to solve exactly", search)
        return search
    return OptimalPolicy(
        rules,
        max_depth=opts.get("depth"),
        max_plies=opts.get("plies"),
        max_states=opts.get("states"),
        auto=not limits,
    )


__all__ = [
    "AUTO_MAX_STATES",
    "AUTO_PLIES",
    "NotSolvable",
    "OptimalPolicy",
    "announce",
    "make_optimal",
    "parse_options",
    "shared_solver",
]
