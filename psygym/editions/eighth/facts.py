"""The read-only facts of one 8th-edition scenario: units, powers and geometry (8E-1 to 8E-7).

:class:`EighthFacts` is built once from a validated scenario and the power data by
:meth:`EighthFacts.build`. The rules copy its fields as their own attributes (``rules.units``,
``rules.powers``...) and take its read-only method as their own (one definition, no extra call);
the views (:class:`~.views.EighthView`) read it, so they need a state and the facts only, never
the rules class. Nothing in it changes during a game.

Units are points: distances are centre to centre, and the candidate targets, deniers and blast
victims of each unit are fixed lists, filtered by the living units when asked (8E-3.4, 8E-5.1,
8E-6.2, 8E-7.1).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from psygym.editions.eighth.actions import ActionLayout
from psygym.editions.eighth.spec import Effect, Game, PowerFile, Scenario, TargetKind, Unit
from psygym.editions.eighth.state import State
from psygym.scenario import distance

MEMO_SIZE = 200_000
"""Entries a memo of the rules holds before it is cleared (keeps long runs bounded in memory)."""


@dataclass(frozen=True, slots=True)
class PowerDef:
    """A power as the rules use it (from the data file, with scenario value overrides)."""

    name: str
    warp_charge: int
    range: float
    target: TargetKind
    character_only: bool
    repeatable: bool
    escalation: int
    effect: Effect
    value: float | None  # value effects (8E-7.3), after ``game.power_values``
    chosen_target: bool  # the caster chooses among targets (a damaging ``enemy`` power)


@dataclass(frozen=True, eq=False)
class EighthFacts:
    """What one scenario fixes for a whole game (see the module docstring).

    Attributes:
        scenario: the validated scenario; ``game`` its ``[game]`` settings.
        catalogue: the power data as loaded (descriptions for the views).
        side_names: the two sides' names.
        units: every unit's spec, in index order (side 0's units, then side 1's); ``side_of``
            its player, ``names`` its name; ``n_units`` how many.
        max_wounds: per unit, its wound pool (models x wounds).
        side_units: per side, its units; ``side_psykers``: its PSYKER units that may manifest.
        powers: the scenario's powers (``PowerDef``): those some unit knows, every psyker
            knowing the universal ones (Smite, 8E-1.2), in action-index order; ``power_index``
            by name; ``n_powers`` how many.
        known: power indices each unit knows (empty for non-psykers).
        distances: centre-to-centre distance between each two units.
        targets: per caster and power, the units it may target when alive, in preference order
            (8E-3.4, 8E-7.1).
        deny_candidates: per caster, the enemy PSYKER units within deny range (8E-5.1).
        blast_candidates: per caster, the other units within the Perils blast range (8E-6.2).
        actions: the action layout (:class:`~.actions.ActionLayout`); ``END_PHASE``, ``CAST``,
            ``STOP``, ``DENY`` and ``NO_DENY`` are its bases and ``num_actions`` its size,
            repeated here.
    """

    scenario: Scenario
    catalogue: PowerFile
    game: Game
    side_names: tuple[str, ...]
    units: tuple[Unit, ...]
    side_of: tuple[int, ...]
    names: tuple[str, ...]
    n_units: int
    max_wounds: tuple[int, ...]
    side_units: tuple[tuple[int, ...], ...]
    side_psykers: tuple[tuple[int, ...], ...]
    powers: tuple[PowerDef, ...]
    power_index: dict[str, int]
    n_powers: int
    known: tuple[tuple[int, ...], ...]
    distances: tuple[tuple[float, ...], ...]
    targets: tuple[tuple[tuple[int, ...], ...], ...]
    deny_candidates: tuple[tuple[int, ...], ...]
    blast_candidates: tuple[tuple[int, ...], ...]
    actions: ActionLayout
    END_PHASE: int
    CAST: int
    STOP: int
    DENY: int
    NO_DENY: int
    num_actions: int

    @classmethod
    def build(cls, scenario: Scenario, catalogue: PowerFile) -> EighthFacts:
        """The facts of ``scenario`` (validated) with the power data ``catalogue``."""
        game = scenario.game
        pairs = [(i, u) for i, side in enumerate(scenario.sides) for u in side.units]
        units: tuple[Unit, ...] = tuple(u for _, u in pairs)
        side_of: tuple[int, ...] = tuple(i for i, _ in pairs)
        n = len(units)
        side_units = tuple(tuple(i for i in range(n) if side_of[i] == side) for side in (0, 1))

        # Powers: those some unit knows (every psyker knows the universal ones: Smite, 8E-1.2).
        universal = {p.name for p in catalogue.powers if p.known_by_all_psykers}
        knows = [(set(u.powers) | universal) if u.psyker else set() for u in units]
        used = [p for p in catalogue.powers if any(p.name in k for k in knows)]
        overrides = game.power_values
        powers: tuple[PowerDef, ...] = tuple(
            PowerDef(
                name=p.name,
                warp_charge=p.warp_charge,
                range=p.range,
                target=p.target,
                character_only=p.character_only,
                repeatable=p.repeatable,
                escalation=p.escalation,
                effect=p.effect,
                value=overrides.get(p.name, p.effect.value) if p.effect.value is not None else None,
                chosen_target=p.target == "enemy" and p.effect.value is None,
            )
            for p in used
        )

        # Geometry, precomputed once (8E-3.4, 8E-5.1, 8E-6.2, 8E-7.1).
        d = [[distance(a.position, b.position) for b in units] for a in units]
        distances = tuple(tuple(row) for row in d)
        layout = ActionLayout(n, len(powers))
        return cls(
            scenario=scenario,
            catalogue=catalogue,
            game=game,
            side_names=tuple(side.name for side in scenario.sides),
            units=units,
            side_of=side_of,
            names=tuple(u.name for u in units),
            n_units=n,
            max_wounds=tuple(u.models * u.wounds for u in units),
            side_units=side_units,
            side_psykers=tuple(
                tuple(i for i in side if units[i].psyker and units[i].manifest > 0)
                for side in side_units
            ),
            powers=powers,
            power_index={p.name: i for i, p in enumerate(powers)},
            n_powers=len(powers),
            known=tuple(tuple(i for i, p in enumerate(powers) if p.name in k) for k in knows),
            distances=distances,
            targets=tuple(
                tuple(_candidates(units, side_of, side_units, distances, c, p) for p in powers)
                for c in range(n)
            ),
            deny_candidates=tuple(
                tuple(
                    j
                    for j in side_units[1 - side_of[c]]
                    if units[j].psyker and units[j].deny > 0 and d[c][j] <= game.deny_range
                )
                for c in range(n)
            ),
            blast_candidates=tuple(
                tuple(j for j in range(n) if j != c and d[c][j] <= game.perils_blast_range)
                for c in range(n)
            ),
            actions=layout,
            END_PHASE=layout.END_PHASE,
            CAST=layout.CAST,
            STOP=layout.STOP,
            DENY=layout.DENY,
            NO_DENY=layout.NO_DENY,
            num_actions=layout.num_actions,
        )

    def fields(self) -> dict[str, object]:
        """Every field by name (what the rules copy as their own attributes)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}

    # The rules class takes the method below as its own (one definition, no extra call).
    def warp_charge(self, state: State, power: int) -> int:
        """Warp charge of ``power`` for the active army now (8E-4.2: Smite's escalation)."""
        p = self.powers[power]
        return p.warp_charge + p.escalation * state.attempts[power]


def _candidates(
    units: tuple[Unit, ...],
    side_of: tuple[int, ...],
    side_units: tuple[tuple[int, ...], ...],
    distances: tuple[tuple[float, ...], ...],
    c: int,
    p: PowerDef,
) -> tuple[int, ...]:
    """Units power ``p`` may target from caster ``c`` when alive, in preference order."""
    if p.target in ("self", "none"):
        return (c,)
    side = side_of[c]
    pool = side_units[1 - side] if p.target in ("closest_enemy", "enemy") else (side_units[side])
    out = [
        j
        for j in pool
        if distances[c][j] <= p.range and (units[j].character or not p.character_only)
    ]
    if p.target == "closest_enemy":
        out.sort(key=lambda j: (distances[c][j], j))  # ties: lowest index (8E-7.1)
    return tuple(out)


__all__ = ["MEMO_SIZE", "EighthFacts", "PowerDef"]
