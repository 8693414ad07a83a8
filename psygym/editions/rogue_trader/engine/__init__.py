"""The compiled twin of the Rogue Trader rules: the C++ in this folder and its Python codec.

The C++ (``rules.cc`` the API, chance tables and the settling loop; ``generation.cc``,
``casting.cc``, ``bids.cc``, ``effects.cc`` and ``turns.cc`` the rule sections of the modules
of the same names; ``views.cc`` the observation; ``chances.cc`` the exact tables;
``check.cc`` the state check; ``scenario.cc`` the numbers; ``state.h`` the byte layout) is
registered in ``psygym.engine._core`` as ``"rt"``. :data:`CODEC` hands it a validated
:class:`~psygym.editions.rogue_trader.rules.RogueTraderRules` as flat numbers
(:meth:`CodecRT.encode_scenario`: the game settings, the ability data, the units, each psyker's
set-up charts and its candidate targets already measured, so the core never parses text or
measures a distance) and converts states both ways (:meth:`CodecRT.encode`,
:meth:`CodecRT.decode`) with the byte layout of ``state.h``.

The secret bids of RT-3.4 stay two decisions in a row, as the reference plays them: the state
holds the attacker's pending bid, which the defender's observation never shows.
"""

from __future__ import annotations

import struct
from typing import Any

from psygym.engine.compiled import check_capacities

FORMAT = 1
"""Version of the scenario numbers (``kFormat`` in scenario.h)."""
MAX_UNITS = 64
"""Most units of a compiled scenario (``kMaxUnits``: unit indices are int8, sets 64 bits)."""
MAX_ABILITIES = 120
"""Most abilities in the ability data (``kMaxAbilities``: ability ids are int8)."""
MAX_WOUND_POOL = 65535
"""Largest wound pool of a unit (``kMaxWounds``: wounds are uint16)."""
MAX_POINTS = 65535
"""Largest psi-level, bid or Cure Wounds amount (``kMaxPoints``: uint16 fields)."""
MAX_TURNS = 255
"""Most player turns (``kMaxTurns``: the turn is a uint8)."""
MAX_PER_TURN = 255
"""Most abilities a psyker may use in a turn (``kMaxPerTurn``: a uint8)."""

_HEADER = struct.Struct("=d3H3BbBbbB2B")
"""state.h's Header: score, amount, attack_bid, save_bid, turn .. left, N, A."""
_UNIT = "4H3B"
"""state.h's unit record before its abilities: hp, points, level, stolen, aura, wp_bonus,
flags."""
_EFFECTS = ("mental", "missile", "aura", "destroy_aura", "transfer_aura", "steal_mind",
            "remove", "confuse", "fear", "cure_injury", "cure_wounds", "strength_of_mind",
            "value")  # fmt: skip
"""abilities.Effect in the order of scenario.h's Effect."""
_TARGETS = ("enemy", "friend", "self")
"""AbilitySpec.target in the order of scenario.h's TargetKind."""
_OUT, _CONFUSED, _AFRAID, _RESTING = 1, 2, 4, 8
"""state.h's UnitFlag bits."""
_MEMO = 100_000
"""Unit records kept by the codec's memos (a game sees a few hundred)."""


def _refuse(field: str, problem: str, allowed: str) -> None:
    """Raise the ScenarioError of a scenario the compiled state cannot hold."""
    from psygym.scenario import ScenarioError

    raise ScenarioError("compiled engine (rt)", field, problem, allowed)


def _dice(expr: str | int) -> list[int]:
    """A dice expression as ``[count, sides, modifier]`` (``[0, 0, n]`` for a constant)."""
    from psygym.dice import parse

    e = parse(expr)
    return [e.count, e.sides, e.modifier] if e.sides else [0, 0, e.modifier]


def _ability_count() -> int:
    """The number of abilities (A) of the data every rules object loads (``load_data``)."""
    from psygym.editions.rogue_trader.abilities import load_data

    return len(load_data().abilities)


