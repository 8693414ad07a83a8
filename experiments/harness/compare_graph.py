"""Exact values of many policy pairings over one state graph, built once per scenario.

:class:`psygym_agents.solvers.expectiminimax.Solver` searches the whole game again for every
pairing score and every best response. Here the reachable states are enumerated once
(:func:`build_graph`: decision and chance nodes, their transitions and the leaf values of
terminal children), each agent is asked once per decision node for its action probabilities
(:meth:`StateGraph.policy_weights`), and every exact value is one backward pass over the
graph in NumPy (:meth:`StateGraph.value`): the game value (both players optimise), a
pairing's expected score (both fixed) or a best response (one fixed, the other optimises).
Chance nodes weigh their outcomes with ``rules.chance_outcomes`` (outcomes of probability 0
skipped, as the solver does); a fixed player's decisions weigh their actions with the policy's
``action_probabilities``; the optimised player takes the max (player 0) or min (player 1) of
its actions' values, as in the solver. Values are expected *final* scores of player 0.

Only perfect-information rules without simultaneous moves are handled
(:func:`graph_supported`); for the others the caller keeps the solver.
"""

from __future__ import annotations

import time
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from psygym.core import CHANCE, TERMINAL, RulesBase

_TIE = 1e-9
"""Action values closer than this are tied (the lowest action index wins, as in the solver)."""


class GraphTooLarge(ValueError):
    """The game has more states than allowed, or building the graph took too long."""


def graph_supported(rules: Any) -> bool:
    """Whether :func:`build_graph` applies: perfect information and no simultaneous moves."""
    from psygym.core import Information

    if getattr(rules, "information", Information.PERFECT) == Information.HIDDEN:
        return False
    hook = getattr(rules, "simultaneous_info", None)
    return hook is None or getattr(hook, "__func__", None) is RulesBase.simultaneous_info


@dataclass
class StateGraph:
    """The reachable decision and chance nodes of a game, children before parents.

    Attributes:
        rules: the rules the graph was built from.
        states: node index -> state (indices are a topological order: children first).
        player: node index -> player to move (``CHANCE`` for chance nodes).
        start: CSR offsets: the edges of node ``i`` are ``start[i]:start[i + 1]``.
        action: edge -> action (or chance outcome).
        prob: edge -> chance probability (0 at decision edges).
        child: edge -> child node index, or -1 where the child is terminal.
        leaf: edge -> final score of player 0 where the child is terminal (else 0).
        levels: node index arrays; the children of a level's nodes are in earlier levels.
        root: index of the initial state.
        seconds: time spent building the graph.
    """

    rules: Any
    states: list[Hashable]
    player: np.ndarray
    start: np.ndarray
    action: np.ndarray
    prob: np.ndarray
    child: np.ndarray
    leaf: np.ndarray
    levels: list[np.ndarray]
    root: int
    seconds: float = 0.0

    def __post_init__(self) -> None:
        self._level_edges = []
        counts = np.diff(self.start)
        for nodes in self.levels:
            lens = counts[nodes]
            edges = np.concatenate([np.arange(self.start[i], self.start[i + 1]) for i in nodes])
            seg = np.concatenate(([0], np.cumsum(lens)[:-1])).astype(np.int64)
            self._level_edges.append((nodes, edges, seg, self.child[edges], self.leaf[edges]))
        self._edge_player = np.repeat(self.player, counts)

    @property
    def size(self) -> int:
        """Number of decision and chance nodes."""
        return len(self.states)

    def policy_weights(self, policy: Any, players: Sequence[int] = (0, 1)) -> np.ndarray:
        """Edge weights of ``policy`` at every decision node of ``players`` (0 elsewhere).

        The policy is asked once per decision node, as the player to move there.
        """
        rules = self.rules
        w = np.zeros(len(self.action))
        for i, state in enumerate(self.states):
            p = int(self.player[i])
            if p == CHANCE or p not in players:
                continue
            a, b = int(self.start[i]), int(self.start[i + 1])
            dist = policy.action_probabilities(rules, state, p)
            for e in range(a, b):
                q = dist.get(int(self.action[e]), 0.0)
                if q > 0:
                    w[e] = q
        return w

    def optimal_weights(self) -> np.ndarray:
        """Edge weights of the optimal player: the solver's best action at every decision node.

        The best action is the lowest action index whose value (from the mover's view) is within
        ``1e-9`` of the best, as :meth:`Solver.best_action` chooses.
        """
        values = self.values(None, None)
        w = np.zeros(len(self.action))
        cv = np.where(self.child >= 0, values[np.maximum(self.child, 0)], self.leaf)
        for i in range(self.size):
            p = int(self.player[i])
            if p == CHANCE:
                continue
            a, b = int(self.start[i]), int(self.start[i + 1])
            mine = cv[a:b] if p == 0 else -cv[a:b]
            best = mine.max()
            ok = np.nonzero(mine >= best - _TIE)[0]
            acts = self.action[a:b][ok]
            w[a + ok[int(np.argmin(acts))]] = 1.0
        return w

    def values(self, w0: np.ndarray | None, w1: np.ndarray | None) -> np.ndarray:
        """Node values when player 0 plays edge weights ``w0`` and player 1 ``w1``.

        ``None`` for a player means it optimises (player 0 maximises, player 1 minimises).
        """
        v = np.zeros(self.size)
        weights = self.prob.copy()
        for p, w in ((0, w0), (1, w1)):
            if w is not None:
                mask = self._edge_player == p
                weights[mask] = w[mask]
        for nodes, edges, seg, child, leaf in self._level_edges:
            cv = np.where(child >= 0, v[np.maximum(child, 0)], leaf)
            out = np.add.reduceat(cv * weights[edges], seg)
            players = self.player[nodes]
            if w0 is None:
                m = players == 0
                if m.any():
                    out[m] = np.maximum.reduceat(cv, seg)[m]
            if w1 is None:
                m = players == 1
                if m.any():
                    out[m] = np.minimum.reduceat(cv, seg)[m]
            v[nodes] = out
        return v

    def value(self, w0: np.ndarray | None, w1: np.ndarray | None) -> float:
        """Expected final score of player 0 from the initial state (see :meth:`values`)."""
        return float(self.values(w0, w1)[self.root])


