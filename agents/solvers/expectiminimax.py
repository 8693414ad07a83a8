"""Memoised expectiminimax over the generic ``Rules`` API. For small games only!

The value of a state is the expected *final* score of player 0 (``rules.returns(terminal)[0]``)
when player 0 maximises it, player 1 minimises it and chance is summed exactly with the
probabilities of ``chance_outcomes``. States are hashable, so each is solved once and memoised.
The search uses an explicit stack, so game length is not limited by Python's recursion limit.

- **Best responses.** Players given a fixed policy (``fixed={1: policy}``) are not optimised:
  their decisions become chance nodes weighted by ``policy.action_probabilities``. With both
  players fixed the value is the exact expected score of the pair of policies.
- **Simultaneous moves.** Where ``rules.simultaneous_info(state)`` says two decisions are made
  without seeing each other (secret bids), the pair is one matrix game solved by the linear
  program of :mod:`psygym_agents.solvers.matrix`. Rules that keep ``RulesBase``'s default (never
  simultaneous) are not asked at every node. Every row action must lead straight to the column
  player's decision with the announced column actions, or end the game (then that row of the
  matrix is the final score whatever the column); anything else (a chance node or another
  decision in between) breaks the contract of ``simultaneous_info`` and raises ``ValueError``.
- **The second secret decision.** Asked about the column player's decision (the state holds the
  row player's secret choice), the solver never reads that choice: it backs up to the
  simultaneous-move node, solves its matrix game (with the whole depth or ply budget counted
  from that node) and plays the column player's equilibrium mix; the value of each column
  action is its expectation against the row player's equilibrium mix. It finds the node with
  the optional rules hook ``rules.simultaneous_parent(state)`` (the state where the pair began,
  or ``None``) when the rules have one; without it, from the nodes it has expanded, solving
  the game from its initial state once if need be. A depth-limited search of rules without the
  hook cannot find an unexpanded node: it then warns once (``RuntimeWarning``) that it values
  that decision from the full state.
- **Depth limit.** With ``max_depth=N`` the search covers N Psychic phases counting the one in
  progress (before the first phase: the first one). A transition that reports an
  ``EventKind.PHASE`` event (the start of a new Psychic phase) beyond that is a leaf worth the
  score so far, and the solver's ``exact`` becomes False. ``max_plies=N`` likewise stops N
  transitions (decisions and chance outcomes) below the state asked about; the two halves of a
  simultaneous move count as one ply (the second), so a limit never cuts between them. A
  depth-limited value is memoised with the depth left.
- **Horizon.** With ``within=h`` (and ``leaf``), the search stays inside the unit of lookahead
  where ``rules.horizon(state) == h``: the first state beyond it is a leaf worth
  ``leaf(state)`` (an estimate of the final score of player 0 from there, such as the score so
  far plus a learned board value), and ``exact`` becomes False once such a leaf is used. This
  is the ``search`` agent's exact search of one cast or turn (:mod:`.search`). With
  ``steps=k`` the search spans ``k`` units: the one ``within`` names and the next ``k - 1``
  (each key then carries the units left, as a depth limit's keys carry the phases left).
  Where the leaf is the score so far, or that plus a board value given as ``leaf_value``,
  the compiled core runs this search (:func:`_compiled_search`).
- **State limit.** With ``max_states`` the search raises :class:`~psygym_agents.solvers.NotSolvable`
  once it has memoised more states than that.

Speed: the rules do nearly all the work. The search calls ``rules.apply(state, a, check=False)``
once per transition (``apply_with_events`` only where a depth limit needs the phase events),
``current_player`` once per state reached, and hashes a new state twice (looked up, stored); it
builds no per-child objects. Games with simultaneous moves take the general loop
(:meth:`Solver._solve_general`), whose helper :meth:`Solver._expand`, like OpenSpiel's
``minimax.expectiminimax`` (see ``/work/shared/STYLE.md`` rule 13), lists the transitions of
chance and decision nodes alike.
"""

from __future__ import annotations

import struct
import weakref
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from psygym_agents.solvers import NotSolvable, require_perfect_information
from psygym_agents.solvers.simultaneous import (
    _AVG,
    _MAX,
    _MIN,
    Simultaneous,
    SimultaneousSearch,
    _parent_hook,
    _simultaneous_hook,
    too_many_states,
)

