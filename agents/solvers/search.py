"""The ``search`` agent: exact over the Psychic phase (or one cast), a board value beyond it.

A whole duel is far too large to solve, but one Psychic phase often is, and one cast or one
turn (the edition's ``horizon`` says which) always is. :class:`LookaheadPolicy` solves
exactly, with every chance outcome weighted by its exact probability, all states whose
``rules.horizon`` equals the current one (and the next ``steps - 1`` units with
``search:steps=N``); the first state past that edge is a leaf
worth the score so far plus ``V(leaf)``, the learned value of the board
(:class:`psygym_agents.value.BoardValue`). Secret bids inside the unit are matrix games, as in
the exact solver.

- On a scenario the edition declares solvable whole (``Edition.solvable_scenarios``) the agent
  is the exact solver, so its action values are the game's.
- Everywhere else it is exact whenever the rest of the game fits: at a decision it solves the
  game from there exactly within :data:`EXACT_BUDGET` states (a small custom phase, a late
  battle round, the last phase of any game) and answers from that solve, which covers every
  later state of the game; :attr:`LookaheadPolicy.note` then says "exact". A solve that does
  not fit is not tried again in the same unit of lookahead (``rules.horizon``), for that rules
  object.
- With ``phase=True`` (advice, hints, ``search:phase=fit``) it searches the whole Psychic
  phase (every cast and deny of both sides up to the phase's end, ``rules.phase_horizon``)
  whenever that fits :data:`PHASE_BUDGET` states (:func:`phase_solver`), the leaf past the
  phase worth the score so far plus ``V``; one unit of lookahead is the fallback, and the
  note says which. A phase holds the choices a single cast cannot see: how many dice to keep
  for the powers still to come, and whether to keep a deny for a bigger enemy power.
- The board value is the scenario's own where one is shipped, else the edition's general one
  (:mod:`psygym_agents.value.general`: one value for any army list), else playouts of the
  edition's reference heuristic (:mod:`.rollout_value`: every leaf then costs whole games, so
  a search is far slower; ``search:rollouts=N`` asks for them anywhere, with ``N`` playouts a
  board); ``search:value=none`` counts the score so far alone. The agent's
  :attr:`LookaheadPolicy.note` says which.
- Editions with hidden hands get the information-set search (:mod:`.ismcts`) instead, with
  the shipped board value at the end of each Psychic phase (:func:`hidden_search`), or, where
  the value asks for it, the whole phase searched exactly in sampled deals of the unseen cards
  (:mod:`.determinised`): :func:`make_search` chooses.

One solver is kept per unit of lookahead and rules object, so every decision of a cast after
the first reuses what the first one solved, and so does a later game that meets the same unit
(older solvers stay while they hold under :data:`_KEEP_STATES` states). Where the edition has a
compiled twin, the search and the board value run in the core (``Solver(leaf_value=)``).
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from psygym_agents.solvers import NotSolvable
from psygym_agents.solvers.expectiminimax import Solver
from psygym_agents.solvers.rollout_value import ROLLOUTS, RolloutValue

from psygym.core import Information
from psygym.per_rules import PerRules

_KEEP = 4
"""Solvers always kept per rules object: the units of lookahead used most recently."""

_KEEP_STATES = 2_000_000
"""Older solvers are kept too until all of a rules object's hold this many memoised states.

