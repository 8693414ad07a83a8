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

import warnings
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from psygym_agents.solvers import NotSolvable, require_perfect_information
from psygym_agents.solvers.matrix import solve_matrix_game

from psygym.core import CHANCE, TERMINAL, EventKind, Policy, RulesBase

_AVG, _MAX, _MIN, _MATRIX = 0, 1, 2, 3
_TIE = 1e-9
"""Two action values closer than this count as equal (the lowest action index wins)."""


def _simultaneous_hook(rules: Any) -> Callable[[Hashable], Any] | None:
    """``rules.simultaneous_info``, or ``None`` where it is ``RulesBase``'s (always ``None``).

    Asking the default at every decision node only costs time, so the search skips it.
    """
    hook = getattr(rules, "simultaneous_info", None)
    if hook is None or getattr(hook, "__func__", None) is RulesBase.simultaneous_info:
        return None
    return hook


def _parent_hook(rules: Any) -> Callable[[Hashable], Hashable | None] | None:
    """The optional ``rules.simultaneous_parent``, or ``None`` where the rules lack it.

    ``simultaneous_parent(state)`` is the state where a simultaneous move began (the row
    player's node, where ``simultaneous_info`` announced it) when ``state`` is that move's
    second decision, else ``None``. ``RulesBase``'s default, if it has one, counts as absent.
    """
    hook = getattr(rules, "simultaneous_parent", None)
    default = getattr(RulesBase, "simultaneous_parent", None)
    if hook is None or (default is not None and getattr(hook, "__func__", None) is default):
        return None
    return hook


class _Leaf:
    """A terminal or depth-limit child: its value is known without search."""

    __slots__ = ("value",)

    def __init__(self, value: float):
        self.value = value


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


@dataclass(frozen=True)
class Simultaneous:
    """A simultaneous-move node, normalised from ``rules.simultaneous_info(state)``.

    Attributes:
        row_player: the player deciding at ``state`` (the first of the two decisions).
        row_actions: its legal actions.
        col_actions: the other player's legal actions (the same whatever the row player chose).
        row_probs: the row player's fixed mixed strategy when it plays a fixed policy (then
            the column player best-responds to it); ``None`` for a matrix game.
    """

    row_player: int
    row_actions: tuple[int, ...]
    col_actions: tuple[int, ...]
    row_probs: tuple[float, ...] | None = None


