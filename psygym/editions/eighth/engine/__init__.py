"""The compiled twin of the 8th-edition rules: the C++ in this folder and its Python codec.

The C++ (``rules.cc``, ``transitions.cc``, ``effects.cc``, ``scenario.cc``, ``state.h``) is
registered in ``psygym.engine._core`` as ``"8th"``. :data:`CODEC` hands it a validated
:class:`~psygym.editions.eighth.rules.EighthRules` as flat numbers
(:meth:`Codec8th.encode_scenario`: the units, the powers and the geometry already resolved into
the reference's candidate lists, so the core never parses text or measures a distance) and
converts states both ways
(:meth:`Codec8th.encode`, :meth:`Codec8th.decode`) with the byte layout of ``state.h``.
"""

from __future__ import annotations

import struct
from fractions import Fraction
from typing import Any

from psygym.engine.compiled import check_capacities

FORMAT = 2
"""Version of the scenario numbers (``kFormat`` in scenario.h)."""
MAX_UNITS = 120
"""Most units of a compiled scenario (``kMaxUnits``: unit indices are int8)."""
MAX_POWERS = 120
"""Most powers of a compiled scenario (``kMaxPowers``: power indices are int8)."""
MAX_WOUND_POOL = 65535
"""Largest wound pool of a unit (``kMaxWounds``: wounds are uint16)."""
MAX_BATTLE_ROUNDS = 250
"""Most battle rounds (``kMaxRounds``: the round is a uint8)."""
MAX_COUNT = 255
"""Largest warp charge, escalation, manifest or deny count (uint8 fields)."""
MAX_LEADERSHIP = 30
"""Largest Leadership (``kMaxLeadership``: roll-off tables are indexed by it)."""
MAX_TABLE_BITS = 126
"""Exact chance tables count in 128-bit integers: the total of a roll-off's or an attack's
table (the product of its dice's totals) must be at most ``2**MAX_TABLE_BITS``."""

_HEADER = "=dH7B4b2Bx"
"""state.h's Header: score, warp_charge, stage .. total, caster .. denier, N, P, padding."""
_HEADER_SIZE = struct.calcsize(_HEADER)
_EFFECT_KINDS = ("value", "mortal_wounds", "rolloff", "attack")
"""Effect kinds in the order of scenario.h's EffectKind."""


def _refuse(field: str, problem: str, allowed: str) -> None:
    """Raise the ScenarioError of a scenario past a compiled capacity."""
    from psygym.scenario import ScenarioError

    raise ScenarioError("compiled engine (8th)", field, problem, allowed)


def _dice(expr: str) -> list[int]:
    """A dice expression as ``[count, sides, modifier]`` (``[0, 0, n]`` for a constant)."""
    from psygym.dice import parse

    e = parse(expr)
    return [e.count, e.sides, e.modifier] if e.sides else [0, 0, e.modifier]


def _total(expr: str) -> int:
    """The total a dice expression's exact table counts over: sides ** count."""
    from psygym.dice import parse

    e = parse(expr)
    return e.sides**e.count if e.sides else 1


def _check_total(total: int, field: str) -> None:
    if total > 2**MAX_TABLE_BITS:
        _refuse(field, f"its exact chance table needs a total of {total.bit_length()} bits",
                f"at most {MAX_TABLE_BITS} bits (MAX_TABLE_BITS)")  # fmt: skip


def _unsaved(rules: Any, attack: Any, target: int) -> Fraction:
    """Chance that one hit of ``attack`` wounds unit ``target`` unsaved (effects.py, 8E-7.3)."""
    from psygym.combat import to_wound_8th, unsaved_chance_8th

    unit = rules.units[target]
    p = Fraction(7 - max(to_wound_8th(attack.strength, unit.toughness), 2), 6)
    return p * unsaved_chance_8th(unit.save, unit.invulnerable, attack.ap)


