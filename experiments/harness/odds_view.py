"""The odds shown next to a player's options, in the terminal and in the browser.

Exact chances of the standard events (passes, Perils, denied) at the chance node that follows a
decision, shown only where they follow from what the player may see: an action the other player
answers next (a hidden choice) shows :data:`DEPENDS_ON_RESPONSE` instead.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from psygym.core import CHANCE, Event, EventKind

ODDS_KINDS: tuple[tuple[EventKind, str], ...] = (
    (EventKind.PASSED, "passes"),
    (EventKind.PERILS, "Perils"),
    (EventKind.DENIED, "denied"),
)
"""Standard event kinds whose chance is shown next to an action, with the word shown."""

DEPENDS_ON_RESPONSE = "depends on the response"
"""Shown instead of odds when the other player answers the action next (a hidden choice)."""


RELEVANT: dict[EventKind, tuple[EventKind, ...]] = {
    EventKind.ATTEMPT: (EventKind.PASSED,),
    EventKind.PASSED: (EventKind.PASSED,),
    EventKind.PERILS: (EventKind.PERILS,),
    EventKind.DENY_ATTEMPT: (EventKind.DENIED,),
    EventKind.DENIED: (EventKind.DENIED,),
    EventKind.NULLIFIED: (EventKind.DENIED,),
}
"""Event kind seen -> odds worth showing (an attempt makes "passes" worth showing even at 0%)."""

COUNTS_AS: dict[EventKind, EventKind] = {
    EventKind.PASSED: EventKind.PASSED,
    EventKind.PERILS: EventKind.PERILS,
    EventKind.DENIED: EventKind.DENIED,
    EventKind.NULLIFIED: EventKind.DENIED,
}
"""Event kind -> the odds it counts for. Ending a power in play with Nullify (2E-4.1, kind
``nullified``) is the success of that deny attempt, so it counts as "denied"."""


def _odds_after(rules: Any, nxt: Hashable, own: Sequence[Event]) -> dict[str, float]:
    """:func:`action_odds` from the state a decision led to and the events it reported."""
    certain = {COUNTS_AS[e.kind] for e in own if e.kind in COUNTS_AS}
    seen: set[str] = {e.kind for e in own}
    terms: dict[str, list[float]] = {k: [] for k, _ in ODDS_KINDS}
    if rules.current_player(nxt) != CHANCE:
        return {}
    for outcome, p in rules.chance_outcomes(nxt):
        _, events = rules.apply_with_events(nxt, outcome, check=False)
        seen |= {e.kind for e in events}
        for k in {COUNTS_AS[e.kind] for e in events if e.kind in COUNTS_AS}:
            terms[k].append(p)
    shown = certain | {r for k in seen for r in RELEVANT.get(k, ())}
    return {
        k: 1.0 if k in certain else min(1.0, math.fsum(terms[k]))
        for k, _ in ODDS_KINDS
        if k in shown
    }


def action_odds(rules: Any, state: Hashable, action: int) -> dict[str, float]:
    """Exact chance of the standard events a decision leads to, at its next chance node.

    When ``action`` is followed by a chance node (a casting roll, a psychic test, a deny or
    Nullify roll, the wounds of a reflected power), every outcome of that node is applied and
    the probabilities of the outcomes whose events include ``"passed"``, ``"perils"`` or
    ``"denied"`` (or ``"nullified"``, which counts as denied) are summed; such an event that the
    decision reports itself is certain (100%: a Reflection stops the power before its wounds
    are rolled, 2E-5.2). A kind is reported when some outcome produces it, or when the decision
    or an outcome reports the attempt it belongs to (``"attempt"`` for passes,
    ``"deny_attempt"`` for denied), so that 0% shows too. Empty when no chance node follows.

    These are the odds of the true state. Whether they may be shown to a player, and how, is
    :func:`odds_text`'s business.
    """
    nxt, own = rules.apply_with_events(state, action, check=False)
    return _odds_after(rules, nxt, own)


def awaits_response(rules: Any, state: Hashable, nxt: Hashable) -> bool:
    """Whether the decision from ``state`` to ``nxt`` is answered next by the other player.

    Then whether it takes effect depends on that player's choice (2E-5.2: every answerable cast
    gets a response step), which odds from the true state would either get wrong (0% because
    the next node is not a roll) or give away (they would follow the responder's hidden hand).
    A secret simultaneous pair (``simultaneous_info``, Rogue Trader's bids) is not an answer.
    """
    mover = rules.current_player(state)
    after = rules.current_player(nxt)
    if after < 0 or after == mover or not rules.is_response(nxt):
        return False
    info = getattr(rules, "simultaneous_info", None)
    return info is None or info(state) is None


def odds_text(rules: Any, state: Hashable, action: int) -> str:
    """What the screen shows next to a decision: odds from public information only.

    :data:`DEPENDS_ON_RESPONSE` when the other player answers it next (:func:`awaits_response`);
    otherwise :func:`format_odds` of :func:`action_odds` (the dice laws of a pending roll follow
    from the public table: a Nullify's score needed, a casting roll), or ``""``.
    """
    nxt, own = rules.apply_with_events(state, action, check=False)
    if awaits_response(rules, state, nxt):
        return DEPENDS_ON_RESPONSE
    return format_odds(_odds_after(rules, nxt, own))


def percent(p: float) -> str:
    """A probability as a percentage with one decimal, rounded half-up (``0.9375`` -> 93.8%)."""
    return f"{Decimal(p).scaleb(2).quantize(Decimal('0.1'), ROUND_HALF_UP)}%"


def outcome_note(p: float) -> str:
    """How a chance outcome's probability is shown beside it: `` (odds of this outcome 8.3%)``.

    The probability of the outcome that happened, not of passing: "test 10: passed (chance
    8.3%)" read as the odds of passing.
    """
    return f" (odds of this outcome {percent(p)})"


def format_odds(odds: Mapping[str, float]) -> str:
    """``"passes 58.3%, Perils 2.8%"``."""
    words = dict(ODDS_KINDS)
    return ", ".join(f"{words[k]} {percent(p)}" for k, p in odds.items())


__all__ = [
    "COUNTS_AS", "DEPENDS_ON_RESPONSE", "ODDS_KINDS", "RELEVANT", "action_odds", "awaits_response",
    "format_odds", "odds_text", "outcome_note", "percent",
]  # fmt: skip
