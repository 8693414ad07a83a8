"""The compiled twin of the 2nd-edition rules: the C++ in this folder and its Python codec.

The C++ (``rules.cc`` the API, chance tables and the transition loop of ``rules.py``; one
``.cc`` per rule section's module: ``psykers.cc``, ``deck.cc``, ``turns.cc``, ``casting.cc``,
``responses.cc``, ``effects.cc``, ``observation.cc``; ``tables.cc`` the exact dice tables;
``check.cc`` the state check; ``scenario.cc`` the numbers; ``state.h`` the byte layout) is
registered in ``psygym.engine._core`` as ``"2nd"``. :data:`CODEC` hands it a validated
:class:`~psygym.editions.second.rules.SecondRules` as flat numbers
(:meth:`Codec2nd.encode_scenario`: units, psykers, powers, the deck and the rule settings, with
the geometry of casting already resolved into target lists, so the core never parses text or
measures a distance) and converts states both ways with the byte layout of ``state.h``
(:meth:`Codec2nd.encode`, :meth:`Codec2nd.decode`).

The state holds the whole truth (the deck as a multiset, both hands, the face-down discards);
what each player may see is the observation's business, as in the reference.
"""

from __future__ import annotations

import struct
from typing import Any

from psygym.engine.compiled import check_capacities

FORMAT = 1
"""Version of the scenario numbers (``kFormat`` in scenario.h)."""
MAX_UNITS = 60
"""Most units of a compiled scenario (``kMaxUnits``: unit indices are uint8)."""
MAX_POWERS = 120
"""Most powers in the power data (``kMaxPowers``: power indices are int8)."""
MAX_WOUND_POOL = 65535
"""Largest wound pool of a unit (``kMaxWounds``: wounds are uint16)."""
MAX_BATTLE_ROUNDS = 100
"""Most battle rounds (``kMaxRounds``: the phase is a uint8)."""
MAX_CARD_COUNT = 100
"""Most cards of one kind in the deck (``kMaxCardCount``: card counts are uint8)."""
MAX_TABLE_BITS = 126
"""Exact chance tables count in 128-bit integers: an attack's total (its hits' dice, the
unsaved chance's 216 and its damage's dice for every hit) and the square of a duel's dice
total must be at most ``2**MAX_TABLE_BITS``."""
UNSAVED_DEN = 216
"""The denominator of the chance one hit wounds unsaved (to hit, to wound, save: sixths)."""

_HEADER = "=d18B2B2b3B7x"
"""state.h's Header: score, stage .. pending_responses, has_roll, roll_kind, roll_a, roll_b,
roll_need, roll_reroll, roll_player, padding."""
_HEADER_SIZE = struct.calcsize(_HEADER)
_SIZES_AT = 15
"""Offset of the header's n_units, n_psykers and n_slots."""
_NO_IN_PLAY = (-1, 0, 0, 0)
_KINDS = {"attack": 1, "mortal": 2, "value": 3, "duel": 4}
"""Effect kinds as scenario.h's EffectKind (0: no effect for that Force)."""


def _refuse(field: str, problem: str, allowed: str) -> None:
    """Raise the ScenarioError of a scenario the compiled twin does not take."""
    from psygym.scenario import ScenarioError

    raise ScenarioError("compiled engine (2nd)", field, problem, allowed)


def _dice(expr: str | int) -> list[int]:
    """A dice expression as ``[count, sides, modifier]`` (``[0, 0, n]`` for a constant)."""
    from psygym.dice import parse

    e = parse(expr)
    return [e.count, e.sides, e.modifier] if e.sides else [0, 0, e.modifier]


def _total(expr: str | int) -> int:
    """The total a dice expression's exact table counts over: sides ** count."""
    from psygym.dice import parse

    e = parse(expr)
    return e.sides**e.count if e.sides else 1


