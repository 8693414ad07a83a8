"""Frozen, hashable game states of the Rogue Trader edition (RT-1 to RT-6).

A :class:`State` holds one :class:`UnitState` per unit of the scenario (scenario order, side 0's
units first), the turn counter, the node kind (:class:`Phase`) and the ability being resolved,
including the attacker's pending enhanced-attack bid (secret from the defender until both bids
are in, RT-3.4). Copies are made with :func:`psygym.kernel.evolve`.

:class:`State` keeps an instance dictionary (no ``__slots__``) on purpose: ``evolve`` copies a
dictionary in one call, about three times faster than rebuilding a slotted instance field by
field, and the rules copy the state at every transition. :class:`UnitState` stays slotted: its
fields are read (and hashed, by the observation and solver memos) far more often than copied.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from enum import IntEnum
from operator import attrgetter

from psygym.core import Event

_set = object.__setattr__


class Phase(IntEnum):
    """Kind of node the game is at."""

    SETUP_LEVEL = 0
    """Chance: random psi-level of psyker ``actor`` (RT-1.1)."""
    SETUP_COUNT = 1
    """Chance: random number of abilities of psyker ``actor`` (RT-1.1)."""
    SETUP_DRAW = 2
    """Chance: one random ability of psyker ``actor`` from the charts (RT-1.3)."""
    RECOVER = 3
    """Chance: confused unit ``actor`` makes a psychic save to recover (Cause Confusion)."""
    CHOOSE = 4
    """Decision: psyker ``actor`` uses an ability, rests or ends its turn (RT-2.1, RT-5)."""
    TARGET = 5
    """Decision: the target of ``ability``."""
    AMOUNT = 6
    """Decision: how many wounds Cure Wounds heals (RT-4.6)."""
    TEST = 7
    """Chance: the 2D6 test of an ability used with fewer than 12 points (RT-2.3)."""
    ATTACK_BID = 8
    """Decision: the attacker's secret enhanced-attack bid (RT-3.2)."""
    SAVE_BID = 9
    """Decision: the target's secret augmented-save bid (RT-3.3)."""
    RESOLVE = 10
    """Chance: saves, wounds and durations of the ability (RT-3.1, RT-4)."""
    OVER = 11
    """Terminal."""


DECISIONS = frozenset({Phase.CHOOSE, Phase.TARGET, Phase.AMOUNT, Phase.ATTACK_BID, Phase.SAVE_BID})
"""Phases where a player decides."""

Events = list[Event] | None
"""Where a transition records its events; ``None`` in event-free search (``rules.apply``)."""


@dataclass(frozen=True, slots=True)
class _UnitFields:
    """What changes about one unit during a game.

    Attributes:
        hp: wounds left over the whole unit (0: slain).
        out: out of the fight without being slain (Rout, Change Allegiance).
        aura: level of the aura it bears, 0 for none (RT-4.3).
        stolen: its own turns still lost to Steal Mind (RT-4.5).
        confused: confused until it makes a psychic save at the start of one of its turns.
        afraid: subject to fear (Cause Fear).
        wp_bonus: will power added by Strength of Mind (RT-4.7).
        points: psi-points left (RT-1.1).
        level: psi-level, the most psi-points it can hold.
        abilities: ids of its abilities, sorted.
        resting: rested this turn, so it regains a point at the start of its next turn (RT-5).
    """

    hp: int
    out: bool = False
    aura: int = 0
    stolen: int = 0
    confused: bool = False
    afraid: bool = False
    wp_bonus: int = 0
    points: int = 0
    level: int = 0
    abilities: tuple[int, ...] = ()
    resting: bool = False

    @property
    def fighting(self) -> bool:
        """Still in the fight: not slain and not removed."""
        return self.hp > 0 and not self.out


class UnitState(_UnitFields):
    """What changes about one unit during a game (the fields: :class:`_UnitFields`).

    The same frozen dataclass value, with its hash kept once computed: units are hashed inside
    every memo key that holds ``State.units`` (legal actions, observation blocks, solver
    tables), far more often than they are built. The hash is the dataclass's own, the hash of
    the tuple of fields, so sets and dictionaries order units exactly as before.
    """

    __slots__ = ("_hash",)

    def __hash__(self) -> int:
        try:
            return self._hash
        except AttributeError:
            h = hash(_field_values(self))
            _set(self, "_hash", h)
            return h


_field_values = attrgetter(*(f.name for f in fields(_UnitFields)))
"""The tuple of a unit's field values, in field order (what the dataclass hash hashes)."""


@dataclass(frozen=True)
class State:
    """A Rogue Trader game state.

    Attributes:
        units: every unit's :class:`UnitState`, in scenario order.
        turn: player turns completed (0-based index of the current turn).
        active: the player whose turn it is.
        phase: the kind of node.
        actor: the unit the node is about (psyker acting, unit being set up or recovering).
        used: abilities ``actor`` used this turn (RT-2.1).
        ability: id of the ability being used, or -1.
        target: unit index of its target, or -1.
        amount: wounds Cure Wounds heals (0 otherwise).
        attack_bid: the attacker's enhanced-attack bid; SECRET from the defender at
            :attr:`Phase.SAVE_BID` (RT-3.4).
        save_bid: the target's augmented-save bid (known once both bids are in).
        left: random abilities still to draw at :attr:`Phase.SETUP_DRAW`.
        score: zero-sum score from player 0's point of view (RT-6.2).
    """

    units: tuple[UnitState, ...]
    turn: int = 0
    active: int = 0
    phase: Phase = Phase.CHOOSE
    actor: int = -1
    used: int = 0
    ability: int = -1
    target: int = -1
    amount: int = 0
    attack_bid: int = 0
    save_bid: int = 0
    left: int = 0
    score: float = 0.0
