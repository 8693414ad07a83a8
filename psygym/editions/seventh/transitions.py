"""The transition loop of the 7th-edition rules: one draft per transition, or per walk.

:class:`SeventhTransitions` is the part of :class:`~.rules.SeventhRules` that runs transitions.
A transition copies the state once, into a :class:`~.state.Draft` that the stage's handler edits
and that is frozen at the end. The handlers (``_on_stage``, one per stage, indexed by ``Stage``)
live in the rule sections' modules: :mod:`.generation`, :mod:`.phases`, :mod:`.casting`,
:mod:`.perils`, :mod:`.effects`. ``apply`` (what search calls) runs the same handlers with
``ev=None``, which only skips building the events. The envs' walks (``apply_with_chance``,
``sample_chance_run``: a decision and the chance nodes after it) edit one draft for the whole run
and draw each node's outcome from the table ``sample_chance`` reads (:mod:`.chances`).

Events are frozen, so the commonest ones are kept by everything their texts and data depend on
(``_remember``), and :func:`new_event` builds one without the frozen ``__init__``.
"""

from __future__ import annotations

import numpy as np

from psygym.core import Event, EventKind
from psygym.editions.seventh.facts import MEMO_SIZE
from psygym.editions.seventh.state import CHANCE_NODE, ROLE, Draft, State

_new = object.__new__
_set = object.__setattr__


def new_event(
    kind: EventKind, text: str, player: int | None = None, data: tuple[tuple[str, object], ...] = ()
) -> Event:
    """``Event(kind, text, player, data)``, built without the frozen ``__init__`` (faster).

    Events have no ``__post_init__`` to skip; the instance is the same as the constructor's.
    """
    e = _new(Event)
    _set(e, "__dict__", {"kind": kind, "text": text, "player": player, "data": data})
    return e


class SeventhTransitions:
    """The transition loop and the fast walks, mixed into the rules class.

    Reads the handlers ``self._on_stage``, the chance tables (``_table``, ``_stage_tables``) and
    the events memo ``self._event_memo`` the rules set up.
    """

    # One transition edits one Draft (a mutable copy of the state) and freezes it once at the
    # end. ``ev`` collects the events, or is None when nobody reads them (``apply``, which the
    # exact search calls): the same code runs either way, and ``if ev is not None`` only skips
    # building the event objects and their text.
    def _apply(self, s: State, a: int) -> tuple[State, tuple[Event, ...]]:
        ev: list[Event] = []
        return self._step(s, a, ev), tuple(ev)

    def _transition(self, s: State, a: int) -> State:
        """The next state through the same code as :meth:`_apply`, building no events (search)."""
        return self._step(s, a, None)

    def _step(self, s: State, a: int, ev: list[Event] | None) -> State:
        """One transition: a draft of ``s``, the stage's handler, frozen; events go to ``ev``."""
        d = Draft(s)
        self._on_stage[s.stage](d, a, ev)
        return d.freeze()

    def _remember(self, key: tuple, events: list[Event]) -> tuple[Event, ...]:
        """Keep ``events`` as the events of ``key`` in :attr:`_event_memo` (bounded)."""
        memo = self._event_memo
        if len(memo) >= MEMO_SIZE:
            memo.clear()
        out = memo[key] = tuple(events)
        return out

    # The envs' walks: a run of chance nodes, or a decision and the run after it, in one draft.
    # Node by node, each transition would freeze its draft and the next would copy it again;
    # nobody sees the states in between, so one draft serves the whole run. Each node draws from
    # the same table (``_table``) with the same one uniform number as ``sample_chance``.
    def sample_chance_run(self, s: State, rng: np.random.Generator, events: list[Event]) -> State:
        """Walk chance nodes to the next decision or the end, in one draft of the state.

        The same draws, transition code and events as :meth:`sample_chance` and
        :meth:`apply_with_events` node by node (:meth:`RulesBase.sample_chance_run`).
        """
        if ROLE[s.stage] != CHANCE_NODE:
            return s
        # Not while sample_chance or the transition code below is replaced (tests do).
        if not self._own_chance_walk():
            return super().sample_chance_run(s, rng, events)
        d = _new(Draft)
        d.__dict__ = s.__dict__.copy()  # Draft(s), without the call
        self._walk(d, rng, events)
        d.__class__ = State  # d.freeze(), without the call
        return d  # type: ignore[return-value]

    def _decide_and_walk(
        self, s: State, action: int, rng: np.random.Generator, events: list[Event]
    ) -> State:
        """A decision and the chance nodes after it, in one draft of the state.

        The same transition code, draws and events as :meth:`apply_with_events` and then
        :meth:`sample_chance_run`.
        """
        d = _new(Draft)
        d.__dict__ = s.__dict__.copy()  # Draft(s), without the call
        on_stage = self._on_stage
        on_stage[d.stage](d, action, events)
        # The walk after it (as _walk does, inline: most decisions lead to a chance node).
        role, table, fixed = ROLE, self._table, self._stage_tables
        while role[st := d.stage] == CHANCE_NODE:
            node = fixed[st]
            if node is None:
                node = table(d)
            on_stage[st](d, node.sample(rng), events)
        d.__class__ = State  # d.freeze(), without the call
        return d  # type: ignore[return-value]

    def _walk(self, d: Draft, rng: np.random.Generator, events: list[Event]) -> None:
        """Resolve chance nodes on ``d`` until a decision or the end (one draw per node)."""
        on_stage, role, table, fixed = self._on_stage, ROLE, self._table, self._stage_tables
        while role[st := d.stage] == CHANCE_NODE:
            node = fixed[st]
            if node is None:
                node = table(d)
            on_stage[st](d, node.sample(rng), events)

    def _on_over(self, d: Draft, a: int, ev: list[Event] | None) -> None:
        raise ValueError("the game is over: no action or chance outcome applies")

    def _side(self, side: int) -> str:
        return self.scenario.sides[side].name


__all__ = ["SeventhTransitions", "new_event"]
