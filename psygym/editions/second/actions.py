"""The public action layout of the 2nd edition: constants, encoding and decoding of actions.

``Discrete(num_actions)`` with P psykers, M power slots per psyker and U units (all numbered in
scenario order over both sides):

* ``0`` :data:`PASS`: on your turn, pass (2E-4.3); when answering a power, play no response card.
* ``1`` :data:`ENERGY_DRAIN`: play Energy Drain (the phase ends at once, 2E-4.3).
* ``2`` :data:`NULLIFY`, ``3`` :data:`DESTROY_POWER`, ``4`` :data:`REFLECTION`, ``5``
  :data:`DAEMONIC_ATTACK`: response cards against the power being cast (2E-5.2).
* ``duel_base + i*P + k`` (:data:`DUEL_BASE` = 6): Psychic Duel between your psyker ``i`` and
  enemy psyker ``k`` (2E-7).
* ``end_base + i*M + j``: end your own remain-in-play power in slot ``j`` of psyker ``i`` (2E-6).
* ``nullify_base + i*M + j``: Nullify the enemy remain-in-play power of psyker ``i``, slot ``j``
  (2E-4.1).
* ``cast_base + ((i*M + j)*(U+1) + t)*5 + pay``: psyker ``i`` casts the power in slot ``j`` at
  unit ``t`` (``t = U``: every enemy unit in range), paying ``pay`` Force cards (0..3) or, with
  ``pay = 4`` (:data:`PAY_ULTIMATE`), Ultimate Force (2E-5.1).

:class:`ActionLayout` holds the bases of one scenario; :meth:`ActionLayout.decode` turns an action
into a typed tuple (:class:`PassAction`, :class:`DrainAction`, :class:`ResponseAction`,
:class:`DuelAction`, :class:`EndAction`, :class:`NullifyInPlayAction`, :class:`CastAction`), so
agents never do arithmetic on raw action numbers.
"""

from __future__ import annotations

from typing import NamedTuple

from psygym.editions.second.data import Card

PASS = 0
"""Pass on your turn, or play no response card."""
ENERGY_DRAIN = 1
"""Play Energy Drain on your turn (2E-4.3)."""
NULLIFY = 2
"""Answer the power being cast with Nullify (2E-5.2)."""
DESTROY_POWER = 3
"""Answer the power being cast with Destroy Power (2E-5.2)."""
REFLECTION = 4
"""Answer the power being cast with Reflection (2E-5.2)."""
DAEMONIC_ATTACK = 5
"""Answer the power being cast with Daemonic Attack (2E-5.2)."""
DUEL_BASE = 6
"""First Psychic Duel action (2E-7)."""
PAY_OPTIONS = 5
"""Payment choices of a cast: 0..3 Force cards, or Ultimate Force."""
PAY_ULTIMATE = 4
"""The ``pay`` value of a cast paid with Ultimate Force."""

RESPONSE_CARDS: dict[int, int] = {
    NULLIFY: Card.NULLIFY,
    DESTROY_POWER: Card.DESTROY_POWER,
    REFLECTION: Card.REFLECTION,
    DAEMONIC_ATTACK: Card.DAEMONIC_ATTACK,
}
"""Response action -> the card it plays (in action order)."""


class PassAction(NamedTuple):
    """Action 0: pass, or play no response card."""


class DrainAction(NamedTuple):
    """Play Energy Drain."""


class ResponseAction(NamedTuple):
    """Answer the power being cast with a response card."""

    card: int
    """The :class:`~psygym.editions.second.data.Card` played."""


class DuelAction(NamedTuple):
    """Psychic Duel between your psyker and an enemy psyker (2E-7)."""

    psyker: int
    enemy: int


class EndAction(NamedTuple):
    """End your own remain-in-play power."""

    psyker: int
    slot: int


class NullifyInPlayAction(NamedTuple):
    """Nullify an enemy power that remains in play (2E-4.1)."""

    psyker: int
    slot: int


class CastAction(NamedTuple):
    """Cast a power (2E-5.1); ``target`` is the number of units for 'every enemy in range'."""

    psyker: int
    slot: int
    target: int
    pay: int
    """Force cards paid (0..3), or :data:`PAY_ULTIMATE`."""

    @property
    def ultimate(self) -> bool:
        """Whether the power is paid with Ultimate Force."""
        return self.pay == PAY_ULTIMATE


Decoded = (
    PassAction
    | DrainAction
    | ResponseAction
    | DuelAction
    | EndAction
    | NullifyInPlayAction
    | CastAction
)
"""What :meth:`ActionLayout.decode` returns."""


