"""The memoised move graph of the Rogue Trader fast walk (env decisions and dice, RT-2 to RT-6).

A transition of the rules is a pure function of the state and the action (or chance outcome):
the same ``(state, action)`` always reaches the same settled state with the same events. So the
fast walk (:meth:`~.rules.RogueTraderRules.apply_with_chance` and
:meth:`~.rules.RogueTraderRules.sample_chance_run`, what the envs call) runs each transition's
code once and afterwards follows a stored edge.

Nodes are numbers: node ``n`` is the state ``states[n]``, with what the envs ask about it built
once (``tables[n]``, its chance table at a chance node; ``legal[n]``; ``obs0[n]``, ``obs1[n]``,
``masks[n]``, once asked). The edge of action ``a`` from node ``n`` is the number ``n * _SPAN +
a``: ``kids`` maps it to the next node and ``evs`` to the events of that transition (absent when
there are none), which ``_step`` then ``_settle`` recorded the first time. Numbers, shared
tuples and arrays only: the graph adds no object of its own per node for the garbage collector
to track, just the states themselves.

A walk draws exactly as the node-by-node walk does (one uniform number per chance node with more
than one outcome, none otherwise), so seeded games, events and observations are unchanged; only
the work between the draws is skipped. Nodes are found by the state's value (a dictionary keyed
by the frozen state; nodes in the middle of an ability, reached by one move, are not looked up),
and the state a walk last returned is kept with its node (:attr:`last`, :attr:`last_state`), so
the env's next questions about that state (its observation, mask and the next decision) need no
hashing. The graph is bounded: past ``max_nodes`` nodes it is dropped and rebuilt as games go
on.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from psygym.core import Event
from psygym.editions.rogue_trader.state import DECISIONS, Events, Phase, State
from psygym.kernel import ChanceTable

_OVER = Phase.OVER
_ONE_WAY = frozenset({Phase.TEST, Phase.ATTACK_BID, Phase.SAVE_BID, Phase.RESOLVE})
"""Nodes in the middle of an ability (its test, bids and resolution): reached by one move in
practice (they hold the ability, target and bids just chosen), so a walk does not look them up
by value. One reached twice just gets a second node, which caches the same things."""
_SPAN = 1 << 32
"""Edge numbers: ``node * _SPAN + action``; actions and chance outcomes are in ``[0, _SPAN)``."""
MAX_NODES = 40_000
"""Nodes kept before the graph is dropped (a kB or two each with their observations)."""


class Transitions(Protocol):
    """What the graph runs of the rules (:class:`~.rules.RogueTraderRules` has all of it).

    Attributes:
        _legal_state, _legal_last: the decision ``_settle`` last stopped at and its legal
            actions.
        _table_state, _table_last: the chance node ``_settle`` last stopped at and its table.
    """

    _legal_state: State | None
    _legal_last: tuple[int, ...]
    _table_state: State | None
    _table_last: ChanceTable | None

    def _step(self, s: State, a: int, ev: Events) -> State:
        """One transition from ``s`` (no settling)."""
        ...

    def _settle(self, s: State, ev: Events) -> State:
        """Advance through nodes that offer a single action or outcome."""
        ...

    def _legal(self, state: State) -> tuple[int, ...]:
        """The legal actions of ``state`` (empty at chance and terminal nodes)."""
        ...

    def chance_table(self, s: State) -> ChanceTable | None:
        """The chance table of ``s`` (``None`` at decisions and the end)."""
        ...


class MoveGraph:
    """The memoised transitions of one rules object (see the module docstring).

    Args:
        rules: the rules whose ``_step``, ``_settle``, ``chance_table`` and ``_legal`` it runs
            (:class:`Transitions`).
        max_nodes: nodes kept before the graph is dropped.

    Attributes:
        states, tables, legal, obs0, obs1, masks: per node, its state, chance table (``None``
            at decisions and the end), legal actions (empty at chance and terminal nodes), the
            observation of player 0 and 1 and the legal mask once asked (read-only arrays;
            callers get copies).
        last, last_state: the node of the state the last walk returned (or :meth:`start`
            began at) and that state; -1 and ``None`` before any.
    """

    __slots__ = (
        "_events",
        "_ids",
        "_root",
        "evs",
        "kids",
        "last",
        "last_state",
        "legal",
        "masks",
        "max_nodes",
        "obs0",
        "obs1",
        "rules",
        "states",
        "tables",
    )

    def __init__(self, rules: Transitions, max_nodes: int = MAX_NODES):
        self.rules = rules
        self.max_nodes = max_nodes
        self._clear()

    def _clear(self) -> None:
        """Drop every node and edge."""
        self._ids: dict[State, int] = {}
        self.states: list[State] = []
        self.tables: list[ChanceTable | None] = []
        self.legal: list[tuple[int, ...]] = []
        self.obs0: list[np.ndarray | None] = []
        self.obs1: list[np.ndarray | None] = []
        self.masks: list[np.ndarray | None] = []
        self.kids: dict[int, int] = {}
        self.evs: dict[int, tuple[Event, ...]] = {}
        self._events: dict[tuple[int, ...], tuple[Event, ...]] = {}
        """The events of the edges, one tuple per sequence of event objects (see _expand)."""
        self._root = -1
        self.last = -1
        self.last_state: State | None = None

    def __len__(self) -> int:
        return len(self.states)

    def start(self, initial: State) -> None:
        """A game begins at ``initial``: its node becomes :attr:`last`."""
        root = self._root
        if root < 0 or self.states[root] is not initial:
            root = self._root = self.enter(initial)
        self.last, self.last_state = root, initial

    def enter(self, state: State) -> int:
        """The node of ``state`` (the last one returned if it is that very state)."""
        if state is self.last_state:
            return self.last
        n = self._ids.get(state)
        return self._node(state, True) if n is None else n

    def _node(self, state: State, share: bool) -> int:
        """The node of ``state``, made and filled in if the graph has none (one hash).

        ``share``: look the state up by value (else it gets a new node, unhashed).
        """
        if len(self.states) >= self.max_nodes:
            self._clear()
        n = len(self.states)
        if share:
            found = self._ids.setdefault(state, n)
            if found != n:
                return found
        rules = self.rules
        phase = state.phase
        table = None
        # _settle has just found the chance table or legal actions of the state it stopped at.
        if phase != _OVER and phase not in DECISIONS:
            table = rules._table_last if state is rules._table_state else None
            if table is None:
                table = rules.chance_table(state)
        legal = rules._legal_last if state is rules._legal_state else rules._legal(state)
        self.states.append(state)
        self.tables.append(table)
        self.legal.append(legal)
        self.obs0.append(None)
        self.obs1.append(None)
        self.masks.append(None)
        return n

    def _expand(self, n: int, action: int, out: list[Event]) -> int:
        """Run ``_step`` then ``_settle`` for ``action`` from node ``n``; store the edge.

        The transition's events also go into ``out``.
        """
        rules = self.rules
        events: list[Event] = []
        after = rules._settle(rules._step(self.states[n], action, events), events)
        out.extend(events)
        states = self.states
        child = self._node(after, after.phase not in _ONE_WAY)
        if self.states is not states:  # the graph was dropped: node n is gone
            return child
        edge = n * _SPAN + action
        self.kids[edge] = child
        if events:
            # The rules share each event object (its memo), so many edges record the very same
            # objects: they share one tuple, found by the objects' ids. The stored tuple holds
            # those objects, so no id in a key can be reused while the key is there.
            key = tuple(map(id, events))
            shared = self._events.get(key)
            if shared is None:
                shared = self._events[key] = tuple(events)
            self.evs[edge] = shared
        return child

    def walk(
        self, n: int, action: int | None, rng: np.random.Generator, events: list[Event]
    ) -> State:
        """Take ``action`` from node ``n`` (``None``: none), then sample chance to a decision.

        Each chance node with more than one outcome draws one number from ``rng`` through its
        table (:meth:`~psygym.kernel.ChanceTable.sample`), as ``sample_chance`` does. The events
        of every transition go into ``events``; returns the state reached, which becomes
        :attr:`last_state`.
        """
        if action is None:
            table = self.tables[n]
            if table is None:
                action = -1  # nothing to take: n is where the walk ends
            else:
                outcomes = table.outcomes
                action = outcomes[0][0] if len(outcomes) == 1 else table.sample(rng)
        kids, evs = self.kids, self.evs
        while action >= 0:  # a decision, then each chance outcome drawn
            edge = n * _SPAN + action
            child = kids.get(edge)
            if child is None:
                child = self._expand(n, action, events)
                kids, evs = self.kids, self.evs  # new ones if the graph was dropped
            else:
                step_events = evs.get(edge)
                if step_events is not None:
                    events.extend(step_events)
            n = child
            table = self.tables[n]
            if table is None:
                break
            outcomes = table.outcomes
            action = outcomes[0][0] if len(outcomes) == 1 else table.sample(rng)
        state = self.states[n]
        self.last, self.last_state = n, state
        return state


__all__ = ["MAX_NODES", "MoveGraph", "Transitions"]