class Codec8th:
    """The 8th edition's :class:`~psygym.engine.Codec` (use the instance :data:`CODEC`).

    Attributes:
        game_id: the id the C++ registers.
    """

    game_id = "8th"

    def __init__(self) -> None:
        self._formats: dict[tuple[int, int], struct.Struct] = {}

    def rules_class(self) -> type:
        """The reference rules class the twin mirrors."""
        from psygym.editions.eighth.rules import EighthRules

        return EighthRules

    # ------------------------------------------------------------------ scenario

    def encode_scenario(self, rules: Any) -> tuple[list[int], list[float]]:
        """The scenario of ``rules`` as the numbers scenario.cc reads.

        Raises:
            ScenarioError: the scenario is past a compiled capacity (naming the limit).
        """
        n, n_powers, game = rules.n_units, rules.n_powers, rules.game
        self._check_sizes(rules)
        full_deny = rules.initial_state().deny_left  # every phase starts with these (8E-1.2)
        ints = [FORMAT, n, n_powers, game.first_player, game.battle_rounds, game.phase_limit or 0]
        ints += _dice(game.perils_mortal_wounds) + _dice(game.perils_blast_mortal_wounds)
        for psykers in rules.side_psykers:
            ints += [len(psykers), *psykers]
        reals: list[float] = []
        for i, unit in enumerate(rules.units):
            ints += [rules.side_of[i], int(unit.psyker), rules.max_wounds[i], unit.wounds,
                     unit.manifest, full_deny[i], unit.leadership]  # fmt: skip
            reals.append(float(unit.value_per_wound))
            for seq in (rules.known[i], rules.deny_candidates[i], rules.blast_candidates[i]):
                ints += [len(seq), *seq]
            for targets in rules.targets[i]:
                ints += [len(targets), *targets]
        for k, power in enumerate(rules.powers):
            ints += self._power(rules, k, power)
            reals.append(float(power.value) if power.value is not None else 0.0)
        return ints, reals

    def _check_sizes(self, rules: Any) -> None:
        """Refuse a scenario whose numbers do not fit the compiled state (state.h)."""
        limits = [
            ("sides.units", rules.n_units, MAX_UNITS, "MAX_UNITS"),
            ("powers", rules.n_powers, MAX_POWERS, "MAX_POWERS"),
            ("game.battle_rounds", rules.game.battle_rounds, MAX_BATTLE_ROUNDS,
             "MAX_BATTLE_ROUNDS"),
            ("sides.units.wounds", max(rules.max_wounds), MAX_WOUND_POOL, "MAX_WOUND_POOL"),
            ("sides.units.manifest", max(u.manifest for u in rules.units), MAX_COUNT, "MAX_COUNT"),
            ("sides.units.deny", max(u.deny for u in rules.units), MAX_COUNT, "MAX_COUNT"),
            ("sides.units.leadership", max(u.leadership for u in rules.units), MAX_LEADERSHIP,
             "MAX_LEADERSHIP"),
            ("powers.warp_charge", max((p.warp_charge for p in rules.powers), default=0),
             MAX_COUNT, "MAX_COUNT"),
            ("powers.escalation", max((p.escalation for p in rules.powers), default=0),
             MAX_COUNT, "MAX_COUNT"),
        ]  # fmt: skip
        check_capacities("8th", limits)

    def _power(self, rules: Any, k: int, power: Any) -> list[int]:
        """One power's numbers (scenario.cc's PowerData)."""
        eff = power.effect
        kind = ("value" if power.value is not None else "mortal_wounds"
                if eff.mortal_wounds is not None else "rolloff" if eff.rolloff is not None
                else "attack")  # fmt: skip
        out = [power.warp_charge, power.escalation, int(power.repeatable),
               int(power.chosen_target), _EFFECT_KINDS.index(kind)]  # fmt: skip
        where = f"powers.{power.name}.effect"
        if kind == "mortal_wounds":
            boosted = eff.boosted if eff.boosted_at is not None else "0"
            out += _dice(eff.mortal_wounds) + [eff.boosted_at or 0] + _dice(boosted)
        elif kind == "rolloff":
            r = eff.rolloff
            difference = r.win == "difference"
            win = "0" if difference else r.win
            _check_total(_total(r.dice) ** 2 * _total(win) * _total(r.tie), f"{where}.rolloff")
            out += _dice(r.dice) + [int(difference)] + _dice(win) + _dice(r.tie)
        elif kind == "attack":
            from psygym.dice import parse

            a = eff.attack
            max_hits = max(parse(a.hits).max, 0)
            out += _dice(a.hits) + _dice(a.damage)
            for j in range(rules.n_units):
                p = _unsaved(rules, a, j)
                _check_total(_total(a.hits) * (p.denominator * _total(a.damage)) ** max_hits,
                             f"{where}.attack")  # fmt: skip
                out += [p.numerator, p.denominator]
        return out

    # ------------------------------------------------------------------ states

    def _format(self, n: int, n_powers: int) -> struct.Struct:
        """The struct of a state of a scenario with ``n`` units and ``n_powers`` powers."""
        fmt = self._formats.get((n, n_powers))
        if fmt is None:
            ub, pb = (n + 7) // 8, (n_powers + 7) // 8
            fmt = self._formats[(n, n_powers)] = struct.Struct(
                f"{_HEADER}{n}H{n}B{n_powers}B{ub}s{ub}s{pb}s"
            )
        return fmt

    def encode(self, state: Any) -> bytes:
        """A reference state as state.h's bytes.

        Raises:
            ValueError: a field does not fit the layout (not a state of a compiled scenario).
        """
        n, n_powers = len(state.wounds), len(state.attempts)
        ub, pb = (n + 7) // 8, (n_powers + 7) // 8
        blast = 0
        for k, unit in enumerate(state.blast):
            if k and unit <= state.blast[k - 1]:
                raise ValueError(f"blast {state.blast} is not in increasing unit order")
            blast |= 1 << unit
        try:
            return self._format(n, n_powers).pack(
                state.score, state.warp_charge, int(state.stage), state.round, state.phase,
                state.phases_played, state.active, state.manifests_left, state.total,
                state.caster, state.power, state.target, state.denier, n, n_powers,
                *state.wounds, *state.deny_left, *state.attempts,
                state.selected.to_bytes(ub, "little"), blast.to_bytes(ub, "little"),
                state.unit_powers.to_bytes(pb, "little"),
            )  # fmt: skip
        except (struct.error, OverflowError) as e:
            raise ValueError(f"not a state the compiled 8th edition can hold: {e}") from None

    def decode(self, data: bytes) -> Any:
        """state.h's bytes as the reference state.

        Raises:
            ValueError: the bytes are not a state of this layout.
        """
        from psygym.editions.eighth.state import Stage, State

        if len(data) < _HEADER_SIZE:
            raise ValueError(f"an 8th-edition state has at least {_HEADER_SIZE} bytes")
        n, n_powers = struct.unpack_from("=BB", data, _HEADER_SIZE - 3)
        fmt = self._format(n, n_powers)
        if len(data) != fmt.size:
            raise ValueError(f"an 8th-edition state of {n} units and {n_powers} powers has "
                             f"{fmt.size} bytes, not {len(data)}")  # fmt: skip
        v = fmt.unpack(data)
        (score, warp_charge, stage, rnd, phase, played, active, manifests, total,
         caster, power, target, denier) = v[:13]  # fmt: skip
        at = 15
        wounds, deny_left = v[at : at + n], v[at + n : at + 2 * n]
        attempts = v[at + 2 * n : at + 2 * n + n_powers]
        selected, blast, unit_powers = (int.from_bytes(b, "little") for b in v[-3:])
        return State(
            stage=Stage(stage), wounds=wounds, deny_left=deny_left, attempts=attempts,
            round=rnd, phase=phase, phases_played=played, active=active, selected=selected,
            caster=caster, manifests_left=manifests, unit_powers=unit_powers, power=power,
            target=target, warp_charge=warp_charge, total=total, denier=denier,
            blast=tuple(i for i in range(n) if blast >> i & 1), score=score,
        )  # fmt: skip


CODEC = Codec8th()
"""The codec the edition declares (``Edition.engine``)."""

__all__ = ["CODEC", "Codec8th"]
