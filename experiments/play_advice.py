"""Hints at the ``psygym play`` prompt: the values of every option of the human's decision.

:class:`Advisor` answers a hint (``--hint``, or ``h`` typed at the prompt) with an
:class:`Advice`: the ``search`` agent's values where the edition has no secret hands (exact, or
exact within the cast or turn in progress), an information-set search from the human's view
only where it has, and the older depth-limited solver when the search agent is not installed.
The session that shows them is :mod:`psygym_experiments.play_session`.
"""

from __future__ import annotations

import time
import zlib
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any

HINT_BUDGET = 4.0
"""Seconds the ``--hint`` advice may take (the search stops deepening once it is spent)."""

SEARCH_ITERATIONS = 1500
"""Information-set search iterations of one hint where hands are secret (about a second; every
``h`` typed at the prompt doubles them). A count, not a time, so a hint is reproducible."""


# ----------------------------------------------------------------------------- advice
@dataclass
class Advice:
    """The solver's values of the options at one decision.

    Attributes:
        values: legal action -> expected final score of the player to move (empty if none).
        exact: whether the values are exact (no depth limit cut the search).
        depth: the depth limit (Psychic phases) of the search that gave ``values``, when not
            exact.
        message: why there is no advice, or a note about it.
        iterations: the information-set search iterations behind ``values`` when they are
            estimated by search (secret hands), else ``None``.
        note: what the ``search`` agent's values are, in one sentence (its ``note``), when
            they come from it and are not exact.
    """

    values: dict[int, float] = field(default_factory=dict)
    exact: bool = True
    depth: int | None = None
    message: str = ""
    iterations: int | None = None
    note: str = ""


def _solver_parts() -> tuple[Any, Any, type[BaseException], Callable[[Any], bool]] | str:
    """(Solver, Cache, NotSolvable, has_hidden_information) or why no solver can be used."""
    try:
        from psygym_agents.solvers import NotSolvable, has_hidden_information
        from psygym_agents.solvers.expectiminimax import Cache, Solver
    except ImportError as exc:  # the solvers are optional
        return f"no exact solver is installed ({exc})"
    return Solver, Cache, NotSolvable, has_hidden_information


