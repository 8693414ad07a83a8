"""The compiled twin of the 7th-edition rules: the C++ in this folder and its Python codec.

The C++ (``rules.cc`` structure, legality and chance; ``transitions.cc`` the stage handlers;
``views.cc`` the observation; ``odds.cc`` the exact tables; ``check.cc`` the state check;
``scenario.cc`` the numbers; ``state.h`` the byte layout) is registered in
``psygym.engine._core`` as ``"7th"``. :data:`CODEC` hands it a validated
:class:`~psygym.editions.seventh.rules.SeventhRules` as flat numbers
(:meth:`Codec7th.encode_scenario`: units, powers, the perils table, disciplines and the distances
of every battle round already measured, so the core never parses text).

A state's layout is sized by its scenario (``state.h``): its units, which of them have a psyker
profile, its powers and which of them are value powers. A reference state does not say all of
that, so states are converted by the codec of one scenario, :meth:`Codec7th.bind` (the compiled
game holds it): :meth:`Codec7th.encode` and :meth:`Codec7th.decode`.
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
"""Most powers of a compiled scenario (``kMaxPowers``)."""
MAX_DISCIPLINES = 120
"""Most disciplines (``kMaxDisciplines``)."""
MAX_WOUND_POOL = 65535
"""Largest wound pool of a unit (``kMaxWounds``: wounds are uint16)."""
MAX_PHASES = 249
"""Most Psychic phases (``kMaxPhases - 1``: the phase is a uint8)."""
MAX_POOL = 250
"""Largest warp charge pool (``kMaxPool``: pools are uint8)."""

_HEADER = "<d11B"
"""state.h's header: score, the flags byte, phase .. perils_roll (kHeaderSize bytes)."""
_MAX_GENERATED = 4
"""Discipline entries of a psyker record (``kMaxGenerated``)."""
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


