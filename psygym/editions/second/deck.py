"""The warp deck of the 2nd edition: card multisets, warp flux and dealing (2E-2, 2E-3).

Card multisets (the deck, the discard pile, the hands, the cards paid) are tuples of counts in
:class:`~.data.Card` order; :data:`NO_CARDS`, :func:`plus`, :func:`add_cards` and
:func:`draw_cards` work on them. :class:`SecondDeck` is the part of
:class:`~.rules.SecondRules` that rolls the warp flux (2E-3.1, capped by the psykers that can use
powers, 2E-3.2), deals the cards one at a time alternately (2E-3.3: a chance node per card, a
card kind with probability count / deck size, 2E-2) and deals again what a player has not seen
(:meth:`SecondDeck.sample_hidden`, for search and the leak tests).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Hashable
from itertools import accumulate
from operator import add

import numpy as np

from psygym.core import Event, EventKind
from psygym.editions.second.data import NUM_CARDS
from psygym.editions.second.facts import MEMO_SIZE
from psygym.editions.second.state import DEAL, SecondState
from psygym.kernel import evolve
from psygym.text import plural

NO_CARDS = (0,) * NUM_CARDS
"""The empty card multiset."""


def plus(counts: tuple[int, ...], card: int, n: int = 1) -> tuple[int, ...]:
    """``counts`` with ``n`` more cards of kind ``card`` (fewer when ``n`` is negative)."""
    out = list(counts)
    out[card] += n
    return tuple(out)


def add_cards(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    """The two card multisets together."""
    return tuple(map(add, a, b))


def draw_cards(
    pool: tuple[int, ...], n: int, rng: np.random.Generator
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """``(drawn, left)``: ``n`` cards drawn uniformly without replacement from a multiset."""
    if not n:
        return NO_CARDS, pool
    cards = np.repeat(np.arange(len(pool)), pool)
    drawn = np.bincount(cards[rng.choice(len(cards), size=n, replace=False)], minlength=len(pool))
    return tuple(int(x) for x in drawn), tuple(int(a - b) for a, b in zip(pool, drawn))


class SecondDeck:
    """Warp flux, dealing and hidden cards (2E-2, 2E-3), mixed into the rules class.

    Reads the scenario's facts (:class:`~.facts.SecondFacts` fields, held by the rules as
    attributes) and the memos and shared events the rules set up (``_deal_nodes``,
    ``_flux_plans``, ``_deal_events``...).
    """

    def flux_dice(self, state: SecondState) -> int:
        """Dice of warp flux this phase: ``warp_flux_dice`` capped by usable psykers (2E-3.2)."""
        n = self.settings.warp_flux_dice
        if self.settings.flux_cap == "both-sides":
            n = min(n, self.usable_psykers(state))
        return n

    def card_total(self, state: SecondState) -> int:
        """Deck + discard pile + both hands + paid cards: always the deck size (conservation)."""
        return sum(state.deck) + sum(state.discard) + sum(map(sum, state.hands)) + sum(state.paid)

    @staticmethod
    def _deal_outcomes(deck: tuple[int, ...]) -> list[tuple[int, float]]:
        """``(card, count / deck size)``: the float conversion of the exact law (2E-2).

        ``k / n`` is correctly rounded, so it equals ``float(Fraction(k, n))`` of
        :meth:`chance_distribution`; floats spare the Fractions of thousands of decks.
        """
        n = sum(deck)
        return [(c, k / n) for c, k in enumerate(deck) if k]

    def _apply_deal(self, s: SecondState, card: int) -> tuple[SecondState, tuple[Event, ...]]:
        """Deal one card (2E-3.3): the most frequent transition, so it has its own path."""
        p = s.deal_to
        hand = list(s.hands[p])
        hand[card] += 1
        deck = list(s.deck)
        deck[card] -= 1
        hands = (tuple(hand), s.hands[1]) if p == 0 else (s.hands[0], tuple(hand))
        s = evolve(s, deck=tuple(deck), hands=hands, to_deal=s.to_deal - 1, deal_to=1 - p)
        # The event never names the card: hands are secret.
        if s.to_deal > 0 and any(deck):  # the next card is dealt next (what _settle would find)
            return s, self._deal_event_tuples[p]
        events = [self._deal_events[p]]
        return self._settle(s, events), tuple(events)

    def _deal_run(
        self, s: SecondState, rng: np.random.Generator, events: list[Event]
    ) -> SecondState:
        """Deal every card of the deal under way (2E-3.3) into ``s`` (a transition's own copy).

        The same table, the same one uniform number per card and the same events as
        :meth:`sample_chance` and :meth:`_apply_deal` one card at a time: the deal stops when it
        is done or the deck is empty, so it takes exactly ``min(to_deal, cards in the deck)``
        numbers, drawn at once (``rng.random(n)`` gives the numbers of ``n`` calls of
        ``rng.random()``). Then settles as :meth:`_apply_deal`.
        """
        p = s.deal_to
        hands = [list(s.hands[0]), list(s.hands[1])]
        deck = s.deck
        to_deal = s.to_deal
        n = min(to_deal, sum(deck))  # counts are never negative
        draws = (rng.random(),) if n == 1 else rng.random(n).tolist()
        deal_events = self._deal_event_runs.get((p, n))  # one per card, alternately
        if deal_events is None:
            deal_events = self._deal_event_runs[(p, n)] = tuple(
                self._deal_events[(p + k) % 2] for k in range(n)
            )
        events.extend(deal_events)
        node = self._deal_nodes.get(deck)
        if node is None:
            node = self._deal_node(deck)
        for u in draws:
            _, cumulative, cards, last, kids = node
            idx = bisect_right(cumulative, u * cumulative[-1])  # ChanceTable.sample, inline
            card = cards[idx if idx < last else last]
            hands[p][card] += 1
            p = 1 - p
            after = kids[card]
            if after is None:
                after = kids[card] = self._deal_node(plus(node[0], card, -1))
            node = after
        s.__dict__.update(
            deck=node[0],
            hands=(tuple(hands[0]), tuple(hands[1])),
            to_deal=to_deal - n,
            deal_to=p,
        )
        return self._settle(s, events)

    def _deal_node(self, deck: tuple[int, ...]) -> list:
        """The deal of one card from ``deck`` as ``_deal_run`` walks it (memoised, bounded).

        ``[deck, cumulative, cards, last index, next]``: the deck's chance table (2E-2; the one
        :meth:`chance_table` gives) as its running sums and card kinds, and per card kind the
        node of the deck left once it is dealt (``None`` until a deal takes it). An empty deck
        has no outcomes (no card is dealt from it).
        """
        nodes = self._deal_nodes
        node = nodes.get(deck)
        if node is None:
            # The running sums of ChanceTable(_deal_outcomes(deck)), without building the table:
            # the same floats added in the same order.
            n = sum(deck)
            cards = [c for c, k in enumerate(deck) if k]
            cumulative = list(accumulate([deck[c] / n for c in cards]))
            node = [deck, cumulative, cards, len(cumulative) - 1, [None] * len(deck)]
            if len(nodes) >= MEMO_SIZE:
                nodes.clear()
            nodes[deck] = node
        return node

    def _flux(self, s: SecondState, dice: int, outcome: int, events: list[Event]) -> SecondState:
        """The warp flux roll of ``dice`` dice came up ``outcome``: deal that many (2E-3.1)."""
        phase = s.phase
        plan = self._flux_plans.get((phase, dice, outcome))
        if plan is None:
            plan = self._flux_plan(s, dice, outcome)
        first, phase_event, flux_event = plan
        events.append(phase_event)
        events.append(flux_event)
        s.__dict__.update(stage=DEAL, to_deal=outcome, deal_to=first)
        return s

    def _flux_plan(self, s: SecondState, dice: int, outcome: int) -> tuple[int, Event, Event]:
        """The warp flux roll of ``s``'s phase (2E-3.1): who is dealt first (2E-3.3), its events.

        The active player and battle round depend on the phase alone, so everything the plan
        depends on is in the key ``(phase, dice, outcome)`` (memoised, bounded).
        """
        active = self.active(s)
        first = active if self.settings.deal_first == "active" else 1 - active
        rnd = self.battle_round(s)
        phase_event = self._shared_event(
            ("phase", rnd, active),
            lambda: Event(
                EventKind.PHASE,
                f"Battle round {rnd}: Psychic phase of {self.side_names[active]}.",
                active,
                (("round", rnd),),
            ),
        )
        flux_event = self._shared_event(
            ("flux", dice, outcome, active),
            lambda: Event(
                EventKind.FLUX,
                f"Warp flux {dice}D6 = {outcome}: {plural(outcome, 'card')} "
                f"{'is' if outcome == 1 else 'are'} dealt.",
                active,
                (("dice", dice), ("cards", outcome)),
            ),
        )
        plan = (first, phase_event, flux_event)
        if len(self._flux_plans) >= MEMO_SIZE:
            self._flux_plans.clear()
        self._flux_plans[(s.phase, dice, outcome)] = plan
        return plan

    def sample_hidden(
        self, state: SecondState, player: int, rng: np.random.Generator
    ) -> SecondState:
        """A full state drawn from those ``player`` cannot tell apart from ``state``.

        Everything ``player`` has not seen is dealt again: the other hand (same size) and then
        the other player's face-down discards (same number, 2E-4.3) are drawn without
        replacement from the deck, that hand and those discards together; the rest is the deck.
        ``player``'s own hand and face-down discards, the face-up discards and the table stay.
        Used by search (the ``sample_hidden`` hook of ``psygym_agents.solvers.ismcts``) and by
        the leak tests. With no face-down discards it draws exactly as the generic hook does
        (one ``rng.choice`` over the unseen cards in kind order).
        """
        other = 1 - player
        down = state.face_down[other]
        pool = add_cards(add_cards(state.deck, state.hands[other]), down)
        hand, left = draw_cards(pool, sum(state.hands[other]), rng)
        new_down = down
        if any(down):
            new_down, left = draw_cards(left, sum(down), rng)
        hands = (hand, state.hands[1]) if other == 0 else (state.hands[0], hand)
        face_down = (new_down, state.face_down[1]) if other == 0 else (state.face_down[0], new_down)
        discard = tuple(d - a + b for d, a, b in zip(state.discard, down, new_down))
        return evolve(state, hands=hands, deck=left, face_down=face_down, discard=discard)

    def private_to(self, state: Hashable) -> int | None:
        """The player a warp card is dealt to at a deal, else ``None`` (2E-2, 2E-3.3).

        Which card it is stays in that player's secret hand; the other player sees only that a
        card was dealt. Stage and receiver are public, so the answer tells nothing. Every other
        step is public: cards played lie face up, flux, rolls and set-up draws are seen by both.
        """
        assert isinstance(state, SecondState)
        if state.stage == DEAL and not state.effects:
            return state.deal_to
        return None


__all__ = ["NO_CARDS", "SecondDeck", "add_cards", "draw_cards", "plus"]