from psygym.core import CHANCE, TERMINAL, EventKind, Policy

_TIE = 1e-9
"""Two action values closer than this count as equal (the lowest action index wins)."""


@dataclass
class Cache:
    """Memoised values of a solver, reusable across :class:`Solver` objects of the same settings.

    Attributes:
        values: key -> expected final score of player 0. A key is the state (exact search) or
            ``(state, phases_left, plies_left)`` (depth-limited search, -1: no limit).
        cut: whether any value in ``values`` rests on a depth-limit leaf.
        strategies: simultaneous-move nodes -> (row actions, row strategy, column actions,
            column strategy), for the ``optimal`` policy.
        parents: state of a column decision (holding the row player's secret choice) -> key of
            its simultaneous-move node, as the search expanded it.
        root_solved: whether the game was solved from its initial state to find such parents.
        warned: whether a depth-limited search has warned that it could not find one.
    """

    values: dict[Hashable, float] = field(default_factory=dict)
    cut: bool = False
    strategies: dict[Hashable, tuple[tuple[int, ...], np.ndarray, tuple[int, ...], np.ndarray]] = (
        field(default_factory=dict)
    )
    parents: dict[Hashable, Hashable] = field(default_factory=dict)
    root_solved: bool = False
    warned: bool = False


class Solver(SimultaneousSearch):
    """Exact (or depth-limited) expectiminimax for one ``Rules`` object.

    Args:
        rules: the edition's rules (perfect or simultaneous information, ``rules.information``).
        max_depth: Psychic phases to search, counting the one in progress; ``None``: to the end.
        max_plies: transitions (decisions and chance outcomes) to search from the state asked
            about; ``None``: no ply limit.
        cache: a :class:`Cache` (or a plain dict of values) to reuse; it must come from a solver
            with the same ``rules``, ``max_depth`` and ``fixed`` policies.
        max_states: raise :class:`NotSolvable` beyond this many memoised states.
        fixed: ``{player: policy}`` for players whose decisions are fixed (best response and
            policy evaluation); the other players are optimised.
        on_progress: called with the number of memoised states every 10,000 new states
            (:meth:`searched_share` then says roughly how much of the search is done).
        within: search only states whose ``rules.horizon`` is this (``None``: no horizon).
        leaf: value (final score of player 0) of a state beyond a depth limit or the
            horizon; default: the score so far, ``rules.returns(state)[0]``.
        leaf_value: a board value (:class:`psygym_agents.value.BoardValue`): a leaf is worth
            the score so far plus ``leaf_value(rules, state)``, as the ``search`` agent values
            it. Unlike the same ``leaf`` written as a function, the compiled search can take
            it (it evaluates the model on the compiled observation); not with ``leaf``.
        steps: units of lookahead searched with ``within``, counting the one it names.
        phases: the units are Psychic phases (``rules.phase_horizon``; ``within`` names one),
            not ``rules.horizon``'s (a cast or a turn).
        engine: ``"python"`` keeps the search in Python even where the compiled solver could
            take it (benchmarks); ``None``: as ``PSYGYM_ENGINE`` says.
        determinised: the states asked about are determinisations of hidden hands, drawn by
            the caller from what the deciding player may know (:func:`.ismcts.determinize`),
            so solving them shows that player nothing hidden; only then are hidden hands taken.

    Attributes:
        states: number of states memoised so far (decision and chance nodes, not terminals).
        exact: False when a depth limit cut the search somewhere below the states solved.

    Raises:
        NotSolvable: the edition has hidden information (secret hands, ``rules.information``)
            and the states are not ``determinised``.
    """

    def __init__(
        self,
        rules: Any,
        *,
        max_depth: int | None = None,
        max_plies: int | None = None,
        cache: Cache | dict | None = None,
        max_states: int | None = None,
        fixed: Mapping[int, Policy] | None = None,
        on_progress: Callable[[int], None] | None = None,
        within: Hashable | None = None,
        leaf: Callable[[Hashable], float] | None = None,
        steps: int = 1,
        engine: str | None = None,
        leaf_value: Any = None,
        phases: bool = False,
        determinised: bool = False,
    ):
        if max_depth is not None and max_depth < 1:
            raise ValueError(f"max_depth must be at least 1 (Psychic phases), got {max_depth}")
        if max_plies is not None and max_plies < 1:
            raise ValueError(f"max_plies must be at least 1, got {max_plies}")
        self.rules = rules
        self.max_depth = max_depth
        self.max_plies = max_plies
        if steps < 1:
            raise ValueError(f"steps must be at least 1 (units of lookahead), got {steps}")
        if steps > 1 and (within is None or max_depth is not None):
            raise ValueError("steps > 1 needs within= and no max_depth")
        self.within = within
        self.steps = steps
        self.phases = phases
        unit = rules.phase_horizon if phases else rules.horizon
        self._horizon = unit if within is not None else None
        self._limited = max_depth is not None or max_plies is not None or within is not None
        if leaf is not None and leaf_value is not None:
            raise ValueError("give a leaf function or a leaf_value board value, not both")
        self.leaf_value = leaf_value
        self._own_leaf = leaf is not None  # a function only Python can call
        if leaf_value is not None:
            returns = rules.returns

            def leaf(state: Hashable) -> float:
                return returns(state)[0] + leaf_value(rules, state)

        self._leaf = leaf if leaf is not None else (lambda state: rules.returns(state)[0])
        self.max_states = max_states
        self.fixed = dict(fixed or {})
        if len(self.fixed) < rules.num_players and not determinised:
            require_perfect_information(rules)
        own = cache is None and engine != "python"  # the core keeps its own memo
        if cache is None:
            cache = Cache()
        elif isinstance(cache, dict):
            cache = Cache(values=cache)
        self.cache = cache
        self._memo = cache.values
        self._sim_info = _simultaneous_hook(rules)
        self._parent_of = _parent_hook(rules) if self._sim_info is not None else None
        self.on_progress = on_progress
        self._stack: list[Any] = []  # the open nodes of the running search (searched_share)
        self._compiled, self._core = _compiled_search(self, rules, own)

    # ------------------------------------------------------------------ public API
    @property
    def states(self) -> int:
        """Number of states memoised."""
        if self._core is not None:
            return self._core.states
        return len(self._memo)

    @property
    def engine(self) -> str:
        """``core`` where the compiled solver searches, else ``python``."""
        return "python" if self._core is None else "core"

    @property
    def exact(self) -> bool:
        """Whether every value computed so far is exact (no depth-limit leaf below it)."""
        core_cut = self._core is not None and self._limited and self._core.cut
        return not (self.cache.cut or core_cut)

    def searched_share(self) -> float:
        """Rough share of the running search's tree that is finished, for progress displays.

        Each open node counts its finished children as equal shares of it, the child just
        finished included (``on_progress`` is called as a node is finished). Memoised states
        make later children cheaper, so ``states / share`` over-estimates the states a search
        needs, early on by up to a hundred times, less as it goes on.
        """
        if self._core is not None:
            return 0.0  # the compiled search keeps its stack to itself: no estimate
        share, weight = 0.0, 1.0
        for frame in self._stack:  # a tuple (.., n, i, ..), or a list [.., children, i, ..]
            n = frame[3] if type(frame) is tuple else len(frame[3])
            if n:
                share, weight = share + weight * frame[4] / n, weight / n
        return min(1.0, share + weight)

    def value(self, state: Hashable | None = None) -> float:
        """Expected final score of player 0 from ``state`` (default: the initial state)."""
        s = self.rules.initial_state() if state is None else state
        data = self._held(s) if self._core is not None else None
        if data is not None:
            return self._core_call(self._core.value, data)
        return self._value_of(self._root_key(s))

    def action_values(self, state: Hashable) -> dict[int, float]:
        """Each legal action of the player to move -> its value from THAT player's view.

        At a simultaneous-move node the value of a row action is what it guarantees against
        the best column reply; at the column player's node (after the row player's secret
        choice) the value of a column action is its expectation against the row player's
        equilibrium strategy, not against the hidden choice the state holds.

        Raises:
            ValueError: ``state`` is a chance node or terminal.
        """
        rules = self.rules
        player = rules.current_player(state)
        if player < 0:
            raise ValueError(
                "action values exist only at decision nodes, not at chance or terminal states"
            )
        sign = 1.0 if player == 0 else -1.0
        key = self._root_key(state)
        sim = self._simultaneous(state, player)
        out: dict[int, float] = {}
        if sim is not None and sim.row_player == player:
            matrix = self._matrix_values(key, sim)
            for i, a in enumerate(sim.row_actions):
                row = matrix[i]
                out[a] = sign * (min(row) if player == 0 else max(row))
            return out
        parent = self._column_parent(state, player)
        if parent is not None:
            psim = self._simultaneous(self._state_of(parent), 1 - player)
            matrix = self._matrix_values(parent, psim)
            rows, x, cols, _y = self.cache.strategies[parent]
            for j, b in enumerate(cols):
                out[b] = sign * sum(float(p) * matrix[i][j] for i, p in enumerate(x))
            return out
        data = self._held(state) if self._core is not None else None
        if data is not None:
            return {a: sign * v for a, v in self._core_call(self._core.child_values, data)}
        for a in rules.legal_actions(state):
            out[a] = sign * self._child_value(key, a)
        return out

    def best_action(self, state: Hashable) -> tuple[int, float]:
        """An optimal action of the player to move and its value from that player's view.

        Ties go to the lowest action index.
        """
        values = self.action_values(state)
        best = max(values.values())
        action = min(a for a, v in values.items() if v >= best - _TIE)
        return action, values[action]

    def strategy(self, state: Hashable) -> dict[int, float]:
        """Optimal (possibly mixed) strategy of the player to move at ``state``.

        A deterministic best action except at a simultaneous-move node, where it is the row
        player's LP strategy; at the second decision of such a pair (``state`` after the row
        player's secret choice) it is the column strategy of the pair's matrix game, so the
        column player never uses what it may not see.
        """
        rules = self.rules
        player = rules.current_player(state)
        sim = self._simultaneous(state, player)
        if sim is not None:
            key = self._root_key(state)
            self._matrix_values(key, sim)
            rows, x, _cols, _y = self.cache.strategies[key]
            return {a: float(p) for a, p in zip(rows, x) if p > 0}
        parent = self._column_parent(state, player)
        if parent is not None:
            _rows, _x, cols, y = self.cache.strategies[parent]
            return {a: float(p) for a, p in zip(cols, y) if p > 0}
        return {self.best_action(state)[0]: 1.0}

    def _held(self, state: Hashable) -> bytes | None:
        """``state`` as the compiled game's bytes; ``None`` (and Python from now) if it has none.

        A caller may build a state no game of the scenario reaches (a tool that makes a unit a
        psyker to ask what if, say), which the compiled twin's checks refuse; the reference
        solves any state, so this solver goes on in Python, with its own memo.
        """
        try:
            data = self._compiled.encode(state)
            if self._compiled.game.check_state(data) == "":
                return data
        except (ValueError, TypeError, OverflowError, struct.error):
            pass  # past what the twin's state can encode
        self.cache.cut = not self.exact  # what the core's values rested on stays known
        self._core = self._compiled = None
        return None

    def _core_call(self, method: Callable[[bytes], Any], data: bytes) -> Any:
        """A call into the compiled solver, its state limit raised as :class:`NotSolvable`."""
        self._core.set_progress(self.on_progress)
        try:
            return method(data)
        except self._compiled.core.StateLimitError:
            raise NotSolvable(too_many_states(self.max_states)) from None

    # ------------------------------------------------------------------ keys and leaves
    def _root_key(self, state: Hashable) -> Hashable:
        if not self._limited:
            return state
        phases = -1 if self.max_depth is None else self.max_depth - 1
        if self.steps > 1:
            phases = self.steps - 1  # units of lookahead left after the current one
        plies = -1 if self.max_plies is None else self.max_plies
        return (state, phases, plies)

    def _state_of(self, key: Hashable) -> Hashable:
        return key[0] if self._limited else key

    def _step(self, key: Hashable, action: int) -> tuple[Hashable | None, float]:
        """Child key of ``action``, or ``(None, value)`` at a terminal or depth-limit leaf."""
        rules = self.rules
        if not self._limited:
            child = rules.apply(key, action, check=False)
            if rules.current_player(child) == TERMINAL:
                return None, rules.returns(child)[0]
            return child, 0.0
        child, _player, leaf = self._step_limited(key, action)
        return child, leaf

    def _step_limited(self, key: Hashable, action: int) -> tuple[Hashable | None, int, float]:
        """:meth:`_step` of a depth-limited search, also giving the child's player to move.

        Returns:
            ``(child key, its current player, 0.0)``, or ``(None, player, value)`` at a terminal
            or depth-limit leaf.
        """
        rules = self.rules
        state, phases, plies = key
        child, events = self._child(state, action)
        player = rules.current_player(child)
        if player == TERMINAL:
            return None, player, rules.returns(child)[0]
        if self._horizon is not None:
            if self.steps == 1:
                if self._horizon(child) != self.within:
                    self.cache.cut = True
                    return None, player, self._leaf(child)
            elif self._horizon(child) != self._horizon(state):
                if phases == 0:
                    self.cache.cut = True
                    return None, player, self._leaf(child)
                phases -= 1
        if phases >= 0 and any(e.kind == EventKind.PHASE for e in events):
            if phases == 0:
                self.cache.cut = True
                return None, player, self._leaf(child)
            phases -= 1
        if plies >= 0:
            plies -= 1
            if plies == 0:
                self.cache.cut = True
                return None, player, self._leaf(child)
        return (child, phases, plies), player, 0.0

    def _child(self, state: Hashable, action: int) -> tuple[Hashable, tuple[Any, ...]]:
        """The state after ``action``, with its events only under a depth limit.

        Only the events say where a new Psychic phase starts; exact and ply-limited search
        never builds them.
        """
        if self.max_depth is None:
            return self.rules.apply(state, action, check=False), ()
        return self.rules.apply_with_events(state, action, check=False)

    def _child_value(self, key: Hashable, action: int) -> float:
        child, leaf = self._step(key, action)
        return leaf if child is None else self._value_of(child)

    def _value_of(self, key: Hashable) -> float:
        state = self._state_of(key)
        if self.rules.current_player(state) == TERMINAL:
            return self.rules.returns(state)[0]
        hit = self._memo.get(key)
        if hit is None:
            self._solve(key)
            hit = self._memo[key]
        return hit

    # ------------------------------------------------------------------ transitions
    # ------------------------------------------------------------------ the search
    def _solve(self, root: Hashable) -> None:
        """Solve ``root`` and everything below it with an explicit stack."""
        if self._sim_info is not None:
            self._solve_general(root)
        else:
            self._solve_sequential(root)

    def _solve_sequential(self, root: Hashable) -> None:
        """:meth:`_solve` for games without simultaneous moves: the lean search.

        The same depth-first order, sums and comparisons as :meth:`_solve_general`, so the
        same values to the last bit and the same memo; but children are made one at a time as
        the search reaches them (no lists of children, no leaf objects), ``current_player`` is
        asked once per state, and a new state is hashed twice (looked up, then stored) instead
        of three times: the value of a solved child goes straight to its parent. Without a
        depth limit a key is the state itself and a transition is one ``rules.apply``.
        """
        rules = self.rules
        step = self._step_limited if self._limited else None
        memo = self._memo
        get = memo.get
        apply = rules.apply
        current_player = rules.current_player
        legal_actions = rules.legal_actions
        chance_outcomes = rules.chance_outcomes
        returns = rules.returns
        fixed = self.fixed
        limit = self.max_states
        on_progress = self.on_progress

        def expand(state: Hashable, player: int) -> tuple[int, Any]:
            if player == CHANCE:
                return _AVG, chance_outcomes(state)
            if player in fixed:
                return _AVG, list(fixed[player].action_probabilities(rules, state, player).items())
            return (_MAX if player == 0 else _MIN), legal_actions(state)

        # The node being solved lives in these locals; its ancestors wait on ``stack`` with the
        # index of the child being solved below them.
        s = root
        state = root if step is None else root[0]
        kind, items = expand(state, current_player(state))
        n, i, acc = len(items), 0, None
        stack: list[tuple[Any, ...]] = []
        self._stack = stack
        push, pop = stack.append, stack.pop
        while True:
            if i < n:
                if kind == _AVG:
                    a, w = items[i]
                    if w <= 0:
                        i += 1
                        continue
                else:
                    a = items[i]
                if step is None:
                    child = apply(s, a, check=False)
                    player = current_player(child)
                    if player == TERMINAL:
                        v = returns(child)[0]
                        child = None
                else:
                    child, player, v = step(s, a)
                if child is not None:
                    v = get(child)
                    if v is None:
                        push((s, kind, items, n, i, acc))
                        s = child
                        kind, items = expand(child if step is None else child[0], player)
                        n, i, acc = len(items), 0, None
                        continue
            else:
                v = 0.0 if acc is None else float(acc)
                memo[s] = v
                size = len(memo)
                if on_progress is not None and size % 10_000 == 0:
                    on_progress(size)
                if limit is not None and size > limit:
                    raise NotSolvable(too_many_states(limit))
                if not stack:
                    return
                s, kind, items, n, i, acc = pop()
            # Fold the value of child ``i`` into its parent, exactly as _solve_general does.
            if kind == _AVG:
                w = items[i][1]
                acc = v * w if acc is None else acc + v * w
            elif kind == _MAX:
                if acc is None or v > acc:
                    acc = v
            elif acc is None or v < acc:
                acc = v
            i += 1