Then only the :data:`_KEEP` most recently used stay (kept solvers grow as later games reach new
states of their units, so the bound is checked at every decision). A game from a board seen
before (``evaluate``, ``value-check``) meets the same units, and a kept solver answers what it
solved already. The bound keeps memory to about a gigabyte."""

_LOOKAHEAD: PerRules[dict[Hashable, Solver]] = PerRules()

EXACT_BUDGET = 200_000
"""States an exact solve of the rest of the game may memoise before ``search`` falls back to
its lookahead: a few hundredths of a CPU second in the core (a miss costs that once per
unit of lookahead and game), and a few tens of megabytes of memo at most."""

PHASE_BUDGET = 250_000  # at least EXACT_BUDGET (LookaheadPolicy.solver relies on it)
"""States a search of the whole Psychic phase may memoise before ``search`` falls back to one
cast: a few hundredths of a CPU second in the core (a later decision of the phase reads the
same solver; one that did not fit is tried again at the next decision, whose rest of the phase
is smaller). The shipped duels' phases hold from a few thousand states to more than two
million; so do generated army lists' (of 4 rounds and 2 psykers a side, between a fifth and
a half of the phases fit 500,000 states, by edition)."""


LOOKAHEAD_BUDGET = 4_000_000
"""States the search of one unit of lookahead (a cast; a Rogue Trader turn) may memoise from a
decision, about a gigabyte. The held-out lists' largest unit holds 2.8 million states (the first
turn of Rogue Trader ``random:5``); a list of four psykers a side can hold far more. Where the
unit does not fit, ``search`` plays the edition's reference heuristic at that decision and says
so, and advice says the decision is too large (:class:`UnitTooLarge`)."""


class UnitTooLarge(NotSolvable):
    """The unit of lookahead of a decision does not fit :data:`LOOKAHEAD_BUDGET` states."""


class _Fit:
    """Per rules object: the exact solver that fitted each budget last, and what did not fit.

    Also the whole-phase searches (:func:`phase_solver`), the one that fitted last per board
    value. What did not fit is remembered by state across games (whether it fits is a function
    of the state alone, so the moves do not depend on the games played before), and by unit of
    lookahead within a game only (:func:`forget_failures`).
    """

    __slots__ = ("failed", "failed_states", "phase_failed", "phases", "solvers", "unit_failed")

    def __init__(self) -> None:
        self.solvers: dict[int, Solver] = {}  # budget -> the solver that fitted it last
        self.failed: dict[Any, int] = {}  # unit -> the largest budget it did not fit (this game)
        self.failed_states: set[Any] = set()  # (state, budget) not fitting, from any game
        self.phases: dict[tuple[int, int], Solver] = {}  # (id of the value, budget) -> solver
        self.phase_failed: set[Any] = set()
        self.unit_failed: set[Any] = set()  # (state, lookahead key) over LOOKAHEAD_BUDGET


_FAILED_KEPT = 100_000
"""States remembered as not fitting, per kind and rules object, before they are forgotten."""


def _remember(failed: set[Any], key: Any) -> None:
    if len(failed) >= _FAILED_KEPT:
        failed.clear()
    failed.add(key)


def _fit_of(rules: Any) -> _Fit:
    fit = _FITS.get(rules)
    if fit is None:
        fit = _FITS[rules] = _Fit()
    return fit


_FITS: PerRules[_Fit] = PerRules()


def fitted_solver(rules: Any, state: Hashable, budget: int = EXACT_BUDGET) -> Solver | None:
    """An exact solver holding the rest of the game from ``state``, if it fits ``budget`` states.

    Unless a solve with at least ``budget`` states already failed in this unit of lookahead
    (``rules.horizon``) in this game, the solver that fitted last is asked first (a later
    state of the same game is in what it solved), else a fresh one solves from ``state``.
    ``None`` where the rest of the game does not fit (the unit and budget are remembered until
    :func:`forget_failures`, which :meth:`LookaheadPolicy.restart` calls as a game starts).

    So the moves are a function of the game's own history, whatever games the process played
    before: a kept solver answers only where a fresh one would fit too, and exactly as it; a
    state whose fresh solve did not fit in any game fails its unit at once, as a solve would.
    """
    from psygym_agents.solvers import NotSolvable

    fit = _fit_of(rules)
    unit = rules.horizon(state)
    if fit.failed.get(unit, 0) >= budget:
        return None  # asked first: a solver kept from another game must not answer instead
    if (state, budget) not in fit.failed_states:
        last = fit.solvers.get(budget)  # per budget: a larger one must not answer for a smaller
        if last is not None:
            try:
                _solve_for(last, rules, state)
                return last
            except NotSolvable:
                del fit.solvers[budget]  # its memo and this state's game are past the budget
        solver = Solver(rules, max_states=budget)
        try:
            _solve_for(solver, rules, state)
            fit.solvers[budget] = solver
            return solver
        except NotSolvable:
            _remember(fit.failed_states, (state, budget))
    fit.failed[unit] = max(budget, fit.failed.get(unit, 0))
    return None


def forget_failures(rules: Any) -> None:
    """Forget which units of lookahead did not fit an exact solve (a new game starts)."""
    _fit_of(rules).failed.clear()


def phase_solver(rules: Any, state: Hashable, value: Any = None, budget: int = PHASE_BUDGET,
                 determinised: bool = False, phases: int = 1) -> Solver | None:  # fmt: skip
    """A search of the whole Psychic phase of ``state``, if it fits ``budget`` states.

    Every cast and deny of both sides up to the phase's end (``rules.phase_horizon``), a leaf
    past it worth the score so far plus ``value``; with ``phases`` > 1, up to the end of the
    ``phases - 1`` phases after it. ``None`` where it does not fit (the state is remembered,
    and not tried again; a later state of the phase is).

    The solver that fitted last for ``value`` and ``budget`` is asked first: a later decision of
    the same phase is among what it searched.
    """
    from psygym_agents.solvers import NotSolvable

    fit = _fit_of(rules)
    unit = rules.phase_horizon(state)
    key = (id(value), budget, phases)
    solver = fit.phases.get(key)
    if solver is not None and solver.within == unit:
        try:
            _solve_for(solver, rules, state)
            return solver
        except NotSolvable:
            pass  # this board's phase and what it held before are past the budget together
    fit.phases.pop(key, None)
    if (state, key) in fit.phase_failed:
        return None
    solver = Solver(rules, within=unit, phases=True, leaf_value=value, max_states=budget,
                    determinised=determinised, steps=phases)  # fmt: skip
    try:
        _solve_for(solver, rules, state)
    except NotSolvable:
        _remember(fit.phase_failed, (state, key))
        return None
    fit.phases[key] = solver
    return solver


def _solve_for(solver: Solver, rules: Any, state: Hashable) -> None:
    """Solve what the agent's answers at ``state`` read.

    That is the game from ``state``, and at the second of a secret pair of decisions the pair's
    node too (its values come from that node's matrix game).
    """
    solver.value(state)
    parent = getattr(rules, "simultaneous_parent", None)
    origin = parent(state) if parent is not None else None
    if origin is not None:
        solver.value(origin)


def solvable_whole(rules: Any) -> bool:
    """Whether ``rules``' edition declares this scenario solvable exactly in one piece."""
    from psygym.edition import edition_of

    scenario = getattr(getattr(rules, "scenario", None), "name", None)
    try:
        return scenario in edition_of(rules).solvable_scenarios
    except (KeyError, ValueError):
        return False


def rollout_value(rules: Any, rollouts: int = ROLLOUTS) -> RolloutValue | None:
    """Leaves valued by playouts of the edition's reference heuristic (:mod:`.rollout_value`).

    ``None`` if the edition has none (then the board beyond counts the score so far alone).
    """
    from psygym.policies import reference_policy

    policy = reference_policy(rules)
    return None if policy is None else RolloutValue(policy, rollouts)


def meta_of(value: Any) -> dict[str, Any]:
    """A board value's JSON metadata (``{}`` for none, or a plain function)."""
    return getattr(value, "meta", None) or {}


NO_VALUE = "none"
"""``LookaheadPolicy(value=NO_VALUE)``: no board value, the board beyond counts the score alone
(``search:value=none``)."""


class LookaheadPolicy:
    """Exact search of the current unit of lookahead with ``V`` at its edge.

    For perfect and simultaneous information (secret bids are matrix games).

    Args:
        rules: the rules this agent plays.
        value: the board value; ``None``: the shipped one for the scenario (its own, else the
            edition's general one), if any; :data:`NO_VALUE`: none (the score so far alone).
        exact: ``True`` solves the whole game exactly, ``False`` never tries; ``None``: the
            whole game where the edition says the scenario is solvable whole, else the rest of
            the game whenever it fits ``budget`` states (:func:`fitted_solver`).
        budget: the states an exact solve of the rest of the game may hold (``search:exact=N``;
            default :data:`EXACT_BUDGET`).
        steps: units of lookahead searched exactly (the current one and ``steps - 1`` more);
            ``None``: the ``search_steps`` the board value's JSON records (else 1).
        phase: search the whole Psychic phase whenever it fits :data:`PHASE_BUDGET` states
            (:func:`phase_solver`), the unit of lookahead only where it does not: what
            ``advise``, ``play --hint`` and ``serve``'s hints answer with; the game agent
            ``search`` takes it with ``search:phase=fit``. ``None``: as the board value's JSON
            records (``"search_phase": "fit"``, else the unit of lookahead alone): a phase
            search costs several times the CPU of a game, so a value asks for it only where it
            was measured to pay (its ``search_phase_note`` says where; ``docs/strength.md``
            has the tables; the duels' margins did not change measurably with it).
        phases: with more than 1, search that many Psychic phases whole (the current one and
            ``phases - 1`` after it, ``search:phases=N``) wherever they fit
            :data:`PHASE_BUDGET` states, before the phase alone and the unit of lookahead: on
            Rogue Trader, where a phase is a turn, ``phases=3`` reaches the end of the mover's
            next turn, where the psi-points a bid keeps are spent. ``None``: the
            ``search_phases`` the board value's JSON records (else 1).

    Attributes:
        note: one plain sentence on what the last values asked for are (exact, or exact within
            the unit plus an estimate).
        exact: whether they are exact.
    """

    name = "search"

    def __init__(
        self, rules: Any, value: Any = None, *, exact: bool | None = None,
        steps: int | None = None, phase: bool | None = None, budget: int = EXACT_BUDGET,
        phases: int | None = None,
    ):  # fmt: skip
        from psygym_agents.value import shipped_value

        self.rules = rules
        self.exact = solvable_whole(rules) if exact is None else exact
        self.always_exact = self.exact
        # Exact whenever the rest of the game fits (not where a budget is asked for nothing).
        self.fits = exact is None and not self.exact
        self.budget = budget
        if self.exact or value is NO_VALUE:
            self.value = None
        else:
            self.value = value if value is not None else shipped_value(rules)
            if self.value is None:
                self.value = rollout_value(rules)
        if steps is None:
            steps = int(meta_of(self.value).get("search_steps", 1))
        self.steps = steps
        if phase is None:
            phase = meta_of(self.value).get("search_phase") == "fit"
        self.phase = phase
        phases = _asked(self.value, "search_phases", 1, 1) if phases is None else phases
        if phases < 1:
            raise ValueError(f"phases must be at least 1, got {phases}")
        self.phases = phases
        scenario = getattr(getattr(rules, "scenario", None), "name", "")
        if self.value is None:
            beyond = (f"no board value is trained for {rules.edition} {scenario}, so the board "
                      "beyond counts only the score so far")  # fmt: skip
        else:
            err = getattr(self.value, "error_note", "")
            by = (
                " by the edition's value for any army list"
                if meta_of(self.value).get("general")
                else ""
            )
            beyond = f"the board beyond is estimated{by}" + (f" ({err})" if err else "")
        many = f"the whole Psychic phase and the {phases - 1} after it"
        if self.exact:
            self.note = f"exact: {rules.edition} {scenario} is solved whole"
        elif phases > 1:
            self.note = (f"exact over {many} where they fit within {PHASE_BUDGET:,} states, "
                         f"else {'the whole phase where it fits, else ' if phase else ''}"
                         f"{self.span}; {beyond}")  # fmt: skip
        elif phase:
            self.note = (f"exact over the whole Psychic phase where it fits within "
                         f"{PHASE_BUDGET:,} states, else {self.span}; {beyond}")  # fmt: skip
        else:
            self.note = f"exact {self.span}; {beyond}"
        self._lookahead_note = f"exact {self.span}; {beyond}"
        from psygym.policies import reference_policy

        self._fallback = reference_policy(rules)
        self._phase_note = f"exact over the whole Psychic phase; {beyond}"
        self._phases_note = f"exact over {many}; {beyond}"
        if (phase or phases > 1) and not self.exact:
            missed = "the whole Psychic phase does" if phase else f"{many} do"
            self._lookahead_note = (f"exact {self.span} ({missed} not fit within "
                                    f"{PHASE_BUDGET:,} states); {beyond}")  # fmt: skip

    @property
    def span(self) -> str:
        """What is searched exactly, in player words ("within each cast", ...)."""
        if self.steps == 1:
            return f"within each {self.unit}"
        return f"over each {self.unit} and the {self.steps - 1} after it"

    @property
    def _too_large_note(self) -> str:
        """The note where the unit of lookahead does not fit :data:`LOOKAHEAD_BUDGET` states."""
        note = (f"the {self.unit} of this decision does not fit within {LOOKAHEAD_BUDGET:,} "
                "states, so it is not searched")  # fmt: skip
        if self._fallback is None:
            return note
        return f"{note}: search plays the reference heuristic {self._fallback.name}'s move there"

    @property
    def unit(self) -> str:
        """What one unit of lookahead is, in player words."""
        return "turn" if self.rules.information == Information.SIMULTANEOUS else "cast"

    def solver(self, rules: Any, state: Hashable) -> Solver:
        """The solver of ``state``: exact where it fits, else that of its unit of lookahead.

        Sets :attr:`note` and :attr:`exact` to say which answers.
        """
        if self.always_exact:
            from psygym_agents.solvers.policy import shared_solver

            return shared_solver(rules)
        # The phases first: where they do not fit PHASE_BUDGET states, the rest of the game
        # (which holds them) does not fit a budget no larger either, and is not tried.
        whole, note = None, self._phase_note
        if self.phases > 1:
            whole = phase_solver(rules, state, self.value, phases=self.phases)
            note = self._phases_note
        if whole is None and self.phase:
            whole, note = phase_solver(rules, state, self.value), self._phase_note
        searched = self.phase or self.phases > 1
        if self.fits and (whole is not None or not searched or self.budget > PHASE_BUDGET):
            fitted = fitted_solver(rules, state, self.budget)
            if fitted is not None:
                self.exact = True
                self.note = ("exact: the rest of the game from here fits within "
                             f"{self.budget:,} states and is solved whole")  # fmt: skip
                return fitted
        self.exact = False
        if whole is not None:
            self.note = note
            return whole
        self.note = self._lookahead_note
        return self._unit_solver(rules, state)

    def _unit_solver(self, rules: Any, state: Hashable) -> Solver:
        """The search of ``state``'s unit of lookahead, with ``state`` solved in it.

        A kept solver that passes the budget with what earlier games memoised is replaced by a
        fresh one, so whether a unit fits is a function of the state alone.

        Raises:
            UnitTooLarge: it does not fit :data:`LOOKAHEAD_BUDGET` states from ``state``.
        """
        per_rules, fit = _LOOKAHEAD.setdefault(rules, {}), _fit_of(rules)
        within = rules.horizon(state)
        key = (within, id(self.value), self.steps)
        if (state, key) not in fit.unit_failed:
            kept = per_rules.pop(key, None)
            for solver in (kept, None) if kept is not None else (None,):
                if solver is None:
                    # A leaf is worth the score so far plus V (the compiled search takes both).
                    solver = Solver(rules, within=within, leaf_value=self.value,
                                    steps=self.steps, max_states=LOOKAHEAD_BUDGET)  # fmt: skip
                try:
                    _solve_for(solver, rules, state)
                except NotSolvable:
                    continue
                per_rules[key] = solver  # the most recently used last
                _trim(per_rules)
                return solver
            _remember(fit.unit_failed, (state, key))
        self.note = self._too_large_note
        raise UnitTooLarge(self._too_large_note)

    def restart(self) -> None:
        """A new game starts: forget which units of lookahead an exact solve did not fit.

        The reference heuristic played where a unit is too large is restarted too, if it
        remembers a game.
        """
        forget_failures(self.rules)
        if self._fallback is not None:
            from psygym.core import restart_policies

            restart_policies([self._fallback])

    def action_values(self, rules: Any, state: Hashable) -> dict[int, float]:
        """Each legal action -> the final score it leads to, from the mover's point of view."""
        return self.solver(rules, state).action_values(state)

    def value_of(self, rules: Any, state: Hashable) -> float:
        """The final score of player 0 expected from ``state`` (exact within the unit)."""
        return self.solver(rules, state).value(state)

    def action_probabilities(self, rules: Any, state: Hashable, player: int) -> dict[int, float]:
        """The best action (a mixed strategy at a secret simultaneous move).

        Where the unit of lookahead is too large (:class:`UnitTooLarge`), the reference
        heuristic's.
        """
        try:
            return self.solver(rules, state).strategy(state)
        except UnitTooLarge:
            if self._fallback is None:
                raise
            return self._fallback.action_probabilities(rules, state, player)

    def choose(self, rules: Any, state: Hashable, player: int) -> int:
        """The most probable action of :meth:`action_probabilities`."""
        probs = self.action_probabilities(rules, state, player)
        return max(probs, key=lambda a: (probs[a], -a))

    def __repr__(self) -> str:
        return f"<policy {self.name}>"


def _trim(solvers: dict[Hashable, Solver]) -> None:
    """At :data:`_KEEP_STATES` states or more in all, keep only the :data:`_KEEP` newest solvers.

    All older ones go at once rather than one by one: games from one board use its units in
    the same order, and dropping the least recently used one at a time would drop each unit
    just before the next game needs it.
    """
    if len(solvers) > _KEEP and sum(s.states for s in solvers.values()) >= _KEEP_STATES:
        for key in list(solvers)[:-_KEEP]:
            del solvers[key]


_MOST = 10**9
"""The largest number an option of ``search`` takes (the compiled search takes 64-bit sizes)."""


def _at_least_one(name: str, text: str, most: int = _MOST) -> int:
    """The whole number ``text`` of option ``name`` (one line naming it if not from 1 to most)."""
    digits = text.lstrip("0")
    if not (text.isascii() and text.isdigit() and 0 < len(digits) <= 12 and int(digits) <= most):
        raise ValueError(f"search: {name} must be a whole number from 1 to {most:,}, got {text!r}")
    return int(text)


_OPTIONS = ("steps", "value", "exact", "phase", "phases", "rollouts")
_ALLOWED = "steps=N, value=PATH|none, exact=no|fit|N, phase=no|fit, phases=N, rollouts=N"


def make_search(rules: Any, arg: str | None = None) -> Any:
    """Factory of the ``search`` agent.

    :class:`LookaheadPolicy`, or for hidden hands the information-set search of :mod:`.ismcts`.

    Args:
        rules: the rules to play.
        arg: for hidden hands, ``iterations=N,seed=N,exploration=X,value=PATH|none``
            (:func:`hidden_search`); otherwise a board-value file path
            (``search:runs/v/value.safetensors``, a scenario's own or an edition's general one),
            ``value=none`` (no board value: the score so far alone), ``steps=N``, ``exact=no``
            (never the exact solve of a rest of the game that fits), ``exact=N`` (solve the rest
            of the game whenever it fits ``N`` states, default :data:`EXACT_BUDGET`) and
            ``phase=fit`` (the whole
            Psychic phase searched wherever it fits, as advice does; ``phase=no`` the unit of
            lookahead alone; the default is what the board value's JSON asks for, see
            :class:`LookaheadPolicy`), ``phases=N`` (``N`` whole phases searched wherever
            they fit, else as without it) and ``rollouts=N`` (leaves valued by ``N`` playouts
            of the edition's reference heuristic instead of a board value,
            :mod:`.rollout_value`).
    """
    from psygym_agents.solvers import has_hidden_information

    if has_hidden_information(rules):
        return hidden_search(rules, arg)
    value, steps, exact, phase, budget, phases = None, None, None, None, EXACT_BUDGET, None
    rollouts = 0
    # ";" separates options too (a comma-separated agent list cannot hold a comma in one agent)
    for part in (arg or "").replace(";", ",").split(","):
        name, sep, text = part.strip().partition("=")
        if not name:
            continue
        if not sep and name in _OPTIONS:
            raise ValueError(f"search: option {name!r} needs a value ({name}=...); allowed: "
                             f"{_ALLOWED}")  # fmt: skip
        if not sep:  # a bare path is the board value
            name, text = "value", name
        if name == "steps":
            steps = _at_least_one(name, text)
        elif name == "exact":
            if text not in ("no", "fit"):
                budget = _at_least_one("exact (a number of states, or no or fit)", text)
            exact = False if text == "no" else None
        elif name == "phases":
            phases = _at_least_one(name, text)
        elif name == "rollouts":
            rollouts = _at_least_one(name, text)
        elif name == "phase":
            if text not in ("no", "fit"):
                raise ValueError(f"search: phase must be no or fit, got {text!r}")
            phase = text == "fit"
        elif name == "value" and text.lower() == "none":
            value = NO_VALUE
        elif name == "value":
            from psygym_agents.value import load_value

            value = load_value(rules, text)
        else:
            raise ValueError(f"search: unknown option {name!r}; allowed: {_ALLOWED}")
    if rollouts:
        if value is not None:
            raise ValueError("search: rollouts=N values the leaves by playouts; it cannot go "
                             "with value=")  # fmt: skip
        value = rollout_value(rules, rollouts)
        if value is None:
            raise ValueError(f"search: rollouts=N needs a reference heuristic, and edition "
                             f"{rules.edition} has none")  # fmt: skip
    return LookaheadPolicy(rules, value, steps=steps, exact=exact, phase=phase, budget=budget,
                           phases=phases)  # fmt: skip


def _asked(value: Any, key: str, default: int, low: int) -> int:
    """What the board value's JSON asks the search for under ``key`` (``search_phases``...).

    Raises:
        ValueError: the entry is not a whole number >= ``low`` (one line).
    """
    asked = meta_of(value).get(key, default)
    if isinstance(asked, bool) or not isinstance(asked, int) or asked < low:
        raise ValueError(f"board value: {key} must be a whole number >= {low}, got {asked!r}")
    return asked


HIDDEN_ITERATIONS = 300
"""Iterations per decision of the information-set search (about 0.05 CPU s on the duel).

Measured on the duel of the edition with hidden hands (``docs/strength.md``), against ``tuned``,
80 games per seat (exploration 0.3): 300 iterations gave
+2.69 +- 1.62 per game, 1000 gave +2.98 +- 1.80 at three times the time: no measurable gain."""
HIDDEN_EXPLORATION = 0.3
"""UCB exploration constant of the information-set search (times the spread of scores seen).

Measured on the same duel at 300 iterations against ``tuned``, 80 games per seat: 0.1 gave
+0.85 +- 1.52, 0.3 gave +2.69 +- 1.62, 1.0 gave +1.72 +- 1.76 per game."""


def hidden_search(rules: Any, arg: str | None = None) -> Any:
    """The ``search`` agent for hidden hands: an information-set search with a board value.

    :class:`~.ismcts.SearchPolicy`, or, where the board value's JSON asks for it
    (``"search_determinisations": N``) or ``determinisations=N`` does, the whole Psychic phase
    searched exactly in ``N`` deals of the unseen cards (:class:`~.determinised.DeterminisedSearch`,
    the information-set search where a deal's phase does not fit; ``determinisations=0``: never).

    The rollout beyond the tree is the edition's reference heuristic; the board after the
    phase is valued by the scenario's shipped board value when there is one. That value is
    where the strength comes from: on the duel against ``tuned``, 200 games per seat with
    common random numbers, ``search`` scored +3.42 +- 1.09 per game and ``search:value=none``
    +0.22 +- 0.90 on the same seeds.

    Args:
        rules: the rules to play.
        arg: ``iterations=N`` (default :data:`HIDDEN_ITERATIONS`), ``seed=N``,
            ``exploration=X`` (default :data:`HIDDEN_EXPLORATION`), ``value=PATH`` (a
            board-value file) or ``value=none`` (the score so far only), ``determinisations=N``
            (the deals of the determinised phase search; default: what the value asks for),
            separated by ``,`` or ``;`` (``search:iterations=400;value=none`` in a
            comma-separated agent list).

    Raises:
        ValueError: an unknown option or a bad number (one line: which, and what is allowed).
    """
    from psygym_agents.solvers.ismcts import SHIPPED, SearchPolicy

    from psygym.policies import reference_policy

    allowed = "iterations=N, seed=N, exploration=X, value=PATH|none, determinisations=N"
    kwargs: dict[str, Any] = {"iterations": HIDDEN_ITERATIONS, "exploration": HIDDEN_EXPLORATION}
    deals: int | None = None
    value: Any = SHIPPED
    # ";" separates options too: a comma-separated agent list (``evaluate --agents``) cannot
    # hold a comma inside one agent's options.
    for part in (arg or "").replace(";", ",").split(","):
        name, sep, text = (x.strip() for x in part.partition("="))
        if not name:
            continue
        if not sep:
            raise ValueError(f"search: option {name!r} needs a value; allowed: {allowed}")
        if name in ("iterations", "seed", "determinisations"):
            if not text.isdigit() or (name == "iterations" and int(text) < 1):
                low = 1 if name == "iterations" else 0
                raise ValueError(f"search: {name} must be a whole number >= {low}, got {text!r}")
            if name == "determinisations":
                deals = int(text)
            else:
                kwargs[name] = int(text)
        elif name == "exploration":
            try:
                kwargs[name] = float(text)
            except ValueError:
                raise ValueError(f"search: exploration must be a number, got {text!r}") from None
            if not kwargs[name] >= 0:
                raise ValueError(f"search: exploration must be >= 0, got {text!r}")
        elif name == "value":
            if text.lower() == "none":
                value = None
            else:
                from psygym_agents.value import load_value

                value = load_value(rules, text)
        else:
            raise ValueError(f"search: unknown option {name!r}; allowed: {allowed}")
    search = SearchPolicy(rules, rollout=reference_policy(rules), value=value, **kwargs)
    if deals is None:
        deals = _asked(search.value, "search_determinisations", 0, 0)
    if not deals:
        return search
    from psygym_agents.solvers.determinised import DeterminisedSearch

    return DeterminisedSearch(rules, search.value, determinisations=deals,
                              seed=kwargs.get("seed", 0), fallback=search, solve=phase_solver,
                              budget=PHASE_BUDGET)  # fmt: skip


__all__ = [
    "EXACT_BUDGET",
    "HIDDEN_EXPLORATION",
    "HIDDEN_ITERATIONS",
    "LookaheadPolicy",
    "NO_VALUE",
    "PHASE_BUDGET",
    "hidden_search",
    "phase_solver",
    "fitted_solver",
    "make_search",
    "solvable_whole",
]
