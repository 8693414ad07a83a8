"""The public action layout of Rogue Trader psionics: encode and decode action numbers.

``Discrete(num_actions)`` is fixed per scenario (U units, A = 40 abilities, N the largest
number a decision may ask for: ``max(bid_limit, largest single-model wounds)``, where
``bid_limit`` is the largest possible bid, the most psi-points any psyker of the scenario can
hold, or the optional house cap ``game.max_bid`` when lower, RT-3.2, RT-3.3):

* ``0`` :data:`REST`: the psyker does nothing for its whole turn (RT-5);
* ``1`` :data:`END`: end the psyker's turn after using an ability (``abilities_per_turn`` > 1);
* ``2 .. 2+A-1`` use ability ``a - 2`` (ids are positions in ``data/abilities.toml``, RT-2.1);
* ``2+A .. 2+A+U-1`` target unit ``a - (2+A)`` (scenario order, side 0's units first);
* ``2+A+U .. 2+A+U+N`` the number ``a - (2+A+U)``: a secret bid (RT-3.2, RT-3.3) or the wounds
  Cure Wounds heals (RT-4.6).

The ranges do not overlap, so :meth:`ActionLayout.decode` needs no state. Agents build and read
actions only through this module (``rules.actions`` is the scenario's layout).
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import IntEnum
from typing import NamedTuple

REST = 0
"""Action: rest (do nothing for the whole turn, RT-5)."""
END = 1
"""Action: end this psyker's turn after using an ability."""
ABILITY_BASE = 2
"""Action ``ABILITY_BASE + id``: use ability ``id``."""


class ActionKind(IntEnum):
    """What an action number means (see the module docstring's layout)."""

    REST = 0
    END = 1
    ABILITY = 2
    TARGET = 3
    NUMBER = 4


class Decoded(NamedTuple):
    """A decoded action: its kind and its argument.

    Attributes:
        kind: the :class:`ActionKind`.
        value: the ability id (``ABILITY``), the unit index (``TARGET``), the bid or number of
            wounds (``NUMBER``); 0 for ``REST`` and ``END``.
    """

    kind: ActionKind
    value: int = 0


def encode_ability(ability: int) -> int:
    """The action that uses ability ``ability`` (its position in ``data/abilities.toml``)."""
    return ABILITY_BASE + ability


class ActionLayout:
    """The action numbers of one scenario (see the module docstring).

    Args:
        n_abilities: abilities in the data (A).
        n_units: units of the scenario (U).
        max_number: the largest bid or Cure Wounds amount (N).

    Attributes:
        target_base: first target action.
        number_base: first number (bid or amount) action.
        num_actions: size of the action space.
    """

    __slots__ = (
        "max_number",
        "n_abilities",
        "n_units",
        "num_actions",
        "number_base",
        "target_base",
    )

    def __init__(self, n_abilities: int, n_units: int, max_number: int):
        self.n_abilities = n_abilities
        self.n_units = n_units
        self.max_number = max_number
        self.target_base = ABILITY_BASE + n_abilities
        self.number_base = self.target_base + n_units
        self.num_actions = self.number_base + max_number + 1

    rest = REST
    """The rest action."""
    end = END
    """The end-of-turn action."""

    @staticmethod
    def ability(ability: int) -> int:
        """The action that uses ability ``ability``."""
        return ABILITY_BASE + ability

    def target(self, unit: int) -> int:
        """The action that aims at unit ``unit``."""
        return self.target_base + unit

    def number(self, k: int) -> int:
        """The action that bids ``k`` points or heals ``k`` wounds."""
        return self.number_base + k

    def decode(self, action: int) -> Decoded:
        """The kind and argument of ``action``.

        Raises:
            ValueError: ``action`` is outside ``range(num_actions)``.
        """
        if not 0 <= action < self.num_actions:
            raise ValueError(f"action {action} is outside range({self.num_actions})")
        if action == REST:
            return Decoded(ActionKind.REST)
        if action == END:
            return Decoded(ActionKind.END)
        if action < self.target_base:
            return Decoded(ActionKind.ABILITY, action - ABILITY_BASE)
        if action < self.number_base:
            return Decoded(ActionKind.TARGET, action - self.target_base)
        return Decoded(ActionKind.NUMBER, action - self.number_base)

    @staticmethod
    def ability_of(action: int) -> int:
        """The ability id an ability action uses (``action`` must be one)."""
        return action - ABILITY_BASE

    def target_of(self, action: int) -> int:
        """The unit a target action aims at (``action`` must be one)."""
        return action - self.target_base

    def number_of(self, action: int) -> int:
        """The bid or amount of a number action (``action`` must be one)."""
        return action - self.number_base

    def abilities_in(self, actions: Iterable[int]) -> list[int]:
        """The ability ids used by the ability actions among ``actions``, in order."""
        target_base = self.target_base
        return [a - ABILITY_BASE for a in actions if ABILITY_BASE <= a < target_base]

    def __repr__(self) -> str:
        return (
            f"ActionLayout(abilities={self.n_abilities}, units={self.n_units}, "
            f"max_number={self.max_number})"
        )


__all__ = ["ABILITY_BASE", "END", "REST", "ActionKind", "ActionLayout", "Decoded", "encode_ability"]