def _compiled_search(solver: Solver, rules: Any, own_cache: bool) -> tuple[Any, Any]:
    """``(compiled game, compiled solver)`` where the search can run in the core, else Nones.

    The core solves exactly, and runs the ``search`` agent's lookahead: a ``within`` horizon
    (any ``steps``, on a twin with the edition's horizon) whose leaf is the score so far, or
    that plus a ``leaf_value`` board value on a twin with a compiled observation. A search
    with a depth or ply limit, a ``leaf`` function, fixed policies or a memo shared with other
    solvers stays in Python, as does every search under ``PSYGYM_ENGINE=python``, and one with
    simultaneous moves on a twin that does not play them (``Game.has_simultaneous``). Both give
    the same count of states and the same values, to the last bit where no board value and no
    matrix game is involved, to about 1e-15 where a board value is, and to the linear
    programs' tolerance (1e-9 or better) where a matrix game is: the core solves each secret
    pair's game for its value, and Python solves the pairs it is asked about for their
    strategies from the core's matrix (the differential tests hold them together).
    """
    if solver.fixed or not own_cache:
        return None, None
    if solver._limited and (
        solver.within is None or solver.max_depth is not None or solver.max_plies is not None
        or solver._own_leaf
    ):  # fmt: skip
        return None, None
    from psygym.engine import compiled_game

    compiled = compiled_game(rules)
    if compiled is None:
        return None, None
    if solver._sim_info is not None and not getattr(compiled.game, "has_simultaneous", False):
        return None, None
    pairs = solver._sim_info is not None
    if not solver._limited:
        return compiled, compiled.solver(solver.max_states, pairs=pairs)
    if not getattr(compiled.game, "has_horizon", False):  # also a core built before it had one
        return None, None
    net = None
    if solver.leaf_value is not None:
        net = _core_value(compiled, solver.leaf_value)
        if net is None:
            return None, None
    try:
        search = compiled.solver(solver.max_states, within=solver.within, steps=solver.steps,
                                 value=net, pairs=pairs, phases=solver.phases)  # fmt: skip
    except (ValueError, TypeError):
        return None, None  # a horizon the core cannot hold: Python searches
    return compiled, search


_CORE_VALUES: weakref.WeakKeyDictionary[Any, dict[int, Any]] = weakref.WeakKeyDictionary()
"""Board value -> {id of the compiled module: its ``ValueNet`` or None}, made once each."""


def _core_value(compiled: Any, value: Any) -> Any | None:
    """The core's ``ValueNet`` of board value ``value`` for ``compiled``, or ``None``.

    ``None`` (Python values the leaves) for anything but a plain
    :class:`~psygym_agents.value.BoardValue` (a subclass may value otherwise), a twin without a
    compiled observation of the model's input size, or weights the core refuses (a NaN, say).
    """
    from psygym_agents.value import BoardValue

    if type(value) is not BoardValue or compiled.game.observation_size != value.input_size:
        return None
    made = _CORE_VALUES.setdefault(value, {})
    key = id(compiled.core)
    if key not in made:
        weights, biases = [w for w, _ in value.weights], [b for _, b in value.weights]
        try:
            made[key] = compiled.core.ValueNet(value.mean, value.scale, weights, biases)
        except (ValueError, TypeError):
            made[key] = None
    return made[key]


__all__ = ["Cache", "Simultaneous", "Solver"]