class Advisor:
    """Values of every option of a decision from the ``search`` agent.

    Perfect- and simultaneous-information editions get the values of
    :class:`psygym_agents.solvers.search.LookaheadPolicy`: exact where the edition declares the
    scenario solvable whole, else exact within the cast (or turn) in progress with the board
    beyond it valued by a learned board value (an estimate; the agent's ``note`` says what is
    exact). A hint takes about a second at most on the shipped duels, so ``budget`` only
    bounds the older depth-limited solver, which :meth:`advise` uses when the search agent is
    not installed.
    Editions with secret hands (``rules.information``) have no exact advice: their values are
    estimated by the information-set search of the edition's ``optimal`` agent
    (:class:`psygym_agents.solvers.ismcts.SearchPolicy`), :data:`SEARCH_ITERATIONS` iterations
    (``search_iterations``), doubled by every further request. The search deals again what the
    human has not seen before each iteration, and its seed is taken from the human's
    observation, so the values are a function of what the human may see.

    At the second decision of a secret pair (Rogue Trader's bids, ``simultaneous_info``) the
    values are those of the matrix game at ``parent``: each bid's expected value against the
    opponent's optimal mixed bid, so the advice never uses the opponent's secret choice.
    """

    MAX_MEMO = 500_000
    """A search memo larger than this is dropped (memory bound)."""

    MAX_ITERATIONS_FACTOR = 16
    """Further requests double the search iterations up to this many times the first count."""

    def __init__(
        self,
        rules: Any,
        *,
        budget: float = HINT_BUDGET,
        search_iterations: int = SEARCH_ITERATIONS,
    ):
        self.rules = rules
        self.budget = budget
        self.search_iterations = search_iterations
        self.searches = False  # secret hands: values estimated by the information-set search
        self.rate = 5_000.0  # states per second, updated after every search
        self._answers: dict[tuple[Hashable, Hashable | None], Advice] = {}
        self._caches: dict[int | None, Any] = {}
        parts = _solver_parts()
        self.unavailable: str | None = None
        if isinstance(parts, str):
            self.unavailable = parts
            return
        self._solver_cls, self._cache_cls, self._not_solvable, hidden = parts
        if hidden(rules):
            self.searches = True
        self._lookahead: Any = None
        if not self.searches:
            from psygym_experiments.harness.advice import lookahead_agent

            try:
                self._lookahead = lookahead_agent(rules)
            except ImportError:
                pass

    @property
    def note(self) -> str:
        """What the values are, in one sentence (the ``search`` agent's note), if it is used."""
        return "" if self._lookahead is None else str(self._lookahead.note)

    def advise(
        self,
        state: Hashable,
        parent: Hashable | None = None,
        *,
        hidden: bool = False,
        further: bool = True,
    ) -> Advice:
        """Values of the options of the player to move in ``state``.

        Args:
            state: a decision node of the human.
            parent: the opponent's secret decision node before ``state`` (simultaneous bids),
                if any.
            hidden: the caller has seen hidden information in this game (cards the human may
                not see), even if the edition does not declare ``hidden_information``.
            further: search again when the last answer for ``state`` was not exact (else
                return that answer).
        """
        if self.unavailable is not None:
            return Advice(message=self.unavailable)
        if self.searches:
            return self._search_advice(state, further)
        if hidden:
            return Advice(
                message=f"no exact advice exists for {self.rules.edition} edition: "
                "part of the game is hidden from you (hidden information)"
            )
        key = (state, parent)
        hit = self._answers.get(key)
        if hit is not None and (not further or (hit.exact and hit.values) or hit.note):
            return hit
        if self._lookahead is not None:
            answer = self._lookahead_advice(state, parent)
        else:
            answer = self._search(state, parent, hit)
        self._answers[key] = answer
        return answer

    def _lookahead_advice(self, state: Hashable, parent: Hashable | None) -> Advice:
        """The ``search`` agent's values (exact within the cast or turn, or whole)."""
        from psygym_agents.solvers.search import UnitTooLarge

        search = self._lookahead
        try:
            solver = search.solver(self.rules, state if parent is None else parent)
        except UnitTooLarge as exc:
            return Advice(exact=False, message=str(exc))
        values = self._values(solver, state, parent)
        exact = bool(search.exact)
        return Advice(values=values, exact=exact, note="" if exact else search.note)

    def _search_advice(self, state: Hashable, further: bool) -> Advice:
        """Values estimated by the information-set search from the mover's view only."""
        rules = self.rules
        player = rules.current_player(state)
        seen = rules.observe(state, player).tobytes()
        key = (player, seen)
        hit = self._answers.get(key)
        if hit is not None and (not further or hit.iterations is None):
            return hit
        if hit is None:
            iterations = self.search_iterations
        else:
            top = self.search_iterations * self.MAX_ITERATIONS_FACTOR
            iterations = min(2 * (hit.iterations or 0), top)
            if iterations == hit.iterations:
                return hit
        try:
            from psygym_agents.solvers.search import make_search
        except ImportError as exc:
            return Advice(message=f"no search is installed ({exc})")
        search = make_search(rules, f"iterations={iterations},seed={zlib.crc32(seen)}")
        _, means = search.search(rules, state, player)
        answer = Advice(
            values={int(a): float(v) for a, v in means.items()},
            exact=False,
            iterations=iterations,
        )
        self._answers[key] = answer
        return answer

    def _solver(self, depth: int | None, chunk: int) -> Any:
        cache = self._caches.get(depth)
        if cache is None or len(cache.values) > self.MAX_MEMO:
            cache = self._caches[depth] = self._cache_cls()
        return self._solver_cls(
            self.rules, max_depth=depth, cache=cache, max_states=len(cache.values) + chunk
        )

    def _values(self, solver: Any, state: Hashable, parent: Hashable | None) -> dict[int, float]:
        if parent is None:
            return {int(a): float(v) for a, v in solver.action_values(state).items()}
        rules = self.rules
        player = rules.current_player(state)
        sign = 1.0 if player == 0 else -1.0
        mixed = solver.strategy(parent)  # the opponent's optimal mixed secret choice
        out = {}
        for b in rules.legal_actions(state):
            total = 0.0
            for a, p in mixed.items():
                child = rules.apply(rules.apply(parent, a, check=False), b, check=False)
                total += p * solver.value(child)
            out[int(b)] = sign * total
        return out

    def _search(self, state: Hashable, parent: Hashable | None, previous: Advice | None) -> Advice:
        """Search the Psychic phase in progress, then the whole game with the time left.

        The first search is the quick answer (exact when the game ends within the phase); the
        exact values win when the second search finishes. When the phase alone does not fit in
        the budget the whole game does not either, so the second search is skipped.
        """
        start = time.perf_counter()
        found = previous if previous is not None and previous.values else None
        for depth in (1, None):
            left = self.budget - (time.perf_counter() - start)
            if left <= 0 or (depth is None and found is None):
                break
            solver = self._solver(depth, max(200, int(self.rate * left)))
            before, t0 = solver.states, time.perf_counter()
            try:
                values = self._values(solver, state, parent)
            except self._not_solvable:
                continue
            finally:
                spent, grown = time.perf_counter() - t0, solver.states - before
                if spent > 0.2 and grown > 0:
                    self.rate = 0.5 * self.rate + 0.5 * grown / spent
            exact = depth is None or bool(solver.exact)
            found = Advice(values=values, exact=exact, depth=None if exact else depth)
            if exact:
                break
        if found is not None:
            return found
        return Advice(
            message="the game from here is too large to solve exactly within "
            f"{self.budget:g} s; type h to search further"
        )


__all__ = ["HINT_BUDGET", "SEARCH_ITERATIONS", "Advice", "Advisor"]