def _walk_ops(rules: Any) -> tuple[Any, ...]:
    """``(initial, current, legal, outcomes, apply, returns, decode)`` of the game to enumerate.

    On the scenario's compiled twin where it has one (states are the core's bytes, ``decode``
    turns them into the reference's states), else on the reference rules (``decode`` is
    ``None``). The twin's states, players, actions, chance probabilities and scores are the
    reference's own (``tests/test_engine_*`` hold them together), and a state's bytes are
    equal exactly where the reference states are, so both give the same graph.
    """
    from psygym.engine import compiled_game

    twin = compiled_game(rules)
    if twin is None:
        return (rules.initial_state, rules.current_player, rules.legal_actions,
                rules.chance_outcomes, lambda s, a: rules.apply(s, a, check=False),
                rules.returns, None)  # fmt: skip
    game = twin.game
    return (game.initial_state, game.current_player, game.legal_actions, game.chance_outcomes,
            game.apply, game.returns, twin.decode)  # fmt: skip


def build_graph(
    rules: Any,
    max_states: int | None = None,
    seconds: float | None = None,
    *,
    clock: Any = time.perf_counter,
) -> StateGraph:
    """Enumerate every state reachable from the initial state (depth first, children first).

    The walk runs on the scenario's compiled twin where it has one (:func:`_walk_ops`); the
    graph holds the reference's states either way.

    Args:
        rules: perfect-information rules without simultaneous moves (:func:`graph_supported`).
        max_states: give up beyond this many decision and chance nodes.
        seconds: give up after this much time on ``clock``.
        clock: the clock of ``seconds`` (``time.process_time`` for CPU time).

    Raises:
        GraphTooLarge: more than ``max_states`` nodes, or out of time.
        ValueError: the rules are not supported.
    """
    if not graph_supported(rules):
        raise ValueError("the state graph needs perfect information and no simultaneous moves")
    t0, c0 = time.perf_counter(), clock()
    index: dict[Hashable, int] = {}
    states: list[Hashable] = []
    players: list[int] = []
    edges: list[list[tuple[int, float, Hashable | None, float]]] = []
    initial, current, legal, outcomes, apply, returns, decode = _walk_ops(rules)

    def expand(state: Hashable, player: int) -> list[tuple[int, float, Any, float]]:
        pairs = (
            [(a, p) for a, p in outcomes(state) if p > 0]
            if player == CHANCE
            else [(a, 0.0) for a in legal(state)]
        )
        out = []
        for a, p in pairs:
            c = apply(state, a)
            if current(c) == TERMINAL:
                out.append((a, p, None, float(returns(c)[0])))
            else:
                out.append((a, p, c, 0.0))
        return out

    root_state = initial()
    pending: dict[Hashable, list] = {}
    stack: list[tuple[Hashable, int]] = [(root_state, current(root_state))]
    checked = 0
    while stack:
        state, player = stack[-1]
        if state in index:
            stack.pop()
            continue
        kids = pending.get(state)
        if kids is None:
            kids = pending[state] = expand(state, player)
            for _a, _p, c, _v in kids:
                if c is not None and c not in index and c not in pending:
                    stack.append((c, current(c)))
            continue
        stack.pop()
        del pending[state]
        index[state] = len(states)
        states.append(state)
        players.append(player)
        edges.append(kids)
        if max_states is not None and len(states) + len(pending) > max_states:
            raise GraphTooLarge(f"the game has more than {max_states:,} states (the limit)")
        checked += 1
        if seconds is not None and checked % 2048 == 0 and clock() - c0 > seconds:
            raise GraphTooLarge(
                f"the game was not enumerated within {seconds:.0f} s "
                f"({len(states):,} states so far)"
            )
    n = len(states)
    counts = np.array([len(k) for k in edges], dtype=np.int64)
    start = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    flat = [e for k in edges for e in k]
    action = np.array([e[0] for e in flat], dtype=np.int64)
    prob = np.array([e[1] for e in flat], dtype=float)
    child = np.array([-1 if e[2] is None else index[e[2]] for e in flat], dtype=np.int64)
    leaf = np.array([e[3] for e in flat], dtype=float)
    height = np.zeros(n, dtype=np.int64)
    for i in range(n):  # children have lower indices
        c = child[start[i] : start[i + 1]]
        c = c[c >= 0]
        if len(c):
            height[i] = height[c].max() + 1
    order = np.argsort(height, kind="stable")
    bounds = np.searchsorted(height[order], np.arange(height.max() + 2 if n else 1))
    levels = [order[bounds[k] : bounds[k + 1]] for k in range(len(bounds) - 1)]
    levels = [lv for lv in levels if len(lv)]
    return StateGraph(
        rules=rules,
        states=states if decode is None else [decode(x) for x in states],
        player=np.array(players, dtype=np.int64),
        start=start,
        action=action,
        prob=prob,
        child=child,
        leaf=leaf,
        levels=levels,
        root=index[root_state],
        seconds=time.perf_counter() - t0,
    )


