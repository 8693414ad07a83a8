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
  simultaneous) are not asked at every node.
- **Depth limit.** With ``max_depth=N`` the search covers N Psychic phases counting the one in
  progress (before the first phase: the first one). A transition that reports an
  ``EventKind.PHASE`` event (the start of a new Psychic phase) beyond that is a leaf worth the
  score so far, and the solver's ``exact`` becomes False. ``max_plies=N`` likewise stops N
  transitions (decisions and chance outcomes) below the state asked about. A depth-limited value
  is memoised with the depth left.
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
            its simultaneous-move node.
        root_solved: whether the game was solved from its initial state to find such parents.
    """

    values: dict[Hashable, float] = field(default_factory=dict)
    cut: bool = False
    strategies: dict[Hashable, tuple[tuple[int, ...], np.ndarray, tuple[int, ...], np.ndarray]] = (
        field(default_factory=dict)
    )
    parents: dict[Hashable, Hashable] = field(default_factory=dict)
    root_solved: bool = False


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
        on_progress: called with the number of memoised states every 10,000 new states.

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
    ):
        if max_depth is not None and max_depth < 1:
            raise ValueError(f"max_depth must be at least 1 (Psychic phases), got {max_depth}")
        if max_plies is not None and max_plies < 1:
            raise ValueError(f"max_plies must be at least 1, got {max_plies}")
        self.rules = rules
        self.max_depth = max_depth
        self.max_plies = max_plies
        self._limited = max_depth is not None or max_plies is not None
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
        self.on_progress = on_progress

    # ------------------------------------------------------------------ public API
    @property
    def states(self) -> int:
        """Number of states memoised."""
        return len(self._memo)

    @property
    def exact(self) -> bool:
        """Whether every value computed so far is exact (no depth-limit leaf below it)."""
        return not self.cache.cut

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
        """The simultaneous-move node whose column decision ``state`` is, if any.

        Such a state holds the row player's secret choice. Its parent is known once the solver
        has expanded it; if not yet, the game is solved from its initial state first (once).
        """
        if self._sim_info is None or player < 0 or player in self.fixed:
            return None
        parents = self.cache.parents
        parent = parents.get(state)
        if parent is None and not self.cache.root_solved:
            self.cache.root_solved = True
            self.value(self.rules.initial_state())
            parent = parents.get(state)
        if parent is None:
            return None
        if parent not in self.cache.strategies:
            psim = self._simultaneous(self._state_of(parent), 1 - player)
            if psim is None:  # pragma: no cover - recorded parents are simultaneous nodes
                return None
            self._matrix_values(parent, psim)
        return parent

    # ------------------------------------------------------------------ keys and leaves
    def _root_key(self, state: Hashable) -> Hashable:
        if not self._limited:
            return state
        phases = -1 if self.max_depth is None else self.max_depth - 1
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
        if self.max_depth is None:
            child, events = rules.apply(state, action, check=False), ()
        else:
            # Only the events say where a new Psychic phase starts.
            child, events = rules.apply_with_events(state, action, check=False)
        player = rules.current_player(child)
        if player == TERMINAL:
            return None, player, rules.returns(child)[0]
        if phases >= 0 and any(e.kind == EventKind.PHASE for e in events):
            if phases == 0:
                self.cache.cut = True
                return None, player, rules.returns(child)[0]
            phases -= 1
        if plies >= 0:
            plies -= 1
            if plies == 0:
                self.cache.cut = True
                return None, player, rules.returns(child)[0]
        return (child, phases, plies), player, 0.0

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
        out = []
        rules = self.rules
        for a in sim.row_actions:
            mid, leaf = self._step(key, a)
            if mid is None or rules.current_player(self._state_of(mid)) != 1 - sim.row_player:
                raise ValueError(
                    "simultaneous_info announced a simultaneous move, but the row action "
                    f"{a} is not followed by the other player's decision"
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
