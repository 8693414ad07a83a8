"""What a 2nd-edition player may see: the player's view, the observation vector, action views, text.

Hidden information (2E-2, 2E-4): a player sees its own hand, the size of the other hand, the size
of the deck, the face-up part of the discard pile (cards played), its own face-down discards and
the number of the other player's (hands discarded at the end of a phase, 2E-4.3, unless
``public_discards``), the cards paid for the power being cast and the public table; never the
other hand, the other player's face-down discards or the deck's composition.
:meth:`SecondViews.view` returns exactly that (:class:`SecondView`); :meth:`SecondViews.observe`
encodes the same fields and nothing else, and :meth:`SecondViews.render` prints only the asking
player's hand and face-down discards.

:class:`SecondViews` reads a state and the scenario's read-only :class:`~.facts.SecondFacts`
only, never the rules class (:class:`~psygym.editions.second.rules.SecondRules`), which builds
one and delegates ``view``, ``observe``, ``describe``, ``render`` and ``power_texts`` to it. Its
parts live in :mod:`.observation` (the observation vector), :mod:`.action_views` (typed action
and outcome views) and :mod:`.texts` (the rendered table and power texts); their public names
are importable from here too.
"""

from __future__ import annotations

from dataclasses import dataclass

from psygym.core import TERMINAL
from psygym.editions.second.action_views import (
    CardView,
    CastView,
    DuelView,
    InPlayView,
    OutcomeView,
    PassView,
    SecondActionViews,
)
from psygym.editions.second.facts import SecondFacts
from psygym.editions.second.observation import (
    DECISION_OVER,
    DECISION_RESPONSE,
    DECISION_TURN,
    DECISION_WAIT,
    NUM_DECISIONS,
    SecondObservation,
)
from psygym.editions.second.state import RESPONSE, InPlay, Pending, Roll, SecondState, face_up
from psygym.editions.second.texts import SecondTexts, cards_text


@dataclass(frozen=True, slots=True)
class SecondView:
    """What one player may see of a state: its own hand and the public table, nothing hidden.

    Heuristics read only this; :meth:`SecondViews.observe` encodes the same fields.
    """

    player: int
    decision: int
    phase: int
    active: int
    to_move: int
    passes: int
    hand: tuple[int, ...]
    opponent_hand_size: int
    deck_size: int
    discard: tuple[int, ...]
    """The face-up part of the discard pile (every card played; all of it with
    ``public_discards``)."""
    own_face_down: tuple[int, ...]
    """The cards this player discarded face down (2E-4.3)."""
    opponent_face_down: int
    """How many cards the other player discarded face down."""
    paid: tuple[int, ...]
    wounds: tuple[int, ...]
    powers: tuple[tuple[int, ...], ...]
    used: tuple[bool, ...]
    in_play: tuple[InPlay, ...]
    pending: Pending | None
    roll: Roll | None
    score: float
    """The player's own score so far."""


class SecondViews(SecondObservation, SecondActionViews, SecondTexts):
    """Views of one scenario's states: player view, observation, action views and text.

    Args:
        facts: the scenario's facts (names, sizes, cards, powers).

    The observation (:class:`~.observation.SecondObservation`) is built from bytes with
    memoised blocks; action views (:class:`~.action_views.SecondActionViews`) and texts
    (:class:`~.texts.SecondTexts`) read the same facts.
    """

    def __init__(self, facts: SecondFacts):
        self.facts = facts
        self._setup_observation()
        self._cast_views: dict[tuple[int, int, int], CastView] = {}

    def decision(self, state: SecondState, player: int) -> int:
        """Which decision (``DECISION_*``) ``state`` asks of ``player``."""
        mover = self.facts.current_player(state)
        if mover == TERMINAL:
            return DECISION_OVER
        if mover != player:
            return DECISION_WAIT
        return DECISION_RESPONSE if state.stage == RESPONSE else DECISION_TURN

    def view(self, state: SecondState, player: int) -> SecondView:
        """The part of ``state`` that ``player`` may see: own hand, public table, card counts."""
        return SecondView(
            player=player,
            decision=self.decision(state, player),
            phase=state.phase,
            active=self.facts.active(state),
            to_move=state.to_move,
            passes=state.passes,
            hand=state.hands[player],
            opponent_hand_size=sum(state.hands[1 - player]),
            deck_size=sum(state.deck),
            discard=face_up(state),
            own_face_down=state.face_down[player],
            opponent_face_down=sum(state.face_down[1 - player]),
            paid=state.paid,
            wounds=state.wounds,
            powers=state.powers,
            used=state.used,
            in_play=state.in_play,
            pending=state.pending,
            roll=state.roll,
            score=state.score if player == 0 else -state.score,
        )


__all__ = [
    "DECISION_OVER",
    "DECISION_RESPONSE",
    "DECISION_TURN",
    "DECISION_WAIT",
    "NUM_DECISIONS",
    "CardView",
    "CastView",
    "DuelView",
    "InPlayView",
    "OutcomeView",
    "PassView",
    "SecondView",
    "SecondViews",
    "cards_text",
    "face_up",
]