class ActionLayout:
    """The action numbers of one scenario (P psykers, M slots per psyker, U units).

    Args:
        num_psykers: P.
        num_slots: M.
        num_units: U.

    Attributes:
        duel_base, end_base, nullify_base, cast_base: first action of each block.
        num_actions: size of the action space.
    """

    __slots__ = (
        "cast_base",
        "duel_base",
        "end_base",
        "nullify_base",
        "num_actions",
        "num_psykers",
        "num_slots",
        "num_units",
    )

    def __init__(self, num_psykers: int, num_slots: int, num_units: int):
        self.num_psykers = num_psykers
        self.num_slots = num_slots
        self.num_units = num_units
        self.duel_base = DUEL_BASE
        self.end_base = DUEL_BASE + num_psykers * num_psykers
        self.nullify_base = self.end_base + num_psykers * num_slots
        self.cast_base = self.nullify_base + num_psykers * num_slots
        self.num_actions = self.cast_base + num_psykers * num_slots * (num_units + 1) * PAY_OPTIONS

    # ------------------------------------------------------------------------------ encode
    def encode_duel(self, psyker: int, enemy: int) -> int:
        """The Psychic Duel action of your ``psyker`` against ``enemy``."""
        return DUEL_BASE + psyker * self.num_psykers + enemy

    def encode_end(self, psyker: int, slot: int) -> int:
        """The action ending your own remain-in-play power in ``slot`` of ``psyker``."""
        return self.end_base + psyker * self.num_slots + slot

    def encode_nullify(self, psyker: int, slot: int) -> int:
        """The action playing Nullify on the enemy power in play in ``slot`` of ``psyker``."""
        return self.nullify_base + psyker * self.num_slots + slot

    def encode_cast(self, psyker: int, slot: int, target: int, pay: int) -> int:
        """The cast action of the power in ``slot`` of ``psyker`` at ``target``, paying ``pay``."""
        return self.cast_base + (
            ((psyker * self.num_slots + slot) * (self.num_units + 1) + target) * PAY_OPTIONS + pay
        )

    # ------------------------------------------------------------------------------ classify
    def is_duel(self, action: int) -> bool:
        """Whether ``action`` is a Psychic Duel."""
        return DUEL_BASE <= action < self.end_base

    def is_end(self, action: int) -> bool:
        """Whether ``action`` ends one of your own powers in play."""
        return self.end_base <= action < self.nullify_base

    def is_nullify_in_play(self, action: int) -> bool:
        """Whether ``action`` plays Nullify on an enemy power in play."""
        return self.nullify_base <= action < self.cast_base

    def is_cast(self, action: int) -> bool:
        """Whether ``action`` casts a power."""
        return self.cast_base <= action < self.num_actions

    # ------------------------------------------------------------------------------ decode
    def decode_duel(self, action: int) -> DuelAction:
        """``(psyker, enemy)`` of a Psychic Duel action."""
        return DuelAction(*divmod(action - DUEL_BASE, self.num_psykers))

    def decode_in_play(self, action: int) -> EndAction | NullifyInPlayAction:
        """The power in play an end or Nullify-in-play action names."""
        if action >= self.nullify_base:
            return NullifyInPlayAction(*divmod(action - self.nullify_base, self.num_slots))
        return EndAction(*divmod(action - self.end_base, self.num_slots))

    def decode_cast(self, action: int) -> CastAction:
        """``(psyker, slot, target, pay)`` of a cast action."""
        rest, pay = divmod(action - self.cast_base, PAY_OPTIONS)
        rest, target = divmod(rest, self.num_units + 1)
        psyker, slot = divmod(rest, self.num_slots)
        return CastAction(psyker, slot, target, pay)

    def decode(self, action: int, *, response: bool = False) -> Decoded:
        """The typed meaning of ``action`` (``response``: the decision answers a power).

        Raises:
            ValueError: ``action`` is outside this layout (or not a response when ``response``).
        """
        if action == PASS:
            return PassAction()
        if response:
            card = RESPONSE_CARDS.get(action)
            if card is None:
                raise ValueError(f"action {action} is not a response action")
            return ResponseAction(card)
        if action == ENERGY_DRAIN:
            return DrainAction()
        if action in RESPONSE_CARDS:
            return ResponseAction(RESPONSE_CARDS[action])
        if self.is_duel(action):
            return self.decode_duel(action)
        if self.end_base <= action < self.cast_base:
            return self.decode_in_play(action)
        if self.is_cast(action):
            return self.decode_cast(action)
        raise ValueError(f"action {action} is outside range({self.num_actions})")

    def __repr__(self) -> str:
        return (
            f"ActionLayout(psykers={self.num_psykers}, slots={self.num_slots}, "
            f"units={self.num_units}, num_actions={self.num_actions})"
        )


__all__ = [
    "DAEMONIC_ATTACK",
    "DESTROY_POWER",
    "DUEL_BASE",
    "ENERGY_DRAIN",
    "NULLIFY",
    "PASS",
    "PAY_OPTIONS",
    "PAY_ULTIMATE",
    "REFLECTION",
    "RESPONSE_CARDS",
    "ActionLayout",
    "CastAction",
    "Decoded",
    "DrainAction",
    "DuelAction",
    "EndAction",
    "NullifyInPlayAction",
    "PassAction",
    "ResponseAction",
]
