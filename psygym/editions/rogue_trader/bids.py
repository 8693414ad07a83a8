"""The secret bids of Rogue Trader: enhanced attack and augmented save (RT-3).

:class:`RTBids` is the part of :class:`~.rules.RogueTraderRules` that plays the two bids of an
ability allowing a psychic save: the attacker bids ``k`` points of enhanced attack
(``Phase.ATTACK_BID``, RT-3.2), then the target, if it is a psyker, bids ``j`` points of
augmented save (``Phase.SAVE_BID``, RT-3.3) without seeing ``k``; both are deducted whatever
happens (RT-3.4). It also names those nodes for solvers and search: the pair as one matrix game
(:meth:`RTBids.simultaneous_info`), the bidder whose bid is secret (:meth:`RTBids.private_to`)
and the node a pair began at (:meth:`RTBids.simultaneous_parent`).
"""

from __future__ import annotations

from psygym.core import Event, EventKind, SimultaneousMove
from psygym.editions.rogue_trader.state import Events, Phase, State
from psygym.editions.rogue_trader.units import put
from psygym.kernel import evolve

_ATTACK_BID, _SAVE_BID, _RESOLVE = Phase.ATTACK_BID, Phase.SAVE_BID, Phase.RESOLVE


class RTBids:
    """Secret bids (RT-3), mixed into :class:`~.rules.RogueTraderRules`.

    Reads the scenario's facts (:class:`~.facts.RTFacts` fields, held by the rules as
    attributes); the resolution that follows the bids is :class:`~.effects.RTEffects`'.
    """

    def is_response(self, state: State) -> bool:
        """True when the target bids for its augmented save (answering the attacker, RT-3.3)."""
        return state.phase == _SAVE_BID

    def _can_augment(self, s: State, t: int) -> bool:
        """Whether target ``t`` may augment its save: a fighting psyker, mind free (RT-3.3)."""
        ts = s.units[t]
        return self.psyker[t] and ts.fighting and ts.stolen == 0

    def _on_attack_bid(self, s: State, a: int, ev: Events) -> State:
        """The attacker's secret bid, kept pending until the target has bid (RT-3.2, RT-3.4)."""
        return evolve(s, attack_bid=a - self.number_base, phase=_SAVE_BID)

    def _on_save_bid(self, s: State, a: int, ev: Events) -> State:
        """The target's secret bid (RT-3.3): both bids are in."""
        return self._bids_in(s, a - self.number_base, ev)

    def _bids_in(self, s: State, j: int, ev: Events) -> State:
        """Both secret bids are known: deduct them whatever happens (RT-3.4)."""
        u, t, k = s.actor, s.target, s.attack_bid
        units = put(s.units, u, points=s.units[u].points - k)
        if j:
            rest = units[t].resting and not self.game.augment_breaks_rest
            units = put(units, t, points=units[t].points - j, resting=rest)
        self._note(
            ev,
            lambda: Event(
                EventKind.BIDS,
                f"Bids revealed: {self.names[u]} enhances the attack by {k}, "
                f"{self.names[t]} augments its save by {j}.",
                None,
                (("enhanced", k), ("augmented", j)),
            ),
            ("bids", u, t, k, j),
        )
        return evolve(s, units=units, save_bid=j, phase=_RESOLVE)

    def simultaneous_info(self, state: State) -> SimultaneousMove | None:
        """The two secret bids (RT-3.4) as a matrix game, at the attacker's bid node only.

        At an :attr:`Phase.ATTACK_BID` node where both the attacker and the target have a real
        choice, returns ``(row_player, row_actions, col_player, col_actions, fn)``: the attacker
        (rows) and the target (columns), their legal bid actions, and ``fn(row, col)``, the
        state after both bids (the attacker's then the target's). A solver should solve that
        matrix game (e.g. with a linear program) instead of treating the target's later
        :attr:`Phase.SAVE_BID` node as a decision made knowing the attacker's bid. Returns
        ``None`` everywhere else (including when only one side can bid: that is an ordinary
        decision, since psi-points are public).
        """
        if state.phase != _ATTACK_BID:
            return None
        rows = self.legal_actions(state)
        probe = evolve(state, attack_bid=0, phase=_SAVE_BID)
        cols = self.legal_actions(probe)
        if len(rows) < 2 or len(cols) < 2:
            return None

        def fn(row: int, col: int) -> State:
            return self.apply(self.apply(state, row), col)

        return SimultaneousMove(state.active, rows, self.owner[state.target], cols, fn)

    def private_to(self, state: State) -> int | None:
        """The attacker at a secret enhanced-attack bid, else ``None`` (RT-3.4).

        The bid stays secret until the target has made its own bid; the bids are then revealed
        together. Where the target has no choice (no point to bid) its bid is made at once and
        both are revealed in the same step, so the attacker's bid is secret exactly where
        :meth:`simultaneous_info` announces a pair. Psi-points are public, so the answer is too;
        everything else in Rogue Trader is public (abilities, rolls).
        """
        if state.phase == _ATTACK_BID and self.simultaneous_info(state) is not None:
            return state.active
        return None

    def simultaneous_parent(self, state: State) -> State | None:
        """RT-3.4: at the target's secret bid, the attacker's bid node the pair began at.

        The exact inverse of the attacker's bid (which only sets ``attack_bid`` and moves to
        the save bid), so a search values the target's bid without reading the attacker's.
        """
        if state.phase != _SAVE_BID:
            return None
        origin = evolve(state, attack_bid=0, phase=_ATTACK_BID)
        return origin if self.simultaneous_info(origin) is not None else None


__all__ = ["RTBids"]