def _bits(indices: Any, n: int) -> int:
    """The set of ``indices`` (each below ``n``) as an integer bitset."""
    out = 0
    for i in indices:
        out |= 1 << _index(i, n)
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

    :data:`CODEC` encodes scenarios; the states of one scenario are converted by the codec
    :meth:`bind` makes for it (the compiled game holds that one).

    Args:
        layout: the state layout of one scenario (``None``: no scenario's states).

    Attributes:
        game_id: the id the C++ registers.
    """

    game_id = "7th"

    def __init__(self, layout: _Layout | None = None):
        self._layout = layout

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
    def bind(self, rules: Any) -> Codec7th:
        """The codec of the states of ``rules``'s scenario (what :meth:`encode` needs)."""
        return Codec7th(_Layout(rules))

    def _bound(self) -> _Layout:
        if self._layout is None:
            raise ValueError("a 7th-edition state's layout depends on its scenario: "
                             "convert states with CODEC.bind(rules)")  # fmt: skip
        return self._layout

    def encode(self, state: Any) -> bytes:
        """A reference state as state.h's bytes.

        Raises:
            ValueError: a field does not fit the layout (not a state of this scenario that the
                compiled engine can hold), or the codec is not bound to a scenario.
        """
        lay = self._bound()
        try:
            return lay.pack(state)
        except (struct.error, OverflowError, ValueError) as e:
            raise ValueError(f"not a state the compiled 7th edition can hold: {e}") from None

    def decode(self, data: bytes) -> Any:
        """state.h's bytes as the reference state.

        Raises:
            ValueError: the bytes are not a state of this layout, or the codec is not bound.
        """
        lay = self._bound()
        if len(data) != lay.size:
            raise ValueError(f"a 7th-edition state of this scenario has {lay.size} bytes, "
                             f"not {len(data)}")  # fmt: skip
        if any(data[lay.size - lay.padding :]):
            raise ValueError("a 7th-edition state's padding bytes are not zero")
        return lay.unpack(data)


class _Layout:
    """state.h's Layout of one scenario: where each field of a state is, and the conversions.

    Args:
        rules: the scenario's reference rules.
    """

    def __init__(self, rules: Any):
        n, r = len(rules.specs), len(rules.powers)
        self.units, self.powers = n, r
        self.generate = bool(rules.scenario.game.generate_powers)
        self.psykers = tuple(u for u, spec in enumerate(rules.specs) if spec.psyker is not None)
        """The units with a psyker profile, by psyker slot."""
        self.slot = {u: k for k, u in enumerate(self.psykers)}
        self.values = tuple(p for p, power in enumerate(rules.powers)
                            if power.effect.value is not None)  # fmt: skip
        """The value powers (the only ones ever in force on a unit), by rank."""
        self.rank = {p: k for k, p in enumerate(self.values)}
        n_psykers, n_values = len(self.psykers), len(self.values)
        # Bit offsets in the bitset (state.h): psyker, surge, known, attempted, effects, targets.
        self.surge_bit = n
        self.known_bit = 2 * n
        self.attempted_bit = self.known_bit + n_psykers * r
        self.effects_bit = self.attempted_bit + n_psykers * r
        self.targets_bit = self.effects_bit + 2 * n_values * n
        self.bit_bytes = (self.targets_bit + n + 7) // 8
        wounds = "H" if max(rules.max_wounds) > 255 else "B"
        fields = (_HEADER + ("4B" if self.generate else "") + wounds * n
                  + (f"{1 + _MAX_GENERATED}B" * n_psykers if self.generate else "")
                  + f"{self.bit_bytes}s")  # fmt: skip
        self.padding = -struct.calcsize(fields) % 8
        """Zero bytes that make the size a whole number of 8-byte words (as state.h)."""
        self.struct = struct.Struct(f"{fields}{self.padding}x")
        self.size = self.struct.size
        self.unit_mask = (1 << self.attempted_bit) - 1
        self._units: dict[tuple[Any, ...], tuple[Any, ...]] = {}

    def _build_units(self, wounds: tuple[int, ...], low: int,
                     generated: dict[int, tuple[int, ...]]) -> tuple[Any, ...]:  # fmt: skip
        """The units of a state from its wounds, its unit bits and its generated powers."""
        from psygym.editions.seventh.state import UnitState

        r = self.powers
        known: dict[int, list[int]] = {u: [] for u in self.psykers}
        for i in _members(low >> self.known_bit):
            k, p = divmod(i, r)
            known[self.psykers[k]].append(p)
        return tuple(
            UnitState(wounds=wounds[t], psyker=bool(low >> t & 1),
                      powers=tuple(known.get(t, ())), generated=generated.get(t, ()),
                      surge=bool(low >> (self.surge_bit + t) & 1))
            for t in range(self.units)
        )  # fmt: skip

    def pack(self, state: Any) -> bytes:
        """The bytes of ``state`` (ValueError, KeyError or struct.error where it does not fit)."""
        n, r, units, slot = self.units, self.powers, state.units, self.slot
        if len(units) != n:
            raise ValueError(f"{len(units)} units, not the scenario's {n}")
        cast = state.cast
        flags = _index(int(state.stage), 16) | _index(state.active, 2) << 4
        if cast is not None:
            flags |= 1 << 5 | int(cast.perils) << 6
        values: list[Any] = [
            state.score + 0.0, flags, state.phase, *state.pools,  # one zero: -0.0 + 0.0 is 0.0
            *((cast.caster, cast.power, cast.target, cast.dice, cast.successes, cast.deny_dice)
              if cast is not None else (0,) * 6),
            state.perils_roll,
        ]  # fmt: skip
        gen = (state.gen_unit + 1, state.gen_pick, state.gen_disc + 1, state.gen_power + 1)
        if self.generate:
            values += gen
        elif gen != (0, 0, 0, 0):
            raise ValueError("power generation fields in a scenario without generation")
        values += (u.wounds for u in units)
        bits = 0
        for t, u in enumerate(units):
            bits |= int(u.psyker) << t | int(u.surge) << (self.surge_bit + t)
            k = slot.get(t)
            if k is None:
                if u.powers or u.generated:
                    raise ValueError(f"unit {t} has powers but no psyker profile")
                continue
            bits |= _bits(u.powers, r) << (self.known_bit + k * r)
            if self.generate:
                generated = u.generated
                if len(generated) > _MAX_GENERATED:
                    raise ValueError(f"unit {t} generated more than {_MAX_GENERATED} powers")
                values += (len(generated), *generated, *(0,) * (_MAX_GENERATED - len(generated)))
            elif u.generated:
                raise ValueError(f"unit {t} generated powers in a scenario without generation")
        for c, p in state.attempted:
            if c not in slot:
                raise ValueError(f"unit {c} attempted a power but has no psyker profile")
            bits |= 1 << (self.attempted_bit + slot[c] * r + _index(p, r))
        rank = self.rank
        for p, t, owner in state.effects:
            if p not in rank:
                raise ValueError(f"power {p} is in force but is no value power")
            bits |= 1 << (self.effects_bit + (rank[p] * n + _index(t, n)) * 2 + _index(owner, 2))
        bits |= _bits(state.targets, n) << self.targets_bit
        values.append(bits.to_bytes(self.bit_bytes, "little"))
        return self.struct.pack(*values)

    def unpack(self, data: bytes) -> Any:
        """The reference state of ``data`` (bytes of this layout)."""
        from psygym.editions.seventh.state import Cast, Stage, State

        v = self.struct.unpack(data)
        (score, flags, phase, pool0, pool1, caster, power, target, dice, successes, deny_dice,
         perils_roll) = v[:12]  # fmt: skip
        at = 12
        gen_unit = gen_pick = gen_disc = gen_power = 0
        if self.generate:
            gen_unit, gen_pick, gen_disc, gen_power = v[at : at + 4]
            at += 4
        n, r = self.units, self.powers
        wounds = v[at : at + n]
        at += n
        generated: dict[int, tuple[int, ...]] = {}
        if self.generate:
            for u in self.psykers:
                generated[u] = v[at + 1 : at + 1 + v[at]]
                at += 1 + _MAX_GENERATED
        bits = int.from_bytes(v[at], "little")
        if bits >> (self.targets_bit + n):
            raise ValueError("a 7th-edition state has bits set past its sets")
        gen_key = tuple(generated.items())
        # The units come from the wounds and the bits below attempted_bit (psyker, surge,
        # known): few combinations recur over a game's many states, so they are built once.
        low = bits & self.unit_mask
        units = self._units.get((wounds, low, gen_key))
        if units is None:
            units = self._build_units(wounds, low, generated)
            if len(self._units) >= _UNIT_CACHE:
                self._units.clear()
            self._units[(wounds, low, gen_key)] = units
        attempted, effects, targets = [], [], []
        for i in _members(bits >> self.attempted_bit):
            i += self.attempted_bit
            if i >= self.targets_bit:
                targets.append(i - self.targets_bit)
            elif i >= self.effects_bit:
                k = i - self.effects_bit
                effects.append((self.values[k // 2 // n], k // 2 % n, k % 2))
            else:
                attempted.append(divmod(i - self.attempted_bit, r))
        has_cast = flags >> 5 & 1
        return State(
            stage=Stage(flags & 15), units=units, phase=phase, active=flags >> 4 & 1,
            pools=(pool0, pool1),
            attempted=frozenset((self.psykers[k], p) for k, p in attempted),
            effects=frozenset(effects),
            cast=Cast(caster, power, target, dice, successes, bool(flags >> 6 & 1), deny_dice)
            if has_cast else None,
            perils_roll=perils_roll, targets=tuple(targets),
            gen_unit=gen_unit - 1, gen_pick=gen_pick, gen_disc=gen_disc - 1,
            gen_power=gen_power - 1, score=score,
        )  # fmt: skip


_UNIT_CACHE = 1 << 16
"""Most unit tuples a layout keeps (:meth:`_Layout.unpack`); the cache is emptied when full."""


def _index(i: int, n: int) -> int:
    """``i`` if it indexes ``n`` items, else ValueError (a bit past the set would alias)."""
    if not 0 <= i < n:
        raise ValueError(f"index {i} is outside 0 to {n - 1}")
    return i


def _lowest(expr: str | int) -> int:
    """The smallest total of a dice expression."""
    from psygym.dice import parse

    return parse(expr).min


CODEC = Codec7th()
"""The codec the edition declares (``Edition.engine``)."""

__all__ = ["CODEC", "Codec7th"]
