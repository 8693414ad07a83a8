"""Frozen, hashable 8th-edition game state."""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from typing import Any


class Stage(IntEnum):
    """What the state is waiting for: a decision (D) or a chance outcome (C)."""

    SELECT = 0  # D active: a PSYKER unit, or end the phase (8E-2.1)
    POWER = 1  # D active: a power (and target) for the selected unit, or stop (8E-2.2, 8E-3)
    DENY = 2  # D opponent: which eligible PSYKER unit denies, or none (8E-5.1)
    TEST = 3  # C: the psychic test total, 2..12 (8E-4.1, 8E-4.3)
    PERILS = 4  # C: wounds the perilling caster loses (8E-6.1)
    BLAST = 5  # C: wounds the next unit near a caster slain by Perils loses (8E-6.2)
    DENY_ROLL = 6  # C: denied (1) or not (0) (8E-5.2)
    EFFECT = 7  # C: wounds the manifested power's target loses (8E-7)
    OVER = 8  # terminal (8E-8.1)


DECISION_STAGES = (Stage.SELECT, Stage.POWER, Stage.DENY)

PHASE_START: dict[str, Any] = {
    "stage": Stage.SELECT,
    "selected": 0,
    "caster": -1,
    "manifests_left": 0,
    "unit_powers": 0,
    "power": -1,
    "target": -1,
    "warp_charge": 0,
    "total": 0,
    "denier": -1,
    "blast": (),
}
"""Per-phase fields of a state at the start of a Psychic phase (the ``State`` defaults)."""


@dataclass(frozen=True)
class State:
    """The whole 8th-edition game state (immutable; ``apply`` returns a new one).

    Copies with changes go through :func:`psygym.kernel.evolve`. The class has no ``__slots__``
    on purpose: ``evolve`` then copies the instance dictionary, several times faster than
    setting each of the 19 fields of a slotted instance.

    Per-phase bookkeeping (``selected``, ``attempts``, ``deny_left``) is reset at the start of
    every Psychic phase. Each army has exactly one Psychic phase per battle round, so "once per
    battle round" (8E-3.2, 8E-3.3) is checked on the current phase's records.
    """

    stage: Stage
    wounds: tuple[int, ...]  # wounds left in each unit's pool (8E-1.1); 0 = destroyed (8E-1.3)
    deny_left: tuple[int, ...]  # deny attempts left this phase, per unit (8E-1.2)
    attempts: tuple[int, ...]  # attempts of each power by the active army this phase (8E-3, 8E-4.2)
    round: int = 1  # battle round, 1-based (8E-8.1)
    phase: int = 0  # 0: the first player's Psychic phase of the round, 1: the second player's
    phases_played: int = 0  # Psychic phases started before this one (for game.phase_limit)
    active: int = 0  # player whose Psychic phase it is
    selected: int = 0  # bit i: unit i was selected this phase (8E-2.3)
    caster: int = -1  # the selected unit (-1: none)
    manifests_left: int = 0  # powers the selected unit may still attempt (8E-2.2)
    unit_powers: int = 0  # bit p: the selected unit attempted power p (8E-3.3)
    power: int = -1  # power being attempted (index into the scenario's power list)
    target: int = -1  # its target unit (the caster itself for self/none targets)
    warp_charge: int = 0  # its warp charge for this attempt (8E-4.2)
    total: int = 0  # psychic test total (8E-4.1); 2 or 12 means Perils (8E-4.3)
    denier: int = -1  # unit attempting to deny (8E-5)
    blast: tuple[int, ...] = ()  # units still to suffer a Perils blast (8E-6.2)
    score: float = 0.0  # player 0's score (8E-8.2); player 1's is its negative

    @property
    def passed(self) -> bool:
        """Whether the pending psychic test reached its warp charge (8E-4.1)."""
        return self.total >= self.warp_charge > 0
