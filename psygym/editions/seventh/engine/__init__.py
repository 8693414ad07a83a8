"""The compiled twin of the 7th-edition rules: the C++ in this folder and its Python codec.

The C++ (``rules.cc`` structure, legality and chance; ``transitions.cc`` the stage handlers;
``odds.cc`` the exact tables; ``check.cc`` the state check; ``scenario.cc`` the numbers;
``state.h`` the byte layout) is registered in ``psygym.engine._core`` as ``"7th"``.
:data:`CODEC` hands it a validated :class:`~psygym.editions.seventh.rules.SeventhRules` as flat
numbers (:meth:`Codec7th.encode_scenario`: units, powers, the perils table, disciplines and the
distances of every battle round already measured, so the core never parses text) and converts
states both ways with the byte layout of ``state.h`` (:meth:`Codec7th.encode`,
:meth:`Codec7th.decode`).
"""

from __future__ import annotations

import struct
from typing import Any

from psygym.engine.compiled import check_capacities

FORMAT = 1
"""Version of the scenario numbers (``kFormat`` in scenario.h)."""
MAX_UNITS = 60
"""Most units of a compiled scenario (``kMaxUnits``: unit indices are uint8)."""
MAX_POWERS = 104
"""Most powers of a compiled scenario (``kPowerBits`` in state.h: the sets of powers)."""
MAX_DISCIPLINES = 120
"""Most disciplines (``kMaxDisciplines``)."""
MAX_WOUND_POOL = 65535
"""Largest wound pool of a unit (``kMaxWounds``: wounds are uint16)."""
MAX_PHASES = 249
"""Most Psychic phases (``kMaxPhases - 1``: the phase is a uint8)."""
MAX_POOL = 250
"""Largest warp charge pool (``kMaxPool``: pools are uint8)."""

POWER_BITS = 104
"""Bits of every set of powers in a state (``kPowerBits``)."""
_POWER_BYTES = POWER_BITS // 8
_HEADER = struct.Struct("<d19B")
_UNIT = struct.Struct(f"<H7B{_POWER_BYTES}s")
_TARGETS = ("self", "friendly", "enemy", "enemies", "none")
_OUTCOMES = ("wound", "removed", "surge", "nothing")
_EXTRAS = (None, "purge", "drain")
_DOUBLES = (None, "grey_knight", "daemon")


def _refuse(field: str, problem: str, allowed: str) -> None:
    """Raise the ScenarioError of a scenario past a compiled capacity."""
    from psygym.scenario import ScenarioError

    raise ScenarioError("compiled engine (7th)", field, problem, allowed)


def _dice(expr: str | int) -> list[int]:
    """A dice expression as ``[count, sides, modifier]`` (``[0, 0, n]`` for a constant)."""
    from psygym.dice import parse

    e = parse(expr)
    return [e.count, e.sides, e.modifier] if e.sides else [0, 0, e.modifier]


def _bits(indices: Any) -> int:
    """The set of ``indices`` as an integer bitset."""
    out = 0
    for i in indices:
        out |= 1 << i
    return out


def _members(bits: int) -> list[int]:
    """The indices set in an integer bitset, ascending."""
    out = []
    while bits:
        low = bits & -bits
        out.append(low.bit_length() - 1)
        bits ^= low
    return out


