"""The read-only facts of one 7th-edition scenario: units, powers, geometry (7E-2 to 7E-5, 7E-9).

:class:`SeventhFacts` is built once from a validated scenario, the power data and the Perils
table by :meth:`SeventhFacts.build`. The rules copy its fields as their own attributes
(``rules.specs``, ``rules.powers``...) and take its read-only methods as their own (one
definition, no extra call); the views (:mod:`.views`) and the score bounds (:mod:`.bounds`) read
it, so they need a state and the facts only, never the rules class. Nothing in it changes during
a game.

Geometry: unit positions depend on the battle round only (the rules module's docstring,
"Movement"), so they, the distances and the candidate targets are tables per battle round
(:func:`plan_positions`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from psygym.editions.seventh.actions import ActionLayout
from psygym.editions.seventh.spec import (
    PerilsFile,
    PerilsResult,
    Power,
    PowerFile,
    RemovedHits,
    Scenario,
    Unit,
)
from psygym.editions.seventh.state import Cast, State
from psygym.scenario import distance

MEMO_SIZE = 200_000
"""Entries a per-key memo holds before it is cleared (keeps long runs bounded in memory)."""


@dataclass(frozen=True, eq=False)
class SeventhFacts:
    """What one scenario fixes for a whole game (see the module docstring).

    Units are numbered in scenario order over both sides (side 0's first); powers are those some
    psyker of the scenario may come to know, in data-file order.

    Attributes:
        scenario: the validated scenario.
        perils_table: the Perils of the Warp rows by D6 roll (7E-6).
        removed_hits: the hits a unit whose psyker is dragged into the warp takes (7E-6.1).
        specs, owner, names: per unit, its spec, its side and its name.
        side_units: per side, its units.
        max_wounds: per unit, its full wound pool (models x wounds).
        total_phases: Psychic phases in the game (``phase_limit``, or two per battle round).
        disciplines: the disciplines psykers generate powers from (7E-2.1), by index.
        powers: the scenario's powers; ``power_index`` by name.
        primaris: per discipline, its Primaris power's index, or -1 (7E-2.2).
        numbered: per discipline, its numbered powers' indices (7E-2.1).
        mastery: per unit, its psyker's mastery level (0: none).
        max_dice: the largest pool a side can roll (6 + its mastery + its bonus, 7E-3.1).
        actions: the scenario's :class:`~.actions.ActionLayout`; ``CAST``, ``DICE``, ``DENY``,
            ``DISC``, ``SWAP`` are its bases and ``num_actions`` its size, repeated here.
        positions: unit positions (x, y) per battle round (index 0: the first battle round).
        candidates_by_round: candidate targets per (caster, power) in each battle round
            (7E-4.1, disciplines.md); ``candidates``: those of the first battle round.
        instant_death: the game's ``instant_death`` setting.
        observation_size: the length of an observation vector (:class:`~.views.Observer`).
        _distances: centre-to-centre distance between each two units, per battle round.
        _deny_needs: the deny roll unit t (with a living psyker) needs against caster c
            (7E-5.2), by ``[c][t]``.
    """

    scenario: Scenario
    perils_table: dict[int, PerilsResult]
    removed_hits: RemovedHits
    specs: list[Unit]
    owner: tuple[int, ...]
    side_units: tuple[tuple[int, ...], ...]
    names: list[str]
    max_wounds: tuple[int, ...]
    total_phases: int
    disciplines: list[str]
    powers: list[Power]
    power_index: dict[str, int]
    primaris: dict[str, int]
    numbered: dict[str, tuple[int, ...]]
    mastery: tuple[int, ...]
    max_dice: int
    actions: ActionLayout
    CAST: int
    DICE: int
    DENY: int
    DISC: int
    SWAP: int
    num_actions: int
    positions: tuple[tuple[tuple[float, float], ...], ...]
    _distances: tuple[tuple[tuple[float, ...], ...], ...]
    candidates_by_round: tuple[dict[tuple[int, int], tuple[int, ...]], ...]
    candidates: dict[tuple[int, int], tuple[int, ...]]
    instant_death: bool
    _deny_needs: tuple[tuple[int, ...], ...]
    observation_size: int

    @classmethod
    def build(cls, scenario: Scenario, powers: PowerFile, perils: PerilsFile) -> SeventhFacts:
        """The facts of ``scenario`` (validated) with the power data and the Perils table."""
        specs = [u for side in scenario.sides for u in side.units]
        owner = tuple(i for i, side in enumerate(scenario.sides) for _ in side.units)
        game = scenario.game
        total_phases = game.phase_limit or 2 * game.battle_rounds

        # Disciplines named by the scenario and the powers any psyker may come to know.
        disciplines: list[str] = []
        relevant: set[str] = set()
        for u in specs:
            if u.psyker is None:
                continue
            relevant.update(u.psyker.powers)
            if u.psyker.force_weapon:
                relevant.add("Force")
            if game.generate_powers:
                for d in u.psyker.disciplines:
                    if d not in disciplines:
                        disciplines.append(d)
        for p in powers.power:
            if p.discipline in disciplines:
                relevant.add(p.name)
        known: list[Power] = [p for p in powers.power if p.name in relevant]
        power_index = {p.name: i for i, p in enumerate(known)}
        primaris = {
            d: power_index.get(
                next((p.name for p in powers.power if p.discipline == d and p.number == 0), ""), -1
            )
            for d in disciplines
        }
        numbered = {
            d: tuple(i for i, p in enumerate(known) if p.discipline == d and p.number > 0)
            for d in disciplines
        }

        n_units, n_powers = len(specs), len(known)
        mastery = tuple(u.psyker.mastery if u.psyker else 0 for u in specs)
        max_dice = 6 + max(
            sum(mastery[i] for i in range(n_units) if owner[i] == side) + s.pool_bonus
            for side, s in enumerate(scenario.sides)
        )
        actions = ActionLayout(n_units, n_powers, len(disciplines), max_dice)

        # Geometry per battle round: the scenario's advance moves are fixed in advance, so unit
        # positions depend on the battle round only (the rules' module docstring, "Movement").
        rounds = max(game.battle_rounds, -(-total_phases // 2))
        positions = plan_positions(
            [u.position for u in specs], [u.advance for u in specs], owner, rounds
        )
        distances = tuple(
            tuple(tuple(distance(a, b) for b in pos) for a in pos) for pos in positions
        )
        candidates_by_round = tuple(
            {
                (c, p): _candidates(owner, distances[r], c, power)
                for c in range(n_units)
                for p, power in enumerate(known)
            }
            for r in range(rounds)
        )
        deny_needs = tuple(
            tuple(
                6
                - 1
                - (mastery[t] > mastery[c])
                - (spec.psyker is not None and spec.psyker.adamantium_will)
                for t, spec in enumerate(specs)
            )
            for c in range(n_units)
        )
        observation_size = (
            11
            + n_units * (6 + 3 * n_powers)
            + 2 * n_units
            + n_powers
            + 5
            + n_units
            + len(disciplines)
            + n_powers
        )
        return cls(
            scenario=scenario,
            perils_table={r.roll: r for r in perils.result},
            removed_hits=perils.removed_hits,
            specs=specs,
            owner=owner,
            side_units=tuple(tuple(i for i, o in enumerate(owner) if o == side) for side in (0, 1)),
            names=[u.name for u in specs],
            max_wounds=tuple(u.models * u.wounds for u in specs),
            total_phases=total_phases,
            disciplines=disciplines,
            powers=known,
            power_index=power_index,
            primaris=primaris,
            numbered=numbered,
            mastery=mastery,
            max_dice=max_dice,
            actions=actions,
            CAST=actions.CAST,
            DICE=actions.DICE,
            DENY=actions.DENY,
            DISC=actions.DISC,
            SWAP=actions.SWAP,
            num_actions=actions.num_actions,
            positions=positions,
            _distances=distances,
            candidates_by_round=candidates_by_round,
            candidates=candidates_by_round[0],
            instant_death=game.instant_death,
            _deny_needs=deny_needs,
            observation_size=observation_size,
        )

    def fields(self) -> dict[str, object]:
        """Every field by name (what the rules copy as their own attributes)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}

    # The rules class takes the methods below as its own (one definition, no extra call).
    def round_of(self, s: State) -> int:
        """Index of the battle round of ``s`` (0-based; the last one once the game is over)."""
        return min(s.phase // 2, len(self.positions) - 1)

    def _in_range(self, a: int, b: int, rng: float, rnd: int = 0) -> bool:
        """Centre to centre, inclusive, no line of sight (the rules' docstring, "Ranges")."""
        return self._distances[rnd][a][b] <= rng

    def targets_in_range(self, s: State, c: int, p: int) -> tuple[int, ...]:
        """Candidate targets of power ``p`` cast by unit ``c`` in the battle round of ``s``."""
        return self.candidates_by_round[self.round_of(s)][(c, p)]

    def nova_targets(self, s: State, c: int, power: Power) -> tuple[int, ...]:
        """Living enemy units in range of a nova ``power`` cast by unit ``c`` (7E-7.1)."""
        rnd = self.round_of(s)
        return tuple(
            t
            for t, u in enumerate(s.units)
            if self.owner[t] != self.owner[c]
            and u.wounds > 0
            and self._in_range(c, t, power.range, rnd)
        )

    def models_left(self, s: State, unit: int) -> int:
        """Models still in a unit (wounds left over wounds per model, rounded up)."""
        w = self.specs[unit].wounds
        return -(-s.units[unit].wounds // w)

    def deny_unit_and_threshold(self, s: State, cast: Cast) -> tuple[int | None, int]:
        """Which enemy unit denies and the roll it needs (7E-5.2): 6, 5, 4 or 3."""
        power = self.powers[cast.power]
        if power.target == "enemy":
            # The one target: its modifiers (per caster and target, from the table) count while
            # it has a living psyker, as the loop below would find.
            t = cast.target
            u = s.units[t]
            if u.psyker and u.wounds > 0:
                return (t, self._deny_needs[cast.caster][t])
            return (t, 6)
        if power.target == "enemies":
            units = self.nova_targets(s, cast.caster, power)
        else:
            return None, 6
        best: tuple[int | None, int] = (None, 6)
        for t in units:  # the nova's targets (7E-5.2: the best modifiers deny)
            mods = 0
            spec, u = self.specs[t], s.units[t]
            if u.psyker and u.wounds > 0:
                mods += 1
                if self.mastery[t] > self.mastery[cast.caster]:
                    mods += 1
                if spec.psyker is not None and spec.psyker.adamantium_will:
                    mods += 1
            if best[0] is None or 6 - mods < best[1]:
                best = (t, 6 - mods)
        return best


def _candidates(
    owner: tuple[int, ...], distances: tuple[tuple[float, ...], ...], c: int, power: Power
) -> tuple[int, ...]:
    """Units power ``power`` cast by unit ``c`` may target, at these distances (7E-4.1)."""
    side = owner[c]
    if power.target in ("self", "none", "enemies"):
        return (c,)
    wanted = side if power.target == "friendly" else 1 - side
    return tuple(
        t
        for t in range(len(owner))
        if owner[t] == wanted and (t == c or distances[c][t] <= power.range)
    )


def plan_positions(
    start: list[tuple[float, float]],
    advance: list[float],
    owner: tuple[int, ...],
    rounds: int,
) -> tuple[tuple[tuple[float, float], ...], ...]:
    """Unit positions in each battle round under the scenario's advance moves.

    Before each battle round after the first, every unit with an ``advance`` moves that many
    inches straight toward the nearest enemy unit (ties: the lowest index), in unit order, and
    stops short of coming closer than 1" to any enemy unit. Casualties are not considered: the
    plan of advance is the scenario's, so positions depend on the battle round only.

    Args:
        start: positions in the first battle round.
        advance: inches per battle round, per unit.
        owner: the side of each unit.
        rounds: number of battle rounds to plan.
    """
    pos = [(float(x), float(y)) for x, y in start]
    out = [tuple(pos)]
    n = len(pos)
    for _ in range(1, rounds):
        for i in range(n):
            if advance[i] <= 0:
                continue
            enemies = [t for t in range(n) if owner[t] != owner[i]]
            if not enemies:
                continue
            goal = min(enemies, key=lambda t: (distance(pos[i], pos[t]), t))
            d = distance(pos[i], pos[goal])
            if d <= 1:
                continue
            ux, uy = (pos[goal][0] - pos[i][0]) / d, (pos[goal][1] - pos[i][1]) / d

            def at(step: float, i: int = i, ux: float = ux, uy: float = uy) -> tuple[float, float]:
                return (pos[i][0] + ux * step, pos[i][1] + uy * step)

            def clear(step: float, i: int = i) -> bool:
                here = at(step)
                return all(distance(here, pos[t]) >= 1 for t in range(n) if owner[t] != owner[i])

            step = min(advance[i], d - 1)
            if not clear(step):
                lo, hi = 0.0, step  # the longest clear step, by bisection
                for _ in range(40):
                    mid = (lo + hi) / 2
                    lo, hi = (mid, hi) if clear(mid) else (lo, mid)
                step = lo
            pos[i] = at(step)
        out.append(tuple(pos))
    return tuple(out)


__all__ = ["MEMO_SIZE", "SeventhFacts", "plan_positions"]
