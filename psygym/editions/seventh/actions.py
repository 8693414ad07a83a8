"""The public action layout of the 7th edition (``Discrete(num_actions)``).

With ``U`` units, ``R`` powers any psyker of the scenario may know, ``D`` disciplines named by
the scenario and ``M`` the largest possible pool (units in scenario order, powers in data-file
order)::

    0                              end the Psychic phase (SELECT, 7E-4.1)
    1 + (caster*R + power)*U + t   choose caster, power and target t (SELECT, 7E-4.1)
    DICE + n - 1                   cast with n dice, 1 <= n <= M (DICE, 7E-4.3)
    DENY + m                       deny with m dice, 0 <= m <= M, 0: do not deny (DENY, 7E-5.1)
    DISC + d                       generate the next power from discipline d (DISCIPLINE, 7E-2.1)
    SWAP + 0 / SWAP + 1            keep the rolled power / take the Primaris (SWAP, 7E-2.2)

Powers without a target (self, nova, conjuration) use the caster's own index as ``t``.

The ranges do not overlap, so :meth:`ActionLayout.decode` needs no state; it returns a small
frozen dataclass per kind of action. Agents build and read actions only through this class
(``rules.actions``), never with arithmetic on the bases.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class EndPhaseAction:
    """End the Psychic phase (7E-4.1)."""


@dataclass(frozen=True, slots=True)
class CastAction:
    """Choose psyker ``caster`` to cast ``power`` (index into ``rules.powers``) at ``target``.

    ``caster, power, target = action`` unpacks like a triple (7E-4.1).
    """

    caster: int
    power: int
    target: int

    def __iter__(self) -> Iterator[int]:
        """Unpack as ``(caster, power, target)``."""
        yield self.caster
        yield self.power
        yield self.target


@dataclass(frozen=True, slots=True)
class DiceAction:
    """Cast the chosen power with ``dice`` dice (7E-4.3)."""

    dice: int


@dataclass(frozen=True, slots=True)
class DenyAction:
    """Deny the Witch with ``dice`` dice; 0 lets the power through (7E-5.1)."""

    dice: int


@dataclass(frozen=True, slots=True)
class DisciplineAction:
    """Generate the next power from discipline ``discipline`` (index, 7E-2.1)."""

    discipline: int


@dataclass(frozen=True, slots=True)
class SwapAction:
    """Keep the rolled power (``swap`` false) or take the Primaris power instead (7E-2.2)."""

    swap: bool


DecodedAction = (
    EndPhaseAction | CastAction | DiceAction | DenyAction | DisciplineAction | SwapAction
)
"""What :meth:`ActionLayout.decode` returns."""


class ActionLayout:
    """Encode and decode the action numbers of one 7th-edition scenario.

    Attributes:
        n_units: units of the scenario (U).
        n_powers: powers any psyker of the scenario may know (R).
        n_disciplines: disciplines named by the scenario (D).
        max_dice: the largest possible pool (M).
        END_PHASE: end the phase (0).
        CAST: first choose-cast action (1).
        DICE: "cast with 1 die" (``CAST + U * R * U``).
        DENY: "do not deny" (``DICE + M``); ``DENY + m`` denies with m dice.
        DISC: first discipline action (``DENY + M + 1``).
        SWAP: "keep the rolled power" (``DISC + D``); ``SWAP + 1`` takes the Primaris.
        num_actions: size of the action space (``SWAP + 2``).
    """

    __slots__ = (
        "CAST",
        "DENY",
        "DICE",
        "DISC",
        "END_PHASE",
        "SWAP",
        "max_dice",
        "n_disciplines",
        "n_powers",
        "n_units",
        "num_actions",
    )

    def __init__(self, n_units: int, n_powers: int, n_disciplines: int, max_dice: int):
        self.n_units = n_units
        self.n_powers = n_powers
        self.n_disciplines = n_disciplines
        self.max_dice = max_dice
        self.END_PHASE = 0
        self.CAST = 1
        self.DICE = self.CAST + n_units * n_powers * n_units
        self.DENY = self.DICE + max_dice
        self.DISC = self.DENY + max_dice + 1
        self.SWAP = self.DISC + n_disciplines
        self.num_actions = self.SWAP + 2

    # ------------------------------------------------------------------ encode
    def end_phase(self) -> int:
        """The action that ends the Psychic phase (7E-4.1)."""
        return self.END_PHASE

    def cast(self, caster: int, power: int, target: int) -> int:
        """The action that chooses ``caster``, ``power`` and ``target`` (7E-4.1)."""
        return self.CAST + (caster * self.n_powers + power) * self.n_units + target

    def dice(self, n: int) -> int:
        """The action that casts with ``n`` dice, ``1 <= n <= max_dice`` (7E-4.3)."""
        return self.DICE + n - 1

    def deny(self, m: int) -> int:
        """The action that denies with ``m`` dice (0: do not deny) (7E-5.1)."""
        return self.DENY + m

    def discipline(self, d: int) -> int:
        """The action that generates the next power from discipline ``d`` (7E-2.1)."""
        return self.DISC + d

    def swap(self, swap: bool) -> int:
        """Keep the rolled power (``False``) or take the Primaris power (``True``) (7E-2.2)."""
        return self.SWAP + int(swap)

    # ------------------------------------------------------------------ decode
    def is_cast(self, action: int) -> bool:
        """Whether ``action`` chooses a cast (not "end the phase")."""
        return self.CAST <= action < self.DICE

    def decode_cast(self, action: int) -> CastAction:
        """``(caster, power, target)`` of a choose-cast action (no range check)."""
        k, t = divmod(action - self.CAST, self.n_units)
        c, p = divmod(k, self.n_powers)
        return CastAction(c, p, t)

    def dice_of(self, action: int) -> int:
        """Dice committed by a dice action (no range check)."""
        return action - self.DICE + 1

    def deny_dice_of(self, action: int) -> int:
        """Dice committed by a deny action (no range check)."""
        return action - self.DENY

    def decode(self, action: int) -> DecodedAction:
        """The typed meaning of ``action``.

        Raises:
            ValueError: ``action`` is outside ``range(num_actions)``.
        """
        a = int(action)
        if a == self.END_PHASE:
            return EndPhaseAction()
        if self.CAST <= a < self.DICE:
            return self.decode_cast(a)
        if self.DICE <= a < self.DENY:
            return DiceAction(a - self.DICE + 1)
        if self.DENY <= a < self.DISC:
            return DenyAction(a - self.DENY)
        if self.DISC <= a < self.SWAP:
            return DisciplineAction(a - self.DISC)
        if self.SWAP <= a < self.num_actions:
            return SwapAction(a == self.SWAP + 1)
        raise ValueError(f"action {a} is outside range({self.num_actions})")

    def __repr__(self) -> str:
        return (
            f"ActionLayout(n_units={self.n_units}, n_powers={self.n_powers}, "
            f"n_disciplines={self.n_disciplines}, max_dice={self.max_dice})"
        )


__all__ = [
    "ActionLayout",
    "CastAction",
    "DecodedAction",
    "DenyAction",
    "DiceAction",
    "DisciplineAction",
    "EndPhaseAction",
    "SwapAction",
]
