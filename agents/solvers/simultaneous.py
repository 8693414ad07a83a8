"""The simultaneous moves of the exact solver: secret pairs of decisions as matrix games.

Where ``rules.simultaneous_info(state)`` says two decisions are made without seeing each other
(Rogue Trader's secret bids), :class:`~psygym_agents.solvers.expectiminimax.Solver` solves the
pair as one matrix game by the linear program of :mod:`psygym_agents.solvers.matrix`, values
the second decision through it without reading the first player's secret choice, and searches
such games with the general loop here (:meth:`SimultaneousSearch._solve_general`), which lists
the transitions of chance and decision nodes alike. The module docstring of
:mod:`~psygym_agents.solvers.expectiminimax` states the contract; this module holds the part of
the search that only games with simultaneous moves take.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any

import numpy as np
from psygym_agents.solvers import NotSolvable
from psygym_agents.solvers.matrix import solve_matrix_game

from psygym.core import CHANCE, TERMINAL, EventKind, RulesBase

_AVG, _MAX, _MIN, _MATRIX = 0, 1, 2, 3
"""Node kinds: a weighted sum (chance, fixed policy), player 0's max, player 1's min, a matrix."""


def too_many_states(limit: int | None) -> str:
    """Why a search stopped at its state limit."""
    return f"more than {limit:,} states: the game is too large to solve exactly (try a depth limit)"


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


class SimultaneousSearch:
    """The solver's methods for simultaneous moves (a part of :class:`Solver`, not used alone).

    They read the solver's ``rules``, ``fixed``, ``cache``, ``_memo``, ``max_states``,
    ``_limited``, ``_sim_info``, ``_parent_of``, ``on_progress`` and its stepping methods.
    """

    # Set by Solver.__init__; declared here for readers and type checkers.
    rules: Any
    fixed: dict[int, Any]
    cache: Any
    max_states: int | None
    on_progress: Callable[[int], None] | None
    _memo: dict[Hashable, float]
    _limited: bool
    _sim_info: Callable[[Hashable], Any] | None
    _parent_of: Callable[[Hashable], Hashable | None] | None
    _stack: list[Any]
    _core: Any

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
        core = self._core_matrix(key, sim) if self._core is not None else None
        if core is not None:
            return core
        children = self._matrix_children(key, sim)
        vals = [c.value if type(c) is _Leaf else self._value_of(c) for c in children]
        n = len(sim.col_actions)
        matrix = [vals[i * n : (i + 1) * n] for i in range(len(sim.row_actions))]
        self._finish_matrix(key, sim, vals)
        return matrix

    def _core_matrix(self, key: Hashable, sim: Simultaneous) -> list[list[float]] | None:
        """:meth:`_matrix_values` from the compiled solver's values of the pair's children.

        The core searches below the pair; the strategies come from the same linear programs
        as in Python (:meth:`_finish_matrix`), and the states between the two halves are
        recorded as the Python search records them. ``None`` where the state has no compiled
        bytes (the search goes on in Python).
        """
        data = self._held(self._state_of(key))
        if data is None:
            return None
        rows, cols, vals = self._core_call(self._core.matrix_values, data)
        if tuple(rows) != sim.row_actions or tuple(cols) != sim.col_actions:
            raise ValueError("the compiled rules announce another simultaneous move here")
        for a in sim.row_actions:
            mid, _leaf = self._step_row(key, a)
            if mid is not None:
                self.cache.parents[self._state_of(mid)] = key
        self._finish_matrix(key, sim, vals)
        n = len(sim.col_actions)
        return [vals[i * n : (i + 1) * n] for i in range(len(sim.row_actions))]

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
                raise NotSolvable(too_many_states(limit))
