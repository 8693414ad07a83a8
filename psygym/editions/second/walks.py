"""The one-copy walks of the 2nd-edition rules: a decision and the chance nodes after it.

:class:`SecondWalks` is the part of :class:`~.rules.SecondRules` that the envs run between two
decisions (``RulesBase.apply_with_chance`` and ``sample_chance_run``): the same transition code,
the same draws (one uniform number per chance node, from the node's chance table) and the same
events as the node-by-node ``apply_with_events`` and ``sample_chance``, in one copy of the state,
with each deal of cards (2E-3.3) and each psyker's set-up draws (2E-1.1) drawn in one pass. They
serve only while no transition method is replaced (``RulesBase._own_chance_walk``).
"""

from __future__ import annotations

import numpy as np

from psygym.core import Event
from psygym.editions.second.actions import PASS
from psygym.editions.second.state import DEAL, FLUX, OVER, RESPONSE, SETUP, TURN, SecondState
from psygym.kernel import evolve


class SecondWalks:
    """The fast walks (speed only: the same results as node by node), mixed into the rules.

    Calls the transition code of the rules (``_settle``, ``_dispatch``, ``_apply_chance``,
    ``_apply_deal``, ``_cast``, ``_flux``, ``_end_phase``...) and the deal and set-up walks of
    :class:`~.deck.SecondDeck` and :class:`~.psykers.SecondPsykers`.
    """

    def sample_chance_run(
        self, state: SecondState, rng: np.random.Generator, events: list[Event]
    ) -> SecondState:
        """Walk chance nodes to the next decision in one copy of the state (see :meth:`_walk`).

        The same draws (one uniform number per node, from :meth:`chance_table`), the same
        transition code and the same events as :meth:`sample_chance` and :meth:`_apply` node by
        node; each deal of cards (2E-3.3) is drawn in one pass. Other chance nodes go through
        the transition code of :meth:`_apply`, in the walk's own copy of the state.
        """
        stage = state.stage
        if stage == OVER or (not state.effects and (stage == TURN or stage == RESPONSE)):
            return state  # not a chance node (the tests of current_player)
        # Not while sample_chance or the transition code below is replaced (tests do).
        if not self._own_chance_walk():
            return super().sample_chance_run(state, rng, events)
        return self._walk(evolve(state), rng, events)

    def _decide_and_walk(
        self, state: SecondState, action: int, rng: np.random.Generator, events: list[Event]
    ) -> SecondState:
        """A decision and the chance nodes after it, in one copy of the state.

        The same transition code, draws and events as :meth:`apply_with_events` and then
        :meth:`sample_chance_run`; nobody sees the state between them, so one copy serves both.
        """
        stage = state.stage
        if not state.effects:
            if stage == TURN and action == PASS:
                # The commonest decision, as _apply_turn, _pass and _settle take it (2E-4.3).
                p = state.to_move
                events.append(self._pass_events[p])
                if state.passes + 1 >= 2:
                    s = self._end_phase(evolve(state), events)
                    return self._walk(self._settle(s, events), rng, events)
                s = evolve(state, passes=state.passes + 1, to_move=1 - p)
                if any(s.hands[1 - p]):  # a turn with cards in hand is a decision (_settle)
                    return s
                return self._walk(self._settle(s, events), rng, events)
            if stage == TURN and action >= self.cast_base:
                # A cast (_apply_turn): it waits for the response step (_settle) when one is
                # allowed; the chance nodes come only after the answer.
                s = self._cast(evolve(state), action, events)
                if self.settings.responses_per_power > 0:
                    return s
                return self._walk(self._settle(s, events), rng, events)
            if stage == RESPONSE and action == PASS:  # no response card (_apply_response)
                s = self._finish_pending(evolve(state), events, reflected=False, stopped=False)
                return self._walk(self._settle(s, events), rng, events)
            if stage == DEAL:  # a card, not a decision: as _apply does
                s, step_events = self._apply_deal(state, action)
                events.extend(step_events)
                return self._walk(evolve(s), rng, events)
        s = self._dispatch(evolve(state), action, events)
        return self._walk(self._settle(s, events), rng, events)

    def _walk(self, s: SecondState, rng: np.random.Generator, events: list[Event]) -> SecondState:
        """Chance nodes from ``s`` (a transition's own copy) to the next decision or the end.

        One draw per node from :meth:`chance_table` and the node's transition code of
        :meth:`_apply`, in place; a deal under way is dealt by :meth:`_deal_run`.
        """
        while True:
            stage = s.stage
            if stage == OVER:  # the same tests as current_player
                return s
            if not s.effects:
                if stage == TURN or stage == RESPONSE:
                    return s
                if stage == FLUX:  # _apply_chance's flux, with the dice found once
                    dice = self.flux_dice(s)
                    table = self._chance_tables.get((1, dice))  # chance_table's key
                    if table is None:
                        table = self.chance_table(s)
                    s = self._settle(self._flux(s, dice, table.sample(rng), events), events)
                    continue
                if stage == SETUP:
                    s = self._setup_run(s, rng, events)
                    continue
                if stage == DEAL:
                    if s.to_deal > 0 and any(s.deck):
                        s = self._deal_run(s, rng, events)
                    else:  # never left so by _settle; one node at a time, as _apply does
                        s, step_events = self._apply_deal(s, self.chance_table(s).sample(rng))
                        events.extend(step_events)
                        s = evolve(s)
                    continue
            s = self._apply_chance(s, self.chance_table(s).sample(rng), events)
            s = self._settle(s, events)


__all__ = ["SecondWalks"]
