"""What one player is shown of a game, computed from that player's information only.

The one home of this question for every screen that shows a game to a player: ``psygym play``
(the terminal), ``psygym serve`` (the browser), a replay shown as one player saw the game, the
hints, and ``psygym advise --from-log``.

By construction it never asks the true state what may be shown. Whether a step's label (the
action taken, the outcome drawn) is shown depends only on ``rules.private_to(state)``, which
the edition answers from public facts (2nd edition: a card dealt into a secret hand, 2E-2 and
2E-3.3; Rogue Trader: the attacker's secret bid, RT-3.4). A step private to another player is
shown in its public form: its events only, which never name what the step keeps secret ("Chaos
is dealt a warp card."). Where hands are secret (``Information.HIDDEN``) no probability is shown,
neither of a chance outcome nor of the other player's choice: a draw's chance follows from the
deck, and so from the other hand, and so may the number of choices the other player had.

A secret decision of the other player is withheld until the viewer has made its own next
decision; both are then known (RT-3.4) and the withheld labels come back with the viewer's step
(:attr:`Shown.revealed`). Meanwhile the odds of the viewer's options are computed for every
choice the other player could have made (a range where they differ), and hints value the
decision from the state before that secret choice (:attr:`PlayerView.pending`).
"""

from __future__ import annotations

import copy
import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any

from psygym_experiments.harness.odds_view import (
    DEPENDS_ON_RESPONSE,
    ODDS_KINDS,
    action_odds,
    awaits_response,
    odds_text,
    percent,
)

from psygym.core import CHANCE, Event, Information

HIDDEN_OUTCOME = "(hidden from you)"
"""How a chance outcome private to the other player is shown (its events still are)."""

SECRET_CHOICE = "makes a secret choice"
"""How the other player's secret decision is shown until the viewer has made its own."""


@dataclass(frozen=True)
class Shown:
    """What a player is shown of one step (a decision or a chance outcome).

    Attributes:
        player: who took the step: 0, 1 or :data:`~psygym.core.CHANCE`.
        label: the action or outcome in words; ``None`` when it is kept from the viewer.
        events: what the step caused, as the edition reports it (its events never name what
            a private step keeps secret: the contract of ``private_to``).
        probability: the chance of the outcome, or of the other player's choice, when the
            viewer may know it (``None`` otherwise).
        odds: the odds of the standard events that the other player's decision leads to (public
            dice laws), or ``""``.
        revealed: the other player's secret decisions withheld until this step of the viewer,
            with their labels (their events were shown when they were made).
    """

    player: int
    label: str | None
    events: tuple[Event, ...] = ()
    probability: float | None = None
    odds: str = ""
    revealed: tuple[Shown, ...] = ()


def hides_hands(rules: Any) -> bool:
    """Whether some of the state is private to one player (2nd edition's hands)."""
    return getattr(rules, "information", Information.PERFECT) == Information.HIDDEN


class PlayerView:
    """One player's side of a game: what each step shows them, and the odds of their options.

    Feed it every step of the game in order (:meth:`see`); it remembers only what the viewer
    may know: the other player's secret decisions not yet revealed, and the state before the
    first of them (:attr:`pending`).

    Args:
        rules: the edition's rules.
        seat: the viewer's player number.

    Attributes:
        laws_public: whether chance laws and the other player's choice probabilities may be
            shown (no secret hands in the edition, :func:`hides_hands`).
        pending: the state before the other player's secret decision that the viewer has not
            answered yet, else ``None``: hints value the viewer's decision from there.
        decisions: the decisions seen so far, either player's (chance outcomes are not
            decisions); the next one is number ``decisions + 1``, as ``psygym advise
            --from-log LOG --at N`` counts them. Public: every decision is shown, if only as
            a secret choice.
    """

    def __init__(self, rules: Any, seat: int):
        self.rules = rules
        self.seat = seat
        self.laws_public = not hides_hands(rules)
        self.pending: Hashable | None = None
        self._withheld: list[Shown] = []
        self.decisions = 0

    def see(
        self,
        state: Hashable,
        action: int,
        events: Sequence[Event],
        probability: float | None = None,
    ) -> Shown:
        """What the viewer is shown of ``action`` taken at ``state`` and the ``events`` it caused.

        Args:
            state: the state the step was taken at (a decision or a chance node).
            action: the action or chance outcome taken.
            events: the events ``apply_with_events`` reported for it.
            probability: the chance of the outcome, or of the other player's choice; shown
                only where :attr:`laws_public` and the step is not private.
        """
        rules = self.rules
        player = rules.current_player(state)
        events = tuple(events)
        if player != CHANCE:
            self.decisions += 1
        if player == self.seat:
            revealed = tuple(self._withheld)
            self._withheld.clear()
            self.pending = None
            return Shown(player, rules.action_label(state, action), events, revealed=revealed)
        private = rules.private_to(state)
        if private is not None and private != self.seat:
            if player != CHANCE:
                if self.pending is None:
                    self.pending = state
                self._withheld.append(Shown(player, rules.action_label(state, action)))
            return Shown(player, None, events)
        label = rules.action_label(state, action)
        shown_p = probability if self.laws_public else None
        odds = "" if player == CHANCE else odds_text(rules, state, action)
        return Shown(player, label, events, shown_p, odds)

    def fork(self) -> PlayerView:
        """A copy that goes on on its own (a what-if: the leak tests deal hidden cards again)."""
        twin = copy.copy(self)
        twin._withheld = list(self._withheld)
        return twin

    def options(self, state: Hashable) -> list[tuple[int, str, str]]:
        """The viewer's legal actions at ``state`` as ``(action, label, odds)``."""
        rules = self.rules
        return [
            (a, rules.action_label(state, a), self.option_odds(state, a))
            for a in rules.legal_actions(state)
        ]

    def option_odds(self, state: Hashable, action: int) -> str:
        """The odds shown next to one of the viewer's options (:func:`~.odds_view.odds_text`).

        After the other player's secret decision (:attr:`pending`), the odds of the true state
        would tell that decision: they are computed for every choice the other player could
        have made there and shown as a range where they differ.
        """
        rules, parent = self.rules, self.pending
        if parent is None:
            return odds_text(rules, state, action)
        per_kind: dict[str, list[float]] = {}
        for b in rules.legal_actions(parent):
            twin = rules.apply(parent, b, check=False)
            if rules.current_player(twin) != self.seat or action not in rules.legal_actions(twin):
                continue
            nxt = rules.apply(twin, action, check=False)
            if awaits_response(rules, twin, nxt):
                return DEPENDS_ON_RESPONSE
            for k, p in action_odds(rules, twin, action).items():
                per_kind.setdefault(k, []).append(p)
        words = dict(ODDS_KINDS)
        parts = []
        for k, ps in per_kind.items():
            lo, hi = min(ps), max(ps)
            shown = percent(lo) if math.isclose(lo, hi) else f"{percent(lo)}-{percent(hi)}"
            parts.append(f"{words[k]} {shown}")
        return ", ".join(parts)


__all__ = ["HIDDEN_OUTCOME", "SECRET_CHOICE", "PlayerView", "Shown", "hides_hands"]