@dataclass
class ExactField:
    """Exact values of a whole field over one graph.

    Attributes:
        game_value: value of the game for seat 0, both players optimal.
        pairs: (seat-0 agent index, seat-1 agent index) -> exact expected score of seat 0.
        best_response: agent index -> [seat-0 score when a best response meets the agent in
            seat 0, the same with the agent in seat 1] (``None`` for a seat it does not play).
        states: nodes of the graph.
        seconds: time spent (graph, policies and passes).
    """

    game_value: float
    pairs: dict[tuple[int, int], float]
    best_response: dict[int, list[float | None]]
    states: int
    seconds: float


def exact_field(
    graph: StateGraph,
    policies: Sequence[Any | None],
    pairs: Sequence[tuple[int, int]],
    br_agents: Sequence[int] = (),
    seats: dict[int, Sequence[int]] | None = None,
) -> ExactField:
    """Exact scores of ``pairs`` and best responses to ``br_agents`` over one graph.

    Args:
        graph: the scenario's :class:`StateGraph`.
        policies: one policy per agent index; ``None`` stands for the optimal player (its
            weights come from the graph, not from another search).
        pairs: (seat-0 index, seat-1 index) pairings to score.
        br_agents: agents whose best responses to compute.
        seats: agent index -> the only seats it plays (a model trained for one seat): its
            pairings in other seats are skipped and its best responses are for those seats
            (``None`` in the other place).
    """
    t0 = time.perf_counter()
    seats = dict(seats or {})
    weights: dict[int, np.ndarray] = {}

    def w(i: int) -> np.ndarray:
        if i not in weights:
            pol = policies[i]
            mine = tuple(seats.get(i, (0, 1)))
            weights[i] = (graph.optimal_weights() if pol is None
                          else graph.policy_weights(pol, mine))  # fmt: skip
        return weights[i]

    def plays(i: int, seat: int) -> bool:
        return seat in seats.get(i, (0, 1))

    out = {(i, j): graph.value(w(i), w(j)) for i, j in pairs if plays(i, 0) and plays(j, 1)}
    br = {
        i: [graph.value(w(i), None) if plays(i, 0) else None,
            graph.value(None, w(i)) if plays(i, 1) else None]
        for i in br_agents
    }  # fmt: skip
    return ExactField(
        game_value=graph.value(None, None),
        pairs=out,
        best_response=br,
        states=graph.size,
        seconds=time.perf_counter() - t0 + graph.seconds,
    )


__all__ = [
    "ExactField",
    "GraphTooLarge",
    "StateGraph",
    "build_graph",
    "exact_field",
    "graph_supported",
]
