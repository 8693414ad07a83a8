"""2nd-edition heuristics (warp cards, hidden hands): rules of thumb that see only their own hand.

Every heuristic reads the game through :func:`own_view`, which returns the player's
:class:`~psygym.editions.second.views.SecondView` (own hand, card counts, public table: what
``observe`` encodes) and the legal actions (which depend only on that view). Nothing else of the
state is read, so no heuristic can peek at the opponent's hand or the deck.

Names (``HEURISTICS``):

* ``cast-biggest``: cast the most valuable affordable power first (exact expected value).
* ``cast-cheapest``: cast the power that costs the fewest Force cards first.
* ``hoard-nullify``: cast like ``cast-biggest``; keep response cards for powers worth at least a
  threshold (``hoard-nullify:2.5``; default 2 wound-equivalents).
* ``nullify-always``: cast like ``cast-biggest``; answer every power, Nullify first.
* ``pass``: never cast, never answer.

Every casting heuristic also answers powers (default: any power worth at least 1) and, with
nothing left to cast, plays Psychic Duel when it expects to win, Nullifies enemy powers in play,
and plays Energy Drain while the opponent still holds cards.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable

from psygym_agents.base import DeterministicPolicy

from psygym.editions.second.actions import (
    DAEMONIC_ATTACK,
    DESTROY_POWER,
    ENERGY_DRAIN,
    NULLIFY,
    PASS,
    PAY_ULTIMATE,
    REFLECTION,
)
from psygym.editions.second.rules import SecondRules
from psygym.editions.second.views import DECISION_RESPONSE, SecondView

# Response cards in the order a heuristic spends them: the ones that surely stop the power first
# (they are discarded at the end of the phase anyway), Nullify last.
_SURE_FIRST = (REFLECTION, DESTROY_POWER, DAEMONIC_ATTACK, NULLIFY)
_NULLIFY_FIRST = (NULLIFY, REFLECTION, DESTROY_POWER, DAEMONIC_ATTACK)


def own_view(rules: SecondRules, state: Hashable, player: int) -> tuple[SecondView, list[int]]:
    """What ``player`` may use: its view (own hand, public table) and its legal actions."""
    return rules.view(state, player), rules.legal_actions(state)


class SecondHeuristic(DeterministicPolicy):
    """Base of the 2nd-edition heuristics: a casting rule and a response rule.

    Args:
        threshold: answer a power only when its expected value for the caster is at least this.
        order: the response cards to try, best first.
    """

    name = "second-heuristic"
    duel_min = 0.0
    """Play Psychic Duel only when its expected value exceeds this."""
    drain = True
    """Whether to play Energy Drain while the opponent holds cards."""

    def __init__(self, threshold: float = 1.0, order: tuple[int, ...] = _SURE_FIRST):
        self.threshold = threshold
        self.order = order

    def choose(self, rules: SecondRules, state: Hashable, player: int) -> int:
        """The action for ``player``, from its own view only."""
        view, legal = own_view(rules, state, player)
        if view.decision == DECISION_RESPONSE:
            return self.respond(rules, view, legal)
        return self.turn(rules, view, legal)

    def respond(self, rules: SecondRules, view: SecondView, legal: list[int]) -> int:
        """Answer the pending power with the first card of ``order`` if it is worth it."""
        if rules.pending_value(view) < self.threshold:
            return PASS
        for action in self.order:
            if action in legal:
                return action
        return PASS

    def pick_cast(self, rules: SecondRules, view: SecondView, casts: list[int]) -> int | None:
        """The cast action to take among the legal ones, or ``None`` to do something else."""
        scored = [(rules.cast_value(view, a), _pays_force(rules, a), -a) for a in casts]
        best = max(scored)
        return -best[2] if best[0] > 0 else None

    def turn(self, rules: SecondRules, view: SecondView, legal: list[int]) -> int:
        """A turn of alternating play: cast, else duel, else nullify in play, else drain."""
        casts, duels, nullify = split_turn_actions(rules, legal)
        if casts:
            chosen = self.pick_cast(rules, view, casts)
            if chosen is not None:
                return chosen
        if duels:
            value, action = max((rules.duel_value(view, a), a) for a in duels)
            if value > self.duel_min:
                return action
        if nullify:
            return nullify[0]
        if self.drain and ENERGY_DRAIN in legal and view.opponent_hand_size > 0:
            return ENERGY_DRAIN
        return PASS


def split_turn_actions(
    rules: SecondRules, legal: list[int]
) -> tuple[list[int], list[int], list[int]]:
    """The casts, Psychic Duels and Nullify-in-play actions among ``legal`` (each sorted)."""
    layout = rules.actions
    casts = [a for a in legal if layout.is_cast(a)]
    duels = [a for a in legal if layout.is_duel(a)]
    nullify = [a for a in legal if layout.is_nullify_in_play(a)]
    return casts, duels, nullify


def _pays_force(rules: SecondRules, action: int) -> bool:
    """Whether a cast pays with Force cards (kept for tie-breaks: Ultimate Force is rarer)."""
    return not rules.actions.decode_cast(action).ultimate


class CastBiggest(SecondHeuristic):
    """Cast the most valuable affordable power first (paying Force before Ultimate Force)."""

    name = "cast-biggest"


class CastCheapest(SecondHeuristic):
    """Cast the power that needs the fewest Force cards first (ties: the more valuable)."""

    name = "cast-cheapest"

    def pick_cast(self, rules: SecondRules, view: SecondView, casts: list[int]) -> int | None:
        """The cheapest cast with a positive expected value."""
        best: tuple[int, float, int] | None = None
        for a in casts:
            value = rules.cast_value(view, a)
            if value <= 0:
                continue
            pay = rules.actions.decode_cast(a).pay
            cards = 1 if pay == PAY_ULTIMATE else pay
            # Ultimate Force counts as dearer than any Force payment of the same size.
            key = (cards * 2 + (pay == PAY_ULTIMATE), -value, a)
            if best is None or key < best:
                best = key
        return None if best is None else best[2]


class HoardNullify(SecondHeuristic):
    """Cast like ``cast-biggest``; spend response cards only on powers worth the threshold."""

    name = "hoard-nullify"

    def __init__(self, threshold: float = 2.0):
        super().__init__(threshold=threshold, order=_NULLIFY_FIRST)


class NullifyAlways(SecondHeuristic):
    """Cast like ``cast-biggest``; answer every power, with Nullify when it can."""

    name = "nullify-always"

    def __init__(self) -> None:
        super().__init__(threshold=float("-inf"), order=_NULLIFY_FIRST)


class AlwaysPass(DeterministicPolicy):
    """Never cast and never answer (action 0 is legal at every 2nd-edition decision)."""

    name = "pass"

    def choose(self, rules: SecondRules, state: Hashable, player: int) -> int:
        """Pass, or play no response card."""
        return PASS


def _hoard(rules: SecondRules, arg: str | None = None) -> HoardNullify:
    return HoardNullify(2.0 if arg is None else float(arg))


HEURISTICS: dict[str, Callable[..., DeterministicPolicy]] = {
    "cast-biggest": lambda rules, arg=None: CastBiggest(),
    "cast-cheapest": lambda rules, arg=None: CastCheapest(),
    "hoard-nullify": _hoard,
    "nullify-always": lambda rules, arg=None: NullifyAlways(),
    "pass": lambda rules, arg=None: AlwaysPass(),
}
"""Short name -> factory ``f(rules, arg=None)`` of the 2nd-edition heuristics."""
