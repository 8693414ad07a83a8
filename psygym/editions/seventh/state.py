"""Frozen, hashable 7th-edition game state, and the draft one transition edits.

The classes are plain frozen dataclasses (no ``__slots__``): :func:`psygym.kernel.evolve` copies
an instance dictionary in one step, about three times faster than field-by-field for slotted
classes. A transition copies the state once: it edits a :class:`Draft` (a mutable copy of the
state's fields) and freezes it into the next :class:`State` at the end (the draft object becomes
that state).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

from psygym.core import CHANCE, TERMINAL
from psygym.kernel import evolve


class Stage(IntEnum):
    """What the state is waiting for: a decision (D) or a chance outcome (C)."""

    DISCIPLINE = 0  # D owner: discipline for the next generated power (7E-2.1)
    GEN_ROLL = 1  # C: the numbered power rolled, duplicates re-rolled (7E-2.1)
    SWAP = 2  # D owner: keep it or take the Primaris power (7E-2.2)
    PHASE_ROLL = 3  # C: the D6 that sets both pools (7E-3.1)
    SELECT = 4  # D active: psyker, power and target, or end the phase (7E-4.1)
    DICE = 5  # D active: how many dice (7E-4.1)
    CAST_ROLL = 6  # C: (successes, perils) of the casting dice (7E-4.3, 7E-4.4)
    PERILS = 7  # C: the Perils of the Warp D6 (7E-6)
    LD_TEST = 8  # C: the periling psyker's Leadership test (7E-6)
    PERILS_HITS = 9  # C: wounds from D6 S6 AP1 hits after Dragged into the Warp (7E-6.1)
    PURGE = 10  # C: which power Mental Purge takes (7E-6.2)
    DRAIN = 11  # C: dice Power Drain takes from both pools (7E-6.3)
    DENY = 12  # D opponent: how many dice to deny with (7E-5.1)
    DENY_ROLL = 13  # C: denied or not (7E-5.2, 7E-5.3)
    EFFECT = 14  # C: wounds a manifested power inflicts on the next target (7E-7)
    OVER = 15  # terminal


# Stage members as module constants (the same objects) for the rules modules: in Python 3.11
# ``Stage.SELECT`` is a class-attribute lookup through the enum metaclass, and transitions make
# dozens.
_DISCIPLINE = Stage.DISCIPLINE
_GEN_ROLL = Stage.GEN_ROLL
_SWAP = Stage.SWAP
_PHASE_ROLL = Stage.PHASE_ROLL
_SELECT = Stage.SELECT
_DICE = Stage.DICE
_CAST_ROLL = Stage.CAST_ROLL
_PERILS = Stage.PERILS
_LD_TEST = Stage.LD_TEST
_PERILS_HITS = Stage.PERILS_HITS
_PURGE = Stage.PURGE
_DRAIN = Stage.DRAIN
_DENY = Stage.DENY
_DENY_ROLL = Stage.DENY_ROLL
_EFFECT = Stage.EFFECT
_OVER = Stage.OVER


CHANCE_NODE, _ACTIVE, _DENIER, _GENERATOR, _ENDED = range(5)
_ROLE_OF = {
    Stage.DISCIPLINE: _GENERATOR,
    Stage.SWAP: _GENERATOR,
    Stage.SELECT: _ACTIVE,
    Stage.DICE: _ACTIVE,
    Stage.DENY: _DENIER,
    Stage.OVER: _ENDED,
}
ROLE = tuple(_ROLE_OF.get(st, CHANCE_NODE) for st in Stage)  # Stage values are 0, 1, 2, ...
"""Who moves at each stage (indexed by ``Stage``; ``CHANCE_NODE`` at chance nodes): one tuple
lookup in ``current_player`` and the fast walks."""
MOVER = tuple(
    tuple(
        {CHANCE_NODE: CHANCE, _ACTIVE: active, _DENIER: 1 - active, _ENDED: TERMINAL}.get(role)
        for active in (0, 1)
    )
    for role in ROLE
)
"""``current_player`` by stage and active player (``None``: the generating psyker's owner)."""


@dataclass(frozen=True)
class Cast:
    """The casting attempt being resolved."""

    caster: int
    power: int  # index into the scenario's power list
    target: int
    dice: int = 0
    successes: int = 0
    perils: bool = False
    deny_dice: int = 0


_new = object.__new__


class _Blank:
    """A plain instance to fill with a dictionary and turn into a frozen class (``recast``)."""


def recast(
    c: Cast,
    *,
    dice: int | None = None,
    successes: int | None = None,
    perils: bool | None = None,
    deny_dice: int | None = None,
) -> Cast:
    """``evolve(c, ...)`` for the casting fields a transition changes.

    As ``evolve``: the dictionary is copied and the changes set in it (the fields keep their
    order); the instance is a plain one given that dictionary and then the class ``Cast``.
    """
    values = c.__dict__.copy()
    if dice is not None:
        values["dice"] = dice
    if successes is not None:
        values["successes"] = successes
    if perils is not None:
        values["perils"] = perils
    if deny_dice is not None:
        values["deny_dice"] = deny_dice
    out = _new(_Blank)
    out.__dict__ = values
    out.__class__ = Cast
    return out  # type: ignore[return-value]


@dataclass(frozen=True)
class UnitState:
    """One unit's changing facts."""

    wounds: int  # wounds left in the unit's pool
    psyker: bool  # a living psyker is in the unit (can cast, counts for the pools)
    powers: tuple[int, ...] = ()  # power indices known, sorted
    generated: tuple[int, ...] = ()  # discipline index of each generated power (7E-2.3)
    surge: bool = False  # Warp Surge until its next friendly Psychic phase (7E-6.6)

    def alive(self) -> bool:
        """Whether the unit still has wounds."""
        return self.wounds > 0


@dataclass(frozen=True)
class State:
    """The whole 7th-edition game state (immutable; ``apply`` returns a new one)."""

    stage: Stage
    units: tuple[UnitState, ...]
    phase: int = 0  # index of the current Psychic phase (0-based, two per battle round)
    active: int = 0  # player whose Psychic phase it is
    pools: tuple[int, int] = (0, 0)  # warp charge dice left, per player
    attempted: frozenset[tuple[int, int]] = frozenset()  # (unit, power) tried this phase
    effects: frozenset[tuple[int, int, int]] = frozenset()  # (power, unit, owner) in force
    cast: Cast | None = None
    perils_roll: int = 0
    targets: tuple[int, ...] = ()  # units still to resolve the manifested power against
    gen_unit: int = -1  # psyker generating powers
    gen_pick: int = 0  # how many it has generated
    gen_disc: int = -1  # discipline chosen for the current pick
    gen_power: int = -1  # power rolled for the current pick
    score: float = 0.0  # player 0's score (7E-8.2); player 1's is its negative

    def with_unit(self, index: int, **changes: object) -> State:
        """A copy with one unit's fields changed."""
        units = list(self.units)
        units[index] = evolve(units[index], **changes)
        return evolve(self, units=tuple(units))


NO_ATTEMPTS: frozenset[tuple[int, int]] = frozenset()
"""The empty ``attempted`` of a new phase (one object, so the casting-choice memo can match it)."""


class Draft:
    """The fields of a :class:`State` while one transition changes them (mutable).

    A draft has exactly the attributes of the state it copies (``stage``, ``units``, ``pools``,
    ...), so rules code reads and assigns them by name and the read-only helpers that take a
    state take a draft as well. Creating it copies the state's field dictionary once;
    :meth:`freeze` turns the draft itself into the new state (its class becomes ``State``),
    so a transition makes one state copy however many fields it changes. A draft must not be
    used as a draft after :meth:`freeze`.

    Args:
        state: the state the transition starts from (left unchanged).
    """

    # The attributes are the State fields (set from the copied dictionary).
    stage: Stage
    units: tuple[UnitState, ...]
    phase: int
    active: int
    pools: tuple[int, int]
    attempted: frozenset[tuple[int, int]]
    effects: frozenset[tuple[int, int, int]]
    cast: Cast | None
    perils_roll: int
    targets: tuple[int, ...]
    gen_unit: int
    gen_pick: int
    gen_disc: int
    gen_power: int
    score: float

    def __init__(self, state: State):
        self.__dict__ = state.__dict__.copy()

    def set_unit(self, index: int, **changes: object) -> None:
        """Change one unit's fields (a new ``UnitState`` in a new ``units`` tuple)."""
        units = list(self.units)
        units[index] = evolve(units[index], **changes)
        self.units = tuple(units)

    def freeze(self) -> State:
        """The new state, with the draft's fields (the draft is spent).

        The draft object itself becomes the state: both classes are plain instances with a
        dictionary, so assigning ``__class__`` turns it into a ``State`` holding exactly the
        fields, as building one around the dictionary would, and cheaper.
        """
        self.__class__ = State  # type: ignore[assignment]
        return self  # type: ignore[return-value]