class CodecRT:
    """The Rogue Trader edition's :class:`~psygym.engine.Codec` (use the instance :data:`CODEC`).

    Attributes:
        game_id: the id the C++ registers.
    """

    game_id = "rt"

    def __init__(self) -> None:
        self._structs: dict[int, struct.Struct] = {}
        self._unit_bytes: dict[Any, bytes] = {}
        self._units: dict[bytes, Any] = {}

    def rules_class(self) -> type:
        """The reference rules class the twin mirrors."""
        from psygym.editions.rogue_trader.rules import RogueTraderRules

        return RogueTraderRules

    # ------------------------------------------------------------------ scenario

    def encode_scenario(self, rules: Any) -> tuple[list[int], list[float]]:
        """The scenario of ``rules`` as the numbers scenario.cc reads.

        Raises:
            ScenarioError: the scenario is past a compiled capacity (naming the limit).
        """
        self._check_sizes(rules)
        game = rules.game
        ints = [FORMAT, rules.n_units, rules.n_abilities, game.first_player, game.turns,
                game.abilities_per_turn, game.no_test_at,
                -1 if game.max_bid is None else game.max_bid,
                int(game.ability_count == "random"), int(game.removal_scores_wounds),
                int(game.augment_breaks_rest)]  # fmt: skip
        reals: list[float] = []
        for a, ab in enumerate(rules.abilities):
            ints += [ab.cost, _EFFECTS.index(ab.effect), _TARGETS.index(ab.target),
                     ab.strength, *_dice(ab.damage), ab.aura, *_dice(ab.duration),
                     int(ab.psychic_save)]  # fmt: skip
            reals.append(float(rules.value[a]))
        for i, spec in enumerate(rules.specs):
            ints += [rules.owner[i], spec.models, spec.wounds, spec.toughness, spec.save,
                     spec.will_power, int(rules.psyker[i])]  # fmt: skip
            reals.append(float(rules.vpw[i]))
        for i, spec in enumerate(rules.specs):
            if rules.psyker[i]:
                ints += self._psyker(rules, i, spec)
        return ints, reals

    def _psyker(self, rules: Any, i: int, spec: Any) -> list[int]:
        """A psyker's numbers: its set-up (generation.py, RT-1) and candidate targets."""
        data = rules.data
        row = data.mastery_row(spec.mastery)
        held = [] if spec.abilities == "random" else sorted(data.index[a] for a in spec.abilities)
        if rules.random_level[i]:
            from psygym.dice import distribution

            lowest = min(distribution(row.random_psi_level))
            if lowest < 0:
                _refuse(f"charts.mastery.{spec.mastery}.random_psi_level",
                        f"it can roll a psi-level of {lowest}",
                        "dice that roll 0 or more")  # fmt: skip
        pool = data.by_level(spec.mastery)
        out = [-1 if spec.psi_level is None else spec.psi_level,
               -1 if spec.psi_points is None else spec.psi_points, row.psi_level,
               int(rules.random_level[i]), int(rules.random_abilities[i]), len(held), *held,
               *_dice(row.random_psi_level), *_dice(row.random_abilities),
               rules._count_cap(i), row.abilities, len(pool), *pool]  # fmt: skip
        for a in range(rules.n_abilities):
            cands = rules._cands[(i, a)]
            out += [len(cands), *cands]
        return out

    def _check_sizes(self, rules: Any) -> None:
        """Refuse a scenario whose numbers do not fit the compiled state (state.h)."""
        limits = [
            ("sides.units", rules.n_units, MAX_UNITS, "MAX_UNITS"),
            ("abilities", rules.n_abilities, MAX_ABILITIES, "MAX_ABILITIES"),
            ("sides.units.wounds", max(rules.max_hp), MAX_WOUND_POOL, "MAX_WOUND_POOL"),
            ("sides.units.psi_level", rules.max_psi_points, MAX_POINTS, "MAX_POINTS"),
            ("game.turns", rules.game.turns, MAX_TURNS, "MAX_TURNS"),
            ("game.abilities_per_turn", rules.game.abilities_per_turn, MAX_PER_TURN,
             "MAX_PER_TURN"),
        ]  # fmt: skip
        check_capacities("rt", limits)

    # ------------------------------------------------------------------ states

    def _struct(self, n: int) -> struct.Struct:
        """The struct of a state of ``n`` units (and the data's abilities)."""
        fmt = self._structs.get(n)
        if fmt is None:
            ab = (_ability_count() + 7) // 8
            fmt = self._structs[n] = struct.Struct(_HEADER.format + f"{_UNIT}{ab}s" * n)
        return fmt

    def _unit_record(self, unit: Any) -> bytes:
        """One unit's record (state.h), memoised by the unit's value."""
        record = self._unit_bytes.get(unit)
        if record is None:
            ab = (_ability_count() + 7) // 8
            flags = (_OUT * unit.out | _CONFUSED * unit.confused | _AFRAID * unit.afraid
                     | _RESTING * unit.resting)  # fmt: skip
            bits = 0
            for a in unit.abilities:
                bits |= 1 << a
            record = struct.pack(f"={_UNIT}{ab}s", unit.hp, unit.points, unit.level,
                                 unit.stolen, unit.aura, unit.wp_bonus, flags,
                                 bits.to_bytes(ab, "little"))  # fmt: skip
            if len(self._unit_bytes) >= _MEMO:
                self._unit_bytes.clear()
            self._unit_bytes[unit] = record
        return record

    def encode(self, state: Any) -> bytes:
        """A reference state as state.h's bytes (a score of -0.0 as 0.0: the two are equal).

        Raises:
            ValueError: a field does not fit the layout (not a state of a compiled scenario).
        """
        try:
            head = _HEADER.pack(
                state.score + 0.0, state.amount, state.attack_bid, state.save_bid, state.turn,
                state.active, int(state.phase), state.actor, state.used, state.ability,
                state.target, state.left, len(state.units), _ability_count(),
            )  # fmt: skip
            return head + b"".join(map(self._unit_record, state.units))
        except (struct.error, OverflowError, ValueError) as e:
            raise ValueError(f"not a state the compiled Rogue Trader can hold: {e}") from None

    def decode(self, data: bytes) -> Any:
        """state.h's bytes as the reference state.

        Raises:
            ValueError: the bytes are not a state of this layout.
        """
        from psygym.editions.rogue_trader.state import Phase, State

        if len(data) < _HEADER.size:
            raise ValueError(f"a Rogue Trader state has at least {_HEADER.size} bytes")
        head = _HEADER.unpack_from(data)
        n, n_abilities = head[-2:]
        if n_abilities != _ability_count():
            raise ValueError(f"a Rogue Trader state of {n_abilities} abilities, not "
                             f"{_ability_count()}")  # fmt: skip
        size = self._struct(n).size
        if len(data) != size:
            raise ValueError(f"a Rogue Trader state of {n} units has {size} bytes, "
                             f"not {len(data)}")  # fmt: skip
        stride = (size - _HEADER.size) // n if n else 0
        units = tuple(
            self._unit(data[at : at + stride]) for at in range(_HEADER.size, size, stride)
        )
        (score, amount, attack_bid, save_bid, turn, active, phase, actor, used, ability, target,
         left) = head[:12]  # fmt: skip
        return State(
            units=units, turn=turn, active=active, phase=Phase(phase), actor=actor, used=used,
            ability=ability, target=target, amount=amount, attack_bid=attack_bid,
            save_bid=save_bid, left=left, score=score,
        )  # fmt: skip

    def _unit(self, record: bytes) -> Any:
        """One unit record as a shared :class:`~.state.UnitState`, memoised by its bytes."""
        unit = self._units.get(record)
        if unit is None:
            from psygym.editions.rogue_trader.state import UnitState
            from psygym.editions.rogue_trader.units import shared

            hp, points, level, stolen, aura, wp_bonus, flags = struct.unpack_from(
                f"={_UNIT}", record
            )
            if flags & ~(_OUT | _CONFUSED | _AFRAID | _RESTING):
                raise ValueError(f"unit flags {flags} are not state.h's")
            bits = int.from_bytes(record[struct.calcsize(f"={_UNIT}") :], "little")
            abilities = tuple(a for a in range(bits.bit_length()) if bits >> a & 1)
            unit = shared(UnitState(
                hp=hp, out=bool(flags & _OUT), aura=aura, stolen=stolen,
                confused=bool(flags & _CONFUSED), afraid=bool(flags & _AFRAID),
                wp_bonus=wp_bonus, points=points, level=level, abilities=abilities,
                resting=bool(flags & _RESTING),
            ))  # fmt: skip
            if len(self._units) >= _MEMO:
                self._units.clear()
            self._units[record] = unit
        return unit


CODEC = CodecRT()
"""The codec the edition declares (``Edition.engine``)."""

__all__ = ["CODEC", "CodecRT"]