class Codec2nd:
    """The 2nd edition's :class:`~psygym.engine.Codec` (use the instance :data:`CODEC`).

    Attributes:
        game_id: the id the C++ registers.
    """

    game_id = "2nd"

    def __init__(self) -> None:
        self._formats: dict[tuple[int, int, int], struct.Struct] = {}

    def rules_class(self) -> type:
        """The reference rules class the twin mirrors."""
        from psygym.editions.second.rules import SecondRules

        return SecondRules

    # ------------------------------------------------------------------ scenario

    def encode_scenario(self, rules: Any) -> tuple[list[int], list[float]]:
        """The scenario of ``rules`` as the numbers scenario.cc reads.

        Raises:
            ScenarioError: the scenario is past a compiled capacity (naming the limit).
        """
        self._check(rules)
        facts, st, game = rules.facts, rules.settings, rules.game
        n_units, n_psykers, n_slots = facts.num_units, facts.num_psykers, facts.num_slots
        ints = [FORMAT, n_units, n_psykers, n_slots, len(facts.power_data), game.first_player,
                game.battle_rounds, st.warp_flux_dice, int(st.flux_cap == "both-sides"),
                int(st.deal_first == "active"), int(st.retain_specials),
                int(st.public_discards), st.responses_per_power, st.nullify_target,
                st.nullify_ml_step, st.nullify_best, st.nullify_worst,
                int(st.destroy_power == "lose-card"), int(st.reflection == "caster"),
                st.daemonic_attack_below, *_dice(st.psychic_duel_dice),
                int(st.psychic_duel_add_ml), *facts.deck_counts]  # fmt: skip
        reals: list[float] = []
        for u, unit in enumerate(facts.units):
            ints += [facts.owner[u], facts.max_wounds[u], unit.wounds, unit.toughness, unit.save,
                     unit.invulnerable or 0, unit.ballistic_skill]  # fmt: skip
            reals.append(float(unit.value_per_wound))
        for i in range(n_psykers):
            pool = facts.draw_pools[i]
            ints += [facts.psyker_unit[i], facts.ml[i], int(facts.hood[i]), int(pool is not None),
                     len(pool or ()), *(pool or ()), *facts.initial_powers[i]]  # fmt: skip
            for k in range(len(facts.power_data)):
                targets, area = self._targets(rules, i, k)
                ints += [len(targets), *targets, len(area), *area]
        for k, power in enumerate(facts.power_data):
            lo, hi = facts.force_range[k]
            ints += [int(power.remain_in_play), lo, hi]
            for force in range(4):
                effect = facts.effect_table[k].get(force)
                if effect is None:
                    ints.append(0)
                    continue
                ints.append(_KINDS[effect.type])
                if effect.type == "attack":
                    ints += [*_dice(effect.hits), int(effect.to_hit == "bs"), effect.strength,
                             *_dice(effect.damage), int(effect.saves)]  # fmt: skip
                elif effect.type in ("mortal", "duel"):
                    ints += _dice(effect.wounds if effect.type == "mortal" else effect.dice)
                else:
                    reals.append(float(rules._values[k][force]))
        return ints, reals

    @staticmethod
    def _targets(rules: Any, psyker: int, power: int) -> tuple[list[int], list[int]]:
        """A psyker's targets for a power, and the enemies an area power hits.

        casting.py's ``_specs`` (``n_units``: every enemy unit in range; none where
        ``ml_limits_power_level`` forbids the power) and ``_area``.
        """
        targets = [t for t, _, _ in rules._specs[psyker][0][power][2]]
        return targets, list(rules._area.get((psyker, power), ()))

    def _check(self, rules: Any) -> None:
        """Refuse a scenario whose numbers do not fit the compiled state and tables."""
        facts = rules.facts
        n_units = facts.num_units
        check_capacities("2nd", [
            ("sides.units", n_units, MAX_UNITS, "MAX_UNITS"),
            ("powers", len(facts.power_data), MAX_POWERS, "MAX_POWERS"),
            ("game.battle_rounds", rules.game.battle_rounds, MAX_BATTLE_ROUNDS,
             "MAX_BATTLE_ROUNDS"),
            ("sides.units.wounds", max(facts.max_wounds), MAX_WOUND_POOL, "MAX_WOUND_POOL"),
            ("deck", max(facts.deck_counts), MAX_CARD_COUNT, "MAX_CARD_COUNT"),
        ])  # fmt: skip
        limit = 2**MAX_TABLE_BITS
        bits = f"at most {MAX_TABLE_BITS} bits (MAX_TABLE_BITS)"
        if _total(rules.settings.psychic_duel_dice) ** 2 > limit:
            _refuse("rules.psychic_duel_dice", "its exact chance table is too large", bits)
        for k, power in enumerate(facts.power_data):
            for effect in facts.effect_table[k].values():
                where = f"powers.{power.name}.effects.{effect.force}"
                if effect.type == "duel" and _total(effect.dice) ** 2 > limit:
                    _refuse(where, "its exact chance table is too large", bits)
                if effect.type != "attack":
                    continue
                from psygym.dice import parse

                hits = parse(effect.hits)
                if hits.min < 0:
                    _refuse(where, f"{effect.hits!r} can roll below 0 hits", "hits of at least 0")
                most = max(hits.max, 0)
                if _total(effect.hits) * (UNSAVED_DEN * _total(effect.damage)) ** most > limit:
                    _refuse(where, "its exact chance table is too large", bits)
        self._check_effects(rules)

    def _check_effects(self, rules: Any) -> None:
        """Refuse what rules.cc's constructor refuses: too many effects, or duels on non-psykers.

        More effects may not wait at once than a state holds (one a unit), and a duel effect
        may not hit a unit that is no psyker. A psyker holds up to ML cards of its draw pool,
        or its fixed cards; the upkeep of the powers in play (2E-3.4) counts only where such a
        power rolls dice.
        """
        facts = rules.facts
        n_units, powers = facts.num_units, facts.power_data
        cast_bound, upkeep, upkeep_rolls = 1, 0, False
        for i in range(facts.num_psykers):
            pool = facts.draw_pools[i]
            holdable = pool if pool is not None else [k for k in facts.initial_powers[i] if k >= 0]
            counts = []
            for k in holdable:
                targets, area = self._targets(rules, i, k)
                count = len(area) if n_units in targets else 1
                cast_bound = max(cast_bound, count)
                lo, hi = facts.force_range[k]
                kinds = {facts.effect_table[k][f].type for f in range(lo, hi + 1)}
                victims = [v for t in targets for v in ([t] if t < n_units else area)]
                if "duel" in kinds and any(facts.unit_psyker[v] < 0 for v in victims):
                    _refuse(f"powers.{powers[k].name}", "a duel effect may target a unit that is "
                            "no psyker", "duel powers that target psykers")  # fmt: skip
                if powers[k].remain_in_play:
                    counts.append(count)
                    upkeep_rolls = upkeep_rolls or kinds != {"value"}
            if pool is None:
                upkeep += sum(counts)
            elif counts:
                upkeep += min(len(counts), facts.ml[i]) * max(counts)
        if max(cast_bound, upkeep if upkeep_rolls else 0) > n_units:
            _refuse(
                "powers",
                "more effects may wait at once than the compiled state holds",
                "at most one a unit (powers in play that roll dice count every slot)",
            )

    # ------------------------------------------------------------------ states

    def _format(self, n_units: int, n_psykers: int, n_slots: int) -> struct.Struct:
        """The struct of a state with these sizes (state.h's layout)."""
        key = (n_units, n_psykers, n_slots)
        fmt = self._formats.get(key)
        if fmt is None:
            slots = n_psykers * n_slots
            fmt = self._formats[key] = struct.Struct(
                f"{_HEADER}56B{n_units}H{slots}b{(n_psykers + 7) // 8}s"
                f"{'bBBB' * slots}{'5B' * n_units}"
            )
        return fmt

    def encode(self, state: Any) -> bytes:
        """A reference state as state.h's bytes.

        Raises:
            ValueError: a field does not fit the layout (not a state of a compiled scenario).
        """
        n_units, n_psykers = len(state.wounds), len(state.powers)
        n_slots = len(state.powers[0]) if state.powers else 1
        records = [_NO_IN_PLAY] * (n_psykers * n_slots)
        last = (-1, -1)
        for ip in state.in_play:
            if (ip.psyker, ip.slot) <= last:
                raise ValueError(
                    f"in_play {state.in_play} is not in increasing (psyker, slot) order"
                )
            last = (ip.psyker, ip.slot)
            records[ip.psyker * n_slots + ip.slot] = (ip.power, ip.target, ip.force,
                                                      int(ip.ultimate))  # fmt: skip
        if len(state.effects) > n_units:
            raise ValueError(f"{len(state.effects)} effects: a state holds {n_units} at most")
        effects = [(e.power, e.force, e.psyker, e.target, int(e.reflected)) for e in state.effects]
        effects += [(0, 0, 0, 0, 0)] * (n_units - len(effects))
        p, r = state.pending, state.roll
        pending = (0,) * 8 if p is None else (1, p.psyker, p.slot, p.power, p.target, p.force,
                                             int(p.ultimate), p.responses)  # fmt: skip
        roll = (0,) * 7 if r is None else (1, r.kind, r.a, r.b, r.need, int(r.reroll), r.player)
        used = sum(1 << i for i, u in enumerate(state.used) if u)
        try:
            return self._format(n_units, n_psykers, n_slots).pack(
                state.score, state.stage, state.phase, state.to_move, state.passes,
                state.to_deal, state.deal_to, len(state.effects), n_units, n_psykers, n_slots,
                *pending, *roll, *state.deck, *state.discard, *state.hands[0], *state.hands[1],
                *state.paid, *state.face_down[0], *state.face_down[1], *state.wounds,
                *(k for slots in state.powers for k in slots),
                used.to_bytes((n_psykers + 7) // 8, "little"),
                *(x for rec in records for x in rec), *(x for e in effects for x in e),
            )  # fmt: skip
        except (struct.error, OverflowError, IndexError) as e:
            raise ValueError(f"not a state the compiled 2nd edition can hold: {e}") from None

    def decode(self, data: bytes) -> Any:
        """state.h's bytes as the reference state.

        Raises:
            ValueError: the bytes are not a state of this layout.
        """
        from psygym.editions.second.state import Effect, InPlay, Pending, Roll, SecondState

        if len(data) < _HEADER_SIZE:
            raise ValueError(f"a 2nd-edition state has at least {_HEADER_SIZE} bytes")
        n_units, n_psykers, n_slots = struct.unpack_from("=3B", data, _SIZES_AT)
        fmt = self._format(n_units, n_psykers, n_slots)
        if len(data) != fmt.size:
            raise ValueError(f"a 2nd-edition state of {n_units} units, {n_psykers} psykers and "
                             f"{n_slots} slots has {fmt.size} bytes, not {len(data)}")  # fmt: skip
        v = fmt.unpack(data)
        score, stage, phase, to_move, passes, to_deal, deal_to, n_effects = v[:8]
        has_pending, *pending = v[11:19]
        has_roll, *roll = v[19:26]
        at = 26
        cards = [tuple(v[at + 8 * k : at + 8 * k + 8]) for k in range(7)]
        at += 56
        wounds = tuple(v[at : at + n_units])
        at += n_units
        slots = n_psykers * n_slots
        flat = v[at : at + slots]
        powers = tuple(tuple(flat[i * n_slots : (i + 1) * n_slots]) for i in range(n_psykers))
        used_bits = int.from_bytes(v[at + slots], "little")
        at += slots + 1
        in_play = []
        for i in range(n_psykers):
            for j in range(n_slots):
                power, target, force, ultimate = v[at : at + 4]
                at += 4
                if power >= 0:
                    in_play.append(InPlay(i, j, power, target, force, bool(ultimate)))
        effects = tuple(
            Effect(*v[at + 5 * e : at + 5 * e + 4], bool(v[at + 5 * e + 4]))
            for e in range(n_effects)
        )
        psyker, slot, power, target, force, ultimate, responses = pending
        kind, a, b, need, reroll, player = roll
        return SecondState(
            stage=stage, phase=phase, to_move=to_move, passes=passes, wounds=wounds,
            powers=powers, used=tuple(bool(used_bits >> i & 1) for i in range(n_psykers)),
            in_play=tuple(in_play), deck=cards[0], discard=cards[1],
            hands=(cards[2], cards[3]), paid=cards[4], to_deal=to_deal, deal_to=deal_to,
            pending=Pending(psyker, slot, power, target, force, bool(ultimate), responses)
            if has_pending else None,
            roll=Roll(kind, a, b, need, bool(reroll), player) if has_roll else None,
            effects=effects, score=score, face_down=(cards[5], cards[6]),
        )  # fmt: skip


CODEC = Codec2nd()
"""The codec the edition declares (``Edition.engine``)."""

__all__ = ["CODEC", "Codec2nd"]