class Solver:
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
        steps: units of lookahead searched with ``within``, counting the one it names.

    Attributes:
        states: number of states memoised so far (decision and chance nodes, not terminals).
        exact: False when a depth limit cut the search somewhere below the states solved.

    Raises:
        NotSolvable: the edition has hidden information (secret hands, ``rules.information``).
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
        self._horizon = rules.horizon if within is not None else None
        self._limited = max_depth is not None or max_plies is not None or within is not None
        self._leaf = leaf if leaf is not None else (lambda state: rules.returns(state)[0])
        self.max_states = max_states
        self.fixed = dict(fixed or {})
        if len(self.fixed) < rules.num_players:
            require_perfect_information(rules)
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

    # ------------------------------------------------------------------ public API
    @property
    def states(self) -> int:
        """Number of states memoised."""
        return len(self._memo)

    @property
    def exact(self) -> bool:
        """Whether every value computed so far is exact (no depth-limit leaf below it)."""
        return not self.cache.cut

    def searched_share(self) -> float:
        """Rough share of the running search's tree that is finished, for progress displays.

        Each open node counts its finished children as equal shares of it, the child just
        finished included (``on_progress`` is called as a node is finished). Memoised states
        make later children cheaper, so ``states / share`` over-estimates the states a search
        needs, early on by up to a hundred times, less as it goes on.
        """
        share, weight = 0.0, 1.0
        for frame in self._stack:  # a tuple (.., n, i, ..), or a list [.., children, i, ..]
            n = frame[3] if type(frame) is tuple else len(frame[3])
            if n:
                share, weight = share + weight * frame[4] / n, weight / n
        return min(1.0, share + weight)

    def value(self, state: Hashable | None = None) -> float:
        """Expected final score of player 0 from ``state`` (default: the initial state)."""
        s = self.rules.initial_state() if state is None else state
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

    def _column_parent(self, state: Hashable, player: int) -> Hashable | None:
        """Key of the simultaneous-move node whose column decision ``state`` is, if any.

        Such a state holds the row player's secret choice, so the solver values it only through
        the node's matrix game, solved from that node with the whole depth or ply budget. The
        node comes from ``rules.simultaneous_parent`` if the rules have it, else from the nodes
        expanded so far (the game is solved from its initial state once to find it).

        Raises:
            ValueError: ``rules.simultaneous_parent(state)`` is not a simultaneous-move node
                of the other player with ``state`` among its row actions' results.
        """
        if self._sim_info is None or player < 0 or player in self.fixed:
            return None
        if self._parent_of is not None:
            origin = self._parent_of(state)
            if origin is None:
                return None
            parent = self._root_key(origin)
        else:
            parents = self.cache.parents
            found = parents.get(state)
            if found is None and not self.cache.root_solved:
                self.cache.root_solved = True
                self.value(self.rules.initial_state())
                found = parents.get(state)
            if found is None:
                self._warn_unfound(state)
                return None
            # The search may have reached the node with less depth left: count from it.
            parent = self._root_key(self._state_of(found))
        if parent not in self.cache.strategies:
            psim = self._simultaneous(self._state_of(parent), 1 - player)
            if psim is None or psim.row_player == player:
                if self._parent_of is None:  # pragma: no cover - recorded parents are such nodes
                    return None
                raise ValueError(
                    "rules.simultaneous_parent returned a state that is not a simultaneous "
                    "move of the other player"
                )
            self._matrix_values(parent, psim)
        if self._parent_of is not None and self.cache.parents.get(state) is None:
            raise ValueError(
                "rules.simultaneous_parent returned a simultaneous move none of whose row "
                "actions leads to the state asked about"
            )
        return parent

    def _warn_unfound(self, state: Hashable) -> None:
        """Warn once that a limited search may be valuing a second secret decision in full view."""
        if not self._limited or self.cache.warned or not self.rules.is_response(state):
            return
        self.cache.warned = True
        warnings.warn(
            "a depth-limited search cannot find the simultaneous move this response answers "
            "(the rules have no simultaneous_parent hook), so it values the decision from the "
            "full state, which may hold the other player's secret choice",
            RuntimeWarning,
            stacklevel=4,
        )

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

    def _step_row(self, key: Hashable, action: int) -> tuple[Hashable | None, float]:
        """:meth:`_step` for the row player's half of a simultaneous move.

        That half is no ply of its own and never a depth-limit leaf: the column player's half
        after it is the ply, so a limit never cuts between the two secret decisions.

        Returns:
            ``(child key, 0.0)``, or ``(None, value)`` when the row action ends the game.
        """
        if not self._limited:
            return self._step(key, action)
        rules = self.rules
        state, phases, plies = key
        child, events = self._child(state, action)
        if rules.current_player(child) == TERMINAL:
            return None, rules.returns(child)[0]
        # A secret pair never spans the start of a Psychic phase; were one to start here, it
        # would count against the phases left (if any) but never make a leaf of this half.
        if phases > 0 and any(e.kind == EventKind.PHASE for e in events):
            phases -= 1
        return (child, phases, plies), 0.0

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
    def _simultaneous(self, state: Hashable, player: int) -> Simultaneous | None:
        """The simultaneous move at ``state`` as the solver must treat it, if any.

        Both players optimised: a matrix game (LP). Row player fixed: the column player
        best-responds to the row player's mixed strategy without seeing its draw. Column
        player fixed: an ordinary sequence (its policy must not look at the secret choice).
        """
        if self._sim_info is None or player < 0:
            return None
        info = self._sim_info(state)
        if info is None:
            return None
        row = int(info.row_player)
        if 1 - row in self.fixed:
            return None
        rows = tuple(info.row_actions)
        probs = None
        if row in self.fixed:
            dist = self.fixed[row].action_probabilities(self.rules, state, row)
            probs = tuple(float(dist.get(a, 0.0)) for a in rows)
        return Simultaneous(
            row_player=row,
            row_actions=rows,
            col_actions=tuple(info.col_actions),
            row_probs=probs,
        )

    def _expand(self, key: Hashable) -> tuple[int, list[Any], list[Any]]:
        """``(kind, weights, children)`` of a non-terminal node.

        ``children[i]`` is a child key, or a ``_Leaf`` holding its value. ``weights`` are
        probabilities at chance and fixed-policy nodes (kind average), actions at max/min
        nodes, and for a matrix node the children are the flattened row-major matrix.
        """
        rules = self.rules
        state = self._state_of(key)
        player = rules.current_player(state)
        sim = None if player == CHANCE else self._simultaneous(state, player)
        if sim is not None:
            return _MATRIX, [sim], self._matrix_children(key, sim)
        if player == CHANCE:
            pairs = rules.chance_outcomes(state)
        elif player in self.fixed:
            pairs = list(self.fixed[player].action_probabilities(rules, state, player).items())
        else:
            actions = rules.legal_actions(state)
            children = []
            for a in actions:
                child, leaf = self._step(key, a)
                children.append(_Leaf(leaf) if child is None else child)
            return (_MAX if player == 0 else _MIN), actions, children
        weights, children = [], []
        for a, p in pairs:
            if p <= 0:
                continue
            child, leaf = self._step(key, a)
            weights.append(p)
            children.append(_Leaf(leaf) if child is None else child)
        return _AVG, weights, children

    def _matrix_children(self, key: Hashable, sim: Simultaneous) -> list[Any]:
        """The row-major matrix of children (keys or leaves) of a simultaneous-move node.

        Raises:
            ValueError: a row action leads to something other than the end of the game or the
                column player's decision with the announced actions.
        """
        out = []
        rules = self.rules
        for a in sim.row_actions:
            mid, leaf = self._step_row(key, a)
            if mid is None:  # the game ends: the column player has no decision, any column
                out.extend(_Leaf(leaf) for _ in sim.col_actions)
                continue
            if rules.current_player(self._state_of(mid)) != 1 - sim.row_player:
                raise ValueError(
                    "simultaneous_info announced a simultaneous move, but the row action "
                    f"{a} is followed by neither the end of the game nor the other player's "
                    "decision (a chance node or another decision may not come between the two "
                    "halves)"
                )
            self.cache.parents[self._state_of(mid)] = key
            legal = rules.legal_actions(self._state_of(mid))
            if tuple(legal) != sim.col_actions:
                raise ValueError(
                    f"the column player's legal actions after row action {a} are {legal}, "
                    f"not the announced {list(sim.col_actions)}"
                )
            for b in sim.col_actions:
                child, leaf = self._step(mid, b)
                out.append(_Leaf(leaf) if child is None else child)
        return out

    def _matrix_values(self, key: Hashable, sim: Simultaneous) -> list[list[float]]:
        children = self._matrix_children(key, sim)
        vals = [c.value if type(c) is _Leaf else self._value_of(c) for c in children]
        n = len(sim.col_actions)
        matrix = [vals[i * n : (i + 1) * n] for i in range(len(sim.row_actions))]
        self._finish_matrix(key, sim, vals)
        return matrix

    def _finish_matrix(self, key: Hashable, sim: Simultaneous, vals: list[float]) -> float:
        n = len(sim.col_actions)
        a = np.array(vals, dtype=float).reshape(len(sim.row_actions), n)
        if sim.row_probs is not None:
            # The column player best-responds to the fixed row strategy, unseen.
            x = np.array(sim.row_probs, dtype=float)
            cols = x @ a  # expected score of player 0 for each column
            j = int(cols.argmax() if sim.row_player == 1 else cols.argmin())
            y = np.zeros(n)
            y[j] = 1.0
            self.cache.strategies[key] = (sim.row_actions, x, sim.col_actions, y)
            return float(cols[j])
        # Payoff to the row player: player 0 maximises the score, player 1 minimises it.
        payoff = a if sim.row_player == 0 else -a
        v, x, y = solve_matrix_game(payoff)
        self.cache.strategies[key] = (sim.row_actions, x, sim.col_actions, y)
        return v if sim.row_player == 0 else -v

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
                    raise NotSolvable(
                        f"more than {limit:,} states: the game is too large to solve exactly "
                        "(try a depth limit)"
                    )
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

    def _solve_general(self, root: Hashable) -> None:
        """:meth:`_solve` for rules with simultaneous moves (matrix games), in any setting."""
        memo = self._memo
        limit = self.max_states
        stack = [[root, *self._expand(root), 0, None]]
        self._stack = stack
        while stack:
            frame = stack[-1]
            key, kind, weights, children, i, acc = frame
            pushed = False
            while i < len(children):
                c = children[i]
                if type(c) is _Leaf:
                    v = c.value
                else:
                    v = memo.get(c)
                    if v is None:
                        frame[4], frame[5] = i, acc
                        stack.append([c, *self._expand(c), 0, None])
                        pushed = True
                        break
                if kind == _AVG:
                    acc = v * weights[i] if acc is None else acc + v * weights[i]
                elif kind == _MAX:
                    acc = v if acc is None or v > acc else acc
                elif kind == _MIN:
                    acc = v if acc is None or v < acc else acc
                else:
                    if acc is None:
                        acc = []
                    acc.append(v)
                i += 1
            if pushed:
                continue
            if kind == _MATRIX:
                value = self._finish_matrix(key, weights[0], acc or [])
            else:
                value = 0.0 if acc is None else float(acc)
            memo[key] = value
            stack.pop()
            if self.on_progress is not None and len(memo) % 10_000 == 0:
                self.on_progress(len(memo))
            if limit is not None and len(memo) > limit:
                raise NotSolvable(
                    f"more than {limit:,} states: the game is too large to solve exactly "
                    "(try a depth limit)"
                )


__all__ = ["Cache", "Simultaneous", "Solver"]
