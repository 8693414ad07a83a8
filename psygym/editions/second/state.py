"""Frozen, hashable state of a 2nd-edition game (the warp-card psychic phase).

Card multisets (deck, discard pile, hands, cards paid for the power being cast) are tuples of
counts in :class:`~psygym.editions.second.data.Card` order. The deck is a multiset, never an
ordered sequence: drawing is a chance node over card kinds (2E-2), so the state holds exactly what
is determined and nothing hidden is ever fixed in advance. States are copied with
:func:`psygym.kernel.evolve`.
"""

from __future__ import annotations

from dataclasses import dataclass
from operator import sub

from psygym.editions.second.data import NUM_CARDS

# Stages of the game (what the state is waiting for).
SETUP = 0
"""Chance: a psyker draws a power card from its disciplines (2E-1.1)."""
FLUX = 1
"""Chance: the warp flux roll at the start of a Psychic phase (2E-3.1)."""
DEAL = 2
"""Chance: one warp card is dealt (2E-3.3)."""
TURN = 3
"""Decision: the player to move takes a turn of alternating play (2E-4)."""
RESPONSE = 4
"""Decision: the opponent may answer the power being cast with a response card (2E-5.2)."""
ROLL = 5
"""Chance: a Nullify, Daemonic Attack or Psychic Duel roll."""
OVER = 6
"""The game is over."""

STAGE_NAMES = ("set-up", "warp flux", "dealing", "turn", "response", "roll", "over")

# Kinds of pending roll.
ROLL_NULLIFY = 0
"""Nullify against the power being cast (2E-5.2)."""
ROLL_NULLIFY_IN_PLAY = 1
"""Nullify against an enemy power that remains in play (2E-4.1)."""
ROLL_DAEMONIC = 2
"""Daemonic Attack: the caster rolls D6 + ML (2E-5.2)."""
ROLL_DUEL = 3
"""Psychic Duel: both psykers roll (2E-7)."""


@dataclass(frozen=True, slots=True)
class Pending:
    """The power being cast, waiting for the opponent's response (2E-5)."""

    psyker: int
    """Index of the casting psyker (in the rules' psyker list)."""
    slot: int
    """Which of its power-card slots."""
    power: int
    """Index of the power in the power data."""
    target: int
    """Target unit index, or the number of units for 'every enemy unit in range'."""
    force: int
    """Force paid (decides the effect of a variable power)."""
    ultimate: bool
    """Paid with Ultimate Force: it cannot be nullified."""
    responses: int = 0
    """Response cards played against it so far."""


@dataclass(frozen=True, slots=True)
class InPlay:
    """A power that remains in play (2E-6): applied again at the start of every later phase."""

    psyker: int
    slot: int
    power: int
    target: int
    force: int
    ultimate: bool = False
    """Paid with Ultimate Force: it cannot be nullified while it stays in play (2E-5.1)."""


@dataclass(frozen=True, slots=True)
class Effect:
    """One effect waiting to be resolved (a chance node when it rolls dice)."""

    power: int
    force: int
    psyker: int
    """The casting psyker."""
    target: int
    """The unit it affects (for ``value`` effects: the unit it was aimed at)."""
    reflected: bool = False
    """Turned against the caster by Reflection (2E-5.2)."""


@dataclass(frozen=True, slots=True)
class Roll:
    """A pending Nullify, Daemonic Attack or Psychic Duel roll."""

    kind: int
    a: int
    """Nullify: the psyker whose power is nullified; Daemonic Attack: the caster; duel: yours."""
    b: int = -1
    """Nullify in play: the power slot; duel: the enemy psyker."""
    need: int = 0
    """Nullify: the D6 score needed."""
    reroll: bool = False
    """Nullify: a psychic hood allows one re-roll."""
    player: int = 0
    """The player who played the card."""


@dataclass(frozen=True)
class SecondState:
    """Everything about a 2nd-edition game at one moment.

    Copied with :func:`psygym.kernel.evolve`. Not slotted on purpose: ``evolve`` copies an
    instance dictionary in one step, about four times faster than setting 18 slots one by one.

    ``phase`` counts Psychic phases from 0 (battle round ``phase // 2 + 1``; the active player is
    ``(first_player + phase) % 2``). ``score`` is player 0's zero-sum score.
    """

    stage: int
    phase: int
    to_move: int
    passes: int
    wounds: tuple[int, ...]
    """Wounds left per unit (scenario order)."""
    powers: tuple[tuple[int, ...], ...]
    """Per psyker, per slot: the power card held (index into the power data) or -1."""
    used: tuple[bool, ...]
    """Per psyker: has cast (or ended a power) this phase (2E-4.2)."""
    in_play: tuple[InPlay, ...]
    deck: tuple[int, ...]
    discard: tuple[int, ...]
    hands: tuple[tuple[int, ...], tuple[int, ...]]
    paid: tuple[int, ...]
    """Cards on the table paying for the power being cast (to the discard pile when it ends)."""
    to_deal: int
    deal_to: int
    pending: Pending | None
    roll: Roll | None
    effects: tuple[Effect, ...]
    score: float
    face_down: tuple[tuple[int, ...], tuple[int, ...]] = ((0,) * NUM_CARDS, (0,) * NUM_CARDS)
    """Per player: the cards of ``discard`` it discarded face down at the end of a phase (2E-4.3,
    ``public_discards`` false), which only that player has seen. The rest of the discard pile lies
    face up. Emptied when the discard pile is shuffled into a new deck (2E-2)."""


def face_up(state: SecondState) -> tuple[int, ...]:
    """The face-up part of the discard pile: all of it but the face-down discards (2E-4.3)."""
    down0, down1 = state.face_down
    if not (any(down0) or any(down1)):
        return state.discard
    return tuple(map(sub, map(sub, state.discard, down0), down1))