class Codec7th:
    """The 7th edition's :class:`~psygym.engine.Codec` (use the instance :data:`CODEC`).

    Attributes:
        game_id: the id the C++ registers.
    """

    game_id = "7th"

    def rules_class(self) -> type:
        """The reference rules class the twin mirrors."""
        from psygym.editions.seventh.rules import SeventhRules

        return SeventhRules

    # ------------------------------------------------------------------ scenario
    def encode_scenario(self, rules: Any) -> tuple[list[int], list[float]]:
        """The scenario of ``rules`` as the numbers scenario.cc reads.

        Raises:
            ScenarioError: the scenario is past a compiled capacity (naming the limit).
        """
        self._check_sizes(rules)
        game = rules.scenario.game
        n_units, n_powers = len(rules.specs), len(rules.powers)
        ints = [FORMAT, n_units, n_powers, len(rules.disciplines), rules.max_dice,
                rules.total_phases, len(rules.positions), game.first_player,
                int(game.generate_powers), int(game.instant_death),
                *(side.pool_bonus for side in rules.scenario.sides)]  # fmt: skip
        for roll in range(1, 7):
            row = rules.perils_table[roll]
            ints += [int(row.ld_test), _OUTCOMES.index(row.on_pass),
                     _OUTCOMES.index(row.on_fail), _EXTRAS.index(row.extra)]  # fmt: skip
        rh = rules.removed_hits
        if _lowest(rh.hits) < 0:
            _refuse("removed_hits.hits", f"{rh.hits!r} can roll below 0 hits",
                    "hits of at least 0")  # fmt: skip
        ints += [*_dice(rh.hits), rh.strength, rh.ap]
        reals = [float(game.warp_surge_value)]
        for i, spec in enumerate(rules.specs):
            ints += self._unit(rules, i, spec)
            reals.append(float(spec.value_per_wound))
        for power in rules.powers:
            ints += self._power(power)
            reals += [float(power.range), float(power.effect.value or 0.0)]
        for d in rules.disciplines:
            numbered = rules.numbered[d]
            ints += [rules.primaris[d], len(numbered), *numbered]
        for per_round in rules._distances:
            for row in per_round:
                reals += [float(x) for x in row]
        return ints, reals

    def _check_sizes(self, rules: Any) -> None:
        """Refuse a scenario whose numbers do not fit the compiled state (state.h)."""
        limits = [
            ("sides.units", len(rules.specs), MAX_UNITS, "MAX_UNITS"),
            ("powers", len(rules.powers), MAX_POWERS, "MAX_POWERS"),
            ("disciplines", len(rules.disciplines), MAX_DISCIPLINES, "MAX_DISCIPLINES"),
            ("sides.units.wounds", max(rules.max_wounds), MAX_WOUND_POOL, "MAX_WOUND_POOL"),
            ("game.phase_limit", rules.total_phases, MAX_PHASES, "MAX_PHASES"),
            ("sides.pool_bonus", rules.max_dice, MAX_POOL, "MAX_POOL"),
        ]
        check_capacities("7th", limits)

    def _unit(self, rules: Any, i: int, spec: Any) -> list[int]:
        """One unit's numbers (scenario.cc's UnitData)."""
        psy = spec.psyker
        out = [rules.owner[i], spec.models, spec.wounds, spec.toughness, spec.save,
               spec.invulnerable or 0, spec.leadership, spec.ballistic_skill]  # fmt: skip
        if psy is None:
            return [*out, 0, 0, 0, 0, 0, 0, 0]
        disciplines = (
            [rules.disciplines.index(d) for d in psy.disciplines]
            if rules.scenario.game.generate_powers
            else []
        )
        known = {rules.power_index[n] for n in psy.powers}
        if psy.force_weapon:
            known.add(rules.power_index["Force"])  # 7E-2.4
        return [*out, 1, psy.mastery, int(psy.adamantium_will), int(psy.daemon),
                int(psy.grey_knight), len(disciplines), *disciplines,
                len(known), *sorted(known)]  # fmt: skip

    def _power(self, power: Any) -> list[int]:
        """One power's numbers (scenario.cc's PowerData)."""
        from psygym.editions.seventh.spec import AREA_HITS

        eff = power.effect
        out = [power.warp_charge, _TARGETS.index(power.target)]
        where = f"powers.{power.name}.effect"
        if eff.attack is not None:
            a = eff.attack
            area = AREA_HITS.get(a.hits, 0)
            if not area and _lowest(a.hits) < 0:
                _refuse(f"{where}.attack.hits", f"{a.hits!r} can roll below 0 hits",
                        "hits of at least 0")  # fmt: skip
            ap = [1, 0, 0, 0] if a.ap == "none" else [0, *_dice(a.ap)]
            return [*out, 0, _DOUBLES.index(power.doubles_perils_unless),
                    int(power.perils_on_fail), int(eff.minus_target_ld),
                    *(_dice(a.hits) if not area else [0, 0, 0]), area,
                    int(a.to_hit == "bs"), *_dice(a.strength), *ap, *_dice(a.damage),
                    int(a.heal_caster), a.always_wounds_on or 0]  # fmt: skip
        if eff.mortal is not None:
            kind, dice = 1, _dice(eff.mortal)
        elif eff.rolloff_mortal is not None:
            kind, dice = 2, _dice(eff.rolloff_mortal)
        else:
            kind, dice = 3, [0, 0, 0]
        return [*out, kind, _DOUBLES.index(power.doubles_perils_unless),
                int(power.perils_on_fail), int(eff.minus_target_ld), *dice, 0,
                0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0]  # fmt: skip

    # ------------------------------------------------------------------ states
    def encode(self, state: Any) -> bytes:
        """A reference state as state.h's bytes.

        Raises:
            ValueError: a field does not fit the layout (not a state of a compiled scenario).
        """
        n = len(state.units)
        cast = state.cast
        score = state.score + 0.0  # one zero (-0.0 + 0.0 is 0.0)
        try:
            head = _HEADER.pack(
                score, int(state.stage), state.phase, state.active, *state.pools,
                *((1, cast.caster, cast.power, cast.target, cast.dice, cast.successes,
                   int(cast.perils), cast.deny_dice) if cast is not None else (0,) * 8),
                state.perils_roll, state.gen_unit + 1, state.gen_pick, state.gen_disc + 1,
                state.gen_power + 1, n,
            )  # fmt: skip
            parts = [head]
            for u in state.units:
                generated = (*u.generated, 0, 0, 0, 0)[:4]
                powers = _bits(u.powers).to_bytes(_POWER_BYTES, "little")
                parts.append(_UNIT.pack(u.wounds, int(u.psyker), int(u.surge), len(u.generated),
                                        *generated, powers))  # fmt: skip
            attempted = _bits(c * POWER_BITS + p for c, p in state.attempted)
            effects = _bits((p * n + t) * 2 + o for p, t, o in state.effects)
            parts.append(attempted.to_bytes(n * _POWER_BYTES, "little"))
            parts.append(effects.to_bytes(n * 2 * _POWER_BYTES, "little"))
            parts.append(_bits(state.targets).to_bytes((n + 7) // 8, "little"))
        except (struct.error, OverflowError, ValueError) as e:
            raise ValueError(f"not a state the compiled 7th edition can hold: {e}") from None
        return b"".join(parts)

    def decode(self, data: bytes) -> Any:
        """state.h's bytes as the reference state.

        Raises:
            ValueError: the bytes are not a state of this layout.
        """
        from psygym.editions.seventh.state import Cast, Stage, State, UnitState

        if len(data) < _HEADER.size:
            raise ValueError(f"a 7th-edition state has at least {_HEADER.size} bytes")
        head = _HEADER.unpack_from(data, 0)
        n = head[-1]
        size = _HEADER.size + n * (_UNIT.size + 3 * _POWER_BYTES) + (n + 7) // 8
        if len(data) != size:
            raise ValueError(f"a 7th-edition state of {n} units has {size} bytes, "
                             f"not {len(data)}")  # fmt: skip
        (score, stage, phase, active, pool0, pool1, has_cast, caster, power, target, dice,
         successes, perils, deny_dice, perils_roll, gen_unit, gen_pick, gen_disc, gen_power,
         _) = head  # fmt: skip
        units = []
        at = _HEADER.size
        for _ in range(n):
            wounds, psyker, surge, count, g0, g1, g2, g3, powers = _UNIT.unpack_from(data, at)
            at += _UNIT.size
            units.append(UnitState(
                wounds=wounds, psyker=bool(psyker),
                powers=tuple(_members(int.from_bytes(powers, "little"))),
                generated=(g0, g1, g2, g3)[:count], surge=bool(surge),
            ))  # fmt: skip
        attempted = int.from_bytes(data[at : at + n * _POWER_BYTES], "little")
        at += n * _POWER_BYTES
        effects = int.from_bytes(data[at : at + 2 * n * _POWER_BYTES], "little")
        at += 2 * n * _POWER_BYTES
        targets = int.from_bytes(data[at:], "little")
        return State(
            stage=Stage(stage), units=tuple(units), phase=phase, active=active,
            pools=(pool0, pool1),
            attempted=frozenset(divmod(k, POWER_BITS) for k in _members(attempted)),
            effects=frozenset(
                (k // 2 // n, k // 2 % n, k % 2) for k in _members(effects)
            ),
            cast=Cast(caster, power, target, dice, successes, bool(perils), deny_dice)
            if has_cast else None,
            perils_roll=perils_roll, targets=tuple(_members(targets)),
            gen_unit=gen_unit - 1, gen_pick=gen_pick, gen_disc=gen_disc - 1,
            gen_power=gen_power - 1, score=score,
        )  # fmt: skip


def _lowest(expr: str | int) -> int:
    """The smallest total of a dice expression."""
    from psygym.dice import parse

    return parse(expr).min


CODEC = Codec7th()
"""The codec the edition declares (``Edition.engine``)."""

__all__ = ["CODEC", "Codec7th"]
