"""Psykers and their power cards in the 2nd edition: the first state and set-up draws (2E-1).

:class:`SecondPsykers` is the part of :class:`~.rules.SecondRules` that builds the first state,
draws the power cards of psykers given disciplines rather than powers (2E-1.1: a chance node per
card, drawn uniformly without replacement from the psyker's own copy of its disciplines' cards;
:meth:`SecondPsykers.next_draw` says who draws next) and says which psykers are alive and can
still use powers (2E-3.2).
"""

from __future__ import annotations

from bisect import bisect_right
from fractions import Fraction

import numpy as np

from psygym.core import Event, EventKind
from psygym.editions.second.deck import NO_CARDS
from psygym.editions.second.facts import MEMO_SIZE
from psygym.editions.second.state import SETUP, SecondState


class SecondPsykers:
    """The first state, set-up draws and usable psykers (2E-1), mixed into the rules class.

    Reads the scenario's facts (:class:`~.facts.SecondFacts` fields, held by the rules as
    attributes, and ``self.facts``) and the memos the rules set up (``_draws``, ``_usable``,
    ``_setup_nodes``, the chance tables).
    """

    def initial_state(self) -> SecondState:
        """The state before set-up draws and the first Psychic phase's warp flux."""
        if self._initial is None:
            self._initial = self._first_state()
        return self._initial

    def _first_state(self) -> SecondState:
        """The state :meth:`initial_state` returns, built."""
        s = SecondState(
            stage=SETUP,
            phase=0,
            to_move=self.game.first_player,
            passes=0,
            wounds=self.max_wounds,
            powers=self.initial_powers,
            used=(False,) * self.num_psykers,
            in_play=(),
            deck=self.deck_counts,
            discard=NO_CARDS,
            hands=(NO_CARDS, NO_CARDS),
            paid=NO_CARDS,
            to_deal=0,
            deal_to=0,
            pending=None,
            roll=None,
            effects=(),
            score=0.0,
        )
        return self._settle(s, [])

    def next_draw(self, state: SecondState) -> int:
        """The psyker that draws a power card next at set-up, or -1 when set-up is done.

        :meth:`~.facts.SecondFacts.next_drawer`, memoised by the power cards held.
        """
        powers = state.powers
        found = self._draws.get(powers)
        if found is None:
            found = self.facts.next_drawer(powers)
            if len(self._draws) >= MEMO_SIZE:
                self._draws.clear()
            self._draws[powers] = found
        return found

    def alive(self, state: SecondState, psyker: int) -> bool:
        """Whether a psyker is on the table."""
        return state.wounds[self.psyker_unit[psyker]] > 0

    def can_use_powers(self, state: SecondState, psyker: int) -> bool:
        """A living psyker with at least one power card left (2E-3.2)."""
        return self.alive(state, psyker) and any(p >= 0 for p in state.powers[psyker])

    def usable_psykers(self, state: SecondState) -> int:
        """How many psykers can use powers (2E-3.2); memoised by wounds and power cards."""
        key = (state.wounds, state.powers)
        n = self._usable.get(key)
        if n is None:
            if len(self._usable) >= MEMO_SIZE:
                self._usable.clear()
            n = self._usable[key] = sum(
                self.can_use_powers(state, i) for i in range(self.num_psykers)
            )
        return n

    def _setup_run(
        self, s: SecondState, rng: np.random.Generator, events: list[Event]
    ) -> SecondState:
        """Every set-up draw of power cards (2E-1.1) into ``s`` (a transition's own copy).

        The same tables (:meth:`chance_table`), the same one uniform number per draw, the same
        changes and events as :meth:`sample_chance` and :meth:`_apply_chance` node by node;
        :meth:`_settle` between two draws only finds the next draw, so it runs once, after the
        last one.
        """
        # next_draw finds the first psyker still drawing, and a draw changes only its own
        # slots: so the draws are each psyker's in turn, in psyker order.
        powers = list(s.powers)
        random, nodes, spare = rng.random, self._setup_nodes, self.num_slots
        for i, pool in enumerate(self.draw_pools):
            if pool is None:
                continue
            slots = powers[i]
            while slots.count(-1) > spare - self.ml[i]:  # next_draw's test
                node = nodes.get((i, slots))
                if node is None:
                    node = self._setup_node(i, slots)
                cumulative, outcomes, last, kids = node
                idx = bisect_right(cumulative, random() * cumulative[-1])  # ChanceTable.sample
                outcome = outcomes[idx if idx < last else last]
                after = kids.get(outcome)
                if after is None:
                    after = kids[outcome] = self._setup_after(i, slots, outcome)
                slots = after[0]
                events.append(after[1])
            powers[i] = slots
        s.__dict__.update(powers=tuple(powers))
        return self._settle(s, events)

    def _setup_node(self, i: int, slots: tuple[int, ...]) -> list:
        """Psyker ``i``'s set-up draw with ``slots`` held, as :meth:`_setup_run` walks it.

        ``[cumulative, outcomes, last index, next]``: the running sums and outcomes of the
        node's chance table (:meth:`chance_table`'s, 2E-1.1) and, per outcome drawn, the slots
        after it and the draw's event. Memoised by ``(i, slots)`` (bounded).
        """
        table = self._chance.get((2, i, *slots), lambda: self._setup_distribution(i, slots))
        cumulative = table.cumulative
        node = [cumulative, [o for o, _ in table.outcomes], len(cumulative) - 1, {}]
        if len(self._setup_nodes) >= MEMO_SIZE:
            self._setup_nodes.clear()
        self._setup_nodes[(i, slots)] = node
        return node

    def _setup_after(
        self, i: int, slots: tuple[int, ...], outcome: int
    ) -> tuple[tuple[int, ...], Event]:
        """The slots of psyker ``i`` once it draws ``outcome``, and the event (2E-1.1)."""
        after = list(slots)
        after[after.index(-1)] = outcome
        return tuple(after), self._draw_event(i, outcome)

    def _setup_distribution(
        self, i: int, slots: tuple[int, ...]
    ) -> tuple[tuple[int, Fraction], ...]:
        """Psyker ``i`` draws one power card it does not hold from its pool, uniformly (2E-1.1)."""
        pool = [k for k in self.draw_pools[i] or () if k not in slots]
        return tuple(sorted((k, Fraction(1, len(pool))) for k in pool))

    def _draw_event(self, i: int, outcome: int) -> Event:
        """The event of psyker ``i`` drawing power card ``outcome`` at set-up (2E-1.1)."""
        return self._shared_event(
            ("draw", i, outcome),
            lambda: Event(
                EventKind.DRAW_POWER,
                f"{self.units[self.psyker_unit[i]].name} draws {self.power_data[outcome].name}.",
                self.psyker_side[i],
            ),
        )


__all__ = ["SecondPsykers"]
