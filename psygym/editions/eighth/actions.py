"""The public action layout of the 8th edition (``Discrete(num_actions)``).

With N units and P powers in the scenario (units in scenario order, powers in data-file order):

* ``i`` in ``[0, N)``: select unit ``i`` (SELECT, 8E-2.1).
* ``N``: end the phase (SELECT, 8E-2.1).
* ``N + 1 + p * N + t``: attempt power ``p`` on target unit ``t`` (POWER, 8E-3); for
  ``self``/``none`` targets ``t`` is the caster.
* ``N + 1 + P * N``: stop manifesting with the selected unit (POWER, 8E-2.2).
* ``N + 2 + P * N + d``: deny with unit ``d`` (DENY, 8E-5.1).
* ``2 * N + 2 + P * N``: do not deny (DENY).

The ranges do not overlap, so :meth:`ActionLayout.decode` needs no state; it returns a small
frozen dataclass per kind of action (two kinds never compare equal, unlike plain tuples).
Agents build and read actions only through this class (``rules.actions``), never with
arithmetic on the bases.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class SelectAction:
    """Select PSYKER unit ``unit`` to manifest powers (8E-2.1)."""

    unit: int


@dataclass(frozen=True, slots=True)
class EndPhaseAction:
    """End the Psychic phase (8E-2.1)."""


@dataclass(frozen=True, slots=True)
class CastAction:
    """Attempt power ``power`` (index into ``rules.powers``) on unit ``target`` (8E-3)."""

    power: int
    target: int

    def __iter__(self) -> Iterator[int]:
        """``power, target = cast`` unpacks like a pair."""
        yield self.power
        yield self.target


@dataclass(frozen=True, slots=True)
class StopAction:
    """Stop manifesting powers with the selected unit (8E-2.2)."""


@dataclass(frozen=True, slots=True)
class DenyAction:
    """Attempt to deny the pending power with unit ``unit`` (8E-5)."""

    unit: int


@dataclass(frozen=True, slots=True)
class NoDenyAction:
    """Do not deny the pending power (8E-5.1)."""


DecodedAction = SelectAction | EndPhaseAction | CastAction | StopAction | DenyAction | NoDenyAction
"""What :meth:`ActionLayout.decode` returns."""


class ActionLayout:
    """Encode and decode the action numbers of a scenario with ``n_units`` units and ``n_powers``.

    Attributes:
        n_units: units of the scenario (N).
        n_powers: powers of the scenario (P).
        END_PHASE: end the phase (``N``).
        CAST: first cast action (``N + 1``).
        STOP: stop with the selected unit (``N + 1 + P * N``).
        DENY: first deny action (``STOP + 1``).
        NO_DENY: do not deny (``DENY + N``).
        num_actions: size of the action space (``NO_DENY + 1``).
    """

    __slots__ = (
        "CAST",
        "DENY",
        "END_PHASE",
        "NO_DENY",
        "STOP",
        "n_powers",
        "n_units",
        "num_actions",
    )

    def __init__(self, n_units: int, n_powers: int):
        self.n_units = n_units
        self.n_powers = n_powers
        self.END_PHASE = n_units
        self.CAST = n_units + 1
        self.STOP = n_units + 1 + n_powers * n_units
        self.DENY = self.STOP + 1
        self.NO_DENY = self.DENY + n_units
        self.num_actions = self.NO_DENY + 1

    def select(self, unit: int) -> int:
        """The action that selects ``unit`` (8E-2.1)."""
        return unit

    def cast(self, power: int, target: int) -> int:
        """The action that attempts ``power`` (index) on unit ``target`` (8E-3)."""
        return self.CAST + power * self.n_units + target

    def deny(self, unit: int) -> int:
        """The action that denies with ``unit`` (8E-5.1)."""
        return self.DENY + unit

    def is_cast(self, action: int) -> bool:
        """Whether ``action`` attempts a power."""
        return self.CAST <= action < self.STOP

    def is_deny(self, action: int) -> bool:
        """Whether ``action`` denies with some unit (not "do not deny")."""
        return self.DENY <= action < self.NO_DENY

    def decode_cast(self, action: int) -> CastAction:
        """``(power, target)`` of a cast action (no range check: see :meth:`decode`)."""
        power, target = divmod(action - self.CAST, self.n_units)
        return CastAction(power, target)

    def decode(self, action: int) -> DecodedAction:
        """The typed meaning of ``action``.

        Raises:
            ValueError: ``action`` is outside ``range(num_actions)``.
        """
        a = int(action)
        if 0 <= a < self.END_PHASE:
            return SelectAction(a)
        if a == self.END_PHASE:
            return EndPhaseAction()
        if self.CAST <= a < self.STOP:
            return self.decode_cast(a)
        if a == self.STOP:
            return StopAction()
        if self.DENY <= a < self.NO_DENY:
            return DenyAction(a - self.DENY)
        if a == self.NO_DENY:
            return NoDenyAction()
        raise ValueError(f"action {a} is outside range({self.num_actions})")

    def __repr__(self) -> str:
        return f"ActionLayout(n_units={self.n_units}, n_powers={self.n_powers})"


__all__ = [
    "ActionLayout",
    "CastAction",
    "DecodedAction",
    "DenyAction",
    "EndPhaseAction",
    "NoDenyAction",
    "SelectAction",
    "StopAction",
]
